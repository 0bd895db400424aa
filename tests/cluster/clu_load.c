/*
** clu_load.c — the AMQP side of the cluster test (it_cluster.sh): publish a
** paced stream of requests that survives the loss of the RabbitMQ node it
** is connected to, and collect every event of the run.
**
**   clu_load declare CONFIG QUEUE
**       declare QUEUE as a durable quorum queue bound to gridbroker.events
**       with "#" (a quorum queue, so losing one node loses no event)
**   clu_load publish CONFIG RUN OUT --tasks F --dirac F [--count N]
**                    [--rate R] [--jobs-per-msg K] [--id-base B]
**       publish N requests, in the repeating order task.broker, job.submit,
**       pilot.match, pilot.match; message ids "<RUN>-<kind>-<i>"; R per
**       second (0: as fast as confirms come back). Task bodies are the
**       tasks of F with new taskIDs, job.submit bodies K jobs of the DIRAC
**       file's "jobs" with new jobIDs, pilots its "pilots" in turn.
**   clu_load drain CONFIG QUEUE OUT [--idle-ms N]
**       consume QUEUE until it has been empty for N ms (default 3000)
**   clu_load delete CONFIG QUEUE
**
** Publishing is at least once, like a careful producer: every message is
** published with `mandatory` on a confirm channel, and it counts as sent
** (a line in OUT) only when the broker confirms it. When the connection
** fails, every message not yet confirmed is published again, with the same
** message id, on a new connection (amq_connect moves along the [amqp] host
** list); a message the broker had taken before the failure then arrives
** twice, which the workers must absorb. pilot.match requests ask for a
** direct reply-to answer; replies lost with a connection are only counted.
**
** OUT of publish: "task ID", "submit ID JOBID...", "pilot ID" per confirmed
** message. OUT of drain: "event MSGID ROUTING-KEY BODYHASH" per delivery,
** and for pilot.matched/pilot.nomatch "item MSGID DECISION REQUEST JOBID"
** per item (JOBID 0 for nomatch).
*/
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <amqp.h>
#include <jansson.h>
#include <msgpack.h>

#include "amqp/amqp.h"
#include "amqp/amqp_internal.h"
#include "base/arena.h"
#include "codec/codec.h"
#include "codec/codec_tq.h"
#include "base/config.h"
#include "explain/dirac_json.h"
#include "gb_error.h"
#include "explain/scenario.h"

#define CH 1
#define WINDOW 64 /* unconfirmed publishes at a time */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "clu_load: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	exit(1);
}

static amqp_bytes_t cb(const char *s)
{
	return amqp_cstring_bytes(s);
}

static char *bytes_dup(amqp_bytes_t b)
{
	char *s = malloc(b.len + 1);
	if (s == NULL)
		die("%s", "out of memory");
	memcpy(s, b.bytes, b.len);
	s[b.len] = '\0';
	return s;
}

/* FNV-1a, to tell two different bodies under one message id apart. */
static uint64_t fnv64(const void *p, size_t n)
{
	const unsigned char *c = p;
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 1099511628211ULL;
	return h;
}

/* Connect (along the host list) and open channel CH; NULL after a log. */
static amqp_connection_state_t open_conn(const struct gb_config *cfg,
					 int confirm)
{
	char err[1024];
	amqp_connection_state_t conn = NULL;
	if (amq_connect(cfg, 10, "clu_load", &conn, err, sizeof(err)) !=
	    GB_OK) {
		fprintf(stderr, "clu_load: connect: %s\n", err);
		return NULL;
	}
	if (amq_channel_setup(conn, CH, confirm, err, sizeof(err)) != GB_OK) {
		fprintf(stderr, "clu_load: channel: %s\n", err);
		amqp_destroy_connection(conn);
		return NULL;
	}
	return conn;
}

/* ---- declare / delete ---------------------------------------------------- */

