/*
** itc_store_panda.c — the PanDA life-cycle store (store_panda.h) against a
** real server: job.status ordering (ranks, producer times, brokered_at,
** final states), heartbeats, the queue_counts moves with their floor at
** 0, started_at and queues.last_start, the timeout scan with two
** connections (SKIP LOCKED gives disjoint sets), the verdicts (reassign
** with its request row, fail, kill, TO-13, a missing request), recheck,
** and the TO-13 reads: loads, the locked load and the oldest-first pick.
**
** Reads the configuration named by $GB_CONFIG. Every row this test writes
** has a name or request id starting with "itp_" or a job id from
** ITP_BASE, and is deleted before each test and after the run. Times are
** small fake values (the clock is the caller's), so the scan at a fake
** "now" sees only this test's jobs. Expected check times are written out
** as numbers from the rules (TO-09 2 h, TO-05 2 days, ...), not computed
** with the engine, so a change in either side shows here.
**
** Fixtures and inspection go through the raw connection with prepared
** statements, so the assertions do not depend on the code under test.
*/
#include "../unit/gbtest.h"

#include <limits.h>
#include <stdlib.h>

#include <mysql.h>

#include "base/arena.h"
#include "gb_error.h"
#include "store/store.h"
#include "store/store_internal.h" /* st_plain: a short lock wait on db2 */
#include "store/store_panda.h"
#include "timeout.h"

#include "itc_raw.h"

#define ITP_BASE 9200000000000LL /* job ids of this test */
#define ARENA_CAP (16u << 20)
#define QA "itp_QA" /* online, never started */
#define QB "itp_QB" /* paused, transfer times, workflow pull */
#define QC "itp_QC" /* disableReassign, num_slots 10 */
#define QX "itp_QX" /* no queues row */
#define GS "itp_share"
#define GS2 "itp_share2"
#define J(n) (ITP_BASE + (n))

static void cleanup(void)
{
	static const char *by_name[] = {
		"DELETE FROM queues WHERE LEFT(name, 4) = ?",
		"DELETE FROM queue_counts WHERE LEFT(queue, 4) = ?",
		"DELETE FROM decisions WHERE LEFT(request_id, 4) = ?",
		"DELETE FROM job_requests WHERE LEFT(request_id, 4) = ?",
	};
	for (size_t i = 0; i < sizeof(by_name) / sizeof(by_name[0]); i++)
		raw_q(NULL, 0, by_name[i], "s", "itp_");
	raw_q(NULL, 0, "DELETE FROM jobs WHERE job_id BETWEEN ? AND ?", "ll",
	      ITP_BASE, ITP_BASE + 99999);
}

ITC_GROUP_FIXTURE("itc_store_panda", cleanup)

/* A second worker's connection; closed by the teardown when a test fails. */
static struct st_db *db2;

static void open_db2(void)
{
	char err[512];
	if (st_open(&cfg, &db2, err, sizeof(err)) != GB_OK)
		fail_msg("second connection: %s", err);
}

static void close_db2(void)
{
	st_close(db2);
	db2 = NULL;
}

/* ---- fixtures ------------------------------------------------------------ */

/* last_start -1 = NULL. */
static void queue_add(const char *name, const char *status,
		      long long last_start, long long disable_reassign,
		      const char *workflow, long long num_slots)
{
	raw_q(NULL, 0,
	      "INSERT INTO queues (name, status, site, fairsharepolicy, "
	      "storage, storage_free, updated_at, last_start, "
	      "disable_reassign, workflow, num_slots) VALUES (?, ?, "
	      "'itp_SITE', '', 'itp_DISK', 100, 0, NULLIF(?, -1), ?, ?, ?)",
	      "ssllsl", name, status, last_start, disable_reassign, workflow,
	      num_slots);
}

/* The standard grid: QA, QB, QC (QX has no row). */
static int test_setup(void **state)
{
	(void)state;
	cleanup();
	queue_add(QA, "online", -1, 0, "", -1);
	queue_add(QB, "paused", 777, 0, "pull", -1);
	raw_q(NULL, 0,
	      "UPDATE queues SET transtimehi = 1.5, transtimelo = 3 WHERE "
	      "name = ?",
	      "s", QB);
	queue_add(QC, "online", -1, 1, "", 10);
	return 0;
}

/* A job created, brokered and in its status since `t`; queue "" = none. */
static void job_add(long long id, const char *queue, const char *status,
		    const char *gshare, long long t, const char *request_id)
{
	raw_q(NULL, 0,
	      "INSERT INTO jobs (job_id, task_id, request_id, queue, status, "
	      "nevents, input_mb, decision_id, updated_at, gshare) VALUES "
	      "(?, 92, ?, NULLIF(?, ''), ?, 0, 0, 0, 0, ?)",
	      "lssss", id, request_id, queue, status, gshare);
	raw_q(NULL, 0,
	      "UPDATE jobs SET created_at = ?, status_since = ?, "
	      "status_time = ?, brokered_at = ? WHERE job_id = ?",
	      "lllll", t, t, t, t, id);
}

static void job_check_at(long long id, long long at)
{
	raw_q(NULL, 0, "UPDATE jobs SET check_at = ? WHERE job_id = ?", "ll",
	      at, id);
}

