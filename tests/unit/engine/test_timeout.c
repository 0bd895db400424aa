/*
** test_timeout.c — the job timeout rules TO-01..TO-12 and fast
** rebrokerage TO-13 with the seed's numbers.
**
** Every rule is checked at its boundary: a job exactly at the limit stays
** (the rule needs the age strictly greater), one second more and it fires
** with the rule's action and limit. Jobs are described relative to a fixed
** NOW so each row reads as "in status X for N seconds". The order tests
** pin down which rule wins when two fire (the tie-break of timeout.c's
** header): TO-08 over TO-09, TO-05/TO-06 over TO-09, TO-05 over TO-06,
** TO-09 over TO-11. TO-13 uses the reference example (nQ 100, nR 10,
** total 200, threshold 20, ratio 3, fraction 0.3 -> excess 40) and one
** boundary per threshold. TO-14 (one event per timed-out job) runs each
** rule's job through a model of the worker's scan: no event at the limit,
** one the second after, none again for that attempt.
*/
#include "gbtest.h"


#include "gb_error.h"
#include "params.h"
#include "timeout.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define NOW 1700000000LL
#define MIN 60LL
#define HOUR 3600LL
#define DAY 86400LL
#define NEVER (-1LL) /* qstart_ago: the queue never started a job */

/* The expectation of a row: nothing fires, or rule `id` with its action
** and limit (age one second past the limit unless .age_s says). */
#define STAYS .rule = NULL
#define FIRES(id, a, lim) .rule = (id), .act = (a), .limit_s = (lim)

/*
** One job at one queue, relative to NOW. Zero fields mean the quiet
** default, so each row only names what the rule looks at:
**   created_ago 0 -> created when its status changed
**   hb_ago 0      -> no heartbeat yet
**   qstart_ago 0  -> the queue started a job a minute ago (TO-06 quiet);
**                    NEVER -> last_start 0
*/
struct tc {
	const char *name;
	enum to_status st;
	long long since_ago;
	long long created_ago;
	long long hb_ago;
	int prio;
	const char *workflow;
	int own_stageout;
	long long qstart_ago;
	double hi, lo; /* transtimehi/lo days */
	const struct prm_set *set;
	const char *rule; /* expected, NULL = nothing fires */
	enum to_action act;
	double limit_s;
	double age_s;
};

static struct to_job job_of(const struct tc *t)
{
	long long created = t->created_ago > t->since_ago ? t->created_ago :
							    t->since_ago;
	return (struct to_job){.job_id = 42,
			       .status = t->st,
			       .status_since = NOW - t->since_ago,
			       .created_at = NOW - created,
			       .last_heartbeat =
				       t->hb_ago ? NOW - t->hb_ago : 0,
			       .current_priority = t->prio,
			       .workflow = t->workflow,
			       .own_stageout = t->own_stageout};
}

static struct to_queue queue_of(const struct tc *t)
{
	long long ls = t->qstart_ago == NEVER ? 0 :
		       t->qstart_ago == 0     ? NOW - MIN :
						NOW - t->qstart_ago;
	return (struct to_queue){.last_start = ls,
				 .transtimehi = t->hi,
				 .transtimelo = t->lo};
}

static void run_cases(const struct tc *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct tc *t = &cases[i];
		struct to_job j = job_of(t);
		struct to_queue q = queue_of(t);
		struct to_verdict v;
		int rc = to_check(&j, &q, t->set, NOW, &v);
		if (t->rule == NULL) {
			if (rc != 0 || v.rule != NULL)
				fail_msg("%s: expected nothing, got rc %d %s",
					 t->name, rc, v.rule ? v.rule : "-");
			assert_int_equal(v.action, TO_ACT_NONE);
			assert_null(v.what);
			continue;
		}
		if (rc != 1 || v.rule == NULL || strcmp(v.rule, t->rule) != 0)
			fail_msg("%s: expected %s, got rc %d %s", t->name,
				 t->rule, rc, v.rule ? v.rule : "-");
		assert_int_equal(v.action, t->act);
		assert_near(v.limit_s, t->limit_s, 1e-12);
		assert_near(v.age_s, t->age_s ? t->age_s : t->limit_s + 1,
			    1e-12);
		assert_non_null(v.what);
		assert_true(v.age_s > v.limit_s);
	}
}

static const struct prm_kv defined_kv[] = {{"TIMEOUT_defined", 1}};
static const struct prm_set defined_1h = {defined_kv, 1};
static const struct prm_kv holding_kv[] = {{"TIMEOUT_holding", 24}};
static const struct prm_set holding_24h = {holding_kv, 1};
static const struct prm_kv hb_kv[] = {{"HEARTBEAT_TIMEOUT_analysis", 4}};
static const struct prm_set hb_analysis_4h = {hb_kv, 1};

/* ---- TO-01..TO-05, TO-07: one fixed limit from the status change ------ */

