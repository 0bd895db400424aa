/*
** itc_store_analysis.c — the analysis brokerage's MariaDB store (store_analysis.h)
** against a real server: st_analysis_save's replace-all semantics and its
** refusals, and every number st_analysis_state reads, on a hand-made set of
** jobs whose expected figures are counted out below (owner load = jobs +
** the analysis_owners row, working group counts, hi-site slots, quota,
** the User Analysis share, nusers, the trr window (now - 6 h, now], the
** task outcome window (now - TW_DONE_JOB_STAT h, now], task classes, the
** gshare's grid-wide queued and running of AJ-11 from queue_counts).
**
** Reads the configuration named by $GB_CONFIG (run-itc.sh). st_analysis_save
** replaces the WHOLE analysis tables (analysis_owners, share_usage,
** task_classes), so this test leaves them empty. Every other row it writes
** has a name (a queue_counts row: a gshare) starting with "itca_" or an
** id from ITC_BASE and is deleted
** before and after the run. Times are fake values around NOW, far from any
** real clock, so the global per-queue figures (trr, nusers) see only this
** test's queues, which are looked up by name.
**
** Jobs are written with raw prepared INSERTs through `raw`, so the figures
** do not depend on the decision code.
*/
#include "../unit/gbtest.h"

#include <stdlib.h>

#include <mysql.h>

#include "base/arena.h"
#include "gb_error.h"
#include "model/gridmodel.h"
#include "params.h"
#include "store/store.h"
#include "store/store_analysis.h"

#include "itc_raw.h"

#define ITC_BASE 9200000000000LL /* job and task ids of this test */
#define NOW 5000000LL		 /* fake unix time */
#define H 3600LL
#define ARENA_CAP (16u << 20)
#define T1 (ITC_BASE + 1) /* alice's task, class A */
#define T2 (ITC_BASE + 2) /* another task of alice's */
#define T3 (ITC_BASE + 3) /* no task_classes row: B */
#define ALICE "itca_alice"
#define BOB "itca_bob"
#define CAROL "itca_carol"
#define GROUP "itca_grp"
#define UA "User Analysis"

static void cleanup(void)
{
	raw_q(NULL, 0, "DELETE FROM jobs WHERE job_id BETWEEN ? AND ?", "ll",
	      ITC_BASE, ITC_BASE + 99999);
	raw_q(NULL, 0, "DELETE FROM queues WHERE LEFT(name, 5) = ?", "s",
	      "itca_");
	raw_q(NULL, 0, "DELETE FROM queue_counts WHERE LEFT(gshare, 5) = ?",
	      "s", "itca_");
	raw_q(NULL, 0, "DELETE FROM analysis_owners", "");
	raw_q(NULL, 0, "DELETE FROM share_usage", "");
	raw_q(NULL, 0, "DELETE FROM task_classes", "");
}

ITC_GROUP_FIXTURE("itc_store_analysis", cleanup)

static long count_rows(const char *table)
{
	char sql[128], buf[32];
	snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM %s", table);
	raw_q(buf, sizeof(buf), sql, "");
	return atol(buf);
}

/* ---- st_analysis_save -------------------------------------------------------- */

static struct gm_owner owners[4];
static struct gm_share shares[2];
static struct gm_task_class classes[2];

/* alice: over quota, 7 hi-site slots; the group: no quota; bob: no quota;
** carol: exactly at her quota (not over). */
static void build_analysis(struct gm_analysis_grid *g)
{
	owners[0] = (struct gm_owner){ALICE, 0, 10, 20, 100, 200, 7, 50, 40};
	owners[1] = (struct gm_owner){GROUP, 1, 1, 2, 3, 4, 1000, 5, NAN};
	owners[2] = (struct gm_owner){BOB, 0, 0, 0, 0, 0, 0, 10, NAN};
	owners[3] = (struct gm_owner){CAROL, 0, 0, 0, 0, 0, 0, 10, 10};
	shares[0] = (struct gm_share){UA, 100, 96};
	shares[1] = (struct gm_share){"itca_share", 5, 0};
	classes[0] = (struct gm_task_class){T1, AN_CLASS_A};
	classes[1] = (struct gm_task_class){T2, AN_CLASS_C};
	*g = (struct gm_analysis_grid){owners, 4, shares, 2, classes, 2};
}

