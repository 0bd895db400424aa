/*
** cmd_explain.c — `gridbroker explain FILE.json [--json]`: a scenario
** file decided offline through the worker's own decision path, and the
** records the worker would store printed: as text by the renderer `why`
** uses too (report/render.h), then what only an offline run shows; or,
** with --json, the records as stored (explain/explain_print.h). The
** file's keys say which brokerage it is for: "kind": "timeout" (the PanDA
** job timeouts, TO-01..TO-13), "queues" (a PanDA job request; taskType
** "anal" for the analysis brokerage with its throttle, AJ-05..AJ-28),
** "taskQueues" (a DIRAC pilot match), or else a task and its nuclei (the
** task brokerage).
**
** With `--set NAME=VALUE` (repeatable; explain/whatif.h says the NAME
** forms) the scenario is decided twice, as written and changed, and the
** what-if section follows the original decision's text: each set, the
** outcome, chosen candidate and digest before -> after, and the
** candidates whose verdict or weight changed with their rule. With
** --json: {"sets", "before", "after", "changes"}.
**
** Deciding is explain/explain.h's, the output explain_print.h's, the
** sets and the diff whatif.h's; this file only wires them to the file
** and stdout.
*/
#include <stdio.h>
#include <stdlib.h>

#include "base/arena.h"
#include "cli/cli.h"
#include "explain/explain.h"
#include "explain/explain_print.h"
#include "explain/scenario_match.h"
#include "explain/whatif.h"
#include "gb_error.h"

/* How many bytes the arena of scenario `root` may hand out: a match
** scenario interns every task queue and job, a job scenario its grid. */
static size_t arena_cap(json_t *root)
{
	/* "kind" first: a timeout scenario also has "queues" (an object). */
	if (json_is_object(root) && json_object_get(root, "kind"))
		return 256u << 20;
	if (json_is_object(root) && json_object_get(root, "queues"))
		return 512u << 20;
	if (scm_is_match_scenario(root))
		return 1024u << 20;
	return 256u << 20;
}

#define CLI_SETS_MAX 64 /* --set options of one explain */

/* The --set options, gathered by their cli_opt read (one per option). */
struct sets {
	struct exw_set v[CLI_SETS_MAX];
	size_t n;
};

static int read_set(const char *word, void *dst)
{
	struct sets *s = dst;
	char err[EXW_ARG_MAX + 128];
	if (s->n == CLI_SETS_MAX) {
		fprintf(stderr, "gridbroker: --set: at most %d\n",
			CLI_SETS_MAX);
		return 2;
	}
	if (exw_parse_set(word, &s->v[s->n], err, sizeof(err)) != GB_OK) {
		fprintf(stderr, "gridbroker: --set %s\n", err);
		return 2;
	}
	s->n++;
	return 0;
}

/* One run of `root` in `a` (set up here; the caller frees it). */
static int run(json_t *root, struct arena *a, struct ex_result *res,
	       const char *what, const char *file)
{
	char err[1024] = "";
	arena_init(a, arena_cap(root));
	int rc = ex_run(root, a, res, err, sizeof(err));
	if (rc != GB_OK)
		fprintf(stderr, "gridbroker: %s%s: %s\n", file, what,
			err[0] ? err : gb_strerror(rc));
	return rc;
}

/* {"sets", "before", "after", "changes"} to stdout. */
static int print_whatif_json(const struct sets *sets, const struct ex_result *b,
			     const struct ex_result *a,
			     const struct exw_diff *d)
{
	json_t *o = json_object();
	int bad = o == NULL ||
		  json_object_set_new(o, "sets",
				      exw_sets_json(sets->v, sets->n)) != 0 ||
		  json_object_set_new(o, "before", exp_json(b)) != 0 ||
		  json_object_set_new(o, "after", exp_json(a)) != 0 ||
		  json_object_set_new(o, "changes", exw_diff_json(d)) != 0;
	if (bad) {
		json_decref(o);
		return GB_ENOMEM;
	}
	cli_print_json(o, EXP_JSON_FLAGS, "{}");
	return GB_OK;
}

