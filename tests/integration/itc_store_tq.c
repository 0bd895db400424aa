/*
** itc_store_tq.c — the DIRAC store (store_tq.h) against a real MariaDB:
** submission and read-back (grouping by signature, CPU segments,
** requirement rows, seq numbering, job records), duplicate job ids,
** identical submissions racing from two connections, claims racing from
** two connections, match records and their dedup, the claim log, job
** status monotonicity, the leader lease, priorities, history, the
** configuration, and the cleanup — alone and racing a submission. Last, a
** timing of submission and claim+record at benchmark-like sizes, printed
** and not asserted (the machine decides the numbers).
**
** Reads the configuration named by $GB_CONFIG (run-itc.sh). The DIRAC
** tables belong to the DIRAC tests as a whole (itc_match empties them
** too), so this test empties them at start and at the end. Races use
** threads with a connection each; cmocka's assertions are only used on
** the main thread, the threads report what they saw.
*/
#include "../unit/gbtest.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "base/arena.h"
#include "codec/codec_tq.h"
#include "pipeline/tqsync.h"
#include "priority.h"
#include "store/store.h"
#include "store/store_internal.h" /* ST_STRBUF: the long-value path */
#include "store/store_tq.h"
#include "taskqueue.h"

#include "itc_raw.h"

#define T0 1000LL /* fake unix time of the test's rows */
#define ARENA_CAP ((size_t)256 << 20)
#define PERF_JOBS 100000
#define PERF_TQS 20
#define PERF_CALL 5000
#define PERF_CLAIMS 10000
#define PERF_BATCH 64

static const char *const DN_A = "/DC=ch/DC=cern/CN=itc_alice";
static const char *const DN_B = "/DC=ch/DC=cern/CN=itc_bob";
static const char *sites_cr[] = {"LCG.CERN.cern", "LCG.RAL.uk"};
static const char *banned_x[] = {"LCG.X.xx"};
static const char *ce_one[] = {"ce01.cern.ch"};

static void cleanup(void)
{
	static const char *tables[] = {
		"pilot_matches",	   "tq_jobs",	      "tq_requirements",
		"tq_removed",
		"task_queues",		   "wms_jobs",	      "wms_history",
		"tq_corrector_slices", "tq_corrector_instances", "tq_groups",
		"tq_cpu_segments",	   "tq_settings",
	};
	char sql[128];
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		snprintf(sql, sizeof(sql), "DELETE FROM %s", tables[i]);
		raw_q(NULL, 0, sql, "");
	}
	raw_q(NULL, 0,
	      "UPDATE tq_state SET leader = NULL, lease_until = 0, dirty = 0, "
	      "computed_dirty = 0, computed_at = 0, version = 0 WHERE id = 1",
	      "");
}

ITC_GROUP_FIXTURE("itc_store_tq", cleanup)

/* The first column of the first row of `sql` with one integer parameter. */
static long long raw_ll(const char *sql, long long v)
{
	char buf[64] = "";
	raw_q(buf, sizeof(buf), sql, "l", v);
	return atoll(buf);
}

/* Short reads of the rows a test checks most often. */
#define TQ_READ(sql, v) raw_ll(sql " = ?", v)
#define jobs_in(tq) TQ_READ("SELECT COUNT(*) FROM tq_jobs WHERE tq_id", tq)
#define reqs_of(tq)                                                            \
	TQ_READ("SELECT COUNT(*) FROM tq_requirements WHERE tq_id", tq)
#define next_seq_of(tq)                                                        \
	TQ_READ("SELECT next_seq FROM task_queues WHERE tq_id", tq)
#define cpu_of(tq) TQ_READ("SELECT cpu_time FROM task_queues WHERE tq_id", tq)
#define seq_of(job) TQ_READ("SELECT seq FROM tq_jobs WHERE job_id", job)
#define tq_of_job(job) TQ_READ("SELECT tq_id FROM tq_jobs WHERE job_id", job)

static struct cdt_job mkjob(long long id, const char *owner, long long cpu,
			    int prio, const char **sites, size_t nsites,
			    const char **banned, size_t nbanned)
{
	struct cdt_job j;
	memset(&j, 0, sizeof(j));
	j.job_id = id;
	j.owner = owner;
	j.owner_group = "itc_user";
	j.setup = "LHCb-Production";
	j.cpu_time = cpu;
	j.user_priority = prio;
	j.set[TQ_F_SITES] = (struct tq_strset){sites, nsites};
	j.set[TQ_F_BANNED_SITES] = (struct tq_strset){banned, nbanned};
	return j;
}

/* One submission in a transaction of its own on `d`, redone when the
** server asks for it (a deadlock victim). */
static int submit(struct st_db *d, const struct cdt_job *jobs, size_t n,
		  const char *rid, struct arena *a, struct st_tq_submitted *out)
{
	int rc = GB_EDBRETRY;
	for (int t = 0; rc == GB_EDBRETRY && t < 5; t++) {
		rc = st_begin(d);
		if (rc == GB_OK)
			rc = st_tq_submit(d, jobs, n, tq_default_segments, 4,
					  rid, T0, a, out);
		if (rc == GB_OK)
			rc = st_commit(d);
		if (rc != GB_OK)
			st_rollback(d);
	}
	return rc;
}

/* st_tq_claim in a transaction of its own, redone likewise. */
static int claim(struct st_db *d, const long long *ids, size_t n, int *got)
{
	int rc = GB_EDBRETRY;
	for (int t = 0; rc == GB_EDBRETRY && t < 5; t++) {
		rc = st_begin(d);
		if (rc == GB_OK)
			rc = st_tq_claim(d, ids, n, got);
		if (rc == GB_OK)
			rc = st_commit(d);
		if (rc != GB_OK)
			st_rollback(d);
	}
	return rc;
}

/*
** A thread with a connection of its own, opened on the main thread (so a
** failed open fails the test before any thread waits on a barrier). The
** thread runs fn(d, arg); thr_join fails the test with its error.
*/
struct thr {
	int (*fn)(struct st_db *d, void *arg);
	void *arg;
	struct st_db *d;
	pthread_t th;
	int rc;
	char err[512];
};

static void *thr_main(void *p)
{
	struct thr *t = p;
	t->rc = t->fn(t->d, t->arg);
	if (t->rc != GB_OK)
		snprintf(t->err, sizeof(t->err), "%s", st_error(t->d));
	return NULL;
}

static void thr_start(struct thr *t, int (*fn)(struct st_db *, void *),
		      void *arg)
{
	char err[512] = "";
	memset(t, 0, sizeof(*t));
	if (st_open(&cfg, &t->d, err, sizeof(err)) != GB_OK)
		fail_msg("st_open: %s", err);
	t->fn = fn;
	t->arg = arg;
	assert_int_equal(pthread_create(&t->th, NULL, thr_main, t), 0);
}

static void thr_join(struct thr *t)
{
	pthread_join(t->th, NULL);
	st_close(t->d);
	if (t->rc != GB_OK)
		fail_msg("thread: %s: %s", gb_strerror(t->rc), t->err);
}

static void test_migrated(void **state)
{
	(void)state;
	int v = 0;
	assert_int_equal(st_schema_version(db, &v), GB_OK);
	assert_true(v >= 4);
	assert_int_equal(raw_ll("SELECT COUNT(*) FROM tq_state WHERE id = ?",
				1),
			 1);
}

/* ---- submission ---------------------------------------------------------- */

