/*
** cli_main.c — gridbroker, the command-line tool.
**
** Commands are rows of a const table (tmux's cmd_table[] shape): name,
** usage, help and the function that runs them. Everything but `explain`
** talks to the configured servers; `explain` runs the engine offline on a
** scenario file, through the same code the worker uses.
*/
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "amqp/amqp.h"
#include "cli/cli.h"
#include "base/clock.h"
#include "codec/codec.h"
#include "base/config.h"
#include "explain/dirac_json.h"
#include "gb_error.h"
#include "base/log.h"
#include "explain/scenario.h"
#include "report/report.h"
#include "explain/scenario_match.h"
#include "store/store.h"

struct cli_cmd {
	const char *name;  /* "db migrate" */
	const char *usage; /* arguments after the name */
	const char *help;
	int needs_config;
	int (*exec)(struct cli *cli, int argc, char **argv);
};

static int load_config(struct cli *cli)
{
	char err[4096] = "";
	if (cfg_load(cli->cfg_path, &cli->cfg, err, sizeof(err)) != GB_OK) {
		fprintf(stderr, "gridbroker: %s: invalid configuration:\n%s\n",
			cli->cfg_path, err);
		return 1;
	}
	cli->cfg_loaded = 1;
	return 0;
}

struct st_db *cli_open_db(struct cli *cli)
{
	struct st_db *db = NULL;
	char err[512] = "";
	if (st_open(&cli->cfg, &db, err, sizeof(err)) != GB_OK) {
		fprintf(stderr, "gridbroker: database: %s\n", err);
		return NULL;
	}
	return db;
}

struct amq_sync *cli_open_amqp(struct cli *cli)
{
	char err[512] = "";
	struct amq_sync *s = amq_sync_open(&cli->cfg, err, sizeof(err));
	if (s == NULL)
		fprintf(stderr, "gridbroker: AMQP: %s\n", err);
	return s;
}

void cli_message_id(char *buf, size_t n, const char *kind, long long id)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(buf, n, "%s-%lld-%lld%09ld-%ld", kind, id,
		 (long long)ts.tv_sec, ts.tv_nsec, (long)getpid());
}

/* ---- db ---------------------------------------------------------------- */

static int cmd_db_migrate(struct cli *cli, int argc, char **argv)
{
	(void)argv;
	if (argc != 0)
		return 2;
	struct st_db *db = cli_open_db(cli);
	if (db == NULL)
		return 1;
	int rc = st_migrate(db, GB_SCHEMA_DIR, stdout);
	int v = 0;
	if (rc == GB_OK)
		rc = st_schema_version(db, &v);
	if (rc != GB_OK)
		fprintf(stderr, "gridbroker: migrate: %s: %s\n",
			gb_strerror(rc), st_error(db));
	else
		printf("schema at version %d\n", v);
	st_close(db);
	return rc == GB_OK ? 0 : 1;
}

static int cmd_db_status(struct cli *cli, int argc, char **argv)
{
	(void)argv;
	if (argc != 0)
		return 2;
	struct st_db *db = cli_open_db(cli);
	if (db == NULL)
		return 1;
	int v = 0;
	int rc = st_schema_version(db, &v);
	if (rc == GB_OK)
		printf("database reachable, schema version %d\n", v);
	else
		fprintf(stderr, "gridbroker: %s\n", st_error(db));
	st_close(db);
	return rc == GB_OK ? 0 : 1;
}

/* ---- grid -------------------------------------------------------------- */