/* The scenario as written and changed by `sets`, decided and compared. */
static int whatif(json_t *root, const struct sets *sets, int as_json,
		  const char *file)
{
	char err[EXW_ARG_MAX + 1024] = "";
	json_t *changed = json_deep_copy(root);
	if (changed == NULL)
		return GB_ENOMEM;
	int rc = exw_apply(changed, sets->v, sets->n, err, sizeof(err));
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: %s: %s\n", file, err);
		json_decref(changed);
		return rc;
	}
	struct arena ab, aa, ad;
	struct ex_result b, a;
	struct exw_diff d;
	rc = run(root, &ab, &b, "", file);
	if (rc == GB_OK)
		rc = run(changed, &aa, &a, " (with the sets)", file);
	else
		arena_init(&aa, 0);
	arena_init(&ad, 256u << 20);
	if (rc == GB_OK) {
		rc = exw_diff(&b, &a, &ad, &d, err, sizeof(err));
		if (rc != GB_OK)
			fprintf(stderr, "gridbroker: %s: %s\n", file,
				err[0] ? err : gb_strerror(rc));
	}
	if (rc == GB_OK && as_json) {
		rc = print_whatif_json(sets, &b, &a, &d);
	} else if (rc == GB_OK) {
		rc = exp_print(stdout, &b);
		char *text = rc == GB_OK ? exw_render(sets->v, sets->n, &d)
					 : NULL;
		if (rc == GB_OK && text == NULL)
			rc = GB_ENOMEM;
		if (text)
			printf("\n%s", text);
		free(text);
	}
	arena_free(&ad);
	arena_free(&aa);
	arena_free(&ab);
	json_decref(changed);
	return rc;
}

static int cmd_explain(struct cli *cli, int argc, char **argv)
{
	(void)cli;
	int as_json = 0;
	const char *file = NULL;
	struct sets *sets = calloc(1, sizeof(*sets));
	if (sets == NULL)
		return 1;
	const struct cli_opt opts[] = {
		CLI_FLAG("--json", NULL, &as_json),
		CLI_READ("--set", NULL, read_set, sets),
		CLI_OPT_END,
	};
	int n = cli_parse_opts(argc, argv, opts, &file, 1, 1);
	json_t *root = n >= 0 && file ? cli_read_json(file) : NULL;
	int rc = GB_OK;
	if (root && sets->n > 0) {
		rc = whatif(root, sets, as_json, file);
	} else if (root) {
		char err[1024] = "";
		struct arena a;
		arena_init(&a, arena_cap(root));
		struct ex_result res;
		rc = ex_run(root, &a, &res, err, sizeof(err));
		if (rc == GB_OK && as_json)
			cli_print_json(exp_json(&res), EXP_JSON_FLAGS, "{}");
		else if (rc == GB_OK)
			rc = exp_print(stdout, &res);
		if (rc != GB_OK)
			fprintf(stderr, "gridbroker: %s: %s\n", file,
				err[0] ? err : gb_strerror(rc));
		arena_free(&a);
	}
	free(sets);
	json_decref(root);
	if (n < 0)
		return -n;
	if (file == NULL)
		return 2;
	return root && rc == GB_OK ? 0 : 1;
}

/* clang-format off */
const struct cli_cmd_entry cli_cmd_explain = {"explain", "FILE.json [--json] [--set NAME=VALUE ...]", "run the engine offline on a scenario file (task, job, analysis job, DIRAC match or \"kind\": \"timeout\" scenario): every candidate's weight or reasons, the stages and the decision (analysis: the throttle first; timeout: each job's rule or next check, TO-13 per rebro row); with --set (repeatable; NAME a parameter, queue.Q.FIELD, nucleus.N.FIELD, group.G.FIELD, share.G, tq.ID.FIELD or corrections.PATH) the decision again under the change: outcome, chosen and the candidates whose verdict or weight changed, with their rule", 0, cmd_explain, NULL};
/* clang-format on */