static void counts_add(const char *queue, const char *gshare, long long d,
		       long long as, long long ac, long long st, long long ru,
		       long long tr)
{
	raw_q(NULL, 0,
	      "INSERT INTO queue_counts (queue, gshare, defined, assigned, "
	      "activated, `starting`, running, transferring) VALUES "
	      "(?, ?, ?, ?, ?, ?, ?, ?)",
	      "ssllllll", queue, gshare, d, as, ac, st, ru, tr);
}

static void request_add(const char *request_id)
{
	raw_q(NULL, 0,
	      "INSERT INTO job_requests (request_id, task_id, body, status, "
	      "pending_until, attempts, created_at, updated_at) VALUES "
	      "(?, 92, '', 'done', NULL, 1, 0, 0)",
	      "s", request_id);
}

/* status,queue,attempt,brokered_at,status_since,status_time,
** last_heartbeat,started_at,check_at,job_sub_status */
#define ASSERT_JOB(id, want)                                                 \
	do {                                                                 \
		char b_[1024];                                               \
		raw_q(b_, sizeof(b_),                                        \
		      "SELECT CONCAT_WS(',', status, IFNULL(queue, 'NULL'), " \
		      "attempt, brokered_at, status_since, status_time, "     \
		      "IFNULL(last_heartbeat, 'NULL'), "                      \
		      "IFNULL(started_at, 'NULL'), IFNULL(check_at, "         \
		      "'NULL'), job_sub_status) FROM jobs WHERE job_id = ?",  \
		      "l", (long long)(id));                                  \
		assert_string_equal(b_, want);                               \
	} while (0)

/* defined,assigned,activated,starting,running,transferring; "" = no row */
#define ASSERT_COUNTS(queue, gshare, want)                                   \
	do {                                                                 \
		char b_[256];                                                \
		raw_q(b_, sizeof(b_),                                        \
		      "SELECT CONCAT_WS(',', defined, assigned, activated, "  \
		      "`starting`, running, transferring) FROM queue_counts " \
		      "WHERE queue = ? AND gshare = ?",                       \
		      "ss", queue, gshare);                                   \
		assert_string_equal(b_, want);                               \
	} while (0)

#define ASSERT_RAW(want, sql, ...)                                           \
	do {                                                                 \
		char b_[1024];                                               \
		raw_q(b_, sizeof(b_), sql, __VA_ARGS__);                     \
		assert_string_equal(b_, want);                               \
	} while (0)

/* Apply one update; returns its outcome (the call must succeed). */
static enum sp_outcome upd(long long id, int hb, enum to_status s,
			   long long t, const char *sub, long long now,
			   struct sp_result *r)
{
	struct sp_update u = {id, hb, s, t, sub};
	int rc = st_panda_status(db, &u, NULL, now, r);
	if (rc != GB_OK)
		fail_msg("st_panda_status(%lld): %s: %s", id, gb_errname(rc),
			 st_error(db));
	return r->outcome;
}

/* ---- tests: job.status --------------------------------------------------- */

static void test_rank(void **state)
{
	(void)state;
	const int want[TO_NSTATUS] = {
		[TO_ST_PENDING] = 0,   [TO_ST_DEFINED] = 1,
		[TO_ST_ASSIGNED] = 2,  [TO_ST_THROTTLED] = 2,
		[TO_ST_ACTIVATED] = 3, [TO_ST_SENT] = 4,
		[TO_ST_STARTING] = 5,  [TO_ST_RUNNING] = 6,
		[TO_ST_HOLDING] = 7,   [TO_ST_TRANSFERRING] = 8,
		[TO_ST_FINISHED] = 9,  [TO_ST_FAILED] = 9,
		[TO_ST_CLOSED] = 9,    [TO_ST_CANCELLED] = 9,
	};
	for (int s = 0; s < TO_NSTATUS; s++)
		assert_int_equal(sp_rank((enum to_status)s), want[s]);
	assert_int_equal(sp_rank(TO_NSTATUS), -1);
	assert_int_equal(sp_rank((enum to_status)-1), -1);
}

