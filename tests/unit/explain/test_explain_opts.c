/*
** test_explain_opts.c — ex_run_opts decides as ex_run does: every example
** scenario kind of etc/scenarios/ run with the defaults and with
** no_sw_text (what replay uses) gives the same records, text and digest,
** byte for byte; only the sw dictionaries' text differs (kept by the
** defaults, which writing a scenario back out reads; NULL with the option,
** the parsed dictionaries kept either way).
**
** Runs with the repository root as working directory (ctest sets it).
*/
#include "gbtest.h"

#include <stdlib.h>

#include <jansson.h>

#include "base/arena.h"
#include "explain/explain.h"
#include "explain/scenario.h"
#include "gb_error.h"

#define ARENA_CAP (256u << 20)

/* Each example file, its kind and how many sw dictionaries (queues' and
** ALL) it gives. */
static const struct {
	const char *file;
	enum ex_kind kind;
	size_t nsw;
} cases[] = {
	{"jobs-assign.json", EX_JOBS, 2},
	{"jobs-container.json", EX_JOBS, 9},
	{"jobs-disk-units.json", EX_JOBS, 0},
	{"jobs-express.json", EX_JOBS, 0},
	{"jobs-network.json", EX_JOBS, 0},
	{"jobs-numslots.json", EX_JOBS, 0},
	{"jobs-pending.json", EX_JOBS, 0},
	{"jobs-release-auto.json", EX_JOBS, 9},
	{"jobs-t1weight.json", EX_JOBS, 2},
	{"analysis-assign.json", EX_ANALYSIS, 0},
	{"analysis-container.json", EX_ANALYSIS, 3},
	{"task-assign.json", EX_TASK, 0},
	{"match-assign.json", EX_MATCH, 0},
	{"timeout-rules.json", EX_TIMEOUT, 0},
};

/* The grid of a job or analysis result; NULL for the other kinds. */
static const struct gm_grid *grid_of(const struct ex_result *r)
{
	if (r->kind == EX_JOBS)
		return &r->in.jobs.grid;
	if (r->kind == EX_ANALYSIS)
		return &r->in.analysis.job.grid;
	return NULL;
}

/* How many dictionaries `g` has parsed, and how many of them have text;
** a text without its dictionary fails. */
static void count_sw(const struct gm_grid *g, size_t *parsed, size_t *text)
{
	*parsed = *text = 0;
	if (g == NULL)
		return;
	for (size_t i = 0; i <= g->nqueues; i++) {
		const void *sw = i < g->nqueues
					 ? (const void *)g->queues[i].q.sw
					 : (const void *)g->all_sw;
		const char *t = i < g->nqueues ? g->queues[i].sw_json
					       : g->all_sw_json;
		assert_true(t == NULL || sw != NULL);
		*parsed += sw != NULL;
		*text += t != NULL;
	}
}

/* The record's record.digest, copied into buf. */
static const char *digest(const char *text, char *buf, size_t n)
{
	json_t *j = json_loads(text, 0, NULL);
	assert_non_null(j);
	const char *d = json_string_value(
		json_object_get(json_object_get(j, "record"), "digest"));
	assert_non_null(d);
	snprintf(buf, n, "%s", d);
	json_decref(j);
	return buf;
}

/* Example case i's scenario; fails the test when it cannot be read. */
static json_t *read_case(size_t i)
{
	char path[256], err[512] = "";
	snprintf(path, sizeof(path), "etc/scenarios/%s", cases[i].file);
	json_t *root = scn_read_file(path, err, sizeof(err));
	if (root == NULL)
		fail_msg("%s", err);
	return root;
}