static void save_analysis(void)
{
	struct gm_analysis_grid g;
	build_analysis(&g);
	if (st_analysis_save(db, &g, NOW) != GB_OK)
		fail_msg("anal save: %s", st_error(db));
}

static void test_save_replaces(void **state)
{
	(void)state;
	save_analysis();
	char buf[256];
	assert_int_equal(count_rows("analysis_owners"), 4);
	assert_int_equal(count_rows("share_usage"), 2);
	assert_int_equal(count_rows("task_classes"), 2);
	raw_q(buf, sizeof(buf),
	      "SELECT CONCAT_WS('|', running_jobs, queued_jobs, running_cores, "
	      "queued_cores, hi_site_slots, quota_used_gb, quota_gb, "
	      "updated_at) FROM analysis_owners WHERE kind = 'user' AND name = "
	      "?",
	      "s", ALICE);
	assert_string_equal(buf, "10|20|100|200|7|50|40|5000000");
	/* NAN = unlimited is stored as NULL. */
	raw_q(buf, sizeof(buf),
	      "SELECT COALESCE(quota_gb, 'NULL') FROM analysis_owners WHERE "
	      "kind = 'group' AND name = ?",
	      "s", GROUP);
	assert_string_equal(buf, "NULL");
	raw_q(buf, sizeof(buf),
	      "SELECT CONCAT_WS('|', target, `usage`) FROM share_usage WHERE "
	      "gshare = ?",
	      "s", UA);
	assert_string_equal(buf, "100|96");
	raw_q(buf, sizeof(buf),
	      "SELECT class FROM task_classes WHERE task_id = ?", "l", T2);
	assert_string_equal(buf, "C");

	/* A second save replaces everything: carol only, no shares. */
	struct gm_owner only = {CAROL, 0, 1, 1, 1, 1, 0, 0, NAN};
	struct gm_analysis_grid g2 = {&only, 1, NULL, 0, NULL, 0};
	assert_int_equal(st_analysis_save(db, &g2, NOW + 1), GB_OK);
	assert_int_equal(count_rows("analysis_owners"), 1);
	assert_int_equal(count_rows("share_usage"), 0);
	assert_int_equal(count_rows("task_classes"), 0);
	raw_q(buf, sizeof(buf),
	      "SELECT CONCAT_WS('|', name, kind, running_jobs, updated_at) "
	      "FROM analysis_owners",
	      "");
	assert_string_equal(buf, "itca_carol|user|1|5000001");
	/* An empty grid empties the tables. */
	struct gm_analysis_grid none = {NULL, 0, NULL, 0, NULL, 0};
	assert_int_equal(st_analysis_save(db, &none, NOW), GB_OK);
	assert_int_equal(count_rows("analysis_owners"), 0);
}

