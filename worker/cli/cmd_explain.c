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
** Deciding is explain/explain.h's, the output explain_print.h's; this
** file only wires them to the file and stdout.
*/
#include <stdio.h>

#include "base/arena.h"
#include "cli/cli.h"
#include "explain/explain.h"
#include "explain/explain_print.h"
#include "explain/scenario_match.h"
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

static int cmd_explain(struct cli *cli, int argc, char **argv)
{
	(void)cli;
	int as_json = 0;
	const char *file = NULL;
	const struct cli_opt opts[] = {
		CLI_FLAG("--json", NULL, &as_json),
		CLI_OPT_END,
	};
	int n = cli_parse_opts(argc, argv, opts, &file, 1, 1);
	if (n < 0)
		return -n;
	if (file == NULL)
		return 2;
	json_t *root = cli_read_json(file);
	if (root == NULL)
		return 1;
	char err[1024] = "";
	struct arena a;
	arena_init(&a, arena_cap(root));
	struct ex_result res;
	int rc = ex_run(root, &a, &res, err, sizeof(err));
	if (rc == GB_OK && as_json)
		cli_print_json(exp_json(&res), EXP_JSON_FLAGS, "{}");
	else if (rc == GB_OK)
		rc = exp_print(stdout, &res);
	if (rc != GB_OK)
		fprintf(stderr, "gridbroker: %s: %s\n", file,
			err[0] ? err : gb_strerror(rc));
	arena_free(&a);
	json_decref(root);
	return rc == GB_OK ? 0 : 1;
}

/* clang-format off */
const struct cli_cmd_entry cli_cmd_explain = {"explain", "FILE.json [--json]", "run the engine offline on a scenario file (task, job, analysis job, DIRAC match or \"kind\": \"timeout\" scenario): every candidate's weight or reasons, the stages and the decision (analysis: the throttle first; timeout: each job's rule or next check, TO-13 per rebro row)", 0, cmd_explain, NULL};
/* clang-format on */