/* Out of order: running, then an older activated (stale), an older and a
** newer running, a finished older than the running, then nothing moves. */
static void test_status_forward_only(void **state)
{
	(void)state;
	job_add(J(1), QA, "activated", GS, 1000, "itp_req");
	counts_add(QA, GS, 0, 0, 1, 0, 0, 0);
	struct sp_result r;
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(upd(J(1), 0, TO_ST_RUNNING, 1100, NULL, 2000, &r),
			 SP_APPLIED);
	assert_int_equal(r.old_status, TO_ST_ACTIVATED);
	assert_int_equal(r.new_status, TO_ST_RUNNING);
	assert_string_equal(r.queue, QA);
	/* TO-09: the heartbeat at 2000 + 2 h, before TO-08's 21 days. */
	assert_int_equal(r.check_at, 2000 + 7200 + 1);
	assert_int_equal(st_commit(db), GB_OK);
	ASSERT_JOB(J(1), "running,itp_QA,0,1000,2000,1100,2000,2000,9201,");
	ASSERT_COUNTS(QA, GS, "0,0,0,0,1,0");
	ASSERT_RAW("2000", "SELECT last_start FROM queues WHERE name = ?", "s",
		   QA);

	assert_int_equal(st_begin(db), GB_OK);
	/* A lower rank, even with a newer time. */
	assert_int_equal(upd(J(1), 0, TO_ST_ACTIVATED, 1200, NULL, 2100, &r),
			 SP_STALE);
	assert_int_equal(r.new_status, TO_ST_RUNNING);
	assert_int_equal(r.check_at, 9201);
	/* The same status, older than the one stored. */
	assert_int_equal(upd(J(1), 0, TO_ST_RUNNING, 1050, NULL, 2200, &r),
			 SP_STALE);
	ASSERT_JOB(J(1), "running,itp_QA,0,1000,2000,1100,2000,2000,9201,");
	/* The same status, newer: a heartbeat. */
	assert_int_equal(upd(J(1), 0, TO_ST_RUNNING, 1300, NULL, 2300, &r),
			 SP_HEARTBEAT);
	assert_int_equal(r.check_at, 2300 + 7201);
	/* A higher rank applies though produced before the running. */
	assert_int_equal(upd(J(1), 0, TO_ST_FINISHED, 1090, "done", 2400, &r),
			 SP_APPLIED);
	assert_int_equal(r.old_status, TO_ST_RUNNING);
	assert_int_equal(r.new_status, TO_ST_FINISHED);
	assert_int_equal(r.check_at, 0);
	assert_int_equal(st_commit(db), GB_OK);
	ASSERT_JOB(J(1),
		   "finished,itp_QA,0,1000,2400,1090,2300,2000,NULL,done");
	ASSERT_COUNTS(QA, GS, "0,0,0,0,0,0");

	/* A final status is never left; a heartbeat writes nothing. */
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(upd(J(1), 0, TO_ST_RUNNING, 1500, NULL, 2500, &r),
			 SP_STALE);
	assert_int_equal(upd(J(1), 0, TO_ST_FAILED, 1600, NULL, 2500, &r),
			 SP_STALE);
	assert_int_equal(upd(J(1), 1, TO_ST_RUNNING, 1600, NULL, 2600, &r),
			 SP_HEARTBEAT);
	assert_int_equal(st_commit(db), GB_OK);
	ASSERT_JOB(J(1),
		   "finished,itp_QA,0,1000,2400,1090,2300,2000,NULL,done");
	ASSERT_COUNTS(QA, GS, "0,0,0,0,0,0");
	ASSERT_RAW("2000", "SELECT last_start FROM queues WHERE name = ?", "s",
		   QA);
}

/* Counts move between columns, never below 0, a missing row is created;
** last_start only grows; started_at is the first running. */
static void test_status_counts(void **state)
{
	(void)state;
	job_add(J(2), QB, "activated", GS, 1000, "itp_req");
	counts_add(QB, GS, 0, 0, 0, 0, 0, 0); /* the grid says 0 activated */
	job_add(J(3), QX, "defined", GS, 1000, "itp_req");
	job_add(J(4), QB, "activated", GS, 1000, "itp_req");
	struct sp_result r;
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(upd(J(2), 0, TO_ST_STARTING, 1100, NULL, 3000, &r),
			 SP_APPLIED);
	/* starting: TO-09 (HEARTBEAT_TIMEOUT_pull falls back to 2 h) comes
	** before TO-05's 2 days. */
	assert_int_equal(r.check_at, 3000 + 7201);
	assert_int_equal(upd(J(2), 0, TO_ST_RUNNING, 1200, NULL, 3100, &r),
			 SP_APPLIED);
	assert_int_equal(upd(J(3), 0, TO_ST_ASSIGNED, 1100, NULL, 3000, &r),
			 SP_APPLIED);
	assert_int_equal(r.check_at, 3000 + 12 * 3600 + 1); /* TO-03 */
	assert_int_equal(st_commit(db), GB_OK);
	ASSERT_COUNTS(QB, GS, "0,0,0,0,1,0");
	ASSERT_COUNTS(QX, GS, "0,1,0,0,0,0");
	ASSERT_JOB(J(2), "running,itp_QB,0,1000,3100,1200,3100,3100,10301,");
	ASSERT_JOB(J(3), "assigned,itp_QX,0,1000,3000,1100,NULL,NULL,46201,");
	ASSERT_RAW("3100", "SELECT last_start FROM queues WHERE name = ?", "s",
		   QB);

	/* Holding, then running again is a rank down: stale; transferring
	** with its own stage-out is watched by TO-09. A start older than the
	** queue's last one leaves last_start. */
	raw_q(NULL, 0, "UPDATE queues SET last_start = 99999 WHERE name = ?",
	      "s", QB);
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(upd(J(2), 0, TO_ST_HOLDING, 1300, NULL, 3200, &r),
			 SP_APPLIED);
	assert_int_equal(upd(J(2), 0, TO_ST_RUNNING, 1400, NULL, 3300, &r),
			 SP_STALE);
	assert_int_equal(
		upd(J(2), 0, TO_ST_TRANSFERRING, 1500, "stageout", 3400, &r),
		SP_APPLIED);
	assert_int_equal(r.check_at, 3400 + 7201);
	assert_int_equal(upd(J(4), 0, TO_ST_RUNNING, 1100, NULL, 3500, &r),
			 SP_APPLIED);
	assert_int_equal(st_commit(db), GB_OK);
	ASSERT_COUNTS(QB, GS, "0,0,0,0,1,1");
	ASSERT_JOB(J(2), "transferring,itp_QB,0,1000,3400,1500,3400,3100,"
			 "10601,stageout");
	ASSERT_JOB(J(4), "running,itp_QB,0,1000,3500,1100,3500,3500,10701,");
	ASSERT_RAW("99999", "SELECT last_start FROM queues WHERE name = ?",
		   "s", QB);

	/* A count a grid load set to 0 stays at 0 when the job leaves. */
	raw_q(NULL, 0,
	      "UPDATE queue_counts SET transferring = 0 WHERE queue = ?", "s",
	      QB);
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(upd(J(2), 0, TO_ST_FINISHED, 1600, NULL, 3600, &r),
			 SP_APPLIED);
	assert_int_equal(st_commit(db), GB_OK);
	ASSERT_COUNTS(QB, GS, "0,0,0,0,1,0");
}

