/*
** gb_faultq.c — the fault suite's view of RabbitMQ: declare the durable
** queues that record what the workers send, and drain them into files the
** invariant checker (check.sh) compares with MariaDB.
**
**   gb_faultq declare -c CONFIG
**     gridbroker.faults.events  quorum queue bound to gridbroker.events with "#": every
**                    event, kept through broker restarts (an exclusive
**                    subscriber queue would vanish with the broker and the
**                    checker could not tell a lost event from a restart)
**     gridbroker.faults.replies quorum queue the load generator's pilots reply to
**     Both are purged, so a re-run starts empty.
**   gb_faultq drain -c CONFIG --queue Q --kind events|replies|dead --out F
**     Read and remove every message of Q, one tab-separated line each:
**       events:  message_id  routing_key  items  (pilot.matched and
**                pilot.nomatch: "jobID/request_id/decision,...", jobID 0
**                for a pilot that got nothing; "-" otherwise)
**       replies: request_id  matched  job_id  decision_id
**       dead:    message_id  routing_key  x-gridbroker-error or the broker's
**                death reason
**     Prints the count. The file is appended to and flushed before the
**     messages are acknowledged, so an interrupted drain can run again.
*/
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* rabbitmq-c's own <amqp.h>, not worker/amqp/amqp.h (same trick as
** worker/amqp/amqp_internal.h). */
#include <../include/amqp.h>
#include <amqp_tcp_socket.h>

#include "amqp/amqp.h"
#include "base/arena.h"
#include "codec/codec.h"
#include "codec/codec_tq.h"
#include "base/config.h"
#include "gb_error.h"

static int die_reply(amqp_rpc_reply_t r, const char *what)
{
	if (r.reply_type == AMQP_RESPONSE_NORMAL)
		return 0;
	if (r.reply_type == AMQP_RESPONSE_SERVER_EXCEPTION &&
	    r.reply.id == AMQP_CHANNEL_CLOSE_METHOD) {
		const amqp_channel_close_t *c = r.reply.decoded;
		fprintf(stderr, "gb_faultq: %s: %u %.*s\n", what,
			(unsigned)c->reply_code, (int)c->reply_text.len,
			(const char *)c->reply_text.bytes);
	} else {
		fprintf(stderr, "gb_faultq: %s failed (reply type %d)\n",
			what, (int)r.reply_type);
	}
	return 1;
}

/* A plain connection with channel 1 open, or NULL (reason on stderr). */
static amqp_connection_state_t open_raw(const struct gb_config *cfg)
{
	amqp_connection_state_t conn = amqp_new_connection();
	amqp_socket_t *sock = amqp_tcp_socket_new(conn);
	if (sock == NULL ||
	    amqp_socket_open(sock, cfg->amqp_host, cfg->amqp_port) !=
		    AMQP_STATUS_OK) {
		fprintf(stderr, "gb_faultq: connect %s:%d failed\n",
			cfg->amqp_host, cfg->amqp_port);
		amqp_destroy_connection(conn);
		return NULL;
	}
	if (die_reply(amqp_login(conn, cfg->amqp_vhost, 0, 131072, 0,
				 AMQP_SASL_METHOD_PLAIN, cfg->amqp_user,
				 cfg->amqp_password),
		      "login")) {
		amqp_destroy_connection(conn);
		return NULL;
	}
	amqp_channel_open(conn, 1);
	if (die_reply(amqp_get_rpc_reply(conn), "channel.open")) {
		amqp_destroy_connection(conn);
		return NULL;
	}
	return conn;
}

