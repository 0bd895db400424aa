/*
** itc_amqp.c — the AMQP module against a real RabbitMQ.
**
** Reads the configuration named by $GB_CONFIG (scripts/services writes
** one). Covers both clients: the blocking one (requests land in their
** queue, events reach a subscriber, dead letters keep their error header,
** unroutable publishes and missing queues are reported) and the
** event-loop one (confirms for a burst of publishes, consuming with manual
** ack, queue-level dead-lettering on a reject and, at the delivery
** limit, by the broker itself, and recovery from a killed
** socket: unconfirmed publishes reported lost, the state going down and up
** again, and an ack of the dead connection's delivery ignored).
**
** The tests share the broker's durable queues with whatever else runs
** there, so each one empties the queues it uses before and after itself,
** and message ids carry the process id to tell our messages apart.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "amqp/amqp_internal.h"
#include "base/config.h"
#include "gb_error.h"
#include "base/log.h"

static struct gb_config g_cfg;
static char g_task_queue[AMQ_NAME_MAX];

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static void make_id(char *buf, size_t len, const char *what, int i)
{
	snprintf(buf, len, "itc-amqp-%ld-%s-%d", (long)getpid(), what, i);
}

static struct amq_sync *open_sync(void)
{
	char err[512] = "";
	struct amq_sync *s = amq_sync_open(&g_cfg, err, sizeof(err));
	if (s == NULL)
		fail_msg("amq_sync_open: %s", err);
	return s;
}

/* The next message of gridbroker.dead, waiting up to 5 s for it. */
static void get_dead_letter(struct amq_sync *s, struct amq_message *m)
{
	int rc = GB_ENOTFOUND;
	for (int i = 0; i < 50 && rc == GB_ENOTFOUND; i++) {
		rc = amq_sync_get(s, AMQ_Q_DEAD, m);
		if (rc == GB_ENOTFOUND)
			sleep_ms(100);
	}
	assert_int_equal(rc, GB_OK);
}

/* Take every message out of `queue`; returns how many there were. */
static long purge(struct amq_sync *s, const char *queue)
{
	long n = 0;
	struct amq_message m;
	while (amq_sync_get(s, queue, &m) == GB_OK) {
		assert_int_equal(amq_sync_settle(s, m.tag, 1), GB_OK);
		amq_message_free(&m);
		n++;
	}
	return n;
}

static void purge_all(void)
{
	struct amq_sync *s = open_sync();
	purge(s, g_task_queue);
	purge(s, AMQ_Q_DEAD);
	amq_sync_close(s);
}

/* Poll the depth until it equals `want` (stats may trail a confirm). */
static long wait_depth(struct amq_sync *s, const char *queue, long want)
{
	long d = -1;
	for (int i = 0; i < 50; i++) {
		d = amq_sync_queue_depth(s, queue);
		if (d == want)
			break;
		sleep_ms(100);
	}
	return d;
}

static int group_setup(void **state)
{
	(void)state;
	const char *path = getenv("GB_CONFIG");
	if (path == NULL || *path == '\0') {
		fprintf(stderr, "itc_amqp: GB_CONFIG is not set\n");
		return -1;
	}
	char err[2048] = "";
	if (cfg_load(path, &g_cfg, err, sizeof(err)) != GB_OK) {
		fprintf(stderr, "itc_amqp: %s\n", err);
		return -1;
	}
	log_init("itc_amqp", LOG_LVL_INFO);
	if (amq_queue_name("task.broker", g_task_queue,
			   sizeof(g_task_queue)) != GB_OK)
		return -1;
	return 0;
}

/* ---- blocking client ---------------------------------------------------------- */