static int cmd_declare(const struct gb_config *cfg, const char *queue)
{
	amqp_connection_state_t conn = open_conn(cfg, 0);
	if (conn == NULL)
		return 1;
	char err[512];
	amqp_table_entry_t e[1];
	e[0].key = cb("x-queue-type");
	e[0].value.kind = AMQP_FIELD_KIND_UTF8;
	e[0].value.value.bytes = cb("quorum");
	amqp_table_t args = {1, e};
	amqp_queue_declare(conn, CH, cb(queue), 0, 1, 0, 0, args);
	int rc = amq_rpc_check(conn, CH, "declare", err, sizeof(err), NULL);
	if (rc == GB_OK) {
		amqp_queue_bind(conn, CH, cb(queue), cb(AMQ_EX_EVENTS), cb("#"),
				amqp_empty_table);
		rc = amq_rpc_check(conn, CH, "bind", err, sizeof(err), NULL);
	}
	if (rc != GB_OK)
		fprintf(stderr, "clu_load: %s: %s\n", queue, err);
	amqp_connection_close(conn, AMQP_REPLY_SUCCESS);
	amqp_destroy_connection(conn);
	return rc == GB_OK ? 0 : 1;
}

static int cmd_delete(const struct gb_config *cfg, const char *queue)
{
	amqp_connection_state_t conn = open_conn(cfg, 0);
	if (conn == NULL)
		return 1;
	char err[512];
	amqp_queue_delete(conn, CH, cb(queue), 0, 0);
	int rc = amq_rpc_check(conn, CH, "delete", err, sizeof(err), NULL);
	if (rc != GB_OK)
		fprintf(stderr, "clu_load: %s: %s\n", queue, err);
	amqp_connection_close(conn, AMQP_REPLY_SUCCESS);
	amqp_destroy_connection(conn);
	return rc == GB_OK ? 0 : 1;
}

/* ---- publish ------------------------------------------------------------- */

enum kind { K_TASK, K_SUBMIT, K_PILOT };
static const char *const kind_word[] = {"task", "submit", "pilot"};
static const char *const kind_key[] = {"task.broker", "job.submit",
				       "pilot.match"};
static const enum kind cycle[] = {K_TASK, K_SUBMIT, K_PILOT, K_PILOT};
#define NCYCLE (sizeof(cycle) / sizeof(cycle[0]))

enum mstate { M_WAIT, M_INFLIGHT, M_RETURNED, M_DONE };

struct msg {
	enum kind kind;
	char id[96];
	msgpack_sbuffer body; /* encoded on first send, kept for resends */
	long long job0;       /* job.submit: first job id */
	enum mstate st;
	uint64_t tag;         /* delivery tag of the current send */
	double not_before;    /* a nacked message waits a little */
	int sends;
};

struct plan {
	struct tb_task *tasks;
	size_t ntasks;
	struct cdt_job *jobs;
	size_t njobs;
	struct cdt_pilot *pilots;
	size_t npilots;
	int jobs_per_msg;
	long long id_base;
};

static void load_templates(struct plan *p, struct arena *a, const char *tasks,
			   const char *dirac)
{
	char err[1024] = "";
	json_t *t = scn_read_file(tasks, err, sizeof(err));
	if (t == NULL || !json_is_array(t) || json_array_size(t) == 0)
		die("%s: expected an array of tasks", tasks);
	p->ntasks = json_array_size(t);
	p->tasks = arena_alloc(a, p->ntasks * sizeof(*p->tasks));
	for (size_t i = 0; i < p->ntasks; i++)
		if (scn_parse_task(json_array_get(t, i), "task", a,
				   &p->tasks[i], err, sizeof(err)) != GB_OK)
			die("task template: %s", err);
	json_t *d = scn_read_file(dirac, err, sizeof(err));
	json_t *jobs = d ? json_object_get(d, "jobs") : NULL;
	json_t *pilots = d ? json_object_get(d, "pilots") : NULL;
	if (jobs == NULL || pilots == NULL || !json_is_array(pilots))
		die("%s: expected {\"jobs\": [...], \"pilots\": [...]}", dirac);
	if (dj_parse_jobs(jobs, "jobs", a, &p->jobs, &p->njobs, err,
			  sizeof(err)) != GB_OK)
		die("jobs template: %s", err);
	p->npilots = json_array_size(pilots);
	p->pilots = arena_alloc(a, p->npilots * sizeof(*p->pilots));
	for (size_t i = 0; i < p->npilots; i++)
		if (dj_parse_pilot(json_array_get(pilots, i), "pilot", a,
				   &p->pilots[i], err, sizeof(err)) != GB_OK)
			die("pilot template: %s", err);
	/* The parsed templates may point into the JSON: both stay alive
	** until the program ends. */
}