static void test_save_refuses(void **state)
{
	(void)state;
	save_analysis();
	static const char *const what[] = {
		"user listed twice",  "negative running jobs",
		"NaN queued cores",   "negative quota",
		"class out of range", "share target 0",
		"share listed twice", "task class listed twice",
		"empty owner name",
	};
	for (size_t i = 0; i < sizeof(what) / sizeof(what[0]); i++) {
		struct gm_analysis_grid g;
		build_analysis(&g);
		switch (i) {
		case 0:
			owners[3].name = ALICE;
			break;
		case 1:
			owners[1].running_jobs = -1;
			break;
		case 2:
			owners[2].queued_cores = NAN;
			break;
		case 3:
			owners[0].quota_gb = -5;
			break;
		case 4:
			classes[1].cls = (enum an_task_class)9;
			break;
		case 5:
			shares[1].target = 0;
			break;
		case 6:
			shares[1].gshare = UA;
			break;
		case 7:
			classes[1].task_id = T1;
			break;
		default:
			owners[2].name = "";
			break;
		}
		int rc = st_analysis_save(db, &g, NOW + 5);
		if (rc != GB_EINVAL)
			fail_msg("%s: got %s (%s)", what[i], gb_errname(rc),
				 st_error(db));
		/* Nothing changed. */
		char buf[64];
		raw_q(buf, sizeof(buf),
		      "SELECT COUNT(*) FROM analysis_owners WHERE updated_at = "
		      "?",
		      "l", NOW);
		if (strcmp(buf, "4") != 0)
			fail_msg("%s: %s owners left", what[i], buf);
		assert_int_equal(count_rows("share_usage"), 2);
		assert_int_equal(count_rows("task_classes"), 2);
	}
	/* The duplicate is named. */
	struct gm_analysis_grid g;
	build_analysis(&g);
	owners[3].name = ALICE;
	assert_int_equal(st_analysis_save(db, &g, NOW), GB_EINVAL);
	assert_non_null(strstr(st_error(db), ALICE));
	/* A user and a group may share a name. */
	build_analysis(&g);
	owners[1].name = ALICE;
	assert_int_equal(st_analysis_save(db, &g, NOW), GB_OK);
	assert_int_equal(count_rows("analysis_owners"), 4);
	/* Its own transaction; bad arguments. */
	build_analysis(&g);
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_analysis_save(db, &g, NOW), GB_ESTATE);
	assert_int_equal(st_rollback(db), GB_OK);
	assert_int_equal(st_analysis_save(NULL, &g, NOW), GB_EINVAL);
	assert_int_equal(st_analysis_save(db, NULL, NOW), GB_EINVAL);
	g.owners = NULL;
	assert_int_equal(st_analysis_save(db, &g, NOW), GB_EINVAL);
}

/* ---- st_analysis_state ------------------------------------------------------- */

/*
** One job. queue NULL for pending/throttled; user/group NULL for none;
** since = status_since; started = started_at, -1 for NULL.
*/
static void job(long long n, long long task, const char *queue,
		const char *status, const char *user, const char *group,
		long long cores, long long since, long long started)
{
	raw_q(NULL, 0,
	      "INSERT INTO jobs (job_id, task_id, request_id, queue, status, "
	      "nevents, input_mb, decision_id, updated_at, gshare, user_name, "
	      "working_group, cores) VALUES (?, ?, 'itca_req', NULLIF(?, ''), "
	      "?, 1, 0, 0, 0, 'User Analysis', NULLIF(?, ''), NULLIF(?, ''), "
	      "?)",
	      "llssssl", ITC_BASE + n, task, queue ? queue : "", status,
	      user ? user : "", group ? group : "", cores);
	raw_q(NULL, 0,
	      "UPDATE jobs SET status_since = ?, started_at = NULLIF(?, -1) "
	      "WHERE job_id = ?",
	      "lll", since, started, ITC_BASE + n);
}

static void queue(const char *name, const char *site_class)
{
	raw_q(NULL, 0,
	      "INSERT INTO queues (name, status, site, storage, storage_free, "
	      "fairsharepolicy, updated_at, site_class) VALUES (?, 'online', "
	      "'itca_SITE', 'itca_DISK', 1, '', 0, ?)",
	      "ss", name, site_class);
}

