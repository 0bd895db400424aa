/*
** amqp.h — the RabbitMQ side: topology, an event-loop driven consumer and
** confirmed publisher for the worker, and a small blocking client for the CLI
** and the tests.
**
** rabbitmq-c 0.11 (Debian 12) is synchronous, has no automatic recovery and
** sends heartbeats only while one of its calls runs. The worker therefore
** drives one connection from libevent: the socket's EV_READ event and a timer
** at a fraction of the heartbeat both drain frames with a zero timeout
** (amqp_simple_wait_frame_noblock), so heartbeats flow and a dead peer is
** noticed. Channel 1 consumes (manual ack, prefetch); channel 2 publishes in
** confirm mode. On any connection error the module tears the connection down,
** reports every unconfirmed publish as lost, and reconnects with exponential
** backoff and jitter, redeclaring the topology and consumers. Deliveries
** carry the connection generation: an ack for a delivery of an earlier
** connection is dropped (the broker has already requeued it).
**
** Topology (declared idempotently by both the worker and the CLI):
**   exchange gridbroker.requests (topic, durable)
**   exchange gridbroker.events   (topic, durable)
**   exchange gridbroker.dlx      (topic, durable) -> queue gridbroker.dead ("#")
**   per request type R (amq_request_types[]): durable queue gridbroker.R
**     bound to gridbroker.requests with key R, x-queue-type from config,
**     x-dead-letter-exchange gridbroker.dlx; for quorum also
**     x-delivery-limit and at-least-once dead-lettering
**     (x-dead-letter-strategy at-least-once, which needs x-overflow
**     reject-publish): the default, at-most-once, drops a message the
**     dead-letter queue cannot take at that instant, such as during a
**     broker restart, and a request would vanish without a trace.
*/
#ifndef GB_AMQP_H
#define GB_AMQP_H

#include <stddef.h>
#include <stdint.h>

#include "base/config.h"

struct event_base;

#define AMQ_EX_REQUESTS "gridbroker.requests"
#define AMQ_EX_EVENTS "gridbroker.events"
#define AMQ_EX_DLX "gridbroker.dlx"
#define AMQ_Q_DEAD "gridbroker.dead"
#define AMQ_ERROR_HEADER "x-gridbroker-error"

/* The request types a worker consumes; NULL-terminated. */
extern const char *const amq_request_types[];

/* Message properties we read and write. Unset strings are NULL. */
struct amq_props {
	const char *message_id;
	const char *type;           /* e.g. "task.assigned" */
	const char *content_type;   /* "application/msgpack" */
	const char *correlation_id;
	const char *reply_to;
	/* Per-message TTL, milliseconds as a decimal string ("30000"): the
	** broker drops (dead-letters, reason "expired") a request that waited
	** longer in its queue. NULL = none. */
	const char *expiration;
	/* The publishing RabbitMQ user. RabbitMQ refuses a publish whose
	** user_id is not the connection's own user (validated user-id,
	** PRECONDITION_FAILED), so on a delivery it names the account that
	** sent it, or is NULL when the sender did not set it. The worker
	** checks pilot.match against it ([dirac] owner_check). Publishing,
	** NULL and "" send none (amq_sync_publish fills in NULL with the
	** configured user; "" keeps it unset). */
	const char *user_id;
	int persistent;             /* delivery_mode 2 */
	/* string-valued headers, NULL-terminated pairs {k, v, k, v, ..., NULL} */
	const char *const *headers;
};

/* One delivery, valid only during the on_delivery callback. */
struct amq_delivery {
	uint64_t gen;          /* connection generation */
	uint64_t tag;          /* delivery tag on the consume channel */
	const char *exchange;
	const char *routing_key;
	int redelivered;
	long delivery_count;   /* quorum x-delivery-count, 0 if absent */
	struct amq_props props;
	const void *body;
	size_t len;
};

enum amq_confirm {
	AMQ_CONFIRM_ACK = 0, /* broker took responsibility */
	AMQ_CONFIRM_NACK,    /* broker refused (internal error) */
	AMQ_CONFIRM_LOST,    /* connection died before the confirm */
};

struct amq_callbacks {
	/* A message arrived; call amq_ack/amq_nack with (d->gen, d->tag) now
	** or later. Copy what you keep: d is invalid after the return. */
	void (*on_delivery)(void *ud, const struct amq_delivery *d);
	/* Outcome of a publish identified by the seq amq_publish returned. */
	void (*on_confirm)(void *ud, uint64_t seq, enum amq_confirm outcome);
	/* Connected (consumers running) or lost. */
	void (*on_state)(void *ud, int up);
	/* Optional: the frames that were waiting have been read and at least
	** one delivery was handed over; work batched from those deliveries
	** (group commit) can run now. */
	void (*on_idle)(void *ud);
};

struct amq_conn;

