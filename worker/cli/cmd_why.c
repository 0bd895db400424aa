/*
** cmd_why.c — `gridbroker why task|job|pilot ID [--json] [-a|--all]
** [--decision N] [--scenario FILE]`: the decision records stored in MariaDB (decrec.h)
** answer "why did my task, job or pilot go there, or nowhere?" after the
** fact, with the same text `explain` prints offline for the same decision
** (all but the head line: report/render.h). Reading: store_decisions.c;
** the text: render.c. --scenario writes the inputs stored with the latest
** decision (store_inputs.h) as the scenario file `explain` re-decides to
** the same record digest. --decision N takes one of the subject's
** decisions, not the latest, for both (`replay` names decisions by id,
** and a task retried while pending has several).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/timefmt.h"
#include "base/zbuf.h"
#include "cli/cli.h"
#include "gb_error.h"
#include "store/store_decisions.h"
#include "store/store_inputs.h"
#include "report/render.h"

/* Room for the records read: `--all` of a task retried hourly for the
** 30-day default retention is ~720 records of up to DR_RECORD_MAX. */
#define WHY_ARENA (64u << 20)

/*
** Write decision `r`'s stored inputs to `path` ("-": stdout) as a scenario
** file: the stored JSON, indented, with a "description" naming the
** decision. Returns the exit status (0, or 1 after saying why).
*/
static int write_scenario(struct st_db *db, const struct st_dec_row *r,
			  const char *path, struct arena *a)
{
	if (strcmp(r->kind, "rebro") == 0) {
		fprintf(stderr, "gridbroker: decision %lld is a fast "
				"rebrokerage, whose inputs no scenario holds "
				"(which jobs move is the store's pick)\n",
			r->id);
		return 1;
	}
	enum st_in_src src = strcmp(r->kind, "pilot") == 0 ? ST_IN_PILOTS
							   : ST_IN_DECISIONS;
	struct st_in_row in;
	int found = 0;
	int rc = st_in_get(db, src, r->id, a, &in, &found);
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: decision %lld: %s (%s)\n", r->id,
			gb_strerror(rc), st_error(db));
		return 1;
	}
	if (!found) {
		fprintf(stderr,
			"gridbroker: decision %lld (%s) has no stored inputs: "
			"decided with [worker] decision_inputs = 0, before "
			"they were stored, or a pilot whose index exceeded "
			"decision_inputs_max_jobs\n",
			r->id, r->kind);
		return 1;
	}
	char *text = NULL;
	rc = zb_inflate(in.body, in.len, in.raw, &text);
	json_t *root = rc == GB_OK ? json_loads(text, 0, NULL) : NULL;
	free(text);
	if (root == NULL) {
		fprintf(stderr, "gridbroker: decision %lld: stored inputs "
				"unreadable (%s)\n",
			r->id, rc != GB_OK ? gb_strerror(rc) : "not JSON");
		return 1;
	}
	char when[40];
	tf_format(r->decided_at, when, sizeof(when));
	char desc[512];
	snprintf(desc, sizeof(desc),
		 "The inputs of decision %lld (%s of %s, %s at %s), as the "
		 "worker stored them: `gridbroker explain` on this file "
		 "re-decides it to the same record digest.",
		 r->id, in.kind, r->subject ? r->subject : "?",
		 r->outcome ? r->outcome : "?", when);
	json_object_set_new(root, "description", json_string(desc));
	FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
	int ok = f != NULL &&
		 json_dumpf(root, f, JSON_INDENT(1) | JSON_SORT_KEYS |
					     JSON_REAL_PRECISION(17)) == 0 &&
		 fputc('\n', f) != EOF;
	if (f != NULL && f != stdout && fclose(f) != 0)
		ok = 0;
	json_decref(root);
	if (!ok) {
		fprintf(stderr, "gridbroker: %s: cannot write\n", path);
		return 1;
	}
	if (f != stdout)
		fprintf(stderr, "decision %lld (%s) written to %s\n", r->id,
			in.kind, path);
	return 0;
}

/* --decision N: a decision id, > 0. */
static int read_decision(const char *w, void *dst)
{
	long long *n = dst;
	char *end = NULL;
	*n = strtoll(w, &end, 10);
	if (end == w || *end != '\0' || *n <= 0) {
		fprintf(stderr, "gridbroker: why: --decision takes a decision "
				"id (a number > 0)\n");
		return 2;
	}
	return 0;
}

