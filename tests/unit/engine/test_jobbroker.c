/*
** test_jobbroker.c — every filter rule of the production job brokerage
** (PJ-01..PJ-27, FC-06) with the rule's numbers.
**
** Each test starts from the fixture of jbfixture.h, where every queue
** passes every rule, changes the one attribute a rule reads on both sides
** of its boundary, and checks which queues survive, the rule ID, reason
** code and compared numbers of each drop, and the stage counts. The
** weights, the distribution (PJ-28..PJ-36), the stage chain, input
** validation and the randomized invariants are in test_jobbroker_weights.c.
*/
#include "jbfixture.h"

/* ---- PJ-01 / PJ-02 ------------------------------------------------------ */

/* PJ-01 */
static void test_pj01_test_queues_and_preassigned(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	fx_add(f, "AGLT2_UCORE");
	fx_add(f, "ANALY_TeSt_SITE");
	fx_add(f, "mytestqueue");
	fx_run(f, 1);
	assert_alive(f, "AGLT2_UCORE");
	assert_reason_text(assert_dropped(f, "ANALY_TeSt_SITE", "PJ-01",
					  "test_queue"),
			   "name ANALY_TeSt_SITE contains 'test'");
	assert_dropped(f, "mytestqueue", "PJ-01", "test_queue");
	assert_stage(f, "candidates", 3, 1);

	/* PJ-01: a pre-assigned test queue is a candidate, the rest are not. */
	const char *pre[] = {"ANALY_TeSt_SITE"};
	f->t.preassigned = pre;
	f->t.npreassigned = 1;
	fx_run(f, 1);
	assert_alive(f, "ANALY_TeSt_SITE");
	const struct dec_reason *r =
		assert_dropped(f, "AGLT2_UCORE", "PJ-01", "not_preassigned");
	assert_near(r->v[0], 1, 0);
	assert_int_equal(f->d.outcome, DEC_ASSIGNED);
	assert_string_equal(f->cands[f->d.chosen].name, "ANALY_TeSt_SITE");
	free(f);
}

/* PJ-01: "test" is found wherever it starts, after any number of other
** t's, e's and s's in either case (a partial match must not skip it), and
** a name with those letters but no "test" stays. */
static void test_pj01_test_anywhere_after_other_ts(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	fx_add(f, "T_ATLAS_tEsT");  /* an earlier 'T' that starts nothing */
	fx_add(f, "atlas_Tttest");  /* 't' then 'T' then the word */
	fx_add(f, "TEST");          /* the whole name */
	fx_add(f, "tetest");        /* "te" then the word */
	fx_add(f, "SEStesTEST");    /* "tes" then the word */
	fx_add(f, "CERN_TT_tes");   /* t's, and "tes" cut short at the end */
	fx_add(f, "t");
	fx_add(f, "TIER2_ATLAS_st");
	fx_run(f, 1);
	assert_dropped(f, "T_ATLAS_tEsT", "PJ-01", "test_queue");
	assert_dropped(f, "atlas_Tttest", "PJ-01", "test_queue");
	assert_dropped(f, "TEST", "PJ-01", "test_queue");
	assert_dropped(f, "tetest", "PJ-01", "test_queue");
	assert_dropped(f, "SEStesTEST", "PJ-01", "test_queue");
	assert_alive(f, "CERN_TT_tes");
	assert_alive(f, "t");
	assert_alive(f, "TIER2_ATLAS_st");
	assert_stage(f, "candidates", 8, 3);
	free(f);
}

/* PJ-02 */
static void test_pj02_merge_preassignment_given_up(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	fx_add(f, "A");
	fx_add(f, "B");
	const char *pre[] = {"A"};
	f->t.preassigned = pre;
	f->t.npreassigned = 1;
	f->t.merge = 1;
	/* PJ-02: skipped for 24 h minus 1 s: the pre-assignment holds. */
	f->t.preassign_skipped_since = NOW - 86399;
	fx_run(f, 1);
	assert_alive(f, "A");
	assert_dropped(f, "B", "PJ-01", "not_preassigned");
	assert_null(strstr(f->d.note, "PJ-02"));

	/* Exactly 24 h: ignored, every queue is a candidate again. */
	f->t.preassign_skipped_since = NOW - 86400;
	fx_run(f, 1);
	assert_alive(f, "A");
	assert_alive(f, "B");
	assert_string_equal(f->d.note,
			    "PJ-02: pre-assignment ignored, skipped for 24 h");

	/* Only merge jobs give up their pre-assignment. */
	f->t.merge = 0;
	f->t.preassign_skipped_since = NOW - 3 * 86400;
	fx_run(f, 1);
	assert_dropped(f, "B", "PJ-01", "not_preassigned");

	/* Once given up, an offline pre-assigned queue is ordinary (PJ-04). */
	f->t.merge = 1;
	f->q[0].status = "offline";
	fx_run(f, 1);
	assert_dropped(f, "A", "PJ-04", "status");
	free(f);
}

/* ---- PJ-03 / FC-06 ------------------------------------------------------ */

/* PJ-03 / FC-06 */
static void test_pj03_fc06_nucleus_only_scope(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	fx_add(f, "AT_NUC")->nucleus = "NUC";
	fx_add(f, "OTHER_NUC")->nucleus = "NUC2";
	fx_add(f, "SATELLITE");
	fx_run(f, 1);
	/* PJ-03: satellites are candidates for a normal task. */
	assert_alive(f, "AT_NUC");
	assert_alive(f, "OTHER_NUC");
	assert_alive(f, "SATELLITE");

	/* FC-06: a full-chain task on a bare nucleus keeps to its queues. */
	f->t.scope = TB_SCOPE_NUCLEUS_ONLY;
	fx_run(f, 1);
	assert_alive(f, "AT_NUC");
	assert_reason_text(assert_dropped(f, "OTHER_NUC", "FC-06",
					  "full_chain"),
			   "full-chain task uses only queues of nucleus NUC");
	assert_dropped(f, "SATELLITE", "FC-06", "full_chain");
	assert_stage(f, "full chain", 3, 1);

	/* PJ-03: a task without a nucleus has no associated queue. */
	f->t.nucleus = "";
	fx_run(f, 1);
	assert_dropped(f, "AT_NUC", "FC-06", "full_chain");
	assert_int_equal(f->d.outcome, DEC_PENDING);
	free(f);
}

/* ---- PJ-04 -------------------------------------------------------------- */