static void test_status_heartbeat_stale_unknown(void **state)
{
	(void)state;
	job_add(J(5), QA, "running", GS, 1000, "itp_req");
	job_add(J(6), QA, "activated", GS, 1000, "itp_req");
	job_add(J(7), QA, "running", GS, 5000, "itp_req");
	job_add(J(8), "", "pending", GS, 1000, "itp_req");
	struct sp_result r;
	assert_int_equal(st_begin(db), GB_OK);
	/* A heartbeat: last_heartbeat and check_at, jobSubStatus given. */
	assert_int_equal(upd(J(5), 1, TO_ST_PENDING, 1500, "stageout", 4000,
			     &r),
			 SP_HEARTBEAT);
	assert_int_equal(r.old_status, TO_ST_RUNNING);
	assert_int_equal(r.check_at, 4000 + 7201);
	/* Not an alive status: nothing written. */
	assert_int_equal(upd(J(6), 1, TO_ST_PENDING, 1500, "x", 4000, &r),
			 SP_HEARTBEAT);
	/* Older than the job's brokerage: an earlier attempt's. */
	assert_int_equal(upd(J(7), 0, TO_ST_TRANSFERRING, 4999, NULL, 6000,
			     &r),
			 SP_STALE);
	assert_int_equal(upd(J(7), 1, TO_ST_PENDING, 4999, NULL, 6000, &r),
			 SP_STALE);
	assert_int_equal(upd(J(7), 0, TO_ST_TRANSFERRING, 5000, NULL, 6000,
			     &r),
			 SP_APPLIED);
	/* TO-11 at QA: transtimelo unset, 6 days. */
	assert_int_equal(r.check_at, 6000 + 6 * 86400 + 1);
	/* A job without a queue cannot become activated (ck_jobs_queue). */
	assert_int_equal(upd(J(8), 0, TO_ST_ACTIVATED, 1100, NULL, 6000, &r),
			 SP_STALE);
	assert_string_equal(r.queue, "");
	assert_int_equal(upd(J(99999), 0, TO_ST_RUNNING, 1, NULL, 6000, &r),
			 SP_UNKNOWN_JOB);
	assert_int_equal(st_commit(db), GB_OK);
	ASSERT_JOB(J(5), "running,itp_QA,0,1000,1000,1000,4000,NULL,11201,"
			 "stageout");
	ASSERT_JOB(J(6), "activated,itp_QA,0,1000,1000,1000,NULL,NULL,NULL,");
	ASSERT_JOB(J(7), "transferring,itp_QA,0,5000,6000,5000,6000,NULL,"
			 "524401,");
	ASSERT_JOB(J(8), "pending,NULL,0,1000,1000,1000,NULL,NULL,NULL,");
	/* Only the applied change moved a count (and created the row). */
	ASSERT_COUNTS(QA, GS, "0,0,0,0,0,1");

	/* Refusals. */
	struct sp_update u = {J(5), 0, TO_ST_PENDING, 1, NULL};
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_panda_status(db, &u, NULL, 1, &r), GB_EINVAL);
	u.status = TO_NSTATUS;
	assert_int_equal(st_panda_status(db, &u, NULL, 1, &r), GB_EINVAL);
	assert_int_equal(st_panda_status(db, NULL, NULL, 1, &r), GB_EINVAL);
	u.status = TO_ST_RUNNING;
	assert_int_equal(st_panda_status(db, &u, NULL, 1, NULL), GB_EINVAL);
	assert_int_equal(st_rollback(db), GB_OK);
	assert_int_equal(st_panda_status(db, &u, NULL, 1, &r), GB_ESTATE);
}

/* ---- tests: the timeout scan --------------------------------------------- */

static int has_id(const struct sp_job *v, size_t n, long long id)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].j.job_id == id)
			return 1;
	return 0;
}