static void test_to01_to05_to07_fixed_limits(void **state)
{
	(void)state;
	static const struct tc cases[] = {
		{"TO-01 pending 1 h", TO_ST_PENDING, HOUR, STAYS},
		{"TO-01 pending 1 h + 1 s", TO_ST_PENDING, HOUR + 1,
		 FIRES("TO-01", TO_ACT_REASSIGN, HOUR)},
		{"TO-02 defined 4 h", TO_ST_DEFINED, 4 * HOUR, STAYS},
		{"TO-02 defined 4 h + 1 s", TO_ST_DEFINED, 4 * HOUR + 1,
		 FIRES("TO-02", TO_ACT_REASSIGN, 4 * HOUR)},
		{"TO-03 assigned 12 h", TO_ST_ASSIGNED, 12 * HOUR, STAYS},
		{"TO-03 assigned 12 h + 1 s", TO_ST_ASSIGNED, 12 * HOUR + 1,
		 FIRES("TO-03", TO_ACT_REASSIGN, 12 * HOUR)},
		{"TO-04 throttled 7 d", TO_ST_THROTTLED, 7 * DAY, STAYS},
		{"TO-04 throttled 7 d + 1 s", TO_ST_THROTTLED, 7 * DAY + 1,
		 FIRES("TO-04", TO_ACT_KILL, 7 * DAY)},
		{"TO-05 activated 2 d", TO_ST_ACTIVATED, 2 * DAY, .prio = 500,
		 STAYS},
		{"TO-05 activated 2 d + 1 s", TO_ST_ACTIVATED, 2 * DAY + 1,
		 .prio = 500, FIRES("TO-05", TO_ACT_REASSIGN, 2 * DAY)},
		/* A starting job with a fresh heartbeat, so TO-09 is quiet. */
		{"TO-05 starting 2 d", TO_ST_STARTING, 2 * DAY, .hb_ago = MIN,
		 .prio = 500, STAYS},
		{"TO-05 starting 2 d + 1 s", TO_ST_STARTING, 2 * DAY + 1,
		 .hb_ago = MIN, .prio = 500,
		 FIRES("TO-05", TO_ACT_REASSIGN, 2 * DAY)},
		{"TO-07 sent 30 min", TO_ST_SENT, 30 * MIN, STAYS},
		{"TO-07 sent 30 min + 1 s", TO_ST_SENT, 30 * MIN + 1,
		 FIRES("TO-07", TO_ACT_FAIL, 30 * MIN)},
		/* Young jobs in every rule's status stay. */
		{"young pending", TO_ST_PENDING, 1, STAYS},
		{"young throttled", TO_ST_THROTTLED, DAY, STAYS},
		{"young sent", TO_ST_SENT, MIN, STAYS},
	};
	run_cases(cases, N(cases));
}

static void test_to02_timeout_defined_override(void **state)
{
	(void)state;
	static const struct tc cases[] = {
		{"TO-02 TIMEOUT_defined 1: 1 h", TO_ST_DEFINED, HOUR,
		 .set = &defined_1h, STAYS},
		{"TO-02 TIMEOUT_defined 1: 1 h + 1 s", TO_ST_DEFINED, HOUR + 1,
		 .set = &defined_1h, FIRES("TO-02", TO_ACT_REASSIGN, HOUR)},
		/* The override touches defined jobs only. */
		{"TO-03 unaffected by TIMEOUT_defined", TO_ST_ASSIGNED,
		 2 * HOUR, .set = &defined_1h, STAYS},
	};
	run_cases(cases, N(cases));
}

/* ---- TO-06 ------------------------------------------------------------ */

static void test_to06_high_priority_stuck_queue(void **state)
{
	(void)state;
	static const struct tc cases[] = {
		{"TO-06 prio 800, never started, 4 h", TO_ST_ACTIVATED,
		 4 * HOUR, .prio = 800, .qstart_ago = NEVER, STAYS},
		{"TO-06 prio 800, never started, 4 h + 1 s", TO_ST_ACTIVATED,
		 4 * HOUR + 1, .prio = 800, .qstart_ago = NEVER,
		 FIRES("TO-06", TO_ACT_REASSIGN, 4 * HOUR)},
		{"TO-06 prio 799 stays", TO_ST_ACTIVATED, 4 * HOUR + 1,
		 .prio = 799, .qstart_ago = NEVER, STAYS},
		{"TO-06 last start exactly 2 h ago: recent", TO_ST_ACTIVATED,
		 4 * HOUR + 1, .prio = 800, .qstart_ago = 2 * HOUR, STAYS},
		{"TO-06 last start 2 h + 1 s ago: older", TO_ST_ACTIVATED,
		 4 * HOUR + 1, .prio = 800, .qstart_ago = 2 * HOUR + 1,
		 FIRES("TO-06", TO_ACT_REASSIGN, 4 * HOUR)},
		{"TO-06 last start a minute ago", TO_ST_ACTIVATED, 10 * HOUR,
		 .prio = 900, STAYS},
		{"TO-06 starting, prio 1000, fresh heartbeat", TO_ST_STARTING,
		 4 * HOUR + 1, .hb_ago = MIN, .prio = 1000,
		 .qstart_ago = 3 * HOUR,
		 FIRES("TO-06", TO_ACT_REASSIGN, 4 * HOUR)},
	};
	run_cases(cases, N(cases));
}

