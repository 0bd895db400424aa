/*
** gb_loadgen.c — the fault suite's load generator: a steady, mixed stream of
** requests with unique message ids, published with confirms, that survives
** every fault the suite injects (broker restarts, back-pressure, a dead
** connection) by reconnecting and re-sending what was not confirmed.
**
** It is the producer of the invariants: a request enters the ledger only
** once the broker has confirmed it, so "requests lost" is exactly the
** ledger minus what MariaDB shows decided (or the dead-letter queue shows
** refused). Re-sending an unconfirmed message keeps its message id, so a
** copy the broker did take before the fault is one more redelivery that the
** workers must recognise, never a second request.
**
** The mix, from the samples in etc/ with fresh ids:
**   task.broker  a sample task with a new taskID
**   job.broker   a sample job request with a new taskID and jobIDs and the
**                nucleus and gshare given (no task brokerage needed first)
**   job.submit   a few DIRAC sample jobs with new jobIDs; with
**                --large-every N, every Nth one carries --large-jobs jobs
**                (400 by default, about 80 kB), so that a network fault
**                can cut a link in the middle of a large message
**   pilot.match  a sample pilot with a new pilotID; the reply goes to the
**                durable queue gridbroker.faults.replies, read back here between
**                publishes (so matched jobs can report running)
**   job.status   DIRAC "running" for a job a reply said was matched, a
**                PanDA heartbeat for a job of an earlier job.broker, or
**                (one in three) DIRAC "killed", "failed", "done" or
**                "deleted" for a
**                job this generator submitted at least LG_END_AGE s ago
**                and has seen no reply match: it should still be waiting,
**                and a waiting job that ends must never reach a pilot
**                (TQ-09). Each job is ended at most once. Whether the
**                worker applied the status before or after a match is
**                the checker's business (check.sh), not a guess here: a
**                reply for the job may still be on its way.
**   bad          one in --bad-every messages is not msgpack at all: it
**                must be dead-lettered, not lost and not retried forever
**
** Ledgers (tab-separated, one line per confirmed request / read reply):
**   sent:    message_id  type  detail (job ids, task id, pilot id;
**            job.status: "jobID:status", status "heartbeat" for PanDA)
**   replies: request_id  matched(0/1)  job_id  decision_id
** Stops on SIGTERM/SIGINT once --messages requests are confirmed, after
** draining the replies that are waiting.
*/
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <msgpack.h>

#include "amqp/amqp.h"
#include "base/arena.h"
#include "codec/codec.h"
#include "codec/codec_jobs.h"
#include "codec/codec_panda.h"
#include "codec/codec_tq.h"
#include "base/config.h"
#include "explain/dirac_json.h"
#include "gb_error.h"
#include "explain/scenario.h"
#include "explain/scenario_jobs.h"

#define LG_REPLY_QUEUE "gridbroker.faults.replies"
#define LG_MAX_KEEP 200000 /* job ids remembered for job.status */
/* A submission younger than this may not have reached a worker yet; a
** status for a job the worker does not know is ignored, and such an end
** would test nothing. */
#define LG_END_AGE 2.0
#define LG_SEEN_BITS 19 /* the set of matched jobs: 2^19 slots */

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

struct lg {
	struct gb_config cfg;
	struct amq_sync *amq;
	FILE *sent, *replies;
	json_t *tasks, *jobreqs, *djobs, *pilots;
	uint64_t rng;
	const char *run;
	long long n_sent, n_resent, n_replies, n_reconnects;
	long long next_task, next_djob, next_pilot;
	long long *matched, nmatched;  /* DIRAC jobs a reply said matched */
	long long *pjobs, npjobs;      /* PanDA jobs of sent job.broker */
	long long *seen;               /* set of matched: open addressing */
	long long nseen;
	struct lg_sub { long long id; double t; } *subs; /* submitted by */
	long long nsubs;               /* us, neither ended nor seen matched */
	long long n_submits;           /* job.submit messages made */
	long large_every;              /* --large-every (0: none) */
	size_t large_jobs;             /* --large-jobs */
};

static uint64_t rnd(struct lg *g)
{
	uint64_t x = g->rng;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	g->rng = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
	if (s <= 0)
		return;
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !g_stop)
		;
}