static int cmd_grid_load(struct cli *cli, int argc, char **argv)
{
	if (argc != 1)
		return 2;
	char err[1024] = "";
	json_t *root = scn_read_file(argv[0], err, sizeof(err));
	if (root == NULL) {
		fprintf(stderr, "gridbroker: %s\n", err);
		return 1;
	}
	struct arena a;
	arena_init(&a, 256u << 20);
	struct tb_nucleus *nuclei = NULL;
	size_t n = 0;
	int rc = GB_OK;
	/* A grid file may hold only the job-brokerage or the DIRAC part. */
	int has_nuclei = json_object_get(root, "nuclei") != NULL;
	if (has_nuclei || (!cli_grid_has_jobs(root) && !dj_has_config(root)))
		rc = scn_parse_nuclei(json_object_get(root, "nuclei"), "nuclei",
				      &a, &nuclei, &n, err, sizeof(err));
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: %s: %s\n", argv[0], err);
	} else {
		struct st_db *db = cli_open_db(cli);
		/* The workers' clock, test offset included: ages in the file
		** are relative to the "now" the brokerage will compare with. */
		clk_set_offset_file(cli->cfg.clock_offset_file);
		long long now = clk_now();
		if (db == NULL) {
			rc = GB_EDBGONE;
		} else {
			if (has_nuclei) {
				rc = st_grid_load_nuclei(db, nuclei, n);
				if (rc != GB_OK)
					fprintf(stderr, "gridbroker: grid load: "
						"%s\n", st_error(db));
				else
					printf("loaded %zu nuclei from %s\n",
					       n, argv[0]);
			}
			if (rc == GB_OK && cli_grid_has_jobs(root) &&
			    cli_grid_load_jobs(db, root, argv[0], now) != 0)
				rc = GB_EINVAL;
			if (rc == GB_OK && json_object_get(root, "analysis") &&
			    cli_grid_load_analysis(db, root, argv[0], now) != 0)
				rc = GB_EINVAL;
			if (rc == GB_OK && dj_has_config(root) &&
			    cli_grid_load_dirac(db, root, argv[0], now) != 0)
				rc = GB_EINVAL;
			st_close(db);
		}
	}
	arena_free(&a);
	json_decref(root);
	return rc == GB_OK ? 0 : 1;
}

/* ---- task submit ----------------------------------------------------------- */

static int submit_one(struct amq_sync *s, json_t *obj, const char *path,
		      size_t idx)
{
	char err[512] = "", field[64];
	snprintf(field, sizeof(field), "%s[%zu]", path, idx);
	struct arena a;
	arena_init(&a, 64u << 20);
	struct tb_task t;
	int rc = scn_parse_task(obj, field, &a, &t, err, sizeof(err));
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: %s\n", err);
		arena_free(&a);
		return 1;
	}
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	rc = cod_encode_task(&t, &sb);
	char msgid[128];
	cli_message_id(msgid, sizeof(msgid), "task", t.task_id);
	struct amq_props props = {
		.message_id = msgid,
		.type = "task.broker",
		.content_type = "application/msgpack",
		.persistent = 1,
	};
	if (rc == GB_OK)
		rc = amq_sync_publish(s, AMQ_EX_REQUESTS, "task.broker", &props,
				      sb.data, sb.size, 10000);
	if (rc == GB_OK)
		printf("submitted task %lld (message %s)\n", t.task_id, msgid);
	else
		fprintf(stderr, "gridbroker: submit task %lld: %s\n",
			t.task_id, gb_strerror(rc));
	msgpack_sbuffer_destroy(&sb);
	arena_free(&a);
	return rc == GB_OK ? 0 : 1;
}

static int cmd_task_submit(struct cli *cli, int argc, char **argv)
{
	if (argc != 1)
		return 2;
	char err[1024] = "";
	json_t *root = scn_read_file(argv[0], err, sizeof(err));
	if (root == NULL) {
		fprintf(stderr, "gridbroker: %s\n", err);
		return 1;
	}
	/* A file holds one task object, an array of them, or a scenario
	** with a "task" member. */
	json_t *list = root;
	if (json_is_object(root) && json_object_get(root, "task"))
		list = json_object_get(root, "task");
	struct amq_sync *s = cli_open_amqp(cli);
	int bad = 0;
	if (s == NULL) {
		bad = 1;
	} else if (json_is_array(list)) {
		for (size_t i = 0; i < json_array_size(list); i++)
			bad |= submit_one(s, json_array_get(list, i), "tasks", i);
	} else {
		bad = submit_one(s, list, "task", 0);
	}
	if (s)
		amq_sync_close(s);
	json_decref(root);
	return bad;
}

/* ---- publish (raw) ------------------------------------------------------ */