/*
** The jobs, with what each counts for. Owners: alice (user), bob (user,
** some jobs in GROUP), carol, and production (no user).
*/
static void build_jobs(void)
{
	queue("itca_HI1", "hi");
	queue("itca_HI2", "hi");
	queue("itca_MID", "mid");
	const long long L = NOW - H; /* an unremarkable time */
	/* alice: running 1, 2, 5 (cores 4+2+8; 1 and 2 at a hi queue),
	** queued 3, 4, 6, 10 (cores 1+1+2+1); no queue: 7, 8. */
	job(1, T1, "itca_HI1", "running", ALICE, NULL, 4, L, NOW - 6 * H);
	job(2, T2, "itca_HI1", "running", ALICE, NULL, 2, L, NOW - 6 * H + 1);
	job(3, T1, "itca_HI1", "activated", ALICE, NULL, 1, L, -1);
	job(4, T1, "itca_HI1", "sent", ALICE, NULL, 1, L, -1);
	job(5, T1, "itca_MID", "running", ALICE, NULL, 8, L, NOW);
	job(6, T1, "itca_MID", "defined", ALICE, NULL, 2, L, -1);
	job(7, T1, NULL, "pending", ALICE, NULL, 16, L, -1);
	job(8, T1, NULL, "throttled", ALICE, NULL, 16, L, -1);
	job(10, T3, "itca_MID", "starting", ALICE, GROUP, 1, L, -1);
	/* bob: 11, 12 in the group; 13 running at a hi queue. */
	job(11, ITC_BASE + 4, "itca_HI1", "running", BOB, GROUP, 1, L,
	    NOW + 1);
	job(12, ITC_BASE + 4, "itca_MID", "assigned", BOB, GROUP, 1, L, -1);
	job(13, ITC_BASE + 4, "itca_HI2", "running", BOB, NULL, 3, L,
	    NOW - 3 * H);
	/* carol: neither queued nor running; production: no user. */
	job(14, ITC_BASE + 5, "itca_HI1", "transferring", CAROL, NULL, 1, L,
	    NOW - 2 * H);
	job(15, ITC_BASE + 5, "itca_HI2", "holding", CAROL, NULL, 1, L, -1);
	job(16, ITC_BASE + 6, "itca_HI1", "running", NULL, NULL, 1, L,
	    NOW - H);
	/* T1's outcomes around the windows' edges. */
	job(9, T1, "itca_HI2", "finished", ALICE, NULL, 1, NOW - H, -1);
	job(17, T1, "itca_HI2", "failed", ALICE, NULL, 1, NOW - 6 * H, -1);
	job(18, T1, "itca_HI2", "failed", ALICE, NULL, 1, NOW - 6 * H + 1, -1);
	job(19, T1, "itca_HI2", "closed", ALICE, NULL, 1, NOW, -1);
	job(20, T1, "itca_MID", "failed", ALICE, NULL, 1, NOW + 1, -1);
	job(21, T1, "itca_MID", "cancelled", ALICE, NULL, 1, NOW - 1, -1);
	job(22, T2, "itca_HI1", "failed", ALICE, NULL, 1, NOW - 1, -1);
	job(23, T1, "itca_MID", "failed", ALICE, NULL, 1, NOW - 12 * H, -1);
	job(24, T1, "itca_MID", "failed", ALICE, NULL, 1, NOW - 12 * H + 1,
	    -1);
}

static void request(struct gm_request *r, const char *user,
		    const char *group, const char *gshare, long long task)
{
	memset(r, 0, sizeof(*r));
	r->t.task_id = task;
	r->t.gshare = gshare;
	r->an.is_analysis = 1;
	r->an.user = user;
	r->an.working_group = group;
}

static const struct gm_analysis_queue *aq(const struct gm_analysis_state *st,
				      const char *name)
{
	for (size_t i = 0; i < st->nqueues; i++)
		if (strcmp(st->queues[i].name, name) == 0)
			return &st->queues[i];
	return NULL;
}

/* trr, nq_user, nr_user, nusers, failed, closed, finished at `name`. */
static void expect_queue(const struct gm_analysis_state *st, const char *name,
			 const double *w)
{
	const struct gm_analysis_queue *q = aq(st, name);
	if (q == NULL)
		fail_msg("queue %s missing", name);
	const double got[] = {q->trr,	      q->nq_user,     q->nr_user,
			      q->nusers,      q->task_failed, q->task_closed,
			      q->task_finished};
	for (int i = 0; i < 7; i++)
		if (fabs(got[i] - w[i]) > 1e-12)
			fail_msg("%s: figure %d = %.17g, expected %.17g", name,
				 i, got[i], w[i]);
}