static void test_same_records(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[512] = "";
		json_t *root = read_case(i);
		struct arena a, b;
		arena_init(&a, ARENA_CAP);
		arena_init(&b, ARENA_CAP);
		struct ex_result x, y;
		const struct ex_opts quick = {.no_sw_text = 1};
		int rc = ex_run(root, &a, &x, err, sizeof(err));
		if (rc != GB_OK)
			fail_msg("%s: %s %s", cases[i].file, gb_errname(rc),
				 err);
		rc = ex_run_opts(root, &b, &y, err, sizeof(err), &quick);
		if (rc != GB_OK)
			fail_msg("%s (no_sw_text): %s %s", cases[i].file,
				 gb_errname(rc), err);
		assert_int_equal(x.kind, cases[i].kind);
		assert_int_equal(y.kind, cases[i].kind);
		assert_int_equal(y.nrecords, x.nrecords);
		assert_true(x.nrecords > 0);
		for (size_t r = 0; r < x.nrecords; r++) {
			char d0[128], d1[128];
			digest(x.records[r].text, d0, sizeof(d0));
			digest(y.records[r].text, d1, sizeof(d1));
			if (strcmp(d0, d1) != 0 ||
			    strcmp(x.records[r].text, y.records[r].text) != 0)
				fail_msg("%s record %zu: digest %s vs %s",
					 cases[i].file, r, d0, d1);
			assert_string_equal(x.records[r].outcome,
					    y.records[r].outcome);
		}
		/* the text by default for every dictionary, none with the
		** option; the dictionaries themselves either way */
		size_t px, tx, py, ty;
		count_sw(grid_of(&x), &px, &tx);
		count_sw(grid_of(&y), &py, &ty);
		assert_int_equal(px, cases[i].nsw);
		assert_int_equal(tx, px);
		assert_int_equal(py, px);
		assert_int_equal(ty, 0);
		/* ex_run_opts with NULL options is ex_run */
		struct arena c;
		arena_init(&c, ARENA_CAP);
		struct ex_result z;
		assert_int_equal(ex_run_opts(root, &c, &z, err, sizeof(err),
					     NULL),
				 GB_OK);
		size_t pz, tz;
		count_sw(grid_of(&z), &pz, &tz);
		assert_int_equal(tz, px);
		assert_string_equal(z.records[0].text, x.records[0].text);
		arena_free(&c);
		arena_free(&a);
		arena_free(&b);
		json_decref(root);
	}
}

/* Every element of root's "queues" replaced by a copy (other json_t
** values for it) whose ages moved by a minute, whose "description" is an
** equal string of its own and whose job counts of each share grew by 7
** running; the first queue's maxrss grows by one too; "links" replaced
** by a copy with the first link's mbps1d up. Returns how many queues
** changed more than their ages and counts (0 or 1). */
static size_t move_ages(json_t *root)
{
	json_t *qs = json_object_get(root, "queues");
	if (!json_is_array(qs))
		return 0;
	json_t *nqs = json_array();
	size_t changed = 0, i;
	json_t *q;
	json_array_foreach(qs, i, q)
	{
		json_t *c = json_copy(q);
		static const char *const ages[] = {"lastPilotAge",
						   "lastStartAge"};
		for (size_t k = 0; k < 2; k++) {
			json_t *v = json_object_get(c, ages[k]);
			if (json_is_integer(v))
				json_object_set_new(
					c, ages[k],
					json_integer(json_integer_value(v) +
						     60));
		}
		json_t *jobs = json_deep_copy(json_object_get(c, "jobs"));
		const char *share;
		json_t *cnt;
		json_object_foreach(jobs, share, cnt)
		{
			json_t *r = json_object_get(cnt, "running");
			json_object_set_new(cnt, "running",
					    json_integer(json_integer_value(r) +
							 7));
		}
		if (jobs)
			json_object_set_new(c, "jobs", jobs);
		json_t *d = json_object_get(c, "description");
		if (json_is_string(d))
			json_object_set_new(c, "description",
					    json_string(json_string_value(d)));
		json_t *mr = json_object_get(c, "maxrss");
		if (i == 0 && json_is_integer(mr)) {
			json_object_set_new(
				c, "maxrss",
				json_integer(json_integer_value(mr) + 1));
			changed = 1;
		}
		json_array_append_new(nqs, c);
	}
	json_object_set_new(root, "queues", nqs);
	/* the links of another now: a new array, the first link's rate up */
	json_t *links = json_deep_copy(json_object_get(root, "links"));
	json_t *l0 = json_array_get(links, 0);
	json_t *rate = json_object_get(l0, "mbps1d");
	if (json_is_number(rate))
		json_object_set_new(l0, "mbps1d",
				    json_real(json_number_value(rate) + 1.5));
	if (links)
		json_object_set_new(root, "links", links);
	return changed;
}