/*
** Publish a file's bytes unchanged as a request: for replaying a message
** taken from the dead-letter queue, and for testing what the worker does
** with bytes no encoder of ours would produce.
*/
static int cmd_publish(struct cli *cli, int argc, char **argv)
{
	const char *key = NULL, *file = NULL, *msgid = NULL;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--message-id") == 0 && i + 1 < argc)
			msgid = argv[++i];
		else if (key == NULL)
			key = argv[i];
		else if (file == NULL)
			file = argv[i];
		else
			return 2;
	}
	if (key == NULL || file == NULL)
		return 2;
	FILE *f = strcmp(file, "-") == 0 ? stdin : fopen(file, "rb");
	if (f == NULL) {
		fprintf(stderr, "gridbroker: %s: %s\n", file, strerror(errno));
		return 1;
	}
	size_t cap = (size_t)cli->cfg.max_message_bytes * 2, len = 0;
	unsigned char *buf = malloc(cap + 1);
	if (buf)
		len = fread(buf, 1, cap + 1, f);
	if (f != stdin)
		fclose(f);
	if (buf == NULL || len > cap) {
		fprintf(stderr, "gridbroker: %s: larger than %zu bytes\n", file,
			cap);
		free(buf);
		return 1;
	}
	struct amq_sync *s = cli_open_amqp(cli);
	int rc = GB_EAMQPGONE;
	if (s) {
		struct amq_props props = {
			.message_id = msgid,
			.type = key,
			.content_type = "application/msgpack",
			.persistent = 1,
		};
		rc = amq_sync_publish(s, AMQ_EX_REQUESTS, key, &props, buf,
				      len, 10000);
		if (rc == GB_OK)
			printf("published %zu bytes to %s\n", len, key);
		else
			fprintf(stderr, "gridbroker: publish: %s\n",
				gb_strerror(rc));
		amq_sync_close(s);
	}
	free(buf);
	return rc == GB_OK ? 0 : 1;
}

/* ---- events ------------------------------------------------------------ */

/* A string member or "-"; a number member as %g or "-". */
static const char *jstr(json_t *j, const char *k)
{
	json_t *v = j ? json_object_get(j, k) : NULL;
	return json_is_string(v) ? json_string_value(v) : "-";
}

static double jnum(json_t *j, const char *k)
{
	json_t *v = j ? json_object_get(j, k) : NULL;
	return json_is_number(v) ? json_number_value(v) : 0;
}

/* task.throttled, job.timeout and job.rebrokered as one line each with
** their numbers. Returns 1 when `rk` is one of them. */
static int print_lifecycle_event(const char *rk, json_t *j)
{
	if (strcmp(rk, "task.throttled") == 0) {
		printf("%-14s task %-8.0f %s (%s, class %s): %s %s %g > %g, "
		       "retry at %s  (decision %.0f)\n",
		       rk, jnum(j, "taskID"), jstr(j, "userName"),
		       jstr(j, "gshare"), jstr(j, "taskClass"),
		       jstr(j, "rule"), jstr(j, "code"), jnum(j, "value"),
		       jnum(j, "limit"), jstr(j, "retryAt"),
		       jnum(j, "decisionId"));
		return 1;
	}
	if (strcmp(rk, "job.timeout") == 0) {
		printf("%-14s job %-11.0f %s at %s: %s %s %.0f s > %.0f s -> %s "
		       "(%s)  (decision %.0f)\n",
		       rk, jnum(j, "jobID"), jstr(j, "status"), jstr(j, "queue"),
		       jstr(j, "rule"), jstr(j, "what"), jnum(j, "age"),
		       jnum(j, "limit"), jstr(j, "action"),
		       jstr(j, "newStatus"), jnum(j, "decisionId"));
		return 1;
	}
	if (strcmp(rk, "job.rebrokered") == 0) {
		printf("%-14s job %-11.0f from %s (%s), attempt %.0f, placed "
		       "again by request %s  (decision %.0f)\n",
		       rk, jnum(j, "jobID"), jstr(j, "fromQueue"),
		       jstr(j, "rule"), jnum(j, "attempt"),
		       jstr(j, "jobRequestId"), jnum(j, "decisionId"));
		return 1;
	}
	return 0;
}