/* Encode message i of the plan (kind-specific counter k). */
static void encode(const struct plan *p, struct msg *m, size_t k)
{
	msgpack_sbuffer_init(&m->body);
	int rc;
	if (m->kind == K_TASK) {
		struct tb_task t = p->tasks[k % p->ntasks];
		t.task_id = p->id_base + (long long)k;
		rc = cod_encode_task(&t, &m->body);
	} else if (m->kind == K_SUBMIT) {
		struct cdt_job jobs[64];
		int n = p->jobs_per_msg;
		m->job0 = p->id_base + (long long)k * n;
		for (int j = 0; j < n; j++) {
			jobs[j] = p->jobs[((size_t)k * n + j) % p->njobs];
			jobs[j].job_id = m->job0 + j;
		}
		struct cdt_submit s = {jobs, (size_t)n};
		rc = cdt_encode_submit(&s, &m->body);
	} else {
		struct cdt_pilot pl = p->pilots[k % p->npilots];
		pl.pilot_id = m->id;
		rc = cdt_encode_pilot(&pl, &m->body);
	}
	if (rc != GB_OK)
		die("cannot encode %s", m->id);
}

struct pub {
	const struct gb_config *cfg;
	amqp_connection_state_t conn;
	struct msg *m;
	size_t n;
	size_t *tag_msg; /* delivery tag - 1 of this connection -> message */
	size_t ntags, captags;
	size_t inflight, done, reconnects, replies, returns, resends, nacks;
	size_t nacks_in_row; /* since the last ack */
	double last_ack;     /* monotonic s of the last ack (or connect) */
	FILE *out;
	int jobs_per_msg;
};

static void conn_drop(struct pub *s, const char *why)
{
	fprintf(stderr, "clu_load: connection lost (%s); %zu unconfirmed "
			"will be published again\n",
		why, s->inflight);
	if (s->conn)
		amqp_destroy_connection(s->conn);
	s->conn = NULL;
	for (size_t i = 0; i < s->n; i++)
		if (s->m[i].st == M_INFLIGHT || s->m[i].st == M_RETURNED)
			s->m[i].st = M_WAIT;
	s->inflight = 0;
	s->ntags = 0;
}

static int conn_up(struct pub *s)
{
	s->conn = open_conn(s->cfg, 1);
	if (s->conn == NULL)
		return -1;
	s->ntags = 0; /* tags start at 1 on every channel */
	s->last_ack = now_s();
	s->nacks_in_row = 0;
	/* Direct reply-to: consume the pseudo-queue before publishing. */
	char err[512];
	amqp_basic_consume(s->conn, CH, cb("amq.rabbitmq.reply-to"),
			   amqp_empty_bytes, 0, 1, 0, amqp_empty_table);
	if (amq_rpc_check(s->conn, CH, "consume reply-to", err, sizeof(err),
			  NULL) != GB_OK) {
		fprintf(stderr, "clu_load: %s\n", err);
		amqp_destroy_connection(s->conn);
		s->conn = NULL;
		return -1;
	}
	return 0;
}