static void keep(long long **arr, long long *n, long long v)
{
	if (*n < LG_MAX_KEEP)
		(*arr)[(*n)++] = v;
	else
		(*arr)[v % LG_MAX_KEEP] = v;
}

/* The matched-jobs set; once it is half full it stops growing (a job not
** remembered may then be ended after its match, which the checker
** accepts: the match came first). */
static size_t seen_slot(const struct lg *g, long long id)
{
	size_t mask = ((size_t)1 << LG_SEEN_BITS) - 1;
	size_t i = (size_t)((uint64_t)id * 0x9E3779B97F4A7C15ULL >> 20) & mask;
	while (g->seen[i] != 0 && g->seen[i] != id)
		i = (i + 1) & mask;
	return i;
}

static void seen_add(struct lg *g, long long id)
{
	size_t i = seen_slot(g, id);
	if (g->seen[i] == 0 && g->nseen < (1LL << (LG_SEEN_BITS - 1))) {
		g->seen[i] = id;
		g->nseen++;
	}
}

static int seen_has(const struct lg *g, long long id)
{
	return g->seen[seen_slot(g, id)] == id;
}

/* ---- the connection: open until it works, re-send until confirmed ------ */

static void lg_connect(struct lg *g)
{
	unsigned attempt = 0;
	while (g->amq == NULL) {
		char err[512] = "";
		g->amq = amq_sync_open(&g->cfg, err, sizeof(err));
		if (g->amq)
			break;
		if (attempt++ % 10 == 0)
			fprintf(stderr, "loadgen: connect: %s (retrying)\n", err);
		sleep_s(0.2 + 0.1 * (attempt < 10 ? attempt : 10));
	}
}

static void lg_drop(struct lg *g)
{
	if (g->amq)
		amq_sync_close(g->amq);
	g->amq = NULL;
	g->n_reconnects++;
}

/* Publish until the broker confirms; every try after the first is a
** re-send of the same message id. */
static void lg_publish(struct lg *g, const char *rkey,
		       const struct amq_props *p, const void *body, size_t len)
{
	for (int attempt = 0;; attempt++) {
		lg_connect(g);
		int rc = amq_sync_publish(g->amq, AMQ_EX_REQUESTS, rkey, p,
					  body, len, 5000);
		if (rc == GB_OK)
			return;
		if (attempt == 0)
			fprintf(stderr, "loadgen: publish %s: %s; re-sending\n",
				p->message_id, gb_strerror(rc));
		g->n_resent++;
		lg_drop(g);
	}
}

/* ---- replies ------------------------------------------------------------ */

static void lg_read_replies(struct lg *g, int max)
{
	for (int i = 0; i < max && g->amq; i++) {
		struct amq_message m;
		memset(&m, 0, sizeof(m));
		int rc = amq_sync_get(g->amq, LG_REPLY_QUEUE, &m);
		if (rc == GB_ENOTFOUND)
			return;
		if (rc != GB_OK) {
			lg_drop(g);
			return;
		}
		struct arena a;
		arena_init(&a, 1u << 20);
		struct cdt_match r;
		struct cod_error ce = {"", ""};
		if (cdt_decode_reply(m.body, m.len, &a, &r, &ce) == GB_OK) {
			fprintf(g->replies, "%s\t%d\t%lld\t%lld\n",
				m.correlation_id ? m.correlation_id : "-",
				r.matched, r.matched ? r.job_id : 0,
				r.decision_id);
			if (r.matched) {
				keep(&g->matched, &g->nmatched, r.job_id);
				seen_add(g, r.job_id);
			}
		} else {
			fprintf(g->replies, "%s\tbad\t0\t0\n",
				m.correlation_id ? m.correlation_id : "-");
		}
		arena_free(&a);
		g->n_replies++;
		/* Settle only once the line is written: a reply read here and
		** lost to a crash of ours would look like a missing reply. */
		fflush(g->replies);
		rc = amq_sync_settle(g->amq, m.tag, 1);
		amq_message_free(&m);
		if (rc != GB_OK)
			lg_drop(g);
	}
}

/* ---- the requests ------------------------------------------------------- */