static void test_sync_request_lands_in_its_queue(void **state)
{
	(void)state;
	purge_all();
	struct amq_sync *s = open_sync();
	char id[96];
	make_id(id, sizeof(id), "req", 1);
	static const unsigned char body[] = {0x81, 0xa1, 'a', 0x01};
	struct amq_props p = {
		.message_id = id,
		.type = "task.broker",
		.content_type = "application/msgpack",
		.persistent = 1,
	};
	assert_int_equal(amq_sync_publish(s, AMQ_EX_REQUESTS, "task.broker", &p,
					  body, sizeof(body), 5000),
			 GB_OK);
	assert_int_equal(wait_depth(s, g_task_queue, 1), 1);

	struct amq_message m;
	assert_int_equal(amq_sync_get(s, g_task_queue, &m), GB_OK);
	assert_string_equal(m.exchange, AMQ_EX_REQUESTS);
	assert_string_equal(m.routing_key, "task.broker");
	assert_string_equal(m.message_id, id);
	assert_string_equal(m.type, "task.broker");
	assert_null(m.error_header);
	assert_int_equal(m.len, sizeof(body));
	assert_memory_equal(m.body, body, sizeof(body));
	assert_int_equal(amq_sync_settle(s, m.tag, 1), GB_OK);
	amq_message_free(&m);
	assert_int_equal(wait_depth(s, g_task_queue, 0), 0);
	assert_int_equal(amq_sync_get(s, g_task_queue, &m), GB_ENOTFOUND);

	/* settle without remove leaves the message where it was. */
	assert_int_equal(amq_sync_publish(s, AMQ_EX_REQUESTS, "task.broker", &p,
					  body, sizeof(body), 5000),
			 GB_OK);
	assert_int_equal(amq_sync_get(s, g_task_queue, &m), GB_OK);
	assert_int_equal(amq_sync_settle(s, m.tag, 0), GB_OK);
	amq_message_free(&m);
	assert_int_equal(wait_depth(s, g_task_queue, 1), 1);

	/* No queue for the key: the broker returns it, we say so. */
	assert_int_equal(amq_sync_publish(s, AMQ_EX_REQUESTS, "itc.no.such.type",
					  &p, body, sizeof(body), 5000),
			 GB_ENOTFOUND);
	/* A missing queue is not found, and the client stays usable. */
	assert_int_equal(amq_sync_queue_depth(s, "gridbroker.itc.no.such.queue"),
			 GB_ENOTFOUND);
	assert_int_equal(amq_sync_get(s, "gridbroker.itc.no.such.queue", &m),
			 GB_ENOTFOUND);
	assert_int_equal(amq_sync_queue_depth(s, g_task_queue), 1);
	assert_int_equal(purge(s, g_task_queue), 1);
	amq_sync_close(s);
}

static void test_sync_events_reach_a_subscriber(void **state)
{
	(void)state;
	struct amq_sync *s = open_sync();
	const char *keys[] = {"itc.event.#", NULL};
	assert_int_equal(amq_sync_subscribe(s, AMQ_EX_EVENTS, keys), GB_OK);
	assert_int_equal(amq_sync_subscribe(s, AMQ_EX_EVENTS, keys), GB_ESTATE);

	/* Three publishes in a row: the later confirm waits read the earlier
	** deliveries, which must be kept, in order, for amq_sync_next. */
	char ids[3][96];
	for (int i = 0; i < 3; i++) {
		make_id(ids[i], sizeof(ids[i]), "event", i);
		char body[32];
		int n = snprintf(body, sizeof(body), "event %d", i);
		struct amq_props p = {
			.message_id = ids[i],
			.type = "itc.event",
			.correlation_id = "corr-7",
		};
		assert_int_equal(amq_sync_publish(s, AMQ_EX_EVENTS,
						  "itc.event.one", &p, body,
						  (size_t)n, 5000),
				 GB_OK);
	}
	for (int i = 0; i < 3; i++) {
		struct amq_message m;
		assert_int_equal(amq_sync_next(s, &m, 5000), GB_OK);
		char want[32];
		snprintf(want, sizeof(want), "event %d", i);
		assert_string_equal(m.exchange, AMQ_EX_EVENTS);
		assert_string_equal(m.routing_key, "itc.event.one");
		assert_string_equal(m.message_id, ids[i]);
		assert_string_equal(m.correlation_id, "corr-7");
		assert_int_equal(m.len, strlen(want));
		assert_memory_equal(m.body, want, m.len);
		amq_message_free(&m);
	}
	struct amq_message m;
	double t0 = now_ms();
	assert_int_equal(amq_sync_next(s, &m, 300), GB_ETIMEOUT);
	assert_true(now_ms() - t0 >= 250);
	/* A key outside the binding does not arrive (and is returned). */
	struct amq_props p = {.message_id = "x"};
	assert_int_equal(amq_sync_publish(s, AMQ_EX_EVENTS, "itc.other", &p,
					  "x", 1, 5000),
			 GB_ENOTFOUND);
	assert_int_equal(amq_sync_next(s, &m, 300), GB_ETIMEOUT);
	amq_sync_close(s);
}

