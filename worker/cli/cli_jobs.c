/*
** cli_jobs.c — the job-brokerage commands of `gridbroker`: loading queues,
** links, software dictionaries and file replicas (`grid load`), submitting
** job.broker requests (`job submit`), explaining a job scenario offline
** (`explain`) and summarising jobs.* events (`events`).
**
** Parsing and printing live in scenario_jobs.c / report_jobs.c, shared with
** the tests; this file only wires them to files, servers and stdout.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "codec/codec_jobs.h"
#include "decision.h"
#include "gb_error.h"
#include "report/report_analysis.h"
#include "report/report_jobs.h"
#include "explain/scenario.h"
#include "explain/scenario_analysis.h"
#include "explain/scenario_jobs.h"
#include "explain/scenario_timeout.h"
#include "store/store_analysis.h"
#include "store/store_jobs.h"

int cli_grid_has_jobs(json_t *root)
{
	static const char *const keys[] = {"queues", "sw", "links",
					   "fileReplicas", NULL};
	if (!json_is_object(root))
		return 0;
	for (size_t i = 0; keys[i]; i++)
		if (json_object_get(root, keys[i]))
			return 1;
	return 0;
}

int cli_grid_load_jobs(struct st_db *db, json_t *root, const char *file,
		       long long now)
{
	char err[1024] = "";
	struct arena a;
	arena_init(&a, 512u << 20);
	struct gm_grid g;
	int rc = scj_parse_grid(root, &a, now, &g, err, sizeof(err));
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: %s: %s\n", file, err);
	} else {
		rc = st_jobs_grid_save(db, &g, now);
		if (rc != GB_OK)
			fprintf(stderr, "gridbroker: grid load: %s\n",
				st_error(db));
		else
			printf("loaded %zu queues, %zu links and replicas of "
			       "%zu files from %s\n",
			       g.nqueues, g.nlinks, g.nfiles, file);
	}
	arena_free(&a);
	return rc == GB_OK ? 0 : 1;
}

int cli_grid_load_analysis(struct st_db *db, json_t *root, const char *file,
			   long long now)
{
	char err[1024] = "";
	struct arena a;
	arena_init(&a, 64u << 20);
	struct gm_analysis_grid g;
	int rc = scj_parse_analysis_grid(json_object_get(root, "analysis"), &a, &g,
				     err, sizeof(err));
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: %s: analysis: %s\n", file, err);
	} else {
		rc = st_analysis_save(db, &g, now);
		if (rc != GB_OK)
			fprintf(stderr, "gridbroker: grid load: %s\n",
				st_error(db));
		else
			printf("loaded %zu analysis owners, %zu shares and %zu "
			       "task classes from %s\n",
			       g.nowners, g.nshares, g.nclasses, file);
	}
	arena_free(&a);
	return rc == GB_OK ? 0 : 1;
}

/* ---- job submit ------------------------------------------------------- */

static int submit_one(struct amq_sync *s, json_t *obj, const char *path)
{
	char err[512] = "";
	struct arena a;
	arena_init(&a, 64u << 20);
	struct gm_request r;
	int rc = scj_parse_request(obj, path, &a, 0, &r, err, sizeof(err));
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: %s\n", err);
		arena_free(&a);
		return 1;
	}
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	rc = cdj_encode_request(&r, &sb);
	char msgid[128];
	cli_message_id(msgid, sizeof(msgid), "jobs", r.t.task_id);
	struct amq_props props = {
		.message_id = msgid,
		.type = "job.broker",
		.content_type = "application/msgpack",
		.persistent = 1,
	};
	if (rc == GB_OK)
		rc = amq_sync_publish(s, AMQ_EX_REQUESTS, "job.broker", &props,
				      sb.data, sb.size, 10000);
	if (rc == GB_OK)
		printf("submitted %zu jobs of task %lld (message %s)\n",
		       r.njobs, r.t.task_id, msgid);
	else
		fprintf(stderr, "gridbroker: submit jobs of task %lld: %s\n",
			r.t.task_id, gb_strerror(rc));
	msgpack_sbuffer_destroy(&sb);
	arena_free(&a);
	return rc == GB_OK ? 0 : 1;
}