static void test_submit_read_back(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, ARENA_CAP);
	long long d0, cd, ca, ver;
	assert_int_equal(st_tq_prio_state(db, &d0, &cd, &ca, &ver), GB_OK);
	/* 1, 2 share a TQ (400 and 100 s are both segment 500); 3 is
	** segment 5000; 4 differs by a banned site; 5 by its owner. */
	struct cdt_job jobs[5] = {
		mkjob(101, DN_A, 400, 3, sites_cr, 2, NULL, 0),
		mkjob(102, DN_A, 100, 1, sites_cr, 2, NULL, 0),
		mkjob(103, DN_A, 600, 1, sites_cr, 2, NULL, 0),
		mkjob(104, DN_A, 400, 1, sites_cr, 2, banned_x, 1),
		mkjob(105, DN_B, 400, 1, sites_cr, 2, NULL, 0),
	};
	jobs[4].set[TQ_F_GRID_CES] = (struct tq_strset){ce_one, 1};
	struct st_tq_submitted out;
	assert_int_equal(submit(db, jobs, 5, "itc_sub_1", &a, &out), GB_OK);
	assert_int_equal(out.tqs, 4);
	assert_int_equal(out.new_tqs, 4);
	long long *tq = out.tq_of;
	assert_int_equal(tq[0], tq[1]);
	assert_true(tq[0] != tq[2] && tq[0] != tq[3] && tq[0] != tq[4]);
	assert_true(tq[2] != tq[3] && tq[3] != tq[4] && tq[2] != tq[4]);
	assert_int_equal(cpu_of(tq[0]), 500);
	assert_int_equal(cpu_of(tq[2]), 5000);
	assert_int_equal(next_seq_of(tq[0]), 2);
	assert_int_equal(seq_of(101), 0);
	assert_int_equal(seq_of(102), 1);
	assert_int_equal(reqs_of(tq[3]), 3);
	char buf[256];
	raw_q(buf, sizeof(buf),
	      "SELECT CONCAT_WS('|', status, status_rank, cpu_time, "
	      "user_priority, tq_id = ?, submit_request, submitted_at) "
	      "FROM wms_jobs WHERE job_id = ?",
	      "ll", tq[0], 101LL);
	assert_string_equal(buf, "waiting|0|400|3|1|itc_sub_1|1000");
	/* Four TQs created: priorities are dirty four times more. */
	long long d1;
	assert_int_equal(st_tq_prio_state(db, &d1, &cd, &ca, &ver), GB_OK);
	assert_int_equal(d1 - d0, 4);

	/* The index's view: one TQ with its sets, all TQs, the jobs. */
	struct st_tq_row r;
	assert_int_equal(st_tq_get(db, tq[4], &a, &r), GB_OK);
	assert_string_equal(r.owner, DN_B);
	assert_string_equal(r.owner_group, "itc_user");
	assert_int_equal(r.cpu_time, 500);
	assert_int_equal(r.next_seq, 1);
	assert_int_equal(r.set[TQ_F_SITES].n, 2);
	assert_string_equal(r.set[TQ_F_SITES].v[0], "LCG.CERN.cern");
	assert_string_equal(r.set[TQ_F_SITES].v[1], "LCG.RAL.uk");
	assert_int_equal(r.set[TQ_F_GRID_CES].n, 1);
	assert_string_equal(r.set[TQ_F_GRID_CES].v[0], "ce01.cern.ch");
	assert_int_equal(r.set[TQ_F_BANNED_SITES].n, 0);
	assert_non_null(strstr(r.signature, "itc_bob"));
	struct st_tq_row *rows = NULL;
	size_t n = 0;
	assert_int_equal(st_tq_list(db, 1, &a, &rows, &n), GB_OK);
	assert_int_equal(n, 4);
	for (size_t i = 1; i < n; i++)
		assert_true(rows[i - 1].tq_id < rows[i].tq_id);
	for (size_t i = 0; i < n; i++)
		if (rows[i].tq_id == tq[3]) {
			assert_int_equal(rows[i].set[TQ_F_BANNED_SITES].n, 1);
			assert_string_equal(rows[i].set[TQ_F_BANNED_SITES].v[0],
					    "LCG.X.xx");
		}
	assert_int_equal(st_tq_list(db, 0, &a, &rows, &n), GB_OK);
	assert_int_equal(n, 4);
	assert_int_equal(rows[0].set[TQ_F_SITES].n, 0);
	assert_int_equal(st_tq_get(db, 987654321, &a, &r), GB_ENOTFOUND);

	/* A second call into the same TQ numbers on from next_seq. */
	struct cdt_job more[2] = {
		mkjob(106, DN_A, 300, 2, sites_cr, 2, NULL, 0),
		mkjob(107, DN_A, 200, 2, sites_cr, 2, NULL, 0),
	};
	assert_int_equal(submit(db, more, 2, "itc_sub_2", &a, &out), GB_OK);
	assert_int_equal(out.tqs, 1);
	assert_int_equal(out.new_tqs, 0);
	assert_int_equal(out.tq_of[0], tq[0]);
	assert_int_equal(seq_of(107), 3);
	assert_int_equal(next_seq_of(tq[0]), 4);
	arena_free(&a);
}

struct scan_acc {
	long long jobs[16], seqs[16], tqs[16];
	int prio[16];
	size_t n;
};

static int scan_cb(void *ud, const struct st_tq_jobrow *r)
{
	struct scan_acc *s = ud;
	if (s->n == 16)
		return GB_ETOOBIG;
	s->jobs[s->n] = r->job_id;
	s->seqs[s->n] = r->seq;
	s->tqs[s->n] = r->tq_id;
	s->prio[s->n++] = r->user_priority;
	return GB_OK;
}

static int scan_stop(void *ud, const struct st_tq_jobrow *r)
{
	(void)ud;
	(void)r;
	return GB_ESTATE;
}

static void test_jobs_scan(void **state)
{
	(void)state;
	long long tq = tq_of_job(101);
	struct scan_acc s;
	memset(&s, 0, sizeof(s));
	assert_int_equal(st_tq_jobs_scan(db, 0, 0, scan_cb, &s), GB_OK);
	assert_int_equal(s.n, 7);
	for (size_t i = 1; i < s.n; i++)
		assert_true(s.tqs[i - 1] < s.tqs[i] ||
			    (s.tqs[i - 1] == s.tqs[i] &&
			     s.seqs[i - 1] < s.seqs[i]));
	memset(&s, 0, sizeof(s));
	assert_int_equal(st_tq_jobs_scan(db, tq, 2, scan_cb, &s), GB_OK);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.jobs[0], 106);
	assert_int_equal(s.seqs[0], 2);
	assert_int_equal(s.prio[0], 2);
	assert_int_equal(s.jobs[1], 107);
	assert_int_equal(st_tq_jobs_scan(db, tq, 0, scan_stop, NULL),
			 GB_ESTATE);
}

static void test_submit_refusals(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct st_tq_submitted out;
	struct cdt_job j[2] = {
		mkjob(201, DN_A, 100, 1, NULL, 0, NULL, 0),
		mkjob(101, DN_A, 100, 1, NULL, 0, NULL, 0), /* exists */
	};
	assert_int_equal(submit(db, j, 2, "itc_dup", &a, &out), GB_EDUP);
	assert_non_null(strstr(st_error(db), "101"));
	assert_int_equal(raw_ll("SELECT COUNT(*) FROM wms_jobs "
				"WHERE job_id = ?",
				201),
			 0);
	j[1].job_id = 201;
	assert_int_equal(submit(db, j, 2, "itc_dup", &a, &out), GB_EDUP);
	assert_non_null(strstr(st_error(db), "201"));
	/* Outside a transaction; a name longer than the column. */
	assert_int_equal(st_tq_submit(db, j, 1, tq_default_segments, 4, "x",
				      T0, &a, &out),
			 GB_ESTATE);
	char longname[300];
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	j[0].owner = longname;
	assert_int_equal(submit(db, j, 1, "itc_long", &a, &out), GB_EINVAL);
	j[0].owner = DN_A;
	j[0].user_priority = TQ_MAX_PRIORITY + 1;
	assert_int_equal(submit(db, j, 1, "itc_prio", &a, &out), GB_EINVAL);
	arena_free(&a);
}

