/*
** itc_acl.c — RabbitMQ keeps each kind of client to its own requests
** (issue 20, point 5): the accounts scripts/services provisions
** (gridbroker-pilot, -panda, -dirac, -events; configs <name>-KIND.conf
** next to $GB_CONFIG) publish with publisher confirms, and
**   - a routing key outside the account's topic permission on
**     gridbroker.requests (a pilot's task.broker, a DIRAC producer's
**     task.broker, a PanDA producer's job.submit, ...) and an exchange
**     outside its write permission (gridbroker.events) close the channel
**     with ACCESS_REFUSED (403) instead of a confirm;
**   - a user_id property naming another account closes it with
**     PRECONDITION_FAILED (406): RabbitMQ's validated user-id, what lets
**     the workers trust the user_id of a pilot.match (it_pilot_grants
**     shows the worker's side);
**   - the keys each account may publish are confirmed. Those messages
**     carry a 1 ms TTL, so the broker dead-letters them (reason expired)
**     before any worker could take them for requests.
** Each case opens its own connection; no worker and no database needed
** (the application account declares the topology first).
*/
#include "../unit/gbtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include <amqp.h>

#include "amqp/amqp.h"
#include "amqp/amqp_internal.h"
#include "base/config.h"
#include "gb_error.h"

struct acl_case {
	const char *kind;     /* the account: config <base>-<kind>.conf */
	const char *exchange;
	const char *key;
	const char *user_id;  /* NULL: the account's own */
	int code;             /* 0: confirmed; else the channel.close code */
	const char *text;     /* a piece of the close text, or NULL */
};

static const struct acl_case cases[] = {
	/* the pilot: pilot.match only */
	{"pilot", AMQ_EX_REQUESTS, "pilot.match", NULL, 0, NULL},
	{"pilot", AMQ_EX_REQUESTS, "task.broker", NULL, 403,
	 "ACCESS_REFUSED - access to topic 'task.broker' in exchange 'gridbroker.requests'"},
	{"pilot", AMQ_EX_REQUESTS, "job.broker", NULL, 403, "ACCESS_REFUSED"},
	{"pilot", AMQ_EX_REQUESTS, "job.submit", NULL, 403, "ACCESS_REFUSED"},
	{"pilot", AMQ_EX_REQUESTS, "job.status", NULL, 403, "ACCESS_REFUSED"},
	{"pilot", AMQ_EX_EVENTS, "pilot.matched", NULL, 403,
	 "ACCESS_REFUSED - access to exchange 'gridbroker.events'"},
	{"pilot", AMQ_EX_DLX, "pilot.match", NULL, 403, "ACCESS_REFUSED"},
	/* validated user-id: another account's name is refused */
	{"pilot", AMQ_EX_REQUESTS, "pilot.match", "gridbroker", 406,
	 "PRECONDITION_FAILED - user_id property set to 'gridbroker'"},
	{"pilot", AMQ_EX_REQUESTS, "pilot.match", "gridbroker-dirac", 406,
	 "PRECONDITION_FAILED"},
	/* a PanDA producer: task.broker, job.broker, job.status */
	{"panda", AMQ_EX_REQUESTS, "task.broker", NULL, 0, NULL},
	{"panda", AMQ_EX_REQUESTS, "job.broker", NULL, 0, NULL},
	{"panda", AMQ_EX_REQUESTS, "job.status", NULL, 0, NULL},
	{"panda", AMQ_EX_REQUESTS, "job.submit", NULL, 403, "ACCESS_REFUSED"},
	{"panda", AMQ_EX_REQUESTS, "pilot.match", NULL, 403, "ACCESS_REFUSED"},
	/* a DIRAC producer: job.submit, job.status */
	{"dirac", AMQ_EX_REQUESTS, "job.submit", NULL, 0, NULL},
	{"dirac", AMQ_EX_REQUESTS, "job.status", NULL, 0, NULL},
	{"dirac", AMQ_EX_REQUESTS, "task.broker", NULL, 403,
	 "ACCESS_REFUSED - access to topic 'task.broker' in exchange 'gridbroker.requests'"},
	{"dirac", AMQ_EX_REQUESTS, "job.broker", NULL, 403, "ACCESS_REFUSED"},
	{"dirac", AMQ_EX_REQUESTS, "pilot.match", NULL, 403, "ACCESS_REFUSED"},
	/* a subscriber publishes nothing */
	{"events", AMQ_EX_REQUESTS, "job.status", NULL, 403, "ACCESS_REFUSED"},
	{"events", AMQ_EX_EVENTS, "task.assigned", NULL, 403, "ACCESS_REFUSED"},
};

