/*
** cmd_why.c — `gridbroker why task|job|pilot ID [--json] [-a|--all]`: the
** decision records stored in MariaDB (decrec.h) answer "why did my task,
** job or pilot go there, or nowhere?" after the fact, with the same text
** `explain` prints offline for the same decision (all but the head line:
** report/render.h). Reading: store_decisions.c; the text: render.c.
*/
#include <stdio.h>
#include <stdlib.h>

#include "base/arena.h"
#include "cli/cli.h"
#include "gb_error.h"
#include "store/store_decisions.h"
#include "report/render.h"

/* Room for the records read: `--all` of a task retried hourly for the
** 30-day default retention is ~720 records of up to DR_RECORD_MAX. */
#define WHY_ARENA (64u << 20)

static int why(struct cli *cli, enum st_dec_what what, const char *noun,
	       int argc, char **argv)
{
	const char *id = NULL;
	int as_json = 0, all = 0;
	const struct cli_opt opts[] = {
		CLI_FLAG("--json", NULL, &as_json),
		CLI_FLAG("--all", "-a", &all),
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
	int rc = st_dec_find(db, what, id, all ? (size_t)-1 : 1, &a, &rows, &n);
	int code = 0;
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: why %s %s: %s (%s)\n", noun, id,
			gb_strerror(rc), st_error(db));
		code = 1;
	} else if (n == 0) {
		fprintf(stderr, "no decision recorded for %s %s\n", noun, id);
		code = 1;
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
	{"task", "TASKID [--json] [-a|--all]", "why the task went to its nucleus or is pending: the stored decision (latest, or every one with --all) with its stage summary, each rejected nucleus's rule and numbers, and the weights", 1, cmd_why_task, NULL},
	{"job", "JOBID [--json] [-a|--all]", "why a PanDA job is where it is: the job brokerage decision that placed it (or left it pending, or throttled its task) and its timeouts and rebrokerages; for a DIRAC job, the pilot decision that matched it", 1, cmd_why_job, NULL},
	{"pilot", "PILOTID|REQUESTID [--json] [-a|--all]", "why a pilot got its job or none (TQ-10): the task queues considered and what each filter left", 1, cmd_why_pilot, NULL},
	{NULL, NULL, NULL, 0, NULL, NULL},
};
/* clang-format on */

const struct cli_cmd_entry cli_cmd_why = {.name = "why", .subs = why_cmds};