static void test_to06_null_queue_never_started(void **state)
{
	(void)state;
	struct to_job j = {.status = TO_ST_ACTIVATED,
			   .status_since = NOW - 4 * HOUR - 1,
			   .created_at = NOW - 4 * HOUR - 1,
			   .current_priority = 800};
	struct to_verdict v;
	assert_int_equal(to_check(&j, NULL, NULL, NOW, &v), 1);
	assert_string_equal(v.rule, "TO-06");
	j.status_since = NOW - 4 * HOUR;
	assert_int_equal(to_check(&j, NULL, NULL, NOW, &v), 0);
	assert_null(v.rule);
}

/* ---- TO-08 ------------------------------------------------------------ */

static void test_to08_running_from_creation(void **state)
{
	(void)state;
	/* Running for a minute with a fresh heartbeat: only the job's
	** creation time can make it old. */
	static const struct tc cases[] = {
		{"TO-08 created 21 d ago", TO_ST_RUNNING, MIN,
		 .created_ago = 21 * DAY, .hb_ago = MIN, STAYS},
		{"TO-08 created 21 d + 1 s ago", TO_ST_RUNNING, MIN,
		 .created_ago = 21 * DAY + 1, .hb_ago = MIN,
		 FIRES("TO-08", TO_ACT_KILL, 21 * DAY)},
		/* Not for other statuses (activated has TO-05 from the status
		** change, and that is young here). */
		{"TO-08 not for activated", TO_ST_ACTIVATED, MIN,
		 .created_ago = 30 * DAY, STAYS},
	};
	run_cases(cases, N(cases));
}

/* ---- TO-09 ------------------------------------------------------------ */

static void test_to09_heartbeat(void **state)
{
	(void)state;
	static const struct tc cases[] = {
		{"TO-09 running, heartbeat 2 h ago", TO_ST_RUNNING, DAY,
		 .hb_ago = 2 * HOUR, STAYS},
		{"TO-09 running, heartbeat 2 h + 1 s ago", TO_ST_RUNNING, DAY,
		 .hb_ago = 2 * HOUR + 1, FIRES("TO-09", TO_ACT_FAIL, 2 * HOUR)},
		{"TO-09 starting, heartbeat 2 h + 1 s ago", TO_ST_STARTING, DAY,
		 .hb_ago = 2 * HOUR + 1, .prio = 500,
		 FIRES("TO-09", TO_ACT_FAIL, 2 * HOUR)},
		/* HEARTBEAT_TIMEOUT_analysis = 4 h for that workflow only. */
		{"TO-09 analysis 4 h", TO_ST_RUNNING, DAY, .hb_ago = 4 * HOUR,
		 .workflow = "analysis", .set = &hb_analysis_4h, STAYS},
		{"TO-09 analysis 4 h + 1 s", TO_ST_RUNNING, DAY,
		 .hb_ago = 4 * HOUR + 1, .workflow = "analysis",
		 .set = &hb_analysis_4h, FIRES("TO-09", TO_ACT_FAIL, 4 * HOUR)},
		{"TO-09 other workflow keeps 2 h", TO_ST_RUNNING, DAY,
		 .hb_ago = 2 * HOUR + 1, .workflow = "production",
		 .set = &hb_analysis_4h, FIRES("TO-09", TO_ACT_FAIL, 2 * HOUR)},
		{"TO-09 empty workflow keeps 2 h", TO_ST_RUNNING, DAY,
		 .hb_ago = 2 * HOUR + 1, .workflow = "", .set = &hb_analysis_4h,
		 FIRES("TO-09", TO_ACT_FAIL, 2 * HOUR)},
		/* Transferring: only with the workflow's own stage-out. */
		{"TO-09 transferring, own stage-out", TO_ST_TRANSFERRING, DAY,
		 .hb_ago = 2 * HOUR + 1, .own_stageout = 1,
		 FIRES("TO-09", TO_ACT_FAIL, 2 * HOUR)},
		{"TO-09 transferring, own stage-out, 2 h", TO_ST_TRANSFERRING,
		 DAY, .hb_ago = 2 * HOUR, .own_stageout = 1, STAYS},
		{"TO-09 transferring without own stage-out", TO_ST_TRANSFERRING,
		 DAY, .hb_ago = 2 * HOUR + 1, STAYS},
		/* No heartbeat yet: measured from the status change. */
		{"TO-09 no heartbeat, running 2 h", TO_ST_RUNNING, 2 * HOUR,
		 STAYS},
		{"TO-09 no heartbeat, running 2 h + 1 s", TO_ST_RUNNING,
		 2 * HOUR + 1, FIRES("TO-09", TO_ACT_FAIL, 2 * HOUR)},
		/* A status change after the last heartbeat: a sign of life. */
		{"TO-09 heartbeat older than the status change", TO_ST_RUNNING,
		 30 * MIN, .created_ago = DAY, .hb_ago = 3 * HOUR, STAYS},
		/* Not for the other statuses. */
		{"TO-09 not for holding", TO_ST_HOLDING, HOUR, .prio = 500,
		 STAYS},
		{"TO-09 not for sent", TO_ST_SENT, 10 * MIN, STAYS},
	};
	run_cases(cases, N(cases));
}

/* ---- TO-10 ------------------------------------------------------------ */