static void test_due_skip_locked(void **state)
{
	(void)state;
	job_add(J(11), QB, "activated", GS, 1000, "itp_req_11");
	raw_q(NULL, 0,
	      "UPDATE jobs SET current_priority = 900, last_heartbeat = 950, "
	      "attempt = 2, job_sub_status = 'x' WHERE job_id = ?",
	      "l", J(11));
	job_add(J(12), "", "pending", GS, 1000, "itp_req");
	job_add(J(13), QX, "assigned", GS, 1000, "itp_req");
	job_add(J(14), QC, "running", GS2, 1000, "itp_req");
	job_add(J(15), QA, "running", GS, 1000, "itp_req");
	job_add(J(16), QA, "finished", GS, 1000, "itp_req");
	job_check_at(J(11), 500);
	job_check_at(J(12), 501);
	job_check_at(J(13), 502);
	job_check_at(J(14), 503);
	job_check_at(J(15), 9000);

	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct sp_job *v = NULL, *w = NULL;
	size_t n = 0, m = 0;
	assert_int_equal(st_panda_due(db, 600, 10, &a, &v, &n), GB_ESTATE);
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_panda_due(db, 499, 10, &a, &v, &n), GB_OK);
	assert_int_equal(n, 0);
	assert_int_equal(st_panda_due(db, 600, 2, &a, &v, &n), GB_OK);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].j.job_id, J(11)); /* oldest check_at first */
	assert_int_equal(v[1].j.job_id, J(12));
	const struct sp_job *x = &v[0];
	assert_int_equal(x->task_id, 92);
	assert_string_equal(x->queue, QB);
	assert_string_equal(x->gshare, GS);
	assert_string_equal(x->request_id, "itp_req_11");
	assert_int_equal(x->attempt, 2);
	assert_int_equal(x->j.status, TO_ST_ACTIVATED);
	assert_int_equal(x->j.status_since, 1000);
	assert_int_equal(x->j.created_at, 1000);
	assert_int_equal(x->j.last_heartbeat, 950);
	assert_int_equal(x->j.current_priority, 900);
	assert_int_equal(x->j.own_stageout, 1);
	assert_string_equal(x->j.workflow, "pull");
	assert_int_equal(x->has_queue_row, 1);
	assert_int_equal(x->q.paused, 1);
	assert_int_equal(x->q.disable_reassign, 0);
	assert_int_equal(x->q.last_start, 777);
	assert_near(x->q.transtimehi, 1.5, 0);
	assert_near(x->q.transtimelo, 3, 0);
	x = &v[1];
	assert_null(x->queue);
	assert_int_equal(x->has_queue_row, 0);
	assert_int_equal(x->j.status, TO_ST_PENDING);
	assert_int_equal(x->j.last_heartbeat, 0);
	assert_int_equal(x->j.own_stageout, 0);
	assert_string_equal(x->j.workflow, "");

	/* A second worker at the same time gets the rest, never these. */
	open_db2();
	assert_int_equal(st_begin(db2), GB_OK);
	assert_int_equal(st_panda_due(db2, 600, 10, &a, &w, &m), GB_OK);
	assert_int_equal(m, 2);
	assert_int_equal(w[0].j.job_id, J(13));
	assert_int_equal(w[1].j.job_id, J(14));
	for (size_t i = 0; i < m; i++)
		assert_false(has_id(v, n, w[i].j.job_id));
	assert_string_equal(w[0].queue, QX);
	assert_int_equal(w[0].has_queue_row, 0);
	assert_int_equal(w[0].q.last_start, 0);
	assert_string_equal(w[1].queue, QC);
	assert_string_equal(w[1].gshare, GS2);
	assert_int_equal(w[1].has_queue_row, 1);
	assert_int_equal(w[1].q.paused, 0);
	assert_int_equal(w[1].q.disable_reassign, 1);
	assert_int_equal(w[1].q.last_start, 0); /* NULL: never */
	assert_near(w[1].q.transtimehi, 0, 0);
	/* Everything due is held: a third look finds nothing. */
	assert_int_equal(st_panda_due(db2, 600, 10, &a, &w, &m), GB_OK);
	assert_int_equal(m, 2); /* its own locks are not skipped */
	assert_int_equal(st_rollback(db2), GB_OK);
	assert_int_equal(st_rollback(db), GB_OK);

	/* Released: one worker sees all five, in check_at order. (While a
	** scan is open, InnoDB also holds the first index record past its
	** range, J15's here, so a wider scan at that moment skips it.) */
	assert_int_equal(st_begin(db2), GB_OK);
	assert_int_equal(st_panda_due(db2, 9000, 10, &a, &w, &m), GB_OK);
	assert_int_equal(m, 5);
	for (size_t i = 0; i < m; i++)
		assert_int_equal(w[i].j.job_id, J(11 + (long long)i));
	assert_int_equal(st_rollback(db2), GB_OK);
	close_db2();
	arena_free(&a);
}

/* Lock the job through the scan (check_at 100) and return it. */
static struct sp_job due_one(struct arena *a, long long id)
{
	struct sp_job *v = NULL;
	size_t n = 0;
	job_check_at(id, 100);
	if (st_panda_due(db, 200, 1, a, &v, &n) != GB_OK || n != 1)
		fail_msg("due: %s", st_error(db));
	assert_int_equal(v[0].j.job_id, id);
	return v[0];
}