static void print_event(const struct amq_message *m, int as_json)
{
	json_t *j = cod_to_json(m->body, m->len);
	if (as_json) {
		json_t *line = json_object();
		json_object_set_new(line, "routingKey",
				    json_string(m->routing_key ? m->routing_key : ""));
		json_object_set_new(line, "messageId",
				    json_string(m->message_id ? m->message_id : ""));
		json_object_set_new(line, "body", j ? j : json_null());
		char *s = json_dumps(line, JSON_COMPACT);
		printf("%s\n", s ? s : "{}");
		free(s);
		json_decref(line);
	} else {
		const char *rk = m->routing_key ? m->routing_key : "?";
		if (print_lifecycle_event(rk, j)) {
			json_decref(j);
			return;
		}
		if (strncmp(rk, "jobs.", 5) == 0) {
			cli_print_jobs_event(rk, j);
			json_decref(j);
			return;
		}
		json_t *task = j ? json_object_get(j, "taskID") : NULL;
		json_t *nuc = j ? json_object_get(j, "nucleus") : NULL;
		json_t *retry = j ? json_object_get(j, "retryAfter") : NULL;
		json_t *dec = j ? json_object_get(j, "decisionId") : NULL;
		printf("%-14s task %-8lld", rk,
		       task ? (long long)json_integer_value(task) : 0LL);
		if (nuc && json_is_string(nuc))
			printf(" -> %-24s", json_string_value(nuc));
		if (retry && json_is_integer(retry))
			printf(" retry in %lld s", (long long)json_integer_value(retry));
		if (dec)
			printf("  (decision %lld)", (long long)json_integer_value(dec));
		json_t *reasons = j ? json_object_get(j, "reasons") : NULL;
		if (reasons && json_array_size(reasons) > 0 && !nuc) {
			printf("  reasons:");
			for (size_t i = 0; i < json_array_size(reasons) && i < 4; i++) {
				json_t *r = json_array_get(reasons, i);
				printf(" %s/%s x%lld",
				       json_string_value(json_object_get(r, "rule")),
				       json_string_value(json_object_get(r, "code")),
				       (long long)json_integer_value(json_object_get(r, "count")));
			}
		}
		printf("\n");
		json_decref(j);
	}
	fflush(stdout);
}

static int cmd_events(struct cli *cli, int argc, char **argv)
{
	long count = 0, timeout_s = 0;
	int as_json = 0;
	const char *keys[32];
	int nk = 0;
	for (int i = 0; i < argc; i++) {
		if ((strcmp(argv[i], "-n") == 0 ||
		     strcmp(argv[i], "--count") == 0) && i + 1 < argc)
			count = strtol(argv[++i], NULL, 10);
		else if ((strcmp(argv[i], "-t") == 0 ||
			  strcmp(argv[i], "--timeout") == 0) && i + 1 < argc)
			timeout_s = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--json") == 0)
			as_json = 1;
		else if (argv[i][0] == '-' || nk >= 31)
			return 2;
		else
			keys[nk++] = argv[i];
	}
	if (nk == 0)
		keys[nk++] = "#";
	keys[nk] = NULL;
	struct amq_sync *s = cli_open_amqp(cli);
	if (s == NULL)
		return 1;
	int rc = amq_sync_subscribe(s, AMQ_EX_EVENTS, keys);
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: subscribe: %s\n", gb_strerror(rc));
		amq_sync_close(s);
		return 1;
	}
	/* Tell a script waiting on us that the queue is bound. */
	fprintf(stderr, "gridbroker: subscribed to %s\n", AMQ_EX_EVENTS);
	long seen = 0;
	time_t deadline = timeout_s > 0 ? time(NULL) + timeout_s : 0;
	while (count == 0 || seen < count) {
		int wait_ms = 1000;
		if (deadline && time(NULL) >= deadline)
			break;
		struct amq_message m;
		rc = amq_sync_next(s, &m, wait_ms);
		if (rc == GB_ETIMEOUT)
			continue;
		if (rc != GB_OK) {
			fprintf(stderr, "gridbroker: events: %s\n", gb_strerror(rc));
			break;
		}
		print_event(&m, as_json);
		amq_message_free(&m);
		seen++;
	}
	amq_sync_close(s);
	if (count > 0 && seen < count) {
		fprintf(stderr, "gridbroker: %ld of %ld events before the "
				"timeout\n", seen, count);
		return 1;
	}
	return rc == GB_OK || rc == GB_ETIMEOUT ? 0 : 1;
}

/* ---- dlq --------------------------------------------------------------- */

