/*
** bench_broker.c — task.broker and job.broker through two workers, against
** what RabbitMQ alone can do on the same machine in the same run.
**
** For each request type (task.broker: the sample tasks with fresh task
** ids; job.broker: the sample job requests cut to 5 jobs each, fresh task
** and job ids, nucleus and gshare given):
**   1. the bare limit: a queue of the request queues' type and arguments
**      pre-filled with N persistent messages of the requests' mean size;
**      two consumer processes, like the two workers, each consuming with
**      the workers' prefetch and, per delivery, publishing one persistent
**      message (confirmed) to a durable queue of the same type and acking
**      the delivery on the confirm. That is the broker work one decision
**      costs with no database and no brokerage: the ceiling the service
**      is compared with;
**   2. pre-filled: N requests queued while no worker runs, then two
**      gridbroker-worker processes started; the time until a consumer of
**      the events exchange has seen the N decision events (matched by the
**      requestId each event carries): decisions/s and the ratio to (1);
**   3. steady offered load: the workers running, requests published at
**      half the rate of (2) for about 10 s; p50/p99 latency from publish
**      to the request's event.
** The sample grid is reloaded before (2) and (3) so that a run starts
** from the same nuclei and queues; whether decisions drift to pending as
** the run goes on is shown by the assigned/pending split printed with
** each phase. Nothing is asserted (a shared 2-core machine is noisy; a
** timed assertion would only flake): figures and ratios are printed.
**
** Usage: bench_broker [TASKS [JOBREQS]]   (defaults 20000, 5000)
** Needs the local servers (scripts/services start), the schema applied,
** and GB_CONFIG or run/gridbroker.conf; the worker and CLI binaries are
** taken from this program's directory. It purges the task.broker and
** job.broker request queues, and creates and deletes its own queues
** gridbroker.bench.*.
*/
#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <msgpack.h>

#include "amqp/amqp.h"
#include "amqp/amqp_internal.h"
#include "base/arena.h"
#include "base/config.h"
#include "codec/codec.h"
#include "codec/codec_jobs.h"
#include "explain/scenario.h"
#include "explain/scenario_jobs.h"
#include "gb_error.h"

#define BB_EXCHANGE "gridbroker.bench.x"
#define BB_ECHO_IN "gridbroker.bench.echo"
#define BB_ECHO_OUT "gridbroker.bench.echo.out"
#define BB_EVENTS "gridbroker.bench.events"
#define BB_WINDOW 1000       /* unconfirmed publishes of the driver */
#define BB_JOBS_PER_REQ 5
#define BB_STEADY_S 10.0
#define BB_STALL_MS 60000.0  /* no event for this long: give up */
#define BB_CH_EVENTS 1
#define BB_CH_PUB 2

static char g_bindir[4096], g_root[4200], g_conf[4300];

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static amqp_bytes_t cb(const char *s)
{
	return amqp_cstring_bytes(s);
}

static amqp_table_entry_t sentry(const char *k, const char *v)
{
	amqp_table_entry_t e;
	memset(&e, 0, sizeof(e));
	e.key = cb(k);
	e.value.kind = AMQP_FIELD_KIND_UTF8;
	e.value.value.bytes = cb(v);
	return e;
}

/* ---- connection and queues ---------------------------------------------- */

static amqp_connection_state_t bb_connect(const struct gb_config *cfg,
					  const char *name, int confirm_ch)
{
	amqp_connection_state_t conn = NULL;
	char err[1024];
	if (amq_connect(cfg, 0, name, &conn, err, sizeof(err)) != GB_OK ||
	    amq_channel_setup(conn, 1, 0, err, sizeof(err)) != GB_OK ||
	    (confirm_ch &&
	     amq_channel_setup(conn, (amqp_channel_t)confirm_ch, 1, err,
			       sizeof(err)) != GB_OK)) {
		fprintf(stderr, "bench_broker: %s: %s\n", name, err);
		if (conn)
			amqp_destroy_connection(conn);
		return NULL;
	}
	return conn;
}

/*
** Declare a bench queue with the arguments the worker gives its request
** queues (amq_declare_topology): the same type, dead-lettering, and for
** quorum the delivery limit and at-least-once dead-lettering, so the bare
** limit pays what a request queue pays. A copy, because the topology
** builds them inline and AMQP cannot read a queue's arguments back: when
** those change, these must follow. Purged: a run starts empty.
*/
static int bench_queue(amqp_connection_state_t conn,
		       const struct gb_config *cfg, const char *q,
		       const char *exchange, const char *const *keys)
{
	int quorum = strcmp(cfg->amqp_queue_type, "quorum") == 0;
	amqp_table_entry_t args[5];
	memset(args, 0, sizeof(args));
	args[0] = sentry("x-queue-type", cfg->amqp_queue_type);
	args[1] = sentry("x-dead-letter-exchange", AMQ_EX_DLX);
	args[2].key = cb("x-delivery-limit");
	args[2].value.kind = AMQP_FIELD_KIND_I64;
	args[2].value.value.i64 = cfg->amqp_delivery_limit;
	args[3] = sentry("x-dead-letter-strategy", "at-least-once");
	args[4] = sentry("x-overflow", "reject-publish");
	amqp_table_t t = {quorum ? 5 : 2, args};
	char err[1024], what[300];
	snprintf(what, sizeof(what), "declare %s", q);
	amqp_queue_declare(conn, 1, cb(q), 0, 1, 0, 0, t);
	if (amq_rpc_check(conn, 1, what, err, sizeof(err), NULL) != GB_OK)
		goto fail;
	for (size_t i = 0; keys && keys[i]; i++) {
		snprintf(what, sizeof(what), "bind %s to %s", q, exchange);
		amqp_queue_bind(conn, 1, cb(q), cb(exchange), cb(keys[i]),
				amqp_empty_table);
		if (amq_rpc_check(conn, 1, what, err, sizeof(err), NULL) !=
		    GB_OK)
			goto fail;
	}
	snprintf(what, sizeof(what), "purge %s", q);
	amqp_queue_purge(conn, 1, cb(q));
	if (amq_rpc_check(conn, 1, what, err, sizeof(err), NULL) != GB_OK)
		goto fail;
	return 0;
fail:
	fprintf(stderr, "bench_broker: %s\n", err);
	return -1;
}