static void test_signature_checks(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, ARENA_CAP);
	/* 40 sites: a signature longer than the store's fixed result
	** buffer, so the second call compares it the long way. */
	static char names[40][32];
	static const char *many[40];
	for (int i = 0; i < 40; i++) {
		snprintf(names[i], sizeof(names[i]), "LCG.SITE%02d.itc", i);
		many[i] = names[i];
	}
	struct cdt_job j = mkjob(2101, DN_A, 100, 1, many, 40, NULL, 0);
	struct st_tq_submitted out;
	assert_int_equal(submit(db, &j, 1, "itc_long_sig", &a, &out), GB_OK);
	assert_int_equal(out.new_tqs, 1);
	long long tq = out.tq_of[0];
	assert_true(raw_ll("SELECT LENGTH(signature) FROM task_queues "
			   "WHERE tq_id = ?",
			   tq) > ST_STRBUF);
	j.job_id = 2102;
	assert_int_equal(submit(db, &j, 1, "itc_long_sig", &a, &out), GB_OK);
	assert_int_equal(out.new_tqs, 0);
	assert_int_equal(out.tq_of[0], tq);
	assert_int_equal(seq_of(2102), 1);
	/* A stored text that is not what its hash stands for: a collision
	** is reported, not a job put into the wrong TQ. */
	long long short_tq = tq_of_job(105);
	const long long victims[2] = {tq, short_tq};
	struct cdt_job again[2] = {j, mkjob(2104, DN_B, 400, 1, sites_cr, 2,
					   NULL, 0)};
	again[0].job_id = 2103;
	again[1].set[TQ_F_GRID_CES] = (struct tq_strset){ce_one, 1};
	for (int i = 0; i < 2; i++) {
		/* Same length, last byte (the final ';') changed: only a
		** comparison of the whole text finds it. */
		raw_q(NULL, 0,
		      "UPDATE task_queues SET signature = CONCAT(LEFT("
		      "signature, LENGTH(signature) - 1), 'x') WHERE tq_id = ?",
		      "l", victims[i]);
		assert_int_equal(submit(db, &again[i], 1, "itc_coll", &a, &out),
				 GB_EDB);
		assert_non_null(strstr(st_error(db), "collision"));
		raw_q(NULL, 0,
		      "UPDATE task_queues SET signature = CONCAT(LEFT("
		      "signature, LENGTH(signature) - 1), ';') WHERE tq_id = ?",
		      "l", victims[i]);
	}
	assert_int_equal(raw_ll("SELECT COUNT(*) FROM wms_jobs WHERE job_id "
				"IN (2103, 2104) AND ? = 1",
				1),
			 0);
	arena_free(&a);
}

/* ---- races --------------------------------------------------------------- */

#define RACE_ROUNDS 20

struct race_arg {
	pthread_barrier_t *bar;
	long long id0;
	long long tq[RACE_ROUNDS];
	size_t created;
};

/* Submit one job per round into a signature new in that round; the
** barrier starts both connections' rounds together. */
static int race_submit(struct st_db *d, void *p)
{
	struct race_arg *r = p;
	struct arena a;
	arena_init(&a, ARENA_CAP);
	int rc = GB_OK;
	for (int k = 0; k < RACE_ROUNDS; k++) {
		char owner[64];
		snprintf(owner, sizeof(owner), "/CN=itc_race_%d", k);
		struct cdt_job j =
			mkjob(r->id0 + k, owner, 100, 1, sites_cr, 2, NULL, 0);
		struct st_tq_submitted out;
		pthread_barrier_wait(r->bar);
		if (rc == GB_OK)
			rc = submit(d, &j, 1, NULL, &a, &out);
		if (rc == GB_OK) {
			r->tq[k] = out.tq_of[0];
			r->created += out.new_tqs;
		}
	}
	arena_free(&a);
	return rc;
}

static void test_concurrent_identical(void **state)
{
	(void)state;
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, 2);
	struct race_arg r[2];
	struct thr t[2];
	memset(r, 0, sizeof(r));
	for (int i = 0; i < 2; i++) {
		r[i].bar = &bar;
		r[i].id0 = 300 + 100 * i;
		thr_start(&t[i], race_submit, &r[i]);
	}
	thr_join(&t[0]);
	thr_join(&t[1]);
	pthread_barrier_destroy(&bar);
	/* One TQ per round, created once, holding both jobs. */
	assert_int_equal(r[0].created + r[1].created, RACE_ROUNDS);
	for (int k = 0; k < RACE_ROUNDS; k++) {
		assert_int_equal(r[0].tq[k], r[1].tq[k]);
		assert_int_equal(jobs_in(r[0].tq[k]), 2);
		assert_int_equal(reqs_of(r[0].tq[k]), 2);
		assert_int_equal(next_seq_of(r[0].tq[k]), 2);
	}
	char buf[32];
	raw_q(buf, sizeof(buf),
	      "SELECT COUNT(*) FROM task_queues WHERE LEFT(owner, 12) = ?", "s",
	      "/CN=itc_race");
	assert_int_equal(atoi(buf), RACE_ROUNDS);
}

#define CLAIM_JOBS 200

struct claim_arg {
	pthread_barrier_t *bar;
	const long long *ids;
	int reverse; /* take the chunks from the end */
	int won[CLAIM_JOBS];
};

static int race_claim(struct st_db *d, void *p)
{
	struct claim_arg *c = p;
	int rc = GB_OK;
	pthread_barrier_wait(c->bar);
	for (size_t k = 0; rc == GB_OK && k < CLAIM_JOBS; k += ST_TQ_CLAIM_MAX) {
		size_t n = CLAIM_JOBS - k < ST_TQ_CLAIM_MAX ? CLAIM_JOBS - k
							    : ST_TQ_CLAIM_MAX;
		size_t off = c->reverse ? CLAIM_JOBS - k - n : k;
		rc = claim(d, c->ids + off, n, c->won + off);
	}
	return rc;
}

static void test_claim_two_connections(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, ARENA_CAP);
	static struct cdt_job jobs[CLAIM_JOBS];
	static long long ids[CLAIM_JOBS];
	for (int i = 0; i < CLAIM_JOBS; i++) {
		ids[i] = 1000 + i;
		jobs[i] = mkjob(ids[i], DN_B, 40000, 1, NULL, 0, NULL, 0);
	}
	struct st_tq_submitted out;
	assert_int_equal(submit(db, jobs, CLAIM_JOBS, "itc_claim", &a, &out),
			 GB_OK);
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, 2);
	static struct claim_arg c[2];
	struct thr t[2];
	memset(c, 0, sizeof(c));
	for (int i = 0; i < 2; i++) {
		c[i].bar = &bar;
		c[i].ids = ids;
		c[i].reverse = i;
		thr_start(&t[i], race_claim, &c[i]);
	}
	thr_join(&t[0]);
	thr_join(&t[1]);
	pthread_barrier_destroy(&bar);
	for (int i = 0; i < CLAIM_JOBS; i++)
		if (c[0].won[i] + c[1].won[i] != 1)
			fail_msg("job %lld claimed %d times", ids[i],
				 c[0].won[i] + c[1].won[i]);
	assert_int_equal(jobs_in(out.tq_of[0]), 0);
	/* Gone ids are not claimed again; misuse is refused. */
	int got[2] = {1, 1};
	long long two[2] = {ids[0], ids[0]};
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_tq_claim(db, ids, 2, got), GB_OK);
	assert_int_equal(got[0] + got[1], 0);
	assert_int_equal(st_tq_claim(db, two, 2, got), GB_EINVAL);
	assert_int_equal(st_tq_claim(db, ids, ST_TQ_CLAIM_MAX + 1, got),
			 GB_EINVAL);
	assert_int_equal(st_rollback(db), GB_OK);
	assert_int_equal(st_tq_claim(db, ids, 1, got), GB_ESTATE);
	arena_free(&a);
}