static int cmd_dlq(struct cli *cli, int argc, char **argv)
{
	int remove = 0, as_json = 0;
	long max = 100;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--remove") == 0)
			remove = 1;
		else if (strcmp(argv[i], "--json") == 0)
			as_json = 1;
		else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
			max = strtol(argv[++i], NULL, 10);
		else
			return 2;
	}
	struct amq_sync *s = cli_open_amqp(cli);
	if (s == NULL)
		return 1;
	long n = 0;
	uint64_t tags[1024];
	size_t ntags = 0;
	while (n < max) {
		struct amq_message m;
		int rc = amq_sync_get(s, AMQ_Q_DEAD, &m);
		if (rc != GB_OK)
			break;
		if (as_json) {
			json_t *o = json_pack("{s:s, s:s, s:s, s:i}", "routingKey",
					      m.routing_key ? m.routing_key : "",
					      "messageId",
					      m.message_id ? m.message_id : "",
					      "error",
					      m.error_header ? m.error_header
					      : m.death_reason ? m.death_reason : "",
					      "bytes", (json_int_t)m.len);
			char *txt = json_dumps(o, JSON_COMPACT);
			printf("%s\n", txt ? txt : "{}");
			free(txt);
			json_decref(o);
		} else {
			char why[300];
			if (m.error_header)
				snprintf(why, sizeof(why), "%s", m.error_header);
			else if (m.death_reason)
				snprintf(why, sizeof(why),
					 "dead-lettered by the broker: %s",
					 m.death_reason);
			else
				snprintf(why, sizeof(why),
					 "(no x-gridbroker-error header)");
			printf("%-14s %-40s %s\n",
			       m.routing_key ? m.routing_key : "?",
			       m.message_id ? m.message_id : "(no id)", why);
		}
		/* Hold every message until the end so basic.get walks the
		** queue instead of seeing the same requeued head again. */
		if (ntags < sizeof(tags) / sizeof(tags[0]))
			tags[ntags++] = m.tag;
		amq_message_free(&m);
		n++;
	}
	for (size_t i = 0; i < ntags; i++)
		amq_sync_settle(s, tags[i], remove);
	if (n == 0)
		printf("dead-letter queue %s is empty\n", AMQ_Q_DEAD);
	amq_sync_close(s);
	return 0;
}

/* ---- explain ----------------------------------------------------------- */