/* The broker settled `tag`: the message is sent (ack) or goes again. */
static void settle(struct pub *s, uint64_t tag, int ack)
{
	if (tag == 0 || tag > s->ntags)
		return;
	struct msg *m = &s->m[s->tag_msg[tag - 1]];
	if (m->tag != tag || (m->st != M_INFLIGHT && m->st != M_RETURNED))
		return; /* a stale tag of an earlier send */
	s->inflight--;
	if (!ack || m->st == M_RETURNED) {
		/* Nacked or unroutable: send again, after a pause (a queue
		** electing a leader nacks everything for a moment). */
		m->st = M_WAIT;
		m->not_before = now_s() + 0.5;
		return;
	}
	s->last_ack = now_s();
	s->nacks_in_row = 0;
	m->st = M_DONE;
	s->done++;
	if (m->kind == K_SUBMIT) {
		fprintf(s->out, "submit %s", m->id);
		for (int j = 0; j < s->jobs_per_msg; j++)
			fprintf(s->out, " %lld", m->job0 + j);
		fprintf(s->out, "\n");
	} else {
		fprintf(s->out, "%s %s\n", kind_word[m->kind], m->id);
	}
}

static void on_confirm(struct pub *s, uint64_t tag, int multiple, int ack)
{
	if (!multiple) {
		settle(s, tag, ack);
		return;
	}
	/* Tags of settled sends are ignored by settle(); a window of 64
	** keeps this scan short. */
	uint64_t lo = tag > 4 * WINDOW ? tag - 4 * WINDOW : 1;
	for (uint64_t t = lo; t <= tag; t++)
		settle(s, t, ack);
}

/* Read frames for up to `ms`; -1 when the connection failed. */
static int pump(struct pub *s, int ms)
{
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
	for (;;) {
		amqp_frame_t f;
		int st = amqp_simple_wait_frame_noblock(s->conn, &f, &tv);
		if (st == AMQP_STATUS_TIMEOUT)
			return 0;
		if (st != AMQP_STATUS_OK) {
			conn_drop(s, amqp_error_string2(st));
			return -1;
		}
		tv.tv_sec = 0;
		tv.tv_usec = 0;
		if (f.frame_type != AMQP_FRAME_METHOD)
			continue;
		amqp_method_number_t id = f.payload.method.id;
		void *d = f.payload.method.decoded;
		if (id == AMQP_BASIC_ACK_METHOD) {
			amqp_basic_ack_t *a = d;
			on_confirm(s, a->delivery_tag, a->multiple, 1);
		} else if (id == AMQP_BASIC_NACK_METHOD) {
			amqp_basic_nack_t *a = d;
			s->nacks++;
			s->nacks_in_row++;
			on_confirm(s, a->delivery_tag, a->multiple, 0);
		} else if (id == AMQP_BASIC_RETURN_METHOD ||
			   id == AMQP_BASIC_DELIVER_METHOD) {
			amqp_message_t msg;
			amqp_rpc_reply_t r =
				amqp_read_message(s->conn, f.channel, &msg, 0);
			if (r.reply_type != AMQP_RESPONSE_NORMAL) {
				conn_drop(s, "reading a message");
				return -1;
			}
			if (id == AMQP_BASIC_DELIVER_METHOD) {
				s->replies++;
			} else if (msg.properties._flags &
				   AMQP_BASIC_MESSAGE_ID_FLAG) {
				/* Unroutable (no queue yet, or none with a
				** quorum): its ack follows; send it again. */
				char *mid = bytes_dup(msg.properties.message_id);
				for (size_t i = 0; i < s->n; i++)
					if (s->m[i].st == M_INFLIGHT &&
					    strcmp(s->m[i].id, mid) == 0)
						s->m[i].st = M_RETURNED;
				free(mid);
				s->returns++;
			}
			amqp_destroy_message(&msg);
		} else if (id == AMQP_CHANNEL_CLOSE_METHOD ||
			   id == AMQP_CONNECTION_CLOSE_METHOD) {
			conn_drop(s, "closed by the broker");
			return -1;
		}
	}
}