static void test_to10_holding(void **state)
{
	(void)state;
	static const struct tc cases[] = {
		{"TO-10 prio 800, 3 h", TO_ST_HOLDING, 3 * HOUR, .prio = 800,
		 STAYS},
		{"TO-10 prio 800, 3 h + 1 s", TO_ST_HOLDING, 3 * HOUR + 1,
		 .prio = 800, FIRES("TO-10", TO_ACT_FAIL, 3 * HOUR)},
		{"TO-10 prio 799, 3 h + 1 s", TO_ST_HOLDING, 3 * HOUR + 1,
		 .prio = 799, STAYS},
		{"TO-10 prio 799, 48 h", TO_ST_HOLDING, 48 * HOUR, .prio = 799,
		 STAYS},
		{"TO-10 prio 799, 48 h + 1 s", TO_ST_HOLDING, 48 * HOUR + 1,
		 .prio = 799, FIRES("TO-10", TO_ACT_FAIL, 48 * HOUR)},
		{"TO-10 TIMEOUT_holding 24: 24 h", TO_ST_HOLDING, 24 * HOUR,
		 .prio = 100, .set = &holding_24h, STAYS},
		{"TO-10 TIMEOUT_holding 24: 24 h + 1 s", TO_ST_HOLDING,
		 24 * HOUR + 1, .prio = 100, .set = &holding_24h,
		 FIRES("TO-10", TO_ACT_FAIL, 24 * HOUR)},
		/* The override is for the low-priority limit only. */
		{"TO-10 TIMEOUT_holding 24, prio 800 keeps 3 h", TO_ST_HOLDING,
		 3 * HOUR + 1, .prio = 800, .set = &holding_24h,
		 FIRES("TO-10", TO_ACT_FAIL, 3 * HOUR)},
	};
	run_cases(cases, N(cases));
}

/* ---- TO-11 ------------------------------------------------------------ */

static void test_to11_transferring(void **state)
{
	(void)state;
	/* A fresh heartbeat is irrelevant here (no own stage-out). */
	static const struct tc cases[] = {
		{"TO-11 prio 800, reference 2 d", TO_ST_TRANSFERRING, 2 * DAY,
		 .prio = 800, STAYS},
		{"TO-11 prio 800, reference 2 d + 1 s", TO_ST_TRANSFERRING,
		 2 * DAY + 1, .prio = 800,
		 FIRES("TO-11", TO_ACT_FAIL, 2 * DAY)},
		{"TO-11 prio 799, 2 d + 1 s", TO_ST_TRANSFERRING, 2 * DAY + 1,
		 .prio = 799, STAYS},
		{"TO-11 prio 799, reference 6 d", TO_ST_TRANSFERRING, 6 * DAY,
		 .prio = 799, STAYS},
		{"TO-11 prio 799, reference 6 d + 1 s", TO_ST_TRANSFERRING,
		 6 * DAY + 1, .prio = 799,
		 FIRES("TO-11", TO_ACT_FAIL, 6 * DAY)},
		{"TO-11 transtimehi 1", TO_ST_TRANSFERRING, DAY, .prio = 900,
		 .hi = 1, .lo = 3, STAYS},
		{"TO-11 transtimehi 1, + 1 s", TO_ST_TRANSFERRING, DAY + 1,
		 .prio = 900, .hi = 1, .lo = 3,
		 FIRES("TO-11", TO_ACT_FAIL, DAY)},
		{"TO-11 transtimelo 3", TO_ST_TRANSFERRING, 3 * DAY,
		 .prio = 100, .hi = 1, .lo = 3, STAYS},
		{"TO-11 transtimelo 3, + 1 s", TO_ST_TRANSFERRING, 3 * DAY + 1,
		 .prio = 100, .hi = 1, .lo = 3,
		 FIRES("TO-11", TO_ACT_FAIL, 3 * DAY)},
		/* Fractional days: 0.5 d = 12 h. */
		{"TO-11 transtimelo 0.5, + 1 s", TO_ST_TRANSFERRING,
		 12 * HOUR + 1, .prio = 100, .lo = 0.5,
		 FIRES("TO-11", TO_ACT_FAIL, 12 * HOUR)},
	};
	run_cases(cases, N(cases));
}

/* ---- TO-12 and final statuses ----------------------------------------- */

/* A job of status s that every rule of its status would catch: 100 days
** old, created 100 days ago, no heartbeat, high priority. */
static struct to_job ancient(enum to_status s)
{
	return (struct to_job){.status = s,
			       .status_since = NOW - 100 * DAY,
			       .created_at = NOW - 100 * DAY,
			       .current_priority = 1000,
			       .own_stageout = 1};
}

static void test_to12_paused_disable_reassign_exempt(void **state)
{
	(void)state;
	const struct to_queue open_q = {0};
	const struct to_queue paused = {.paused = 1};
	const struct to_queue no_reassign = {.disable_reassign = 1};
	for (int s = 0; s < TO_ST_FINISHED; s++) {
		struct to_job j = ancient((enum to_status)s);
		struct to_verdict v;
		/* The same job does time out at an ordinary queue ... */
		assert_int_equal(to_check(&j, &open_q, NULL, NOW, &v), 1);
		assert_non_null(v.rule);
		/* ... and nothing fires under TO-12. */
		assert_int_equal(to_check(&j, &paused, NULL, NOW, &v), 0);
		assert_null(v.rule);
		assert_int_equal(v.action, TO_ACT_NONE);
		assert_int_equal(to_check(&j, &no_reassign, NULL, NOW, &v), 0);
		assert_null(v.rule);
	}
}