static json_t *pick(struct lg *g, json_t *arr)
{
	return json_array_get(arr, rnd(g) % json_array_size(arr));
}

static int send_encoded(struct lg *g, const char *type, const char *msgid,
			msgpack_sbuffer *sb, const char *reply_to,
			const char *detail)
{
	struct amq_props p = {
		.message_id = msgid,
		.type = type,
		.content_type = "application/msgpack",
		.correlation_id = reply_to ? msgid : NULL,
		.reply_to = reply_to,
		.persistent = 1,
	};
	lg_publish(g, type, &p, sb->data, sb->size);
	fprintf(g->sent, "%s\t%s\t%s\n", msgid, type, detail);
	g->n_sent++;
	return 0;
}

static int gen_task(struct lg *g, char *msgid, size_t n)
{
	long long id = g->next_task++;
	json_t *o = json_deep_copy(pick(g, g->tasks));
	json_object_set_new(o, "taskID", json_integer(id));
	struct arena a;
	arena_init(&a, 16u << 20);
	struct tb_task t;
	char err[512] = "";
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	int rc = scn_parse_task(o, "task", &a, &t, err, sizeof(err));
	if (rc == GB_OK)
		rc = cod_encode_task(&t, &sb);
	if (rc == GB_OK) {
		snprintf(msgid, n, "%s-task-%lld", g->run, id);
		char d[32];
		snprintf(d, sizeof(d), "%lld", id);
		send_encoded(g, "task.broker", msgid, &sb, NULL, d);
	} else {
		fprintf(stderr, "loadgen: sample task: %s\n", err);
	}
	msgpack_sbuffer_destroy(&sb);
	arena_free(&a);
	json_decref(o);
	return rc;
}

static const char *const nuclei[] = {"CERN-PROD", "BNL-ATLAS", "FZK-LCG2",
				     "IN2P3-CC", "RAL-LCG2"};

static int gen_jobbroker(struct lg *g, char *msgid, size_t n)
{
	long long id = g->next_task++;
	json_t *o = json_deep_copy(pick(g, g->jobreqs));
	json_object_set_new(o, "taskID", json_integer(id));
	json_object_set_new(o, "nucleus",
			    json_string(nuclei[rnd(g) % 5]));
	if (json_object_get(o, "gshare") == NULL)
		json_object_set_new(o, "gshare", json_string("MC Reco"));
	json_t *jobs = json_object_get(o, "jobs");
	char detail[512];
	size_t dl = (size_t)snprintf(detail, sizeof(detail), "%lld:", id);
	for (size_t i = 0; i < json_array_size(jobs); i++) {
		long long jid = id * 1000 + (long long)i + 1;
		json_object_set_new(json_array_get(jobs, i), "jobID",
				    json_integer(jid));
		if (dl < sizeof(detail) - 24)
			dl += (size_t)snprintf(detail + dl, sizeof(detail) - dl,
					       "%s%lld", i ? "," : "", jid);
	}
	struct arena a;
	arena_init(&a, 16u << 20);
	struct gm_request r;
	char err[512] = "";
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	int rc = scj_parse_request(o, "request", &a, 0, &r, err, sizeof(err));
	if (rc == GB_OK)
		rc = cdj_encode_request(&r, &sb);
	if (rc == GB_OK) {
		snprintf(msgid, n, "%s-jobs-%lld", g->run, id);
		send_encoded(g, "job.broker", msgid, &sb, NULL, detail);
		for (size_t i = 0; i < json_array_size(jobs); i++)
			keep(&g->pjobs, &g->npjobs, id * 1000 + (long long)i + 1);
	} else {
		fprintf(stderr, "loadgen: sample job request: %s\n", err);
	}
	msgpack_sbuffer_destroy(&sb);
	arena_free(&a);
	json_decref(o);
	return rc;
}