/* PJ-04 */
static void test_pj04_status_online_unless_preassigned(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	fx_add(f, "ONLINE");
	fx_add(f, "OFFLINE")->status = "offline";
	fx_add(f, "BROKEROFF")->status = "brokeroff";
	fx_add(f, "STANDBY")->status = "standby";
	fx_run(f, 1);
	assert_alive(f, "ONLINE");
	assert_reason_text(assert_dropped(f, "OFFLINE", "PJ-04", "status"),
			   "status offline is not online");
	assert_dropped(f, "BROKEROFF", "PJ-04", "status");
	assert_dropped(f, "STANDBY", "PJ-04", "status");
	assert_stage(f, "status", 4, 1);

	const char *pre[] = {"OFFLINE", "BROKEROFF"};
	f->t.preassigned = pre;
	f->t.npreassigned = 2;
	fx_run(f, 1);
	assert_alive(f, "OFFLINE");
	assert_alive(f, "BROKEROFF");
	free(f);
}

/* ---- PJ-05 / PJ-06 / PJ-07 ---------------------------------------------- */

/* PJ-05 */
static void test_pj05_blocked_link(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	fx_add(f, "OPEN");
	fx_add(f, "BLOCKED")->link_blocked = 1;
	fx_add(f, "CLOSENESS_M1");
	f->link[2].closeness = -1;
	struct jb_queue *n = fx_add(f, "AT_NUC");
	n->nucleus = "NUC";
	n->link_blocked = 1;
	fx_add(f, "NO_LINK")->link = NULL; /* NW-03: worst but usable */
	fx_run(f, 1);
	assert_alive(f, "OPEN");
	assert_alive(f, "AT_NUC");
	assert_alive(f, "NO_LINK");
	assert_dropped(f, "BLOCKED", "PJ-05", "link_blocked");
	const struct dec_reason *r =
		assert_dropped(f, "CLOSENESS_M1", "PJ-05", "link_blocked");
	assert_near(r->v[0], -1, 0);
	assert_reason_text(r, "link from CLOSENESS_M1 to the nucleus is "
			      "blocked (closeness -1)");
	assert_stage(f, "link blocked", 5, 3);
	free(f);
}

/* PJ-06 */
static void test_pj06_files_queued_on_link(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	fx_add(f, "AT_CAP");
	f->link[0].queued_files = 150; /* not > NQUEUED_SAT_CAP 150 */
	fx_add(f, "OVER");
	f->link[1].queued_files = 151;
	fx_add(f, "AT_NUC")->nucleus = "NUC";
	f->link[2].queued_files = 1000;
	fx_run(f, 1);
	assert_alive(f, "AT_CAP");
	assert_alive(f, "AT_NUC");
	const struct dec_reason *r =
		assert_dropped(f, "OVER", "PJ-06", "link_unusable");
	assert_near(r->v[0], 151, 0);
	assert_near(r->v[1], 150, 0);

	fx_param(f, "NQUEUED_SAT_CAP", 200);
	fx_run(f, 1);
	assert_alive(f, "OVER");
	free(f);
}

/* PJ-07 */
static void test_pj07_nucleus_flooded_skips_satellites(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	fx_add(f, "SAT");
	fx_add(f, "AT_NUC")->nucleus = "NUC";
	f->env.nucleus_queued_files = 10000; /* not > 10000 */
	fx_run(f, 1);
	assert_alive(f, "SAT");

	/* PJ-07: one file more and the satellites wait (the nucleus's own
	** queues stay: the public code skips satellites only). */
	f->env.nucleus_queued_files = 10001;
	fx_run(f, 1);
	assert_alive(f, "AT_NUC");
	const struct dec_reason *r =
		assert_dropped(f, "SAT", "PJ-07", "links_full");
	assert_near(r->v[0], 10001, 0);
	assert_near(r->v[1], 10000, 0);
	assert_stage(f, "links full", 2, 1);
	free(f);
}

/* ---- PJ-08 / PJ-09 ------------------------------------------------------ */

/* PJ-08 */
static void test_pj08_high_priority_or_scout_at_nucleus(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	fx_add(f, "SAT");
	fx_add(f, "AT_NUC")->nucleus = "NUC";
	f->t.priority = 799;
	fx_run(f, 1);
	assert_alive(f, "SAT");

	f->t.priority = 800;
	fx_run(f, 1);
	assert_alive(f, "AT_NUC");
	const struct dec_reason *r =
		assert_dropped(f, "SAT", "PJ-08", "high_priority");
	assert_near(r->v[0], 800, 0);
	assert_near(r->v[1], 800, 0);

	f->t.priority = 500;
	f->t.scout = 1;
	fx_run(f, 1);
	assert_dropped(f, "SAT", "PJ-08", "high_priority");
	assert_alive(f, "AT_NUC");
	free(f);
}

/* PJ-09 */
static void test_pj09_inactive_queues(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	struct jb_queue *a = fx_add(f, "RECENT");
	a->nucleus = "NUC";
	a->counts.activated = 5;
	a->last_start = NOW - 7200; /* exactly 2 h: still active */
	struct jb_queue *b = fx_add(f, "STALE");
	b->nucleus = "NUC";
	b->counts.activated = 5;
	b->last_start = NOW - 7201;
	struct jb_queue *c = fx_add(f, "IDLE");
	c->nucleus = "NUC";
	c->last_start = NOW - 86400; /* nothing activated: not inactive */
	struct jb_queue *d = fx_add(f, "NEVER");
	d->nucleus = "NUC";
	d->counts.activated = 1;
	d->last_start = 0;

	/* Normal priority: PJ-09 does not apply. */
	fx_run(f, 1);
	assert_alive(f, "STALE");
	assert_alive(f, "NEVER");

	/* PJ-09 for priority >= 800, scouts, merges and pre-merged jobs. */
	static const struct {
		long prio;
		int scout, merge, premerged;
	} cases[] = {{800, 0, 0, 0}, {500, 1, 0, 0}, {500, 0, 1, 0},
		     {500, 0, 0, 1}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		f->t.priority = cases[i].prio;
		f->t.scout = cases[i].scout;
		f->t.merge = cases[i].merge;
		f->t.premerged = cases[i].premerged;
		fx_run(f, 1);
		assert_alive(f, "RECENT");
		assert_alive(f, "IDLE");
		const struct dec_reason *r =
			assert_dropped(f, "STALE", "PJ-09", "inactive");
		assert_near(r->v[0], 7201, 0);
		assert_near(r->v[1], 7200, 0);
		assert_near(r->v[2], 5, 0);
		assert_dropped(f, "NEVER", "PJ-09", "inactive");
	}
	free(f);
}

/* ---- PJ-10 -------------------------------------------------------------- */