/* Purge `q`; with `consumers`, how many consume it now (passive declare). */
static int purge_queue(amqp_connection_state_t conn, const char *q,
		       int *consumers)
{
	char err[1024];
	amqp_queue_declare_ok_t *ok =
		amqp_queue_declare(conn, 1, cb(q), 1, 0, 0, 0, amqp_empty_table);
	if (amq_rpc_check(conn, 1, "passive declare", err, sizeof(err), NULL) !=
	    GB_OK) {
		fprintf(stderr, "bench_broker: %s: %s\n", q, err);
		return -1;
	}
	if (consumers)
		*consumers = (int)ok->consumer_count;
	amqp_queue_purge(conn, 1, cb(q));
	if (amq_rpc_check(conn, 1, "purge", err, sizeof(err), NULL) != GB_OK) {
		fprintf(stderr, "bench_broker: %s: %s\n", q, err);
		return -1;
	}
	return 0;
}

/* ---- the driver: confirmed publishes and the events, one connection ---- */

struct bb_run {
	amqp_connection_state_t conn;
	const char *prefix;     /* message ids "<prefix><i>" */
	int n;
	uint64_t published;     /* publish tags are 1..published */
	uint64_t confirmed, nacked, low; /* tags <= low all settled */
	unsigned char *settled; /* per tag */
	/* events, when consuming */
	unsigned char *seen;
	double *sent_ms, *lat_ms;
	int got, dups, assigned, pending, foreign;
	double first_ms, last_ms;
};

static int run_init(struct bb_run *r, amqp_connection_state_t conn,
		    const char *prefix, int n)
{
	memset(r, 0, sizeof(*r));
	r->conn = conn;
	r->prefix = prefix;
	r->n = n;
	r->settled = calloc((size_t)n + 2, 1);
	r->seen = calloc((size_t)n + 1, 1);
	r->sent_ms = calloc((size_t)n + 1, sizeof(double));
	r->lat_ms = calloc((size_t)n + 1, sizeof(double));
	return r->settled && r->seen && r->sent_ms && r->lat_ms ? 0 : -1;
}

static void run_free(struct bb_run *r)
{
	free(r->settled);
	free(r->seen);
	free(r->sent_ms);
	free(r->lat_ms);
}

/* A confirm (ack or nack) for `tag`, or every tag up to it. */
static void run_confirm(struct bb_run *r, uint64_t tag, int multiple, int ack)
{
	uint64_t from = multiple ? r->low + 1 : tag;
	for (uint64_t t = from; t <= tag && t <= r->published; t++) {
		if (r->settled[t])
			continue;
		r->settled[t] = 1;
		if (ack)
			r->confirmed++;
		else
			r->nacked++;
	}
	while (r->low < r->published && r->settled[r->low + 1])
		r->low++;
}

/* An event: its requestId names one of our requests, or not. */
static void run_event(struct bb_run *r, const amqp_envelope_t *env, double t)
{
	msgpack_unpacked u;
	msgpack_unpacked_init(&u);
	const char *rid = NULL;
	size_t rlen = 0;
	if (msgpack_unpack_next(&u, env->message.body.bytes,
				env->message.body.len, NULL) ==
		    MSGPACK_UNPACK_SUCCESS &&
	    u.data.type == MSGPACK_OBJECT_MAP) {
		const msgpack_object_map *m = &u.data.via.map;
		for (uint32_t i = 0; i < m->size; i++) {
			const msgpack_object *k = &m->ptr[i].key;
			const msgpack_object *v = &m->ptr[i].val;
			if (k->type == MSGPACK_OBJECT_STR &&
			    k->via.str.size == 9 &&
			    memcmp(k->via.str.ptr, "requestId", 9) == 0 &&
			    v->type == MSGPACK_OBJECT_STR) {
				rid = v->via.str.ptr;
				rlen = v->via.str.size;
				break;
			}
		}
	}
	size_t pl = strlen(r->prefix);
	int idx = -1;
	if (rid && rlen > pl && rlen - pl < 12 &&
	    memcmp(rid, r->prefix, pl) == 0) {
		char num[16];
		memcpy(num, rid + pl, rlen - pl);
		num[rlen - pl] = '\0';
		idx = atoi(num);
	}
	msgpack_unpacked_destroy(&u);
	/* Other runs' events and the workers' own retries of pending tasks
	** (requestId gb-retry-...) are not ours. */
	if (idx < 0 || idx >= r->n) {
		r->foreign++;
		return;
	}
	if (r->seen[idx]) {
		r->dups++;
		return;
	}
	r->seen[idx] = 1;
	r->lat_ms[idx] = t - r->sent_ms[idx];
	if (r->got++ == 0)
		r->first_ms = t;
	r->last_ms = t;
	amqp_bytes_t rk = env->routing_key;
	if (rk.len > 9 && memcmp((char *)rk.bytes + rk.len - 9, ".assigned",
				 9) == 0)
		r->assigned++;
	else
		r->pending++;
}