static int gen_submit(struct lg *g, char *msgid, size_t n)
{
	size_t k = 1 + rnd(g) % 5;
	g->n_submits++;
	if (g->large_every > 0 && g->n_submits % g->large_every == 0)
		k = g->large_jobs;
	struct arena a;
	arena_init(&a, 4u << 20);
	/* 21 bytes a job id with its comma */
	struct cdt_job *jobs = arena_alloc(&a, k * sizeof(*jobs));
	size_t dcap = k * 21 + 1;
	char err[512] = "", *detail = arena_alloc(&a, dcap);
	if (jobs == NULL || detail == NULL) {
		arena_free(&a);
		return GB_ENOMEM;
	}
	size_t dl = 0;
	int rc = GB_OK;
	for (size_t i = 0; i < k && rc == GB_OK; i++) {
		json_t *o = json_deep_copy(pick(g, g->djobs));
		long long id = g->next_djob++;
		json_object_set_new(o, "jobID", json_integer(id));
		rc = dj_parse_job(o, "job", &a, &jobs[i], err, sizeof(err));
		dl += (size_t)snprintf(detail + dl, dcap - dl, "%s%lld",
				       i ? "," : "", id);
		json_decref(o);
	}
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	struct cdt_submit s = {jobs, k};
	if (rc == GB_OK)
		rc = cdt_encode_submit(&s, &sb);
	if (rc == GB_OK) {
		snprintf(msgid, n, "%s-tq-%lld", g->run, jobs[0].job_id);
		send_encoded(g, "job.submit", msgid, &sb, NULL, detail);
		double t = now_s();
		for (size_t i = 0; i < k && g->nsubs < LG_MAX_KEEP; i++)
			g->subs[g->nsubs++] = (struct lg_sub){jobs[i].job_id, t};
	} else {
		fprintf(stderr, "loadgen: sample DIRAC job: %s\n", err);
	}
	msgpack_sbuffer_destroy(&sb);
	arena_free(&a);
	return rc;
}

static int gen_pilot(struct lg *g, char *msgid, size_t n)
{
	long long id = g->next_pilot++;
	struct arena a;
	arena_init(&a, 1u << 20);
	struct cdt_pilot p;
	char err[512] = "", pid[96];
	snprintf(pid, sizeof(pid), "%s-pilot-%lld", g->run, id);
	int rc = dj_parse_pilot(pick(g, g->pilots), "pilot", &a, &p, err,
				sizeof(err));
	p.pilot_id = pid;
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	if (rc == GB_OK)
		rc = cdt_encode_pilot(&p, &sb);
	if (rc == GB_OK) {
		snprintf(msgid, n, "%s-pm-%lld", g->run, id);
		send_encoded(g, "pilot.match", msgid, &sb, LG_REPLY_QUEUE,
			     pid);
	} else {
		fprintf(stderr, "loadgen: sample pilot: %s\n", err);
	}
	msgpack_sbuffer_destroy(&sb);
	arena_free(&a);
	return rc;
}

static long long g_status_seq;

/* A job of ours to end: submitted long enough ago, not seen matched; it
** leaves the pool either way. 0 when none is found in a few tries. */
static long long pick_to_end(struct lg *g)
{
	double old = now_s() - LG_END_AGE;
	for (int tries = 0; tries < 8 && g->nsubs > 0; tries++) {
		long long i = (long long)(rnd(g) % (uint64_t)g->nsubs);
		struct lg_sub c = g->subs[i];
		if (c.t > old)
			continue;
		g->subs[i] = g->subs[--g->nsubs];
		if (!seen_has(g, c.id))
			return c.id;
	}
	return 0;
}

static int gen_status(struct lg *g, char *msgid, size_t n)
{
	static const enum cdt_job_status ends[] = {
		CDT_ST_KILLED, CDT_ST_FAILED, CDT_ST_DONE, CDT_ST_DELETED};
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	long long job = 0;
	const char *word = "running";
	int rc;
	time_t t = time(NULL);
	if (rnd(g) % 3 == 0)
		job = pick_to_end(g);
	if (job != 0) {
		enum cdt_job_status st =
			ends[rnd(g) % (sizeof(ends) / sizeof(ends[0]))];
		struct cdt_status s = {job, st, (long long)t, NULL};
		word = cdt_status_name(st);
		rc = cdt_encode_status(&s, &sb);
	} else if (g->nmatched > 0 && (g->npjobs == 0 || rnd(g) % 2 == 0)) {
		job = g->matched[rnd(g) % (uint64_t)g->nmatched];
		struct cdt_status s = {job, CDT_ST_RUNNING, (long long)t, NULL};
		rc = cdt_encode_status(&s, &sb);
	} else if (g->npjobs > 0) {
		job = g->pjobs[rnd(g) % (uint64_t)g->npjobs];
		struct cdp_status s;
		memset(&s, 0, sizeof(s));
		s.job_id = job;
		s.heartbeat = 1;
		s.time = (long long)t;
		word = "heartbeat";
		rc = cdp_encode_status(&s, &sb);
	} else {
		msgpack_sbuffer_destroy(&sb);
		return gen_task(g, msgid, n);
	}
	if (rc == GB_OK) {
		snprintf(msgid, n, "%s-st-%lld", g->run, ++g_status_seq);
		char d[48];
		snprintf(d, sizeof(d), "%lld:%s", job, word);
		send_encoded(g, "job.status", msgid, &sb, NULL, d);
	}
	msgpack_sbuffer_destroy(&sb);
	return rc;
}

