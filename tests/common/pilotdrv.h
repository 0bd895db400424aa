/*
** pilotdrv.h — a pilot load driver shared by the match integration test
** and the match benchmark: many pilot.match RPCs in flight at once over
** one AMQP connection, replies by RabbitMQ direct reply-to, latency per
** request.
**
** Why a window of outstanding requests instead of one blocking RPC after
** another: a real grid has thousands of pilots asking at once, and the
** workers' group commit only batches what is waiting; a one-at-a-time
** client would measure a round trip, not the service.
**
** Header-only (static functions) because it is test tooling used by two
** programs, not part of the service. Duplicate replies (a worker answered,
** died before its ack, and the redelivery was answered again) are kept:
** the caller checks that they agree.
*/
#ifndef GB_PILOTDRV_H
#define GB_PILOTDRV_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <amqp.h>
#include <msgpack.h>

#include "amqp/amqp.h"
#include "amqp/amqp_internal.h"
#include "base/arena.h"
#include "codec/codec_tq.h"
#include "gb_error.h"

struct pd_result {
	int replies;        /* replies received (duplicates included) */
	int matched;        /* first reply matched */
	long long job_id;   /* of the first reply */
	long long tq_id;
	long long decision;
	char code[32];
	int dup_disagrees;  /* a later reply named another job */
	double sent_ms, latency_ms;
};

/* A pilot giving one site and one platform (either may be NULL: not
** given), with `site` set as the decoder would set it; *site and *plat
** must outlive the pilot. */
static void pd_pilot_one(struct cdt_pilot *p, const char *id,
			 const char *setup, long long cpu, const char **site,
			 const char **plat)
{
	memset(p, 0, sizeof(*p));
	p->pilot_id = id;
	p->d.setup = setup;
	p->d.cpu_time = cpu;
	p->site = site != NULL && *site != NULL ? *site : "ANY";
	if (site != NULL && *site != NULL)
		p->d.want[TQ_P_SITE] = (struct tq_strset){site, 1};
	if (plat != NULL && *plat != NULL)
		p->d.want[TQ_P_PLATFORM] = (struct tq_strset){plat, 1};
}

