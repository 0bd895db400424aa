/*
** amqp_sync.c — the blocking RabbitMQ client of the CLI and the tests.
**
** One connection, two channels: channel 1 declares, publishes in confirm
** mode, basic.gets and settles; channel 2 carries the optional
** subscription. Keeping the subscription apart matters because rabbitmq-c
** reads frames per channel: a basic.get on channel 1 reads its header and
** body while deliveries for channel 2 simply queue up behind.
**
** A publish waits for its own confirm by reading frames; a subscribed
** delivery read meanwhile is copied to a small in-memory queue that
** amq_sync_next returns first, so waiting for a confirm never loses an
** event. No heartbeat thread: the library answers heartbeats while one of
** our calls waits, which is enough for a command-line tool.
*/
#include "amqp/amqp_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "gb_error.h"

/* Channel 1: declare, publish (confirm mode), get, settle. Channel 2: the
** subscription. */
#define SYNC_CH_MAIN 1
#define SYNC_CH_SUB 2

/* Subscribed deliveries held while a publish waits for its confirm. */
#define AMQ_STASH_MAX 4096

struct stash {
	struct stash *next;
	struct amq_message m;
};

struct amq_sync {
	const struct gb_config *cfg;
	amqp_connection_state_t conn;
	int fd;
	int dead;          /* connection unusable */
	uint64_t next_tag; /* confirm tag of the last publish on channel 1 */
	int subscribed;
	int reply_consuming; /* consumes amq.rabbitmq.reply-to on channel 1 */
	unsigned long rpc_counter;
	struct stash *head, *tail;
	size_t nstash;
	unsigned long dropped; /* subscribed deliveries beyond the stash */
	char last_close[320];  /* the broker's words when it last closed a
				  channel or the connection (amq_sync_why) */
	struct amq_guard guard;
};

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A wait of `ms` (>= 0) milliseconds, as the library takes it. */
static struct timeval ms_timeval(double ms)
{
	return (struct timeval){(time_t)(ms / 1000),
				(suseconds_t)((long)ms % 1000) * 1000};
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Fill `out` with owned copies; 0 or GB_ENOMEM (out is then empty). */
static int fill_message(struct amq_message *out,
			const amqp_basic_properties_t *bp, amqp_bytes_t ex,
			amqp_bytes_t rk, amqp_bytes_t body, uint64_t tag)
{
	memset(out, 0, sizeof(*out));
	struct amq_imported im;
	if (amq_import(bp, ex, rk, &im) != GB_OK)
		return GB_ENOMEM;
	out->exchange = strdup(im.exchange);
	out->routing_key = strdup(im.routing_key);
	out->message_id = dup_or_null(im.props.message_id);
	out->type = dup_or_null(im.props.type);
	out->correlation_id = dup_or_null(im.props.correlation_id);
	out->error_header = dup_or_null(im.error_header);
	const char *death = NULL;
	for (const char *const *h = im.props.headers; h && h[0]; h += 2)
		if (strcmp(h[0], "x-first-death-reason") == 0)
			death = h[1];
	out->death_reason = dup_or_null(death);
	out->tag = tag;
	out->len = body.len;
	/* One spare byte keeps an empty body non-NULL and lets a text body
	** be printed as a string. */
	out->body = malloc(body.len + 1);
	int bad = out->exchange == NULL || out->routing_key == NULL ||
		  out->body == NULL ||
		  (im.props.message_id && out->message_id == NULL) ||
		  (im.props.type && out->type == NULL) ||
		  (im.props.correlation_id && out->correlation_id == NULL) ||
		  (im.error_header && out->error_header == NULL) ||
		  (death && out->death_reason == NULL);
	if (!bad) {
		if (body.len)
			memcpy(out->body, body.bytes, body.len);
		((char *)out->body)[body.len] = '\0';
	}
	amq_imported_free(&im);
	if (bad) {
		amq_message_free(out);
		return GB_ENOMEM;
	}
	return GB_OK;
}

/* Reopen channel 1 after the broker closed it (404 on a passive declare or
** a basic.get); its confirm tags restart. */
static int reopen_main(struct amq_sync *s)
{
	char err[256];
	amq_guard_arm(&s->guard, s->fd, AMQ_IO_LIMIT_S);
	int rc = amq_channel_setup(s->conn, SYNC_CH_MAIN, 1, err,
				   sizeof(err));
	amq_guard_disarm(&s->guard);
	s->next_tag = 0;
	s->reply_consuming = 0; /* the consumer went with the channel */
	if (rc != GB_OK)
		s->dead = 1;
	return rc;
}

/* After an RPC failed: keep the connection usable if only the channel
** closed, and map the reply to our codes. */
static int rpc_failed(struct amq_sync *s, amqp_channel_t ch, int rc,
		      int code)
{
	if (rc == GB_EAMQPGONE) {
		s->dead = 1;
		return GB_EAMQPGONE;
	}
	if (ch == SYNC_CH_MAIN) {
		if (reopen_main(s) != GB_OK)
			return GB_EAMQPGONE;
	} else {
		s->subscribed = 0;
	}
	return code == AMQP_NOT_FOUND ? GB_ENOTFOUND : GB_EAMQP;
}

struct amq_sync *amq_sync_open(const struct gb_config *cfg, char *err,
			       size_t errlen)
{
	if (cfg == NULL) {
		snprintf(err, errlen, "no configuration");
		return NULL;
	}
	struct amq_sync *s = calloc(1, sizeof(*s));
	if (s == NULL || amq_guard_start(&s->guard) != GB_OK) {
		free(s);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->cfg = cfg;
	s->fd = -1;
	int rc = amq_connect(cfg, cfg->amqp_heartbeat, "gridbroker-cli",
			     &s->conn, err, errlen);
	if (rc == GB_OK) {
		s->fd = amqp_get_sockfd(s->conn);
		amq_guard_arm(&s->guard, s->fd, AMQ_SETUP_LIMIT_S);
		rc = amq_channel_setup(s->conn, SYNC_CH_MAIN, 1, err,
				       errlen);
		/* An account without configure permission (a pilot's, a
		** producer's) may not even redeclare what exists. */
		if (rc == GB_OK && cfg->amqp_declare)
			rc = amq_declare_topology(s->conn, SYNC_CH_MAIN, cfg,
						  err, errlen);
		if (amq_guard_disarm(&s->guard)) {
			size_t n = strlen(err);
			snprintf(err + n, errlen - n, " (timed out)");
		}
	}
	if (rc != GB_OK) {
		s->dead = 1;
		amq_sync_close(s);
		return NULL;
	}
	return s;
}

/*
** Read the header and body that follow a basic.deliver or basic.get-ok on
** channel `ch` into `out` (fill_message), with the method's exchange,
** routing key and tag. The method's strings are copied first: reading the
** body reuses the memory they live in. GB_OK, GB_EAMQPGONE (the read
** failed: the connection is dead) or GB_ENOMEM (read, but not kept).
*/
static int read_content(struct amq_sync *s, amqp_channel_t ch,
			amqp_bytes_t exchange, amqp_bytes_t routing_key,
			uint64_t tag, struct amq_message *out)
{
	char ex[256], rk[256];
	size_t el = exchange.len > 255 ? 255 : exchange.len;
	size_t rl = routing_key.len > 255 ? 255 : routing_key.len;
	memcpy(ex, exchange.bytes, el);
	memcpy(rk, routing_key.bytes, rl);
	amqp_message_t msg;
	amqp_rpc_reply_t r = amqp_read_message(s->conn, ch, &msg, 0);
	if (r.reply_type != AMQP_RESPONSE_NORMAL) {
		s->dead = 1;
		return GB_EAMQPGONE;
	}
	int rc = fill_message(out, &msg.properties, (amqp_bytes_t){el, ex},
			      (amqp_bytes_t){rl, rk}, msg.body, tag);
	amqp_destroy_message(&msg);
	return rc;
}

/* Keep `m` (taken over) for amq_sync_next; 0 when the stash is full or
** out of memory, and `m` is freed instead. */
static int stash_push(struct amq_sync *s, struct amq_message *m)
{
	struct stash *st = NULL;
	if (s->nstash < AMQ_STASH_MAX)
		st = calloc(1, sizeof(*st));
	if (st == NULL) {
		amq_message_free(m);
		return 0;
	}
	st->m = *m;
	if (s->tail)
		s->tail->next = st;
	else
		s->head = st;
	s->tail = st;
	s->nstash++;
	return 1;
}

/* Keep a subscribed delivery read while waiting for something else. */
static int stash_delivery(struct amq_sync *s, const amqp_frame_t *f)
{
	const amqp_basic_deliver_t *d = f->payload.method.decoded;
	struct amq_message m;
	int rc = read_content(s, f->channel, d->exchange, d->routing_key,
			      d->delivery_tag, &m);
	if (rc == GB_EAMQPGONE)
		return rc;
	if (rc != GB_OK || !stash_push(s, &m))
		s->dropped++;
	return GB_OK;
}

/*
** Deal with a frame that is not what the caller waits for: stash
** deliveries, drain returned messages, answer closes. Returns 0 to keep
** waiting or an error to give up with.
*/
static int other_frame(struct amq_sync *s, const amqp_frame_t *f,
		       int *returned)
{
	if (f->frame_type != AMQP_FRAME_METHOD)
		return GB_OK;
	switch (f->payload.method.id) {
	case AMQP_BASIC_DELIVER_METHOD:
		return stash_delivery(s, f);
	case AMQP_BASIC_RETURN_METHOD: {
		amqp_message_t msg;
		amqp_rpc_reply_t r =
			amqp_read_message(s->conn, f->channel, &msg, 0);
		if (r.reply_type != AMQP_RESPONSE_NORMAL) {
			s->dead = 1;
			return GB_EAMQPGONE;
		}
		amqp_destroy_message(&msg);
		if (returned)
			*returned = 1;
		return GB_OK;
	}
	case AMQP_CHANNEL_CLOSE_METHOD: {
		const amqp_channel_close_t *m = f->payload.method.decoded;
		if (m)
			snprintf(s->last_close, sizeof(s->last_close),
				 "broker closed the channel: %u %.*s",
				 (unsigned)m->reply_code,
				 (int)m->reply_text.len,
				 (const char *)m->reply_text.bytes);
		amqp_channel_close_ok_t ok = {0};
		amqp_send_method(s->conn, f->channel,
				 AMQP_CHANNEL_CLOSE_OK_METHOD, &ok);
		if (f->channel == SYNC_CH_MAIN) {
			if (reopen_main(s) != GB_OK)
				return GB_EAMQPGONE;
		} else {
			s->subscribed = 0;
		}
		return GB_EAMQP;
	}
	case AMQP_CONNECTION_CLOSE_METHOD: {
		const amqp_connection_close_t *m = f->payload.method.decoded;
		if (m)
			snprintf(s->last_close, sizeof(s->last_close),
				 "broker closed the connection: %u %.*s",
				 (unsigned)m->reply_code,
				 (int)m->reply_text.len,
				 (const char *)m->reply_text.bytes);
		amqp_connection_close_ok_t ok = {0};
		amqp_send_method(s->conn, 0, AMQP_CONNECTION_CLOSE_OK_METHOD,
				 &ok);
		s->dead = 1;
		return GB_EAMQPGONE;
	}
	default:
		/* Late confirms of publishes that timed out, flow control:
		** nothing to do for a short-lived client. */
		return GB_OK;
	}
}

int amq_sync_publish(struct amq_sync *s, const char *exchange,
		     const char *rkey, const struct amq_props *props,
		     const void *body, size_t len, int timeout_ms)
{
	if (s == NULL || exchange == NULL || rkey == NULL ||
	    (body == NULL && len > 0))
		return GB_EINVAL;
	if (s->dead)
		return GB_EAMQPGONE;
	s->last_close[0] = '\0';
	/* Every message says which account sent it: RabbitMQ refuses a
	** user_id that is not the connection's user (validated user-id), and
	** the workers check pilot.match's groups against it. */
	struct amq_props p = props ? *props : (struct amq_props){0};
	if (p.user_id == NULL && s->cfg->amqp_user[0])
		p.user_id = s->cfg->amqp_user;
	int rc = amq_publish_guarded(s->conn, SYNC_CH_MAIN, &s->guard, s->fd,
				     exchange, rkey, &p, body, len, NULL,
				     NULL);
	if (rc == GB_EAMQP) {
		s->dead = 1;
		return GB_EAMQPGONE;
	}
	if (rc != GB_OK)
		return rc;
	uint64_t tag = ++s->next_tag;
	int returned = 0;
	double deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	for (;;) {
		double left = deadline - now_ms();
		if (left <= 0)
			return GB_ETIMEOUT;
		struct timeval tv = ms_timeval(left);
		amqp_frame_t f;
		amqp_maybe_release_buffers(s->conn);
		int st = amqp_simple_wait_frame_noblock(s->conn, &f, &tv);
		if (st == AMQP_STATUS_TIMEOUT)
			return GB_ETIMEOUT;
		if (st != AMQP_STATUS_OK) {
			s->dead = 1;
			return GB_EAMQPGONE;
		}
		if (f.frame_type == AMQP_FRAME_METHOD &&
		    f.channel == SYNC_CH_MAIN &&
		    (f.payload.method.id == AMQP_BASIC_ACK_METHOD ||
		     f.payload.method.id == AMQP_BASIC_NACK_METHOD)) {
			uint64_t t;
			int multiple;
			int ack = amq_confirm_read(&f.payload.method, &t,
						   &multiple);
			if (t != tag && !(multiple && t > tag)) {
				/* An earlier, timed-out publish. A return seen
				** so far was its return: the broker sends a
				** message's return before its confirm. */
				returned = 0;
				continue;
			}
			if (!ack)
				return GB_EAMQP;
			/* The broker returns an unroutable message just
			** before confirming it. */
			return returned ? GB_ENOTFOUND : GB_OK;
		}
		rc = other_frame(s, &f, &returned);
		if (rc != GB_OK)
			return rc;
	}
}

int amq_sync_subscribe(struct amq_sync *s, const char *exchange,
		       const char *const *keys)
{
	if (s == NULL || exchange == NULL || keys == NULL)
		return GB_EINVAL;
	if (s->dead)
		return GB_EAMQPGONE;
	if (s->subscribed)
		return GB_ESTATE;
	char err[512];
	amq_guard_arm(&s->guard, s->fd, AMQ_SETUP_LIMIT_S);
	int rc = amq_channel_setup(s->conn, SYNC_CH_SUB, 0, err, sizeof(err));
	int code = 0;
	char qname[256] = "";
	if (rc == GB_OK) {
		amqp_queue_declare_ok_t *ok = amqp_queue_declare(
			s->conn, SYNC_CH_SUB, amqp_empty_bytes, 0, 0, 1, 1,
			amqp_empty_table);
		rc = amq_rpc_check(s->conn, SYNC_CH_SUB, "declare queue",
				   err, sizeof(err), &code);
		if (rc == GB_OK && ok) {
			size_t n = ok->queue.len > 255 ? 255 : ok->queue.len;
			memcpy(qname, ok->queue.bytes, n);
			qname[n] = '\0';
		}
	}
	for (size_t i = 0; rc == GB_OK && keys[i]; i++) {
		amqp_queue_bind(s->conn, SYNC_CH_SUB,
				amqp_cstring_bytes(qname),
				amqp_cstring_bytes(exchange),
				amqp_cstring_bytes(keys[i]), amqp_empty_table);
		rc = amq_rpc_check(s->conn, SYNC_CH_SUB, "bind", err,
				   sizeof(err), &code);
	}
	if (rc == GB_OK) {
		amqp_basic_consume(s->conn, SYNC_CH_SUB,
				   amqp_cstring_bytes(qname), amqp_empty_bytes,
				   0, 1, 1, amqp_empty_table);
		rc = amq_rpc_check(s->conn, SYNC_CH_SUB, "consume", err,
				   sizeof(err), &code);
	}
	amq_guard_disarm(&s->guard);
	if (rc != GB_OK)
		return rpc_failed(s, SYNC_CH_SUB, rc, code);
	s->subscribed = 1;
	return GB_OK;
}

/*
** Wait at most `left_ms` (>= 0) for a delivery on any channel. Returns 1
** with *env filled (the caller destroys it), 0 when another frame came
** first and was dealt with (other_frame: wait again), or GB_ETIMEOUT or
** the error to give up with.
*/
static int consume_one(struct amq_sync *s, double left_ms,
		       amqp_envelope_t *env)
{
	struct timeval tv = ms_timeval(left_ms);
	amqp_maybe_release_buffers(s->conn);
	amqp_rpc_reply_t r = amqp_consume_message(s->conn, env, &tv, 0);
	if (r.reply_type == AMQP_RESPONSE_NORMAL)
		return 1;
	if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
	    r.library_error == AMQP_STATUS_TIMEOUT)
		return GB_ETIMEOUT;
	if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
	    r.library_error == AMQP_STATUS_UNEXPECTED_STATE) {
		/* A frame other than a delivery is next; the library put it
		** back, so this read does not block. */
		amqp_frame_t f;
		if (amqp_simple_wait_frame(s->conn, &f) != AMQP_STATUS_OK) {
			s->dead = 1;
			return GB_EAMQPGONE;
		}
		return other_frame(s, &f, NULL);
	}
	s->dead = 1;
	return GB_EAMQPGONE;
}

