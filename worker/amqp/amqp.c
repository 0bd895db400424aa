/*
** amqp.c — the worker's RabbitMQ connection, driven by libevent.
**
** rabbitmq-c 0.11 is a blocking library with no background work, so this
** file supplies the loop it lacks:
**
**   connect (bounded) -> login -> channel 1: topology, qos, basic.consume
**                                  channel 2: confirm.select
**   socket readable / periodic tick -> pump: read frames with a zero
**     timeout until the library has nothing buffered and the socket has
**     nothing to read; dispatch deliveries, confirms, returns, flow
**     control and closes
**   any failure -> mark failing, finish the current callback, then (from
**     the loop) tear down: every unconfirmed publish reported LOST,
**     on_state(0), new generation, reconnect after a jittered backoff.
**
** Why the failure is deferred rather than handled where it is noticed: it
** is often noticed inside a user callback (a publish from on_delivery),
** and tearing down under the caller's feet would call it back re-entrantly
** and free state it is still using. For the same reason amq_free inside a
** callback only marks the object; the pump frees it on the way out.
**
** Publishes get a 64-bit sequence number that never repeats for the life
** of the object: channel 2's delivery tags restart at 1 on every
** connection, so seq = (seq of the last publish before this connection) +
** tag. Every library call that may write runs under the write watchdog
** (amq_guard): rabbitmq-c 0.11 would otherwise wait forever on a broker
** that stopped reading.
*/
#include "amqp/amqp_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "gb_error.h"
#include "base/log.h"

/* Frames handled per pump before yielding to the other events. */
#define AMQ_PUMP_BUDGET 256
/* Consumers per connection: one per request type. */
#define AMQ_MAX_CONSUMERS 16

struct amq_conn {
	struct event_base *base;
	const struct gb_config *cfg;
	struct amq_callbacks cb; /* zeroed by amq_free: no calls after it */
	void *ud;

	amqp_connection_state_t conn; /* NULL while down */
	int fd;
	struct event *ev_read;  /* socket readable (also activated by hand) */
	struct event *ev_tick;  /* heartbeats and dead-peer detection */
	struct event *ev_retry; /* teardown and reconnect, from the loop */

	int started;
	int up;        /* consumers running, publishing allowed */
	int announced; /* on_state(1) was called for this connection */
	int blocked;   /* connection.blocked from the broker */
	int failing;   /* torn down at the next loop turn */
	int consume;   /* start consumers on (re)connect */
	int busy;      /* depth of our frames that may call back */
	int freeing;   /* amq_free was called while busy */

	uint64_t gen;      /* bumped on every teardown */
	uint64_t last_seq; /* seq of the most recent publish */
	uint64_t seq_base; /* last_seq when channel 2 was opened */
	struct amq_window win;
	size_t window_limit;

	unsigned attempt; /* consecutive failed connects */
	uint64_t rng;

	char ctag[AMQ_MAX_CONSUMERS][AMQ_NAME_MAX];
	size_t nctag;
	struct amq_guard guard;
};

static void on_read(evutil_socket_t fd, short what, void *arg);
static void on_tick(evutil_socket_t fd, short what, void *arg);
static void on_retry(evutil_socket_t fd, short what, void *arg);
static void destroy(struct amq_conn *c);

/* ---- failure and teardown ------------------------------------------------- */