static double pd_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/*
** Send n pilots (pilots[i]) with message ids "<prefix>-<i>" to exchange
** `ex` with routing key `rkey`, at most `window` unanswered at a time;
** wait for replies up to timeout_ms after the last send. res[i] gets each
** outcome. Returns the number of pilots that got no reply, or -1 on a
** connection error (err says why). The benchmark points it at its own echo
** server with another key, so both are driven by the same client code.
*/
static int pd_run_to(const struct gb_config *gcfg, const char *ex,
		     const char *rkey, const char *prefix,
		     const struct cdt_pilot *pilots, int n, int window,
		     int timeout_ms, struct pd_result *res, char *err,
		     size_t errlen)
{
	amqp_connection_state_t conn = NULL;
	if (amq_connect(gcfg, 0, "gridbroker-pilotdrv", &conn, err, errlen) !=
	    GB_OK)
		return -1;
	int rc = amq_channel_setup(conn, 1, 0, err, errlen);
	if (rc == GB_OK) {
		amqp_basic_consume(conn, 1,
				   amqp_cstring_bytes("amq.rabbitmq.reply-to"),
				   amqp_empty_bytes, 0, 1, 0, amqp_empty_table);
		int code = 0;
		rc = amq_rpc_check(conn, 1, "consume reply-to", err, errlen,
				   &code);
	}
	if (rc != GB_OK) {
		amqp_destroy_connection(conn);
		return -1;
	}
	memset(res, 0, (size_t)n * sizeof(*res));
	int next = 0, outstanding = 0, answered = 0;
	double last_progress = pd_now_ms();
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	while (answered < n) {
		while (next < n && outstanding < window) {
			char msgid[96], cid[32];
			snprintf(msgid, sizeof(msgid), "%s-%d", prefix, next);
			snprintf(cid, sizeof(cid), "%d", next);
			msgpack_sbuffer_clear(&sb);
			if (cdt_encode_pilot(&pilots[next], &sb) != GB_OK) {
				snprintf(err, errlen, "pilot %d does not encode",
					 next);
				goto fail;
			}
			amqp_basic_properties_t bp;
			memset(&bp, 0, sizeof(bp));
			bp._flags = AMQP_BASIC_MESSAGE_ID_FLAG |
				    AMQP_BASIC_CORRELATION_ID_FLAG |
				    AMQP_BASIC_REPLY_TO_FLAG |
				    AMQP_BASIC_CONTENT_TYPE_FLAG |
				    AMQP_BASIC_DELIVERY_MODE_FLAG;
			bp.message_id = amqp_cstring_bytes(msgid);
			bp.correlation_id = amqp_cstring_bytes(cid);
			bp.reply_to = amqp_cstring_bytes("amq.rabbitmq.reply-to");
			bp.content_type = amqp_cstring_bytes("application/msgpack");
			bp.delivery_mode = 2;
			res[next].sent_ms = pd_now_ms();
			if (amqp_basic_publish(conn, 1,
					       amqp_cstring_bytes(ex),
					       amqp_cstring_bytes(rkey), 0,
					       0, &bp,
					       (amqp_bytes_t){sb.size, sb.data}) !=
			    AMQP_STATUS_OK) {
				snprintf(err, errlen, "publish failed");
				goto fail;
			}
			next++;
			outstanding++;
		}
		struct timeval tv = {0, 200000};
		amqp_envelope_t env;
		amqp_maybe_release_buffers(conn);
		amqp_rpc_reply_t r = amqp_consume_message(conn, &env, &tv, 0);
		if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
		    r.library_error == AMQP_STATUS_TIMEOUT) {
			if (pd_now_ms() - last_progress > timeout_ms)
				break;
			continue;
		}
		if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
		    r.library_error == AMQP_STATUS_UNEXPECTED_STATE) {
			amqp_frame_t f;
			if (amqp_simple_wait_frame(conn, &f) != AMQP_STATUS_OK) {
				snprintf(err, errlen, "connection lost");
				goto fail;
			}
			continue;
		}
		if (r.reply_type != AMQP_RESPONSE_NORMAL) {
			snprintf(err, errlen, "consume failed");
			goto fail;
		}
		double t = pd_now_ms();
		int i = -1;
		if (env.message.properties._flags &
		    AMQP_BASIC_CORRELATION_ID_FLAG) {
			char cid[32];
			amqp_bytes_t c = env.message.properties.correlation_id;
			size_t l = c.len < sizeof(cid) - 1 ? c.len
							   : sizeof(cid) - 1;
			memcpy(cid, c.bytes, l);
			cid[l] = '\0';
			i = atoi(cid);
		}
		if (i >= 0 && i < next) {
			struct arena a;
			arena_init(&a, 1u << 16);
			struct cdt_match m;
			struct cod_error ce;
			memset(&ce, 0, sizeof(ce));
			int drc = cdt_decode_reply(env.message.body.bytes,
						   env.message.body.len, &a, &m,
						   &ce);
			struct pd_result *p = &res[i];
			if (drc == GB_OK && p->replies == 0) {
				p->matched = m.matched;
				p->job_id = m.job_id;
				p->tq_id = m.tq_id;
				p->decision = m.decision_id;
				snprintf(p->code, sizeof(p->code), "%s",
					 m.code ? m.code : "");
				p->latency_ms = t - p->sent_ms;
				outstanding--;
				answered++;
				last_progress = t;
			} else if (drc == GB_OK && (m.matched != p->matched ||
						    m.job_id != p->job_id)) {
				p->dup_disagrees = 1;
			}
			if (drc == GB_OK)
				p->replies++;
			arena_free(&a);
		}
		amqp_destroy_envelope(&env);
	}
	msgpack_sbuffer_destroy(&sb);
	amqp_connection_close(conn, AMQP_REPLY_SUCCESS);
	amqp_destroy_connection(conn);
	return n - answered;
fail:
	msgpack_sbuffer_destroy(&sb);
	amqp_destroy_connection(conn);
	return -1;
}

/* pd_run_to gridbroker's pilot.match. */
static inline int pd_run(const struct gb_config *gcfg, const char *prefix,
			 const struct cdt_pilot *pilots, int n, int window,
			 int timeout_ms, struct pd_result *res, char *err,
			 size_t errlen)
{
	return pd_run_to(gcfg, AMQ_EX_REQUESTS, "pilot.match", prefix, pilots,
			 n, window, timeout_ms, res, err, errlen);
}

/* ---- a bare server on the same broker, for the benchmarks' ceilings ---- */