int amq_sync_next(struct amq_sync *s, struct amq_message *out, int timeout_ms)
{
	if (s == NULL || out == NULL)
		return GB_EINVAL;
	memset(out, 0, sizeof(*out));
	if (s->head) {
		struct stash *st = s->head;
		s->head = st->next;
		if (s->head == NULL)
			s->tail = NULL;
		s->nstash--;
		*out = st->m;
		free(st);
		return GB_OK;
	}
	if (s->dead)
		return GB_EAMQPGONE;
	if (!s->subscribed)
		return GB_ESTATE;
	double deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	for (;;) {
		double left = deadline - now_ms();
		amqp_envelope_t env;
		int rc = consume_one(s, left > 0 ? left : 0, &env);
		if (rc == GB_OK)
			continue;
		if (rc < 0)
			return rc;
		int ours = env.channel == SYNC_CH_SUB;
		rc = GB_OK;
		if (ours)
			rc = fill_message(out, &env.message.properties,
					  env.exchange, env.routing_key,
					  env.message.body, env.delivery_tag);
		amqp_destroy_envelope(&env);
		if (ours)
			return rc;
	}
}

/* Take the stashed message with correlation id `cid` out of the stash. */
static int stash_take(struct amq_sync *s, const char *cid,
		      struct amq_message *out)
{
	struct stash **pp = &s->head, *prev = NULL;
	while (*pp) {
		struct stash *st = *pp;
		if (st->m.correlation_id &&
		    strcmp(st->m.correlation_id, cid) == 0) {
			*pp = st->next;
			if (s->tail == st)
				s->tail = prev;
			s->nstash--;
			*out = st->m;
			free(st);
			return 1;
		}
		prev = st;
		pp = &st->next;
	}
	return 0;
}