/* keep_json: each record's object dumps to its text, byte for byte (the
** text is that object's dump, reals to 12 digits); the memo of sw
** dictionaries gives the same records, from the second run on without
** parsing them (hits); without keep_json there is no object. */
static void test_kept_records(void **state)
{
	(void)state;
	struct scj_memo memo;
	assert_int_equal(scj_memo_init(&memo), GB_OK);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[512] = "";
		json_t *root = read_case(i);
		struct arena a, b;
		arena_init(&a, ARENA_CAP);
		struct ex_result x, y;
		const struct ex_opts keep = {.no_sw_text = 1, .memo = &memo,
					     .keep_json = 1};
		long long hits0 = memo.sw_hits, qhits[3] = {0};
		long long lhits0 = memo.links_hits;
		size_t changed = 0; /* queues of the third run parsed again */
		for (int run = 0; run < 3; run++) {
			/* the second run a day later: the same queue values,
			** whose ages count back from another now */
			if (run == 1 && json_is_string(json_object_get(root,
								       "now")))
				json_object_set_new(
					root, "now",
					json_string("2031-01-01T00:00:00Z"));
			if (run == 2)
				changed = move_ages(root);
			qhits[run] = memo.queue_hits;
			arena_init(&b, ARENA_CAP);
			int rc = ex_run_opts(root, &b, &y, err, sizeof(err),
					     &keep);
			if (rc != GB_OK)
				fail_msg("%s: %s %s", cases[i].file,
					 gb_errname(rc), err);
			assert_int_equal(ex_run(root, &a, &x, err, sizeof(err)),
					 GB_OK);
			assert_int_equal(y.nrecords, x.nrecords);
			for (size_t r = 0; r < y.nrecords; r++) {
				assert_non_null(y.records[r].json);
				char *d = json_dumps(y.records[r].json,
						     JSON_COMPACT |
							     JSON_REAL_PRECISION(12));
				assert_non_null(d);
				if (strcmp(d, y.records[r].text) != 0 ||
				    strcmp(d, x.records[r].text) != 0)
					fail_msg("%s record %zu: the object "
						 "is not the text",
						 cases[i].file, r);
				free(d);
				assert_null(x.records[r].json);
			}
			ex_result_release(&y);
			for (size_t r = 0; r < y.nrecords; r++)
				assert_null(y.records[r].json);
			arena_free(&b);
		}
		/* the second run of a scenario found its dictionaries and
		** every queue; the third every queue whose ages alone moved
		** (as the previous run's queue at its index) */
		if (cases[i].nsw > 0)
			assert_true(memo.sw_hits > hits0);
		/* the second run found the links (the same array), the
		** third parsed its new array */
		if (json_array_size(json_object_get(root, "links")) > 0)
			assert_int_equal(memo.links_hits - lhits0, 1);
		if (grid_of(&x) != NULL) {
			size_t nq = grid_of(&x)->nqueues;
			assert_int_equal(qhits[2] - qhits[1], (long long)nq);
			assert_int_equal(memo.queue_hits - qhits[2],
					 (long long)(nq - changed));
		}
		arena_free(&a);
		json_decref(root);
	}
	scj_memo_fini(&memo);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_records),
		cmocka_unit_test(test_kept_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
