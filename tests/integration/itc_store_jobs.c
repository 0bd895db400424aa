/*
** itc_store_jobs.c — the job brokerage's MariaDB store against a real
** server: the job grid saved and loaded back field by field, the grid's
** refusals, a grid of the sample's size (timed), the task context, the
** decision record (jobs, queue counts, requests, the life-cycle columns of
** 0005 with check_at and throttled jobs), the pending scan with two
** connections (SKIP LOCKED), and st_jobs_done.
**
** Reads the configuration named by $GB_CONFIG (run-itc.sh points it at the
** servers of scripts/services). st_jobs_grid_save replaces the WHOLE job
** grid, so this test leaves the queues, links, sw_all and file_replicas
** tables empty: a test or a developer that needs a job grid loads it
** itself (`gridbroker grid load`). Every other row this test writes has a
** name starting with "itc_" or an id from ITC_BASE, and is deleted before
** and after the run. Times are small fake values around T0, so a pending
** scan at a fake "now" sees only this test's requests.
**
** Inspection and cleanup go through a second, raw Connector/C connection
** with prepared statements, so the assertions do not depend on the code
** under test.
*/
#include "../unit/gbtest.h"

#include <limits.h>
#include <stdlib.h>
#include <time.h>

#include <mysql.h>

#include "base/arena.h"
#include "base/config.h"
#include "gb_error.h"
#include "model/gridmodel.h"
#include "jobbroker.h"
#include "store/store.h"
#include "store/store_internal.h"      /* the statement cache's lengths */
#include "store/store_jobs.h"
#include "store/store_jobs_internal.h" /* the queue INSERT's slot */

#include "itc_raw.h"

#define ITC_BASE 9100000000000LL /* job and task ids of this test */
#define T0 1000LL		 /* fake unix time of the test's rows */
#define ARENA_CAP (256u << 20)
#define NUC "itc_NUC"
#define SHARE "itc_share"
#define OTHER "itc_other"

/* 80 four-byte characters: longer in bytes than the store's fixed result
** buffer, so the long-value path of every text column is exercised. */
#define WIDE_CHAR "\xF0\x9F\x98\x80"
#define WIDE8                                                                  \
	WIDE_CHAR WIDE_CHAR WIDE_CHAR WIDE_CHAR WIDE_CHAR WIDE_CHAR WIDE_CHAR  \
		WIDE_CHAR
#define WIDE80 WIDE8 WIDE8 WIDE8 WIDE8 WIDE8 WIDE8 WIDE8 WIDE8 WIDE8 WIDE8
#define Q_WIDE "itc_" WIDE80
#define LFN_WIDE "itc_" WIDE80 ".root"

/* What an AGLT2-like queue publishes (RC-01), and the ALL dictionary. */
static const char SW_AUTO[] =
	"{\"cmtconfigs\":[\"x86_64-centos7-gcc8-opt\"],"
	"\"containers\":[\"atlas/athena:21.0.38\"],"
	"\"cvmfs\":[\"atlas\",\"nightlies\"],"
	"\"architectures\":[{\"type\":\"cpu\",\"arch\":[\"x86_64\"],"
	"\"vendor\":[\"intel\",\"excl\"],\"instr\":[\"avx2\"]},"
	"{\"type\":\"gpu\",\"vendor\":[\"nvidia\"],\"model\":[\"kt100\"]}],"
	"\"tags\":[{\"cmtconfig\":\"x86_64-centos7-gcc8-opt\","
	"\"container_name\":\"\",\"project\":\"Athena\","
	"\"release\":\"21.0.38\",\"sources\":[],"
	"\"tag\":\"VO-atlas-Athena-21.0.38\"}]}";
static const char SW_ALL[] =
	"{\"tags\":[{\"cmtconfig\":\"\","
	"\"container_name\":\"atlas/athena:21.0.38\",\"project\":\"\","
	"\"release\":\"\",\"sources\":[\"/cvmfs/unpacked/athena-21.0.38\"],"
	"\"tag\":\"\"}]}";



static void cleanup(void)
{
	/* LEFT(), not LIKE 'itc\_%': MariaDB 10.11 turns that LIKE into an
	** index range that misses names with 4-byte characters after the
	** prefix on utf8mb4_nopad_bin columns, so the wide names stayed. */
	static const char *by_name[] = {
		"DELETE FROM queues WHERE LEFT(name, 4) = ?",
		"DELETE FROM queue_counts WHERE LEFT(queue, 4) = ?",
		"DELETE FROM links WHERE LEFT(site, 4) = ?",
		"DELETE FROM file_replicas WHERE LEFT(lfn, 4) = ?",
		"DELETE FROM decisions WHERE LEFT(request_id, 4) = ?",
		"DELETE FROM job_requests WHERE LEFT(request_id, 4) = ?",
		"DELETE FROM nuclei WHERE LEFT(name, 4) = ?",
	};
	for (size_t i = 0; i < sizeof(by_name) / sizeof(by_name[0]); i++)
		raw_q(NULL, 0, by_name[i], "s", "itc_");
	raw_q(NULL, 0, "DELETE FROM sw_all WHERE sw_json = ?", "s", SW_ALL);
	raw_q(NULL, 0, "DELETE FROM jobs WHERE job_id BETWEEN ? AND ?", "ll",
	      ITC_BASE, ITC_BASE + 99999);
	raw_q(NULL, 0, "DELETE FROM tasks WHERE task_id BETWEEN ? AND ?", "ll",
	      ITC_BASE, ITC_BASE + 999);
}

ITC_GROUP_FIXTURE("itc_store_jobs", cleanup)

/* ---- the small grid ------------------------------------------------------ */

#define NMANY 300 /* lfns beyond two IN chunks */

static char many[NMANY][32];
static const char *const st_a[] = {"itc_DISK_A"};
static const char *const st_ab[] = {"itc_DISK_A", "itc_DISK_B"};
static const char *const st_b[] = {"itc_DISK_B"};
static const char *const st_ac[] = {"itc_DISK_A", "itc_DISK_C"};
static const char *const st_bc[] = {"itc_DISK_B", "itc_DISK_C"};
static const char *const rel_list[] = {"21.0.38", "22.0.1"};
static char long_policy[400];

static struct gm_queue qs[4];
static struct gm_counts cnt_list[2], cnt_auto[1];
static struct gm_link links[4];
static struct gm_file files[4 + NMANY];

static struct jb_queue queue_base(const char *name, const char *site,
				  const char *storage)
{
	struct jb_queue q;
	memset(&q, 0, sizeof(q));
	q.name = name;
	q.status = "online";
	q.site = site;
	q.nucleus = "";
	q.corepower = 10;
	q.wnconnectivity = "";
	q.fairsharepolicy = "";
	q.max_diskio = NAN;
	q.num_slots = -1;
	q.storage = storage;
	q.storage_free = 100;
	return q;
}