static void test_sync_dead_letter_keeps_the_error_header(void **state)
{
	(void)state;
	purge_all();
	struct amq_sync *s = open_sync();
	char id[96];
	make_id(id, sizeof(id), "dead", 1);
	const char *hdr[] = {AMQ_ERROR_HEADER, "task_id: expected an integer",
			     "x-original-routing-key", "task.broker", NULL};
	struct amq_props p = {
		.message_id = id,
		.type = "task.broker",
		.content_type = "application/msgpack",
		.persistent = 1,
		.headers = hdr,
	};
	assert_int_equal(amq_sync_publish(s, AMQ_EX_DLX, "task.broker", &p,
					  "\xc1", 1, 5000),
			 GB_OK);
	struct amq_message m;
	get_dead_letter(s, &m);
	assert_string_equal(m.message_id, id);
	assert_string_equal(m.routing_key, "task.broker");
	assert_non_null(m.error_header);
	assert_string_equal(m.error_header, "task_id: expected an integer");
	assert_int_equal(amq_sync_settle(s, m.tag, 1), GB_OK);
	amq_message_free(&m);
	assert_int_equal(purge(s, AMQ_Q_DEAD), 0);
	amq_sync_close(s);
}

/* ---- event-loop client ---------------------------------------------------------- */

enum mode { ACK_ALL, REJECT_ALL, HOLD_ALL, REQUEUE_ALL };

#define MAXN 512

struct actx {
	struct amq_conn *c;
	enum mode mode;
	int states[16];
	int nstates;
	/* confirms by seq - first_seq */
	uint64_t first_seq;
	int outcome_count[MAXN];
	enum amq_confirm outcome[MAXN];
	int n_ack, n_nack, n_lost, n_stray;
	/* deliveries */
	int ndel;
	char ids[MAXN][96];
	uint64_t gens[MAXN], tags[MAXN];
	int redelivered[MAXN];
	long counts[MAXN];
	int settle_errors;
};

static void a_state(void *ud, int up)
{
	struct actx *x = ud;
	if (x->nstates < 16)
		x->states[x->nstates++] = up;
}

static void a_confirm(void *ud, uint64_t seq, enum amq_confirm outcome)
{
	struct actx *x = ud;
	if (seq < x->first_seq || seq - x->first_seq >= MAXN) {
		x->n_stray++;
		return;
	}
	size_t i = (size_t)(seq - x->first_seq);
	x->outcome_count[i]++;
	x->outcome[i] = outcome;
	if (outcome == AMQ_CONFIRM_ACK)
		x->n_ack++;
	else if (outcome == AMQ_CONFIRM_NACK)
		x->n_nack++;
	else
		x->n_lost++;
}

static void a_delivery(void *ud, const struct amq_delivery *d)
{
	struct actx *x = ud;
	if (x->ndel < MAXN) {
		int i = x->ndel++;
		snprintf(x->ids[i], sizeof(x->ids[i]), "%s",
			 d->props.message_id ? d->props.message_id : "");
		x->gens[i] = d->gen;
		x->tags[i] = d->tag;
		x->redelivered[i] = d->redelivered;
		x->counts[i] = d->delivery_count;
	}
	int rc = GB_OK;
	if (x->mode == ACK_ALL)
		rc = amq_ack(x->c, d->gen, d->tag);
	else if (x->mode == REJECT_ALL)
		rc = amq_nack(x->c, d->gen, d->tag, 0);
	else if (x->mode == REQUEUE_ALL)
		rc = amq_nack(x->c, d->gen, d->tag, 1);
	if (rc != GB_OK)
		x->settle_errors++;
}