/* Read what arrives for up to timeout_ms: events and confirms. 0 or -1. */
static int run_pump(struct bb_run *r, int timeout_ms)
{
	struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
	amqp_envelope_t env;
	amqp_maybe_release_buffers(r->conn);
	amqp_rpc_reply_t rr = amqp_consume_message(r->conn, &env, &tv, 0);
	if (rr.reply_type == AMQP_RESPONSE_NORMAL) {
		run_event(r, &env, now_ms());
		amqp_destroy_envelope(&env);
		return 0;
	}
	if (rr.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
	    rr.library_error == AMQP_STATUS_TIMEOUT)
		return 0;
	if (rr.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
	    rr.library_error == AMQP_STATUS_UNEXPECTED_STATE) {
		amqp_frame_t f;
		if (amqp_simple_wait_frame(r->conn, &f) != AMQP_STATUS_OK)
			goto lost;
		if (f.frame_type != AMQP_FRAME_METHOD)
			return 0;
		uint64_t tag;
		int multiple;
		if (f.payload.method.id == AMQP_BASIC_ACK_METHOD ||
		    f.payload.method.id == AMQP_BASIC_NACK_METHOD) {
			int ack = amq_confirm_read(&f.payload.method, &tag,
						   &multiple);
			run_confirm(r, tag, multiple, ack);
			return 0;
		}
		if (f.payload.method.id == AMQP_CHANNEL_CLOSE_METHOD ||
		    f.payload.method.id == AMQP_CONNECTION_CLOSE_METHOD)
			goto lost;
		return 0;
	}
lost:
	fprintf(stderr, "bench_broker: connection to RabbitMQ lost\n");
	return -1;
}

/* Publish one persistent message on the confirm channel. */
static int run_publish(struct bb_run *r, const char *exchange,
		       const char *rkey, const char *type, const char *msgid,
		       const void *body, size_t len)
{
	amqp_basic_properties_t bp;
	memset(&bp, 0, sizeof(bp));
	bp._flags = AMQP_BASIC_CONTENT_TYPE_FLAG |
		    AMQP_BASIC_DELIVERY_MODE_FLAG;
	bp.content_type = cb("application/msgpack");
	bp.delivery_mode = 2;
	if (msgid) {
		bp._flags |= AMQP_BASIC_MESSAGE_ID_FLAG;
		bp.message_id = cb(msgid);
	}
	if (type) {
		bp._flags |= AMQP_BASIC_TYPE_FLAG;
		bp.type = cb(type);
	}
	if (amqp_basic_publish(r->conn, BB_CH_PUB, cb(exchange), cb(rkey), 0, 0,
			       &bp, (amqp_bytes_t){len, (void *)body}) !=
	    AMQP_STATUS_OK) {
		fprintf(stderr, "bench_broker: publish failed\n");
		return -1;
	}
	r->published++;
	return 0;
}

/* Wait until every publish is settled; -1 on a nack or a lost connection. */
static int run_settle(struct bb_run *r)
{
	double t0 = now_ms();
	while (r->low < r->published) {
		if (run_pump(r, 200) != 0)
			return -1;
		if (now_ms() - t0 > BB_STALL_MS) {
			fprintf(stderr, "bench_broker: %llu publishes not "
					"confirmed\n",
				(unsigned long long)(r->published - r->low));
			return -1;
		}
	}
	if (r->nacked) {
		fprintf(stderr, "bench_broker: the broker refused %llu "
				"messages\n", (unsigned long long)r->nacked);
		return -1;
	}
	return 0;
}

/* ---- the requests --------------------------------------------------------- */

struct bb_msgs {
	const char *kind;  /* routing key: task.broker or job.broker */
	int n;
	char **body;
	size_t *len;
	double mean_len;
};

static void msgs_free(struct bb_msgs *m)
{
	for (int i = 0; m->body && i < m->n; i++)
		free(m->body[i]);
	free(m->body);
	free(m->len);
	memset(m, 0, sizeof(*m));
}

static const char *const nuclei[] = {"CERN-PROD", "BNL-ATLAS", "FZK-LCG2",
				     "IN2P3-CC", "RAL-LCG2"};