static void build_grid(struct gm_grid *g)
{
	memset(long_policy, 'p', sizeof(long_policy) - 1);
	memcpy(long_policy, "type=", 5);
	memset(qs, 0, sizeof(qs)); /* a refusal case may have changed any */
	struct jb_queue *q = &qs[0].q;
	*q = queue_base("itc_Q_LIST", "itc_SITE_A", "itc_DISK_A");
	q->nucleus = NUC;
	q->core_count = 8;
	q->corepower = 11.5;
	q->min_rss_per_core = 0.5;
	q->max_rss_per_core = 2000;
	q->maxwdir = 20000;
	q->mintime = 60;
	q->maxtime = 172800;
	q->releases = JB_REL_LIST;
	q->release_list = rel_list;
	q->nrelease_list = 2;
	q->direct_access = 1;
	q->wnconnectivity = "full#IPv4";
	q->max_diskio = 500;
	q->diskio_avg = 12.5;
	q->fairsharepolicy = "type=evgensimul:100%";
	q->es = JB_ES_ALLOWED;
	q->dynamic_nevents = 1;
	q->transferring_limit = 3000;
	q->num_slots = 100;
	q->last_pilot = T0 - 120;
	q->last_start = T0 - 300;
	q->storage_free = 800.25;
	cnt_list[0] = (struct gm_counts){SHARE, {120, 1, 10, 30, 2, 5, 7}};
	cnt_list[1] = (struct gm_counts){OTHER, {1, 2, 3, 4, 5, 6, 7}};
	qs[0].counts = cnt_list;
	qs[0].ncounts = 2;
	qs[0].sw_json = NULL;
	qs[0].type = AB_QT_PRODUCTION;
	qs[0].is_vp = 1;
	qs[0].site_class = AN_SITE_LO;
	qs[0].disable_reassign = 1;
	qs[0].transtimehi = 1.5;
	qs[0].transtimelo = 3.25;
	qs[0].workflow = "pull_ups";

	q = &qs[1].q;
	*q = queue_base("itc_Q_AUTO", "itc_SITE_B", "itc_DISK_B");
	q->releases = JB_REL_AUTO;
	q->es = JB_ES_ONLY;
	q->storage_blacklisted = 1;
	cnt_auto[0] = (struct gm_counts){OTHER, {9, 0, 0, 0, 0, 0, 0.5}};
	qs[1].counts = cnt_auto;
	qs[1].ncounts = 1;
	qs[1].sw_json = SW_AUTO;
	qs[1].type = AB_QT_UNIFIED;
	qs[1].site_class = AN_SITE_MID;
	qs[1].workflow = "push";

	/* AUTO without a dictionary, with the longest texts. */
	q = &qs[2].q;
	*q = queue_base(Q_WIDE, "itc_SITE_C", "itc_DISK_C");
	q->releases = JB_REL_AUTO;
	q->fairsharepolicy = long_policy;
	qs[2].counts = NULL;
	qs[2].ncounts = 0;
	qs[2].sw_json = NULL;

	/* ANY with a dictionary: stored, but not parsed. */
	q = &qs[3].q;
	*q = queue_base("itc_Q_ANY", "itc_SITE_A", "itc_DISK_A");
	q->status = "brokeroff";
	qs[3].counts = NULL;
	qs[3].ncounts = 0;
	qs[3].sw_json = SW_AUTO;

	links[0] =
		(struct gm_link){"itc_SITE_A", NUC, 0, {12, 150, 120, 100, 3}};
	links[1] =
		(struct gm_link){"itc_SITE_B", NUC, 1, {0, NAN, NAN, NAN, NAN}};
	links[2] = (struct gm_link){
		"itc_SITE_A", "itc_NUC_OTHER", 0, {1, 2, 3, 4, 5}};
	links[3] =
		(struct gm_link){"itc_SITE_C", NUC, 0, {7, NAN, 80, NAN, -1}};

	size_t k = 0;
	files[k++] = (struct gm_file){"itc_f1", st_ab, 2};
	files[k++] = (struct gm_file){"itc_f2", st_a, 1};
	files[k++] = (struct gm_file){"itc_f_other", st_b, 1};
	files[k++] = (struct gm_file){LFN_WIDE, st_ac, 2};
	for (int i = 0; i < NMANY; i++) {
		snprintf(many[i], sizeof(many[i]), "itc_m_%03d", i);
		files[k++] = (struct gm_file){many[i], i % 2 ? st_bc : st_a,
					      i % 2 ? 2u : 1u};
	}
	memset(g, 0, sizeof(*g));
	g->queues = qs;
	g->nqueues = 4;
	g->links = links;
	g->nlinks = 4;
	g->all_sw_json = SW_ALL;
	g->files = files;
	g->nfiles = k;
}

static void save_small_grid(void)
{
	struct gm_grid g;
	build_grid(&g);
	if (st_jobs_grid_save(db, &g, T0) != GB_OK)
		fail_msg("grid save: %s", st_error(db));
}

/* The request's jobs: f1 twice, a long lfn, one without replicas, and
** NMANY more spread over three jobs. */
static struct gm_input in0[2], in1[3], inm[NMANY];
static struct gm_job jobs[5];

static void build_request(struct gm_request *r, const char *gshare)
{
	in0[0] = (struct gm_input){"itc_f1", 100};
	in0[1] = (struct gm_input){"itc_f2", 50};
	in1[0] = (struct gm_input){"itc_f1", 100};
	in1[1] = (struct gm_input){LFN_WIDE, 10};
	in1[2] = (struct gm_input){"itc_f_missing", 5};
	for (int i = 0; i < NMANY; i++)
		inm[i] = (struct gm_input){many[i], 1};
	jobs[0] = (struct gm_job){ITC_BASE + 1, 1000, in0, 2};
	jobs[1] = (struct gm_job){ITC_BASE + 2, 500, in1, 3};
	for (int j = 0; j < 3; j++)
		jobs[2 + j] = (struct gm_job){ITC_BASE + 3 + j, 10,
					      inm + j * (NMANY / 3), NMANY / 3};
	memset(r, 0, sizeof(*r));
	r->t.task_id = ITC_BASE + 1;
	r->t.gshare = gshare;
	r->t.nucleus = NUC;
	r->jobs = jobs;
	r->njobs = 5;
}

static const struct gm_queue *find_queue(const struct gm_grid *g,
					 const char *name)
{
	for (size_t i = 0; i < g->nqueues; i++)
		if (strcmp(g->queues[i].q.name, name) == 0)
			return &g->queues[i];
	fail_msg("queue %s not loaded", name);
	return NULL;
}