/* ---- match records ------------------------------------------------------- */

/* A recorded match as one line: id|matched|job|tq|cpu|pilot|site|code|
** owner|group|request ("-" for NULL), so one comparison shows it all. */
static const char *match_str(const struct cdt_match *m, char *buf,
			     size_t len)
{
	snprintf(buf, len, "%lld|%d|%lld|%lld|%lld|%s|%s|%s|%s|%s|%s",
		 m->decision_id, m->matched, m->job_id, m->tq_id,
		 m->tq_cpu_time, m->pilot_id, m->site, m->code,
		 m->owner ? m->owner : "-",
		 m->owner_group ? m->owner_group : "-", m->request_id);
	return buf;
}

/* st_tq_removals_scan callback: keep up to 16 rows. */
struct rm_seen {
	struct st_tq_rmrow r[16];
	size_t n;
};

static int rm_collect(void *ud, const struct st_tq_rmrow *r)
{
	struct rm_seen *s = ud;
	if (s->n < 16)
		s->r[s->n] = *r;
	s->n++;
	return GB_OK;
}

static void test_record_and_log(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, ARENA_CAP);
	long long before = raw_ll("SELECT COALESCE(MAX(id), ?) FROM "
				  "pilot_matches",
				  0);
	long long tq = tq_of_job(101);
	long long rm0 = raw_ll("SELECT rm_next_seq FROM task_queues WHERE "
			       "tq_id = ?",
			       tq);
	long long jid[2] = {101, 102};
	int got[2];
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_tq_claim(db, jid, 2, got), GB_OK);
	assert_true(got[0] && got[1]);
	struct st_tq_match_rec rec[3];
	memset(rec, 0, sizeof(rec));
	const char *rids[3] = {"itc_pm_1", "itc_pm_2", "itc_pm_3"};
	for (int i = 0; i < 3; i++) {
		rec[i].m.request_id = rids[i];
		rec[i].m.pilot_id = "itc_pilot";
		rec[i].m.site = "LCG.CERN.cern";
		rec[i].m.code = "matched";
		rec[i].m.reason = "matched: 1 task queue";
	}
	rec[0].m.matched = rec[2].m.matched = 1;
	rec[0].m.job_id = 101;
	rec[2].m.job_id = 102;
	rec[0].m.tq_id = rec[2].m.tq_id = tq;
	rec[0].m.tq_cpu_time = rec[2].m.tq_cpu_time = 500;
	rec[0].detail_json = "{\"why\":\"itc\"}";
	rec[1].m.code = "no_tq_matched";
	rec[1].m.reason = "no task queue matched: 4 considered";
	assert_int_equal(st_tq_record(db, rec, 3, T0 + 5), GB_OK);
	/* The removal log numbers the two claims in job id order, from the
	** TQ's rm_next_seq, whatever order they are given in. */
	struct st_tq_removal rm[2] = {{tq, 102, 0}, {tq, 101, 0}};
	assert_int_equal(st_tq_log_removals(db, rm, 2, "matched", T0 + 5),
			 GB_OK);
	assert_int_equal(rm[1].seq, rm0);
	assert_int_equal(rm[0].seq, rm0 + 1);
	assert_int_equal(st_commit(db), GB_OK);
	assert_true(rec[0].m.decision_id > before);
	assert_true(rec[1].m.decision_id > before);
	assert_true(rec[0].m.decision_id != rec[1].m.decision_id &&
		    rec[1].m.decision_id != rec[2].m.decision_id &&
		    rec[0].m.decision_id != rec[2].m.decision_id);
	char buf[512];
	raw_q(buf, sizeof(buf),
	      "SELECT CONCAT_WS('|', status, status_rank, site, pilot_id, "
	      "match_request, matched_at, status_at) FROM wms_jobs "
	      "WHERE job_id = ?",
	      "l", 101LL);
	assert_string_equal(buf,
			    "matched|1|LCG.CERN.cern|itc_pilot|itc_pm_1|1005|1005");

	struct cdt_match m;
	int found = 0;
	char want[512];
	assert_int_equal(st_tq_match_get(db, "itc_pm_1", &a, &m, &found),
			 GB_OK);
	assert_int_equal(found, 1);
	snprintf(want, sizeof(want),
		 "%lld|1|101|%lld|500|itc_pilot|LCG.CERN.cern|matched|%s|"
		 "itc_user|itc_pm_1",
		 rec[0].m.decision_id, tq, DN_A);
	assert_string_equal(match_str(&m, buf, sizeof(buf)), want);
	assert_int_equal(st_tq_match_get(db, "itc_pm_2", &a, &m, &found),
			 GB_OK);
	snprintf(want, sizeof(want),
		 "%lld|0|0|0|0|itc_pilot|LCG.CERN.cern|no_tq_matched|-|-|"
		 "itc_pm_2",
		 rec[1].m.decision_id);
	assert_string_equal(match_str(&m, buf, sizeof(buf)), want);
	assert_string_equal(m.reason, "no task queue matched: 4 considered");
	assert_int_equal(st_tq_match_get(db, "itc_pm_none", &a, &m, &found),
			 GB_OK);
	assert_int_equal(found, 0);
	char *json = NULL;
	assert_int_equal(st_tq_match_detail(db, "itc_pm_1", &a, &json), GB_OK);
	assert_string_equal(json, "{\"why\":\"itc\"}");
	assert_int_equal(st_tq_match_detail(db, "itc_pm_2", &a, &json), GB_OK);
	assert_null(json);

	/* The removal log: the two claimed jobs, in seq order, and the TQ's
	** rm_next_seq past them. */
	struct rm_seen seen = {0};
	assert_int_equal(st_tq_removals_scan(db, tq, rm0, rm_collect, &seen),
			 GB_OK);
	assert_int_equal(seen.n, 2);
	assert_int_equal(seen.r[0].job_id, 101);
	assert_int_equal(seen.r[1].job_id, 102);
	assert_int_equal(seen.r[0].seq, rm0);
	assert_int_equal(seen.r[1].seq, rm0 + 1);
	assert_int_equal(raw_ll("SELECT rm_next_seq FROM task_queues WHERE "
				"tq_id = ?",
				tq),
			 rm0 + 2);
	assert_int_equal(raw_ll("SELECT COUNT(*) FROM tq_removed WHERE "
				"cause = 'matched' AND tq_id = ?",
				tq),
			 rm0 + 2);
	seen.n = 0;
	assert_int_equal(st_tq_removals_scan(db, tq, rm0 + 2, rm_collect,
					     &seen),
			 GB_OK);
	assert_int_equal(seen.n, 0);
	/* Misuse: outside a transaction, a job twice, a bad cause. */
	assert_int_equal(st_tq_log_removals(db, rm, 2, "matched", T0),
			 GB_ESTATE);
	struct st_tq_removal twice[2] = {{tq, 101, 0}, {tq, 101, 0}};
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_tq_log_removals(db, twice, 2, "matched", T0),
			 GB_EINVAL);
	assert_int_equal(st_tq_log_removals(db, rm, 2, "", T0), GB_EINVAL);
	assert_int_equal(st_tq_log_removals(db, rm, 2, "a-cause-too-long!",
					    T0),
			 GB_EINVAL);
	assert_int_equal(st_rollback(db), GB_OK);

	/* A request recorded before: GB_EDUP, nothing of the call kept. */
	rec[1].m.request_id = "itc_pm_4";
	rec[0].m.request_id = "itc_pm_2";
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_tq_record(db, rec, 2, T0 + 6), GB_EDUP);
	assert_int_equal(st_rollback(db), GB_OK);
	raw_q(buf, sizeof(buf),
	      "SELECT COUNT(*) FROM pilot_matches WHERE request_id = ?", "s",
	      "itc_pm_4");
	assert_string_equal(buf, "0");
	assert_int_equal(st_tq_record(db, rec, 1, T0), GB_ESTATE);
	arena_free(&a);
}