static void test_to_final_statuses_never_fire(void **state)
{
	(void)state;
	static const enum to_status finals[] = {TO_ST_FINISHED, TO_ST_FAILED,
						TO_ST_CLOSED, TO_ST_CANCELLED};
	for (size_t i = 0; i < N(finals); i++) {
		struct to_job j = ancient(finals[i]);
		struct to_verdict v;
		assert_int_equal(to_check(&j, NULL, NULL, NOW, &v), 0);
		assert_null(v.rule);
		assert_int_equal(v.action, TO_ACT_NONE);
	}
}

/* ---- the order when several rules fire -------------------------------- */

static void test_to_order_first_rule_wins(void **state)
{
	(void)state;
	static const struct tc cases[] = {
		/* Past 21 days and no heartbeat for 3 h: TO-08 (kill) wins
		** over TO-09 (fail), a 21-day job is not retried. */
		{"TO-08 over TO-09", TO_ST_RUNNING, 3 * HOUR,
		 .created_ago = 21 * DAY + 1,
		 FIRES("TO-08", TO_ACT_KILL, 21 * DAY)},
		/* Starting, high priority at a queue that never started, no
		** heartbeat for 4 h + 1 s: TO-06 (reassign) before TO-09. */
		{"TO-06 over TO-09", TO_ST_STARTING, 4 * HOUR + 1, .prio = 800,
		 .qstart_ago = NEVER,
		 FIRES("TO-06", TO_ACT_REASSIGN, 4 * HOUR)},
		/* Past 2 days: TO-05 comes before TO-06 and TO-09. */
		{"TO-05 over TO-06 and TO-09", TO_ST_STARTING, 2 * DAY + 1,
		 .prio = 800, .qstart_ago = NEVER,
		 FIRES("TO-05", TO_ACT_REASSIGN, 2 * DAY)},
		/* Transferring with own stage-out past 6 days and silent: TO-09
		** comes before TO-11 (both fail; the rule ID differs). */
		{"TO-09 over TO-11", TO_ST_TRANSFERRING, 6 * DAY + 1,
		 .own_stageout = 1, FIRES("TO-09", TO_ACT_FAIL, 2 * HOUR),
		 .age_s = 6 * DAY + 1},
	};
	run_cases(cases, N(cases));
}

/* ---- TO-14: one event per timed-out job -------------------------------- */

/* The worker's scan as the test models it (store_panda.c): a job is looked
** at when its check time (to_next_check) comes; a verdict is one
** job.timeout event, and the action moves the job in the same transaction
** (reassign: pending, a new attempt; fail: failed; kill: cancelled) with
** its status changed at the scan's time. */
static enum to_status after_action(enum to_action a)
{
	return a == TO_ACT_REASSIGN ? TO_ST_PENDING
	       : a == TO_ACT_FAIL   ? TO_ST_FAILED
				    : TO_ST_CANCELLED;
}

/* One scan at `t`: 1 and the job moved when a rule fires, else 0. */
static int scan(struct to_job *j, const struct to_queue *q,
		const struct prm_set *set, long long t, const char **rule,
		enum to_action *act)
{
	struct to_verdict v;
	int rc = to_check(j, q, set, t, &v);
	assert_true(rc == 0 || rc == 1);
	if (rc == 1) {
		*rule = v.rule;
		*act = v.action;
		j->status = after_action(v.action);
		j->status_since = t;
	}
	return rc;
}

/* 10000 h without a heartbeat before TO-09 fires: out of the way. */
static const struct prm_kv hb_off_kv[] = {{"HEARTBEAT_TIMEOUT", 10000}};
static const struct prm_set hb_off = {hb_off_kv, 1};