static void assert_same_queue(const struct gm_queue *got,
			      const struct gm_queue *want)
{
	const struct jb_queue *a = &got->q, *b = &want->q;
	assert_string_equal(a->name, b->name);
	assert_string_equal(a->status, b->status);
	assert_string_equal(a->site, b->site);
	assert_string_equal(a->nucleus, b->nucleus);
	assert_int_equal(a->core_count, b->core_count);
	assert_near(a->corepower, b->corepower, 1e-15);
	assert_near(a->min_rss_per_core, b->min_rss_per_core, 1e-15);
	assert_near(a->max_rss_per_core, b->max_rss_per_core, 1e-15);
	assert_near(a->maxwdir, b->maxwdir, 1e-15);
	assert_near(a->mintime, b->mintime, 1e-15);
	assert_near(a->maxtime, b->maxtime, 1e-15);
	assert_int_equal(a->releases, b->releases);
	assert_int_equal(a->nrelease_list,
			 b->releases == JB_REL_LIST ? b->nrelease_list : 0);
	for (size_t i = 0; i < a->nrelease_list; i++)
		assert_string_equal(a->release_list[i], b->release_list[i]);
	assert_int_equal(a->direct_access, b->direct_access);
	assert_string_equal(a->wnconnectivity, b->wnconnectivity);
	if (isnan(b->max_diskio))
		assert_true(isnan(a->max_diskio));
	else
		assert_near(a->max_diskio, b->max_diskio, 1e-15);
	assert_near(a->diskio_avg, b->diskio_avg, 1e-15);
	assert_string_equal(a->fairsharepolicy, b->fairsharepolicy);
	assert_int_equal(a->es, b->es);
	assert_int_equal(a->dynamic_nevents, b->dynamic_nevents);
	assert_near(a->transferring_limit, b->transferring_limit, 1e-15);
	assert_int_equal(a->num_slots, b->num_slots);
	assert_int_equal(a->last_pilot, b->last_pilot);
	assert_int_equal(a->last_start, b->last_start);
	assert_string_equal(a->storage, b->storage);
	assert_near(a->storage_free, b->storage_free, 1e-15);
	assert_int_equal(a->storage_blacklisted, b->storage_blacklisted);
	if (want->sw_json)
		assert_string_equal(got->sw_json, want->sw_json);
	else
		assert_null(got->sw_json);
	/* 0005: analysis and timeout attributes; no workflow reads "". */
	assert_int_equal(got->type, want->type);
	assert_int_equal(got->is_vp, want->is_vp);
	assert_int_equal(got->site_class, want->site_class);
	assert_int_equal(got->disable_reassign, want->disable_reassign);
	assert_near(got->transtimehi, want->transtimehi, 1e-15);
	assert_near(got->transtimelo, want->transtimelo, 1e-15);
	assert_string_equal(got->workflow,
			    want->workflow ? want->workflow : "");
	/* Per-task fields are gm_resolve's. */
	assert_null(a->link);
	assert_near(a->local_size + a->missing_size + a->counts.running, 0, 0);
}

static void assert_counts(const struct gm_queue *x, const struct gm_counts *c)
{
	if (c == NULL) {
		assert_int_equal(x->ncounts, 0);
		return;
	}
	assert_int_equal(x->ncounts, 1);
	assert_string_equal(x->counts[0].gshare, c->gshare);
	const struct jb_counts *a = &x->counts[0].k, *b = &c->k;
	assert_near(a->running, b->running, 1e-15);
	assert_near(a->defined, b->defined, 1e-15);
	assert_near(a->assigned, b->assigned, 1e-15);
	assert_near(a->activated, b->activated, 1e-15);
	assert_near(a->starting, b->starting, 1e-15);
	assert_near(a->transferring, b->transferring, 1e-15);
	assert_near(a->nbatchjob, b->nbatchjob, 1e-15);
}

static void assert_same_link(const struct gm_link *a, const struct gm_link *b)
{
	assert_string_equal(a->site, b->site);
	assert_string_equal(a->nucleus, b->nucleus);
	assert_int_equal(a->blocked, b->blocked);
	const double x[] = {a->l.queued_files, a->l.mbps_1h, a->l.mbps_1d,
			    a->l.mbps_1w, a->l.closeness};
	const double y[] = {b->l.queued_files, b->l.mbps_1h, b->l.mbps_1d,
			    b->l.mbps_1w, b->l.closeness};
	for (int i = 0; i < 5; i++) {
		if (isnan(y[i]))
			assert_true(isnan(x[i]));
		else
			assert_near(x[i], y[i], 1e-15);
	}
}

/* ---- tests --------------------------------------------------------------- */

static void test_migrated(void **state)
{
	(void)state;
	int v = 0;
	assert_int_equal(st_schema_version(db, &v), GB_OK);
	assert_true(v >= 3);
	char buf[64];
	raw_q(buf, sizeof(buf),
	      "SELECT name FROM schema_migrations WHERE version = 3", "");
	assert_string_equal(buf, "0003_jobbrokerage.sql");
	raw_q(buf, sizeof(buf),
	      "SELECT COUNT(*) FROM information_schema.tables WHERE "
	      "table_schema = DATABASE() AND table_name IN ('queues', "
	      "'queue_counts', 'links', 'sw_all', 'file_replicas', 'jobs', "
	      "'job_requests') AND engine = 'InnoDB' AND table_collation = "
	      "'utf8mb4_nopad_bin' AND table_comment <> ''",
	      "");
	assert_string_equal(buf, "7");
	/* Every column explains itself, except the self-evident counts. */
	raw_q(buf, sizeof(buf),
	      "SELECT COUNT(*) FROM information_schema.columns WHERE "
	      "table_schema = DATABASE() AND table_name IN ('queues', 'links', "
	      "'jobs', 'job_requests') AND column_comment = '' AND column_name "
	      "NOT IN ('id', 'task_id', 'nevents', 'status', 'created_at', "
	      "'updated_at', 'site', 'nucleus')",
	      "");
	assert_string_equal(buf, "0");
}

static void test_grid_round_trip(void **state)
{
	(void)state;
	save_small_grid();
	struct gm_grid want;
	build_grid(&want);
	struct gm_request r;
	build_request(&r, SHARE);
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct gm_grid g;
	assert_int_equal(st_begin(db), GB_OK);
	if (st_jobs_grid_load(db, &r, &a, &g) != GB_OK)
		fail_msg("grid load: %s", st_error(db));
	assert_int_equal(st_commit(db), GB_OK);

	/* The save replaced the whole job grid: exactly these four. */
	assert_int_equal(g.nqueues, 4);
	for (size_t i = 1; i < g.nqueues; i++)
		assert_true(strcmp(g.queues[i - 1].q.name, g.queues[i].q.name) <
			    0);
	for (size_t i = 0; i < 4; i++)
		assert_same_queue(find_queue(&g, qs[i].q.name), &qs[i]);
	/* Counts for the request's gshare only. */
	assert_counts(find_queue(&g, "itc_Q_LIST"), &cnt_list[0]);
	assert_counts(find_queue(&g, "itc_Q_AUTO"), NULL);
	assert_counts(find_queue(&g, Q_WIDE), NULL);

	/* AUTO: the dictionary parsed; none published: NULL; ANY: kept as
	** text only. */
	const struct rc_sw *sw = find_queue(&g, "itc_Q_AUTO")->q.sw;
	assert_non_null(sw);
	assert_int_equal(sw->ncmtconfigs, 1);
	assert_string_equal(sw->cmtconfigs[0], "x86_64-centos7-gcc8-opt");
	assert_int_equal(sw->ncontainers, 1);
	assert_int_equal(sw->ncvmfs, 2);
	assert_string_equal(sw->cvmfs[1], "nightlies");
	assert_non_null(sw->cpu);
	assert_int_equal(sw->cpu->nvendor, 2);
	assert_string_equal(sw->cpu->vendor[1], "excl");
	assert_non_null(sw->gpu);
	assert_string_equal(sw->gpu->model[0], "kt100");
	assert_int_equal(sw->ntags, 1);
	assert_string_equal(sw->tags[0].release, "21.0.38");
	assert_null(find_queue(&g, Q_WIDE)->q.sw);
	assert_null(find_queue(&g, "itc_Q_ANY")->q.sw);
	assert_null(find_queue(&g, "itc_Q_LIST")->q.sw);

	/* Links to the request's nucleus only, NULL figures as NAN. */
	assert_int_equal(g.nlinks, 3);
	assert_same_link(&g.links[0], &links[0]);
	assert_same_link(&g.links[1], &links[1]);
	assert_same_link(&g.links[2], &links[3]);

	assert_string_equal(g.all_sw_json, SW_ALL);
	assert_non_null(g.all_sw);
	assert_int_equal(g.all_sw->ntags, 1);
	assert_string_equal(g.all_sw->tags[0].container_name,
			    "atlas/athena:21.0.38");
	assert_int_equal(g.all_sw->tags[0].nsources, 1);

	/* Replicas of the request's lfns only: f1 (asked twice), f2, the
	** long name, NMANY over three IN chunks; not f_other, not missing. */
	assert_int_equal(g.nfiles, 3 + NMANY);
	for (size_t i = 0; i < g.nfiles; i++) {
		const struct gm_file *want_f = NULL;
		for (size_t j = 0; j < want.nfiles; j++)
			if (strcmp(want.files[j].lfn, g.files[i].lfn) == 0)
				want_f = &want.files[j];
		assert_non_null(want_f);
		assert_true(strcmp(want_f->lfn, "itc_f_other") != 0);
		assert_int_equal(g.files[i].nstorages, want_f->nstorages);
		for (size_t k = 0; k < want_f->nstorages; k++)
			assert_string_equal(g.files[i].storages[k],
					    want_f->storages[k]);
		for (size_t j = 0; j < i; j++)
			assert_true(strcmp(g.files[j].lfn, g.files[i].lfn));
	}

	/* Another gshare: other counts. */
	build_request(&r, OTHER);
	assert_int_equal(st_jobs_grid_load(db, &r, &a, &g), GB_OK);
	assert_counts(find_queue(&g, "itc_Q_LIST"), &cnt_list[1]);
	assert_counts(find_queue(&g, "itc_Q_AUTO"), &cnt_auto[0]);
	r.t.nucleus = NULL;
	assert_int_equal(st_jobs_grid_load(db, &r, &a, &g), GB_EINVAL);

	/* A row written before 0005 loads with the columns' defaults. */
	raw_q(NULL, 0,
	      "INSERT INTO queues (name, status, site, storage, storage_free, "
	      "fairsharepolicy, updated_at) VALUES ('itc_Q_OLD', 'online', "
	      "'itc_SITE_A', 'itc_DISK_A', 1, '', ?)",
	      "l", T0);
	r.t.nucleus = NUC;
	assert_int_equal(st_jobs_grid_load(db, &r, &a, &g), GB_OK);
	const struct gm_queue *old = find_queue(&g, "itc_Q_OLD");
	assert_int_equal(old->type, AB_QT_UNIFIED);
	assert_int_equal(old->is_vp, 0);
	assert_int_equal(old->site_class, AN_SITE_MID);
	assert_int_equal(old->disable_reassign, 0);
	assert_near(old->transtimehi + old->transtimelo, 0, 0);
	assert_string_equal(old->workflow, "");
	arena_free(&a);
}