/* ---- job status ---------------------------------------------------------- */

static int status(long long job, enum cdt_job_status s, long long t,
		  const char *site, int *found)
{
	struct cdt_status st = {job, s, t, site};
	int applied = -1;
	assert_int_equal(st_begin(db), GB_OK);
	int rc = st_tq_job_status(db, &st, T0, found, &applied);
	assert_int_equal(rc, GB_OK);
	assert_int_equal(st_commit(db), GB_OK);
	return applied;
}

static void test_job_status(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, ARENA_CAP);
	/* Job 103 is waiting: a higher rank applies, a lower one does not,
	** the same rank only when not older, nothing leaves a final rank.
	** The first update takes it out of its task queue (TQ-09). */
	long long tq103 = tq_of_job(103);
	assert_true(tq103 > 0);
	long long rm0 = raw_ll("SELECT rm_next_seq FROM task_queues WHERE "
			       "tq_id = ?",
			       tq103);
	static const struct {
		long long job;
		enum cdt_job_status s;
		long long t;
		int applied, found;
	} steps[] = {
		{103, CDT_ST_RUNNING, 2000, 1, 1},
		{103, CDT_ST_MATCHED, 2100, 0, 1},
		{103, CDT_ST_STALLED, 1900, 0, 1},
		{103, CDT_ST_STALLED, 2000, 1, 1},
		{103, CDT_ST_RUNNING, 2200, 1, 1},
		{103, CDT_ST_DONE, 2300, 1, 1},
		{103, CDT_ST_FAILED, 2400, 0, 1},
		{103, CDT_ST_KILLED, 2300, 0, 1},
		{999999, CDT_ST_RUNNING, 2000, 0, 0},
	};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		int found = -1;
		int applied = status(steps[i].job, steps[i].s, steps[i].t,
				     i == 0 ? "LCG.RAL.uk" : NULL, &found);
		assert_int_equal(applied, steps[i].applied);
		assert_int_equal(found, steps[i].found);
	}
	assert_int_equal(raw_ll("SELECT COUNT(*) FROM tq_jobs WHERE job_id "
				"= ?",
				103),
			 0);
	struct rm_seen seen = {0};
	assert_int_equal(st_tq_removals_scan(db, tq103, rm0, rm_collect,
					     &seen),
			 GB_OK);
	assert_int_equal(seen.n, 1);
	assert_int_equal(seen.r[0].job_id, 103);
	assert_int_equal(seen.r[0].seq, rm0);
	char cause[32];
	raw_q(cause, sizeof(cause),
	      "SELECT cause FROM tq_removed WHERE job_id = ?", "l", 103LL);
	assert_string_equal(cause, "running");
	/* It changes a job's queue: only inside a transaction. */
	struct cdt_status late = {103, CDT_ST_KILLED, 2500, NULL};
	int f = -1, ap = -1;
	assert_int_equal(st_tq_job_status(db, &late, T0, &f, &ap), GB_ESTATE);
	struct st_tq_jobinfo ji;
	assert_int_equal(st_tq_job_get(db, 103, &a, &ji), GB_OK);
	assert_string_equal(ji.status, "done");
	assert_string_equal(ji.site, "LCG.RAL.uk");
	assert_int_equal(ji.status_at, 2300);
	assert_int_equal(ji.submitted_at, T0);
	assert_int_equal(ji.matched_at, 0);
	assert_null(ji.pilot_id);
	assert_int_equal(st_tq_job_get(db, 999999, &a, &ji), GB_ENOTFOUND);
	arena_free(&a);
}

/* ---- the index follows every removal (TQ-09, issue 17 points 2 and 3) ---- */

/* Claim job `id` of TQ `tq` and log it, in d's open transaction. */
static void claim_logged(struct st_db *d, long long tq, long long id)
{
	int got = 0;
	assert_int_equal(st_tq_claim(d, &id, 1, &got), GB_OK);
	assert_int_equal(got, 1);
	struct st_tq_removal r = {tq, id, 0};
	assert_int_equal(st_tq_log_removals(d, &r, 1, "matched", T0), GB_OK);
	assert_true(r.seq >= 0);
}

static void test_index_follows_removals(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, ARENA_CAP);
	/* TQ A: jobs 7001..7003; TQ B (another CPU segment): 7004, 7005.
	** Both keep a job, so the cleanup test below finds only its own
	** empty TQ. */
	struct cdt_job jobs[5];
	for (int i = 0; i < 3; i++)
		jobs[i] = mkjob(7001 + i, DN_B, 40000, 2, NULL, 0, NULL, 0);
	jobs[3] = mkjob(7004, DN_B, 200000, 2, NULL, 0, NULL, 0);
	jobs[4] = mkjob(7005, DN_B, 200000, 2, NULL, 0, NULL, 0);
	for (int i = 0; i < 5; i++)
		jobs[i].owner_group = "itc_rm"; /* TQs of this test alone */
	struct st_tq_submitted out;
	assert_int_equal(submit(db, jobs, 5, "itc_rm_order", &a, &out), GB_OK);
	long long ta = out.tq_of[0], tb = out.tq_of[3];
	assert_true(ta != tb);

	struct tqi_index *x = tqi_new(), *behind = tqi_new();
	struct wk_tqs_state sx = {0}, sb = {0};
	struct wk_tqs_stats st;
	assert_int_equal(wk_tqs_load(db, x, &sx, NULL), GB_OK);
	assert_int_equal(wk_tqs_load(db, behind, &sb, NULL), GB_OK);
	assert_int_equal(tqi_tq_njobs(x, ta), 3);
	assert_int_equal(tqi_tq_njobs(x, tb), 2);

	/* A claim that commits after a later one: connection d2 claims 7001
	** first and holds its transaction open; db claims 7004 and commits.
	** (pilot_matches ids would order them 7001 < 7004, and a reader
	** that saw 7004's id would never look back.) */
	char err[512] = "";
	struct st_db *d2 = NULL;
	if (st_open(&cfg, &d2, err, sizeof(err)) != GB_OK)
		fail_msg("st_open: %s", err);
	assert_int_equal(st_begin(d2), GB_OK);
	claim_logged(d2, ta, 7001);
	assert_int_equal(st_begin(db), GB_OK);
	claim_logged(db, tb, 7004);
	assert_int_equal(st_commit(db), GB_OK);
	assert_int_equal(wk_tqs_refresh(db, x, &sx, &st), GB_OK);
	assert_int_equal(st.jobs_removed, 1);
	assert_int_equal(tqi_tq_njobs(x, tb), 1);
	assert_int_equal(tqi_tq_njobs(x, ta), 3); /* not committed yet */
	assert_int_equal(st_commit(d2), GB_OK);
	st_close(d2);
	assert_int_equal(wk_tqs_refresh(db, x, &sx, &st), GB_OK);
	assert_int_equal(st.jobs_removed, 1);
	assert_int_equal(tqi_tq_njobs(x, ta), 2);

	/* A waiting job killed: out of tq_jobs with its status, out of the
	** index at the next refresh. */
	struct cdt_status kill = {7002, CDT_ST_KILLED, T0 + 1, NULL};
	int found = 0, applied = 0;
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_tq_job_status(db, &kill, T0, &found, &applied),
			 GB_OK);
	assert_int_equal(st_commit(db), GB_OK);
	assert_int_equal(applied, 1);
	assert_int_equal(raw_ll("SELECT COUNT(*) FROM tq_jobs WHERE job_id "
				"= ?",
				7002),
			 0);
	assert_int_equal(wk_tqs_refresh(db, x, &sx, &st), GB_OK);
	assert_int_equal(st.jobs_removed, 1);
	assert_int_equal(tqi_tq_njobs(x, ta), 1);
	/* A claim of the killed job finds nothing to take. */
	long long k = 7002;
	int got = 1;
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_tq_claim(db, &k, 1, &got), GB_OK);
	assert_int_equal(st_rollback(db), GB_OK);
	assert_int_equal(got, 0);

	/* A worker further behind than the log is kept: its TQs are
	** reloaded, and it ends where the others are. */
	size_t pruned = 0;
	assert_int_equal(st_tq_removals_prune(db, T0 + 1, 100000, &pruned),
			 GB_OK);
	assert_true(pruned >= 3);
	assert_int_equal(raw_ll("SELECT COUNT(*) FROM tq_removed WHERE "
				"tq_id = ?",
				ta),
			 0);
	assert_int_equal(wk_tqs_refresh(db, behind, &sb, &st), GB_OK);
	assert_true(st.tqs_reloaded >= 2);
	assert_int_equal(tqi_tq_njobs(behind, ta), 1);
	assert_int_equal(tqi_tq_njobs(behind, tb), 1);
	tqi_free(x);
	tqi_free(behind);
	arena_free(&a);
}