/* TO-14: every rule's job gives no event up to its limit and exactly one
** event the second after (the check time to_next_check gives); after its
** action no scan gives that attempt a second event: a failed or cancelled
** job never fires again, a reassigned one only as a new attempt once
** TO-01's hour is over (3600 s: none; 3601 s: the new attempt's). */
static void test_to14_one_event_per_timeout(void **state)
{
	(void)state;
	static const struct {
		const char *rule;
		enum to_action act;
		struct to_job j;   /* times relative to NOW, added below */
		long long qstart;  /* the queue's last start, rel. to NOW */
		long long fire;    /* first second with an event, - NOW */
		const struct prm_set *set; /* NULL: the catalogue's */
	} rows[] = {
		{"TO-01", TO_ACT_REASSIGN, {.status = TO_ST_PENDING}, -MIN,
		 HOUR + 1, NULL},
		{"TO-02", TO_ACT_REASSIGN, {.status = TO_ST_DEFINED}, -MIN,
		 4 * HOUR + 1, NULL},
		{"TO-03", TO_ACT_REASSIGN, {.status = TO_ST_ASSIGNED}, -MIN,
		 12 * HOUR + 1, NULL},
		{"TO-04", TO_ACT_KILL, {.status = TO_ST_THROTTLED}, -MIN,
		 7 * DAY + 1, NULL},
		{"TO-05", TO_ACT_REASSIGN, {.status = TO_ST_ACTIVATED}, -MIN,
		 2 * DAY + 1, NULL},
		/* high priority, the queue's last start 3 h ago; no
		** heartbeat, so TO-09 is kept quiet by its parameter */
		{"TO-06", TO_ACT_REASSIGN,
		 {.status = TO_ST_STARTING, .current_priority = 800},
		 -3 * HOUR, 4 * HOUR + 1, &hb_off},
		{"TO-07", TO_ACT_FAIL, {.status = TO_ST_SENT}, -MIN,
		 30 * MIN + 1, NULL},
		/* created 21 days - 10 min ago; TO-09 kept quiet */
		{"TO-08", TO_ACT_KILL,
		 {.status = TO_ST_RUNNING, .created_at = -21 * DAY + 10 * MIN},
		 -MIN, 10 * MIN + 1, &hb_off},
		{"TO-09", TO_ACT_FAIL, {.status = TO_ST_RUNNING}, -MIN,
		 2 * HOUR + 1, NULL},
		{"TO-10", TO_ACT_FAIL, {.status = TO_ST_HOLDING}, -MIN,
		 48 * HOUR + 1, NULL},
		{"TO-11", TO_ACT_FAIL, {.status = TO_ST_TRANSFERRING}, -MIN,
		 6 * DAY + 1, NULL},
	};
	for (size_t i = 0; i < N(rows); i++) {
		struct to_job j = rows[i].j;
		j.job_id = 42;
		j.status_since = NOW;
		j.created_at = NOW + j.created_at;
		struct to_queue q = {.last_start = NOW + rows[i].qstart};
		const struct prm_set *set = rows[i].set;
		const char *rule = NULL;
		enum to_action act = TO_ACT_NONE;
		long long at = 0;
		int events = 0;
		/* the worker looks again at the second the rule can fire */
		assert_int_equal(to_next_check(&j, &q, set, NOW, &at), 1);
		if (at != NOW + rows[i].fire)
			fail_msg("%s: next check at NOW%+lld, expected %+lld",
				 rows[i].rule, at - NOW, rows[i].fire);
		/* at the limit: no event; one second past: one */
		events += scan(&j, &q, set, at - 1, &rule, &act);
		assert_int_equal(events, 0);
		events += scan(&j, &q, set, at, &rule, &act);
		assert_int_equal(events, 1);
		assert_string_equal(rule, rows[i].rule);
		assert_int_equal(act, rows[i].act);
		/* the same and the next scans give the moved job nothing */
		events += scan(&j, &q, set, at, &rule, &act);
		events += scan(&j, &q, set, at + 1, &rule, &act);
		if (rows[i].act != TO_ACT_REASSIGN) {
			/* final: never another event, nor a check time */
			assert_int_equal(to_next_check(&j, &q, set, at, &at),
					 0);
			events += scan(&j, &q, set, NOW + 365 * DAY, &rule,
				       &act);
			assert_int_equal(events, 1);
			continue;
		}
		/* pending since `at`: TO-01 at exactly 1 h nothing, 1 s
		** later the new attempt's one event */
		long long next = 0;
		assert_int_equal(to_next_check(&j, &q, set, at, &next), 1);
		assert_true(next == at + HOUR + 1);
		events += scan(&j, &q, set, at + HOUR, &rule, &act);
		assert_int_equal(events, 1);
		events += scan(&j, &q, set, at + HOUR + 1, &rule, &act);
		assert_int_equal(events, 2);
		assert_string_equal(rule, "TO-01");
	}
}

static void test_to_verdict_fields(void **state)
{
	(void)state;
	struct to_job j = {.status = TO_ST_RUNNING,
			   .status_since = NOW - DAY,
			   .created_at = NOW - DAY,
			   .last_heartbeat = NOW - 5 * HOUR};
	struct to_verdict v;
	assert_int_equal(to_check(&j, NULL, NULL, NOW, &v), 1);
	assert_string_equal(v.rule, "TO-09");
	assert_int_equal(v.action, TO_ACT_FAIL);
	assert_near(v.age_s, 5 * HOUR, 1e-12);
	assert_near(v.limit_s, 2 * HOUR, 1e-12);
	assert_string_equal(v.what, "no heartbeat for");
}

/* ---- names and invalid input ------------------------------------------ */

static void test_to_status_and_action_names(void **state)
{
	(void)state;
	for (int s = 0; s < TO_NSTATUS; s++) {
		const char *name = to_status_name((enum to_status)s);
		assert_non_null(name);
		assert_int_equal(to_status_parse(name), s);
	}
	assert_string_equal(to_status_name(TO_ST_TRANSFERRING), "transferring");
	assert_int_equal(to_status_parse("throttled"), TO_ST_THROTTLED);
	assert_null(to_status_name(TO_NSTATUS));
	assert_null(to_status_name((enum to_status)-1));
	assert_int_equal(to_status_parse("Running"), -1);
	assert_int_equal(to_status_parse("waiting"), -1);
	assert_int_equal(to_status_parse(""), -1);
	assert_int_equal(to_status_parse(NULL), -1);

	static const struct {
		enum to_action a;
		const char *name;
	} acts[] = {{TO_ACT_NONE, "none"},
		    {TO_ACT_REASSIGN, "reassign"},
		    {TO_ACT_FAIL, "fail"},
		    {TO_ACT_KILL, "kill"}};
	for (size_t i = 0; i < N(acts); i++)
		assert_string_equal(to_action_name(acts[i].a), acts[i].name);
	assert_null(to_action_name((enum to_action)4));
	assert_null(to_action_name((enum to_action)-1));
}