static int declare(const struct gb_config *cfg)
{
	amqp_connection_state_t conn = open_raw(cfg);
	if (conn == NULL)
		return 1;
	/* The events exchange may not exist yet on a fresh broker. */
	amqp_exchange_declare(conn, 1, amqp_cstring_bytes(AMQ_EX_EVENTS),
			      amqp_cstring_bytes("topic"), 0, 1, 0, 0,
			      amqp_empty_table);
	if (die_reply(amqp_get_rpc_reply(conn), "exchange.declare"))
		return 1;
	static const char *const queues[] = {"gridbroker.faults.events", "gridbroker.faults.replies"};
	for (int i = 0; i < 2; i++) {
		amqp_table_entry_t e;
		e.key = amqp_cstring_bytes("x-queue-type");
		e.value.kind = AMQP_FIELD_KIND_UTF8;
		e.value.value.bytes = amqp_cstring_bytes("quorum");
		amqp_table_t args = {1, &e};
		amqp_queue_declare(conn, 1, amqp_cstring_bytes(queues[i]), 0, 1,
				   0, 0, args);
		if (die_reply(amqp_get_rpc_reply(conn), queues[i]))
			return 1;
		amqp_queue_purge(conn, 1, amqp_cstring_bytes(queues[i]));
		if (die_reply(amqp_get_rpc_reply(conn), "queue.purge"))
			return 1;
	}
	amqp_queue_bind(conn, 1, amqp_cstring_bytes("gridbroker.faults.events"),
			amqp_cstring_bytes(AMQ_EX_EVENTS),
			amqp_cstring_bytes("#"), amqp_empty_table);
	if (die_reply(amqp_get_rpc_reply(conn), "queue.bind"))
		return 1;
	amqp_channel_close(conn, 1, AMQP_REPLY_SUCCESS);
	amqp_connection_close(conn, AMQP_REPLY_SUCCESS);
	amqp_destroy_connection(conn);
	printf("declared gridbroker.faults.events and gridbroker.faults.replies\n");
	return 0;
}

/* The extra column of an events line: the pilots a pilot.matched or
** pilot.nomatch event reports, each with its decision id, so the checker
** can tell from the stream alone a decision published under two message
** ids or a pilot given two answers. */
static void event_items(const struct amq_message *m, FILE *out)
{
	if (m->routing_key == NULL ||
	    (strcmp(m->routing_key, "pilot.matched") &&
	     strcmp(m->routing_key, "pilot.nomatch"))) {
		fputs("-", out);
		return;
	}
	struct arena a;
	arena_init(&a, 16u << 20);
	struct cdt_match *items = NULL;
	size_t n = 0;
	struct cod_error ce = {"", ""};
	if (cdt_decode_match_event(m->body, m->len, &a, &items, &n, &ce) !=
	    GB_OK) {
		fprintf(out, "undecodable:%s", ce.field);
	} else {
		for (size_t i = 0; i < n; i++)
			fprintf(out, "%s%lld/%s/%lld", i ? "," : "",
				items[i].matched ? items[i].job_id : 0,
				items[i].request_id ? items[i].request_id
						    : "-",
				items[i].decision_id);
	}
	arena_free(&a);
}

static void reply_line(const struct amq_message *m, FILE *out)
{
	struct arena a;
	arena_init(&a, 1u << 20);
	struct cdt_match r;
	struct cod_error ce = {"", ""};
	const char *req = m->correlation_id ? m->correlation_id : "-";
	if (cdt_decode_reply(m->body, m->len, &a, &r, &ce) == GB_OK)
		fprintf(out, "%s\t%d\t%lld\t%lld\n", req, r.matched,
			r.matched ? r.job_id : 0, r.decision_id);
	else
		fprintf(out, "%s\tbad\t0\t0\n", req);
	arena_free(&a);
}

static char *dup_bytes(amqp_bytes_t b)
{
	char *p = malloc(b.len + 1);
	if (p) {
		memcpy(p, b.bytes, b.len);
		p[b.len] = '\0';
	}
	return p;
}

/* A string header of a delivery, or NULL. */
static char *header(const amqp_basic_properties_t *bp, const char *key)
{
	if (!(bp->_flags & AMQP_BASIC_HEADERS_FLAG))
		return NULL;
	for (int i = 0; i < bp->headers.num_entries; i++) {
		const amqp_table_entry_t *e = &bp->headers.entries[i];
		if (e->key.len == strlen(key) &&
		    memcmp(e->key.bytes, key, e->key.len) == 0 &&
		    (e->value.kind == AMQP_FIELD_KIND_UTF8 ||
		     e->value.kind == AMQP_FIELD_KIND_BYTES))
			return dup_bytes(e->value.value.bytes);
	}
	return NULL;
}