/* The account config of `kind`, loaded (its password read). */
static void load_kind(const char *kind, struct gb_config *out)
{
	const char *base = getenv("GB_CONFIG");
	if (base == NULL || base[0] == '\0')
		fail_msg("set GB_CONFIG (run through run-itc.sh)");
	char path[4096];
	size_t n = strlen(base);
	if (n > 5 && strcmp(base + n - 5, ".conf") == 0)
		n -= 5;
	snprintf(path, sizeof(path), "%.*s-%s.conf", (int)n, base, kind);
	char err[4096] = "";
	if (cfg_load(path, out, err, sizeof(err)) != GB_OK)
		fail_msg("%s (written by scripts/services): %s", path, err);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
** Publish one message as in case `c` on a confirm channel and wait for
** the broker's answer: 0 for an ack, -1 for a nack, else the reply code
** of the channel (or connection) close, with its text in text[n].
*/
static int publish_one(const struct acl_case *c, int i, char *text,
		       size_t n)
{
	struct gb_config cfg;
	load_kind(c->kind, &cfg);
	amqp_connection_state_t conn = NULL;
	char err[1024] = "";
	if (amq_connect(&cfg, 0, "itc_acl", &conn, err, sizeof(err)) != GB_OK)
		fail_msg("%s: connect as %s: %s", c->kind, cfg.amqp_user, err);
	if (amq_channel_setup(conn, 1, 1, err, sizeof(err)) != GB_OK)
		fail_msg("%s: channel: %s", c->kind, err);
	char msgid[96];
	snprintf(msgid, sizeof(msgid), "itc-acl-%ld-%d", (long)time(NULL), i);
	struct amq_props props = {
		.message_id = msgid,
		.content_type = "application/msgpack",
		.user_id = c->user_id ? c->user_id : cfg.amqp_user,
		/* never a request for a worker: dead-lettered as expired */
		.expiration = "1",
	};
	amqp_basic_properties_t bp;
	amqp_table_entry_t ents[4];
	assert_int_equal(amq_props_export(&props, 0, &bp, ents, 4), GB_OK);
	int st = amqp_basic_publish(conn, 1, amqp_cstring_bytes(c->exchange),
				    amqp_cstring_bytes(c->key), 0, 0, &bp,
				    amqp_cstring_bytes("itc-acl"));
	assert_int_equal(st, AMQP_STATUS_OK);
	int code = -2;
	text[0] = '\0';
	double deadline = now_s() + 10;
	while (code == -2 && now_s() < deadline) {
		struct timeval tv = {1, 0};
		amqp_frame_t f;
		st = amqp_simple_wait_frame_noblock(conn, &f, &tv);
		if (st == AMQP_STATUS_TIMEOUT)
			continue;
		if (st != AMQP_STATUS_OK)
			fail_msg("%s %s: the connection failed: %s", c->kind,
				 c->key, amqp_error_string2(st));
		if (f.frame_type != AMQP_FRAME_METHOD)
			continue;
		switch (f.payload.method.id) {
		case AMQP_BASIC_ACK_METHOD:
			code = 0;
			break;
		case AMQP_BASIC_NACK_METHOD:
			code = -1;
			break;
		case AMQP_CHANNEL_CLOSE_METHOD: {
			const amqp_channel_close_t *m =
				f.payload.method.decoded;
			code = m->reply_code;
			snprintf(text, n, "%.*s", (int)m->reply_text.len,
				 (const char *)m->reply_text.bytes);
			amqp_channel_close_ok_t ok = {0};
			amqp_send_method(conn, 1, AMQP_CHANNEL_CLOSE_OK_METHOD,
					 &ok);
			break;
		}
		case AMQP_CONNECTION_CLOSE_METHOD: {
			const amqp_connection_close_t *m =
				f.payload.method.decoded;
			code = m->reply_code;
			snprintf(text, n, "connection: %.*s",
				 (int)m->reply_text.len,
				 (const char *)m->reply_text.bytes);
			break;
		}
		default:
			break;
		}
	}
	if (code == -2)
		fail_msg("%s %s: no confirm and no close within 10 s", c->kind,
			 c->key);
	amqp_connection_close(conn, AMQP_REPLY_SUCCESS);
	amqp_destroy_connection(conn);
	return code;
}

/* The exchanges and queues exist on a fresh broker too: the application
** account declares them (the client accounts may not). */
static void declare_topology(void)
{
	struct gb_config app;
	char err[4096] = "";
	const char *path = getenv("GB_CONFIG");
	if (path == NULL || cfg_load(path, &app, err, sizeof(err)) != GB_OK)
		fail_msg("GB_CONFIG: %s", err);
	struct amq_sync *s = amq_sync_open(&app, err, sizeof(err));
	if (s == NULL)
		fail_msg("declaring the topology as %s: %s", app.amqp_user, err);
	amq_sync_close(s);
}

static void test_accounts_by_routing_key(void **state)
{
	(void)state;
	declare_topology();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct acl_case *c = &cases[i];
		char text[512];
		int code = publish_one(c, (int)i, text, sizeof(text));
		printf("%-6s %-20s %-14s user_id %-17s -> %s%s\n", c->kind,
		       c->exchange, c->key, c->user_id ? c->user_id : "(own)",
		       code == 0 ? "confirmed" : "refused: ",
		       code == 0 ? "" : text);
		if (code != c->code)
			fail_msg("%s publishing %s to %s (user_id %s): got %d "
				 "(%s), want %d",
				 c->kind, c->key, c->exchange,
				 c->user_id ? c->user_id : "own", code, text,
				 c->code);
		if (c->text && strstr(text, c->text) == NULL)
			fail_msg("%s %s: \"%s\" lacks \"%s\"", c->kind, c->key,
				 text, c->text);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accounts_by_routing_key),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
