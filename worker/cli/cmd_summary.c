/*
** cmd_summary.c — `gridbroker summary`: what the workers decided in a time
** window, as an operator reads it after a run or a shift: tasks by
** nucleus, jobs by queue, pilot outcomes and the most frequent rejection
** reasons, each with counts; `gridbroker why` then explains any single
** decision. The grouping is done by MariaDB (store_summary.c), the
** counting of reasons and the tables by summary.c.
*/
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "cli/cli.h"
#include "base/clock.h"
#include "gb_error.h"
#include "store/store_summary.h"
#include "report/summary.h"
#include "base/timefmt.h"

/* Explanations read for the reasons: the newest this many decisions (and
** as many pilot decisions), so a summary over months stays quick. */
#define SUMMARY_DETAILS 2000

struct sum_ctx {
	struct sm_table *t;
	long long bad; /* explanations that were not JSON */
	long long decisions;
};

static int add_group(void *ud, const char *k1, const char *k2, long long n)
{
	sm_add(ud, k1, k2, n);
	return 0;
}

static int add_detail(void *ud, const char *kind, const char *detail)
{
	(void)kind;
	struct sum_ctx *c = ud;
	c->decisions++;
	if (sm_add_reasons(c->t, detail) < 0)
		c->bad++;
	return 0;
}

/*
** `--since` accepts unix seconds, RFC 3339, or a duration back from the
** workers' clock ("90s", "30m", "12h", "7d").
*/
static int parse_since(const char *s, long long now, long long *out)
{
	char *end = NULL;
	long long v = strtoll(s, &end, 10);
	if (end != s && v >= 0 && end[0] == '\0') {
		*out = v; /* unix seconds */
		return GB_OK;
	}
	if (end != s && v >= 0 && end[0] && !end[1]) {
		static const struct {
			char unit;
			long long seconds;
		} units[] = {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}};
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (end[0] == units[i].unit &&
			    v <= 100LL * 365 * 86400 / units[i].seconds) {
				*out = now - v * units[i].seconds;
				return GB_OK;
			}
	}
	return tf_parse(s, out);
}

/* --top N: how many rows each table shows, 1..1000. */
static int read_top(const char *word, void *dst)
{
	long long *top = dst;
	char *end = NULL;
	*top = strtoll(word, &end, 10);
	if (*end || *top < 1 || *top > 1000) {
		fprintf(stderr, "gridbroker: summary: --top needs 1..1000\n");
		return 2;
	}
	return 0;
}

static json_t *table_json(const struct sm_table *t, const char *n1,
			  const char *n2)
{
	json_t *arr = json_array();
	for (size_t i = 0; arr && i < t->nrows; i++) {
		const struct sm_row *r = &t->rows[i];
		json_t *o = json_object();
		json_object_set_new(o, n1,
				    r->k1[0] ? json_string(r->k1) : json_null());
		json_object_set_new(o, n2, json_string(r->k2));
		json_object_set_new(o, "n", json_integer((json_int_t)r->n));
		json_array_append_new(arr, o);
	}
	return arr;
}

static int cmd_summary(struct cli *cli, int argc, char **argv)
{
	const char *since_arg = NULL;
	int as_json = 0;
	long long top = 10;
	const struct cli_opt opts[] = {
		CLI_WORD("--since", NULL, &since_arg),
		CLI_READ("--top", NULL, read_top, &top),
		CLI_FLAG("--json", NULL, &as_json),
		CLI_OPT_END,
	};
	int nw = cli_parse_opts(argc, argv, opts, NULL, 0, 0);
	if (nw < 0)
		return -nw;
	/* the window is in the workers' clock (with its test offset) */
	clk_set_offset_file(cli->cfg.clock_offset_file);
	long long since = 0;
	if (since_arg && parse_since(since_arg, clk_now(), &since) != GB_OK) {
		fprintf(stderr,
			"gridbroker: summary: --since '%s': expected unix "
			"seconds, RFC 3339 or a duration like 30m, 12h, 7d\n",
			since_arg);
		return 2;
	}
	struct st_db *db = cli_open_db(cli);
	if (db == NULL)
		return 1;
	/* four tables of up to SM_MAX_ROWS rows: too big for the stack */
	struct sm_table *t = calloc(SS_NKIND + 1, sizeof(*t));
	if (t == NULL) {
		st_close(db);
		fprintf(stderr, "gridbroker: summary: out of memory\n");
		return 1;
	}
	int rc = GB_OK;
	for (int k = 0; rc == GB_OK && k < SS_NKIND; k++) {
		sm_init(&t[k]);
		rc = st_summary_groups(db, (enum ss_kind)k, since, add_group,
				       &t[k]);
		sm_sort(&t[k]);
	}
	struct sm_table *reasons = &t[SS_NKIND];
	sm_init(reasons);
	struct sum_ctx ctx = {reasons, 0, 0};
	if (rc == GB_OK)
		rc = st_summary_details(db, since, SUMMARY_DETAILS, add_detail,
					&ctx);
	sm_sort(reasons);
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: summary: %s: %s\n",
			gb_strerror(rc), st_error(db));
		free(t);
		st_close(db);
		return 1;
	}
	char when[40] = "the beginning";
	if (since > 0)
		tf_format(since, when, sizeof(when));
	if (as_json) {
		json_t *o = json_pack(
			"{s:I,s:o,s:o,s:o,s:o,s:I}", "since", (json_int_t)since,
			"tasks", table_json(&t[SS_TASKS], "nucleus", "status"),
			"jobs", table_json(&t[SS_JOBS], "queue", "status"),
			"pilots", table_json(&t[SS_PILOTS], "outcome", "code"),
			"reasons", table_json(reasons, "rule", "code"),
			"decisionsRead", (json_int_t)ctx.decisions);
		cli_print_json(o, JSON_INDENT(2), "{}");
	} else {
		static const char *const task_cols[] = {"assigned", "pending"};
		static const char *const job_cols[] = {"assigned", "activated",
						       "pending", "throttled"};
		printf("decisions since %s (workers' clock)\n", when);
		printf("\ntasks by nucleus\n");
		sm_print_pivot(stdout, &t[SS_TASKS], "nucleus", "(none yet)",
			       task_cols, 2, 1, (size_t)top * 3);
		printf("\njobs by queue (status as of their last decision)\n");
		sm_print_pivot(stdout, &t[SS_JOBS], "queue", "(no queue)",
			       job_cols, 4, 1, (size_t)top * 2);
		printf("\npilots\n");
		sm_print_list(stdout, &t[SS_PILOTS], "outcome", "code",
			      (size_t)top);
		printf("\ntop rejection reasons (the newest %lld decisions "
		       "and %d pilot decisions at most)\n",
		       (long long)SUMMARY_DETAILS, SUMMARY_DETAILS);
		sm_print_list(stdout, reasons, "rule", "code", (size_t)top);
		if (ctx.bad)
			printf("  (%lld explanations were not JSON)\n",
			       ctx.bad);
	}
	free(t);
	st_close(db);
	return 0;
}

/* clang-format off */
const struct cli_cmd_entry cli_cmd_summary = {"summary", "[--since T] [--top N] [--json]", "what the workers decided since T (unix seconds, RFC 3339, or a duration back from now such as 30m, 12h, 7d; default: everything): tasks by nucleus, jobs by queue, pilot outcomes and the most frequent rejection reasons", 1, cmd_summary, NULL};
/* clang-format on */