static void test_timeout_apply(void **state)
{
	(void)state;
	job_add(J(21), QA, "activated", GS, 1000, "itp_req_21");
	raw_q(NULL, 0, "UPDATE jobs SET last_heartbeat = 990 WHERE job_id = ?",
	      "l", J(21));
	request_add("itp_req_21");
	job_add(J(22), QA, "running", GS, 1000, "itp_req_22");
	job_add(J(23), QC, "running", GS, 1000, "itp_req_23");
	job_add(J(24), QA, "assigned", GS, 1000, "itp_req_gone");
	job_add(J(25), QA, "starting", GS, 1000, "itp_req_25");
	request_add("itp_req_25");
	job_add(J(26), "", "throttled", GS, 1000, "itp_req_26");
	counts_add(QA, GS, 0, 1, 3, 1, 2, 0);
	counts_add(QC, GS, 0, 0, 0, 0, 1, 0);

	struct arena a;
	arena_init(&a, ARENA_CAP);
	long long did = 0;
	const char *ns = NULL;
	int att = -1, noreq = -1;
	struct to_verdict reassign = {"TO-05", TO_ACT_REASSIGN, 1, 1, "x"};
	struct to_verdict fail = {"TO-09", TO_ACT_FAIL, 1, 1, "x"};
	struct to_verdict kill = {"TO-08", TO_ACT_KILL, 1, 1, "x"};
	struct to_verdict rebro = {"TO-13", TO_ACT_REASSIGN, 0, 0, "x"};
	struct to_verdict none = {NULL, TO_ACT_NONE, 0, 0, NULL};

	assert_int_equal(st_begin(db), GB_OK);
	struct sp_job j = due_one(&a, J(21));
	assert_int_equal(st_panda_timeout_apply(db, &j, &none, "itp_scan",
						"{}", NULL, 7000, &did, &ns,
						&att, &noreq),
			 GB_EINVAL);
	assert_int_equal(st_panda_timeout_apply(db, &j, &reassign, "itp_scan",
						"{\"r\":1}", NULL, 7000, &did,
						&ns, &att, &noreq),
			 GB_OK);
	assert_true(did > 0);
	assert_string_equal(ns, "pending");
	assert_int_equal(att, 1);
	assert_int_equal(noreq, 0);
	long long did21 = did;

	j = due_one(&a, J(22));
	assert_int_equal(st_panda_timeout_apply(db, &j, &fail, "itp_scan",
						"{}", NULL, 7001, &did, &ns,
						&att, &noreq),
			 GB_OK);
	assert_string_equal(ns, "failed");
	assert_int_equal(att, 0);
	j = due_one(&a, J(23));
	assert_int_equal(st_panda_timeout_apply(db, &j, &kill, "itp_scan",
						"{}", NULL, 7002, &did, &ns,
						&att, &noreq),
			 GB_OK);
	assert_string_equal(ns, "cancelled");
	j = due_one(&a, J(24));
	assert_int_equal(st_panda_timeout_apply(db, &j, &reassign, "itp_scan",
						"{}", NULL, 7003, &did, &ns,
						&att, &noreq),
			 GB_OK);
	assert_int_equal(noreq, 1); /* its request row is gone */
	assert_int_equal(att, 1);
	j = due_one(&a, J(25));
	assert_int_equal(st_panda_timeout_apply(db, &j, &rebro, "itp_rebro",
						"{}", NULL, 7004, &did, &ns,
						&att, &noreq),
			 GB_OK);
	assert_int_equal(noreq, 0);
	/* TO-04 on a throttled job, which never had a queue: a final
	** status may have none (ck_jobs_queue). */
	j = due_one(&a, J(26));
	assert_int_equal(st_panda_timeout_apply(db, &j, &kill, "itp_scan",
						"{}", NULL, 7005, &did, &ns,
						&att, &noreq),
			 GB_OK);
	assert_true(did > 0);
	assert_string_equal(ns, "cancelled");
	assert_int_equal(st_commit(db), GB_OK);
	ASSERT_RAW("cancelled,-", "SELECT CONCAT_WS(',', status, "
		   "COALESCE(queue, '-')) FROM jobs WHERE job_id = ?", "l",
		   J(26));

	ASSERT_JOB(J(21), "pending,NULL,1,7000,7000,7000,NULL,NULL,10601,");
	char want[64];
	snprintf(want, sizeof(want), "%lld", did21);
	ASSERT_RAW(want, "SELECT decision_id FROM jobs WHERE job_id = ?", "l",
		   J(21));
	ASSERT_RAW("pending,7000,7000",
		   "SELECT CONCAT_WS(',', status, pending_until, updated_at) "
		   "FROM job_requests WHERE request_id = ?",
		   "s", "itp_req_21");
	snprintf(want, sizeof(want),
		 "timeout,%lld,itp_scan,reassign,pending,7000,{\"r\":1}",
		 J(21));
	ASSERT_RAW(want,
		   "SELECT CONCAT_WS(',', kind, subject, request_id, outcome, "
		   "chosen, decided_at, detail) FROM decisions WHERE id = ?",
		   "l", did21);
	ASSERT_JOB(J(22), "failed,itp_QA,0,1000,7001,7001,NULL,NULL,NULL,");
	ASSERT_JOB(J(23), "cancelled,itp_QC,0,1000,7002,7002,NULL,NULL,NULL,");
	ASSERT_JOB(J(24), "pending,NULL,1,7003,7003,7003,NULL,NULL,10604,");
	ASSERT_JOB(J(25), "pending,NULL,1,7004,7004,7004,NULL,NULL,10605,");
	ASSERT_JOB(J(26), "cancelled,NULL,0,1000,7005,7005,NULL,NULL,NULL,");
	snprintf(want, sizeof(want), "%lld", J(25));
	ASSERT_RAW("rebro,reassign,pending,itp_rebro",
		   "SELECT CONCAT_WS(',', kind, outcome, chosen, request_id) "
		   "FROM decisions WHERE subject = ?",
		   "s", want);
	ASSERT_RAW("pending,7004",
		   "SELECT CONCAT_WS(',', status, pending_until) FROM "
		   "job_requests WHERE request_id = ?",
		   "s", "itp_req_25");
	ASSERT_RAW("5", /* J(21..24) and J(26) */
		   "SELECT COUNT(*) FROM decisions WHERE request_id = ? AND "
		   "kind = 'timeout'",
		   "s", "itp_scan");
	ASSERT_RAW("0", "SELECT COUNT(*) FROM job_requests WHERE request_id = ?",
		   "s", "itp_req_gone");
	/* Each left its column: assigned 24, activated 21, starting 25,
	** running 22 at QA; running 23 at QC. */
	ASSERT_COUNTS(QA, GS, "0,0,2,0,1,0");
	ASSERT_COUNTS(QC, GS, "0,0,0,0,0,0");

	/* Outside a transaction; a job gone. */
	j.j.job_id = J(99998);
	assert_int_equal(st_panda_timeout_apply(db, &j, &kill, "itp_scan",
						"{}", NULL, 1, &did, &ns, &att,
						&noreq),
			 GB_ESTATE);
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_panda_timeout_apply(db, &j, &kill, "itp_scan",
						"{}", NULL, 1, &did, &ns, &att,
						&noreq),
			 GB_ENOTFOUND);
	assert_int_equal(st_rollback(db), GB_OK);
	arena_free(&a);
}