static void test_to_check_einval(void **state)
{
	(void)state;
	struct to_job j = ancient(TO_ST_RUNNING);
	struct to_verdict v;
	assert_int_equal(to_check(NULL, NULL, NULL, NOW, &v), GB_EINVAL);
	assert_int_equal(to_check(&j, NULL, NULL, NOW, NULL), GB_EINVAL);
	j.status = TO_NSTATUS;
	assert_int_equal(to_check(&j, NULL, NULL, NOW, &v), GB_EINVAL);
	j.status = (enum to_status)-1;
	assert_int_equal(to_check(&j, NULL, NULL, NOW, &v), GB_EINVAL);
}

/* ---- TO-13 ------------------------------------------------------------ */

static const struct prm_kv mc_kv[] = {
	{"FAST_REBRO_THRESHOLD_NQUEUE_MC", 20},
	{"FAST_REBRO_THRESHOLD_NQUEUE_ZERO", 0},
	{"FAST_REBRO_THRESHOLD_NQUEUE_LOW", 19},
};
static const struct prm_set mc = {mc_kv, N(mc_kv)};
static const struct prm_kv mc_frac_kv[] = {
	{"FAST_REBRO_THRESHOLD_NQUEUE_MC", 20},
	{"FAST_REBRO_THRESHOLD_NQUEUE_FRAC", 0.1},
	{"FAST_REBRO_THRESHOLD_NQNR_RATIO", 5},
};
static const struct prm_set mc_frac = {mc_frac_kv, N(mc_frac_kv)};
static const struct prm_kv bare_kv[] = {
	{"FAST_REBRO_THRESHOLD_NQUEUE", 20},
};
static const struct prm_set bare = {bare_kv, N(bare_kv)};
static const struct prm_kv bare_mc_kv[] = {
	{"FAST_REBRO_THRESHOLD_NQUEUE", 20},
	{"FAST_REBRO_THRESHOLD_NQUEUE_MC", 65},
};
static const struct prm_set bare_mc = {bare_mc_kv, N(bare_mc_kv)};