static int publish_one(struct pub *s, const struct plan *p, size_t i,
		       size_t k)
{
	struct msg *m = &s->m[i];
	if (m->sends == 0)
		encode(p, m, k);
	amqp_basic_properties_t bp;
	memset(&bp, 0, sizeof(bp));
	bp._flags = AMQP_BASIC_MESSAGE_ID_FLAG | AMQP_BASIC_TYPE_FLAG |
		    AMQP_BASIC_CONTENT_TYPE_FLAG |
		    AMQP_BASIC_DELIVERY_MODE_FLAG;
	bp.message_id = cb(m->id);
	bp.type = cb(kind_key[m->kind]);
	bp.content_type = cb("application/msgpack");
	bp.delivery_mode = 2;
	if (m->kind == K_PILOT) {
		bp._flags |= AMQP_BASIC_REPLY_TO_FLAG |
			     AMQP_BASIC_CORRELATION_ID_FLAG;
		bp.reply_to = cb("amq.rabbitmq.reply-to");
		bp.correlation_id = cb(m->id);
	}
	int st = amqp_basic_publish(s->conn, CH, cb(AMQ_EX_REQUESTS),
				    cb(kind_key[m->kind]), 1, 0, &bp,
				    (amqp_bytes_t){m->body.size, m->body.data});
	if (st != AMQP_STATUS_OK) {
		conn_drop(s, amqp_error_string2(st));
		return -1;
	}
	if (m->sends++ > 0)
		s->resends++;
	if (s->ntags == s->captags) {
		size_t cap = s->captags ? 2 * s->captags : 4096;
		size_t *t = realloc(s->tag_msg, cap * sizeof(*t));
		if (t == NULL)
			die("%s", "out of memory");
		s->tag_msg = t;
		s->captags = cap;
	}
	s->tag_msg[s->ntags++] = i;
	m->tag = s->ntags;
	m->st = M_INFLIGHT;
	s->inflight++;
	return 0;
}