static int gen_bad(struct lg *g, char *msgid, size_t n)
{
	static const char garbage[] = "\xc1 this is not msgpack";
	static const char *const types[] = {"task.broker", "job.broker",
					    "job.submit", "job.status"};
	const char *type = types[rnd(g) % 4];
	snprintf(msgid, n, "%s-bad-%lld", g->run, g->n_sent);
	msgpack_sbuffer sb = {sizeof(garbage) - 1, (char *)(uintptr_t)garbage,
			      0};
	return send_encoded(g, type, msgid, &sb, NULL, "-");
}

/* ---- main --------------------------------------------------------------- */

static json_t *load_json(const char *dir, const char *file, const char *key)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	json_error_t je;
	json_t *root = json_load_file(path, 0, &je);
	if (root == NULL) {
		fprintf(stderr, "loadgen: %s:%d: %s\n", path, je.line, je.text);
		exit(2);
	}
	json_t *v = key ? json_incref(json_object_get(root, key))
			: json_incref(root);
	json_decref(root);
	if (!json_is_array(v) || json_array_size(v) == 0) {
		fprintf(stderr, "loadgen: %s: no %s list\n", path,
			key ? key : "top-level");
		exit(2);
	}
	return v;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gb_loadgen -c CONFIG --samples DIR --sent FILE "
		"--replies FILE [options]\n"
		"  --messages N    keep going until N requests are confirmed "
		"and SIGTERM came (default 50000)\n"
		"  --rate R        requests per second (default 100)\n"
		"  --run NAME      message id prefix, unique per run\n"
		"  --id-base N     first taskID; DIRAC jobIDs and pilots "
		"follow from it\n"
		"  --bad-every K   one garbage message in K (default 200; 0 "
		"= none)\n"
		"  --seed S        random seed (default 1)\n"
		"  --quota         stop once --messages are confirmed, without "
		"waiting for SIGTERM\n"
		"  --large-every N every Nth job.submit is large (default 0: "
		"none)\n"
		"  --large-jobs K  jobs in a large job.submit (default 400, "
		"at most 5000)\n");
}