static const struct amq_callbacks a_cb = {
	.on_delivery = a_delivery,
	.on_confirm = a_confirm,
	.on_state = a_state,
};

static void wake(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
}

/* Run the loop until pred(x) holds or timeout_ms pass; returns pred(x). */
static int run_until(struct event_base *base, int (*pred)(struct actx *),
		     struct actx *x, int timeout_ms)
{
	struct event *tick = event_new(base, -1, EV_PERSIST, wake, NULL);
	struct timeval tv = {0, 20000};
	event_add(tick, &tv);
	double end = now_ms() + timeout_ms;
	while (!(pred && pred(x)) && now_ms() < end)
		event_base_loop(base, EVLOOP_ONCE);
	event_free(tick);
	return pred ? pred(x) : 1;
}

static int never(struct actx *x)
{
	(void)x;
	return 0;
}

static int is_up(struct actx *x)
{
	return amq_is_up(x->c);
}

static int g_want;

static int all_confirmed_and_delivered(struct actx *x)
{
	return x->n_ack + x->n_nack + x->n_lost >= g_want && x->ndel >= g_want;
}

static int delivered(struct actx *x)
{
	return x->ndel >= g_want;
}

static int went_down_and_up(struct actx *x)
{
	return x->nstates >= 3;
}

static int confirmed(struct actx *x)
{
	return x->n_ack + x->n_nack + x->n_lost >= g_want;
}

/* Publish n messages through the event-loop client, waiting out a full
** confirm window; ids are make_id(what, i). */
static void publish_n(struct event_base *base, struct actx *x,
		      const char *exchange, const char *key, const char *what,
		      int n)
{
	for (int i = 0; i < n;) {
		char id[96], body[32];
		make_id(id, sizeof(id), what, i);
		int len = snprintf(body, sizeof(body), "%d", i);
		struct amq_props p = {
			.message_id = id,
			.type = "task.broker",
			.content_type = "application/msgpack",
			.persistent = 1,
		};
		uint64_t seq = 0;
		int rc = amq_publish(x->c, exchange, key, &p, body, (size_t)len,
				     &seq);
		if (rc == GB_ETIMEOUT) {
			event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
			continue;
		}
		assert_int_equal(rc, GB_OK);
		if (x->first_seq == 0)
			x->first_seq = seq;
		/* Sequence numbers are dense and increasing. */
		assert_true(seq == x->first_seq + (uint64_t)i);
		i++;
	}
}

/* One task.broker request with message id `id`, through the blocking
** client, confirmed. */
static void publish_request(const char *id, const char *body)
{
	struct amq_sync *s = open_sync();
	struct amq_props p = {.message_id = id, .persistent = 1};
	assert_int_equal(amq_sync_publish(s, AMQ_EX_REQUESTS, "task.broker", &p,
					  body, strlen(body), 5000),
			 GB_OK);
	amq_sync_close(s);
}

/* An event-loop client consuming in `mode`, started (not yet up). */
static struct actx *start_ctx(struct event_base *base, enum mode mode)
{
	struct actx *x = calloc(1, sizeof(*x));
	assert_non_null(x);
	x->mode = mode;
	x->c = amq_new(base, &g_cfg, &a_cb, x);
	assert_non_null(x->c);
	assert_int_equal(amq_start(x->c), GB_OK);
	return x;
}

static struct actx *new_ctx(struct event_base *base)
{
	struct actx *x = start_ctx(base, ACK_ALL);
	assert_true(run_until(base, is_up, x, 20000));
	assert_int_equal(x->nstates, 1);
	assert_int_equal(x->states[0], 1);
	return x;
}

