/*
** cmd_events.c — `gridbroker events`: subscribe to gridbroker.events and
** print the events as they arrive, one line each with the numbers an
** operator looks for (task.*, jobs.*, the timeout and rebrokerage events),
** or as JSON lines with --json.
*/
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "codec/codec.h"
#include "decision.h"
#include "gb_error.h"


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

/* One-line summary of a jobs.assigned / jobs.pending event body. */
static void print_jobs_event(const char *routing_key, json_t *j)
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
		cli_print_json(line, JSON_COMPACT, "{}");
	} else {
		const char *rk = m->routing_key ? m->routing_key : "?";
		if (print_lifecycle_event(rk, j)) {
			json_decref(j);
			return;
		}
		if (strncmp(rk, "jobs.", 5) == 0) {
			print_jobs_event(rk, j);
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
	const struct cli_opt opts[] = {
		CLI_READ("--count", "-n", cli_opt_long, &count),
		CLI_READ("--timeout", "-t", cli_opt_long, &timeout_s),
		CLI_FLAG("--json", NULL, &as_json),
		CLI_OPT_END,
	};
	/* the routing keys, with room for the NULL that ends them */
	int nk = cli_parse_opts(argc, argv, opts, keys, 31, 0);
	if (nk < 0)
		return -nk;
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

/* clang-format off */
const struct cli_cmd_entry cli_cmd_events = {"events", "[-n COUNT] [-t SECONDS] [--json] [ROUTING-KEY ...]", "subscribe to gridbroker.events and print events as they arrive (default key: #)", 1, cmd_events, NULL};
/* clang-format on */