int main(int argc, char **argv)
{
	struct lg g;
	memset(&g, 0, sizeof(g));
	const char *conf = NULL, *samples = NULL, *sent = NULL, *replies = NULL;
	long long messages = 50000, id_base = 500000000;
	double rate = 100;
	long bad_every = 200;
	g.rng = 1;
	g.run = "fl";
	g.large_jobs = 400;
	static const struct option opts[] = {
		{"messages", required_argument, NULL, 'n'},
		{"rate", required_argument, NULL, 'r'},
		{"run", required_argument, NULL, 'R'},
		{"id-base", required_argument, NULL, 'i'},
		{"bad-every", required_argument, NULL, 'b'},
		{"seed", required_argument, NULL, 's'},
		{"large-every", required_argument, NULL, 'L'},
		{"quota", no_argument, NULL, 'Q'},
		{"large-jobs", required_argument, NULL, 'K'},
		{"samples", required_argument, NULL, 'S'},
		{"sent", required_argument, NULL, 'o'},
		{"replies", required_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	int c;
	while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': conf = optarg; break;
		case 'n': messages = atoll(optarg); break;
		case 'r': rate = atof(optarg); break;
		case 'R': g.run = optarg; break;
		case 'i': id_base = atoll(optarg); break;
		case 'b': bad_every = atol(optarg); break;
		case 's': g.rng = (uint64_t)atoll(optarg) | 1; break;
		case 'L': g.large_every = atol(optarg); break;
		case 'Q': g_stop = 1; break;
		case 'K': g.large_jobs = (size_t)atol(optarg); break;
		case 'S': samples = optarg; break;
		case 'o': sent = optarg; break;
		case 'p': replies = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!conf || !samples || !sent || !replies || rate <= 0 ||
	    messages < 0 || id_base <= 0 || g.large_every < 0 ||
	    g.large_jobs < 1 || g.large_jobs > 5000) {
		usage(stderr);
		return 2;
	}
	char err[1024] = "";
	if (cfg_load(conf, &g.cfg, err, sizeof(err)) != GB_OK) {
		fprintf(stderr, "loadgen: %s\n", err);
		return 2;
	}
	g.sent = fopen(sent, "a");
	g.replies = fopen(replies, "a");
	if (!g.sent || !g.replies) {
		perror("loadgen: ledger");
		return 2;
	}
	g.tasks = load_json(samples, "tasks-sample.json", NULL);
	g.jobreqs = load_json(samples, "jobs-sample.json", NULL);
	g.djobs = load_json(samples, "dirac-sample.json", "jobs");
	g.pilots = load_json(samples, "dirac-sample.json", "pilots");
	g.matched = calloc(LG_MAX_KEEP, sizeof(long long));
	g.pjobs = calloc(LG_MAX_KEEP, sizeof(long long));
	g.seen = calloc((size_t)1 << LG_SEEN_BITS, sizeof(long long));
	g.subs = calloc(LG_MAX_KEEP, sizeof(*g.subs));
	if (!g.matched || !g.pjobs || !g.seen || !g.subs)
		return 2;
	g.next_task = id_base;
	g.next_djob = id_base * 10;
	g.next_pilot = 1;
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGPIPE, SIG_IGN);

	double t0 = now_s(), next = t0, last_report = t0;
	char msgid[160];
	while (!(g_stop && g.n_sent >= messages)) {
		sleep_s(next - now_s());
		next += 1.0 / rate;
		if (next < now_s() - 1.0)
			next = now_s(); /* after a stall: no burst to catch up */
		uint64_t r = rnd(&g) % 100;
		if (bad_every > 0 && rnd(&g) % (uint64_t)bad_every == 0)
			gen_bad(&g, msgid, sizeof(msgid));
		else if (r < 25)
			gen_task(&g, msgid, sizeof(msgid));
		else if (r < 35)
			gen_jobbroker(&g, msgid, sizeof(msgid));
		else if (r < 55)
			gen_submit(&g, msgid, sizeof(msgid));
		else if (r < 85)
			gen_pilot(&g, msgid, sizeof(msgid));
		else
			gen_status(&g, msgid, sizeof(msgid));
		lg_read_replies(&g, 4);
		if (g.n_sent % 200 == 0)
			fflush(g.sent);
		if (now_s() - last_report >= 10) {
			last_report = now_s();
			fprintf(stderr,
				"loadgen: %lld sent (%.0f/s), %lld re-sent, "
				"%lld reconnects, %lld replies\n",
				g.n_sent, (double)g.n_sent / (last_report - t0),
				g.n_resent, g.n_reconnects, g.n_replies);
		}
	}
	fflush(g.sent);
	lg_connect(&g);
	lg_read_replies(&g, 1000000);
	fprintf(stderr,
		"loadgen: done: %lld sent, %lld re-sent, %lld reconnects, "
		"%lld replies\n",
		g.n_sent, g.n_resent, g.n_reconnects, g.n_replies);
	printf("%lld\n", g.n_sent);
	fclose(g.sent);
	fclose(g.replies);
	if (g.amq)
		amq_sync_close(g.amq);
	json_decref(g.tasks);
	json_decref(g.jobreqs);
	json_decref(g.djobs);
	json_decref(g.pilots);
	free(g.matched);
	free(g.pjobs);
	free(g.seen);
	free(g.subs);
	return 0;
}