/* PJ-10 */
static void test_pj10_zero_share_table(void **state)
{
	(void)state;
	static const struct {
		const char *policy, *ptype;
		int zero;
	} cases[] = {
		{"", "simul", 0},
		{NULL, "simul", 0},
		{"group=(.*)/ATLAS:50%", "simul", 0},  /* no type entry */
		{"type=evgensimul:100%", "evgen", 0},
		{"type=evgensimul:100%", "simul", 0},
		{"type=evgensimul:100%", "reprocessing", 1}, /* no match */
		{"type=evgensimul:100%", "", 1},
		{"type=evgensimul:0%", "simul", 1},
		{"type=any:0%", "simul", 1},
		{"type=any:10%", "whatever", 0},
		{"type=simul:0%,type=any:100%", "simul", 1}, /* equal wins */
		{"type=any:100%,type=simul:0%", "simul", 1},
		{"type=any:0%,type=simul:20%", "simul", 0},
		{"type=evgensimul:0%,type=simul:50%", "simul", 0},
		{"type=any:0%,type=evgensimul:30%", "evgen", 0},
		{"type=reprocessing:0.5%", "reprocessing", 0},
		{"type=reprocessing:0.0%", "reprocessing", 1},
		{"type=simul", "simul", 0},            /* no share: not zero */
		{"group=x:10%, type=simul:0%", "simul", 1},
		{"type=mcore:100%", "evgen", 1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = jb_zero_share(cases[i].policy, cases[i].ptype);
		if (got != cases[i].zero)
			fail_msg("PJ-10 case %zu ('%s', '%s'): %d", i,
				 cases[i].policy ? cases[i].policy : "(null)",
				 cases[i].ptype, got);
	}
}

/* PJ-10 */
static void test_pj10_zero_share_drops_queue(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	fx_add(f, "EVGENSIMUL")->fairsharepolicy = "type=evgensimul:100%";
	fx_add(f, "OPEN");
	f->t.processing_type = "reprocessing";
	fx_run(f, 1);
	assert_alive(f, "OPEN");
	assert_reason_text(assert_dropped(f, "EVGENSIMUL", "PJ-10",
					  "zeroshare"),
			   "fairsharepolicy 'type=evgensimul:100%' gives the "
			   "processing type no share");
	f->t.processing_type = "simul";
	fx_run(f, 1);
	assert_alive(f, "EVGENSIMUL");
	free(f);
}

/* ---- PJ-11 / PJ-12 ------------------------------------------------------ */

/* PJ-11 */
static void test_pj11_io_intensive_input_move(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	struct jb_queue *a = fx_add(f, "SIZE_OK");
	a->missing_size = 9.99;
	a->missing_files = 99;
	fx_add(f, "SIZE_OVER")->missing_size = 10; /* must be < 10 GB */
	fx_add(f, "FILES_OVER")->missing_files = 100;
	f->t.io_intensity = 200; /* not > IO_INTENSITY_CUTOFF: no check */
	fx_run(f, 1);
	assert_alive(f, "SIZE_OVER");
	assert_alive(f, "FILES_OVER");

	f->t.io_intensity = 201;
	fx_run(f, 1);
	assert_alive(f, "SIZE_OK");
	const struct dec_reason *r = assert_dropped(f, "SIZE_OVER", "PJ-11",
						    "io");
	assert_near(r->v[0], 10, 0);
	assert_near(r->v[1], 10, 0);
	assert_near(r->v[2], 201, 0);
	r = assert_dropped(f, "FILES_OVER", "PJ-11", "io");
	assert_near(r->v[0], 100, 0);
	assert_near(r->v[1], 100, 0);
	assert_stage(f, "move input", 3, 1);
	free(f);
}

/* PJ-12 */
static void test_pj12_disk_io_limit(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	struct jb_queue *a = fx_add(f, "BUSY");
	a->max_diskio = 1000;
	a->diskio_avg = 1001;
	struct jb_queue *b = fx_add(f, "AT_LIMIT");
	b->max_diskio = 1000;
	b->diskio_avg = 1000;
	struct jb_queue *c = fx_add(f, "DEFAULT");
	c->diskio_avg = 5000; /* NAN limit: MAX_DISKIO_DEFAULT 1e10 */
	f->t.diskio = 1000;   /* not above the limit: never excluded */
	fx_run(f, 1);
	assert_alive(f, "BUSY");

	f->t.diskio = 1001;
	fx_run(f, 1);
	const struct dec_reason *r = assert_dropped(f, "BUSY", "PJ-12",
						    "diskIO");
	assert_near(r->v[0], 1001, 0);
	assert_near(r->v[1], 1001, 0);
	assert_near(r->v[2], 1000, 0);
	assert_alive(f, "AT_LIMIT");
	assert_alive(f, "DEFAULT");

	fx_param(f, "MAX_DISKIO_DEFAULT", 1000);
	fx_run(f, 1);
	r = assert_dropped(f, "DEFAULT", "PJ-12", "diskIO");
	assert_near(r->v[2], 1000, 0);
	free(f);
}

/* PJ-12 per core: a multicore task's diskIO is divided by a multicore
** queue's coreCount before it meets the limit (1000 kB/s/core here). */
static void test_pj12_disk_io_per_core(void **state)
{
	(void)state;
	static const struct {
		long tcores, qcores;
		double diskio;
		int dropped;
		double per_core;
	} cases[] = {
		{8, 8, 8000, 0, 1000},  /* 1000 per core: not above */
		{8, 8, 8008, 1, 1001},
		{4, 8, 8008, 1, 1001},  /* the queue's cores, not the task's */
		{8, 0, 1000, 0, 1000},  /* coreCount 0: as it is */
		{8, 0, 1001, 1, 1001},
		{1, 1, 1001, 1, 1001},  /* single core: as it is */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx *f = fx_new();
		f->t.core_count = cases[i].tcores;
		f->t.diskio = cases[i].diskio;
		struct jb_queue *q = fx_add(f, "BUSY");
		q->core_count = cases[i].qcores;
		q->max_diskio = 1000;
		q->diskio_avg = 1200;
		assert_near(jb_task_diskio(&f->t, q), cases[i].per_core, 1e-12);
		fx_run(f, 1);
		if (!cases[i].dropped) {
			assert_alive(f, "BUSY");
		} else {
			const struct dec_reason *r =
				assert_dropped(f, "BUSY", "PJ-12", "diskIO");
			assert_near(r->v[0], cases[i].per_core, 1e-12);
			assert_near(r->v[2], 1000, 0);
			assert_near(r->v[3], cases[i].diskio, 0);
		}
		free(f);
	}
}

/* ---- PJ-13 -------------------------------------------------------------- */

/* PJ-13 */
static void test_pj13_core_count_matching(void **state)
{
	(void)state;
	static const struct {
		long qcores, tcores, tmax;
		const char *code; /* NULL = passes */
	} cases[] = {
		{0, 1, 0, NULL},   {0, 8, 0, NULL},       {1, 1, 0, NULL},
		{8, 1, 0, "cpucore"}, {1, 8, 0, "cpucore"}, {8, 8, 0, NULL},
		{8, 4, 0, NULL},   {8, 4, 8, NULL},
		{8, 4, 7, "max_cpucore"},
		{0, 4, 2, NULL},   {2, 1, 1, "max_cpucore"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx *f = fx_new();
		fx_add(f, "Q")->core_count = cases[i].qcores;
		f->t.core_count = cases[i].tcores;
		f->t.max_core_count = cases[i].tmax;
		f->t.ram_count = 0;
		fx_run(f, 1);
		if (cases[i].code == NULL) {
			assert_alive(f, "Q");
		} else {
			const struct dec_reason *r =
				assert_dropped(f, "Q", "PJ-13", cases[i].code);
			assert_near(r->v[0], (double)cases[i].qcores, 0);
		}
		free(f);
	}
}

/* ---- PJ-14 -------------------------------------------------------------- */

/* PJ-14 */
static void test_pj14_release_list_and_any(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	static const char *const rels[] = {"21.0.37", "21.0.38"};
	static const char *const old[] = {"20.7.1"};
	struct jb_queue *a = fx_add(f, "LISTED");
	a->releases = JB_REL_LIST;
	a->release_list = rels;
	a->nrelease_list = 2;
	struct jb_queue *b = fx_add(f, "OLD");
	b->releases = JB_REL_LIST;
	b->release_list = old;
	b->nrelease_list = 1;
	fx_add(f, "ANY");
	fx_add(f, "AUTO_NOTHING")->releases = JB_REL_AUTO;

	/* No software asked: every queue passes. */
	fx_run(f, 1);
	assert_alive(f, "OLD");
	assert_alive(f, "AUTO_NOTHING");

	struct rc_need need;
	memset(&need, 0, sizeof(need));
	assert_int_equal(rc_parse_arch("x86_64-centos7-gcc8-opt", &need.arch),
			 GB_OK);
	need.sw_project = "Athena";
	need.sw_version = "21.0.38";
	f->t.sw = &need;
	fx_run(f, 1);
	assert_alive(f, "LISTED");
	assert_alive(f, "ANY");
	const struct dec_reason *r = assert_dropped(f, "OLD", "PJ-14", "cache");
	assert_reason_text(r, "release 21.0.38 not among the queue's 1 "
			      "releases");
	/* PJ-14 with AUTO and no dictionary: RC-01, nothing published. */
	assert_dropped(f, "AUTO_NOTHING", "RC-01", "no_sw");
	assert_stage(f, "software", 4, 2);
	free(f);
}

/* PJ-14 */
static void test_pj14_auto_queues_use_rc_check(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	static const char *const cvmfs[] = {"atlas"};
	static const char *const cmtconfigs[] = {"x86_64-centos7-gcc8-opt"};
	struct rc_sw good = {0};
	good.cvmfs = cvmfs;
	good.ncvmfs = 1;
	good.cmtconfigs = cmtconfigs;
	good.ncmtconfigs = 1;
	struct rc_sw bare = {0}; /* publishes no cvmfs, no tags */
	struct jb_queue *a = fx_add(f, "AUTO_OK");
	a->releases = JB_REL_AUTO;
	a->sw = &good;
	struct jb_queue *b = fx_add(f, "AUTO_BARE");
	b->releases = JB_REL_AUTO;
	b->sw = &bare;

	struct rc_need need;
	memset(&need, 0, sizeof(need));
	assert_int_equal(rc_parse_arch("x86_64-centos7-gcc8-opt", &need.arch),
			 GB_OK);
	need.sw_project = "Athena";
	need.sw_version = "21.0.38";
	f->t.sw = &need;
	fx_run(f, 1);
	assert_alive(f, "AUTO_OK");
	/* PJ-14: the RC-* rule that failed is reported, at stage software,
	** with its code and numbers: no tag for 21.0.38 among the 0 tags,
	** and none of the 0 cvmfs entries is atlas (RC-06 failed, RC-07 the
	** fallback). */
	const struct dec_reason *r =
		assert_dropped(f, "AUTO_BARE", "RC-07", "release");
	assert_string_equal(cand(f, "AUTO_BARE")->stage, "software");
	assert_string_equal(r->str, "21.0.38");
	assert_near(r->v[0], 0, 0);
	assert_near(r->v[1], 0, 0);
	assert_reason_text(r, "release 21.0.38 of the task's project and "
			      "platform is not among the queue's 0 tags, and "
			      "cvmfs lacks the task's repository (0 entries)");
	/* The other side: one cvmfs entry that is not atlas, one tag of
	** another release. */
	static const char *const nightlies[] = {"nightlies"};
	static const struct rc_tag old_tag[] = {
		{"x86_64-centos7-gcc8-opt", "", "Athena", "21.0.37", NULL, 0},
	};
	bare.cvmfs = nightlies;
	bare.ncvmfs = 1;
	bare.tags = old_tag;
	bare.ntags = 1;
	fx_run(f, 1);
	r = assert_dropped(f, "AUTO_BARE", "RC-07", "release");
	assert_near(r->v[0], 1, 0);
	assert_near(r->v[1], 1, 0);
	/* ... and with the tag of 21.0.38 RC-07 takes it. */
	static const struct rc_tag new_tag[] = {
		{"x86_64-centos7-gcc8-opt", "", "Athena", "21.0.38", NULL, 0},
	};
	bare.tags = new_tag;
	fx_run(f, 1);
	assert_alive(f, "AUTO_BARE");
	assert_stage(f, "software", 2, 2);
	free(f);
}

/* PJ-14 with releases=ANY: no software check, but ANY publishes no
** architectures, so a task with a cpu ('#') or gpu ('&') spec cannot be
** checked there and is refused with the two flags as the numbers. */
static void test_pj14_any_needs_no_hardware_spec(void **state)
{
	(void)state;
	static const struct {
		const char *arch;
		const char *code; /* NULL: ANY keeps the queue */
		double cpu, gpu;
	} cases[] = {
		{"x86_64-centos7-gcc8-opt", NULL, 0, 0},
		{"x86_64-centos7-gcc8-opt@centos7", NULL, 0, 0},
		{"x86_64-centos7-gcc8-opt#x86_64", "hw_unchecked", 1, 0},
		{"x86_64-centos7-gcc8-opt#", "hw_unchecked", 1, 0},
		{"x86_64-centos7-gcc8-opt&nvidia", "hw_unchecked", 0, 1},
		{"x86_64-centos7-gcc8-opt#x86_64&nvidia", "hw_unchecked", 1, 1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx *f = fx_new();
		fx_add(f, "ANY");
		struct rc_need need;
		memset(&need, 0, sizeof(need));
		assert_int_equal(rc_parse_arch(cases[i].arch, &need.arch),
				 GB_OK);
		need.sw_project = "Athena";
		need.sw_version = "21.0.38";
		f->t.sw = &need;
		fx_run(f, 1);
		if (cases[i].code == NULL) {
			assert_alive(f, "ANY");
		} else {
			const struct dec_reason *r = assert_dropped(
				f, "ANY", "PJ-14", cases[i].code);
			assert_near(r->v[0], cases[i].cpu, 0);
			assert_near(r->v[1], cases[i].gpu, 0);
		}
		free(f);
	}
}

/* ---- PJ-15 / PJ-16 / PJ-17 ---------------------------------------------- */

/* PJ-15 */
static void test_pj15_memory_range(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	f->t.core_count = 4;
	f->t.base_ram = 1000;
	f->t.ram_count = 2000;
	/* (1000 + 2000 x 4) x 0.9 = 8100 MB */
	assert_near(jb_memory_mb(&f->t, 4), 8100, 1e-12);
	assert_near(jb_memory_mb(&f->t, 1), 2700, 1e-12);
	struct jb_queue *a = fx_add(f, "MAX2000");
	a->core_count = 4;
	a->max_rss_per_core = 2000; /* 8000 < 8100 */
	struct jb_queue *b = fx_add(f, "MAX2100");
	b->core_count = 4;
	b->max_rss_per_core = 2100; /* 8400 */
	struct jb_queue *c = fx_add(f, "MIN2100");
	c->core_count = 4;
	c->min_rss_per_core = 2100; /* 8400 > 8100 */
	struct jb_queue *d = fx_add(f, "MIN2025");
	d->core_count = 4;
	d->min_rss_per_core = 2025; /* 8100, not above */
	struct jb_queue *e = fx_add(f, "UNIFIED");
	e->max_rss_per_core = 2000; /* 0 cores: the task's 4 are used */
	fx_run(f, 1);
	const struct dec_reason *r =
		assert_dropped(f, "MAX2000", "PJ-15", "highmemory");
	assert_near(r->v[0], 8100, 1e-12);
	assert_near(r->v[1], 8000, 1e-12);
	assert_near(r->v[2], 4, 0);
	assert_reason_text(r, "memory 8100 MB > maxrss 8000 MB (4 cores)");
	assert_alive(f, "MAX2100");
	r = assert_dropped(f, "MIN2100", "PJ-15", "lowmemory");
	assert_near(r->v[1], 8400, 1e-12);
	assert_alive(f, "MIN2025");
	assert_dropped(f, "UNIFIED", "PJ-15", "highmemory");
	assert_stage(f, "memory", 5, 2);
	free(f);
}

/* PJ-16 */
static void test_pj16_direct_access_only(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	fx_add(f, "DIRECT")->direct_access = 1;
	fx_add(f, "COPY");
	fx_run(f, 1);
	assert_alive(f, "COPY");
	f->t.direct_access_only = 1;
	fx_run(f, 1);
	assert_alive(f, "DIRECT");
	assert_dropped(f, "COPY", "PJ-16", "remoteio");
	free(f);
}

/* PJ-17: the unit of outDiskCount. PanDA reads kB, MB and GB per event
** (1 MB = 1024 kB); the output is max(0.5 GB, outDiskCount x nEvents). */
static void test_pj17_disk_formula(void **state)
{
	(void)state;
	static const struct {
		enum jb_out_unit unit;
		double count;
		long nevents;
		double input_mb;
		int direct;
		double want; /* MB, with workDiskCount 1000 */
	} cases[] = {
		/* kB per event: 512 kB x 1000 / 1024 = 500 MB, the floor */
		{JB_OUT_KB_PER_EVENT, 500, 1000, 100, 0, 100 + 500 + 1000},
		{JB_OUT_KB_PER_EVENT, 512, 1000, 100, 0, 100 + 500 + 1000},
		{JB_OUT_KB_PER_EVENT, 513, 1000, 100, 0,
		 100 + 513000.0 / 1024 + 1000},
		{JB_OUT_KB_PER_EVENT, 500, 4000, 100, 0, 100 + 1953.125 + 1000},
		{JB_OUT_KB_PER_EVENT, 500, 1000, 100, 1, 500 + 1000},
		/* MB per event: 2 MB x 1000 = 2000 MB (read as kB: 2 MB) */
		{JB_OUT_MB_PER_EVENT, 2, 1000, 100, 0, 100 + 2000 + 1000},
		{JB_OUT_MB_PER_EVENT, 0.5, 1000, 100, 0, 100 + 500 + 1000},
		{JB_OUT_MB_PER_EVENT, 0.501, 1000, 100, 0, 100 + 501 + 1000},
		/* GB per event: 0.002 GB x 1000 = 2048 MB */
		{JB_OUT_GB_PER_EVENT, 0.002, 1000, 100, 0, 100 + 2048 + 1000},
		/* not per event: a ratio of the input (10 x 100 MB) */
		{JB_OUT_RATIO, 10, 1000, 100, 0, 100 + 1000 + 1000},
		{JB_OUT_RATIO, 4, 1000, 100, 0, 100 + 500 + 1000},
	};
	struct jb_task t = {0};
	t.work_disk_count = 1000;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		t.out_disk_unit = cases[i].unit;
		t.out_disk_count = cases[i].count;
		double got = jb_disk_mb(&t, cases[i].nevents, cases[i].input_mb,
					cases[i].direct);
		if (fabs(got - cases[i].want) > 1e-9)
			fail_msg("PJ-17 case %zu: %.9g MB, expected %.9g", i,
				 got, cases[i].want);
	}
}

/* PJ-17: outDiskCountUnit words, by their first two letters. */
static void test_pj17_out_unit_words(void **state)
{
	(void)state;
	static const struct {
		const char *word;
		enum jb_out_unit unit;
		const char *name;
	} cases[] = {
		{"kBPerEvent", JB_OUT_KB_PER_EVENT, "kBPerEvent"},
		{"MBPerEvent", JB_OUT_MB_PER_EVENT, "MBPerEvent"},
		{"GBPerEvent", JB_OUT_GB_PER_EVENT, "GBPerEvent"},
		{"PerEvent", JB_OUT_KB_PER_EVENT, "kBPerEvent"},
		{"TBPerEvent", JB_OUT_KB_PER_EVENT, "kBPerEvent"}, /* not GB/MB */
		{"GbPerEvent", JB_OUT_KB_PER_EVENT, "kBPerEvent"}, /* case */
		{"kB", JB_OUT_RATIO, "kB"},
		{"MB", JB_OUT_RATIO, "kB"},
		{"", JB_OUT_RATIO, "kB"},
		{NULL, JB_OUT_RATIO, "kB"},
		{"MBPerEventX", JB_OUT_RATIO, "kB"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum jb_out_unit u = jb_out_unit_parse(cases[i].word);
		if (u != cases[i].unit)
			fail_msg("PJ-17 unit '%s': %d, expected %d",
				 cases[i].word ? cases[i].word : "(null)",
				 (int)u, (int)cases[i].unit);
		assert_string_equal(jb_out_unit_name(u), cases[i].name);
		assert_int_equal(jb_out_unit_parse(jb_out_unit_name(u)), u);
	}
}

static void fx_disk_task(struct fx *f)
{
	f->t.out_disk_count = 500; /* kB per event */
	f->t.out_disk_unit = JB_OUT_KB_PER_EVENT;
	f->t.work_disk_count = 1000;
	/* PJ-17 uses the smallest job (1000 events, 100 MB), not the first:
	** 100 + max(500, 488.3) + 1000 = 1600 MB. */
	f->jobs[0] = (struct jb_job){1, 4000, 400, 4};
	f->jobs[1] = (struct jb_job){2, 1000, 100, 1};
	f->t.njobs = 2;
}

/* PJ-17: the job's 1600 MB against maxwdir x task cores / queue cores. */
static void test_pj17_disk_against_maxwdir(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	fx_disk_task(f);
	fx_add(f, "EXACT")->maxwdir = 1600; /* 1600 >= 1600 drops */
	fx_add(f, "ROOM")->maxwdir = 1601;
	struct jb_queue *c = fx_add(f, "DIRECT");
	c->maxwdir = 1600;
	c->direct_access = 1; /* input read in place: 1500 */
	fx_add(f, "UNKNOWN"); /* maxwdir 0: no check */
	fx_run(f, 1);
	const struct dec_reason *r = assert_dropped(f, "EXACT", "PJ-17",
						    "disk");
	assert_near(r->v[0], 1600, 1e-12);
	assert_near(r->v[1], 1600, 0);
	assert_near(r->v[2], 1600, 0);
	assert_near(r->v[3], 1, 0);
	assert_reason_text(r, "disk 1600 MB >= 1600 MB: maxwdir 1600 MB x "
			      "task/queue cores 1");
	assert_alive(f, "ROOM");
	assert_alive(f, "DIRECT");
	assert_alive(f, "UNKNOWN");
	assert_stage(f, "disk", 4, 3);
	free(f);

	/* Multicore: maxwdir x task cores / queue cores. An 8-core task at
	** an 8-core queue has all of it (the seed's maxwdir / 8 gave it an
	** eighth), a 4-core task half, and at a coreCount 0 queue all. */
	static const struct {
		long tcores, qcores;
		double maxwdir;
		int dropped;
		double limit;
	} cases[] = {
		{8, 8, 1600, 1, 1600},
		{8, 8, 1601, 0, 1601},
		{4, 8, 3200, 1, 1600},
		{4, 8, 3202, 0, 1601},
		{8, 0, 1600, 1, 1600},
		{8, 0, 1601, 0, 1601},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		f = fx_new();
		fx_disk_task(f);
		f->t.core_count = cases[i].tcores;
		struct jb_queue *q = fx_add(f, "MCORE");
		q->core_count = cases[i].qcores;
		q->maxwdir = cases[i].maxwdir;
		fx_run(f, 1);
		if (!cases[i].dropped) {
			assert_alive(f, "MCORE");
		} else {
			r = assert_dropped(f, "MCORE", "PJ-17", "disk");
			assert_near(r->v[0], 1600, 1e-9);
			assert_near(r->v[1], cases[i].limit, 1e-9);
			assert_near(r->v[2], cases[i].maxwdir, 0);
		}
		free(f);
	}
}

/* ---- PJ-18 / PJ-19 ------------------------------------------------------ */

/* PJ-18 / PJ-19 */
static void test_pj18_pj19_storage(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	fx_add(f, "FULL")->storage_free = 200; /* must be > 200 GB */
	fx_add(f, "ROOM")->storage_free = 200.5;
	fx_add(f, "BLACK")->storage_blacklisted = 1;
	fx_run(f, 1);
	const struct dec_reason *r = assert_dropped(f, "FULL", "PJ-18",
						    "space");
	assert_reason_text(r, "DATADISK: 200 GB free <= STORAGE_MIN_FREE_SIZE "
			      "200 GB");
	assert_alive(f, "ROOM");
	/* PJ-19 */
	assert_reason_text(assert_dropped(f, "BLACK", "PJ-19", "blacklist"),
			   "storage DATADISK is blacklisted");

	fx_param(f, "STORAGE_MIN_FREE_SIZE", 100);
	fx_run(f, 1);
	assert_alive(f, "FULL");
	free(f);
}

/* ---- PJ-20 / PJ-21 ------------------------------------------------------ */

/* PJ-20 */
static void test_pj20_scout_walltime(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	f->t.cpu_time = 0;
	f->t.base_time = 60;
	fx_add(f, "SHORT")->maxtime = 86399;
	fx_add(f, "DAY")->maxtime = 86400;
	fx_add(f, "UNLIMITED");
	fx_run(f, 1);
	assert_alive(f, "SHORT");

	static const int flags[][2] = {{1, 0}, {0, 1}}; /* scout, merge */
	for (size_t i = 0; i < 2; i++) {
		f->t.scout = flags[i][0];
		f->t.merge = flags[i][1];
		/* Scouts are kept at the nucleus (PJ-08): put all there. */
		for (size_t k = 0; k < f->n; k++)
			f->q[k].nucleus = "NUC";
		fx_run(f, 1);
		const struct dec_reason *r =
			assert_dropped(f, "SHORT", "PJ-20", "scout_walltime");
		assert_near(r->v[0], 86399, 0);
		assert_near(r->v[1], 86400, 0);
		assert_alive(f, "DAY");
		assert_alive(f, "UNLIMITED");
	}
	free(f);
}

/* PJ-21 */
static void test_pj21_walltime_range(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	/* 300 x 1000 / (1 x 10 x 0.9) + 600 = 33933.3 s */
	double wall = 300.0 * 1000 / (1 * 10 * 0.9) + 600;
	assert_near(jb_walltime_s(&f->t, 1000, 1, 10), wall, 1e-12);
	/* 4 cores of power 10: 8933.3 s */
	assert_near(jb_walltime_s(&f->t, 1000, 4, 10),
		    300.0 * 1000 / (4 * 10 * 0.9) + 600, 1e-12);
	fx_add(f, "TOO_SHORT_MAX")->maxtime = 33933;
	fx_add(f, "FITS_MAX")->maxtime = 33934;
	fx_add(f, "MIN_ABOVE")->mintime = 33934;
	fx_add(f, "MIN_BELOW")->mintime = 33933;
	struct jb_queue *e = fx_add(f, "FAST_CPU");
	e->corepower = 20; /* halves the cpu part: 17266.7 s */
	e->maxtime = 20000;
	fx_run(f, 1);
	const struct dec_reason *r =
		assert_dropped(f, "TOO_SHORT_MAX", "PJ-21", "longwalltime");
	assert_near(r->v[0], wall, 1e-12);
	assert_near(r->v[1], 33933, 0);
	assert_near(r->v[2], 1000, 0);
	assert_near(r->v[3], 1, 0);
	assert_alive(f, "FITS_MAX");
	r = assert_dropped(f, "MIN_ABOVE", "PJ-21", "shortwalltime");
	assert_near(r->v[1], 33934, 0);
	assert_alive(f, "MIN_BELOW");
	assert_alive(f, "FAST_CPU");
	free(f);
}

/* ---- PJ-22 -------------------------------------------------------------- */

/* PJ-22 */
static void test_pj22_ip_connectivity_table(void **state)
{
	(void)state;
	static const char *const qconn[] = {"", "full", "http", "none"};
	static const char *const tconn[] = {"", "full", "http", "none"};
	/* accept[queue][task], the table of jobbroker.c's header. */
	static const int accept[4][4] = {
		{1, 0, 0, 0}, /* queue unset: only tasks asking nothing */
		{1, 1, 1, 1}, /* full */
		{1, 0, 1, 1}, /* http: http or none */
		{1, 0, 0, 1}, /* none: none */
	};
	static const char *const qstack[] = {"", "#IPv4", "#IPv6"};
	static const char *const tstack[] = {"", "#IPv4", "#IPv6"};
	static const int saccept[3][3] = {
		{1, 0, 0}, /* unset accepts tasks without a stack */
		{1, 1, 0},
		{1, 0, 1},
	};
	char qbuf[32], tbuf[32];
	for (int qc = 0; qc < 4; qc++)
		for (int tc = 0; tc < 4; tc++)
			for (int qs = 0; qs < 3; qs++)
				for (int ts = 0; ts < 3; ts++) {
					snprintf(qbuf, sizeof(qbuf), "%s%s",
						 qconn[qc], qstack[qs]);
					snprintf(tbuf, sizeof(tbuf), "%s%s",
						 tconn[tc], tstack[ts]);
					int want = accept[qc][tc] &&
						   saccept[qs][ts];
					int got = jb_ip_accepts(qbuf, tbuf);
					if (got != want)
						fail_msg("PJ-22 queue '%s' "
							 "task '%s': %d",
							 qbuf, tbuf, got);
				}
	/* Words compare case-insensitively; NULL is unset. */
	assert_true(jb_ip_accepts("Full#ipv6", "http#IPv6"));
	assert_true(jb_ip_accepts(NULL, NULL));
	assert_true(jb_ip_accepts("http", NULL));
	assert_false(jb_ip_accepts(NULL, "none"));
}

/* PJ-22 */
static void test_pj22_ip_connectivity_drops(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	fx_add(f, "FULL4")->wnconnectivity = "full#IPv4";
	fx_add(f, "HTTP6")->wnconnectivity = "http#IPv6";
	fx_add(f, "UNSET");
	f->t.ip_connectivity = "http#IPv6";
	fx_run(f, 1);
	assert_alive(f, "HTTP6");
	assert_reason_text(assert_dropped(f, "FULL4", "PJ-22", "network"),
			   "wnconnectivity 'full#IPv4' does not accept the "
			   "task's ipConnectivity");
	assert_dropped(f, "UNSET", "PJ-22", "network");
	assert_stage(f, "ip connectivity", 3, 1);
	free(f);
}

/* ---- PJ-23 / PJ-24 / PJ-25 / PJ-26 -------------------------------------- */

/* PJ-23 */
static void test_pj23_event_service(void **state)
{
	(void)state;
	static const struct {
		enum jb_es qes;
		int qdyn, tes, tdyn;
		const char *code;
	} cases[] = {
		{JB_ES_NONE, 0, 0, 0, NULL},
		{JB_ES_NONE, 0, 1, 0, "es"},
		{JB_ES_ALLOWED, 0, 1, 0, NULL},
		{JB_ES_ALLOWED, 0, 0, 0, NULL},
		{JB_ES_ONLY, 0, 1, 0, NULL},
		{JB_ES_ONLY, 0, 0, 0, "nones"},
		{JB_ES_NONE, 0, 0, 1, "dynamic_nevents"},
		{JB_ES_NONE, 1, 0, 1, NULL},
		{JB_ES_NONE, 1, 0, 0, NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx *f = fx_new();
		struct jb_queue *q = fx_add(f, "Q");
		q->es = cases[i].qes;
		q->dynamic_nevents = cases[i].qdyn;
		f->t.use_es = cases[i].tes;
		f->t.dynamic_nevents = cases[i].tdyn;
		fx_run(f, 1);
		if (cases[i].code)
			assert_dropped(f, "Q", "PJ-23", cases[i].code);
		else
			assert_alive(f, "Q");
		free(f);
	}
}

/* PJ-24 */
static void test_pj24_transferring(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	fx_add(f, "AT_LIMIT")->counts.transferring = 2000;
	fx_add(f, "OVER")->counts.transferring = 2001;
	struct jb_queue *c = fx_add(f, "BIG");
	c->counts.running = 1500; /* max(2000, 3000) */
	c->counts.transferring = 2001;
	struct jb_queue *d = fx_add(f, "OWN_LIMIT");
	d->transferring_limit = 100;
	d->counts.running = 10;
	d->counts.transferring = 101;
	fx_run(f, 1);
	assert_alive(f, "AT_LIMIT");
	assert_alive(f, "BIG");
	const struct dec_reason *r = assert_dropped(f, "OVER", "PJ-24",
						    "transferring");
	assert_near(r->v[0], 2001, 0);
	assert_near(r->v[1], 2000, 0);
	assert_near(r->v[2], 100, 0);
	r = assert_dropped(f, "OWN_LIMIT", "PJ-24", "transferring");
	assert_near(r->v[1], 100, 0);
	free(f);
}

/* PJ-25 */
static void test_pj25_t1weight_minus_one(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	fx_add(f, "SAT");
	fx_add(f, "AT_NUC")->nucleus = "NUC";
	f->t.t1_weight = -1;
	fx_run(f, 1);
	assert_alive(f, "AT_NUC");
	const struct dec_reason *r = assert_dropped(f, "SAT", "PJ-25",
						    "t1weight");
	assert_near(r->v[0], -1, 0);
	/* Merge jobs are not "normal jobs": the rule does not apply. */
	f->t.merge = 1;
	fx_run(f, 1);
	assert_alive(f, "SAT");
	f->t.merge = 0;
	f->t.t1_weight = 0;
	fx_run(f, 1);
	assert_alive(f, "SAT");
	free(f);
}

/* PJ-25: t1Weight < 0, as PanDA tests it, not only -1; 0 is the edge. */
static void test_pj25_t1weight_negative(void **state)
{
	(void)state;
	static const struct {
		double t1;
		int dropped;
	} cases[] = {
		{-2, 1}, {-1, 1}, {-0.5, 1}, {-1e-9, 1}, {0, 0}, {1e-9, 0},
		{100, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx *f = fx_new();
		fx_add(f, "SAT");
		fx_add(f, "AT_NUC")->nucleus = "NUC";
		f->t.t1_weight = cases[i].t1;
		fx_run(f, 1);
		assert_alive(f, "AT_NUC");
		if (!cases[i].dropped) {
			assert_alive(f, "SAT");
		} else {
			const struct dec_reason *r =
				assert_dropped(f, "SAT", "PJ-25", "t1weight");
			assert_near(r->v[0], cases[i].t1, 0);
			assert_near(r->v[1], 0, 0);
		}
		free(f);
	}
}

/* PJ-26 */
static void test_pj26_no_pilot(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	fx_add(f, "RECENT")->last_pilot = NOW - 10800;
	fx_add(f, "OLD")->last_pilot = NOW - 10801;
	fx_add(f, "NEVER")->last_pilot = 0;
	fx_run(f, 1);
	assert_alive(f, "RECENT");
	const struct dec_reason *r = assert_dropped(f, "OLD", "PJ-26",
						    "nopilot");
	assert_near(r->v[0], 10801, 0);
	assert_near(r->v[1], 10800, 0);
	assert_reason_text(assert_dropped(f, "NEVER", "PJ-26", "nopilot"),
			   "no pilot ever");
	assert_stage(f, "pilot", 3, 1);
	free(f);
}

/* PJ-26: a queue with numSlots set (0 included, -1 is unset) is not
** checked for pilots, as in PanDA; on both sides of the 3 hours. */
static void test_pj26_num_slots_exempt(void **state)
{
	(void)state;
	static const struct {
		long slots;
		long long age; /* s since the last pilot, -1 never */
		int dropped;
	} cases[] = {
		{-1, 10800, 0}, {-1, 10801, 1}, {-1, -1, 1},
		{0, 10801, 0},  {0, -1, 0},     {800, 10801, 0},
		{800, -1, 0},   {1, 10800, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx *f = fx_new();
		struct jb_queue *q = fx_add(f, "Q");
		q->num_slots = cases[i].slots;
		q->last_pilot = cases[i].age < 0 ? 0 : NOW - cases[i].age;
		fx_run(f, 1);
		if (!cases[i].dropped) {
			assert_alive(f, "Q");
		} else {
			const struct dec_reason *r =
				assert_dropped(f, "Q", "PJ-26", "nopilot");
			assert_near(r->v[0], cases[i].age < 0 ? 0 : 10801, 0);
			assert_near(r->v[1], 10800, 0);
		}
		free(f);
	}
}

/* ---- PJ-27 -------------------------------------------------------------- */

/* PJ-27 */
static void test_pj27_express_network_threshold(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	/* queuedWeight 2 (nothing queued); throughput from closeness:
	** 11 -> 1, weight 0.5 x 2 + 0.5 x 1 = 1.5 < 1.7; 0 -> 2, 2.0. */
	fx_add(f, "FAR");
	f->link[0].closeness = 11;
	fx_add(f, "CLOSE");
	f->link[1].closeness = 0;
	fx_add(f, "AT_NUC")->nucleus = "NUC"; /* NW-04: 2.5 */
	f->t.processing_type = "urgent";
	fx_run(f, 1);
	assert_alive(f, "FAR"); /* NW_ACTIVE off: no express filter */

	fx_param(f, "NW_ACTIVE", 1);
	fx_run(f, 1);
	const struct dec_reason *r =
		assert_dropped(f, "FAR", "PJ-27", "lowNetworkWeight");
	assert_near(r->v[0], 1.5, 1e-12);
	assert_near(r->v[1], 1.7, 1e-12);
	assert_alive(f, "CLOSE");
	assert_alive(f, "AT_NUC");

	/* Not express: no threshold. */
	f->t.processing_type = "simul";
	fx_run(f, 1);
	assert_alive(f, "FAR");

	/* Priority 1000 is express (the seed's >=); 999 is not. Such tasks
	** are also high priority (PJ-08), so only nucleus queues are left:
	** check the threshold with a raised multiplier instead. */
	fx_param(f, "NW_WEIGHT_MULTIPLIER", 2); /* 3.4 > 2.5 */
	f->t.priority = 999;
	fx_run(f, 1);
	assert_alive(f, "AT_NUC");
	f->t.priority = 1000;
	fx_run(f, 1);
	r = assert_dropped(f, "AT_NUC", "PJ-27", "lowNetworkWeight");
	assert_near(r->v[0], 2.5, 1e-12);
	assert_near(r->v[1], 3.4, 1e-12);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pj01_test_queues_and_preassigned),
		cmocka_unit_test(test_pj01_test_anywhere_after_other_ts),
		cmocka_unit_test(test_pj02_merge_preassignment_given_up),
		cmocka_unit_test(test_pj03_fc06_nucleus_only_scope),
		cmocka_unit_test(test_pj04_status_online_unless_preassigned),
		cmocka_unit_test(test_pj05_blocked_link),
		cmocka_unit_test(test_pj06_files_queued_on_link),
		cmocka_unit_test(test_pj07_nucleus_flooded_skips_satellites),
		cmocka_unit_test(test_pj08_high_priority_or_scout_at_nucleus),
		cmocka_unit_test(test_pj09_inactive_queues),
		cmocka_unit_test(test_pj10_zero_share_table),
		cmocka_unit_test(test_pj10_zero_share_drops_queue),
		cmocka_unit_test(test_pj11_io_intensive_input_move),
		cmocka_unit_test(test_pj12_disk_io_limit),
		cmocka_unit_test(test_pj12_disk_io_per_core),
		cmocka_unit_test(test_pj13_core_count_matching),
		cmocka_unit_test(test_pj14_release_list_and_any),
		cmocka_unit_test(test_pj14_auto_queues_use_rc_check),
		cmocka_unit_test(test_pj14_any_needs_no_hardware_spec),
		cmocka_unit_test(test_pj15_memory_range),
		cmocka_unit_test(test_pj16_direct_access_only),
		cmocka_unit_test(test_pj17_disk_formula),
		cmocka_unit_test(test_pj17_out_unit_words),
		cmocka_unit_test(test_pj17_disk_against_maxwdir),
		cmocka_unit_test(test_pj18_pj19_storage),
		cmocka_unit_test(test_pj20_scout_walltime),
		cmocka_unit_test(test_pj21_walltime_range),
		cmocka_unit_test(test_pj22_ip_connectivity_table),
		cmocka_unit_test(test_pj22_ip_connectivity_drops),
		cmocka_unit_test(test_pj23_event_service),
		cmocka_unit_test(test_pj24_transferring),
		cmocka_unit_test(test_pj25_t1weight_minus_one),
		cmocka_unit_test(test_pj25_t1weight_negative),
		cmocka_unit_test(test_pj26_no_pilot),
		cmocka_unit_test(test_pj26_num_slots_exempt),
		cmocka_unit_test(test_pj27_express_network_threshold),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