/* ---- the leader ---------------------------------------------------------- */

static void test_lease(void **state)
{
	(void)state;
	/* Taken, refused to another, renewed, held up to its last second,
	** then taken over and refused to the first. */
	static const struct {
		const char *who;
		long long now;
		int leader;
	} steps[] = {{"itc_w1", 100, 1}, {"itc_w2", 110, 0},
		     {"itc_w1", 120, 1}, {"itc_w2", 150, 0},
		     {"itc_w2", 151, 1}, {"itc_w1", 152, 0}};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		int l = -1;
		assert_int_equal(st_tq_lease(db, steps[i].who, steps[i].now, 30,
					     &l),
				 GB_OK);
		assert_int_equal(l, steps[i].leader);
	}
	int l = -1;
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_tq_lease(db, "itc_w1", 300, 30, &l), GB_ESTATE);
	assert_int_equal(st_rollback(db), GB_OK);
	/* A release by a worker that does not hold the lease changes
	** nothing; the holder's release lets another worker take it at once,
	** before the lease (151 + 30) would have run out. */
	assert_int_equal(st_tq_lease_release(db, "itc_w1"), GB_OK);
	assert_int_equal(st_tq_lease(db, "itc_w1", 160, 30, &l), GB_OK);
	assert_int_equal(l, 0);
	assert_int_equal(st_tq_lease_release(db, "itc_w2"), GB_OK);
	assert_int_equal(st_tq_lease(db, "itc_w1", 161, 30, &l), GB_OK);
	assert_int_equal(l, 1);
}

static void test_prio(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, ARENA_CAP);
	long long d, cd, ca, v0, v1;
	assert_int_equal(st_tq_prio_state(db, &d, &cd, &ca, &v0), GB_OK);
	struct st_tq_row *rows = NULL;
	size_t n = 0;
	assert_int_equal(st_tq_list(db, 0, &a, &rows, &n), GB_OK);
	assert_true(n >= 2);
	struct pr_tq t[3];
	memset(t, 0, sizeof(t));
	t[0].tq_id = rows[1].tq_id;
	t[0].priority = 2.5;
	t[1].tq_id = rows[0].tq_id;
	t[1].priority = 0.125;
	t[2].tq_id = 987654321; /* gone: ignored */
	t[2].priority = 9;
	assert_int_equal(st_tq_prio_save(db, t, 3, d, T0 + 60), GB_OK);
	assert_int_equal(st_tq_prio_state(db, &d, &cd, &ca, &v1), GB_OK);
	assert_int_equal(v1, v0 + 1);
	assert_int_equal(cd, d);
	assert_int_equal(ca, T0 + 60);
	assert_int_equal(st_tq_list(db, 0, &a, &rows, &n), GB_OK);
	assert_near(rows[1].priority, 2.5, 1e-12);
	assert_near(rows[0].priority, 0.125, 1e-12);
	t[0].priority = NAN;
	assert_int_equal(st_tq_prio_save(db, t, 1, d, T0), GB_EINVAL);
	t[0].priority = 1;
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_tq_prio_save(db, t, 1, d, T0), GB_ESTATE);
	assert_int_equal(st_rollback(db), GB_OK);

	/* PR-08: task queues emptied by matching mark the priorities dirty,
	** in the matching transaction, counted once per task queue. */
	long long d2, x;
	assert_int_equal(st_tq_mark_dirty(db, 2), GB_ESTATE);
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_tq_mark_dirty(db, 0), GB_OK);
	assert_int_equal(st_tq_mark_dirty(db, 2), GB_OK);
	assert_int_equal(st_commit(db), GB_OK);
	assert_int_equal(st_tq_prio_state(db, &d2, &x, &x, &x), GB_OK);
	assert_int_equal(d2, d + 2);
	/* rolled back with the matching: nothing */
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_tq_mark_dirty(db, 5), GB_OK);
	assert_int_equal(st_rollback(db), GB_OK);
	assert_int_equal(st_tq_prio_state(db, &d2, &x, &x, &x), GB_OK);
	assert_int_equal(d2, d + 2);
	arena_free(&a);
}

static void test_history(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, ARENA_CAP);
	int found;
	/* Two of alice's jobs and one of bob's run. */
	assert_int_equal(status(104, CDT_ST_RUNNING, 3000, NULL, &found), 1);
	assert_int_equal(status(106, CDT_ST_RUNNING, 3000, NULL, &found), 1);
	assert_int_equal(status(105, CDT_ST_RUNNING, 3000, NULL, &found), 1);
	assert_int_equal(st_tq_history_sample(db, 5000), GB_OK);
	assert_int_equal(status(106, CDT_ST_DONE, 3100, NULL, &found), 1);
	assert_int_equal(st_tq_history_sample(db, 5100), GB_OK);
	assert_int_equal(st_tq_history_sample(db, 5100), GB_OK); /* again */
	struct pr_sample *h = NULL;
	size_t n = 0;
	assert_int_equal(st_tq_history_load(db, 4999, &a, &h, &n), GB_OK);
	assert_int_equal(n, 4);
	assert_int_equal(h[0].t, 5000);
	assert_string_equal(h[0].group, "itc_user");
	assert_string_equal(h[0].owner, DN_A);
	assert_near(h[0].running, 2, 0);
	assert_string_equal(h[1].owner, DN_B);
	assert_near(h[1].running, 1, 0);
	assert_int_equal(h[2].t, 5100);
	assert_near(h[2].running, 1, 0);
	assert_int_equal(st_tq_history_load(db, 5000, &a, &h, &n), GB_OK);
	assert_int_equal(n, 2);
	assert_int_equal(st_tq_history_prune(db, 5000), GB_OK);
	assert_int_equal(st_tq_history_load(db, 0, &a, &h, &n), GB_OK);
	assert_int_equal(n, 2);
	assert_int_equal(h[0].t, 5100);
	arena_free(&a);
}