/*
** n requests of `kind` from the samples, task ids from `id0` on (job ids
** are task id * 1000 + 1..5): every one a new task, so no request is the
** replay of an earlier one.
*/
static int make_msgs(struct bb_msgs *m, const char *kind, json_t *samples,
		     int n, long long id0)
{
	memset(m, 0, sizeof(*m));
	m->kind = kind;
	m->body = calloc((size_t)n, sizeof(char *));
	m->len = calloc((size_t)n, sizeof(size_t));
	if (!m->body || !m->len)
		return -1;
	int job = strcmp(kind, "job.broker") == 0;
	double total = 0;
	for (int i = 0; i < n; i++) {
		long long id = id0 + i;
		json_t *o = json_deep_copy(json_array_get(
			samples, (size_t)i % json_array_size(samples)));
		json_object_set_new(o, "taskID", json_integer(id));
		struct arena a;
		arena_init(&a, 16u << 20);
		char err[512] = "";
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		int rc;
		if (job) {
			json_object_set_new(o, "nucleus",
					    json_string(nuclei[i % 5]));
			if (json_object_get(o, "gshare") == NULL)
				json_object_set_new(o, "gshare",
						    json_string("MC Reco"));
			json_t *jobs = json_object_get(o, "jobs");
			while (json_array_size(jobs) > BB_JOBS_PER_REQ)
				json_array_remove(jobs, json_array_size(jobs) - 1);
			for (size_t k = 0; k < json_array_size(jobs); k++)
				json_object_set_new(
					json_array_get(jobs, k), "jobID",
					json_integer(id * 1000 + (long long)k + 1));
			struct gm_request r;
			rc = scj_parse_request(o, "request", &a, 0, &r, err,
					       sizeof(err));
			if (rc == GB_OK)
				rc = cdj_encode_request(&r, &sb);
		} else {
			struct tb_task t;
			rc = scn_parse_task(o, "task", &a, &t, err, sizeof(err));
			if (rc == GB_OK)
				rc = cod_encode_task(&t, &sb);
		}
		json_decref(o);
		arena_free(&a);
		if (rc != GB_OK) {
			fprintf(stderr, "bench_broker: sample %s %d: %s\n", kind,
				i, err);
			msgpack_sbuffer_destroy(&sb);
			return -1;
		}
		m->body[i] = sb.data; /* the buffer is ours now */
		m->len[i] = sb.size;
		m->n = i + 1;
		total += (double)sb.size;
	}
	m->mean_len = total / n;
	return 0;
}

/* ---- child processes: the bare consumers, the workers, the CLI ---------- */

/*
** A bare consumer, in its own process as a worker is: consume `BB_ECHO_IN`
** with the workers' prefetch, publish `len` bytes per delivery with a
** confirm, ack the delivery when its publish is confirmed (one ack per
** delivery, as the worker acks). Stops once nothing has arrived for a
** second after the last confirm; writes "count last_ack_ms" to `fd`.
*/
static int echo_child(const struct gb_config *cfg, size_t len, int fd)
{
	amqp_connection_state_t conn = bb_connect(cfg, "bench-echo", BB_CH_PUB);
	if (conn == NULL)
		return 1;
	char err[512];
	amqp_basic_qos(conn, 1, 0, (uint16_t)cfg->amqp_prefetch, 0);
	if (amq_rpc_check(conn, 1, "qos", err, sizeof(err), NULL) != GB_OK)
		return 1;
	amqp_basic_consume(conn, 1, cb(BB_ECHO_IN), amqp_empty_bytes, 0, 0, 0,
			   amqp_empty_table);
	if (amq_rpc_check(conn, 1, "consume", err, sizeof(err), NULL) != GB_OK)
		return 1;
	char *body = calloc(len ? len : 1, 1);
	enum { CAP = 65536 }; /* > prefetch: a slot per unconfirmed publish */
	uint64_t *dtag = calloc(CAP, sizeof(uint64_t));
	unsigned char *done = calloc(CAP, 1);
	if (!body || !dtag || !done)
		return 1;
	memset(body, 'x', len);
	uint64_t seq = 0, low = 0; /* publishes 1..seq, all <= low settled */
	long count = 0;
	double last = now_ms(), last_ack = 0;
	amqp_basic_properties_t bp;
	memset(&bp, 0, sizeof(bp));
	bp._flags = AMQP_BASIC_CONTENT_TYPE_FLAG | AMQP_BASIC_DELIVERY_MODE_FLAG;
	bp.content_type = cb("application/msgpack");
	bp.delivery_mode = 2;
	for (;;) {
		struct timeval tv = {0, 100000};
		amqp_envelope_t env;
		amqp_maybe_release_buffers(conn);
		amqp_rpc_reply_t rr = amqp_consume_message(conn, &env, &tv, 0);
		if (rr.reply_type == AMQP_RESPONSE_NORMAL) {
			seq++;
			dtag[seq % CAP] = env.delivery_tag;
			done[seq % CAP] = 0;
			amqp_destroy_envelope(&env);
			if (amqp_basic_publish(conn, BB_CH_PUB, cb(BB_EXCHANGE),
					       cb("echo.out"), 0, 0, &bp,
					       (amqp_bytes_t){len, body}) !=
			    AMQP_STATUS_OK)
				return 1;
			count++;
			last = now_ms();
			continue;
		}
		if (rr.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
		    rr.library_error == AMQP_STATUS_TIMEOUT) {
			double idle = now_ms() - last;
			if ((count > 0 && low == seq && idle > 1000) ||
			    idle > 30000)
				break;
			continue;
		}
		if (!(rr.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
		      rr.library_error == AMQP_STATUS_UNEXPECTED_STATE))
			return 1;
		amqp_frame_t f;
		if (amqp_simple_wait_frame(conn, &f) != AMQP_STATUS_OK)
			return 1;
		if (f.frame_type != AMQP_FRAME_METHOD ||
		    (f.payload.method.id != AMQP_BASIC_ACK_METHOD &&
		     f.payload.method.id != AMQP_BASIC_NACK_METHOD))
			continue;
		uint64_t tag;
		int multiple;
		int ack = amq_confirm_read(&f.payload.method, &tag, &multiple);
		for (uint64_t t = multiple ? low + 1 : tag; t <= tag && t <= seq;
		     t++) {
			if (done[t % CAP])
				continue;
			done[t % CAP] = 1;
			/* A refused publish leaves its delivery to be
			** redelivered, as the worker's would. */
			if (ack)
				amqp_basic_ack(conn, 1, dtag[t % CAP], 0);
			else
				amqp_basic_nack(conn, 1, dtag[t % CAP], 0, 1);
		}
		while (low < seq && done[(low + 1) % CAP])
			low++;
		last_ack = now_ms();
	}
	char out[64];
	int k = snprintf(out, sizeof(out), "%ld %.3f\n", count, last_ack);
	if (write(fd, out, (size_t)k) != k)
		return 1;
	amqp_connection_close(conn, AMQP_REPLY_SUCCESS);
	amqp_destroy_connection(conn);
	return 0;
}