/*
** Direct reply-to: RabbitMQ requires the requester to consume the
** pseudo-queue in no-ack mode, before publishing, and on the channel it
** publishes on; the reply then arrives as a delivery on that channel.
*/
int amq_sync_rpc(struct amq_sync *s, const char *exchange, const char *rkey,
		 const struct amq_props *props, const void *body, size_t len,
		 int timeout_ms, struct amq_message *reply)
{
	if (s == NULL || exchange == NULL || rkey == NULL || reply == NULL)
		return GB_EINVAL;
	memset(reply, 0, sizeof(*reply));
	if (s->dead)
		return GB_EAMQPGONE;
	if (!s->reply_consuming) {
		char err[256];
		int code = 0;
		amq_guard_arm(&s->guard, s->fd, AMQ_IO_LIMIT_S);
		amqp_basic_consume(s->conn, SYNC_CH_MAIN,
				   amqp_cstring_bytes("amq.rabbitmq.reply-to"),
				   amqp_empty_bytes, 0, 1, 0, amqp_empty_table);
		int rc = amq_rpc_check(s->conn, SYNC_CH_MAIN,
				       "consume amq.rabbitmq.reply-to", err,
				       sizeof(err), &code);
		amq_guard_disarm(&s->guard);
		if (rc != GB_OK)
			return rpc_failed(s, SYNC_CH_MAIN, rc, code);
		s->reply_consuming = 1;
	}
	struct amq_props p = props ? *props : (struct amq_props){0};
	char cid[96];
	if (p.correlation_id == NULL) {
		snprintf(cid, sizeof(cid), "rpc-%ld-%lu-%.0f", (long)getpid(),
			 ++s->rpc_counter, now_ms() * 1000.0);
		p.correlation_id = cid;
	} else {
		snprintf(cid, sizeof(cid), "%s", p.correlation_id);
	}
	if (p.reply_to == NULL)
		p.reply_to = "amq.rabbitmq.reply-to";
	double deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	int rc = amq_sync_publish(s, exchange, rkey, &p, body, len,
				  timeout_ms);
	if (rc != GB_OK)
		return rc == GB_ENOTFOUND ? GB_EAMQP : rc;
	for (;;) {
		/* The reply may have come while the publish waited for its
		** confirm; the stash holds it then. */
		if (stash_take(s, cid, reply))
			return GB_OK;
		double left = deadline - now_ms();
		if (left <= 0)
			return GB_ETIMEOUT;
		amqp_envelope_t env;
		rc = consume_one(s, left, &env);
		if (rc == GB_OK)
			continue;
		if (rc < 0)
			return rc;
		struct amq_message m;
		amqp_channel_t ch = env.channel;
		rc = fill_message(&m, &env.message.properties, env.exchange,
				  env.routing_key, env.message.body,
				  env.delivery_tag);
		amqp_destroy_envelope(&env);
		if (rc != GB_OK)
			return rc;
		if (m.correlation_id && strcmp(m.correlation_id, cid) == 0) {
			*reply = m;
			return GB_OK;
		}
		/* A late reply to an earlier call, or a subscribed event:
		** keep events for amq_sync_next, drop the rest. */
		if (ch == SYNC_CH_SUB)
			stash_push(s, &m);
		else
			amq_message_free(&m);
	}
}