/* A loaded configuration as one line, every field in order. */
static const char *cfg_str(const struct pr_config *c, const long long *seg,
			   size_t nseg, char *buf, size_t len)
{
	size_t k = (size_t)snprintf(buf, len, "%d %g groups", c->corrections,
				    c->default_share);
	for (size_t i = 0; i < c->ngroups && k < len; i++)
		k += (size_t)snprintf(buf + k, len - k, " %s:%g:%d",
				      c->groups[i].name, c->groups[i].share,
				      c->groups[i].job_sharing);
	for (size_t i = 0; i < c->ninst && k < len; i++) {
		const struct pr_instance *in = &c->inst[i];
		k += (size_t)snprintf(buf + k, len - k, " | %s:%s:%g", in->name,
				      in->group ? in->group : "-",
				      in->max_global);
		for (size_t j = 0; j < in->nslices && k < len; j++)
			k += (size_t)snprintf(
				buf + k, len - k, " %s:%lld:%g:%g",
				in->slices[j].name, in->slices[j].timespan,
				in->slices[j].weight,
				in->slices[j].max_correction);
	}
	for (size_t i = 0; i < nseg && k < len; i++)
		k += (size_t)snprintf(buf + k, len - k, "%s%lld",
				      i ? "," : " | seg ", seg[i]);
	return buf;
}

static void test_config(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct pr_config c;
	long long *seg = NULL;
	size_t nseg = 0;
	char buf[1024];
	/* Never saved: the defaults. */
	assert_int_equal(st_tq_config_load(db, &a, &c, &seg, &nseg), GB_OK);
	assert_string_equal(cfg_str(&c, seg, nseg, buf, sizeof(buf)),
			    "0 1000 groups | seg 500,5000,50000,300000");

	struct pr_group g[2] = {{"itc_lhcb_user", 10000, 0},
				{"itc_lhcb_mc", 300, 1}};
	struct pr_instance in[2];
	memset(in, 0, sizeof(in));
	in[0].name = "GroupsInstance";
	in[0].max_global = 3;
	in[0].nslices = 2;
	in[0].slices[0] = (struct pr_slice){"WeekSlice", 604800, 80, 2};
	in[0].slices[1] = (struct pr_slice){"HourSlice", 3600, 20, 5};
	in[1] = in[0];
	in[1].name = "lhcb_userInstance";
	in[1].group = "itc_lhcb_user";
	in[1].nslices = 1;
	struct pr_config w = {1, 500, g, 2, in, 2};
	const long long s3[3] = {360, 3600, 86400};
	const char *saved =
		"1 500 groups itc_lhcb_mc:300:1 itc_lhcb_user:10000:0 | "
		"GroupsInstance:-:3 WeekSlice:604800:80:2 HourSlice:3600:20:5 "
		"| lhcb_userInstance:itc_lhcb_user:3 WeekSlice:604800:80:2 | "
		"seg 360,3600,86400";
	assert_int_equal(st_tq_config_save(db, &w, s3, 3, T0), GB_OK);
	assert_int_equal(st_tq_config_load(db, &a, &c, &seg, &nseg), GB_OK);
	assert_string_equal(cfg_str(&c, seg, nseg, buf, sizeof(buf)), saved);
	/* Refused as a whole: a bad share, bad segments, a repeated slice. */
	g[0].share = -1;
	assert_int_equal(st_tq_config_save(db, &w, s3, 3, T0), GB_EINVAL);
	g[0].share = 1;
	const long long bad[2] = {100, 50};
	assert_int_equal(st_tq_config_save(db, &w, bad, 2, T0), GB_EINVAL);
	in[0].slices[1].name = "WeekSlice";
	assert_int_equal(st_tq_config_save(db, &w, s3, 3, T0), GB_EINVAL);
	assert_int_equal(st_tq_config_load(db, &a, &c, &seg, &nseg), GB_OK);
	assert_string_equal(cfg_str(&c, seg, nseg, buf, sizeof(buf)), saved);
	arena_free(&a);
}

/* ---- cleanup ------------------------------------------------------------- */

static int run_cleanup(struct st_db *d, void *p)
{
	return st_tq_cleanup(d, T0 + 10, 100, p);
}

struct sub_arg {
	const struct cdt_job *job;
	long long tq;
};

static int run_submit(struct st_db *d, void *p)
{
	struct sub_arg *s = p;
	struct arena a;
	struct st_tq_submitted out;
	arena_init(&a, ARENA_CAP);
	int rc = submit(d, s->job, 1, NULL, &a, &out);
	if (rc == GB_OK)
		s->tq = out.tq_of[0];
	arena_free(&a);
	return rc;
}

static void test_cleanup(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, ARENA_CAP);
	/* The TQ of the claim test is empty and old: it goes, with its
	** requirement rows, and so do the three that job.status emptied
	** (jobs 103, 104 and 105 left them); TQs with jobs stay; young ones
	** too. */
	long long empty = raw_ll("SELECT tq_id FROM wms_jobs WHERE job_id = ?",
				 1000);
	const char *count = "SELECT COUNT(*) FROM task_queues WHERE ? IN "
			    "(tq_id, 0)";
	long long nempty = raw_ll("SELECT COUNT(*) FROM task_queues t WHERE "
				  "created_at <= ? AND NOT EXISTS (SELECT 1 "
				  "FROM tq_jobs j WHERE j.tq_id = t.tq_id)",
				  T0 + 10);
	assert_int_equal(nempty, 4);
	assert_int_equal(raw_ll("SELECT COUNT(*) FROM tq_jobs WHERE tq_id = "
				"(SELECT tq_id FROM wms_jobs WHERE job_id = ?)",
				103),
			 0);
	long long d0, d1, x, tqs0 = raw_ll(count, 0);
	assert_int_equal(st_tq_prio_state(db, &d0, &x, &x, &x), GB_OK);
	size_t del = 99;
	assert_int_equal(st_tq_cleanup(db, T0 - 1, 100, &del), GB_OK);
	assert_int_equal(del, 0); /* all too young */
	assert_int_equal(st_tq_cleanup(db, T0 + 10, 100, &del), GB_OK);
	assert_int_equal(del, 4);
	assert_int_equal(raw_ll(count, empty), 0);
	assert_int_equal(reqs_of(empty), 0);
	assert_int_equal(raw_ll(count, 0), tqs0 - 4);
	assert_int_equal(st_tq_prio_state(db, &d1, &x, &x, &x), GB_OK);
	assert_int_equal(d1, d0 + 4);

	/* A TQ emptied by claims, then a submission into it that holds its
	** lock while a cleanup runs: the cleanup waits and finds the job. */
	struct cdt_job j = mkjob(2001, DN_B, 100, 1, ce_one, 1, NULL, 0);
	struct st_tq_submitted out;
	int got = 0;
	assert_int_equal(submit(db, &j, 1, NULL, &a, &out), GB_OK);
	long long tq = out.tq_of[0];
	assert_int_equal(claim(db, &j.job_id, 1, &got), GB_OK);
	j.job_id = 2002;
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_tq_submit(db, &j, 1, tq_default_segments, 4, NULL,
				      T0, &a, &out),
			 GB_OK);
	assert_int_equal(out.tq_of[0], tq);
	struct thr t;
	del = 99;
	thr_start(&t, run_cleanup, &del);
	usleep(300000); /* the cleanup is now waiting for the TQ row */
	assert_int_equal(st_commit(db), GB_OK);
	thr_join(&t);
	assert_int_equal(del, 0);
	assert_int_equal(jobs_in(tq), 1);
	assert_int_equal(reqs_of(tq), 1);

	/* The other order: a cleanup holding the (again empty) TQ's lock
	** deletes it while a submission waits; the submission then creates
	** the TQ anew, with its requirement rows. */
	assert_int_equal(claim(db, &j.job_id, 1, &got), GB_OK);
	assert_int_equal(mysql_query(raw, "START TRANSACTION"), 0);
	assert_int_equal(raw_q(NULL, 0,
			       "SELECT tq_id FROM task_queues WHERE tq_id = ? "
			       "FOR UPDATE",
			       "l", tq),
			 1);
	raw_q(NULL, 0, "DELETE FROM task_queues WHERE tq_id = ?", "l", tq);
	j.job_id = 2003;
	struct sub_arg s = {&j, 0};
	thr_start(&t, run_submit, &s);
	usleep(300000);
	assert_int_equal(mysql_query(raw, "COMMIT"), 0);
	thr_join(&t);
	assert_true(s.tq > tq);
	assert_int_equal(jobs_in(s.tq), 1);
	assert_int_equal(reqs_of(s.tq), 1);
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_tq_cleanup(db, T0, 1, &del), GB_ESTATE);
	assert_int_equal(st_rollback(db), GB_OK);
	arena_free(&a);
}