/*
** Note a broken connection. Everything after this sees the connection as
** gone; the actual teardown runs from the loop (see the file comment).
*/
static void fail(struct amq_conn *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail(struct amq_conn *c, const char *fmt, ...)
{
	if (c->failing || c->conn == NULL)
		return;
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	log_warn("AMQP connection to %s:%d failed: %s", c->cfg->amqp_host,
		 c->cfg->amqp_port, why);
	c->failing = 1;
	c->up = 0;
	if (c->ev_read)
		event_del(c->ev_read);
	event_del(c->ev_tick);
	event_del(c->ev_retry);
	event_active(c->ev_retry, EV_TIMEOUT, 0);
}

/* Did the watchdog cut the last call short? Then say so in the reason. */
static const char *cut(int fired)
{
	return fired ? " (the call was stuck: the broker stopped reading, "
		       "so the socket was shut down)"
		     : "";
}

static void notify_confirm(struct amq_conn *c, uint64_t tag,
			   enum amq_confirm outcome)
{
	if (c->cb.on_confirm)
		c->cb.on_confirm(c->ud, c->seq_base + tag, outcome);
}

static void lost_cb(void *arg, uint64_t tag)
{
	notify_confirm(arg, tag, AMQ_CONFIRM_LOST);
}

static void schedule_retry(struct amq_conn *c, const char *why)
{
	long ms = amq_backoff_ms(c->attempt, c->cfg->amqp_reconnect_max,
				 amq_xorshift64(&c->rng));
	if (c->attempt < 64)
		c->attempt++;
	if (why)
		log_warn("AMQP: %s; retrying in %.1f s", why, (double)ms / 1e3);
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
	evtimer_add(c->ev_retry, &tv);
}

/* Close the connection and tell the user; the caller schedules the retry. */
static void teardown(struct amq_conn *c)
{
	if (c->ev_read) {
		event_free(c->ev_read);
		c->ev_read = NULL;
	}
	event_del(c->ev_tick);
	if (c->conn) {
		/* No connection.close handshake: the socket is suspect, and
		** the broker treats a closed socket the same way. */
		amqp_destroy_connection(c->conn);
		c->conn = NULL;
	}
	c->fd = -1;
	c->up = 0;
	c->failing = 0;
	c->blocked = 0;
	c->nctag = 0;
	c->gen++;
	size_t lost = amq_win_drain(&c->win, lost_cb, c);
	if (lost)
		log_warn("AMQP: %zu publishes unconfirmed when the connection "
			 "died, reported lost", lost);
	if (c->announced) {
		c->announced = 0;
		if (c->cb.on_state)
			c->cb.on_state(c->ud, 0);
	}
}

/* Leave a region that may have called back; finish a deferred amq_free.
** The caller must not touch c afterwards. */
static void leave(struct amq_conn *c)
{
	if (--c->busy == 0 && c->freeing)
		destroy(c);
}

/* ---- connecting ------------------------------------------------------------ */

static int start_consumers(struct amq_conn *c, amqp_connection_state_t conn,
			   char *err, size_t errlen)
{
	amqp_basic_qos(conn, AMQ_CH_CONSUME, 0,
		       (uint16_t)c->cfg->amqp_prefetch, 0);
	int rc = amq_rpc_check(conn, AMQ_CH_CONSUME, "basic.qos", err, errlen,
			       NULL);
	c->nctag = 0;
	for (size_t i = 0; rc == GB_OK && amq_request_types[i]; i++) {
		char q[AMQ_NAME_MAX], what[AMQ_NAME_MAX + 32];
		if (i == AMQ_MAX_CONSUMERS ||
		    amq_queue_name(amq_request_types[i], q, sizeof(q)) != GB_OK) {
			snprintf(err, errlen, "too many or too long request "
					      "types");
			return GB_ERANGE;
		}
		amqp_basic_consume_ok_t *ok = amqp_basic_consume(
			conn, AMQ_CH_CONSUME, amqp_cstring_bytes(q),
			amqp_empty_bytes, 0, 0, 0, amqp_empty_table);
		snprintf(what, sizeof(what), "basic.consume %s", q);
		rc = amq_rpc_check(conn, AMQ_CH_CONSUME, what, err, errlen,
				   NULL);
		if (rc == GB_OK && ok) {
			size_t n = ok->consumer_tag.len < AMQ_NAME_MAX - 1
					   ? ok->consumer_tag.len
					   : AMQ_NAME_MAX - 1;
			memcpy(c->ctag[c->nctag], ok->consumer_tag.bytes, n);
			c->ctag[c->nctag][n] = '\0';
			c->nctag++;
		}
	}
	return rc;
}

static int open_channels(struct amq_conn *c, amqp_connection_state_t conn,
			 char *err, size_t errlen)
{
	int rc = amq_channel_setup(conn, AMQ_CH_CONSUME, 0, err, errlen);
	if (rc == GB_OK)
		rc = amq_declare_topology(conn, AMQ_CH_CONSUME, c->cfg, err,
					  errlen);
	if (rc == GB_OK && c->consume)
		rc = start_consumers(c, conn, err, errlen);
	if (rc == GB_OK)
		rc = amq_channel_setup(conn, AMQ_CH_PUBLISH, 1, err, errlen);
	return rc;
}

/* One connection attempt; 0 when up (and on_state(1) called). */
static int connect_once(struct amq_conn *c, char *err, size_t errlen)
{
	char name[200];
	snprintf(name, sizeof(name), "gridbroker-worker%s%s",
		 c->cfg->worker_id[0] ? " " : "", c->cfg->worker_id);
	amqp_connection_state_t conn = NULL;
	int rc = amq_connect(c->cfg, c->cfg->amqp_heartbeat, name, &conn, err,
			     errlen);
	if (rc != GB_OK)
		return rc;
	int fd = amqp_get_sockfd(conn);
	amq_guard_arm(&c->guard, fd, AMQ_SETUP_LIMIT_S);
	rc = open_channels(c, conn, err, errlen);
	int fired = amq_guard_disarm(&c->guard);
	if (rc == GB_OK)
		c->ev_read = event_new(c->base, fd, EV_READ | EV_PERSIST,
				       on_read, c);
	if (rc != GB_OK || c->ev_read == NULL) {
		if (rc == GB_OK) {
			snprintf(err, errlen, "out of memory");
			rc = GB_ENOMEM;
		} else if (fired) {
			size_t n = strlen(err);
			snprintf(err + n, errlen - n, "%s", cut(fired));
		}
		amqp_destroy_connection(conn);
		return rc;
	}
	/* Heartbeats flow only while the library runs: tick at a third of
	** the interval so one beat is sent, and a dead peer noticed, in time. */
	long tick_ms = c->cfg->amqp_heartbeat > 0
			       ? (long)c->cfg->amqp_heartbeat * 1000 / 3
			       : 5000;
	if (tick_ms < 100)
		tick_ms = 100;
	struct timeval tick = {tick_ms / 1000, (tick_ms % 1000) * 1000};
	event_add(c->ev_read, NULL);
	event_add(c->ev_tick, &tick);

	c->conn = conn;
	c->fd = fd;
	c->up = 1;
	c->blocked = 0;
	c->attempt = 0;
	c->seq_base = c->last_seq;
	amq_win_reset(&c->win);
	log_info("AMQP connected to %s:%d vhost %s (generation %llu, %zu "
		 "consumers)",
		 c->cfg->amqp_host, c->cfg->amqp_port, c->cfg->amqp_vhost,
		 (unsigned long long)c->gen, c->nctag);
	c->announced = 1;
	if (c->cb.on_state)
		c->cb.on_state(c->ud, 1);
	/* Deliveries that came in with the setup replies sit in the
	** library's buffer, where the read event cannot see them. */
	if (c->ev_read && !c->failing)
		event_active(c->ev_read, EV_READ, 0);
	return GB_OK;
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
	struct amq_conn *c = arg;
	(void)fd;
	(void)what;
	c->busy++;
	if (c->failing) {
		teardown(c);
		if (!c->freeing)
			schedule_retry(c, NULL);
	} else if (c->conn == NULL && !c->freeing) {
		char err[1024] = "";
		int rc = connect_once(c, err, sizeof(err));
		if (rc == GB_ECONFIG) {
			/* A configuration mismatch will not fix itself: log it
			** as an error and retry only at the slowest pace, in
			** case an operator deletes the queue meanwhile. */
			log_error("AMQP: %s", err);
			c->attempt = 64;
			schedule_retry(c, "topology does not match the "
					  "configuration");
		} else if (rc != GB_OK) {
			schedule_retry(c, err);
		}
	}
	leave(c);
}

/* ---- receiving --------------------------------------------------------------- */

static void copy_short(char *dst, amqp_bytes_t b)
{
	/* shortstr: at most 255 bytes; dst has 256. */
	size_t n = b.len > 255 ? 255 : b.len;
	if (n)
		memcpy(dst, b.bytes, n);
	dst[n] = '\0';
}

/*
** Read the header and body frames that follow the method in `f` (a
** basic.deliver or basic.return) into `msg`, which the caller destroys,
** under the watchdog like every library call that may write. 0, or
** GB_EAMQP after fail() naming `what`.
*/
static int read_content(struct amq_conn *c, const amqp_frame_t *f,
			const char *what, amqp_message_t *msg)
{
	amq_guard_arm(&c->guard, c->fd, AMQ_IO_LIMIT_S);
	amqp_rpc_reply_t r = amqp_read_message(c->conn, f->channel, msg, 0);
	int fired = amq_guard_disarm(&c->guard);
	if (r.reply_type == AMQP_RESPONSE_NORMAL)
		return GB_OK;
	char why[300];
	amq_reply_text(r, why, sizeof(why));
	fail(c, "reading %s: %s%s", what, why, cut(fired));
	return GB_EAMQP;
}

static void deliver(struct amq_conn *c, const amqp_frame_t *f)
{
	const amqp_basic_deliver_t *d = f->payload.method.decoded;
	char ex[256], rk[256];
	copy_short(ex, d->exchange);
	copy_short(rk, d->routing_key);
	uint64_t tag = d->delivery_tag;
	int redelivered = d->redelivered != 0;

	amqp_message_t msg;
	if (read_content(c, f, "a delivery", &msg) != GB_OK)
		return;
	struct amq_imported im;
	if (amq_import(&msg.properties, amqp_cstring_bytes(ex),
		       amqp_cstring_bytes(rk), &im) != GB_OK) {
		/* Hand it back rather than drop it; memory may be back by
		** the time it is redelivered. */
		log_error("AMQP: out of memory decoding a delivery; requeued");
		amqp_destroy_message(&msg);
		amq_nack(c, c->gen, tag, 1);
		return;
	}
	struct amq_delivery dv = {
		.gen = c->gen,
		.tag = tag,
		.exchange = im.exchange,
		.routing_key = im.routing_key,
		.redelivered = redelivered,
		.delivery_count = im.delivery_count,
		.props = im.props,
		.body = msg.body.bytes,
		.len = msg.body.len,
	};
	if (c->cb.on_delivery)
		c->cb.on_delivery(c->ud, &dv);
	amq_imported_free(&im);
	amqp_destroy_message(&msg);
}

struct confirm_ctx {
	struct amq_conn *c;
	enum amq_confirm outcome;
};

static void confirm_cb(void *arg, uint64_t tag)
{
	struct confirm_ctx *x = arg;
	notify_confirm(x->c, tag, x->outcome);
}

static void returned(struct amq_conn *c, const amqp_frame_t *f)
{
	const amqp_basic_return_t *m = f->payload.method.decoded;
	char ex[256], rk[256], text[256];
	copy_short(ex, m->exchange);
	copy_short(rk, m->routing_key);
	copy_short(text, m->reply_text);
	unsigned code = m->reply_code;
	/* The returned message's header and body follow; consume them. */
	amqp_message_t msg;
	if (read_content(c, f, "a returned message", &msg) != GB_OK)
		return;
	/* An event nobody subscribed to is normal; anything else unroutable
	** (a request type without a queue, a missing dead-letter queue) is a
	** deployment problem worth a warning. A reply (default exchange)
	** to a pilot that has gone is normal too. */
	if (strcmp(ex, AMQ_EX_EVENTS) == 0 || ex[0] == '\0')
		log_debug("AMQP: event %s had no subscriber (%u %s)", rk, code,
			  text);
	else
		log_warn("AMQP: broker returned a message to %s with key %s: "
			 "%u %s", ex, rk, code, text);
	amqp_destroy_message(&msg);
}

static void dispatch(struct amq_conn *c, const amqp_frame_t *f)
{
	if (f->frame_type != AMQP_FRAME_METHOD) {
		log_debug("AMQP: ignoring frame type %u on channel %u",
			  (unsigned)f->frame_type, (unsigned)f->channel);
		return;
	}
	const amqp_method_t *m = &f->payload.method;
	switch (m->id) {
	case AMQP_BASIC_DELIVER_METHOD:
		deliver(c, f);
		break;
	case AMQP_BASIC_ACK_METHOD:
	case AMQP_BASIC_NACK_METHOD: {
		if (f->channel != AMQ_CH_PUBLISH)
			break;
		uint64_t tag;
		int multiple;
		struct confirm_ctx x = {c, AMQ_CONFIRM_ACK};
		if (!amq_confirm_read(m, &tag, &multiple)) {
			x.outcome = AMQ_CONFIRM_NACK;
			log_warn("AMQP: broker refused publish tag %llu%s",
				 (unsigned long long)tag,
				 multiple ? " and earlier" : "");
		}
		amq_win_confirm(&c->win, tag, multiple, confirm_cb, &x);
		break;
	}
	case AMQP_BASIC_RETURN_METHOD:
		returned(c, f);
		break;
	case AMQP_BASIC_CANCEL_METHOD: {
		const amqp_basic_cancel_t *m2 = m->decoded;
		/* consumer_cancel_notify: the queue went away under us.
		** Reconnecting redeclares it and consumes again. */
		fail(c, "broker cancelled consumer %.*s (queue deleted?)",
		     (int)m2->consumer_tag.len,
		     (const char *)m2->consumer_tag.bytes);
		break;
	}
	case AMQP_CONNECTION_BLOCKED_METHOD: {
		const amqp_connection_blocked_t *b = m->decoded;
		c->blocked = 1;
		log_warn("AMQP: broker blocks publishing (%.*s); holding "
			 "publishes",
			 (int)b->reason.len, (const char *)b->reason.bytes);
		break;
	}
	case AMQP_CONNECTION_UNBLOCKED_METHOD:
		c->blocked = 0;
		log_info("AMQP: broker unblocked publishing");
		break;
	case AMQP_CHANNEL_CLOSE_METHOD: {
		const amqp_channel_close_t *cc = m->decoded;
		fail(c, "broker closed channel %u: %u %.*s",
		     (unsigned)f->channel, (unsigned)cc->reply_code,
		     (int)cc->reply_text.len,
		     (const char *)cc->reply_text.bytes);
		break;
	}
	case AMQP_CONNECTION_CLOSE_METHOD: {
		const amqp_connection_close_t *cc = m->decoded;
		char text[256];
		copy_short(text, cc->reply_text);
		unsigned code = cc->reply_code;
		amqp_connection_close_ok_t ok = {0};
		amq_guard_arm(&c->guard, c->fd, AMQ_IO_LIMIT_S);
		amqp_send_method(c->conn, 0, AMQP_CONNECTION_CLOSE_OK_METHOD,
				 &ok);
		amq_guard_disarm(&c->guard);
		fail(c, "broker closed the connection: %u %s", code, text);
		break;
	}
	default:
		log_debug("AMQP: ignoring %s on channel %u",
			  amqp_method_name(m->id), (unsigned)f->channel);
		break;
	}
}

/*
** Read and dispatch what is there, without waiting. Called from the read
** event, the tick, and by hand after anything that may have left frames in
** the library's buffer.
*/
static void pump(struct amq_conn *c)
{
	if (c->conn == NULL || c->failing || c->freeing)
		return;
	c->busy++;
	int n = 0, delivered = 0;
	while (c->conn && !c->failing && !c->freeing) {
		if (n++ == AMQ_PUMP_BUDGET) {
			/* Yield to the other events; what is buffered in the
			** library would not wake the read event, so wake it. */
			event_active(c->ev_read, EV_READ, 0);
			break;
		}
		amqp_frame_t f;
		struct timeval zero = {0, 0};
		amq_guard_arm(&c->guard, c->fd, AMQ_IO_LIMIT_S);
		int st = amqp_simple_wait_frame_noblock(c->conn, &f, &zero);
		int fired = amq_guard_disarm(&c->guard);
		if (st == AMQP_STATUS_TIMEOUT)
			break;
		if (st != AMQP_STATUS_OK) {
			fail(c, "%s%s", amqp_error_string2(st), cut(fired));
			break;
		}
		if (f.frame_type == AMQP_FRAME_METHOD &&
		    f.payload.method.id == AMQP_BASIC_DELIVER_METHOD)
			delivered = 1;
		dispatch(c, &f);
		if (c->conn && !c->failing)
			amqp_maybe_release_buffers(c->conn);
	}
	/* Also after a failure: what was batched must be settled (the batch
	** handler sees the connection down and lets the broker redeliver). */
	if (delivered && !c->freeing && c->cb.on_idle)
		c->cb.on_idle(c->ud);
	leave(c);
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	pump(arg);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	pump(arg);
}

/* ---- interface ------------------------------------------------------------------ */

struct amq_conn *amq_new(struct event_base *base, const struct gb_config *cfg,
			 const struct amq_callbacks *cb, void *ud)
{
	if (base == NULL || cfg == NULL)
		return NULL;
	struct amq_conn *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->base = base;
	c->cfg = cfg;
	if (cb)
		c->cb = *cb;
	c->ud = ud;
	c->fd = -1;
	c->gen = 1;
	c->consume = 1;
	c->window_limit = cfg->amqp_confirm_window > 0
				  ? (size_t)cfg->amqp_confirm_window
				  : 1;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	c->rng = ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^
		 ((uint64_t)getpid() << 16) ^ (uint64_t)(uintptr_t)c;
	if (c->rng == 0)
		c->rng = 0x9e3779b97f4a7c15ULL;
	/* Out-of-order confirms can leave a hole at the low end while later
	** tags complete, so the ring spans more than the window itself. */
	if (amq_win_init(&c->win, c->window_limit * 2) != GB_OK)
		goto fail;
	c->ev_tick = event_new(base, -1, EV_PERSIST, on_tick, c);
	c->ev_retry = evtimer_new(base, on_retry, c);
	if (c->ev_tick == NULL || c->ev_retry == NULL)
		goto fail;
	if (amq_guard_start(&c->guard) != GB_OK)
		goto fail;
	return c;
fail:
	if (c->ev_tick)
		event_free(c->ev_tick);
	if (c->ev_retry)
		event_free(c->ev_retry);
	amq_win_free(&c->win);
	free(c);
	return NULL;
}

int amq_start(struct amq_conn *c)
{
	if (c == NULL)
		return GB_EINVAL;
	if (c->started)
		return GB_OK;
	c->started = 1;
	struct timeval now = {0, 0};
	return evtimer_add(c->ev_retry, &now) == 0 ? GB_OK : GB_ENOMEM;
}

int amq_is_up(const struct amq_conn *c)
{
	return c && c->up && !c->failing;
}

uint64_t amq_generation(const struct amq_conn *c)
{
	return c ? c->gen : 0;
}

size_t amq_unconfirmed(const struct amq_conn *c)
{
	return c ? c->win.pending : 0;
}

int amq_sockfd(const struct amq_conn *c)
{
	return c && c->conn ? c->fd : -1;
}

int amq_publish(struct amq_conn *c, const char *exchange, const char *rkey,
		const struct amq_props *props, const void *body, size_t len,
		uint64_t *seq)
{
	if (c == NULL || exchange == NULL || rkey == NULL ||
	    (body == NULL && len > 0))
		return GB_EINVAL;
	if (!amq_is_up(c))
		return GB_EAMQPGONE;
	/* Holding back is the only safe answer to a blocked broker: a send
	** now would sit in the library until the broker reads again. */
	if (c->blocked || c->win.pending >= c->window_limit ||
	    !amq_win_has_room(&c->win))
		return GB_ETIMEOUT;
	int st = AMQP_STATUS_OK, fired = 0;
	int rc = amq_publish_guarded(c->conn, AMQ_CH_PUBLISH, &c->guard, c->fd,
				     exchange, rkey, props, body, len, &st,
				     &fired);
	if (rc == GB_EAMQP)
		fail(c, "publish to %s: %s%s", exchange, amqp_error_string2(st),
		     cut(fired));
	if (rc != GB_OK)
		return rc;
	uint64_t tag = amq_win_push(&c->win);
	c->last_seq = c->seq_base + tag;
	if (seq)
		*seq = c->last_seq;
	return GB_OK;
}

static int settle(struct amq_conn *c, uint64_t gen, uint64_t tag, int ack,
		  int requeue)
{
	if (c == NULL)
		return GB_EINVAL;
	/* A delivery of an earlier connection: the broker requeued it when
	** that connection died, and its tag means nothing (or something
	** else) on this one. */
	if (gen != c->gen)
		return GB_OK;
	if (c->conn == NULL || c->failing)
		return GB_EAMQPGONE;
	amq_guard_arm(&c->guard, c->fd, AMQ_IO_LIMIT_S);
	int st = ack ? amqp_basic_ack(c->conn, AMQ_CH_CONSUME, tag, 0)
		     : amqp_basic_nack(c->conn, AMQ_CH_CONSUME, tag, 0,
				       requeue != 0);
	int fired = amq_guard_disarm(&c->guard);
	if (st != AMQP_STATUS_OK) {
		fail(c, "%s: %s%s", ack ? "ack" : "nack",
		     amqp_error_string2(st), cut(fired));
		return GB_EAMQP;
	}
	return GB_OK;
}

int amq_ack(struct amq_conn *c, uint64_t gen, uint64_t tag)
{
	return settle(c, gen, tag, 1, 0);
}

int amq_nack(struct amq_conn *c, uint64_t gen, uint64_t tag, int requeue)
{
	return settle(c, gen, tag, 0, requeue);
}

int amq_cancel_consumers(struct amq_conn *c)
{
	if (c == NULL)
		return GB_EINVAL;
	c->consume = 0;
	if (c->conn == NULL || c->failing)
		return GB_OK;
	int rc = GB_OK;
	for (size_t i = 0; i < c->nctag && rc == GB_OK; i++) {
		char err[512], what[AMQ_NAME_MAX + 32];
		snprintf(what, sizeof(what), "basic.cancel %s", c->ctag[i]);
		amq_guard_arm(&c->guard, c->fd, AMQ_IO_LIMIT_S);
		amqp_basic_cancel(c->conn, AMQ_CH_CONSUME,
				  amqp_cstring_bytes(c->ctag[i]));
		rc = amq_rpc_check(c->conn, AMQ_CH_CONSUME, what, err,
				   sizeof(err), NULL);
		int fired = amq_guard_disarm(&c->guard);
		if (rc != GB_OK) {
			fail(c, "%s%s", err, cut(fired));
			return GB_EAMQP;
		}
	}
	log_info("AMQP: stopped %zu consumers", c->nctag);
	c->nctag = 0;
	/* Deliveries that overtook the cancel-ok wait in the library. */
	if (c->ev_read)
		event_active(c->ev_read, EV_READ, 0);
	return rc;
}

static void destroy(struct amq_conn *c)
{
	if (c->conn) {
		/* A healthy connection gets a proper close; a failing one is
		** just dropped. */
		if (c->announced && !c->failing) {
			amq_guard_arm(&c->guard, c->fd, AMQ_IO_LIMIT_S);
			amqp_connection_close(c->conn, AMQP_REPLY_SUCCESS);
			amq_guard_disarm(&c->guard);
		}
		amqp_destroy_connection(c->conn);
	}
	if (c->ev_read)
		event_free(c->ev_read);
	event_free(c->ev_tick);
	event_free(c->ev_retry);
	amq_guard_stop(&c->guard);
	amq_win_free(&c->win);
	free(c);
}

void amq_free(struct amq_conn *c)
{
	if (c == NULL || c->freeing)
		return;
	c->freeing = 1;
	/* Publishing from the callbacks below must fail, not slip past the
	** drain. */
	c->up = 0;
	/* The caller's bookkeeping must not keep waiting for confirms that
	** can no longer come; after this, no callback runs again. */
	amq_win_drain(&c->win, lost_cb, c);
	memset(&c->cb, 0, sizeof(c->cb));
	if (c->busy == 0)
		destroy(c);
}