static int cmd_explain(struct cli *cli, int argc, char **argv)
{
	(void)cli;
	int as_json = 0;
	const char *file = NULL;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			as_json = 1;
		else if (file == NULL)
			file = argv[i];
		else
			return 2;
	}
	if (file == NULL)
		return 2;
	char err[1024] = "";
	json_t *root = scn_read_file(file, err, sizeof(err));
	if (root == NULL) {
		fprintf(stderr, "gridbroker: %s\n", err);
		return 1;
	}
	/* "kind" first: a timeout scenario also has "queues" (an object). */
	if (json_is_object(root) && json_object_get(root, "kind")) {
		int xrc = cli_explain_timeout(root, file, as_json);
		json_decref(root);
		return xrc;
	}
	if (json_is_object(root) && json_object_get(root, "queues")) {
		int xrc = cli_explain_jobs(root, file, as_json);
		json_decref(root);
		return xrc;
	}
	if (scm_is_match_scenario(root)) {
		int xrc = cli_explain_match(root, file, as_json);
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
		json_t *j = rpt_decision_json(&d);
		char *txt = json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
		printf("%s\n", txt ? txt : "{}");
		free(txt);
		json_decref(j);
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

/* ---- table ------------------------------------------------------------- */

static int cmd_help(struct cli *cli, int argc, char **argv);
static int cmd_version(struct cli *cli, int argc, char **argv);

/* clang-format off */
static const struct cli_cmd cli_cmds[] = {
	{"db migrate", "", "apply the schema migrations in order (re-running is a no-op) and seed the parameter defaults", 1, cmd_db_migrate},
	{"db status", "", "check the database connection and print the schema version", 1, cmd_db_status},
	{"grid load", "FILE.json", "load a grid file: nuclei, storages, replicas (task brokerage); queues, sw, links, fileReplicas (job brokerage); analysis (owners, shares, task classes); groups, shareCorrections, cpuSegments (DIRAC task queues)", 1, cmd_grid_load},
	{"job submit", "FILE.json", "publish job.broker requests for a job request object (a task and its jobs), an array of them, or a job scenario's task", 1, cli_cmd_job_submit},
	{"job status", "JOBID STATUS [--site S] [--time T] | --panda JOBID STATUS [--sub-status S] [--time T]", "publish job.status for a DIRAC job (waiting, matched, running, stalled, completing, done, failed, killed), or with --panda for a PanDA job (defined .. cancelled, started, heartbeat); T is unix seconds or RFC 3339, default now (the worker clock's, with its test offset, for --panda)", 1, cli_cmd_job_status},
	{"tq submit", "FILE.json", "publish job.submit requests for a DIRAC job object, an array of them, or {\"jobs\": [...]} (chunks of at most 5000 jobs per message)", 1, cli_cmd_tq_submit},
	{"tq list", "[--json]", "list the DIRAC task queues: owner, group, setup, CPU segment, waiting jobs, priority, requirements", 1, cli_cmd_tq_list},
	{"pilot match", "FILE.json | --site S --setup X --cpu-time N [--platform P] [--grid-ce C] [--pilot-type T] [--owner-group G [--owner-dn D]] [--pilot-id ID] [--timeout-ms N] [--json]", "ask for a job as a pilot (pilot.match RPC) and print the matched job or why none (TQ-10); a file holds a pilot, an array, or {\"pilots\": [...]}, each sent in turn", 1, cli_cmd_pilot_match},
	{"task submit", "FILE.json", "publish task.broker requests for a task object, an array of them, or a scenario's task", 1, cmd_task_submit},
	{"events", "[-n COUNT] [-t SECONDS] [--json] [ROUTING-KEY ...]", "subscribe to gridbroker.events and print events as they arrive (default key: #)", 1, cmd_events},
	{"publish", "ROUTING-KEY FILE|- [--message-id ID]", "publish a file's bytes unchanged as a request (replay a dead letter, test bad input)", 1, cmd_publish},
	{"dlq", "[-n COUNT] [--remove] [--json]", "list dead-lettered requests with the field and problem that rejected them", 1, cmd_dlq},
	{"summary", "[--since T] [--top N] [--json]", "what the workers decided since T (unix seconds, RFC 3339, or a duration back from now such as 30m, 12h, 7d; default: everything): tasks by nucleus, jobs by queue, pilot outcomes and the most frequent rejection reasons", 1, cli_cmd_summary},
	{"explain", "FILE.json [--json]", "run the engine offline on a scenario file (task, job, analysis job, DIRAC match or \"kind\": \"timeout\" scenario): every candidate's weight or reasons, the stages and the decision (analysis: the throttle first; timeout: each job's rule or next check, TO-13 per rebro row)", 0, cmd_explain},
	{"why task", "TASKID [--json] [-a|--all]", "why the task went to its nucleus or is pending: the stored decision (latest, or every one with --all) with its stage summary, each rejected nucleus's rule and numbers, and the weights", 1, cli_cmd_why_task},
	{"why job", "JOBID [--json] [-a|--all]", "why a PanDA job is where it is: the job brokerage decision that placed it (or left it pending, or throttled its task) and its timeouts and rebrokerages; for a DIRAC job, the pilot decision that matched it", 1, cli_cmd_why_job},
	{"why pilot", "PILOTID|REQUESTID [--json] [-a|--all]", "why a pilot got its job or none (TQ-10): the task queues considered and what each filter left", 1, cli_cmd_why_pilot},
	{"help", "[COMMAND]", "show this list, or one command's usage", 0, cmd_help},
	{"version", "", "print the version", 0, cmd_version},
	{NULL, NULL, NULL, 0, NULL},
};
/* clang-format on */

/*
** Print `text` to `out` wrapped at 78 columns: the first line indented by
** `indent` spaces, the others by `hang`. Words longer than a line stay
** whole.
*/
static void print_wrapped(FILE *out, const char *text, int indent, int hang)
{
	const int width = 78;
	int col = 0;
	const char *p = text;
	while (*p) {
		while (*p == ' ')
			p++;
		size_t n = strcspn(p, " ");
		if (n == 0)
			break;
		if (col > 0 && col + 1 + (int)n > width) {
			fputc('\n', out);
			col = 0;
			indent = hang;
		}
		if (col == 0) {
			fprintf(out, "%*s", indent, "");
			col = indent;
		} else {
			fputc(' ', out);
			col++;
		}
		fwrite(p, 1, n, out);
		col += (int)n;
		p += n;
	}
	if (col > 0)
		fputc('\n', out);
}

/* One command as `help` and `COMMAND --help` show it, man-page style:
** the synopsis, then the description indented below it. */
static void print_command(FILE *out, const struct cli_cmd *c)
{
	char synopsis[512];
	snprintf(synopsis, sizeof(synopsis), "gridbroker %s%s%s", c->name,
		 c->usage[0] ? " " : "", c->usage);
	print_wrapped(out, synopsis, 2, 8);
	print_wrapped(out, c->help, 6, 6);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: gridbroker [-c FILE] COMMAND [ARGS]\n\n"
		     "  -c, --config FILE  configuration (default: $GB_CONFIG "
		     "or /etc/gridbroker/gridbroker.conf)\n"
		     "  -h, --help         this list; COMMAND --help or help "
		     "COMMAND: one command\n"
		     "  -V, --version      print the version\n\ncommands:\n");
	for (const struct cli_cmd *c = cli_cmds; c->name; c++)
		print_command(out, c);
}