int amq_sync_get(struct amq_sync *s, const char *queue,
		 struct amq_message *out)
{
	if (s == NULL || queue == NULL || out == NULL)
		return GB_EINVAL;
	memset(out, 0, sizeof(*out));
	if (s->dead)
		return GB_EAMQPGONE;
	char err[512];
	amq_guard_arm(&s->guard, s->fd, AMQ_IO_LIMIT_S);
	amqp_rpc_reply_t r = amqp_basic_get(s->conn, SYNC_CH_MAIN,
					    amqp_cstring_bytes(queue), 0);
	int code = 0;
	int rc = amq_reply_check(s->conn, SYNC_CH_MAIN, r, "basic.get", err,
				 sizeof(err), &code);
	if (rc != GB_OK) {
		amq_guard_disarm(&s->guard);
		return rpc_failed(s, SYNC_CH_MAIN, rc, code);
	}
	if (r.reply.id == AMQP_BASIC_GET_EMPTY_METHOD) {
		amq_guard_disarm(&s->guard);
		return GB_ENOTFOUND;
	}
	const amqp_basic_get_ok_t *ok = r.reply.decoded;
	uint64_t tag = ok->delivery_tag;
	rc = read_content(s, SYNC_CH_MAIN, ok->exchange, ok->routing_key, tag,
			  out);
	amq_guard_disarm(&s->guard);
	if (rc == GB_ENOMEM) {
		/* Leave it in the queue rather than lose it. */
		amqp_basic_nack(s->conn, SYNC_CH_MAIN, tag, 0, 1);
	}
	return rc;
}