static void state(const struct gm_request *r, const struct prm_set *set,
		  struct arena *a, struct gm_analysis_state *st,
		  enum an_task_class *cls)
{
	assert_int_equal(st_begin(db), GB_OK);
	if (st_analysis_state(db, r, set, NOW, a, st, cls) != GB_OK)
		fail_msg("state: %s", st_error(db));
	assert_int_equal(st_commit(db), GB_OK);
	/* Sorted by name, each queue once. */
	for (size_t i = 1; i < st->nqueues; i++)
		assert_true(strcmp(st->queues[i - 1].name, st->queues[i].name) <
			    0);
}

static void test_state_user(void **state_)
{
	(void)state_;
	save_analysis();
	build_jobs();
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct gm_request r;
	struct gm_analysis_state st;
	enum an_task_class cls = AN_CLASS_S;
	request(&r, ALICE, NULL, UA, T1);
	state(&r, NULL, &a, &st, &cls);
	const struct an_user_load *u = &st.user;
	assert_int_equal(u->working_group, 0);
	/* Jobs + the analysis_owners row. */
	assert_near(u->running_jobs, 3 + 10, 0);
	assert_near(u->queued_jobs, 4 + 20, 0);
	assert_near(u->running_cores, 14 + 100, 0);
	assert_near(u->queued_cores, 5 + 200, 0);
	/* Running cores at hi queues (jobs 1, 2) + the row's 7. */
	assert_near(u->hi_site_slots, 6 + 7, 0);
	assert_int_equal(u->quota_exceeded, 1); /* 50 > 40 GB */
	assert_int_equal(u->user_analysis, 1);
	assert_near(u->share_usage, 96, 0);
	assert_near(u->share_target, 100, 0);
	assert_int_equal(cls, AN_CLASS_A);
	assert_int_equal(u->task_class, AN_CLASS_A);
	/* nusers: HI1 alice, bob (carol transferring, production none);
	** MID alice, bob; HI2 bob. trr: HI1 jobs 2, 14, 16 (job 1 on the
	** window's open edge, 11 in the future); MID job 5 (at now); HI2
	** job 13. Outcomes of T1 in (now - 6 h, now]: HI2 9, 18, 19. */
	const double hi1[] = {3.0 / 6, 2, 2, 2, 0, 0, 0};
	const double mid[] = {1.0 / 6, 2, 1, 2, 0, 0, 0};
	const double hi2[] = {1.0 / 6, 0, 0, 1, 1, 1, 1};
	expect_queue(&st, "itca_HI1", hi1);
	expect_queue(&st, "itca_MID", mid);
	expect_queue(&st, "itca_HI2", hi2);

	/* TW_DONE_JOB_STAT 12 h: 17 and 24 join, 23 stays out (edge). */
	const struct prm_kv kv[] = {{"TW_DONE_JOB_STAT", 12}};
	const struct prm_set set = {kv, 1};
	state(&r, &set, &a, &st, &cls);
	const double hi2_12[] = {1.0 / 6, 0, 0, 1, 2, 1, 1};
	const double mid_12[] = {1.0 / 6, 2, 1, 2, 1, 0, 0};
	expect_queue(&st, "itca_HI2", hi2_12);
	expect_queue(&st, "itca_MID", mid_12);

	/* Carol: at her quota, not over it; no jobs queued or running, so
	** her per-queue figures are zero where she has jobs. */
	request(&r, CAROL, NULL, UA, T2);
	state(&r, NULL, &a, &st, &cls);
	assert_int_equal(st.user.quota_exceeded, 0);
	assert_near(st.user.running_jobs + st.user.queued_jobs, 0, 0);
	assert_near(st.user.hi_site_slots, 0, 0);
	assert_int_equal(cls, AN_CLASS_C);
	/* T2's outcomes: job 22 failed at HI1 a second ago. */
	const double hi1_c[] = {3.0 / 6, 0, 0, 2, 1, 0, 0};
	expect_queue(&st, "itca_HI1", hi1_c);
	arena_free(&a);
}