static pid_t start_worker(int i)
{
	char bin[4300], inst[32], log[4300];
	snprintf(bin, sizeof(bin), "%s/gridbroker-worker", g_bindir);
	snprintf(inst, sizeof(inst), "bench%d", i);
	/* The worker logs a line per decision: into a file, not over the
	** figures. */
	snprintf(log, sizeof(log), "%s/bench_broker-worker%d.log", g_bindir, i);
	pid_t pid = fork();
	if (pid == 0) {
		if (freopen(log, "a", stdout) == NULL ||
		    freopen(log, "a", stderr) == NULL)
			_exit(127);
		execl(bin, "gridbroker-worker", "-c", g_conf, "--instance", inst,
		      (char *)NULL);
		_exit(127);
	}
	return pid;
}

static void stop_workers(pid_t *w)
{
	for (int i = 0; i < 2; i++)
		if (w[i] > 0) {
			kill(w[i], SIGTERM);
			waitpid(w[i], NULL, 0);
			w[i] = 0;
		}
}

/* A worker that exited by itself (bad config, lost database). */
static int workers_alive(pid_t *w)
{
	for (int i = 0; i < 2; i++) {
		int st;
		if (w[i] > 0 && waitpid(w[i], &st, WNOHANG) == w[i]) {
			fprintf(stderr, "bench_broker: worker %d exited (status "
					"%d); see %s/bench_broker-worker%d.log\n",
				i, st, g_bindir, i);
			w[i] = 0;
			return 0;
		}
	}
	return 1;
}

/* The sample grid into MariaDB again: `gridbroker grid load`. */
static int grid_load(void)
{
	char bin[4300], grid[4300];
	snprintf(bin, sizeof(bin), "%s/gridbroker", g_bindir);
	snprintf(grid, sizeof(grid), "%s/etc/grid-sample.json", g_root);
	pid_t pid = fork();
	if (pid == 0) {
		if (freopen("/dev/null", "w", stdout) == NULL)
			_exit(127);
		execl(bin, "gridbroker", "-c", g_conf, "grid", "load", grid,
		      (char *)NULL);
		_exit(127);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0) {
		fprintf(stderr, "bench_broker: grid load %s failed\n", grid);
		return -1;
	}
	return 0;
}

/* ---- the phases ------------------------------------------------------------ */

/* (1) The bare limit for n messages of `len` bytes: messages per second. */
static double bare_limit(const struct gb_config *cfg, int n, size_t len)
{
	static const char *const in_keys[] = {"echo.in", NULL};
	static const char *const out_keys[] = {"echo.out", NULL};
	amqp_connection_state_t conn = bb_connect(cfg, "bench-fill", BB_CH_PUB);
	if (conn == NULL)
		return -1;
	double rate = -1;
	struct bb_run r;
	char *body = calloc(len ? len : 1, 1);
	amqp_exchange_declare(conn, 1, cb(BB_EXCHANGE), cb("topic"), 0, 1, 0, 0,
			      amqp_empty_table);
	char err[512];
	if (amq_rpc_check(conn, 1, "declare exchange", err, sizeof(err),
			  NULL) != GB_OK) {
		fprintf(stderr, "bench_broker: %s: %s\n", BB_EXCHANGE, err);
		goto out;
	}
	if (body == NULL ||
	    bench_queue(conn, cfg, BB_ECHO_IN, BB_EXCHANGE, in_keys) != 0 ||
	    bench_queue(conn, cfg, BB_ECHO_OUT, BB_EXCHANGE, out_keys) != 0 ||
	    run_init(&r, conn, "", n) != 0)
		goto out;
	memset(body, 'x', len);
	double t0 = now_ms();
	for (int i = 0; i < n; i++) {
		while (r.published - r.low >= BB_WINDOW)
			if (run_pump(&r, 200) != 0)
				goto out_run;
		if (run_publish(&r, BB_EXCHANGE, "echo.in", NULL, NULL, body,
				len) != 0)
			goto out_run;
	}
	if (run_settle(&r) != 0)
		goto out_run;
	double fill = now_ms() - t0;
	int fds[2][2];
	pid_t kids[2];
	t0 = now_ms();
	for (int i = 0; i < 2; i++) {
		if (pipe(fds[i]) != 0)
			goto out_run;
		kids[i] = fork();
		if (kids[i] == 0) {
			close(fds[i][0]);
			_exit(echo_child(cfg, len, fds[i][1]));
		}
		close(fds[i][1]);
	}
	long total = 0;
	double last = t0;
	for (int i = 0; i < 2; i++) {
		char buf[64] = "";
		ssize_t k = read(fds[i][0], buf, sizeof(buf) - 1);
		close(fds[i][0]);
		waitpid(kids[i], NULL, 0);
		long c = 0;
		double l = 0;
		if (k > 0 && sscanf(buf, "%ld %lf", &c, &l) == 2) {
			total += c;
			if (l > last)
				last = l;
		}
	}
	double dt = (last - t0) / 1e3;
	if (total != n || dt <= 0) {
		fprintf(stderr, "bench_broker: bare consumers handled %ld of "
				"%d messages\n", total, n);
		goto out_run;
	}
	rate = n / dt;
	printf("  bare limit: %d persistent %s messages of %zu B (filled at "
	       "%.0f msg/s), 2 consumers, prefetch %d, publish + confirm + "
	       "ack each: %.2f s, %.0f msg/s\n",
	       n, cfg->amqp_queue_type, len, n / (fill / 1e3),
	       cfg->amqp_prefetch, dt, rate);
out_run:
	run_free(&r);
out:
	free(body);
	amqp_connection_close(conn, AMQP_REPLY_SUCCESS);
	amqp_destroy_connection(conn);
	return rate;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double percentile(double *v, int n, double p)
{
	if (n == 0)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), cmp_dbl);
	return v[(int)(p / 100.0 * (n - 1) + 0.5)];
}