/*
** Declare queue `q` as the worker declares its request queues
** (amq_declare_topology: the configured type, dead-lettering to
** gridbroker.dlx, the delivery limit, and for a quorum queue at-least-once
** dead-lettering and reject-publish) and bind it to gridbroker.requests
** with `rkey`; purged, so a ceiling starts empty. On the AMQP client's
** channel 1. Why the same arguments: the queue type decides most of the
** broker's cost per message (a quorum queue writes every message to its
** log), and a ceiling measured on another type would not bound the worker.
*/
static inline int pd_queue_declare(amqp_connection_state_t conn,
				   const struct gb_config *gcfg, const char *q,
				   const char *rkey, char *err, size_t errlen)
{
	int quorum = strcmp(gcfg->amqp_queue_type, "quorum") == 0;
	amqp_table_entry_t args[5];
	memset(args, 0, sizeof(args));
	args[0].key = amqp_cstring_bytes("x-queue-type");
	args[0].value.kind = AMQP_FIELD_KIND_UTF8;
	args[0].value.value.bytes = amqp_cstring_bytes(gcfg->amqp_queue_type);
	args[1].key = amqp_cstring_bytes("x-dead-letter-exchange");
	args[1].value.kind = AMQP_FIELD_KIND_UTF8;
	args[1].value.value.bytes = amqp_cstring_bytes(AMQ_EX_DLX);
	args[2].key = amqp_cstring_bytes("x-delivery-limit");
	args[2].value.kind = AMQP_FIELD_KIND_I64;
	args[2].value.value.i64 = gcfg->amqp_delivery_limit;
	args[3].key = amqp_cstring_bytes("x-dead-letter-strategy");
	args[3].value.kind = AMQP_FIELD_KIND_UTF8;
	args[3].value.value.bytes = amqp_cstring_bytes("at-least-once");
	args[4].key = amqp_cstring_bytes("x-overflow");
	args[4].value.kind = AMQP_FIELD_KIND_UTF8;
	args[4].value.value.bytes = amqp_cstring_bytes("reject-publish");
	amqp_table_t t = {quorum ? 5 : 2, args};
	/* as the worker declares it, for a broker no worker has seen yet */
	amqp_exchange_declare(conn, 1, amqp_cstring_bytes(AMQ_EX_REQUESTS),
			      amqp_cstring_bytes("topic"), 0, 1, 0, 0,
			      amqp_empty_table);
	if (amq_rpc_check(conn, 1, "declare exchange", err, errlen, NULL) !=
	    GB_OK)
		return GB_EAMQP;
	amqp_queue_declare(conn, 1, amqp_cstring_bytes(q), 0, 1, 0, 0, t);
	int rc = amq_rpc_check(conn, 1, "declare bench queue", err, errlen,
			       NULL);
	if (rc == GB_OK) {
		amqp_queue_bind(conn, 1, amqp_cstring_bytes(q),
				amqp_cstring_bytes(AMQ_EX_REQUESTS),
				amqp_cstring_bytes(rkey), amqp_empty_table);
		rc = amq_rpc_check(conn, 1, "bind bench queue", err, errlen,
				   NULL);
	}
	if (rc == GB_OK) {
		amqp_queue_purge(conn, 1, amqp_cstring_bytes(q));
		rc = amq_rpc_check(conn, 1, "purge bench queue", err, errlen,
				   NULL);
	}
	return rc;
}

/* Declare (pd_queue_declare) or, with rkey NULL, delete queue `q` on a
** connection of its own; with q NULL, declare the worker's own topology
** (amq_declare_topology), so requests published before a worker is up
** wait in its queues instead of being dropped as unroutable. */
static inline int pd_queue_setup(const struct gb_config *gcfg, const char *q,
				 const char *rkey, char *err, size_t errlen)
{
	amqp_connection_state_t conn = NULL;
	if (amq_connect(gcfg, 0, "gridbroker-bench-setup", &conn, err,
			errlen) != GB_OK)
		return -1;
	int rc = amq_channel_setup(conn, 1, 0, err, errlen);
	if (rc == GB_OK && q == NULL)
		rc = amq_declare_topology(conn, 1, gcfg, err, errlen);
	else if (rc == GB_OK && rkey != NULL)
		rc = pd_queue_declare(conn, gcfg, q, rkey, err, errlen);
	else if (rc == GB_OK) {
		amqp_queue_delete(conn, 1, amqp_cstring_bytes(q), 0, 0);
		rc = amq_rpc_check(conn, 1, "delete bench queue", err, errlen,
				   NULL);
	}
	if (rc == GB_OK)
		amqp_connection_close(conn, AMQP_REPLY_SUCCESS);
	amqp_destroy_connection(conn);
	return rc == GB_OK ? 0 : -1;
}

/* The AMQP type of the message that ends pd_echo_serve. */
#define PD_STOP_TYPE "bench.stop"