/*
** Consume (prefetch 500, acks every 200 after the lines are flushed) until
** no message came for 3 s: a drain runs after quiescence, so silence means
** empty, and basic.get would cost a round trip per message.
*/
static int drain(const struct gb_config *cfg, const char *queue,
		 const char *kind, const char *file)
{
	amqp_connection_state_t conn = open_raw(cfg);
	if (conn == NULL)
		return 1;
	FILE *out = fopen(file, "a");
	if (out == NULL) {
		perror(file);
		return 1;
	}
	amqp_basic_qos(conn, 1, 0, 500, 0);
	amqp_basic_consume(conn, 1, amqp_cstring_bytes(queue), amqp_empty_bytes,
			   0, 0, 0, amqp_empty_table);
	if (die_reply(amqp_get_rpc_reply(conn), "basic.consume"))
		return 1;
	long n = 0;
	uint64_t last = 0;
	int rc = 0;
	for (;;) {
		amqp_envelope_t env;
		struct timeval tv = {3, 0};
		amqp_maybe_release_buffers(conn);
		amqp_rpc_reply_t r = amqp_consume_message(conn, &env, &tv, 0);
		if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
		    r.library_error == AMQP_STATUS_TIMEOUT)
			break;
		if (r.reply_type != AMQP_RESPONSE_NORMAL) {
			fprintf(stderr, "gb_faultq: consume %s failed\n", queue);
			rc = 1;
			break;
		}
		const amqp_basic_properties_t *bp = &env.message.properties;
		struct amq_message m;
		memset(&m, 0, sizeof(m));
		m.routing_key = dup_bytes(env.routing_key);
		if (bp->_flags & AMQP_BASIC_MESSAGE_ID_FLAG)
			m.message_id = dup_bytes(bp->message_id);
		if (bp->_flags & AMQP_BASIC_CORRELATION_ID_FLAG)
			m.correlation_id = dup_bytes(bp->correlation_id);
		m.error_header = header(bp, AMQ_ERROR_HEADER);
		m.death_reason = header(bp, "x-first-death-reason");
		m.body = env.message.body.bytes;
		m.len = env.message.body.len;
		const char *id = m.message_id ? m.message_id : "-";
		if (strcmp(kind, "events") == 0) {
			fprintf(out, "%s\t%s\t", id,
				m.routing_key ? m.routing_key : "-");
			event_items(&m, out);
			fputc('\n', out);
		} else if (strcmp(kind, "replies") == 0) {
			reply_line(&m, out);
		} else {
			fprintf(out, "%s\t%s\t%s\n", id,
				m.routing_key ? m.routing_key : "-",
				m.error_header	  ? m.error_header
				: m.death_reason ? m.death_reason
						 : "-");
		}
		free(m.routing_key);
		free(m.message_id);
		free(m.correlation_id);
		free(m.error_header);
		free(m.death_reason);
		last = env.delivery_tag;
		amqp_destroy_envelope(&env);
		if (++n % 200 == 0) {
			fflush(out);
			amqp_basic_ack(conn, 1, last, 1);
		}
	}
	fclose(out);
	if (last)
		amqp_basic_ack(conn, 1, last, 1);
	amqp_channel_close(conn, 1, AMQP_REPLY_SUCCESS);
	amqp_connection_close(conn, AMQP_REPLY_SUCCESS);
	amqp_destroy_connection(conn);
	printf("%ld\n", n);
	return rc;
}

int main(int argc, char **argv)
{
	const char *conf = NULL, *queue = NULL, *kind = "events", *out = NULL;
	static const struct option opts[] = {
		{"queue", required_argument, NULL, 'q'},
		{"kind", required_argument, NULL, 'k'},
		{"out", required_argument, NULL, 'o'},
		{NULL, 0, NULL, 0}};
	if (argc < 2) {
		fprintf(stderr, "usage: gb_faultq declare|drain -c CONFIG "
				"[--queue Q --kind events|replies|dead "
				"--out FILE]\n");
		return 2;
	}
	const char *cmd = argv[1];
	optind = 2;
	int c;
	while ((c = getopt_long(argc, argv, "c:", opts, NULL)) != -1) {
		switch (c) {
		case 'c': conf = optarg; break;
		case 'q': queue = optarg; break;
		case 'k': kind = optarg; break;
		case 'o': out = optarg; break;
		default: return 2;
		}
	}
	struct gb_config cfg;
	char err[1024] = "";
	if (conf == NULL || cfg_load(conf, &cfg, err, sizeof(err)) != GB_OK) {
		fprintf(stderr, "gb_faultq: %s\n", conf ? err : "-c CONFIG");
		return 2;
	}
	if (strcmp(cmd, "declare") == 0)
		return declare(&cfg);
	if (strcmp(cmd, "drain") == 0 && queue && out &&
	    (!strcmp(kind, "events") || !strcmp(kind, "replies") ||
	     !strcmp(kind, "dead")))
		return drain(&cfg, queue, kind, out);
	fprintf(stderr, "gb_faultq: bad command line\n");
	return 2;
}