int cli_cmd_job_submit(struct cli *cli, int argc, char **argv)
{
	if (argc != 1)
		return 2;
	char err[1024] = "";
	json_t *root = scn_read_file(argv[0], err, sizeof(err));
	if (root == NULL) {
		fprintf(stderr, "gridbroker: %s\n", err);
		return 1;
	}
	/* One request object, an array of them, or a job scenario. */
	json_t *list = root;
	if (json_is_object(root) && json_object_get(root, "queues") &&
	    json_object_get(root, "task"))
		list = json_object_get(root, "task");
	struct amq_sync *s = cli_open_amqp(cli);
	int bad = 0;
	if (s == NULL) {
		bad = 1;
	} else if (json_is_array(list)) {
		for (size_t i = 0; i < json_array_size(list); i++) {
			char path[48];
			snprintf(path, sizeof(path), "requests[%zu]", i);
			bad |= submit_one(s, json_array_get(list, i), path);
		}
	} else {
		bad = submit_one(s, list, "request");
	}
	if (s)
		amq_sync_close(s);
	json_decref(root);
	return bad;
}

/* ---- explain ---------------------------------------------------------- */

static void print_json(json_t *j)
{
	char *txt = j ? json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(10))
		      : NULL;
	printf("%s\n", txt ? txt : "{}");
	free(txt);
	json_decref(j);
}

/* An analysis scenario (taskType "anal"): throttle, then AJ-05..AJ-28. */
static int explain_analysis(json_t *root, const char *file, int as_json)
{
	char err[1024] = "";
	struct arena a;
	arena_init(&a, 512u << 20);
	struct sca_scenario sc;
	struct md_analysis res;
	int rc = sca_parse_scenario(root, &a, &sc, err, sizeof(err));
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: %s: %s\n", file, err);
		arena_free(&a);
		return 1;
	}
	rc = sca_run(&sc, &a, &res);
	if (rc != GB_OK)
		fprintf(stderr, "gridbroker: %s: %s\n", file, gb_strerror(rc));
	else if (as_json)
		print_json(rpa_decision_json(&res));
	else
		rpa_print_decision(stdout, &res);
	arena_free(&a);
	return rc == GB_OK ? 0 : 1;
}

int cli_explain_timeout(json_t *root, const char *file, int as_json)
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

int cli_explain_jobs(json_t *root, const char *file, int as_json)
{
	if (sca_is_analysis_scenario(root))
		return explain_analysis(root, file, as_json);
	char err[1024] = "";
	struct arena a;
	arena_init(&a, 512u << 20);
	struct scj_scenario sc;
	struct md_jobs res;
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

/* ---- events ----------------------------------------------------------- */

void cli_print_jobs_event(const char *routing_key, json_t *j)
{
	json_t *task = j ? json_object_get(j, "taskID") : NULL;
	json_t *dec = j ? json_object_get(j, "decisionId") : NULL;
	printf("%-14s task %-8lld", routing_key,
	       task ? (long long)json_integer_value(task) : 0LL);
	json_t *as = j ? json_object_get(j, "assignments") : NULL;
	size_t total = 0;
	for (size_t i = 0; i < json_array_size(as); i++)
		total += json_array_size(
			json_object_get(json_array_get(as, i), "jobIDs"));
	if (json_array_size(as) > 0) {
		printf(" %zu jobs ->", total);
		for (size_t i = 0; i < json_array_size(as); i++) {
			json_t *q = json_array_get(as, i);
			printf("%s %s x%zu", i ? "," : "",
			       json_string_value(json_object_get(q, "queue")),
			       json_array_size(json_object_get(q, "jobIDs")));
		}
	}
	size_t un = json_array_size(j ? json_object_get(j, "unassigned") : NULL);
	if (un)
		printf("; %zu unassigned", un);
	json_t *retry = j ? json_object_get(j, "retryAfter") : NULL;
	if (retry && json_is_integer(retry))
		printf(" %lld jobs, retry in %lld s",
		       (long long)json_integer_value(json_object_get(j, "njobs")),
		       (long long)json_integer_value(retry));
	if (dec)
		printf("  (decision %lld)", (long long)json_integer_value(dec));
	printf("\n");
	/* Why the other queues were skipped: the stages that cut, in the
	** PanDA summary format, with the rule of each stage. */
	json_t *stages = j ? json_object_get(j, "stages") : NULL;
	for (size_t i = 0; i < json_array_size(stages); i++) {
		json_t *st = json_array_get(stages, i);
		struct dec_stage s = {
			.name = json_string_value(json_object_get(st, "name")),
			.rule = json_string_value(json_object_get(st, "rule")),
			.in = (int)json_integer_value(json_object_get(st, "in")),
			.out = (int)json_integer_value(json_object_get(st, "out")),
		};
		if (s.name == NULL || s.in == s.out)
			continue;
		char line[160];
		dec_stage_format(&s, line, sizeof(line));
		printf("    %s (%s)\n", line, s.rule ? s.rule : "-");
	}
}