/*
** Serve queue `q` until killed or a message of type PD_STOP_TYPE arrives, as a worker's consumer does but doing no
** work: basic.qos with the configured prefetch, manual acks one delivery
** at a time; when `reply` is given, first publish it to the delivery's
** reply_to (direct reply-to) with the delivery's correlation id. With
** reply NULL it is a sink: consume and ack. Replies go unconfirmed on the
** consuming channel: this is the broker's round trip with nothing
** between, the ceiling the worker cannot beat. Returns 0 after a stop
** message (acked; a sink that saw it has consumed everything queued
** before it), -1 when the connection fails (err says why).
*/
static inline int pd_echo_serve(const struct gb_config *gcfg, const char *q,
				const void *reply, size_t replylen, char *err,
				size_t errlen)
{
	amqp_connection_state_t conn = NULL;
	if (amq_connect(gcfg, 0, "gridbroker-bench-echo", &conn, err, errlen) !=
	    GB_OK)
		return -1;
	int rc = amq_channel_setup(conn, 1, 0, err, errlen);
	if (rc == GB_OK) {
		amqp_basic_qos(conn, 1, 0, (uint16_t)gcfg->amqp_prefetch, 0);
		rc = amq_rpc_check(conn, 1, "basic.qos", err, errlen, NULL);
	}
	if (rc == GB_OK) {
		amqp_basic_consume(conn, 1, amqp_cstring_bytes(q),
				   amqp_empty_bytes, 0, 0, 0, amqp_empty_table);
		rc = amq_rpc_check(conn, 1, "basic.consume", err, errlen, NULL);
	}
	while (rc == GB_OK) {
		amqp_envelope_t env;
		amqp_maybe_release_buffers(conn);
		amqp_rpc_reply_t r = amqp_consume_message(conn, &env, NULL, 0);
		if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
		    r.library_error == AMQP_STATUS_UNEXPECTED_STATE) {
			amqp_frame_t f;
			if (amqp_simple_wait_frame(conn, &f) != AMQP_STATUS_OK)
				break;
			continue;
		}
		if (r.reply_type != AMQP_RESPONSE_NORMAL)
			break;
		const amqp_basic_properties_t *in = &env.message.properties;
		if ((in->_flags & AMQP_BASIC_TYPE_FLAG) &&
		    in->type.len == strlen(PD_STOP_TYPE) &&
		    memcmp(in->type.bytes, PD_STOP_TYPE, in->type.len) == 0) {
			int st = amqp_basic_ack(conn, 1, env.delivery_tag, 0);
			amqp_destroy_envelope(&env);
			amqp_connection_close(conn, AMQP_REPLY_SUCCESS);
			amqp_destroy_connection(conn);
			return st == AMQP_STATUS_OK ? 0 : -1;
		}
		if (reply != NULL && (in->_flags & AMQP_BASIC_REPLY_TO_FLAG)) {
			amqp_basic_properties_t bp;
			memset(&bp, 0, sizeof(bp));
			bp._flags = AMQP_BASIC_CONTENT_TYPE_FLAG;
			bp.content_type =
				amqp_cstring_bytes("application/msgpack");
			if (in->_flags & AMQP_BASIC_CORRELATION_ID_FLAG) {
				bp._flags |= AMQP_BASIC_CORRELATION_ID_FLAG;
				bp.correlation_id = in->correlation_id;
			}
			if (amqp_basic_publish(conn, 1, amqp_empty_bytes,
					       in->reply_to, 0, 0, &bp,
					       (amqp_bytes_t){replylen,
							      (void *)reply}) !=
			    AMQP_STATUS_OK)
				rc = -1;
		}
		if (amqp_basic_ack(conn, 1, env.delivery_tag, 0) !=
		    AMQP_STATUS_OK)
			rc = -1;
		amqp_destroy_envelope(&env);
	}
	snprintf(err, errlen, "echo server: connection lost");
	amqp_destroy_connection(conn);
	return -1;
}

/* Percentile p (0..100) of the latencies of answered pilots. */
static int pd_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double pd_percentile(const struct pd_result *res, int n, double p)
{
	double *v = malloc((size_t)(n ? n : 1) * sizeof(*v));
	int k = 0;
	for (int i = 0; v && i < n; i++)
		if (res[i].replies)
			v[k++] = res[i].latency_ms;
	double out = 0;
	if (k) {
		qsort(v, (size_t)k, sizeof(*v), pd_cmp);
		int idx = (int)(p / 100.0 * (k - 1) + 0.5);
		out = v[idx];
	}
	free(v);
	return out;
}

#endif
