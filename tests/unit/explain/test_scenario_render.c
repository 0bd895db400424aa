/*
** test_scenario_render.c — `explain` and `why` print one text for one
** decision: every example scenario of etc/scenarios/ decided as the
** worker decides (ex_run), each record rendered with an explain head and
** with a why head (render.h's rule: only the first line differs), the
** text explain prints (exp_print), and explain --json (exp_json): the
** record exactly as the worker stores it, the offline parts next to it.
**
** Runs with the repository root as working directory (ctest sets it).
*/
#include "gbtest.h"

#include <dirent.h>
#include <stdlib.h>

#include <jansson.h>

#include "base/arena.h"
#include "explain/explain.h"
#include "explain/explain_print.h"
#include "explain/scenario.h"
#include "gb_error.h"
#include "report/record.h"
#include "report/render.h"

#define ARENA_CAP (1024u << 20)
/* 2024-05-14T08:30:00Z */
#define T0 1715675400LL

/* One scenario file decided; the caller frees `a` and *root. */
static void run(const char *file, struct arena *a, json_t **root,
		struct ex_result *res)
{
	char path[512], err[512] = "";
	snprintf(path, sizeof(path), "etc/scenarios/%s", file);
	*root = scn_read_file(path, err, sizeof(err));
	if (*root == NULL)
		fail_msg("%s", err);
	arena_init(a, ARENA_CAP);
	int rc = ex_run(*root, a, res, err, sizeof(err));
	if (rc != GB_OK)
		fail_msg("%s: %s %s", file, gb_errname(rc), err);
}

static int name_cmp(const void *x, const void *y)
{
	return strcmp(x, y);
}

/* Every *.json of etc/scenarios/ into names[], sorted; returns how many. */
static size_t scenario_files(char names[][256], size_t max)
{
	DIR *dir = opendir("etc/scenarios");
	assert_non_null(dir);
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(dir)) != NULL) {
		size_t len = strlen(de->d_name);
		if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0)
			continue;
		assert_true(n < max);
		snprintf(names[n++], 256, "%s", de->d_name);
	}
	closedir(dir);
	qsort(names, n, sizeof(names[0]), name_cmp);
	return n;
}

/* The text after the first line; fails when there is none. */
static const char *body(const char *text)
{
	const char *nl = strchr(text, '\n');
	assert_non_null(nl);
	return nl + 1;
}

/* The first job of a jobs record's assignments, or 0. */
static long long first_job(const json_t *d)
{
	json_t *as = json_array_get(json_object_get(d, "assignments"), 0);
	return json_integer_value(json_array_get(json_object_get(as, "jobIDs"),
						 0));
}

/*
** For every record of every example: the explain head and a why head
** (a stored row, and for job decisions `why job` on its first job) give
** texts whose first lines differ and whose bodies are equal, and the body
** has the decision line. explain's text is those texts, in order.
*/
static void test_explain_and_why_agree(void **state)
{
	(void)state;
	static char names[64][256];
	size_t nfiles = scenario_files(names, 64), nrec = 0;
	assert_true(nfiles >= 18);
	for (size_t k = 0; k < nfiles; k++) {
		struct arena a;
		json_t *root;
		struct ex_result res;
		run(names[k], &a, &root, &res);
		assert_true(res.nrecords > 0);
		char *printed = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&printed, &len);
		assert_non_null(f);
		assert_int_equal(exp_print(f, &res), GB_OK);
		fclose(f);
		const char *at = printed;
		for (size_t i = 0; i < res.nrecords; i++, nrec++) {
			json_t *d = json_loads(res.records[i].text, 0, NULL);
			assert_non_null(d);
			struct rn_head h = exp_head(&res, i);
			char *ex = rn_render(&h, d);
			h.id = 4242;
			h.request_id = "req-4242";
			h.decided_at = T0;
			h.focus_job = first_job(d);
			char *why = rn_render(&h, d);
			assert_non_null(ex);
			assert_non_null(why);
			if (strcmp(body(ex), body(why)) != 0)
				fail_msg("%s record %zu: explain\n%s\nwhy\n%s",
					 names[k], i, ex, why);
			assert_true(strncmp(ex, why, (size_t)(body(ex) - ex)) !=
				    0);
			assert_non_null(strstr(why, ", decision 4242"));
			assert_non_null(strstr(ex, ", offline run\n"));
			assert_non_null(strstr(body(ex), "\ndecision: "));
			/* explain prints exactly this text, records in order */
			const char *p = strstr(at, ex);
			if (p == NULL)
				fail_msg("%s: explain's text lacks\n%s\nin\n%s",
					 names[k], ex, printed);
			at = p + strlen(ex);
			free(ex);
			free(why);
			json_decref(d);
		}
		free(printed);
		json_decref(root);
		arena_free(&a);
	}
	assert_true(nrec > nfiles); /* the timeout file has many */
}

/* The record as compact JSON with the stored record's precision. */
static void same_record(const json_t *o, const char *text, const char *file)
{
	char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(12));
	assert_non_null(s);
	if (strcmp(s, text) != 0)
		fail_msg("%s: explain --json\n%s\nstored\n%s", file, s, text);
	free(s);
}

/*
** explain --json: its text, read back, is the record exactly as rec_*
** made it (and the worker stores it), with the offline parts of a match
** or timeout scenario next to it.
*/
static void test_json_is_the_record(void **state)
{
	(void)state;
	static char names[64][256];
	size_t nfiles = scenario_files(names, 64);
	for (size_t k = 0; k < nfiles; k++) {
		struct arena a;
		json_t *root;
		struct ex_result res;
		run(names[k], &a, &root, &res);
		/* what explain --json prints, read back */
		json_t *j = exp_json(&res);
		assert_non_null(j);
		char *pretty = json_dumps(j, EXP_JSON_FLAGS);
		assert_non_null(pretty);
		json_decref(j);
		json_t *o = json_loads(pretty, 0, NULL);
		assert_non_null(o);
		free(pretty);
		char *made = NULL;
		switch (res.kind) {
		case EX_TASK:
			made = rec_task(&res.out.task, NULL);
			break;
		case EX_JOBS:
			made = rec_jobs(&res.out.jobs, NULL);
			break;
		case EX_ANALYSIS:
			made = rec_analysis(&res.out.analysis, NULL);
			break;
		case EX_MATCH:
			assert_true(json_is_array(json_object_get(o, "taskQueues")));
			assert_int_equal(json_array_size(json_object_get(
						 o, "taskQueues")),
					 res.in.match.ntqs);
			assert_true(json_is_object(json_object_get(o,
								   "corrections")));
			json_object_del(o, "taskQueues");
			json_object_del(o, "corrections");
			break;
		case EX_TIMEOUT: {
			json_t *recs = json_object_get(o, "records");
			assert_int_equal(json_array_size(recs), res.nrecords);
			for (size_t i = 0; i < res.nrecords; i++)
				same_record(json_array_get(recs, i),
					    res.records[i].text, names[k]);
			assert_int_equal(json_array_size(json_object_get(
						 o, "nextChecks")),
					 res.in.timeout.njobs - res.nrecords);
			assert_int_equal(json_array_size(json_object_get(o,
									 "rebro")),
					 res.in.timeout.nrebro);
			break;
		}
		}
		if (res.kind != EX_TIMEOUT)
			same_record(o, res.records[0].text, names[k]);
		if (made != NULL) /* rec_* again: the same text */
			assert_string_equal(made, res.records[0].text);
		free(made);
		json_decref(o);
		json_decref(root);
		arena_free(&a);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_explain_and_why_agree),
		cmocka_unit_test(test_json_is_the_record),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