/*
** A connection that consumes the bench events queue (bound to the events
** exchange for `kind`'s decision events, purged) and publishes on a
** confirm channel; the request queue is purged too. Refuses when the
** request queue has other consumers than the `ours` of our workers: their
** decisions would count.
*/
static amqp_connection_state_t open_driver(const struct gb_config *cfg,
					   const char *kind, int ours)
{
	static const char *const task_keys[] = {"task.assigned",
						"task.pending", NULL};
	static const char *const job_keys[] = {"jobs.assigned", "jobs.pending",
					       NULL};
	amqp_connection_state_t conn = bb_connect(cfg, "bench-driver", BB_CH_PUB);
	if (conn == NULL)
		return NULL;
	char q[AMQ_NAME_MAX], err[512];
	int consumers = 0;
	snprintf(q, sizeof(q), "gridbroker.%s", kind);
	if (amq_declare_topology(conn, 1, cfg, err, sizeof(err)) != GB_OK) {
		fprintf(stderr, "bench_broker: topology: %s\n", err);
		goto fail;
	}
	if (purge_queue(conn, q, &consumers) != 0)
		goto fail;
	/* The other type's leftovers would be decided meanwhile and take
	** the workers' time. */
	if (purge_queue(conn, strcmp(kind, "task.broker") == 0
				      ? "gridbroker.job.broker"
				      : "gridbroker.task.broker",
			NULL) != 0)
		goto fail;
	if (consumers != ours) {
		fprintf(stderr, "bench_broker: %d consumer(s) on %s, %d "
				"expected (workers left running?); stop them "
				"first\n",
			consumers, q, ours);
		goto fail;
	}
	if (bench_queue(conn, cfg, BB_EVENTS, AMQ_EX_EVENTS,
			strcmp(kind, "task.broker") == 0 ? task_keys
							 : job_keys) != 0)
		goto fail;
	/* No ack: the observer must not be what limits the rate. */
	amqp_basic_qos(conn, BB_CH_EVENTS, 0, 0, 0);
	amqp_basic_consume(conn, BB_CH_EVENTS, cb(BB_EVENTS), amqp_empty_bytes,
			   0, 1, 0, amqp_empty_table);
	if (amq_rpc_check(conn, BB_CH_EVENTS, "consume events", err,
			  sizeof(err), NULL) != GB_OK) {
		fprintf(stderr, "bench_broker: %s\n", err);
		goto fail;
	}
	return conn;
fail:
	amqp_destroy_connection(conn);
	return NULL;
}

/* A phase starts from the sample grid as loaded, with empty queues. */
static amqp_connection_state_t start_phase(const struct gb_config *cfg,
					   const char *kind, int ours)
{
	return grid_load() == 0 ? open_driver(cfg, kind, ours) : NULL;
}

/* Request i of `m`, its message id "<prefix><i>" (the requestId of its
** event). */
static int publish_request(struct bb_run *r, const struct bb_msgs *m, int i)
{
	char id[128];
	snprintf(id, sizeof(id), "%s%d", r->prefix, i);
	return run_publish(r, AMQ_EX_REQUESTS, m->kind, m->kind, id, m->body[i],
			   m->len[i]);
}

static void close_driver(amqp_connection_state_t conn)
{
	amqp_connection_close(conn, AMQP_REPLY_SUCCESS);
	amqp_destroy_connection(conn);
}

/* Pump until every request has its event, a worker died, or nothing came
** for BB_STALL_MS. 0 when all arrived. */
static int await_events(struct bb_run *r, pid_t *w)
{
	double last = now_ms();
	int got = r->got;
	while (r->got < r->n) {
		if (run_pump(r, 200) != 0 || !workers_alive(w))
			return -1;
		if (r->got != got) {
			got = r->got;
			last = now_ms();
		} else if (now_ms() - last > BB_STALL_MS) {
			fprintf(stderr, "bench_broker: %d of %d events missing "
					"after %.0f s without one\n",
				r->n - r->got, r->n, BB_STALL_MS / 1e3);
			return -1;
		}
	}
	return 0;
}

