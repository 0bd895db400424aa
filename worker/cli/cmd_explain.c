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
#include <stdlib.h>
#include <string.h>

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

/* A report as explain --json prints it. */
static void print_json(json_t *j)
{
	cli_print_json(j, JSON_INDENT(2) | JSON_REAL_PRECISION(10), "{}");
}

/* An analysis scenario (taskType "anal"): throttle, then AJ-05..AJ-28. */
static int explain_analysis(json_t *root, const char *file, int as_json)
{
	char err[1024] = "";
	struct arena a;
	arena_init(&a, 512u << 20);
	struct sca_scenario sc;
	struct sca_result res;
	int rc = sca_parse_scenario(root, &a, &sc, err, sizeof(err));
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: %s: %s\n", file, err);
		arena_free(&a);
		return 1;
	}
	rc = sca_run(&sc, &a, &res);
	const struct ab_queue *aqs = res.throttle.throttled ? NULL : res.aqs;
	const struct dec_decision *d = res.throttle.throttled ? NULL : &res.dec;
	if (rc != GB_OK)
		fprintf(stderr, "gridbroker: %s: %s\n", file, gb_strerror(rc));
	else if (as_json)
		print_json(rpa_decision_json(&res.req, aqs, res.nqueues, d,
					     &res.plan, res.job_queue,
					     &res.throttle, &res.user,
					     res.task_class));
	else
		rpa_print_decision(stdout, &res.req, aqs, res.nqueues, d,
				   &res.plan, res.job_queue, &res.throttle,
				   &res.user, res.task_class);
	arena_free(&a);
	return rc == GB_OK ? 0 : 1;
}

static int explain_timeout(json_t *root, const char *file, int as_json)
{
	char err[1024] = "";
	struct arena a;
	arena_init(&a, 256u << 20);
	struct sct_scenario sc;
	struct sct_result res;
	int rc = sct_parse_scenario(root, &a, &sc, err, sizeof(err));
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: %s: %s\n", file, err);
		arena_free(&a);
		return 1;
	}
	rc = sct_run(&sc, &a, &res);
	if (rc != GB_OK)
		fprintf(stderr, "gridbroker: %s: %s\n", file, gb_strerror(rc));
	else if (as_json)
		print_json(sct_result_json(&sc, &res));
	else
		sct_print_result(stdout, &sc, &res);
	arena_free(&a);
	return rc == GB_OK ? 0 : 1;
}

static int explain_jobs(json_t *root, const char *file, int as_json)
{
	if (sca_is_analysis_scenario(root))
		return explain_analysis(root, file, as_json);
	char err[1024] = "";
	struct arena a;
	arena_init(&a, 512u << 20);
	struct scj_scenario sc;
	struct scj_result res;
	int rc = scj_parse_scenario(root, &a, &sc, err, sizeof(err));
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: %s: %s\n", file, err);
		arena_free(&a);
		return 1;
	}
	rc = scj_run(&sc, &a, &res);
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: %s: %s\n", file, gb_strerror(rc));
	} else if (as_json) {
		print_json(rpj_decision_json(&sc.req, res.queues, res.nqueues,
					     &res.dec, &res.plan));
	} else {
		rpj_print_decision(stdout, &sc.req, res.queues, res.nqueues,
				   &res.dec, &res.plan);
	}
	arena_free(&a);
	return rc == GB_OK ? 0 : 1;
}

static int explain_match(json_t *root, const char *file, int as_json)
{
	char err[1024] = "";
	struct arena a;
	arena_init(&a, 1024u << 20);
	struct scm_scenario sc;
	struct scm_result res;
	int rc = scm_parse_scenario(root, &a, &sc, err, sizeof(err));
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: %s: %s\n", file, err);
		arena_free(&a);
		return 1;
	}
	rc = scm_run(&sc, &a, &res);
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: %s: %s\n", file, gb_strerror(rc));
	} else if (as_json) {
		print_json(scm_result_json(&sc, &res));
	} else {
		scm_print(stdout, &sc, &res);
	}
	arena_free(&a);
	return rc == GB_OK ? 0 : 1;
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
	char err[1024] = "";
	json_t *root = cli_read_json(file);
	if (root == NULL)
		return 1;
	/* "kind" first: a timeout scenario also has "queues" (an object). */
	if (json_is_object(root) && json_object_get(root, "kind")) {
		int xrc = explain_timeout(root, file, as_json);
		json_decref(root);
		return xrc;
	}
	if (json_is_object(root) && json_object_get(root, "queues")) {
		int xrc = explain_jobs(root, file, as_json);
		json_decref(root);
		return xrc;
	}
	if (scm_is_match_scenario(root)) {
		int xrc = explain_match(root, file, as_json);
		json_decref(root);
		return xrc;
	}
	struct arena a;
	arena_init(&a, 256u << 20);
	struct scn_task_scenario sc;
	int rc = scn_parse_task_scenario(root, &a, &sc, err, sizeof(err));
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: %s: %s\n", file, err);
		arena_free(&a);
		json_decref(root);
		return 1;
	}
	struct prm_set set = {sc.params, sc.nparams};
	struct tb_params p;
	tb_params_resolve(&set, sc.task.gshare, &p);
	struct gb_rng rng;
	gb_rng_seed(&rng, sc.seed);
	struct dec_candidate *cands =
		sc.nnuclei ? arena_alloc(&a, sc.nnuclei * sizeof(*cands)) : NULL;
	struct dec_decision d;
	rc = (sc.nnuclei && cands == NULL)
		     ? GB_ENOMEM
		     : tb_broker(&sc.task, sc.nuclei, sc.nnuclei, &p, &rng,
				 cands, &d);
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: %s: %s\n", file, gb_strerror(rc));
	} else if (as_json) {
		print_json(rpt_decision_json(&d));
	} else {
		char title[160];
		snprintf(title, sizeof(title), "task %lld (%s), %zu nuclei",
			 sc.task.task_id, sc.task.gshare, sc.nnuclei);
		rpt_print_decision(stdout, &d, title);
	}
	arena_free(&a);
	json_decref(root);
	return rc == GB_OK ? 0 : 1;
}

/* clang-format off */
const struct cli_cmd_entry cli_cmd_explain = {"explain", "FILE.json [--json]", "run the engine offline on a scenario file (task, job, analysis job, DIRAC match or \"kind\": \"timeout\" scenario): every candidate's weight or reasons, the stages and the decision (analysis: the throttle first; timeout: each job's rule or next check, TO-13 per rebro row)", 0, cmd_explain, NULL};
/* clang-format on */