/* Print the commands whose name is, or starts with, the words `want`
** ("db", "tq list"); return how many. */
static int print_matching(FILE *out, const char *want)
{
	size_t n = strlen(want);
	int found = 0;
	for (const struct cli_cmd *c = cli_cmds; c->name; c++) {
		if (strncmp(c->name, want, n) == 0 &&
		    (c->name[n] == '\0' || c->name[n] == ' ')) {
			print_command(out, c);
			found++;
		}
	}
	return found;
}

static int cmd_help(struct cli *cli, int argc, char **argv)
{
	(void)cli;
	if (argc == 0) {
		usage(stdout);
		return 0;
	}
	char want[64];
	snprintf(want, sizeof(want), "%s%s%s", argv[0], argc > 1 ? " " : "",
		 argc > 1 ? argv[1] : "");
	if (print_matching(stdout, want) == 0) {
		fprintf(stderr,
			"gridbroker: no command '%s' (gridbroker help lists "
			"them)\n",
			want);
		return 1;
	}
	return 0;
}

static int cmd_version(struct cli *cli, int argc, char **argv)
{
	(void)cli;
	(void)argc;
	(void)argv;
	printf("gridbroker %s\n", GB_VERSION);
	return 0;
}

/* Match "db migrate" against argv; return words consumed or 0. */
static int match(const struct cli_cmd *c, int argc, char **argv)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "%s", c->name);
	int used = 0;
	for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
		if (used >= argc || strcmp(argv[used], tok) != 0)
			return 0;
		used++;
	}
	return used;
}

int main(int argc, char **argv)
{
	static struct cli cli;
	const char *env = getenv("GB_CONFIG");
	snprintf(cli.cfg_path, sizeof(cli.cfg_path), "%s",
		 env && *env ? env : "/etc/gridbroker/gridbroker.conf");
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if ((strcmp(argv[i], "-c") == 0 ||
		     strcmp(argv[i], "--config") == 0) && i + 1 < argc) {
			snprintf(cli.cfg_path, sizeof(cli.cfg_path), "%s",
				 argv[++i]);
		} else if (strcmp(argv[i], "-h") == 0 ||
			   strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(argv[i], "-V") == 0 ||
			   strcmp(argv[i], "--version") == 0) {
			return cmd_version(&cli, 0, NULL);
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	log_init("gridbroker", LOG_LVL_WARN);
	for (const struct cli_cmd *c = cli_cmds; c->name; c++) {
		int used = match(c, argc - i, argv + i);
		if (used == 0)
			continue;
		char **rest = argv + i + used;
		int nrest = argc - i - used;
		for (int k = 0; k < nrest; k++) {
			if (strcmp(rest[k], "--help") == 0 ||
			    strcmp(rest[k], "-h") == 0) {
				print_command(stdout, c);
				return 0;
			}
		}
		if (c->needs_config && load_config(&cli) != 0)
			return 1;
		int rc = c->exec(&cli, nrest, rest);
		if (rc == 2)
			fprintf(stderr, "usage: gridbroker %s %s\n", c->name,
				c->usage);
		return rc;
	}
	/* A group word alone ("db", "tq") or with --help: its commands. */
	if (i + 1 >= argc || strcmp(argv[i + 1], "--help") == 0 ||
	    strcmp(argv[i + 1], "-h") == 0) {
		int help = i + 1 < argc;
		if (print_matching(help ? stdout : stderr, argv[i]) > 0) {
			if (!help)
				fprintf(stderr,
					"gridbroker %s: which one? (above)\n",
					argv[i]);
			return help ? 0 : 2;
		}
	}
	fprintf(stderr, "gridbroker: unknown command '%s'", argv[i]);
	if (i + 1 < argc)
		fprintf(stderr, " '%s'", argv[i + 1]);
	fprintf(stderr, " (gridbroker --help lists the commands)\n");
	return 2;
}