/*
** (2) Pre-filled: publish the n requests with no worker running, then
** start two and time until every decision event arrived. Leaves the
** workers running in w[]. Decisions per second, or -1.
*/
static double prefilled(const struct gb_config *cfg, const struct bb_msgs *m,
			const char *prefix, double bare, double goal,
			pid_t *w)
{
	amqp_connection_state_t conn = start_phase(cfg, m->kind, 0);
	if (conn == NULL)
		return -1;
	double rate = -1;
	struct bb_run r;
	if (run_init(&r, conn, prefix, m->n) != 0)
		goto out;
	double t0 = now_ms();
	for (int i = 0; i < m->n; i++) {
		while (r.published - r.low >= BB_WINDOW)
			if (run_pump(&r, 200) != 0)
				goto out_run;
		if (publish_request(&r, m, i) != 0)
			goto out_run;
	}
	if (run_settle(&r) != 0)
		goto out_run;
	printf("  pre-filled: %d requests published (confirmed, window %d) in "
	       "%.2f s\n",
	       m->n, BB_WINDOW, (now_ms() - t0) / 1e3);
	t0 = now_ms();
	for (int i = 0; i < 2; i++)
		w[i] = start_worker(i);
	if (await_events(&r, w) != 0)
		goto out_run;
	double dt = (r.last_ms - t0) / 1e3;
	rate = m->n / dt;
	int job = strcmp(m->kind, "job.broker") == 0;
	printf("  two workers: %d decisions (%d assigned, %d pending) in %.2f s "
	       "from their start (first event after %.2f s): %.0f decisions/s",
	       m->n, r.assigned, r.pending, dt, (r.first_ms - t0) / 1e3, rate);
	if (job)
		printf(", %.0f jobs/s", rate * BB_JOBS_PER_REQ);
	printf("\n  ratio to the bare limit: %.3f (%.1f%%); goal >= %.0f "
	       "decisions/s: %s\n",
	       rate / bare, 100 * rate / bare, goal,
	       rate >= goal ? "met" : "not met");
	if (r.dups)
		printf("  (%d duplicate events: re-published by the outbox)\n",
		       r.dups);
out_run:
	run_free(&r);
out:
	close_driver(conn);
	return rate;
}

/*
** (3) Steady offered load: the workers running, requests published at
** `rate` per second for BB_STEADY_S; latency from each publish to its
** event.
*/
static int steady(const struct gb_config *cfg, const struct bb_msgs *m,
		  const char *prefix, double rate, pid_t *w, double *p50_out,
		  double *p99_out)
{
	amqp_connection_state_t conn = start_phase(cfg, m->kind, 2);
	if (conn == NULL)
		return -1;
	int rc = -1;
	int n = (int)(rate * BB_STEADY_S);
	if (n > m->n)
		n = m->n;
	if (n < 1)
		n = 1;
	struct bb_run r;
	if (run_init(&r, conn, prefix, n) != 0)
		goto out;
	double t0 = now_ms();
	for (int i = 0; i < n; i++) {
		double due = t0 + i * 1e3 / rate;
		for (double t = now_ms(); t < due; t = now_ms()) {
			int wait = (int)(due - t);
			if (run_pump(&r, wait > 0 ? wait : 0) != 0)
				goto out_run;
		}
		r.sent_ms[i] = now_ms();
		if (publish_request(&r, m, i) != 0)
			goto out_run;
	}
	double sent = (now_ms() - t0) / 1e3;
	if (await_events(&r, w) != 0 || run_settle(&r) != 0)
		goto out_run;
	double *v = malloc((size_t)n * sizeof(*v));
	if (v == NULL)
		goto out_run;
	memcpy(v, r.lat_ms, (size_t)n * sizeof(*v));
	double p50 = percentile(v, n, 50), p99 = percentile(v, n, 99);
	double mx = v[n - 1];
	free(v);
	printf("  steady load: %d requests at %.0f/s over %.1f s (%d assigned, "
	       "%d pending): latency publish to event p50 %.1f ms, p99 %.1f "
	       "ms, max %.1f ms\n",
	       n, n / sent, sent, r.assigned, r.pending, p50, p99, mx);
	/* Pending decisions of the pre-filled phase come due and are decided
	** again by the workers meanwhile: load the offered rate does not
	** show. */
	if (r.foreign)
		printf("  (meanwhile %d other decision events: the workers' "
		       "retries of pending requests)\n",
		       r.foreign);
	*p50_out = p50;
	*p99_out = p99;
	rc = 0;
out_run:
	run_free(&r);
out:
	close_driver(conn);
	return rc;
}

/* What a request type's phases measured, for the summary. */
struct bb_result {
	double bare, rate, p50, p99;
};

/* One request type: the three phases. */
static int bench_kind(const struct gb_config *cfg, const char *kind,
		      json_t *samples, int n, long long id0, const char *stamp,
		      double goal, struct bb_result *res)
{
	struct bb_msgs m;
	printf("== %s: %d requests%s\n", kind, n,
	       strcmp(kind, "job.broker") == 0
		       ? " of 5 jobs, nucleus and gshare given"
		       : "");
	if (make_msgs(&m, kind, samples, n, id0) != 0)
		return -1;
	int rc = -1;
	pid_t w[2] = {0, 0};
	double bare = bare_limit(cfg, n, (size_t)(m.mean_len + 0.5));
	if (bare <= 0)
		goto out;
	res->bare = bare;
	char prefix[96];
	snprintf(prefix, sizeof(prefix), "bb%s-%s-f-", stamp, kind);
	double rate = prefilled(cfg, &m, prefix, bare, goal, w);
	if (rate <= 0)
		goto out;
	res->rate = rate;
	/* Fresh ids for the steady phase: the workers would take a request
	** id they decided already for a redelivery. */
	msgs_free(&m);
	if (make_msgs(&m, kind, samples, n, id0 + n) != 0)
		goto out;
	snprintf(prefix, sizeof(prefix), "bb%s-%s-s-", stamp, kind);
	rc = steady(cfg, &m, prefix, rate / 2, w, &res->p50, &res->p99);
out:
	stop_workers(w);
	msgs_free(&m);
	return rc;
}