int amq_sync_settle(struct amq_sync *s, uint64_t tag, int remove)
{
	if (s == NULL)
		return GB_EINVAL;
	if (s->dead)
		return GB_EAMQPGONE;
	amq_guard_arm(&s->guard, s->fd, AMQ_IO_LIMIT_S);
	int st = remove ? amqp_basic_ack(s->conn, SYNC_CH_MAIN, tag, 0)
			: amqp_basic_nack(s->conn, SYNC_CH_MAIN, tag, 0, 1);
	amq_guard_disarm(&s->guard);
	if (st != AMQP_STATUS_OK) {
		s->dead = 1;
		return GB_EAMQPGONE;
	}
	return GB_OK;
}

long amq_sync_queue_depth(struct amq_sync *s, const char *queue)
{
	if (s == NULL || queue == NULL)
		return GB_EINVAL;
	if (s->dead)
		return GB_EAMQPGONE;
	char err[512];
	amq_guard_arm(&s->guard, s->fd, AMQ_IO_LIMIT_S);
	amqp_queue_declare_ok_t *ok =
		amqp_queue_declare(s->conn, SYNC_CH_MAIN,
				   amqp_cstring_bytes(queue), 1, 0, 0, 0,
				   amqp_empty_table);
	int code = 0;
	int rc = amq_rpc_check(s->conn, SYNC_CH_MAIN, "passive declare", err,
			       sizeof(err), &code);
	amq_guard_disarm(&s->guard);
	if (rc != GB_OK)
		return rpc_failed(s, SYNC_CH_MAIN, rc, code);
	return ok ? (long)ok->message_count : GB_EAMQP;
}

void amq_message_free(struct amq_message *m)
{
	if (m == NULL)
		return;
	free(m->exchange);
	free(m->routing_key);
	free(m->message_id);
	free(m->type);
	free(m->correlation_id);
	free(m->error_header);
	free(m->death_reason);
	free(m->body);
	memset(m, 0, sizeof(*m));
}

void amq_sync_close(struct amq_sync *s)
{
	if (s == NULL)
		return;
	if (s->conn) {
		if (!s->dead) {
			amq_guard_arm(&s->guard, s->fd, AMQ_IO_LIMIT_S);
			amqp_connection_close(s->conn, AMQP_REPLY_SUCCESS);
			amq_guard_disarm(&s->guard);
		}
		amqp_destroy_connection(s->conn);
	}
	while (s->head) {
		struct stash *st = s->head;
		s->head = st->next;
		amq_message_free(&st->m);
		free(st);
	}
	amq_guard_stop(&s->guard);
	free(s);
}

const char *amq_sync_why(const struct amq_sync *s, int rc)
{
	if (s && s->last_close[0] && (rc == GB_EAMQP || rc == GB_EAMQPGONE))
		return s->last_close;
	return gb_strerror(rc);
}