/*
** Create the connection object; nothing is opened until amq_start. `cfg`
** must outlive the object. Returns NULL on allocation failure.
*/
struct amq_conn *amq_new(struct event_base *base, const struct gb_config *cfg,
			 const struct amq_callbacks *cb, void *ud);

/* Begin connecting (asynchronously, retried with backoff until amq_free). */
int amq_start(struct amq_conn *c);

/* 1 when connected with consumers running. */
int amq_is_up(const struct amq_conn *c);

/* Current connection generation (increments on every reconnect). */
uint64_t amq_generation(const struct amq_conn *c);

/* Number of publishes waiting for a confirm. */
size_t amq_unconfirmed(const struct amq_conn *c);

/*
** Publish on the confirm channel. On success *seq identifies the publish in
** on_confirm. Returns GB_EAMQPGONE when not connected, GB_ETIMEOUT when the
** confirm window is full (caller retries later), GB_EAMQP on a send error
** (the connection is then torn down and reconnected).
*/
int amq_publish(struct amq_conn *c, const char *exchange, const char *rkey,
		const struct amq_props *props, const void *body, size_t len,
		uint64_t *seq);

/* Ack / nack a delivery; silently ignored when gen is not current. */
int amq_ack(struct amq_conn *c, uint64_t gen, uint64_t tag);
int amq_nack(struct amq_conn *c, uint64_t gen, uint64_t tag, int requeue);

/* Stop consuming (graceful drain); publishing and acks keep working. */
int amq_cancel_consumers(struct amq_conn *c);

/* Close the connection and free everything. */
void amq_free(struct amq_conn *c);

/* ---- blocking client for the CLI and the tests -------------------------- */

struct amq_sync;

/* A received message; owns its copies, release with amq_message_free. */
struct amq_message {
	char *exchange;
	char *routing_key;
	char *message_id;
	char *type;
	char *correlation_id;
	char *error_header; /* value of x-gridbroker-error, if any */
	char *death_reason; /* x-first-death-reason the broker sets on a
			       message it dead-lettered itself ("expired",
			       "rejected", "delivery_limit"), if any */
	uint64_t tag;
	void *body;
	size_t len;
};

/* Connect, log in, open a channel, declare the topology (unless [amqp]
** declare is 0). NULL on failure with the reason in err. */
struct amq_sync *amq_sync_open(const struct gb_config *cfg, char *err,
			       size_t errlen);

/* Publish and wait up to timeout_ms for the broker's confirm. The message
** carries user_id = [amqp] user unless props give one. */
int amq_sync_publish(struct amq_sync *s, const char *exchange,
		     const char *rkey, const struct amq_props *props,
		     const void *body, size_t len, int timeout_ms);

/* Declare an exclusive, auto-delete queue bound to `exchange` with each of
** the NULL-terminated binding keys, and start consuming it (no-ack). */
int amq_sync_subscribe(struct amq_sync *s, const char *exchange,
		       const char *const *keys);

/*
** An RPC: consume the direct reply-to pseudo-queue "amq.rabbitmq.reply-to"
** (no-ack, on first use), publish to exchange/rkey with reply_to set to it
** and a fresh correlation_id (unless props give them), and wait up to
** timeout_ms for the reply carrying that correlation id (replies with
** another id, late answers to earlier calls, are dropped). *reply owns its
** copies (amq_message_free). Returns 0, GB_ETIMEOUT, or GB_EAMQP. Do not
** mix with amq_sync_next on the same connection while a call waits.
*/
int amq_sync_rpc(struct amq_sync *s, const char *exchange, const char *rkey,
		 const struct amq_props *props, const void *body, size_t len,
		 int timeout_ms, struct amq_message *reply);

/* Wait up to timeout_ms for the next subscribed message: 0, GB_ETIMEOUT. */
int amq_sync_next(struct amq_sync *s, struct amq_message *out, int timeout_ms);

/* basic.get one message from `queue` (0, GB_ENOTFOUND when empty); then
** amq_sync_settle it: ack (remove) or nack with requeue (leave). */
int amq_sync_get(struct amq_sync *s, const char *queue,
		 struct amq_message *out);
int amq_sync_settle(struct amq_sync *s, uint64_t tag, int remove);

/* Messages ready in `queue` (passive declare), or a negative error. */
long amq_sync_queue_depth(struct amq_sync *s, const char *queue);

void amq_message_free(struct amq_message *m);
void amq_sync_close(struct amq_sync *s);

/* What to print for error `rc` of the last publish or RPC on `s` (may be
** NULL): the broker's words when it closed the channel or the connection
** over it (e.g. "broker closed the channel: 403 ACCESS_REFUSED - access to
** topic 'task.broker' ..."), else gb_strerror(rc). */
const char *amq_sync_why(const struct amq_sync *s, int rc);

#endif