static void test_grid_save_refuses(void **state)
{
	(void)state;
	save_small_grid();
	char buf[64];
	struct gm_grid g;
	struct {
		const char *what;
		int want;
	} cases[] = {
		{"queue listed twice", GB_EINVAL},
		{"negative maxrss (CHECK)", GB_EINVAL},
		{"NaN corepower", GB_EINVAL},
		{"releases out of range", GB_EINVAL},
		{"empty storage name (CHECK)", GB_EINVAL},
		{"link listed twice", GB_EINVAL},
		{"closeness below -1 (CHECK)", GB_EINVAL},
		{"negative count (CHECK)", GB_EINVAL},
		{"site class out of range", GB_EINVAL},
		{"negative transtimelo", GB_EINVAL},
		{"workflow longer than its column", GB_EINVAL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		build_grid(&g);
		switch (i) {
		case 0:
			qs[3].q.name = qs[1].q.name;
			break;
		case 1:
			qs[0].q.max_rss_per_core = -1;
			break;
		case 2:
			qs[1].q.corepower = NAN;
			break;
		case 3:
			qs[2].q.releases = (enum jb_releases)7;
			break;
		case 4:
			qs[3].q.storage = "";
			break;
		case 5:
			links[2] = links[0];
			break;
		case 6:
			links[1].l.closeness = -2;
			break;
		case 7:
			cnt_list[1].k.running = -1;
			break;
		case 8:
			qs[1].site_class = (enum an_site_class)7;
			break;
		case 9:
			qs[2].transtimelo = -1;
			break;
		default:
			qs[3].workflow = long_policy; /* 399 > 64 */
			break;
		}
		int rc = st_jobs_grid_save(db, &g, T0);
		if (rc != cases[i].want)
			fail_msg("%s: got %s (%s)", cases[i].what,
				 gb_errname(rc), st_error(db));
		/* Nothing changed: the earlier grid is intact. */
		raw_q(buf, sizeof(buf),
		      "SELECT COUNT(*) FROM queues WHERE updated_at = ?", "l",
		      T0);
		if (strcmp(buf, "4") != 0)
			fail_msg("%s: %s queues left (%s)", cases[i].what, buf,
				 st_error(db));
		raw_q(buf, sizeof(buf), "SELECT COUNT(*) FROM file_replicas",
		      "");
		assert_string_equal(buf, "456");
	}
	build_grid(&g);
	/* It is its own transaction: inside the caller's it would commit
	** the caller's work. */
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_jobs_grid_save(db, &g, T0), GB_ESTATE);
	assert_int_equal(st_rollback(db), GB_OK);
	assert_int_equal(st_jobs_grid_save(NULL, &g, T0), GB_EINVAL);
}