static void test_async_confirms_and_consumes(void **state)
{
	(void)state;
	purge_all();
	struct event_base *base = event_base_new();
	assert_non_null(base);
	struct actx *x = new_ctx(base);
	uint64_t gen = amq_generation(x->c);

	/* A burst: every publish confirmed once, positively, and every
	** message delivered back to us (we consume the same queue). */
	enum { N = 200 };
	g_want = N;
	publish_n(base, x, AMQ_EX_REQUESTS, "task.broker", "burst", N);
	assert_true(run_until(base, all_confirmed_and_delivered, x, 30000));
	assert_int_equal(x->n_ack, N);
	assert_int_equal(x->n_nack + x->n_lost + x->n_stray, 0);
	for (int i = 0; i < N; i++)
		assert_int_equal(x->outcome_count[i], 1);
	assert_int_equal(amq_unconfirmed(x->c), 0);
	assert_int_equal(x->ndel, N);
	static char seen[N];
	memset(seen, 0, sizeof(seen));
	for (int i = 0; i < N; i++) {
		int k = -1;
		char pre[96];
		make_id(pre, sizeof(pre), "burst", 0);
		pre[strlen(pre) - 1] = '\0'; /* "...-burst-" */
		assert_true(strncmp(x->ids[i], pre, strlen(pre)) == 0);
		k = atoi(x->ids[i] + strlen(pre));
		assert_true(k >= 0 && k < N);
		assert_int_equal(seen[k], 0);
		seen[k] = 1;
		assert_true(x->gens[i] == gen);
		assert_int_equal(x->redelivered[i], 0);
	}
	assert_int_equal(x->settle_errors, 0);
	assert_int_equal(x->nstates, 1); /* never dropped */

	/* A rejected request goes to the dead-letter queue through the
	** queue's own x-dead-letter-exchange. */
	x->mode = REJECT_ALL;
	int before = x->ndel;
	g_want = before + 1;
	uint64_t first = x->first_seq;
	x->first_seq = 0;
	publish_n(base, x, AMQ_EX_REQUESTS, "task.broker", "reject", 1);
	assert_true(x->first_seq == first + N);
	assert_true(run_until(base, delivered, x, 10000));
	amq_free(x->c);
	event_base_free(base);

	struct amq_sync *s = open_sync();
	assert_int_equal(wait_depth(s, g_task_queue, 0), 0);
	struct amq_message m;
	get_dead_letter(s, &m);
	char id[96];
	make_id(id, sizeof(id), "reject", 0);
	assert_string_equal(m.message_id, id);
	assert_string_equal(m.routing_key, "task.broker");
	assert_int_equal(amq_sync_settle(s, m.tag, 1), GB_OK);
	amq_message_free(&m);
	amq_sync_close(s);
	assert_int_equal(x->settle_errors, 0);
	free(x);
	purge_all();
}

