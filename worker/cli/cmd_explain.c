/*
** cmd_explain.c — `gridbroker explain FILE.json [--json]`: the engine run
** offline on a scenario file, through the same code the worker uses, and
** every candidate's weight or reasons, the stages and the decision
** printed. The file's keys say which brokerage it is for: "kind":
** "timeout" (the PanDA job timeouts, TO-01..TO-13), "queues" (a PanDA
** job request; taskType "anal" for the analysis brokerage with its
** throttle, AJ-05..AJ-28), "taskQueues" (a DIRAC pilot match), or else a
** task and its nuclei (the task brokerage).
**
** Parsing and running are explain/'s, the text and JSON report/'s; this
** file only wires them to the file and stdout.
*/
#include <stdio.h>

#include "base/arena.h"
#include "cli/cli.h"
#include "decision.h"
#include "gb_error.h"
#include "report/report.h"
#include "report/report_analysis.h"
#include "report/report_jobs.h"
#include "explain/scenario.h"
#include "explain/scenario_analysis.h"
#include "explain/scenario_jobs.h"
#include "explain/scenario_match.h"
#include "explain/scenario_timeout.h"
#include "model/decide.h"

/*
** Each kind of scenario is one function: it parses `root` with memory
** from `a`, runs it through the engine and prints the result, as JSON
** (as_json) or as text. It returns GB_OK, or an error with why in
** err[errlen] (the parser's words, or the run's gb_strerror) and nothing
** printed; cmd_explain reads the file, picks the kind, and reports.
*/
typedef int explain_fn(json_t *root, struct arena *a, int as_json,
		       char *err, size_t errlen);

/* A report as explain --json prints it. */
static void print_json(json_t *j)
{
	cli_print_json(j, JSON_INDENT(2) | JSON_REAL_PRECISION(10), "{}");
}

/* A run's result: GB_OK, or its error with its words in err. */
static int run_result(int rc, char *err, size_t errlen)
{
	if (rc != GB_OK)
		snprintf(err, errlen, "%s", gb_strerror(rc));
	return rc;
}

/* A task and its nuclei: the task brokerage. */
static int explain_task(json_t *root, struct arena *a, int as_json,
			char *err, size_t errlen)
{
	struct scn_task_scenario sc;
	int rc = scn_parse_task_scenario(root, a, &sc, err, errlen);
	if (rc != GB_OK)
		return rc;
	struct prm_set set = {sc.params, sc.nparams};
	struct md_task m;
	rc = md_decide_task(&sc.task, sc.nuclei, sc.nnuclei, &set, sc.now,
			    sc.seed, a, &m);
	if (rc != GB_OK)
		return run_result(rc, err, errlen);
	const struct dec_decision d = m.dec;
	if (as_json) {
		print_json(rpt_decision_json(&d));
	} else {
		char title[160];
		snprintf(title, sizeof(title), "task %lld (%s), %zu nuclei",
			 sc.task.task_id, sc.task.gshare, sc.nnuclei);
		rpt_print_decision(stdout, &d, title);
	}
	return GB_OK;
}

/* A PanDA job request and its queues: the job brokerage. */
static int explain_jobs(json_t *root, struct arena *a, int as_json,
			char *err, size_t errlen)
{
	struct scj_scenario sc;
	struct md_jobs res;
	int rc = scj_parse_scenario(root, a, &sc, err, errlen);
	if (rc == GB_OK)
		rc = run_result(scj_run(&sc, a, &res), err, errlen);
	if (rc != GB_OK)
		return rc;
	if (as_json)
		print_json(rpj_decision_json(&sc.req, res.queues, res.nqueues,
					     &res.dec, &res.plan));
	else
		rpj_print_decision(stdout, &sc.req, res.queues, res.nqueues,
				   &res.dec, &res.plan);
	return GB_OK;
}

/* An analysis scenario (taskType "anal"): throttle, then AJ-05..AJ-28. */
static int explain_analysis(json_t *root, struct arena *a, int as_json,
			    char *err, size_t errlen)
{
	struct sca_scenario sc;
	struct md_analysis res;
	int rc = sca_parse_scenario(root, a, &sc, err, errlen);
	if (rc == GB_OK)
		rc = run_result(sca_run(&sc, a, &res), err, errlen);
	if (rc != GB_OK)
		return rc;
	if (as_json)
		print_json(rpa_decision_json(&res));
	else
		rpa_print_decision(stdout, &res);
	return GB_OK;
}

/* A timeout scenario ("kind": "timeout"): TO-01..TO-13 per job and
** rebrokerage row. */
static int explain_timeout(json_t *root, struct arena *a, int as_json,
			   char *err, size_t errlen)
{
	struct sct_scenario sc;
	struct sct_result res;
	int rc = sct_parse_scenario(root, a, &sc, err, errlen);
	if (rc == GB_OK)
		rc = run_result(sct_run(&sc, a, &res), err, errlen);
	if (rc != GB_OK)
		return rc;
	if (as_json)
		print_json(sct_result_json(&sc, &res));
	else
		sct_print_result(stdout, &sc, &res);
	return GB_OK;
}

/* A DIRAC match scenario (root has "taskQueues"): pilots against task
** queues. */
static int explain_match(json_t *root, struct arena *a, int as_json,
			 char *err, size_t errlen)
{
	struct scm_scenario sc;
	struct scm_result res;
	int rc = scm_parse_scenario(root, a, &sc, err, errlen);
	if (rc == GB_OK)
		rc = run_result(scm_run(&sc, a, &res), err, errlen);
	if (rc != GB_OK)
		return rc;
	if (as_json)
		print_json(scm_result_json(&sc, &res));
	else
		scm_print(stdout, &sc, &res);
	return GB_OK;
}

/* Which kind of scenario `root` is, and how many bytes its arena may
** hand out. */
static explain_fn *scenario_kind(json_t *root, size_t *arena)
{
	/* "kind" first: a timeout scenario also has "queues" (an object). */
	if (json_is_object(root) && json_object_get(root, "kind")) {
		*arena = 256u << 20;
		return explain_timeout;
	}
	if (json_is_object(root) && json_object_get(root, "queues")) {
		*arena = 512u << 20;
		return sca_is_analysis_scenario(root) ? explain_analysis
						      : explain_jobs;
	}
	if (scm_is_match_scenario(root)) {
		*arena = 1024u << 20;
		return explain_match;
	}
	*arena = 256u << 20;
	return explain_task;
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
	size_t cap;
	explain_fn *explain = scenario_kind(root, &cap);
	char err[1024] = "";
	struct arena a;
	arena_init(&a, cap);
	int rc = explain(root, &a, as_json, err, sizeof(err));
	if (rc != GB_OK)
		fprintf(stderr, "gridbroker: %s: %s\n", file, err);
	arena_free(&a);
	json_decref(root);
	return rc == GB_OK ? 0 : 1;
}

/* clang-format off */
const struct cli_cmd_entry cli_cmd_explain = {"explain", "FILE.json [--json]", "run the engine offline on a scenario file (task, job, analysis job, DIRAC match or \"kind\": \"timeout\" scenario): every candidate's weight or reasons, the stages and the decision (analysis: the throttle first; timeout: each job's rule or next check, TO-13 per rebro row)", 0, cmd_explain, NULL};
/* clang-format on */