static int cmd_publish(const struct gb_config *cfg, int argc, char **argv)
{
	if (argc < 3)
		return 2;
	const char *run = argv[0], *outpath = argv[1];
	const char *tasks = NULL, *dirac = NULL;
	size_t count = 3200;
	double rate = 0;
	struct plan p = {.jobs_per_msg = 2, .id_base = 0};
	for (int i = 2; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--tasks") == 0)
			tasks = argv[i + 1];
		else if (strcmp(argv[i], "--dirac") == 0)
			dirac = argv[i + 1];
		else if (strcmp(argv[i], "--count") == 0)
			count = strtoul(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--rate") == 0)
			rate = strtod(argv[i + 1], NULL);
		else if (strcmp(argv[i], "--jobs-per-msg") == 0)
			p.jobs_per_msg = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--id-base") == 0)
			p.id_base = strtoll(argv[i + 1], NULL, 10);
		else
			return 2;
	}
	if (tasks == NULL || dirac == NULL || count == 0 ||
	    p.jobs_per_msg < 1 || p.jobs_per_msg > 64)
		return 2;
	struct arena a;
	arena_init(&a, 64u << 20);
	load_templates(&p, &a, tasks, dirac);

	struct pub s = {.cfg = cfg, .n = count,
			.jobs_per_msg = p.jobs_per_msg};
	s.m = calloc(count, sizeof(*s.m));
	size_t *kidx = calloc(count, sizeof(*kidx));
	s.out = fopen(outpath, "w");
	if (s.m == NULL || kidx == NULL || s.out == NULL)
		die("%s: cannot set up", outpath);
	size_t per_kind[3] = {0, 0, 0};
	for (size_t i = 0; i < count; i++) {
		s.m[i].kind = cycle[i % NCYCLE];
		kidx[i] = per_kind[s.m[i].kind]++;
		snprintf(s.m[i].id, sizeof(s.m[i].id), "%s-%s-%zu", run,
			 kind_word[s.m[i].kind], kidx[i]);
	}

	double t0 = now_s(), last_log = t0;
	size_t next = 0; /* first never-sent message */
	while (s.done < count) {
		if (s.conn == NULL) {
			if (conn_up(&s) != 0) {
				sleep_ms(500);
				continue;
			}
			if (next > 0)
				s.reconnects++;
		}
		/* Sends again first (oldest first), then new messages at the
		** pace asked for. */
		double t = now_s();
		for (size_t i = 0; i < next && s.inflight < WINDOW && s.conn;
		     i++)
			if (s.m[i].st == M_WAIT && s.m[i].not_before <= t)
				publish_one(&s, &p, i, kidx[i]);
		/*
		** A channel that only nacks (a broker nacks only on an
		** internal error of a queue), or confirms nothing for 5 s,
		** is not coming back: seen on RabbitMQ 3.10.8 when the
		** channel was opened while the queues' leader node was
		** going down (every later publish nacked, for as long as
		** that node stayed down). A new connection is fine.
		*/
		if (s.conn && s.nacks_in_row >= 100) {
			conn_drop(&s, "100 nacks in a row");
			continue;
		}
		if (s.conn && (s.inflight > 0 || s.nacks_in_row > 0) &&
		    t - s.last_ack > 5) {
			conn_drop(&s, "no confirm for 5 s");
			continue;
		}
		while (s.conn && next < count && s.inflight < WINDOW &&
		       (rate <= 0 || next < (size_t)((t - t0) * rate) + 1)) {
			if (publish_one(&s, &p, next, kidx[next]) != 0)
				break;
			next++;
		}
		if (s.conn)
			pump(&s, 20);
		if (t - last_log >= 5) {
			fprintf(stderr,
				"clu_load: %.0fs: %zu/%zu confirmed, %zu in "
				"flight, %zu resent, %zu nacked, %zu returned, "
				"%zu reconnects, %zu pilot replies\n",
				t - t0, s.done, count, s.inflight, s.resends,
				s.nacks, s.returns, s.reconnects, s.replies);
			fflush(s.out);
			last_log = t;
		}
	}
	/* Late pilot replies: a short grace period, for the count only. */
	double t_end = now_s() + 2;
	while (s.conn && now_s() < t_end && pump(&s, 100) == 0)
		;
	fprintf(stderr,
		"clu_load: done in %.1fs: %zu confirmed, %zu resent, %zu "
		"nacked, %zu returned, %zu reconnects, %zu pilot replies\n",
		now_s() - t0, s.done, s.resends, s.nacks, s.returns,
		s.reconnects, s.replies);
	printf("published=%zu resent=%zu nacked=%zu returned=%zu "
	       "reconnects=%zu replies=%zu seconds=%.1f\n",
	       s.done, s.resends, s.nacks, s.returns, s.reconnects,
	       s.replies, now_s() - t0);
	if (s.conn) {
		amqp_connection_close(s.conn, AMQP_REPLY_SUCCESS);
		amqp_destroy_connection(s.conn);
	}
	fclose(s.out);
	for (size_t i = 0; i < count; i++)
		if (s.m[i].sends)
			msgpack_sbuffer_destroy(&s.m[i].body);
	free(s.m);
	free(s.tag_msg);
	free(kidx);
	arena_free(&a);
	return 0;
}

/* ---- drain --------------------------------------------------------------- */

static void print_items(FILE *out, const char *mid, const amqp_bytes_t body)
{
	struct arena a;
	arena_init(&a, 16u << 20);
	struct cdt_match *items = NULL;
	size_t n = 0;
	struct cod_error e;
	memset(&e, 0, sizeof(e));
	if (cdt_decode_match_event(body.bytes, body.len, &a, &items, &n, &e) !=
	    GB_OK) {
		fprintf(out, "baditem %s %s:%s\n", mid, e.field, e.problem);
	} else {
		for (size_t i = 0; i < n; i++)
			fprintf(out, "item %s %lld %s %lld\n", mid,
				items[i].decision_id,
				items[i].request_id ? items[i].request_id : "-",
				items[i].matched ? items[i].job_id : 0);
	}
	arena_free(&a);
}

static int cmd_drain(const struct gb_config *cfg, int argc, char **argv)
{
	if (argc < 2)
		return 2;
	const char *queue = argv[0], *outpath = argv[1];
	int idle_ms = 3000;
	if (argc == 4 && strcmp(argv[2], "--idle-ms") == 0)
		idle_ms = atoi(argv[3]);
	FILE *out = fopen(outpath, "w");
	if (out == NULL)
		die("%s: cannot write", outpath);
	size_t got = 0;
	double last = now_s();
	while (now_s() - last < idle_ms / 1000.0) {
		amqp_connection_state_t conn = open_conn(cfg, 0);
		if (conn == NULL) {
			sleep_ms(500);
			continue;
		}
		char err[512];
		amqp_basic_qos(conn, CH, 0, 500, 0);
		amqp_basic_consume(conn, CH, cb(queue), amqp_empty_bytes, 0, 0,
				   0, amqp_empty_table);
		if (amq_rpc_check(conn, CH, "consume", err, sizeof(err),
				  NULL) != GB_OK)
			die("consume: %s", err);
		for (;;) {
			struct timeval tv = {0, 200000};
			amqp_envelope_t env;
			amqp_maybe_release_buffers(conn);
			amqp_rpc_reply_t r =
				amqp_consume_message(conn, &env, &tv, 0);
			if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
			    r.library_error == AMQP_STATUS_TIMEOUT) {
				if (now_s() - last >= idle_ms / 1000.0)
					break;
				continue;
			}
			if (r.reply_type != AMQP_RESPONSE_NORMAL) {
				fprintf(stderr, "clu_load: drain: connection "
						"lost, reconnecting\n");
				break;
			}
			last = now_s();
			got++;
			char *mid = env.message.properties._flags &
						    AMQP_BASIC_MESSAGE_ID_FLAG
					    ? bytes_dup(env.message.properties
								.message_id)
					    : bytes_dup(cb("-"));
			char *rk = bytes_dup(env.routing_key);
			fprintf(out, "event %s %s %016llx\n", mid, rk,
				(unsigned long long)fnv64(
					env.message.body.bytes,
					env.message.body.len));
			if (strncmp(rk, "pilot.", 6) == 0)
				print_items(out, mid, env.message.body);
			/* Written before the ack: a crash here shows the
			** event twice, never zero times. */
			fflush(out);
			amqp_basic_ack(conn, CH, env.delivery_tag, 0);
			free(mid);
			free(rk);
			amqp_destroy_envelope(&env);
		}
		amqp_connection_close(conn, AMQP_REPLY_SUCCESS);
		amqp_destroy_connection(conn);
	}
	fclose(out);
	printf("drained=%zu\n", got);
	return 0;
}