static void test_recheck(void **state)
{
	(void)state;
	job_add(J(31), QA, "activated", GS, 1000, "itp_req");
	assert_int_equal(st_panda_recheck(db, J(31), 12345), GB_ESTATE);
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_panda_recheck(db, J(31), 12345), GB_OK);
	assert_int_equal(st_panda_recheck(db, J(31), 12345), GB_OK);
	assert_int_equal(st_panda_recheck(db, J(99997), 12345), GB_ENOTFOUND);
	assert_int_equal(st_commit(db), GB_OK);
	ASSERT_RAW("12345", "SELECT check_at FROM jobs WHERE job_id = ?", "l",
		   J(31));
}

/* ---- tests: fast rebrokerage --------------------------------------------- */

static void test_loads_and_lock(void **state)
{
	(void)state;
	counts_add(QA, GS, 1, 2, 3, 4, 5, 6);
	counts_add(QB, GS, 0, 0, 7, 0, 1, 0);
	counts_add(QX, GS, 0, 0, 2, 0, 0, 0);
	counts_add(QC, GS2, 1, 0, 0, 0, 0, 0);
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct sp_load *v = NULL;
	size_t n = 0;
	assert_int_equal(st_panda_loads(db, &a, &v, &n), GB_OK);
	/* Only this test's rows, in gshare then queue order. */
	struct sp_load mine[8];
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(v[i].queue, "itp_", 4) == 0 && k < 8)
			mine[k++] = v[i];
	assert_int_equal(k, 4);
	const char *q[] = {QA, QB, QX, QC};
	const char *g[] = {GS, GS, GS, GS2};
	const double nq[] = {10, 7, 2, 1}, nr[] = {5, 1, 0, 0};
	const int slots[] = {0, 0, 0, 1}, ex[] = {0, 1, 0, 1},
		  known[] = {1, 1, 0, 1};
	for (size_t i = 0; i < k; i++) {
		assert_string_equal(mine[i].queue, q[i]);
		assert_string_equal(mine[i].gshare, g[i]);
		assert_near(mine[i].nqueue, nq[i], 0);
		assert_near(mine[i].nrun, nr[i], 0);
		assert_int_equal(mine[i].has_nslots, slots[i]);
		assert_int_equal(mine[i].exempt, ex[i]);
		assert_int_equal(mine[i].known, known[i]);
	}

	double a1 = -1, a2 = -1, a3 = -1;
	assert_int_equal(st_panda_load_lock(db, QA, GS, &a1, &a2, &a3),
			 GB_ESTATE);
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_panda_load_lock(db, QA, GS, &a1, &a2, &a3), GB_OK);
	assert_near(a1, 10, 0);
	assert_near(a2, 5, 0);
	assert_near(a3, 19, 0); /* QA 10 + QB 7 + QX 2 */
	assert_int_equal(st_panda_load_lock(db, QA, "itp_none", &a1, &a2, &a3),
			 GB_ENOTFOUND);

	/* A second worker waits for the row (here: times out quickly). */
	static const char short_wait[] =
		"SET SESSION innodb_lock_wait_timeout = 1";
	open_db2();
	assert_int_equal(st_plain(db2, short_wait, sizeof(short_wait) - 1),
			 GB_OK);
	assert_int_equal(st_begin(db2), GB_OK);
	assert_int_equal(st_panda_load_lock(db2, QA, GS, &a1, &a2, &a3),
			 GB_EDBRETRY);
	assert_int_equal(st_rollback(db2), GB_OK);
	/* The first moves a job off the queue and commits; the second then
	** sees the decrement. */
	job_add(J(41), QA, "activated", GS, 1000, "itp_req");
	struct sp_job *pick = NULL;
	size_t np = 0;
	assert_int_equal(st_panda_rebro_pick(db, QA, GS, 5, &a, &pick, &np),
			 GB_OK);
	assert_int_equal(np, 1);
	struct to_verdict rebro = {"TO-13", TO_ACT_REASSIGN, 0, 0, "x"};
	long long did;
	const char *ns;
	int att, noreq;
	assert_int_equal(st_panda_timeout_apply(db, &pick[0], &rebro,
						"itp_rebro", "{}", NULL, 8000,
						&did, &ns, &att, &noreq),
			 GB_OK);
	assert_int_equal(noreq, 1);
	assert_int_equal(st_commit(db), GB_OK);
	assert_int_equal(st_begin(db2), GB_OK);
	assert_int_equal(st_panda_load_lock(db2, QA, GS, &a1, &a2, &a3),
			 GB_OK);
	assert_near(a1, 9, 0);
	assert_near(a2, 5, 0);
	assert_near(a3, 18, 0);
	assert_int_equal(st_rollback(db2), GB_OK);
	close_db2();
	arena_free(&a);
}