static void delete_bench_queues(const struct gb_config *cfg)
{
	amqp_connection_state_t conn = bb_connect(cfg, "bench-cleanup", 0);
	if (conn == NULL)
		return;
	static const char *const qs[] = {BB_ECHO_IN, BB_ECHO_OUT, BB_EVENTS};
	char err[512];
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		amqp_queue_delete(conn, 1, cb(qs[i]), 0, 0);
		if (amq_rpc_check(conn, 1, "delete", err, sizeof(err), NULL) ==
		    GB_EAMQP)
			amq_channel_setup(conn, 1, 0, err, sizeof(err));
	}
	amqp_exchange_delete(conn, 1, cb(BB_EXCHANGE), 0);
	amq_rpc_check(conn, 1, "delete exchange", err, sizeof(err), NULL);
	close_driver(conn);
}

static json_t *load_samples(const char *file)
{
	char path[4400];
	snprintf(path, sizeof(path), "%s/etc/%s", g_root, file);
	json_error_t je;
	json_t *v = json_load_file(path, 0, &je);
	if (!json_is_array(v) || json_array_size(v) == 0) {
		fprintf(stderr, "bench_broker: %s:%d: %s\n", path, je.line,
			v ? "not a list" : je.text);
		json_decref(v);
		return NULL;
	}
	return v;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0); /* progress lines as they happen */
	int ntask = argc > 1 ? atoi(argv[1]) : 20000;
	int njob = argc > 2 ? atoi(argv[2]) : 5000;
	if (ntask <= 0 || njob <= 0 || ntask > 1000000 || njob > 1000000) {
		fprintf(stderr, "usage: bench_broker [TASKS [JOBREQS]] "
				"(1..1000000 each)\n");
		return 2;
	}
	char self[4096];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (sl <= 0)
		return 1;
	self[sl] = '\0';
	snprintf(g_bindir, sizeof(g_bindir), "%s", dirname(self));
	snprintf(g_root, sizeof(g_root), "%s/..", GB_SCHEMA_DIR);
	const char *path = getenv("GB_CONFIG");
	if (path == NULL || path[0] == '\0') {
		snprintf(g_conf, sizeof(g_conf), "%s/run/gridbroker.conf",
			 g_root);
		path = g_conf;
	} else {
		snprintf(g_conf, sizeof(g_conf), "%s", path);
	}
	struct gb_config cfg;
	char err[4096];
	if (cfg_load(g_conf, &cfg, err, sizeof(err)) != GB_OK) {
		fprintf(stderr, "bench_broker: %s: %s\n(start the servers with "
				"scripts/services start)\n", g_conf, err);
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	json_t *tasks = load_samples("tasks-sample.json");
	json_t *jobs = load_samples("jobs-sample.json");
	if (tasks == NULL || jobs == NULL)
		return 1;
	/* Ids of this run: task ids from a base no earlier run used (seconds
	** since 2020 times 10^5 leaves room for 10^5 per second), message
	** ids prefixed with the same stamp. */
	long long secs = (long long)time(NULL) - 1577836800LL;
	long long base = secs * 100000LL;
	char stamp[32];
	snprintf(stamp, sizeof(stamp), "%lld", secs);
	printf("queues %s, prefetch %d, workers %s/gridbroker-worker\n",
	       cfg.amqp_queue_type, cfg.amqp_prefetch, g_bindir);
	struct bb_result tr = {0, 0, 0, 0}, jr = {0, 0, 0, 0};
	int rc = bench_kind(&cfg, "task.broker", tasks, ntask, base, stamp,
			    2500, &tr);
	if (rc == 0)
		rc = bench_kind(&cfg, "job.broker", jobs, njob,
				base + 2LL * ntask, stamp, 600, &jr);
	delete_bench_queues(&cfg);
	if (rc == 0) {
		printf("== summary (two workers; bare limit = RabbitMQ alone, "
		       "same run)\n");
		printf("  task.broker %6.0f decisions/s  %5.1f%% of %5.0f "
		       "msg/s  (goal 2500)  steady p50 %.0f ms p99 %.0f ms\n",
		       tr.rate, 100 * tr.rate / tr.bare, tr.bare, tr.p50,
		       tr.p99);
		printf("  job.broker  %6.0f decisions/s  %5.1f%% of %5.0f "
		       "msg/s  (goal  600)  steady p50 %.0f ms p99 %.0f ms; "
		       "%.0f jobs/s\n",
		       jr.rate, 100 * jr.rate / jr.bare, jr.bare, jr.p50,
		       jr.p99, jr.rate * BB_JOBS_PER_REQ);
	}
	json_decref(tasks);
	json_decref(jobs);
	return rc == 0 ? 0 : 1;
}