static void test_to13_fast_rebro(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		struct to_rebro_in in;
		const struct prm_set *set;
		const char *gshare;
		int triggered;
		long long excess;
		double ratio_limit, frac_limit, nqueue_limit; /* NAN: unset */
		const char *code; /* why not triggered; NULL: triggered */
	} cases[] = {
		/* name, {nqueue, nrun, total, nslots}, set, gshare,
		** triggered, excess, ratio x nR, frac x total, threshold,
		** code */
		/* The reference example: min(100-30, 100-20, 100-60) = 40. */
		{"TO-13 example", {100, 10, 200, 0}, &mc, "MC",
		 1, 40, 30, 60, 20, NULL},
		{"TO-13 threshold unset: never", {100, 10, 200, 0}, NULL, "MC",
		 0, 0, 30, 60, NAN, "no_threshold"},
		{"TO-13 another gshare's threshold", {100, 10, 200, 0}, &mc,
		 "Analysis", 0, 0, 30, 60, NAN, "no_threshold"},
		/* The bare key opts no gshare in: only its own key does. */
		{"TO-13 bare threshold: never", {100, 10, 200, 0}, &bare,
		 "Analysis", 0, 0, 30, 60, NAN, "no_threshold"},
		{"TO-13 bare threshold, the example's gshare: never",
		 {100, 10, 200, 0}, &bare, "MC", 0, 0, 30, 60, NAN, "no_threshold"},
		{"TO-13 bare threshold and the gshare's own", {100, 10, 200, 0},
		 &bare_mc, "MC", 1, 35, 30, 60, 65, NULL},
		{"TO-13 bare threshold, another gshare", {100, 10, 200, 0},
		 &bare_mc, "Analysis", 0, 0, 30, 60, NAN, "no_threshold"},
		/* A gshare called FRAC does not read ..._NQUEUE_FRAC. */
		{"TO-13 gshare named like another key", {100, 10, 200, 0},
		 &mc_frac, "FRAC", 0, 0, 50, 20, NAN, "no_threshold"},
		{"TO-13 nSlots: never", {100, 10, 200, 1}, &mc, "MC",
		 0, 0, 30, 60, 20, "nslots"},
		/* Ratio boundary: nQ 30 = 3 x 10 stays, 31 triggers. */
		{"TO-13 ratio at the limit", {30, 10, 50, 0}, &mc, "ZERO",
		 0, 0, 30, 15, 0, "ratio"},
		{"TO-13 ratio past the limit", {31, 10, 50, 0}, &mc, "ZERO",
		 1, 1, 30, 15, 0, NULL},
		/* Fraction boundary: 0.3 x 100 = 30 stays; 0.3 x 99 = 29.7
		** triggers and ceil(30 - 29.7) = 1. */
		{"TO-13 fraction at the limit", {30, 0, 100, 0}, &mc, "ZERO",
		 0, 0, 0, 30, 0, "frac"},
		{"TO-13 fraction past the limit", {30, 0, 99, 0}, &mc, "ZERO",
		 1, 1, 0, 29.7, 0, NULL},
		/* Threshold boundary: nQ 20 at 20 stays; at 19 excess 1. */
		{"TO-13 threshold at the limit", {20, 0, 20, 0}, &mc, "MC",
		 0, 0, 0, 6, 20, "nqueue"},
		{"TO-13 threshold past the limit", {20, 0, 20, 0}, &mc, "LOW",
		 1, 1, 0, 6, 19, NULL},
		/* ceil: min(100, 100, 100 - 30.3 = 69.7) -> 70. */
		{"TO-13 ceil of the fraction", {100, 0, 101, 0}, &mc, "ZERO",
		 1, 70, 0, 30.3, 0, NULL},
		/* Fractional counts: min(10.5 - 3, 10.5 - 0, 10.5 - 3.15) =
		** 7.35 -> 8. */
		{"TO-13 fractional counts", {10.5, 1, 10.5, 0}, &mc, "ZERO",
		 1, 8, 3, 3.15, 0, NULL},
		/* Overridden ratio 5 and fraction 0.1: min(50, 80, 80) = 50. */
		{"TO-13 overridden ratio and fraction", {100, 10, 200, 0},
		 &mc_frac, "MC", 1, 50, 50, 20, 20, NULL},
		{"TO-13 empty queue", {0, 0, 0, 0}, &mc, "ZERO",
		 0, 0, 0, 0, 0, "ratio"},
	};
	for (size_t i = 0; i < N(cases); i++) {
		struct to_rebro_out out;
		memset(&out, 0x5a, sizeof(out));
		assert_int_equal(to_fast_rebro(&cases[i].in, cases[i].set,
					       cases[i].gshare, &out),
				 GB_OK);
		if (out.triggered != cases[i].triggered ||
		    out.excess != cases[i].excess)
			fail_msg("%s: triggered %d excess %lld", cases[i].name,
				 out.triggered, out.excess);
		assert_near(out.ratio_limit, cases[i].ratio_limit, 1e-12);
		assert_near(out.frac_limit, cases[i].frac_limit, 1e-12);
		if ((out.code == NULL) != (cases[i].code == NULL) ||
		    (out.code && strcmp(out.code, cases[i].code) != 0))
			fail_msg("%s: code %s, want %s", cases[i].name,
				 out.code ? out.code : "NULL",
				 cases[i].code ? cases[i].code : "NULL");
		if (isnan(cases[i].nqueue_limit))
			assert_true(isnan(out.nqueue_limit));
		else
			assert_near(out.nqueue_limit, cases[i].nqueue_limit,
				    1e-12);
	}
}

static void test_to13_einval(void **state)
{
	(void)state;
	struct to_rebro_out out;
	const struct to_rebro_in ok = {100, 10, 200, 0};
	assert_int_equal(to_fast_rebro(NULL, &mc, "MC", &out), GB_EINVAL);
	assert_int_equal(to_fast_rebro(&ok, &mc, "MC", NULL), GB_EINVAL);
	static const struct to_rebro_in bad[] = {
		{-1, 10, 200, 0},
		{100, -1, 200, 0},
		{100, 10, -0.5, 0},
		{NAN, 10, 200, 0},
		{100, INFINITY, 200, 0},
		{100, 10, NAN, 0},
	};
	for (size_t i = 0; i < N(bad); i++)
		assert_int_equal(to_fast_rebro(&bad[i], &mc, "MC", &out),
				 GB_EINVAL);
	/* NULL or "" gshare has no key of its own: never, even with the
	** bare key set. */
	assert_int_equal(to_fast_rebro(&ok, NULL, NULL, &out), GB_OK);
	assert_int_equal(out.triggered, 0);
	assert_true(isnan(out.nqueue_limit));
	assert_int_equal(to_fast_rebro(&ok, &bare, "", &out), GB_OK);
	assert_int_equal(out.triggered, 0);
	assert_true(isnan(out.nqueue_limit));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_to01_to05_to07_fixed_limits),
		cmocka_unit_test(test_to02_timeout_defined_override),
		cmocka_unit_test(test_to06_high_priority_stuck_queue),
		cmocka_unit_test(test_to06_null_queue_never_started),
		cmocka_unit_test(test_to08_running_from_creation),
		cmocka_unit_test(test_to09_heartbeat),
		cmocka_unit_test(test_to10_holding),
		cmocka_unit_test(test_to11_transferring),
		cmocka_unit_test(test_to12_paused_disable_reassign_exempt),
		cmocka_unit_test(test_to_final_statuses_never_fire),
		cmocka_unit_test(test_to_order_first_rule_wins),
		cmocka_unit_test(test_to14_one_event_per_timeout),
		cmocka_unit_test(test_to_verdict_fields),
		cmocka_unit_test(test_to_status_and_action_names),
		cmocka_unit_test(test_to_check_einval),
		cmocka_unit_test(test_to13_fast_rebro),
		cmocka_unit_test(test_to13_einval),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