static void test_rebro_pick(void **state)
{
	(void)state;
	job_add(J(51), QA, "defined", GS, 1000, "itp_req");
	job_add(J(52), QA, "assigned", GS, 1000, "itp_req");
	job_add(J(53), QA, "running", GS, 1000, "itp_req");
	job_add(J(54), QA, "activated", GS, 1000, "itp_req");
	job_add(J(55), QA, "starting", GS, 1000, "itp_req");
	job_add(J(56), QA, "activated", GS2, 1000, "itp_req");
	job_add(J(57), QB, "activated", GS, 1000, "itp_req");
	job_add(J(58), QA, "sent", GS, 1000, "itp_req");
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct sp_job *v = NULL;
	size_t n = 0;
	assert_int_equal(st_panda_rebro_pick(db, QA, GS, 3, &a, &v, &n),
			 GB_ESTATE);
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_panda_rebro_pick(db, QA, GS, 3, &a, &v, &n),
			 GB_OK);
	assert_int_equal(n, 3);
	assert_int_equal(v[0].j.job_id, J(51));
	assert_int_equal(v[1].j.job_id, J(52));
	assert_int_equal(v[2].j.job_id, J(54));
	assert_int_equal(v[0].j.status, TO_ST_DEFINED);
	assert_int_equal(v[2].has_queue_row, 1);
	assert_string_equal(v[2].queue, QA);
	assert_int_equal(v[2].q.paused, 0);
	assert_int_equal(st_rollback(db), GB_OK);

	/* Another transaction holds the oldest: skipped, not waited for. */
	assert_int_equal(mysql_query(raw, "START TRANSACTION"), 0);
	raw_q(NULL, 0, "SELECT job_id FROM jobs WHERE job_id = ? FOR UPDATE",
	      "l", J(51));
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_panda_rebro_pick(db, QA, GS, 2, &a, &v, &n),
			 GB_OK);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].j.job_id, J(52));
	assert_int_equal(v[1].j.job_id, J(54));
	assert_int_equal(mysql_query(raw, "ROLLBACK"), 0);
	/* A second worker gets what neither holds. */
	open_db2();
	assert_int_equal(st_begin(db2), GB_OK);
	struct sp_job *w = NULL;
	size_t m = 0;
	assert_int_equal(st_panda_rebro_pick(db2, QA, GS, 10, &a, &w, &m),
			 GB_OK);
	for (size_t i = 0; i < m; i++)
		assert_false(has_id(v, n, w[i].j.job_id));
	assert_int_equal(m, 2);
	assert_int_equal(w[0].j.job_id, J(51));
	assert_int_equal(w[1].j.job_id, J(55));
	assert_int_equal(st_rollback(db2), GB_OK);
	assert_int_equal(st_rollback(db), GB_OK);
	close_db2();
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_panda_rebro_pick(db, QA, "itp_none", 3, &a, &v, &n),
			 GB_OK);
	assert_int_equal(n, 0);
	assert_int_equal(st_panda_rebro_pick(db, QA, GS, 0, &a, &v, &n),
			 GB_OK);
	assert_int_equal(n, 0);
	assert_int_equal(st_rollback(db), GB_OK);
	arena_free(&a);
}

/* A failed test may leave raw or db2 inside a transaction holding locks,
** and the next cleanup would wait for them. */
static int teardown_all(void **state)
{
	if (raw)
		mysql_query(raw, "ROLLBACK");
	close_db2();
	return test_teardown(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rank),
		cmocka_unit_test_setup_teardown(test_status_forward_only,
						test_setup, teardown_all),
		cmocka_unit_test_setup_teardown(test_status_counts, test_setup,
						teardown_all),
		cmocka_unit_test_setup_teardown(
			test_status_heartbeat_stale_unknown, test_setup,
			teardown_all),
		cmocka_unit_test_setup_teardown(test_due_skip_locked,
						test_setup, teardown_all),
		cmocka_unit_test_setup_teardown(test_timeout_apply, test_setup,
						teardown_all),
		cmocka_unit_test_setup_teardown(test_recheck, test_setup,
						teardown_all),
		cmocka_unit_test_setup_teardown(test_loads_and_lock,
						test_setup, teardown_all),
		cmocka_unit_test_setup_teardown(test_rebro_pick, test_setup,
						teardown_all),
	};
	return cmocka_run_group_tests_name("itc_store_panda", tests,
					   group_setup, group_teardown);
}