#define STRESS_ROUNDS 50

struct sweep_arg {
	atomic_int stop;
	size_t runs, deleted;
};

/* Clean up without pause until told to stop (GB_EDBRETRY is normal). */
static int sweep(struct st_db *d, void *p)
{
	struct sweep_arg *w = p;
	while (!atomic_load(&w->stop)) {
		size_t del = 0;
		int rc = st_tq_cleanup(d, T0 + 10, 100, &del);
		if (rc != GB_OK && rc != GB_EDBRETRY)
			return rc;
		w->runs++;
		w->deleted += del;
	}
	return GB_OK;
}

/* Submissions and claims emptying one TQ again and again while another
** connection sweeps: every committed job's TQ has its requirement row. */
static void test_cleanup_stress(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct sweep_arg w;
	memset(&w, 0, sizeof(w));
	atomic_init(&w.stop, 0);
	struct thr t;
	thr_start(&t, sweep, &w);
	const char *site[] = {"LCG.STRESS.itc"};
	for (int k = 0; k < STRESS_ROUNDS; k++) {
		struct cdt_job j = mkjob(3000 + k, DN_A, 100, 1, site, 1, NULL,
					 0);
		struct st_tq_submitted out;
		int got = 0;
		if (submit(db, &j, 1, NULL, &a, &out) != GB_OK)
			fail_msg("round %d: submit: %s", k, st_error(db));
		assert_int_equal(reqs_of(out.tq_of[0]), 1);
		assert_int_equal(tq_of_job(j.job_id), out.tq_of[0]);
		if (claim(db, &j.job_id, 1, &got) != GB_OK || !got)
			fail_msg("round %d: claim: %s", k, st_error(db));
	}
	atomic_store(&w.stop, 1);
	thr_join(&t);
	printf("# cleanup stress: %d rounds, %zu sweeps deleted %zu TQs\n",
	       STRESS_ROUNDS, w.runs, w.deleted);
	arena_free(&a);
}

/* ---- timing -------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_timing(void **state)
{
	(void)state;
	cleanup();
	static struct cdt_job jobs[PERF_JOBS];
	static char owners[PERF_TQS][48];
	for (int k = 0; k < PERF_TQS; k++)
		snprintf(owners[k], sizeof(owners[k]), "/CN=itc_perf_%02d", k);
	for (int i = 0; i < PERF_JOBS; i++)
		jobs[i] = mkjob(5000000 + i, owners[i % PERF_TQS], 3000,
				1 + i % 3, sites_cr, 2, NULL, 0);
	struct arena a;
	arena_init(&a, ARENA_CAP);
	double t = now_s();
	for (int off = 0; off < PERF_JOBS; off += PERF_CALL) {
		struct st_tq_submitted out;
		char rid[32];
		snprintf(rid, sizeof(rid), "itc_perf_%d", off);
		int rc = submit(db, jobs + off, PERF_CALL, rid, &a, &out);
		if (rc != GB_OK)
			fail_msg("submit at %d: %s", off, st_error(db));
		assert_int_equal(out.tqs, PERF_TQS);
	}
	double ts = now_s() - t;
	assert_int_equal(raw_ll("SELECT COUNT(*) FROM tq_jobs WHERE ? = 1", 1),
			 PERF_JOBS);

	static char rids[PERF_BATCH][32];
	t = now_s();
	for (int off = 0; off < PERF_CLAIMS; off += PERF_BATCH) {
		int n = PERF_CLAIMS - off < PERF_BATCH ? PERF_CLAIMS - off
						       : PERF_BATCH;
		long long ids[PERF_BATCH];
		int got[PERF_BATCH];
		struct st_tq_match_rec rec[PERF_BATCH];
		memset(rec, 0, sizeof(rec));
		for (int i = 0; i < n; i++) {
			ids[i] = jobs[off + i].job_id;
			snprintf(rids[i], sizeof(rids[i]), "itc_perf_pm_%d",
				 off + i);
			rec[i].m = (struct cdt_match){
				.request_id = rids[i], .pilot_id = "itc_pilot",
				.site = "LCG.CERN.cern", .matched = 1,
				.job_id = ids[i], .tq_id = 1, .code = "matched",
				.tq_cpu_time = 5000};
		}
		int rc = st_begin(db);
		if (rc == GB_OK)
			rc = st_tq_claim(db, ids, (size_t)n, got);
		if (rc == GB_OK)
			rc = st_tq_record(db, rec, (size_t)n, T0);
		if (rc == GB_OK)
			rc = st_commit(db);
		if (rc != GB_OK)
			fail_msg("claim+record at %d: %s", off, st_error(db));
		for (int i = 0; i < n; i++)
			assert_int_equal(got[i], 1);
	}
	double tc = now_s() - t;
	printf("# timing: submit %d jobs into %d TQs in calls of %d: %.2f s, "
	       "%.0f jobs/s\n",
	       PERF_JOBS, PERF_TQS, PERF_CALL, ts, PERF_JOBS / ts);
	printf("# timing: claim+record %d jobs in batches of %d: %.2f s, "
	       "%.0f matches/s\n",
	       PERF_CLAIMS, PERF_BATCH, tc, PERF_CLAIMS / tc);
	assert_int_equal(raw_ll("SELECT COUNT(*) FROM wms_jobs "
				"WHERE status = 'matched' AND ? = 1",
				1),
			 PERF_CLAIMS);
	arena_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_migrated, test_teardown),
		cmocka_unit_test_teardown(test_submit_read_back, test_teardown),
		cmocka_unit_test_teardown(test_jobs_scan, test_teardown),
		cmocka_unit_test_teardown(test_submit_refusals, test_teardown),
		cmocka_unit_test_teardown(test_signature_checks, test_teardown),
		cmocka_unit_test_teardown(test_concurrent_identical,
					  test_teardown),
		cmocka_unit_test_teardown(test_claim_two_connections,
					  test_teardown),
		cmocka_unit_test_teardown(test_record_and_log, test_teardown),
		cmocka_unit_test_teardown(test_job_status, test_teardown),
		cmocka_unit_test_teardown(test_index_follows_removals,
					  test_teardown),
		cmocka_unit_test_teardown(test_lease, test_teardown),
		cmocka_unit_test_teardown(test_prio, test_teardown),
		cmocka_unit_test_teardown(test_history, test_teardown),
		cmocka_unit_test_teardown(test_config, test_teardown),
		cmocka_unit_test_teardown(test_cleanup, test_teardown),
		cmocka_unit_test_teardown(test_cleanup_stress, test_teardown),
		cmocka_unit_test_teardown(test_timing, test_teardown),
	};
	return cmocka_run_group_tests_name("itc_store_tq", tests, group_setup,
					   group_teardown);
}