static void test_state_group_share_class(void **state_)
{
	(void)state_;
	save_analysis();
	build_jobs();
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct gm_request r;
	struct gm_analysis_state st;
	enum an_task_class cls = AN_CLASS_S;
	/* The group's jobs (10, 11, 12) + the group's row; the quota and the
	** hi-site slots stay alice's own. Another share: no AJ-04 figures. */
	request(&r, ALICE, GROUP, "itca_share", T3);
	state(&r, NULL, &a, &st, &cls);
	const struct an_user_load *u = &st.user;
	assert_int_equal(u->working_group, 1);
	assert_near(u->running_jobs, 1 + 1, 0);
	assert_near(u->queued_jobs, 2 + 2, 0);
	assert_near(u->running_cores, 1 + 3, 0);
	assert_near(u->queued_cores, 2 + 4, 0);
	assert_near(u->hi_site_slots, 6 + 7, 0);
	assert_int_equal(u->quota_exceeded, 1);
	assert_int_equal(u->user_analysis, 0);
	assert_near(u->share_usage + u->share_target, 0, 0);
	assert_int_equal(cls, AN_CLASS_B); /* no row */
	const double hi1[] = {3.0 / 6, 0, 1, 2, 0, 0, 0};
	const double mid[] = {1.0 / 6, 2, 0, 2, 0, 0, 0};
	expect_queue(&st, "itca_HI1", hi1);
	expect_queue(&st, "itca_MID", mid);
	/* An empty working group is none. */
	request(&r, BOB, "", UA, T3);
	state(&r, NULL, &a, &st, &cls);
	assert_int_equal(st.user.working_group, 0);
	assert_near(st.user.running_jobs, 2, 0); /* 11, 13 */
	assert_near(st.user.queued_jobs, 1, 0);  /* 12 */
	assert_near(st.user.hi_site_slots, 1 + 3, 0);
	assert_int_equal(st.user.quota_exceeded, 0); /* no quota */

	/* User Analysis without a share_usage row: immune (no figures). */
	struct gm_analysis_grid g;
	build_analysis(&g);
	g.nshares = 0;
	assert_int_equal(st_analysis_save(db, &g, NOW), GB_OK);
	request(&r, ALICE, NULL, UA, T1);
	state(&r, NULL, &a, &st, &cls);
	assert_int_equal(st.user.user_analysis, 0);
	assert_near(st.user.share_target, 0, 0);
	/* Without an analysis_owners row: the jobs alone. */
	struct gm_analysis_grid none = {NULL, 0, NULL, 0, NULL, 0};
	assert_int_equal(st_analysis_save(db, &none, NOW), GB_OK);
	state(&r, NULL, &a, &st, &cls);
	assert_near(st.user.running_jobs, 3, 0);
	assert_near(st.user.queued_cores, 5, 0);
	assert_near(st.user.hi_site_slots, 6, 0);
	assert_int_equal(st.user.quota_exceeded, 0);
	assert_int_equal(cls, AN_CLASS_B);
	/* An unknown user: zeros, and the queues' figures still there. */
	request(&r, "itca_nobody", NULL, UA, ITC_BASE + 99);
	state(&r, NULL, &a, &st, &cls);
	assert_near(st.user.running_jobs + st.user.queued_jobs, 0, 0);
	const double mid0[] = {1.0 / 6, 0, 0, 2, 0, 0, 0};
	expect_queue(&st, "itca_MID", mid0);
	assert_null(aq(&st, "itca_NONE"));
	arena_free(&a);
}

static void counts(const char *queue, const char *gshare, long long running,
		   long long defined, long long assigned, long long activated,
		   long long starting, long long transferring)
{
	raw_q(NULL, 0,
	      "INSERT INTO queue_counts (queue, gshare, running, defined, "
	      "assigned, activated, `starting`, transferring) VALUES (?, ?, ?, "
	      "?, ?, ?, ?, ?)",
	      "ssllllll", queue, gshare, running, defined, assigned, activated,
	      starting, transferring);
}