static void test_async_recovers_from_a_dead_socket(void **state)
{
	(void)state;
	purge_all();
	char id[96];
	make_id(id, sizeof(id), "held", 0);
	publish_request(id, "held");

	struct event_base *base = event_base_new();
	assert_non_null(base);
	struct actx *x = start_ctx(base, HOLD_ALL);
	g_want = 1;
	assert_true(run_until(base, delivered, x, 20000));
	assert_string_equal(x->ids[0], id);
	uint64_t old_gen = x->gens[0], old_tag = x->tags[0];
	assert_true(old_gen == amq_generation(x->c));

	/* Publishes in flight when the socket dies: kill it right after
	** sending, before the broker (which syncs the queue first) confirms
	** them all. They go to the dead-letter queue, which nobody consumes. */
	enum { K = 50 };
	publish_n(base, x, AMQ_EX_DLX, "itc.lost", "lost", K);
	assert_true(amq_unconfirmed(x->c) > 0);
	int fd = amq_sockfd(x->c);
	assert_true(fd >= 0);
	assert_int_equal(shutdown(fd, SHUT_RDWR), 0);

	g_want = K;
	assert_true(run_until(base, went_down_and_up, x, 20000));
	assert_int_equal(x->nstates, 3);
	assert_int_equal(x->states[0], 1);
	assert_int_equal(x->states[1], 0);
	assert_int_equal(x->states[2], 1);
	assert_true(amq_generation(x->c) > old_gen);
	/* Every publish has exactly one outcome; the ones that did not make
	** it are reported lost, none is left hanging. */
	assert_true(confirmed(x));
	assert_int_equal(x->n_ack + x->n_lost, K);
	assert_int_equal(x->n_nack + x->n_stray, 0);
	assert_true(x->n_lost >= 1);
	for (int i = 0; i < K; i++)
		assert_int_equal(x->outcome_count[i], 1);
	assert_int_equal(amq_unconfirmed(x->c), 0);

	/* The held message comes back on the new connection. */
	g_want = 2;
	assert_true(run_until(base, delivered, x, 20000));
	assert_string_equal(x->ids[1], id);
	assert_true(x->gens[1] == amq_generation(x->c));
	assert_int_equal(x->redelivered[1], 1);
	if (strcmp(g_cfg.amqp_queue_type, "quorum") == 0)
		assert_true(x->counts[1] >= 1);

	/* Acking the dead connection's delivery must not touch the new one
	** (its tag may well be the same number). */
	assert_int_equal(amq_ack(x->c, old_gen, old_tag), GB_OK);
	run_until(base, never, x, 500);
	assert_true(amq_is_up(x->c));
	assert_int_equal(x->nstates, 3);
	amq_free(x->c);
	event_base_free(base);

	/* Had the stale ack gone out, the message would be gone; closing
	** the connection with it unacked puts it back. */
	struct amq_sync *s = open_sync();
	assert_int_equal(wait_depth(s, g_task_queue, 1), 1);
	assert_int_equal(purge(s, g_task_queue), 1);
	amq_sync_close(s);
	free(x);
	purge_all();
}

/* A message that every consumer hands back (as if it crashed each worker
** that took it) comes back delivery_limit times, with the broker's
** delivery count rising by one each time, and then the quorum queue
** dead-letters it itself: at least once, to gridbroker.dead, with reason
** delivery_limit. */
static void test_async_delivery_limit_dead_letters(void **state)
{
	(void)state;
	if (strcmp(g_cfg.amqp_queue_type, "quorum") != 0)
		skip(); /* classic queues have no delivery limit */
	purge_all();
	char id[96];
	make_id(id, sizeof(id), "poison", 0);
	publish_request(id, "poison");

	struct event_base *base = event_base_new();
	assert_non_null(base);
	struct actx *x = start_ctx(base, REQUEUE_ALL);
	int limit = g_cfg.amqp_delivery_limit;
	assert_true(limit + 1 < MAXN);
	g_want = limit + 1;
	assert_true(run_until(base, delivered, x, 30000));
	run_until(base, never, x, 1000); /* and then no more */
	assert_int_equal(x->ndel, limit + 1);
	for (int i = 0; i < x->ndel; i++) {
		assert_string_equal(x->ids[i], id);
		assert_int_equal(x->counts[i], i);
		assert_int_equal(x->redelivered[i], i > 0);
	}
	assert_int_equal(x->settle_errors, 0);
	amq_free(x->c);
	event_base_free(base);
	free(x);

	struct amq_sync *s = open_sync();
	assert_int_equal(wait_depth(s, g_task_queue, 0), 0);
	struct amq_message m;
	get_dead_letter(s, &m);
	assert_string_equal(m.message_id, id);
	assert_string_equal(m.routing_key, "task.broker");
	assert_non_null(m.death_reason);
	assert_string_equal(m.death_reason, "delivery_limit");
	assert_int_equal(amq_sync_settle(s, m.tag, 1), GB_OK);
	amq_message_free(&m);
	assert_int_equal(purge(s, AMQ_Q_DEAD), 0);
	amq_sync_close(s);
	purge_all();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sync_request_lands_in_its_queue),
		cmocka_unit_test(test_sync_events_reach_a_subscriber),
		cmocka_unit_test(test_sync_dead_letter_keeps_the_error_header),
		cmocka_unit_test(test_async_confirms_and_consumes),
		cmocka_unit_test(test_async_recovers_from_a_dead_socket),
		cmocka_unit_test(test_async_delivery_limit_dead_letters),
	};
	return cmocka_run_group_tests(tests, group_setup, NULL);
}