/*
** A row that takes the statement past its byte bound (ST_ROWS_BYTES)
** starts the next statement: with two 3 MB dictionaries (stored as text;
** LIST and ANY queues do not parse theirs), the first and the last of the
** four queues, the INSERT goes as three rows and one, never four, and the
** last queue, kept back while the first three were sent, arrives whole.
*/
static void test_grid_save_long_rows(void **state)
{
	(void)state;
	enum { BIG = 3 << 20 };
	_Static_assert(2 * BIG > ST_ROWS_BYTES && BIG < ST_ROWS_BYTES,
		       "two dictionaries must pass the bound, one not");
	char *big[2] = {malloc(BIG + 1), malloc(BIG + 1)};
	assert_true(big[0] && big[1]);
	memset(big[0], 'a', BIG);
	memset(big[1], 'b', BIG);
	big[0][BIG] = big[1][BIG] = '\0';
	struct gm_grid g;
	build_grid(&g);
	assert_int_equal(qs[0].q.releases, JB_REL_LIST);
	assert_int_equal(qs[3].q.releases, JB_REL_ANY);
	qs[0].sw_json = big[0];
	qs[3].sw_json = big[1];
	assert_int_equal(st_reconnect(db), GB_OK);
	if (st_jobs_grid_save(db, &g, T0) != GB_OK)
		fail_msg("grid save: %s", st_error(db));
	assert_true(itc_sized(SJ_SID(SJ_INS_QUEUE), 3));
	assert_true(itc_sized(SJ_SID(SJ_INS_QUEUE), 1));
	assert_false(itc_sized(SJ_SID(SJ_INS_QUEUE), 4));

	struct gm_request r;
	build_request(&r, SHARE);
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct gm_grid back;
	assert_int_equal(st_begin(db), GB_OK);
	if (st_jobs_grid_load(db, &r, &a, &back) != GB_OK)
		fail_msg("grid load: %s", st_error(db));
	assert_int_equal(st_commit(db), GB_OK);
	assert_int_equal(back.nqueues, 4);
	for (size_t i = 0; i < 4; i++)
		assert_same_queue(find_queue(&back, qs[i].q.name), &qs[i]);
	arena_free(&a);
	free(big[0]);
	free(big[1]);
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e3 +
	       (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* A grid the size of etc/grid-sample.json and more: 200 queues with a
** dictionary each, 600 count rows, 1000 links, 6000 replicas. */
static void test_grid_sample_size(void **state)
{
	(void)state;
	enum { NQ = 200, NL = 1000, NF = 3000, NJ = 1000, NIN = 5 };
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct gm_queue *q = arena_alloc(&a, NQ * sizeof(*q));
	struct gm_counts *c = arena_alloc(&a, NQ * 3 * sizeof(*c));
	struct gm_link *l = arena_alloc(&a, NL * sizeof(*l));
	struct gm_file *f = arena_alloc(&a, NF * sizeof(*f));
	struct gm_job *j = arena_alloc(&a, NJ * sizeof(*j));
	struct gm_input *in = arena_alloc(&a, NJ * NIN * sizeof(*in));
	assert_true(q && c && l && f && j && in);
	static const char *const shares[] = {SHARE, OTHER, "itc_third"};
	for (int i = 0; i < NQ; i++) {
		char *name = arena_alloc(&a, 32), *site = arena_alloc(&a, 32);
		char *disk = arena_alloc(&a, 32);
		snprintf(name, 32, "itc_Q%03d", i);
		snprintf(site, 32, "itc_S%02d", i % 60);
		snprintf(disk, 32, "itc_D%02d", i % 60);
		q[i].q = queue_base(name, site, disk);
		q[i].q.releases = JB_REL_AUTO;
		q[i].sw_json = SW_AUTO;
		q[i].counts = &c[3 * i];
		q[i].ncounts = 3;
		for (int k = 0; k < 3; k++)
			c[3 * i + k] = (struct gm_counts){
				shares[k], {i, k, 1, 2, 3, 4, 5}};
	}
	for (int i = 0; i < NL; i++) {
		char *site = arena_alloc(&a, 32), *nuc = arena_alloc(&a, 32);
		snprintf(site, 32, "itc_S%02d", i % 60);
		snprintf(nuc, 32, "itc_N%02d", i / 60);
		l[i] = (struct gm_link){
			site, i / 60 ? nuc : NUC, 0, {i, 100, NAN, 50, 5}};
	}
	for (int i = 0; i < NF; i++) {
		char *lfn = arena_alloc(&a, 48);
		snprintf(lfn, 48, "itc_sample.%06d.pool.root.1", i);
		f[i] = (struct gm_file){lfn, st_ab, 2};
	}
	struct gm_grid g = {q, NQ, l, NL, NULL, SW_ALL, f, NF};
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (st_jobs_grid_save(db, &g, T0) != GB_OK)
		fail_msg("grid save: %s", st_error(db));
	double save_ms = ms_since(&t0);
	char buf[64];
	raw_q(buf, sizeof(buf), "SELECT COUNT(*) FROM queue_counts", "");
	assert_string_equal(buf, "600");
	raw_q(buf, sizeof(buf), "SELECT COUNT(*) FROM links", "");
	assert_string_equal(buf, "1000");
	raw_q(buf, sizeof(buf), "SELECT COUNT(*) FROM file_replicas", "");
	assert_string_equal(buf, "6000");

	/* A request of 1000 jobs x 5 files, every file with replicas. */
	for (int i = 0; i < NJ; i++) {
		for (int k = 0; k < NIN; k++)
			in[i * NIN + k] = (struct gm_input){
				f[(i * NIN + k) % NF].lfn, 2000};
		j[i] = (struct gm_job){ITC_BASE + 1000 + i, 100, &in[i * NIN],
				       NIN};
	}
	struct gm_request r;
	memset(&r, 0, sizeof(r));
	r.t.task_id = ITC_BASE + 2;
	r.t.gshare = SHARE;
	r.t.nucleus = NUC;
	r.jobs = j;
	r.njobs = NJ;
	struct gm_grid out;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(st_begin(db), GB_OK);
	if (st_jobs_grid_load(db, &r, &a, &out) != GB_OK)
		fail_msg("grid load: %s", st_error(db));
	assert_int_equal(st_commit(db), GB_OK);
	double load_ms = ms_since(&t0);
	assert_int_equal(out.nqueues, NQ);
	assert_int_equal(out.nlinks, 60); /* links 0..59 go to NUC */
	assert_int_equal(out.nfiles, NF);
	for (size_t i = 0; i < out.nqueues; i++) {
		assert_non_null(out.queues[i].q.sw);
		assert_int_equal(out.queues[i].ncounts, 1);
	}
	printf("[ INFO     ] grid save: %d queues, %d counts, %d links, "
	       "%d replicas in %.1f ms; load for %d jobs x %d files in "
	       "%.1f ms\n",
	       NQ, 3 * NQ, NL, 2 * NF, save_ms, NJ, NIN, load_ms);
	arena_free(&a);
}

static void test_task_info(void **state)
{
	(void)state;
	static const char ins_task[] =
		"INSERT INTO tasks (task_id, gshare, task_priority, "
		"io_intensity, t1_weight, input_prestaging, broker_on_master, "
		"full_chain, parent_nucleus, norm_exp_out_size, status, "
		"nucleus, pending_until, attempts, request_id, created_at, "
		"updated_at) VALUES (?, ?, 500, 0, 0, 0, 0, ?, NULL, 0, "
		"'assigned', ?, NULL, 1, 'itc_req_task', ?, ?)";
	raw_q(NULL, 0,
	      "INSERT INTO nuclei (name, status, bare_nucleus, "
	      "transfer_backlog, rw, updated_at) VALUES ('itc_NUC_BARE', "
	      "'ACTIVE', 'only', 0, 0, ?), ('itc_NUC_NORMAL', 'ACTIVE', '', 0, "
	      "0, ?)",
	      "ll", T0, T0);
	const struct {
		long long id;
		const char *fc, *nucleus;
		enum tb_job_scope scope; /* FC-06 / FC-07 */
	} rows[] = {
		{ITC_BASE + 10, "require", "itc_NUC_BARE",
		 TB_SCOPE_NUCLEUS_ONLY},
		{ITC_BASE + 11, "", "itc_NUC_BARE", TB_SCOPE_SATELLITES},
		{ITC_BASE + 12, "capable", "itc_NUC_NORMAL",
		 TB_SCOPE_SATELLITES},
		/* A nucleus no longer in the grid counts as a normal one. */
		{ITC_BASE + 13, "only", "itc_NUC_GONE", TB_SCOPE_SATELLITES},
	};
	struct arena a;
	arena_init(&a, ARENA_CAP);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		raw_q(NULL, 0, ins_task, "lsssll", rows[i].id, "itc_gs",
		      rows[i].fc, rows[i].nucleus, T0, T0);
		const char *nuc = NULL, *gs = NULL;
		enum tb_job_scope scope = (enum tb_job_scope) - 1;
		assert_int_equal(st_jobs_task_info(db, rows[i].id, &a, &nuc,
						   &gs, &scope),
				 GB_OK);
		assert_string_equal(nuc, rows[i].nucleus);
		assert_string_equal(gs, "itc_gs");
		assert_int_equal(scope, rows[i].scope);
	}
	/* Not placed yet, or unknown. */
	raw_q(NULL, 0,
	      "UPDATE tasks SET status = 'pending', nucleus = NULL, "
	      "pending_until = ? WHERE task_id = ?",
	      "ll", T0, ITC_BASE + 11);
	const char *nuc = NULL, *gs = NULL;
	enum tb_job_scope scope;
	assert_int_equal(
		st_jobs_task_info(db, ITC_BASE + 11, &a, &nuc, &gs, &scope),
		GB_ENOTFOUND);
	assert_int_equal(
		st_jobs_task_info(db, ITC_BASE + 999, &a, &nuc, &gs, &scope),
		GB_ENOTFOUND);
	assert_null(nuc);
	arena_free(&a);
}

/* ---- decisions ----------------------------------------------------------- */

static struct jb_queue dq[2]; /* the queues a plan points into */
/* What decide() puts in the request besides its arguments. */
static long d_cores = 1, d_prio;
static struct gm_analysis d_an; /* zero: production */
static int d_throttled;
static long long d_last_start; /* of dq[0] */

/* Decide `njobs` jobs from `first` with the given queues/statuses. */
static long long decide(const char *request_id, enum dec_outcome outcome,
			long long first, size_t njobs, const long *queue,
			const enum jb_job_status *status, long long now,
			long long retry_at, int want)
{
	static struct gm_input in[8];
	static struct gm_job j[8];
	assert_true(njobs <= 8);
	for (size_t i = 0; i < njobs; i++) {
		in[i] = (struct gm_input){"itc_f1", 100.0 + (double)i};
		j[i] = (struct gm_job){first + (long long)i, 10 * (long)(i + 1),
				       &in[i], 1};
	}
	dq[0] = queue_base("itc_Q_LIST", "itc_SITE_A", "itc_DISK_A");
	dq[1] = queue_base("itc_Q_NEW", "itc_SITE_B", "itc_DISK_B");
	dq[0].last_start = d_last_start;
	struct gm_request r;
	memset(&r, 0, sizeof(r));
	r.t.task_id = ITC_BASE + 1;
	r.t.gshare = SHARE;
	r.t.nucleus = NUC;
	r.jobs = j;
	r.njobs = njobs;
	r.t.core_count = d_cores;
	r.t.priority = d_prio;
	r.an = d_an;
	struct dec_decision d;
	dec_init(&d, NULL, 0);
	d.outcome = outcome;
	struct jb_plan plan;
	memset(&plan, 0, sizeof(plan));
	plan.job_queue = (long *)queue;
	plan.job_status = (enum jb_job_status *)status;
	for (size_t i = 0; i < njobs; i++)
		plan.nassigned += queue[i] >= 0;
	if (outcome == DEC_ASSIGNED) {
		plan.best[0] = 0;
		plan.best[1] = 1;
		plan.nbest = 2;
	}
	static const unsigned char body[] = {0x82, 0xa1, 'a', 0x00,
					     0xa1, 'b',	 0xc0};
	long long id = -1;
	int rc = st_jobs_decide(db, &r, dq, &d, &plan, request_id, body,
				sizeof(body), now, retry_at, "{\"k\":1}", NULL,
				d_throttled, &id);
	if (rc != want)
		fail_msg("decide %s: got %s (%s)", request_id, gb_errname(rc),
			 st_error(db));
	return id;
}

static const char *job_row(char *buf, size_t len, long long id)
{
	raw_q(buf, len,
	      "SELECT CONCAT_WS('|', COALESCE(queue, '-'), status, nevents, "
	      "input_mb, request_id, decision_id) FROM jobs WHERE job_id = ?",
	      "l", id);
	return buf;
}

/* The life-cycle columns of 0005. */
static const char *life_row(char *buf, size_t len, long long id)
{
	raw_q(buf, len,
	      "SELECT CONCAT_WS('|', COALESCE(queue, '-'), status, gshare, "
	      "COALESCE(user_name, '-'), COALESCE(working_group, '-'), cores, "
	      "current_priority, created_at, brokered_at, status_since, "
	      "status_time, COALESCE(check_at, '-')) FROM jobs WHERE job_id = "
	      "?",
	      "l", id);
	return buf;
}

static void expect_counts(const char *queue, double assigned, double activated,
			  double running)
{
	struct jb_counts k;
	if (st_jobs_counts(db, queue, SHARE, &k) != GB_OK)
		fail_msg("counts of %s: %s", queue, st_error(db));
	assert_near(k.assigned, assigned, 1e-15);
	assert_near(k.activated, activated, 1e-15);
	assert_near(k.running, running, 1e-15);
}

static void test_decide_jobs_counts_requests(void **state)
{
	(void)state;
	save_small_grid();
	char buf[512], want[512];
	struct jb_counts k;
	assert_int_equal(st_jobs_counts(db, "itc_Q_NEW", SHARE, &k),
			 GB_ENOTFOUND);
	const long long J = ITC_BASE + 100;
	/* Five jobs: two on Q_LIST, two on the count-less Q_NEW, one left. */
	const long q1[] = {0, 0, 1, -1, 1};
	const enum jb_job_status s1[] = {JB_JOB_ASSIGNED, JB_JOB_ACTIVATED,
					 JB_JOB_ACTIVATED, JB_JOB_UNASSIGNED,
					 JB_JOB_ASSIGNED};
	/* The counts move with the decision, so outside a transaction the
	** call is refused. */
	decide("itc_req_1", DEC_ASSIGNED, J, 5, q1, s1, T0, T0 + 3600,
	       GB_ESTATE);
	assert_int_equal(st_begin(db), GB_OK);
	long long d1 = decide("itc_req_1", DEC_ASSIGNED, J, 5, q1, s1, T0,
			      T0 + 3600, GB_OK);
	assert_int_equal(st_commit(db), GB_OK);
	assert_true(d1 > 0);
	raw_q(buf, sizeof(buf),
	      "SELECT CONCAT_WS('|', kind, subject, outcome, chosen, "
	      "decided_at, detail) FROM decisions WHERE id = ?",
	      "l", d1);
	snprintf(want, sizeof(want),
		 "jobs|%lld|assigned|itc_Q_LIST|%lld|{\"k\":1}", ITC_BASE + 1,
		 T0);
	assert_string_equal(buf, want);
	snprintf(want, sizeof(want),
		 "itc_Q_LIST|assigned|10|100|itc_req_1|%lld", d1);
	assert_string_equal(job_row(buf, sizeof(buf), J), want);
	snprintf(want, sizeof(want),
		 "itc_Q_NEW|activated|30|102|itc_req_1|%lld", d1);
	assert_string_equal(job_row(buf, sizeof(buf), J + 2), want);
	snprintf(want, sizeof(want), "-|pending|40|103|itc_req_1|%lld", d1);
	assert_string_equal(job_row(buf, sizeof(buf), J + 3), want);
	/* Production: no owner; assigned may time out 12 h later (TO-03). */
	snprintf(want, sizeof(want),
		 "itc_Q_LIST|assigned|%s|-|-|1|0|%lld|%lld|%lld|%lld|%lld",
		 SHARE, T0, T0, T0, T0, T0 + 12 * 3600 + 1);
	assert_string_equal(life_row(buf, sizeof(buf), J), want);
	/* Q_LIST had 10 assigned / 30 activated for the share. */
	expect_counts("itc_Q_LIST", 11, 31, 120);
	expect_counts("itc_Q_NEW", 1, 1, 0);
	/* A job was left: the request is due again at retry_at. */
	raw_q(buf, sizeof(buf),
	      "SELECT CONCAT_WS('|', task_id, status, pending_until, attempts, "
	      "HEX(body)) FROM job_requests WHERE request_id = 'itc_req_1'",
	      "");
	snprintf(want, sizeof(want), "%lld|pending|%lld|1|82A16100A162C0",
		 ITC_BASE + 1, T0 + 3600);
	assert_string_equal(buf, want);

	const long long ids[] = {J, J + 3, J + 2, ITC_BASE + 99999, J, J + 4};
	unsigned char done[6];
	assert_int_equal(st_jobs_done(db, ids, 6, done), GB_OK);
	const unsigned char want_done[] = {1, 0, 1, 0, 1, 1};
	assert_memory_equal(done, want_done, 6);

	/* The retry places the last job: the request is done. */
	const long q2[] = {0};
	const enum jb_job_status s2[] = {JB_JOB_ASSIGNED};
	assert_int_equal(st_begin(db), GB_OK);
	long long d2 = decide("itc_req_1", DEC_ASSIGNED, J + 3, 1, q2, s2,
			      T0 + 3600, 0, GB_OK);
	assert_int_equal(st_commit(db), GB_OK);
	expect_counts("itc_Q_LIST", 12, 31, 120);
	raw_q(buf, sizeof(buf),
	      "SELECT CONCAT_WS('|', status, COALESCE(pending_until, '-'), "
	      "attempts, updated_at) FROM job_requests WHERE request_id = "
	      "'itc_req_1'",
	      "");
	snprintf(want, sizeof(want), "done|-|2|%lld", T0 + 3600);
	assert_string_equal(buf, want);
	snprintf(want, sizeof(want),
		 "itc_Q_LIST|assigned|10|100|itc_req_1|%lld", d2);
	assert_string_equal(job_row(buf, sizeof(buf), J + 3), want);

	/* Another request racing for jobs already placed: their rows and
	** the counts stay, the new job is placed and counted. */
	const long q3[] = {1, 1, 1};
	const enum jb_job_status s3[] = {JB_JOB_ACTIVATED, JB_JOB_ACTIVATED,
					 JB_JOB_ACTIVATED};
	assert_int_equal(st_begin(db), GB_OK);
	decide("itc_req_race", DEC_ASSIGNED, J + 4, 3, q3, s3, T0 + 10, 0,
	       GB_OK);
	assert_int_equal(st_commit(db), GB_OK);
	snprintf(want, sizeof(want), "itc_Q_NEW|assigned|50|104|itc_req_1|%lld",
		 d1);
	assert_string_equal(job_row(buf, sizeof(buf), J + 4), want);
	expect_counts("itc_Q_NEW", 1, 3, 0); /* J+5 and J+6 only */
	expect_counts("itc_Q_LIST", 12, 31, 120);

	/* Pending: nothing placed, no chosen queue, counts untouched. */
	const long q4[] = {-1, -1};
	const enum jb_job_status s4[] = {JB_JOB_UNASSIGNED, JB_JOB_UNASSIGNED};
	assert_int_equal(st_begin(db), GB_OK);
	long long d4 = decide("itc_req_pend", DEC_PENDING, J + 20, 2, q4, s4,
			      T0, T0 + 3600, GB_OK);
	assert_int_equal(st_commit(db), GB_OK);
	raw_q(buf, sizeof(buf),
	      "SELECT CONCAT_WS('|', outcome, COALESCE(chosen, '-')) FROM "
	      "decisions WHERE id = ?",
	      "l", d4);
	assert_string_equal(buf, "pending|-");
	snprintf(want, sizeof(want), "-|pending|10|100|itc_req_pend|%lld", d4);
	assert_string_equal(job_row(buf, sizeof(buf), J + 20), want);
	expect_counts("itc_Q_NEW", 1, 3, 0);

	/* Plans the engine never makes are refused. */
	const enum jb_job_status bad[] = {JB_JOB_UNASSIGNED};
	assert_int_equal(st_begin(db), GB_OK);
	decide("itc_req_bad", DEC_ASSIGNED, J + 30, 1, q2, bad, T0, 0,
	       GB_EINVAL);
	assert_int_equal(st_rollback(db), GB_OK);
}

/* 0005: owner, cores, priority, times and check_at; throttled jobs. */
static void test_decide_life_cycle(void **state)
{
	(void)state;
	save_small_grid();
	char buf[512], want[512];
	const long long J = ITC_BASE + 300, D = 86400;
	d_cores = 8;
	d_prio = 700;
	d_an = (struct gm_analysis){.is_analysis = 1,
				.user = "itc_alice",
				.working_group = "itc_grp"};
	/* Assigned (TO-03 12 h), activated (TO-05 2 days below priority
	** 800), left without a queue (TO-01 1 h). */
	const long q1[] = {0, 0, -1};
	const enum jb_job_status s1[] = {JB_JOB_ASSIGNED, JB_JOB_ACTIVATED,
					 JB_JOB_UNASSIGNED};
	assert_int_equal(st_begin(db), GB_OK);
	decide("itc_req_life", DEC_ASSIGNED, J, 3, q1, s1, T0, T0 + 60, GB_OK);
	assert_int_equal(st_commit(db), GB_OK);
	snprintf(want, sizeof(want),
		 "itc_Q_LIST|assigned|%s|itc_alice|itc_grp|8|700|%lld|%lld|"
		 "%lld|%lld|%lld",
		 SHARE, T0, T0, T0, T0, T0 + 12 * 3600 + 1);
	assert_string_equal(life_row(buf, sizeof(buf), J), want);
	snprintf(want, sizeof(want),
		 "itc_Q_LIST|activated|%s|itc_alice|itc_grp|8|700|%lld|%lld|"
		 "%lld|%lld|%lld",
		 SHARE, T0, T0, T0, T0, T0 + 2 * D + 1);
	assert_string_equal(life_row(buf, sizeof(buf), J + 1), want);
	snprintf(want, sizeof(want),
		 "-|pending|%s|itc_alice|itc_grp|8|700|%lld|%lld|%lld|%lld|"
		 "%lld",
		 SHARE, T0, T0, T0, T0, T0 + 3600 + 1);
	assert_string_equal(life_row(buf, sizeof(buf), J + 2), want);

	/* The throttle stops the task: jobs without a queue are throttled
	** (TO-04: 7 days), the first decision's created_at stays, and they
	** are not placed. */
	const long q2[] = {-1, -1};
	const enum jb_job_status s2[] = {JB_JOB_UNASSIGNED, JB_JOB_UNASSIGNED};
	d_throttled = 1;
	assert_int_equal(st_begin(db), GB_OK);
	decide("itc_req_life", DEC_PENDING, J + 2, 2, q2, s2, T0 + 100,
	       T0 + 160, GB_OK);
	assert_int_equal(st_commit(db), GB_OK);
	d_throttled = 0;
	snprintf(want, sizeof(want),
		 "-|throttled|%s|itc_alice|itc_grp|8|700|%lld|%lld|%lld|%lld|"
		 "%lld",
		 SHARE, T0, T0 + 100, T0 + 100, T0 + 100, T0 + 100 + 7 * D + 1);
	assert_string_equal(life_row(buf, sizeof(buf), J + 2), want);
	snprintf(want, sizeof(want),
		 "-|throttled|%s|itc_alice|itc_grp|8|700|%lld|%lld|%lld|%lld|"
		 "%lld",
		 SHARE, T0 + 100, T0 + 100, T0 + 100, T0 + 100,
		 T0 + 100 + 7 * D + 1);
	assert_string_equal(life_row(buf, sizeof(buf), J + 3), want);
	const long long ids[] = {J, J + 2, J + 3};
	unsigned char done[3];
	assert_int_equal(st_jobs_done(db, ids, 3, done), GB_OK);
	const unsigned char want_done[] = {1, 0, 0};
	assert_memory_equal(done, want_done, 3);

	/* Placed later at priority 900: the new owner fields and times, the
	** same created_at. Activated at >= 800 with the queue's last start
	** 5 min before: TO-06 fires 4 h after the status change. A job
	** placed before keeps every column. */
	d_prio = 900;
	d_last_start = T0 - 300;
	const long q3[] = {0, 0, 1};
	const enum jb_job_status s3[] = {JB_JOB_ASSIGNED, JB_JOB_ACTIVATED,
					 JB_JOB_ASSIGNED};
	assert_int_equal(st_begin(db), GB_OK);
	decide("itc_req_life", DEC_ASSIGNED, J + 2, 3, q3, s3, T0 + 200, 0,
	       GB_OK);
	assert_int_equal(st_commit(db), GB_OK);
	snprintf(want, sizeof(want),
		 "itc_Q_LIST|assigned|%s|itc_alice|itc_grp|8|900|%lld|%lld|"
		 "%lld|%lld|%lld",
		 SHARE, T0, T0 + 200, T0 + 200, T0 + 200,
		 T0 + 200 + 12 * 3600 + 1);
	assert_string_equal(life_row(buf, sizeof(buf), J + 2), want);
	snprintf(want, sizeof(want),
		 "itc_Q_LIST|activated|%s|itc_alice|itc_grp|8|900|%lld|%lld|"
		 "%lld|%lld|%lld",
		 SHARE, T0 + 100, T0 + 200, T0 + 200, T0 + 200,
		 T0 + 200 + 4 * 3600 + 1);
	assert_string_equal(life_row(buf, sizeof(buf), J + 3), want);
	snprintf(want, sizeof(want),
		 "itc_Q_LIST|assigned|%s|itc_alice|itc_grp|8|700|%lld|%lld|"
		 "%lld|%lld|%lld",
		 SHARE, T0, T0, T0, T0, T0 + 12 * 3600 + 1);
	assert_string_equal(life_row(buf, sizeof(buf), J), want);
	/* Out of the INT columns' range: refused. */
	d_cores = -1;
	assert_int_equal(st_begin(db), GB_OK);
	decide("itc_req_life_bad", DEC_ASSIGNED, J + 10, 1, q3, s3, T0, 0,
	       GB_EINVAL);
	assert_int_equal(st_rollback(db), GB_OK);
	d_cores = 1;
	d_prio = 0;
	d_last_start = 0;
	d_an = (struct gm_analysis){0};
}

static void test_pending_due_skip_locked(void **state)
{
	(void)state;
	const long q[] = {-1};
	const enum jb_job_status s[] = {JB_JOB_UNASSIGNED};
	/* Due at 500 and 501 (far below any real clock), one not yet. */
	assert_int_equal(st_begin(db), GB_OK);
	decide("itc_due_1", DEC_PENDING, ITC_BASE + 200, 1, q, s, 400, 500,
	       GB_OK);
	decide("itc_due_2", DEC_PENDING, ITC_BASE + 201, 1, q, s, 400, 501,
	       GB_OK);
	decide("itc_due_3", DEC_PENDING, ITC_BASE + 202, 1, q, s, 400, 5000,
	       GB_OK);
	assert_int_equal(st_commit(db), GB_OK);
	char buf[64];
	raw_q(buf, sizeof(buf),
	      "SELECT id FROM job_requests WHERE request_id = 'itc_due_1'", "");
	long long r1 = atoll(buf);
	raw_q(buf, sizeof(buf),
	      "SELECT id FROM job_requests WHERE request_id = 'itc_due_2'", "");
	long long r2 = atoll(buf);

	long long ids[16];
	size_t n = 0;
	/* FOR UPDATE outside a transaction would lock nothing. */
	assert_int_equal(st_jobs_pending_due(db, 600, 16, ids, &n), GB_ESTATE);
	struct st_db *db2 = NULL;
	char err[512];
	assert_int_equal(st_open(&cfg, &db2, err, sizeof(err)), GB_OK);

	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_jobs_pending_due(db, 499, 16, ids, &n), GB_OK);
	assert_int_equal(n, 0);
	assert_int_equal(st_jobs_pending_due(db, 600, 16, ids, &n), GB_OK);
	assert_int_equal(n, 2);
	assert_int_equal(ids[0], r1); /* the earliest first */
	assert_int_equal(ids[1], r2);

	/* The second worker skips what the first holds, without waiting. */
	assert_int_equal(st_begin(db2), GB_OK);
	assert_int_equal(st_jobs_pending_due(db2, 600, 16, ids, &n), GB_OK);
	assert_int_equal(n, 0);
	assert_int_equal(st_rollback(db2), GB_OK);

	/* The first retries one and closes it; the second sees the other. */
	char *rid = NULL;
	void *body = NULL;
	size_t len = 0;
	struct arena a;
	arena_init(&a, ARENA_CAP);
	assert_int_equal(st_jobs_request_load(db, r1, &a, &rid, &body, &len),
			 GB_OK);
	assert_string_equal(rid, "itc_due_1");
	assert_int_equal(len, 7);
	assert_memory_equal(body,
			    "\x82\xa1"
			    "a\x00\xa1"
			    "b\xc0",
			    7);
	assert_int_equal(st_jobs_request_close(db, r1, 600), GB_OK);
	assert_int_equal(st_rollback(db), GB_OK);
	assert_int_equal(st_begin(db), GB_OK);
	assert_int_equal(st_jobs_pending_due(db, 600, 1, ids, &n), GB_OK);
	assert_int_equal(n, 1);
	assert_int_equal(ids[0], r1); /* max 1: only the earliest */
	assert_int_equal(st_jobs_request_close(db, r1, 600), GB_OK);
	assert_int_equal(st_commit(db), GB_OK);
	assert_int_equal(st_begin(db2), GB_OK);
	assert_int_equal(st_jobs_pending_due(db2, 600, 16, ids, &n), GB_OK);
	assert_int_equal(n, 1);
	assert_int_equal(ids[0], r2);
	assert_int_equal(st_rollback(db2), GB_OK);
	st_close(db2);

	raw_q(buf, sizeof(buf),
	      "SELECT CONCAT_WS('|', status, COALESCE(pending_until, '-')) "
	      "FROM job_requests WHERE id = ?",
	      "l", r1);
	assert_string_equal(buf, "done|-");
	assert_int_equal(st_jobs_request_close(db, -1, 600), GB_ENOTFOUND);
	assert_int_equal(st_jobs_request_load(db, -1, &a, &rid, &body, &len),
			 GB_ENOTFOUND);
	arena_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_migrated, test_teardown),
		cmocka_unit_test_teardown(test_grid_round_trip, test_teardown),
		cmocka_unit_test_teardown(test_grid_save_refuses,
					  test_teardown),
		cmocka_unit_test_teardown(test_grid_save_long_rows,
					  test_teardown),
		cmocka_unit_test_teardown(test_grid_sample_size, test_teardown),
		cmocka_unit_test_teardown(test_task_info, test_teardown),
		cmocka_unit_test_teardown(test_decide_jobs_counts_requests,
					  test_teardown),
		cmocka_unit_test_teardown(test_decide_life_cycle,
					  test_teardown),
		cmocka_unit_test_teardown(test_pending_due_skip_locked,
					  test_teardown),
	};
	return cmocka_run_group_tests_name("itc_store_jobs", tests, group_setup,
					   group_teardown);
}