/* AJ-11: the gshare's queued (defined + assigned + activated + starting)
** and running summed over every queue_counts row of the gshare, a queue
** without a queues row included; another gshare's rows count nothing. */
static void test_state_grid(void **state_)
{
	(void)state_;
	queue("itca_HI1", "hi");
	counts("itca_HI1", "itca_gs", 100, 1, 2, 3, 4, 50);
	counts("itca_MID", "itca_gs", 20, 10, 20, 30, 40, 0);
	counts("itca_HI1", "itca_other", 7, 7, 7, 7, 7, 7);
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct gm_request r;
	struct gm_analysis_state st;
	enum an_task_class cls;
	request(&r, ALICE, NULL, "itca_gs", T1);
	state(&r, NULL, &a, &st, &cls);
	assert_near(st.grid_queued, 1 + 2 + 3 + 4 + 10 + 20 + 30 + 40, 0);
	assert_near(st.grid_running, 100 + 20, 0);
	/* a gshare without rows: nothing anywhere */
	request(&r, ALICE, NULL, "itca_none", T1);
	state(&r, NULL, &a, &st, &cls);
	assert_near(st.grid_queued, 0, 0);
	assert_near(st.grid_running, 0, 0);
	arena_free(&a);
}

static void test_state_errors(void **state_)
{
	(void)state_;
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct gm_request r;
	struct gm_analysis_state st;
	enum an_task_class cls;
	request(&r, ALICE, NULL, UA, T1);
	assert_int_equal(st_analysis_state(NULL, &r, NULL, NOW, &a, &st, &cls),
			 GB_EINVAL);
	assert_int_equal(st_analysis_state(db, &r, NULL, NOW, NULL, &st, &cls),
			 GB_EINVAL);
	assert_int_equal(st_analysis_state(db, &r, NULL, NOW, &a, &st, NULL),
			 GB_EINVAL);
	r.an.is_analysis = 0;
	assert_int_equal(st_analysis_state(db, &r, NULL, NOW, &a, &st, &cls),
			 GB_EINVAL);
	request(&r, NULL, NULL, UA, T1);
	assert_int_equal(st_analysis_state(db, &r, NULL, NOW, &a, &st, &cls),
			 GB_EINVAL);
	request(&r, ALICE, NULL, NULL, T1);
	assert_int_equal(st_analysis_state(db, &r, NULL, NOW, &a, &st, &cls),
			 GB_EINVAL);
	arena_free(&a);

	/* The queues do not fit a tiny arena. */
	build_jobs();
	arena_init(&a, 32);
	request(&r, ALICE, NULL, UA, T1);
	assert_int_equal(st_analysis_state(db, &r, NULL, NOW, &a, &st, &cls),
			 GB_ETOOBIG);
	assert_int_equal(st.nqueues, 0);
	arena_free(&a);

	/* A bad stored class: MariaDB's empty ENUM value, which only a
	** non-strict session can write. */
	raw_q(NULL, 0, "SET SESSION sql_mode = ''", "");
	raw_q(NULL, 0,
	      "INSERT INTO task_classes (task_id, class, updated_at) VALUES "
	      "(?, 'X', 0)",
	      "l", T3);
	raw_q(NULL, 0, "SET SESSION sql_mode = DEFAULT", "");
	arena_init(&a, ARENA_CAP);
	request(&r, ALICE, NULL, UA, T3);
	assert_int_equal(st_analysis_state(db, &r, NULL, NOW, &a, &st, &cls),
			 GB_ERANGE);
	arena_free(&a);
}

/* Every test starts from no jobs of this test's. */
static int test_setup(void **state_)
{
	(void)state_;
	cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_save_replaces, test_setup,
						test_teardown),
		cmocka_unit_test_setup_teardown(test_save_refuses, test_setup,
						test_teardown),
		cmocka_unit_test_setup_teardown(test_state_user, test_setup,
						test_teardown),
		cmocka_unit_test_setup_teardown(test_state_group_share_class,
						test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_state_grid, test_setup,
						test_teardown),
		cmocka_unit_test_setup_teardown(test_state_errors, test_setup,
						test_teardown),
	};
	return cmocka_run_group_tests_name("itc_store_analysis", tests,
					   group_setup, group_teardown);
}