/* ---- main ---------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr,
		"usage: clu_load declare CONFIG QUEUE\n"
		"       clu_load delete CONFIG QUEUE\n"
		"       clu_load publish CONFIG RUN OUT --tasks F --dirac F "
		"[--count N] [--rate R] [--jobs-per-msg K] [--id-base B]\n"
		"       clu_load drain CONFIG QUEUE OUT [--idle-ms N]\n");
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		usage();
		return 2;
	}
	static struct gb_config cfg;
	char err[4096] = "";
	if (cfg_load(argv[2], &cfg, err, sizeof(err)) != GB_OK) {
		fprintf(stderr, "clu_load: %s:\n%s\n", argv[2], err);
		return 1;
	}
	int rc = 2;
	if (strcmp(argv[1], "declare") == 0 && argc == 4)
		rc = cmd_declare(&cfg, argv[3]);
	else if (strcmp(argv[1], "delete") == 0 && argc == 4)
		rc = cmd_delete(&cfg, argv[3]);
	else if (strcmp(argv[1], "publish") == 0)
		rc = cmd_publish(&cfg, argc - 3, argv + 3);
	else if (strcmp(argv[1], "drain") == 0)
		rc = cmd_drain(&cfg, argc - 3, argv + 3);
	if (rc == 2)
		usage();
	return rc;
}