static int why(struct cli *cli, enum st_dec_what what, const char *noun,
	       int argc, char **argv)
{
	const char *id = NULL, *scenario = NULL;
	int as_json = 0, all = 0;
	long long pick = 0;
	const struct cli_opt opts[] = {
		CLI_FLAG("--json", NULL, &as_json),
		CLI_FLAG("--all", "-a", &all),
		CLI_READ("--decision", NULL, read_decision, &pick),
		CLI_WORD("--scenario", NULL, &scenario),
		CLI_OPT_END,
	};
	int nw = cli_parse_opts(argc, argv, opts, &id, 1, 0);
	if (nw < 0)
		return -nw;
	if (id == NULL || id[0] == '\0')
		return 2;
	struct st_db *db = cli_open_db(cli);
	if (db == NULL)
		return 1;
	struct arena a;
	arena_init(&a, WHY_ARENA);
	struct st_dec_row *rows = NULL;
	size_t n = 0;
	int rc = st_dec_find(db, what, id, all || pick ? (size_t)-1 : 1, &a,
			     &rows, &n);
	int code = 0;
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: why %s %s: %s (%s)\n", noun, id,
			gb_strerror(rc), st_error(db));
		code = 1;
	} else if (n == 0) {
		fprintf(stderr, "no decision recorded for %s %s\n", noun, id);
		code = 1;
	} else if (pick) {
		/* that decision alone, as if it were the only one */
		size_t k = 0;
		while (k < n && rows[k].id != pick)
			k++;
		if (k == n) {
			fprintf(stderr,
				"gridbroker: why %s %s: decision %lld is not "
				"one of its %zu (gridbroker why %s %s --all "
				"lists them)\n",
				noun, id, pick, n, noun, id);
			code = 1;
		} else {
			rows[0] = rows[k];
			n = 1;
			all = 0;
		}
	}
	if (code == 0 && scenario != NULL) {
		code = write_scenario(db, &rows[0], scenario, &a);
		arena_free(&a);
		st_close(db);
		return code;
	}
	size_t show = all ? n : (n ? 1 : 0);
	json_t *arr = as_json ? json_array() : NULL;
	long long focus = what == ST_DEC_JOB ? strtoll(id, NULL, 10) : 0;
	for (size_t i = 0; code == 0 && i < show; i++) {
		const struct st_dec_row *r = &rows[i];
		struct rn_head h = {
			.id = r->id,
			.kind = r->kind,
			.subject = r->subject,
			.request_id = r->request_id,
			.outcome = r->outcome,
			.chosen = r->chosen,
			.decided_at = r->decided_at,
			.focus_job = focus,
		};
		json_t *d = r->detail ? json_loads(r->detail, 0, NULL) : NULL;
		if (as_json) {
			json_t *o = rn_json(&h, d);
			if (o == NULL || json_array_append_new(arr, o) != 0)
				code = 1;
		} else {
			char *txt = rn_render(&h, d);
			if (txt == NULL)
				code = 1;
			else
				printf("%s%s", i ? "\n" : "", txt);
			free(txt);
		}
		json_decref(d);
	}
	if (code == 0 && as_json) {
		/* The latest alone is an object; --all an array, newest first. */
		json_t *out = all ? arr : json_array_get(arr, 0);
		char *txt = json_dumps(out, JSON_INDENT(2) |
						    JSON_REAL_PRECISION(10));
		if (txt && !all && n > 1) {
			json_object_set_new(out, "earlier",
					    json_integer((json_int_t)(n - 1)));
			free(txt);
			txt = json_dumps(out, JSON_INDENT(2) |
						      JSON_REAL_PRECISION(10));
		}
		printf("%s\n", txt ? txt : "null");
		free(txt);
	} else if (code == 0 && !all && n > 1) {
		printf("(%zu earlier decision%s: gridbroker why %s %s --all)\n",
		       n - 1, n == 2 ? "" : "s", noun, id);
	}
	json_decref(arr);
	arena_free(&a);
	st_close(db);
	return code;
}

static int cmd_why_task(struct cli *cli, int argc, char **argv)
{
	return why(cli, ST_DEC_TASK, "task", argc, argv);
}

static int cmd_why_job(struct cli *cli, int argc, char **argv)
{
	return why(cli, ST_DEC_JOB, "job", argc, argv);
}

static int cmd_why_pilot(struct cli *cli, int argc, char **argv)
{
	return why(cli, ST_DEC_PILOT, "pilot", argc, argv);
}

/* clang-format off */
static const struct cli_cmd_entry why_cmds[] = {
	{"task", "TASKID [--json] [-a|--all] [--decision N] [--scenario FILE]", "why the task went to its nucleus or is pending: the stored decision (latest, or every one with --all, or decision N of the task's with --decision) with its stage summary, each rejected nucleus's rule and numbers, and the weights; --scenario writes that decision's stored inputs as a scenario file (- for stdout) that `explain` re-decides", 1, cmd_why_task, NULL},
	{"job", "JOBID [--json] [-a|--all] [--decision N] [--scenario FILE]", "why a PanDA job is where it is: the job brokerage decision that placed it (or left it pending, or throttled its task) and its timeouts and rebrokerages; for a DIRAC job, the pilot decision that matched it; --scenario as for task", 1, cmd_why_job, NULL},
	{"pilot", "PILOTID|REQUESTID [--json] [-a|--all] [--decision N] [--scenario FILE]", "why a pilot got its job or none (TQ-10): the task queues considered and what each filter left; --scenario as for task", 1, cmd_why_pilot, NULL},
	{NULL, NULL, NULL, 0, NULL, NULL},
};
/* clang-format on */

const struct cli_cmd_entry cli_cmd_why = {.name = "why", .subs = why_cmds};
