/*
** test_taskqueue.c — DIRAC task queues (engine/taskqueue.c): the canonical
** signature and CPU segments of a submission (TQ-01..03), every matching
** filter on both sides of its boundary (TQ-04..06), the choice of the task
** queue and of the job (TQ-07, TQ-08) and the no-match explanation (TQ-10).
**
** The filters are one table of rows, each changing the one attribute a
** rule reads, starting from a fixture where the view passes everything.
** The lotteries are checked statistically with fixed seeds (so the tests
** are deterministic): a chi-square against the exact proportions below
** the 99.9% critical value, which DIRAC's ORDER BY RAND()/Priority is
** shown to fail by a wide margin on the same draws.
*/
#include "gbtest.h"

#include <stdint.h>
#include <stdlib.h>

#include "gb_error.h"
#include "taskqueue.h"

/* Interned ids, as the index would hand them out. */
enum {
	OWNER_A = 1,
	OWNER_B,
	GROUP_USER = 10,
	GROUP_PROD,
	SETUP_PROD = 20,
	SETUP_DEV,
	SITE_CERN = 30,
	SITE_RAL,
	SITE_PIC,
	SITE_GRIDKA,
	SITE_IN2P3,
	SITE_NIKHEF,
	CE_1 = 40,
	CE_2,
	PLAT_EL9 = 50,
	PLAT_EL8,
	PT_PRIVATE = 60,
	PT_GENERIC,
	POOL_X = 70,
	MW_X = 80,
	JT_USER = 90,
	JT_TEST,
	TAG_GPU = 100, /* ascending: GPU < MP < WHOLE */
	TAG_MP,
	TAG_WHOLE,
};

/* Chi-square critical values at 99.9% (P(chi2 > c) = 0.001), by degrees
** of freedom. */
static const double chi2_999[] = {0, 10.828, 13.816, 16.266, 18.467,
				  20.515, 22.458, 24.322, 26.124, 27.877};

static double chi2(const long *obs, const double *p, size_t k, long n)
{
	double c = 0;
	for (size_t i = 0; i < k; i++) {
		double e = p[i] * (double)n;
		c += ((double)obs[i] - e) * ((double)obs[i] - e) / e;
	}
	return c;
}

/* ---- TQ-01 .. TQ-03: submission ----------------------------------------- */

/* TQ-02: the seed's examples and the edges of each segment. */
static void test_tq02_cpu_segments(void **state)
{
	(void)state;
	static const struct {
		long long cpu, want;
	} rows[] = {
		{10, 500},	   {500, 500},	     {501, 5000},
		{5000, 5000},	   {5001, 50000},    {50000, 50000},
		{299999, 300000},  {300000, 300000}, {300001, 300000},
		{10000000, 300000}, {0, 500},	     {-5, 500},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		long long got =
			tq_cpu_segment(rows[i].cpu, tq_default_segments, 4);
		if (got != rows[i].want)
			fail_msg("TQ-02 cpu %lld -> %lld, want %lld",
				 rows[i].cpu, got, rows[i].want);
	}
	assert_true(tq_default_segments[0] == 500 &&
		    tq_default_segments[1] == 5000 &&
		    tq_default_segments[2] == 50000 &&
		    tq_default_segments[3] == 300000);
	/* A configured list is used as given. */
	const long long mine[] = {360, 86400};
	assert_true(tq_cpu_segment(361, mine, 2) == 86400);
	assert_true(tq_cpu_segment(1000000, mine, 2) == 86400);
	assert_true(tq_cpu_segment(1, mine, 2) == 360);
}

/* TQ-02: which segment lists are usable. */
static void test_tq02_segment_lists_valid(void **state)
{
	(void)state;
	static long long inc[TQ_MAX_SEGMENTS + 1];
	for (int i = 0; i <= TQ_MAX_SEGMENTS; i++)
		inc[i] = 100LL * (i + 1);
	static const long long same[] = {500, 500}, down[] = {5000, 500},
			       zero[] = {0, 500}, neg[] = {-1},
			       one[] = {1};
	static const struct {
		const long long *seg;
		size_t n;
		int valid;
	} rows[] = {
		{tq_default_segments, 4, 1},
		{one, 1, 1},
		{inc, TQ_MAX_SEGMENTS, 1},
		{inc, TQ_MAX_SEGMENTS + 1, 0},
		{same, 2, 0},
		{down, 2, 0},
		{zero, 2, 0},
		{neg, 1, 0},
		{one, 0, 0},
		{NULL, 1, 0},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (tq_segments_valid(rows[i].seg, rows[i].n) != rows[i].valid)
			fail_msg("TQ-02 segment row %zu: want %d", i,
				 rows[i].valid);
}

/* TQ-03: the multi-valued fields and their names. */
static void test_tq03_field_names(void **state)
{
	(void)state;
	static const char *const want[TQ_NFIELDS] = {
		"sites",      "bannedSites", "gridCEs",	       "platforms",
		"pilotTypes", "submitPools", "gridMiddlewares", "jobTypes",
		"tags"};
	for (int f = 0; f < TQ_NFIELDS; f++)
		assert_string_equal(tq_field_names[f], want[f]);
	/* the pilot's fields and the sets they are matched against */
	static const char *const pnames[TQ_NPFIELDS] = {
		"site", "gridCE", "platform", "pilotType", "jobType", "tags"};
	static const enum tq_field psets[TQ_NPFIELDS] = {
		TQ_F_SITES, TQ_F_GRID_CES, TQ_F_PLATFORMS, TQ_F_PILOT_TYPES,
		TQ_F_JOB_TYPES, TQ_F_TAGS};
	for (int f = 0; f < TQ_NPFIELDS; f++) {
		assert_string_equal(tq_pfield_names[f], pnames[f]);
		assert_int_equal(tq_pfield_set[f], psets[f]);
	}
}

/* DIRAC's "ANY" in any case, nothing else. */
static void test_tq06_any_word(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int any;
	} rows[] = {{"ANY", 1}, {"any", 1}, {"aNy", 1}, {"AN", 0},
		    {"ANYX", 0}, {"", 0},   {" ANY", 0}, {NULL, 0}};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		assert_int_equal(tq_is_any(rows[i].s), rows[i].any);
}

/* TQ-03: a set is sorted by strcmp with repeats dropped. */
static void test_tq03_strset_normalise(void **state)
{
	(void)state;
	const char *v[] = {"RAL", "CERN", "RAL", "PIC", "CERN"};
	size_t n = 5;
	tq_strset_normalise(v, &n);
	assert_int_equal(n, 3);
	assert_string_equal(v[0], "CERN");
	assert_string_equal(v[1], "PIC");
	assert_string_equal(v[2], "RAL");
	const char *w[] = {"x"};
	n = 1;
	tq_strset_normalise(w, &n);
	assert_int_equal(n, 1);
	n = 0;
	tq_strset_normalise(w, &n);
	assert_int_equal(n, 0);
	/* A NULL sorts first and stays once, for tq_canon to refuse. */
	const char *z[] = {"b", NULL, "a", NULL};
	n = 4;
	tq_strset_normalise(z, &n);
	assert_int_equal(n, 3);
	assert_null(z[0]);
	assert_string_equal(z[1], "a");
}

/* A small definition; sets point at the caller's arrays. */
static struct tq_def base_def(void)
{
	static const char *sites[] = {"CERN", "RAL"};
	static const char *plats[] = {"EL9"};
	struct tq_def d = {.owner = "/DC=ch/CN=ab",
			   .owner_group = "lhcb_user",
			   .setup = "LHCb-Production",
			   .cpu_time = 5000};
	d.set[TQ_F_SITES] = (struct tq_strset){sites, 2};
	d.set[TQ_F_PLATFORMS] = (struct tq_strset){plats, 1};
	return d;
}

static void canon_ok(const struct tq_def *d, char *buf, size_t len)
{
	size_t out = 0;
	int rc = tq_canon(d, buf, len, &out);
	if (rc != GB_OK)
		fail_msg("tq_canon: %s", gb_strerror(rc));
	assert_int_equal(out, strlen(buf));
}

/* TQ-01: the documented layout, every field in order, length-prefixed. */
static void test_tq01_canon_layout(void **state)
{
	(void)state;
	struct tq_def d = base_def();
	char buf[512];
	canon_ok(&d, buf, sizeof(buf));
	assert_string_equal(
		buf, "owner=12:/DC=ch/CN=ab;ownerGroup=9:lhcb_user;"
		     "setup=15:LHCb-Production;cpuTime=5000;"
		     "sites=2[4:CERN,3:RAL];bannedSites=0[];gridCEs=0[];"
		     "platforms=1[3:EL9];pilotTypes=0[];submitPools=0[];"
		     "gridMiddlewares=0[];");
	/* jobTypes and tags (issue 17) follow, each only when set, so a TQ
	** without them keeps the signature above */
	static const char *jt[] = {"User"}, *tags[] = {"GPU", "MP"};
	d.set[TQ_F_TAGS] = (struct tq_strset){tags, 2};
	canon_ok(&d, buf, sizeof(buf));
	assert_non_null(strstr(buf, "gridMiddlewares=0[];tags=2[3:GPU,2:MP];"));
	d.set[TQ_F_JOB_TYPES] = (struct tq_strset){jt, 1};
	canon_ok(&d, buf, sizeof(buf));
	assert_non_null(strstr(buf, "gridMiddlewares=0[];jobTypes=1[4:User];"
				    "tags=2[3:GPU,2:MP];"));
	assert_int_equal(buf[strlen(buf) - 1], ';');
}

/* TQ-01: permuted and repeated sets give the same signature once
** normalised, so those jobs share a task queue. */
static void test_tq01_canon_permuted_sets_equal(void **state)
{
	(void)state;
	struct tq_def a = base_def(), b = base_def();
	const char *sites[] = {"RAL", "CERN", "RAL", "CERN"};
	size_t n = 4;
	tq_strset_normalise(sites, &n);
	b.set[TQ_F_SITES] = (struct tq_strset){sites, n};
	char ca[512], cb[512];
	canon_ok(&a, ca, sizeof(ca));
	canon_ok(&b, cb, sizeof(cb));
	assert_string_equal(ca, cb);
}

/* Variants of base_def(), one change each. */
#define DMUT(name, ...)                                                    \
	static void name(struct tq_def *d)                                 \
	{                                                                  \
		__VA_ARGS__;                                               \
	}

static const char *more_sites[] = {"CERN", "RAL", "X"},
		  *comma_site[] = {"CERN,RAL"},
		  *spelt_site[] = {"4:CERN,3:RAL"};
DMUT(d_base, (void)d)
DMUT(d_owner, d->owner = "/DC=ch/CN=ac")
DMUT(d_group, d->owner_group = "lhcb_prod")
DMUT(d_setup, d->setup = "LHCb-Certification")
DMUT(d_cpu, d->cpu_time = 50000)
DMUT(d_more_sites, d->set[TQ_F_SITES] = (struct tq_strset){more_sites, 3})
/* Forgeries: under a plain "key=value;" and "a,b" concatenation these
** would read as another row (owner/group pair: "owner=x;ownerGroup=y;
** ownerGroup=z;" both; the sites: as the base's two sites). */
DMUT(d_forge_owner, d->owner = "x;ownerGroup=y"; d->owner_group = "z")
DMUT(d_forge_group, d->owner = "x"; d->owner_group = "y;ownerGroup=z")
DMUT(d_comma_site, d->set[TQ_F_SITES] = (struct tq_strset){comma_site, 1})
DMUT(d_spelt_site, d->set[TQ_F_SITES] = (struct tq_strset){spelt_site, 1})

/* TQ-01: changing any single field gives a different signature (a row per
** single-valued field, and "X" alone in each set: the same value in
** another set is another queue), and values holding separators or our
** own encoding cannot forge one. All variants pairwise different. */
static void test_tq01_canon_fields_differ_unforgeable(void **state)
{
	(void)state;
	static void (*const mut[])(struct tq_def *) = {
		d_base,	       d_owner,	      d_group,	    d_setup,
		d_cpu,	       d_more_sites,  d_forge_owner, d_forge_group,
		d_comma_site, d_spelt_site};
	enum { NMUT = sizeof(mut) / sizeof(mut[0]), N = NMUT + TQ_NFIELDS };
	static const char *x[] = {"X"};
	static char canon[N][600];
	for (int row = 0; row < N; row++) {
		struct tq_def d = base_def();
		if (row < NMUT)
			mut[row](&d);
		else
			d.set[row - NMUT] = (struct tq_strset){x, 1};
		canon_ok(&d, canon[row], sizeof(canon[row]));
	}
	for (int i = 0; i < N; i++)
		for (int j = i + 1; j < N; j++)
			if (strcmp(canon[i], canon[j]) == 0)
				fail_msg("TQ-01 rows %d and %d collide: %s", i,
					 j, canon[i]);
	/* The owner forgery is carried, length-prefixed, as data. */
	assert_non_null(strstr(canon[6], "owner=14:x;ownerGroup=y;"
					 "ownerGroup=1:z;"));
}

/* TQ-01: refused definitions and the buffer contract. */
static void test_tq01_canon_errors(void **state)
{
	(void)state;
	char buf[512];
	size_t out = 0;
	struct tq_def d = base_def();
	static const char *unsorted[] = {"RAL", "CERN"},
			  *dup[] = {"CERN", "CERN"}, *hole[] = {"CERN", NULL};

	d.owner = NULL;
	assert_int_equal(tq_canon(&d, buf, sizeof(buf), &out), GB_EINVAL);
	d = base_def();
	d.cpu_time = 0;
	assert_int_equal(tq_canon(&d, buf, sizeof(buf), &out), GB_EINVAL);
	d = base_def();
	d.set[TQ_F_BANNED_SITES] = (struct tq_strset){unsorted, 2};
	assert_int_equal(tq_canon(&d, buf, sizeof(buf), &out), GB_EINVAL);
	d.set[TQ_F_BANNED_SITES] = (struct tq_strset){dup, 2};
	assert_int_equal(tq_canon(&d, buf, sizeof(buf), &out), GB_EINVAL);
	d.set[TQ_F_BANNED_SITES] = (struct tq_strset){hole, 2};
	assert_int_equal(tq_canon(&d, buf, sizeof(buf), &out), GB_EINVAL);
	d.set[TQ_F_BANNED_SITES] = (struct tq_strset){NULL, 1};
	assert_int_equal(tq_canon(&d, buf, sizeof(buf), &out), GB_EINVAL);
	assert_int_equal(tq_canon(NULL, buf, sizeof(buf), &out), GB_EINVAL);

	/* Exactly the length plus the NUL fits; one byte less does not,
	** and *outlen still says how much is needed. */
	d = base_def();
	canon_ok(&d, buf, sizeof(buf));
	size_t need = strlen(buf);
	char small[512];
	assert_int_equal(tq_canon(&d, small, need + 1, &out), GB_OK);
	assert_int_equal(out, need);
	assert_string_equal(small, buf);
	out = 0;
	assert_int_equal(tq_canon(&d, small, need, &out), GB_ETOOBIG);
	assert_int_equal(out, need);
	assert_int_equal(strlen(small), need - 1);
	assert_int_equal(tq_canon(&d, small, 0, &out), GB_ETOOBIG);
}

/* ---- TQ-04 .. TQ-06: the filters ----------------------------------------- */

/* A level of njobs waiting jobs at UserPriority up; `ids` holds its
** min(njobs, TQ_PICK_FROM) lowest ids. */
static struct tq_level level(int up, size_t njobs, const long long *ids)
{
	return (struct tq_level){
		.user_priority = up,
		.njobs = njobs,
		.lowest = ids,
		.nlowest = njobs < TQ_PICK_FROM ? njobs : TQ_PICK_FROM};
}

/* One view that passes everything for the base resource: owner A of the
** user group, setup prod, CPU 5000, sites {CERN, RAL}, three jobs. The
** base pilot: setup prod, 86400 s, site CERN, no tags offered (tags
** absent), nothing else. */
struct fx {
	struct tq_view v;
	struct tq_resource r;
	struct tq_level lv;
	long long ids[3];
	uint32_t sites[2], banned[2], ces[2], plats[2], ptypes[2], pools[1],
		mw[1], jtypes[2], tags[2];
	/* the pilot's lists */
	uint32_t want[TQ_NPFIELDS][2], ban[TQ_NPFIELDS][2], req[2], groups[2],
		js[2], owners[2];
	uint32_t many[5]; /* a pilot list longer than ids2 makes */
};

static void fx_init(struct fx *f)
{
	memset(f, 0, sizeof(*f));
	f->sites[0] = SITE_CERN;
	f->sites[1] = SITE_RAL;
	for (int i = 0; i < 3; i++)
		f->ids[i] = 101 + i;
	f->lv = level(1, 3, f->ids);
	f->v = (struct tq_view){.tq_id = 1,
				.owner = OWNER_A,
				.owner_group = GROUP_USER,
				.setup = SETUP_PROD,
				.cpu_time = 5000,
				.priority = 1,
				.levels = &f->lv,
				.nlevels = 1,
				.njobs = 3};
	f->v.set[TQ_F_SITES] = (struct tq_idset){f->sites, 2};
	f->r = (struct tq_resource){.setup = SETUP_PROD, .cpu_time = 86400};
	f->want[TQ_P_SITE][0] = SITE_CERN;
	f->r.has[TQ_P_SITE] = 1;
	f->r.want[TQ_P_SITE] = (struct tq_idset){f->want[TQ_P_SITE], 1};
	f->r.has[TQ_P_TAG] = 1; /* tags absent: none offered */
}

/* A sorted list of one or two ids (b 0: one) in arr. */
static struct tq_idset ids2(uint32_t *arr, uint32_t a, uint32_t b)
{
	arr[0] = a;
	size_t n = 1;
	if (b != 0) {
		arr[0] = a < b ? a : b;
		arr[n++] = a < b ? b : a;
	}
	return (struct tq_idset){arr, n};
}

static void set_of(struct tq_view *v, enum tq_field fld, uint32_t *arr,
		   uint32_t a, uint32_t b)
{
	v->set[fld] = ids2(arr, a, b);
}

/* The pilot names values a[, b] for field pf (a 0: no constraint). */
static void want(struct fx *f, enum tq_pfield pf, uint32_t a, uint32_t b)
{
	f->r.has[pf] = a != 0;
	f->r.want[pf] = a ? ids2(f->want[pf], a, b) : (struct tq_idset){0};
}

static void ban(struct fx *f, enum tq_pfield pf, uint32_t a, uint32_t b)
{
	f->r.banned[pf] = ids2(f->ban[pf], a, b);
}

/* A private pilot of group g (JOB_SHARING when sharing) and, when dn is
** not 0, owner dn. */
static void private_pilot(struct fx *f, uint32_t g, int sharing,
			  uint32_t dn)
{
	f->r.groups = ids2(f->groups, g, 0);
	f->r.js_groups = (struct tq_idset){0};
	if (sharing)
		f->r.js_groups = ids2(f->js, g, 0);
	f->r.owners = dn ? ids2(f->owners, dn, 0) : (struct tq_idset){0};
}

/* One mutation per row: the attribute a rule reads, on one side of it. */
#define MUT(name, ...)                                                     \
	static void name(struct fx *f)                                     \
	{                                                                  \
		__VA_ARGS__;                                               \
	}

/* TQ-04: a DN without a group is not a private pilot. */
MUT(m_public_dn, f->r.owners = ids2(f->owners, OWNER_B, 0))
MUT(m_private_same, private_pilot(f, GROUP_USER, 0, OWNER_A))
MUT(m_private_group, private_pilot(f, GROUP_PROD, 0, OWNER_A))
MUT(m_private_dn, private_pilot(f, GROUP_USER, 0, OWNER_B))
/* groups and no DN: the groups' TQs whatever the owner */
MUT(m_private_no_dn, private_pilot(f, GROUP_USER, 0, 0))
MUT(m_sharing_dn, private_pilot(f, GROUP_USER, 1, OWNER_B))
MUT(m_sharing_no_dn, private_pilot(f, GROUP_USER, 1, 0))
MUT(m_sharing_group, private_pilot(f, GROUP_PROD, 1, 0))
MUT(m_groups_list, private_pilot(f, GROUP_PROD, 0, OWNER_A);
    f->r.groups = ids2(f->groups, GROUP_PROD, GROUP_USER))
MUT(m_groups_dns_out, m_groups_list(f);
    f->r.owners = ids2(f->owners, OWNER_B, 0))
MUT(m_groups_dns_in, m_groups_list(f);
    f->r.owners = ids2(f->owners, OWNER_A, OWNER_B))
/* JOB_SHARING on the other group of the pilot does not lift the owner
** check of this TQ's group; on this one it does */
MUT(m_groups_js_other, m_groups_dns_out(f);
    f->r.js_groups = ids2(f->js, GROUP_PROD, 0))
MUT(m_groups_js_this, m_groups_dns_out(f);
    f->r.js_groups = ids2(f->js, GROUP_USER, 0))
MUT(m_setup_other, f->r.setup = SETUP_DEV)
MUT(m_setup_unknown, f->r.setup = TQ_ID_UNKNOWN)
MUT(m_cpu_equal, f->r.cpu_time = 5000)
MUT(m_cpu_short, f->r.cpu_time = 4999)
MUT(m_pt_free, want(f, TQ_P_PILOT_TYPE, PT_GENERIC, 0))
MUT(m_pt_in, set_of(&f->v, TQ_F_PILOT_TYPES, f->ptypes, PT_PRIVATE, 0);
    want(f, TQ_P_PILOT_TYPE, PT_PRIVATE, 0))
MUT(m_pt_out, m_pt_in(f); want(f, TQ_P_PILOT_TYPE, PT_GENERIC, 0))
MUT(m_pt_none, m_pt_in(f); want(f, TQ_P_PILOT_TYPE, 0, 0))
MUT(m_site_in, want(f, TQ_P_SITE, SITE_RAL, 0))
MUT(m_site_out, want(f, TQ_P_SITE, SITE_PIC, 0))
MUT(m_site_list, want(f, TQ_P_SITE, SITE_PIC, SITE_RAL))
MUT(m_site_unknown, want(f, TQ_P_SITE, TQ_ID_UNKNOWN, 0))
MUT(m_site_none, want(f, TQ_P_SITE, 0, 0))
MUT(m_site_any, f->v.set[TQ_F_SITES].n = 0; want(f, TQ_P_SITE, SITE_PIC, 0))
MUT(m_banned, set_of(&f->v, TQ_F_BANNED_SITES, f->banned, SITE_CERN, 0))
MUT(m_banned_other,
    set_of(&f->v, TQ_F_BANNED_SITES, f->banned, SITE_RAL, 0))
MUT(m_banned_any_site, m_banned(f); f->v.set[TQ_F_SITES].n = 0)
MUT(m_banned_one_of_two, m_banned(f); want(f, TQ_P_SITE, SITE_CERN, SITE_RAL))
MUT(m_banned_both, want(f, TQ_P_SITE, SITE_CERN, SITE_RAL);
    set_of(&f->v, TQ_F_BANNED_SITES, f->banned, SITE_CERN, SITE_RAL))
MUT(m_banned_no_site, m_banned(f); want(f, TQ_P_SITE, 0, 0))
MUT(m_ce_in, set_of(&f->v, TQ_F_GRID_CES, f->ces, CE_1, CE_2);
    want(f, TQ_P_GRID_CE, CE_2, 0))
MUT(m_ce_out, m_ce_in(f); f->v.set[TQ_F_GRID_CES].n = 1)
MUT(m_ce_none, m_ce_out(f); want(f, TQ_P_GRID_CE, 0, 0))
MUT(m_ce_free, want(f, TQ_P_GRID_CE, CE_2, 0))
MUT(m_plat_in, set_of(&f->v, TQ_F_PLATFORMS, f->plats, PLAT_EL9, 0);
    want(f, TQ_P_PLATFORM, PLAT_EL9, 0))
MUT(m_plat_out, m_plat_in(f); want(f, TQ_P_PLATFORM, PLAT_EL8, 0))
MUT(m_plat_none, m_plat_in(f); want(f, TQ_P_PLATFORM, 0, 0))
MUT(m_plat_free, want(f, TQ_P_PLATFORM, PLAT_EL8, 0))
MUT(m_jt_in, set_of(&f->v, TQ_F_JOB_TYPES, f->jtypes, JT_USER, 0);
    want(f, TQ_P_JOB_TYPE, JT_USER, JT_TEST))
MUT(m_jt_out, m_jt_in(f); want(f, TQ_P_JOB_TYPE, JT_TEST, 0))
MUT(m_jt_none, m_jt_in(f); want(f, TQ_P_JOB_TYPE, 0, 0))
MUT(m_jt_free, want(f, TQ_P_JOB_TYPE, JT_TEST, 0))
MUT(m_tag_none_none, (void)f)
MUT(m_tag_needed, set_of(&f->v, TQ_F_TAGS, f->tags, TAG_MP, 0))
MUT(m_tag_offered, m_tag_needed(f); want(f, TQ_P_TAG, TAG_MP, TAG_GPU))
MUT(m_tag_partly, set_of(&f->v, TQ_F_TAGS, f->tags, TAG_MP, TAG_WHOLE);
    want(f, TQ_P_TAG, TAG_MP, 0))
MUT(m_tag_any, m_tag_needed(f); f->r.has[TQ_P_TAG] = 0)
MUT(m_req_lacking, m_tag_offered(f); f->r.required = ids2(f->req, TAG_GPU, 0))
MUT(m_req_carried, m_req_lacking(f);
    set_of(&f->v, TQ_F_TAGS, f->tags, TAG_MP, TAG_GPU))
MUT(m_req_untagged, want(f, TQ_P_TAG, TAG_MP, TAG_GPU);
    f->r.required = ids2(f->req, TAG_GPU, 0))
MUT(m_req_unknown, m_tag_offered(f);
    f->r.required = ids2(f->req, TQ_ID_UNKNOWN, 0))
MUT(m_ban_site, ban(f, TQ_P_SITE, SITE_CERN, 0))
MUT(m_ban_site_partly, ban(f, TQ_P_SITE, SITE_CERN, SITE_PIC))
MUT(m_ban_site_all, ban(f, TQ_P_SITE, SITE_CERN, SITE_RAL))
MUT(m_ban_site_unlisted, f->v.set[TQ_F_SITES].n = 0;
    ban(f, TQ_P_SITE, SITE_CERN, 0))
MUT(m_ban_unknown, ban(f, TQ_P_SITE, TQ_ID_UNKNOWN, 0))
MUT(m_ban_ce, set_of(&f->v, TQ_F_GRID_CES, f->ces, CE_1, 0);
    ban(f, TQ_P_GRID_CE, CE_1, 0))
MUT(m_ban_plat, m_plat_in(f); ban(f, TQ_P_PLATFORM, PLAT_EL9, 0))
MUT(m_ban_plat_other, m_plat_in(f); ban(f, TQ_P_PLATFORM, PLAT_EL8, 0))
MUT(m_ban_pt, m_pt_in(f); ban(f, TQ_P_PILOT_TYPE, PT_PRIVATE, 0))
MUT(m_ban_jt, m_jt_in(f); ban(f, TQ_P_JOB_TYPE, JT_USER, 0))
MUT(m_ban_tag, m_tag_any(f); ban(f, TQ_P_TAG, TAG_MP, 0))
/* The far side of each ban: a TQ lacking one of the banned values passes,
** one listing them all is dropped, for every field the pilot can ban. */
MUT(m_ban_ce_partly, set_of(&f->v, TQ_F_GRID_CES, f->ces, CE_1, 0);
    ban(f, TQ_P_GRID_CE, CE_1, CE_2))
MUT(m_ban_ce_all, set_of(&f->v, TQ_F_GRID_CES, f->ces, CE_1, CE_2);
    ban(f, TQ_P_GRID_CE, CE_1, CE_2))
MUT(m_ban_plat_partly, m_plat_in(f); ban(f, TQ_P_PLATFORM, PLAT_EL9, PLAT_EL8))
MUT(m_ban_plat_all, set_of(&f->v, TQ_F_PLATFORMS, f->plats, PLAT_EL9, PLAT_EL8);
    ban(f, TQ_P_PLATFORM, PLAT_EL9, PLAT_EL8))
MUT(m_ban_pt_partly, m_pt_in(f);
    ban(f, TQ_P_PILOT_TYPE, PT_PRIVATE, PT_GENERIC))
MUT(m_ban_jt_other, m_jt_in(f); ban(f, TQ_P_JOB_TYPE, JT_TEST, 0))
MUT(m_ban_jt_partly, m_jt_in(f); ban(f, TQ_P_JOB_TYPE, JT_USER, JT_TEST))
MUT(m_ban_jt_unlisted, ban(f, TQ_P_JOB_TYPE, JT_USER, 0))
MUT(m_ban_tag_partly, m_ban_tag(f); ban(f, TQ_P_TAG, TAG_MP, TAG_GPU))
MUT(m_ban_tag_all, m_ban_tag_partly(f);
    set_of(&f->v, TQ_F_TAGS, f->tags, TAG_MP, TAG_GPU))
MUT(m_ban_tag_untagged, m_tag_any(f); f->v.set[TQ_F_TAGS].n = 0;
    ban(f, TQ_P_TAG, TAG_MP, 0))
/* tags ANY offers every tag, but a required tag still has to be carried */
MUT(m_req_tags_any_lacking, m_tag_any(f);
    f->r.required = ids2(f->req, TAG_GPU, 0))
MUT(m_req_tags_any_carried, m_req_tags_any_lacking(f);
    set_of(&f->v, TQ_F_TAGS, f->tags, TAG_GPU, 0))
/* A list of five sites (more than ids_meet searches one by one): the TQ
** shares the last, or none (an unknown value among them). */
static void five_sites(struct fx *f, uint32_t last)
{
	static const uint32_t head[] = {SITE_RAL, SITE_PIC, SITE_GRIDKA,
					SITE_IN2P3};
	memcpy(f->many, head, sizeof(head));
	f->many[4] = last;
	f->r.has[TQ_P_SITE] = 1;
	f->r.want[TQ_P_SITE] = (struct tq_idset){f->many, 5};
	set_of(&f->v, TQ_F_SITES, f->sites, SITE_CERN, SITE_NIKHEF);
}
MUT(m_site_five_last, five_sites(f, SITE_NIKHEF))
MUT(m_site_five_none, five_sites(f, TQ_ID_UNKNOWN))
/* TQ-06: submit pools and middlewares are for pilot submission only. */
MUT(m_submission_only,
    set_of(&f->v, TQ_F_SUBMIT_POOLS, f->pools, POOL_X, 0);
    set_of(&f->v, TQ_F_GRID_MIDDLEWARES, f->mw, MW_X, 0))
/* Several failures: the first row of the table is the one reported (the
** index's fields come first). */
MUT(m_several, m_setup_other(f); m_cpu_short(f); m_site_out(f))

#define NONE (-1.0) /* no such value */

static const struct filter_row {
	const char *name;
	void (*mut)(struct fx *f);
	int want;	  /* enum tq_filter_id, -1 = passes */
	const char *text; /* rendered reason when rejected */
	double v0, v1;	  /* the reason's numbers */
} filter_rows[] = {
	{"TQ-04 DN without group: public", m_public_dn, -1, NULL, 0, 0},
	{"TQ-04 private, same group and DN", m_private_same, -1, NULL, 0, 0},
	{"TQ-04 private, other group", m_private_group, TQ_FL_OWNER_GROUP,
	 "owner group not among the private pilot's", GROUP_USER, 1},
	{"TQ-04 private non-sharing, other DN", m_private_dn, TQ_FL_OWNER_DN,
	 "owner DN not among the private pilot's (group without "
	 "JOB_SHARING)",
	 OWNER_A, 1},
	{"TQ-04 private, no DN: any owner", m_private_no_dn, -1, NULL, 0, 0},
	{"TQ-04 JOB_SHARING, other DN", m_sharing_dn, -1, NULL, 0, 0},
	{"TQ-04 JOB_SHARING, no DN", m_sharing_no_dn, -1, NULL, 0, 0},
	{"TQ-04 JOB_SHARING, other group", m_sharing_group, TQ_FL_OWNER_GROUP,
	 "owner group not among the private pilot's", GROUP_USER, 1},
	{"TQ-04 list of groups holding the TQ's", m_groups_list, -1, NULL, 0,
	 0},
	{"TQ-04 groups, DN not the owner", m_groups_dns_out, TQ_FL_OWNER_DN,
	 "owner DN not among the private pilot's (group without "
	 "JOB_SHARING)",
	 OWNER_A, 1},
	{"TQ-04 groups, DNs holding the owner", m_groups_dns_in, -1, NULL, 0,
	 0},
	{"TQ-04 JOB_SHARING of another group", m_groups_js_other,
	 TQ_FL_OWNER_DN,
	 "owner DN not among the private pilot's (group without "
	 "JOB_SHARING)",
	 OWNER_A, 1},
	{"TQ-04 JOB_SHARING of the TQ's group", m_groups_js_this, -1, NULL, 0,
	 0},
	{"TQ-05 other setup", m_setup_other, TQ_FL_SETUP,
	 "setup differs from the pilot's", SETUP_PROD, SETUP_DEV},
	{"TQ-05 unknown setup", m_setup_unknown, TQ_FL_SETUP,
	 "setup differs from the pilot's", SETUP_PROD, TQ_ID_UNKNOWN},
	{"TQ-05 cpu equal", m_cpu_equal, -1, NULL, 0, 0},
	{"TQ-05 cpu one second short", m_cpu_short, TQ_FL_CPU_TIME,
	 "CPU time 5000 s exceeds the pilot's 4999 s", 5000, 4999},
	{"TQ-06 no pilot types: any", m_pt_free, -1, NULL, 0, 0},
	{"TQ-06 pilot type listed", m_pt_in, -1, NULL, 0, 0},
	{"TQ-06 pilot type not listed", m_pt_out, TQ_FL_PILOT_TYPE,
	 "lists 1 value(s), none of the pilot's 1", 1, 1},
	{"TQ-06 pilot types, pilot gave none", m_pt_none, -1, NULL, 0, 0},
	{"TQ-06 site listed", m_site_in, -1, NULL, 0, 0},
	{"TQ-06 site not listed", m_site_out, TQ_FL_SITE,
	 "lists 2 value(s), none of the pilot's 1", 2, 1},
	{"TQ-06 site list sharing one", m_site_list, -1, NULL, 0, 0},
	{"TQ-06 unknown site", m_site_unknown, TQ_FL_SITE,
	 "lists 2 value(s), none of the pilot's 1", 2, 1},
	{"TQ-06 no site (absent, [] or ANY)", m_site_none, -1, NULL, 0, 0},
	{"TQ-06 no sites: any", m_site_any, -1, NULL, 0, 0},
	{"TQ-06 site banned", m_banned, TQ_FL_BANNED_SITE,
	 "bans 1 site(s), among them every one of the pilot's 1", 1, 1},
	{"TQ-06 another site banned", m_banned_other, -1, NULL, 0, 0},
	{"TQ-06 banned with no site list", m_banned_any_site,
	 TQ_FL_BANNED_SITE,
	 "bans 1 site(s), among them every one of the pilot's 1", 1, 1},
	{"TQ-06 one of the pilot's two sites banned", m_banned_one_of_two, -1,
	 NULL, 0, 0},
	{"TQ-06 both of the pilot's sites banned", m_banned_both,
	 TQ_FL_BANNED_SITE,
	 "bans 2 site(s), among them every one of the pilot's 2", 2, 2},
	{"TQ-06 banned, pilot gives no site", m_banned_no_site, -1, NULL, 0,
	 0},
	{"TQ-06 CE required and given", m_ce_in, -1, NULL, 0, 0},
	{"TQ-06 CE required, other given", m_ce_out, TQ_FL_GRID_CE,
	 "lists 1 value(s), none of the pilot's 1", 1, 1},
	{"TQ-06 CE required, none given", m_ce_none, -1, NULL, 0, 0},
	{"TQ-06 no CE required", m_ce_free, -1, NULL, 0, 0},
	{"TQ-06 platform required and given", m_plat_in, -1, NULL, 0, 0},
	{"TQ-06 platform required, other given", m_plat_out, TQ_FL_PLATFORM,
	 "lists 1 value(s), none of the pilot's 1", 1, 1},
	{"TQ-06 platform listed, pilot names none", m_plat_none, -1, NULL, 0,
	 0},
	{"TQ-06 no platform required", m_plat_free, -1, NULL, 0, 0},
	{"TQ-06 job type among the pilot's two", m_jt_in, -1, NULL, 0, 0},
	{"TQ-06 job type not the pilot's", m_jt_out, TQ_FL_JOB_TYPE,
	 "lists 1 value(s), none of the pilot's 1", 1, 1},
	{"TQ-06 job types, pilot names none", m_jt_none, -1, NULL, 0, 0},
	{"TQ-06 no job type listed", m_jt_free, -1, NULL, 0, 0},
	{"TQ-06 no tags, none offered", m_tag_none_none, -1, NULL, 0, 0},
	{"TQ-06 tag needed, none offered", m_tag_needed, TQ_FL_TAG,
	 "needs a tag the pilot does not offer (needs 1)", 1, TAG_MP},
	{"TQ-06 tag needed and offered", m_tag_offered, -1, NULL, 0, 0},
	{"TQ-06 one of two tags offered", m_tag_partly, TQ_FL_TAG,
	 "needs a tag the pilot does not offer (needs 2)", 2, TAG_WHOLE},
	{"TQ-06 tags ANY", m_tag_any, -1, NULL, 0, 0},
	{"TQ-06 required tag lacking", m_req_lacking, TQ_FL_REQUIRED_TAG,
	 "lacks a tag the pilot requires (has 1)", 1, TAG_GPU},
	{"TQ-06 required tag carried", m_req_carried, -1, NULL, 0, 0},
	{"TQ-06 required tag, TQ untagged", m_req_untagged,
	 TQ_FL_REQUIRED_TAG, "lacks a tag the pilot requires (has 0)", 0,
	 TAG_GPU},
	{"TQ-06 unknown required tag", m_req_unknown, TQ_FL_REQUIRED_TAG,
	 "lacks a tag the pilot requires (has 1)", 1, TQ_ID_UNKNOWN},
	{"TQ-06 pilot bans the TQ's site", m_ban_site, TQ_FL_BAN_SITE,
	 "lists every one of the 1 value(s) the pilot bans", 1, NONE},
	{"TQ-06 pilot bans one listed, one not", m_ban_site_partly, -1, NULL,
	 0, 0},
	{"TQ-06 pilot bans both listed", m_ban_site_all, TQ_FL_BAN_SITE,
	 "lists every one of the 2 value(s) the pilot bans", 2, NONE},
	{"TQ-06 pilot ban, TQ lists no site", m_ban_site_unlisted, -1, NULL, 0,
	 0},
	{"TQ-06 pilot bans an unknown value", m_ban_unknown, -1, NULL, 0, 0},
	{"TQ-06 pilot bans the CE", m_ban_ce, TQ_FL_BAN_GRID_CE,
	 "lists every one of the 1 value(s) the pilot bans", 1, NONE},
	{"TQ-06 pilot bans the platform", m_ban_plat, TQ_FL_BAN_PLATFORM,
	 "lists every one of the 1 value(s) the pilot bans", 1, NONE},
	{"TQ-06 pilot bans another platform", m_ban_plat_other, -1, NULL, 0,
	 0},
	{"TQ-06 pilot bans the pilot type", m_ban_pt, TQ_FL_BAN_PILOT_TYPE,
	 "lists every one of the 1 value(s) the pilot bans", 1, NONE},
	{"TQ-06 pilot bans the job type", m_ban_jt, TQ_FL_BAN_JOB_TYPE,
	 "lists every one of the 1 value(s) the pilot bans", 1, NONE},
	{"TQ-06 pilot bans the tag", m_ban_tag, TQ_FL_BAN_TAG,
	 "lists every one of the 1 value(s) the pilot bans", 1, NONE},
	{"TQ-06 pilot bans two CEs, TQ lists one", m_ban_ce_partly, -1, NULL,
	 0, 0},
	{"TQ-06 pilot bans two CEs, TQ lists both", m_ban_ce_all,
	 TQ_FL_BAN_GRID_CE,
	 "lists every one of the 2 value(s) the pilot bans", 2, NONE},
	{"TQ-06 pilot bans two platforms, TQ lists one", m_ban_plat_partly, -1,
	 NULL, 0, 0},
	{"TQ-06 pilot bans two platforms, TQ lists both", m_ban_plat_all,
	 TQ_FL_BAN_PLATFORM,
	 "lists every one of the 2 value(s) the pilot bans", 2, NONE},
	{"TQ-06 pilot bans two pilot types, TQ lists one", m_ban_pt_partly, -1,
	 NULL, 0, 0},
	{"TQ-06 pilot bans another job type", m_ban_jt_other, -1, NULL, 0, 0},
	{"TQ-06 pilot bans two job types, TQ lists one", m_ban_jt_partly, -1,
	 NULL, 0, 0},
	{"TQ-06 pilot bans a job type, TQ lists none", m_ban_jt_unlisted, -1,
	 NULL, 0, 0},
	{"TQ-06 pilot bans two tags, TQ carries one", m_ban_tag_partly, -1,
	 NULL, 0, 0},
	{"TQ-06 pilot bans two tags, TQ carries both", m_ban_tag_all,
	 TQ_FL_BAN_TAG, "lists every one of the 2 value(s) the pilot bans", 2,
	 NONE},
	{"TQ-06 pilot bans a tag, TQ untagged", m_ban_tag_untagged, -1, NULL,
	 0, 0},
	{"TQ-06 tags ANY, required tag lacking", m_req_tags_any_lacking,
	 TQ_FL_REQUIRED_TAG, "lacks a tag the pilot requires (has 1)", 1,
	 TAG_GPU},
	{"TQ-06 tags ANY, required tag carried", m_req_tags_any_carried, -1,
	 NULL, 0, 0},
	{"TQ-06 five sites, the TQ's last", m_site_five_last, -1, NULL, 0, 0},
	{"TQ-06 five sites, none the TQ's", m_site_five_none, TQ_FL_SITE,
	 "lists 2 value(s), none of the pilot's 5", 2, 5},
	{"TQ-06 submit pools, middlewares ignored", m_submission_only, -1,
	 NULL, 0, 0},
	{"TQ-06 first failing row reported (indexed first)", m_several,
	 TQ_FL_SITE, "lists 2 value(s), none of the pilot's 1", 2, 1},
};

/* TQ-04, TQ-05, TQ-06: every row through tq_check, tq_reason (rule, code,
** text, numbers) and a one-view tq_match whose counts and verdict agree. */
static void test_tq04_tq05_tq06_filter_rows(void **state)
{
	(void)state;
	struct gb_rng rng;
	gb_rng_seed(&rng, 4);
	for (size_t i = 0; i < sizeof(filter_rows) / sizeof(filter_rows[0]);
	     i++) {
		const struct filter_row *row = &filter_rows[i];
		struct fx f;
		fx_init(&f);
		row->mut(&f);
		int got = tq_check(&f.v, &f.r);
		if (got != row->want)
			fail_msg("%s: tq_check %d, want %d", row->name, got,
				 row->want);

		double w[1];
		uint8_t verdict[1];
		struct tq_result res;
		assert_int_equal(
			tq_match(&f.v, 1, &f.r, &rng, w, verdict, &res), GB_OK);
		if (row->want < 0) {
			assert_int_equal(res.chosen, 0);
			assert_int_equal(verdict[0], TQ_V_CHOSEN);
			continue;
		}
		assert_int_equal(res.chosen, -1);
		assert_int_equal(res.matched, 0);
		assert_int_equal(res.rejected[row->want], 1);
		assert_int_equal(verdict[0], row->want);

		struct dec_reason why;
		tq_reason(&f.v, &f.r, (enum tq_filter_id)row->want, &why);
		const struct tq_filter_desc *d =
			tq_filter((enum tq_filter_id)row->want);
		assert_string_equal(why.rule, d->rule);
		assert_string_equal(why.code, d->name);
		assert_null(why.str);
		char text[200];
		dec_reason_format(&why, text, sizeof(text));
		if (strcmp(text, row->text) != 0)
			fail_msg("%s: reason \"%s\", want \"%s\"", row->name,
				 text, row->text);
		if (why.v[0] != row->v0 || why.v[1] != row->v1)
			fail_msg("%s: reason numbers %g %g, want %g %g",
				 row->name, why.v[0], why.v[1], row->v0,
				 row->v1);
	}
	/* Not a filter: an empty reason. */
	struct fx f;
	struct dec_reason why;
	fx_init(&f);
	tq_reason(&f.v, &f.r, TQ_NFILTERS, &why);
	assert_null(why.rule);
	assert_null(why.fmt);
}

/* TQ-04..06: the table's order, names and rule IDs. */
static void test_tq04_filter_table(void **state)
{
	(void)state;
	static const char *const names[TQ_NFILTERS] = {
		"pilot_type",	  "site",	  "grid_ce",	  "platform",
		"job_type",	  "required_tag", "owner_group",  "owner_dn",
		"setup",	  "cpu_time",	  "banned_site",  "tag",
		"ban_site",	  "ban_grid_ce",  "ban_platform", "ban_pilot_type",
		"ban_job_type",	  "ban_tag"};
	static const char *const rules[TQ_NFILTERS] = {
		"TQ-06", "TQ-06", "TQ-06", "TQ-06", "TQ-06", "TQ-06",
		"TQ-04", "TQ-04", "TQ-05", "TQ-05", "TQ-06", "TQ-06",
		"TQ-06", "TQ-06", "TQ-06", "TQ-06", "TQ-06", "TQ-06"};
	for (int f = 0; f < TQ_NFILTERS; f++) {
		assert_string_equal(tq_filter((enum tq_filter_id)f)->name,
				    names[f]);
		assert_string_equal(tq_filter((enum tq_filter_id)f)->rule,
				    rules[f]);
	}
	assert_null(tq_filter(TQ_NFILTERS));
}

/* ---- TQ-07, TQ-08: choosing the queue and the job ------------------------ */

#define POOL 600

/* Views with one level each (or none), all passing the base resource. */
struct pool {
	struct tq_view v[POOL];
	struct tq_level lv[POOL];
	long long ids[POOL][TQ_PICK_FROM];
	uint32_t site[1], other[1];
	double w[POOL];
	uint8_t verdict[POOL];
	struct tq_resource r;
	size_t n;
};

static struct pool *pool_new(void)
{
	struct pool *p = calloc(1, sizeof(*p));
	assert_non_null(p);
	p->site[0] = SITE_CERN;
	p->r.setup = SETUP_PROD;
	p->r.cpu_time = 100000;
	p->r.has[TQ_P_SITE] = 1;
	p->r.want[TQ_P_SITE] = (struct tq_idset){p->site, 1};
	return p;
}

/* Add a view: njobs waiting at UserPriority 1, job ids from 1000 * (i+1). */
static struct tq_view *pool_add(struct pool *p, long long cpu, double prio,
				size_t njobs)
{
	assert_true(p->n < POOL);
	size_t i = p->n++;
	struct tq_view *v = &p->v[i];
	*v = (struct tq_view){.tq_id = (long long)i + 1,
			      .owner = OWNER_A,
			      .owner_group = GROUP_USER,
			      .setup = SETUP_PROD,
			      .cpu_time = cpu,
			      .priority = prio};
	v->set[TQ_F_SITES] = (struct tq_idset){p->site, 1};
	if (njobs == 0)
		return v;
	p->lv[i] = level(1, njobs, p->ids[i]);
	for (size_t j = 0; j < p->lv[i].nlowest; j++)
		p->ids[i][j] = 1000 * ((long long)i + 1) + (long long)j;
	v->levels = &p->lv[i];
	v->nlevels = 1;
	v->njobs = njobs;
	return v;
}

static void pool_match(struct pool *p, struct gb_rng *rng,
		       struct tq_result *res)
{
	int rc = tq_match(p->v, p->n, &p->r, rng, p->w, p->verdict, res);
	if (rc != GB_OK)
		fail_msg("tq_match: %s", gb_strerror(rc));
}

/* TQ-07: the highest CPU time among non-empty matches wins whatever the
** priorities; empty and rejected views do not raise the bar. */
static void test_tq07_highest_cpu_wins(void **state)
{
	(void)state;
	struct pool *p = pool_new();
	pool_add(p, 500, 1000, 5);	/* lower CPU, huge priority */
	pool_add(p, 5000, 0.001, 5);	/* the top non-empty */
	pool_add(p, 50000, 1, 0);	/* higher but empty */
	pool_add(p, 300000, 1, 5);	/* needs more than the pilot's */
	pool_add(p, 5000, 0.002, 5);	/* also at the top */
	struct gb_rng rng;
	gb_rng_seed(&rng, 7);
	long hits[5] = {0};
	struct tq_result res;
	for (int i = 0; i < 30000; i++) {
		pool_match(p, &rng, &res);
		assert_true(res.chosen == 1 || res.chosen == 4);
		hits[res.chosen]++;
	}
	assert_int_equal(res.matched, 4);
	assert_int_equal(res.empty, 1);
	assert_int_equal(res.entrants, 2);
	assert_true(res.top_cpu == 5000);
	assert_near(res.lottery_total, 0.003, 1e-12);
	assert_int_equal(res.rejected[TQ_FL_CPU_TIME], 1);
	assert_int_equal(p->verdict[0], TQ_V_LOWER_CPU);
	assert_int_equal(p->verdict[2], TQ_V_EMPTY);
	assert_int_equal(p->verdict[3], TQ_FL_CPU_TIME);
	assert_true(p->verdict[res.chosen] == TQ_V_CHOSEN);
	assert_true(p->verdict[res.chosen == 1 ? 4 : 1] == TQ_V_ENTRANT);
	/* 1/3 vs 2/3 by priority. */
	long obs[2] = {hits[1], hits[4]};
	const double want[2] = {1.0 / 3, 2.0 / 3};
	assert_true(chi2(obs, want, 2, 30000) < chi2_999[1]);
	free(p);
}

/* TQ-07: the lottery is exactly proportional to the priorities. With
** {1,1,1,1,10} the heavy queue must win 10/14 = 71.43%; DIRAC's ORDER BY
** RAND()/Priority gives it P(U/10 < min of four U) = 2(1 - 0.9^5) = 81.9%,
** which the same chi-square rejects outright. */
static void test_tq07_priority_lottery_exact(void **state)
{
	(void)state;
	static const double prio[5] = {1, 1, 1, 1, 10};
	const long n = 200000;
	struct pool *p = pool_new();
	for (int i = 0; i < 5; i++)
		pool_add(p, 86400, prio[i], 1);
	double exact[5];
	for (int i = 0; i < 5; i++)
		exact[i] = prio[i] / 14.0;

	struct gb_rng rng;
	gb_rng_seed(&rng, 20090216);
	long hits[5] = {0};
	struct tq_result res;
	for (long d = 0; d < n; d++) {
		pool_match(p, &rng, &res);
		assert_true(res.chosen >= 0 && res.chosen < 5);
		assert_true(res.job_id == 1000 * (res.chosen + 1));
		hits[res.chosen]++;
	}
	double c_exact = chi2(hits, exact, 5, n);
	if (!(c_exact < chi2_999[4]))
		fail_msg("TQ-07 lottery chi2 %.2f >= %.3f", c_exact,
			 chi2_999[4]);
	double heavy = 100.0 * (double)hits[4] / (double)n;
	if (fabs(heavy - 100.0 * 10 / 14) > 0.5)
		fail_msg("TQ-07 heavy queue won %.2f%%, want 71.43%%", heavy);
	assert_near(res.lottery_total, 14, 1e-12);

	/* The biased ordering: analytically 81.9% for the heavy queue... */
	double biased = 2.0 * (1.0 - pow(0.9, 5));
	assert_near(biased, 0.81902, 1e-5);
	assert_true(fabs(biased - 10.0 / 14) > 0.10);
	/* ...and simulated on the same number of draws it fails the test. */
	long bhits[5] = {0};
	for (long d = 0; d < n; d++) {
		int best = 0;
		double key = gb_rng_uniform(&rng) / prio[0];
		for (int i = 1; i < 5; i++) {
			double k = gb_rng_uniform(&rng) / prio[i];
			if (k < key) {
				key = k;
				best = i;
			}
		}
		bhits[best]++;
	}
	assert_near((double)bhits[4] / (double)n, biased, 0.01);
	assert_true(chi2(bhits, exact, 5, n) > 100 * chi2_999[4]);
	free(p);
}

/* TQ-07: a priority <= 0, NaN or infinite is no ticket; when no entrant has
** one the draw is uniform among the entrants. */
static void test_tq07_no_priority_is_uniform(void **state)
{
	(void)state;
	struct pool *p = pool_new();
	pool_add(p, 86400, 0, 1);
	pool_add(p, 86400, -1, 1);
	pool_add(p, 86400, NAN, 1);
	struct gb_rng rng;
	gb_rng_seed(&rng, 11);
	long hits[3] = {0};
	struct tq_result res;
	const long n = 60000;
	for (long d = 0; d < n; d++) {
		pool_match(p, &rng, &res);
		hits[res.chosen]++;
	}
	const double third[3] = {1.0 / 3, 1.0 / 3, 1.0 / 3};
	assert_true(chi2(hits, third, 3, n) < chi2_999[2]);
	assert_int_equal(res.entrants, 3);
	assert_near(res.lottery_total, 0, 0);

	/* One positive ticket takes every draw. */
	pool_add(p, 86400, 2, 1);
	pool_add(p, 86400, INFINITY, 1);
	for (int d = 0; d < 2000; d++) {
		pool_match(p, &rng, &res);
		assert_int_equal(res.chosen, 3);
	}
	assert_near(res.lottery_total, 2, 0);
	free(p);
}

/* TQ-08: UserPriority levels weigh njobs x max(priority, 1e-5). Levels of
** 300 jobs at 1, 100 at 3 and 50 at 9 weigh 300:300:450. */
static void test_tq08_level_lottery(void **state)
{
	(void)state;
	struct pool *p = pool_new();
	struct tq_view *v = pool_add(p, 86400, 1, 1);
	static long long ids[3][TQ_PICK_FROM];
	struct tq_level lv[3];
	static const int up[3] = {1, 3, 9};
	static const size_t nj[3] = {300, 100, 50};
	for (int j = 0; j < 3; j++) {
		for (int k = 0; k < TQ_PICK_FROM; k++)
			ids[j][k] = 100 * (j + 1) + k;
		lv[j] = level(up[j], nj[j], ids[j]);
	}
	v->levels = lv;
	v->nlevels = 3;
	v->njobs = 450;

	struct gb_rng rng;
	gb_rng_seed(&rng, 8);
	const long n = 200000;
	long hits[3] = {0};
	struct tq_result res;
	for (long d = 0; d < n; d++) {
		pool_match(p, &rng, &res);
		assert_true(res.level >= 0 && res.level < 3);
		/* the job comes from the drawn level's lowest ids */
		long long base = 100 * (res.level + 1);
		assert_true(res.job_id >= base && res.job_id < base + 10);
		hits[res.level]++;
	}
	const double want[3] = {2.0 / 7, 2.0 / 7, 3.0 / 7};
	double c = chi2(hits, want, 3, n);
	if (!(c < chi2_999[2]))
		fail_msg("TQ-08 level chi2 %.2f", c);

	/* UserPriority 0 is background, not never: 1000 jobs at 0 weigh
	** 1000 x 1e-5 = 0.01 against one job at 1: 0.99% of the draws. */
	lv[0] = level(0, 1000, ids[0]);
	lv[1] = level(1, 1, ids[1]);
	v->nlevels = 2;
	v->njobs = 1001;
	long bg[2] = {0};
	for (long d = 0; d < n; d++) {
		pool_match(p, &rng, &res);
		bg[res.level]++;
	}
	const double pbg[2] = {0.01 / 1.01, 1.0 / 1.01};
	assert_true(bg[0] > 0);
	assert_true(chi2(bg, pbg, 2, n) < chi2_999[1]);
	free(p);
}

/* TQ-08: a uniform pick among the ten lowest job ids of the level, never
** beyond them, and among all of them when fewer wait. */
static void test_tq08_ten_lowest_uniform(void **state)
{
	(void)state;
	struct pool *p = pool_new();
	pool_add(p, 86400, 1, 5000);
	struct gb_rng rng;
	gb_rng_seed(&rng, 10);
	const long n = 100000;
	long hits[TQ_PICK_FROM] = {0};
	struct tq_result res;
	for (long d = 0; d < n; d++) {
		pool_match(p, &rng, &res);
		long k = (long)(res.job_id - 1000);
		if (k < 0 || k >= TQ_PICK_FROM)
			fail_msg("TQ-08 job %lld is not among the ten lowest",
				 res.job_id);
		hits[k]++;
	}
	double tenth[TQ_PICK_FROM];
	for (int k = 0; k < TQ_PICK_FROM; k++) {
		tenth[k] = 0.1;
		assert_near((double)hits[k], 0.1 * (double)n, 0.05);
	}
	assert_true(chi2(hits, tenth, TQ_PICK_FROM, n) < chi2_999[9]);

	/* Three waiting jobs: each of them, nothing else. */
	p->lv[0].njobs = 3;
	p->lv[0].nlowest = 3;
	p->v[0].njobs = 3;
	long three[3] = {0};
	for (long d = 0; d < 30000; d++) {
		pool_match(p, &rng, &res);
		assert_true(res.job_id >= 1000 && res.job_id < 1003);
		three[res.job_id - 1000]++;
	}
	const double p3[3] = {1.0 / 3, 1.0 / 3, 1.0 / 3};
	assert_true(chi2(three, p3, 3, 30000) < chi2_999[2]);
	free(p);
}

/* The same seed gives the same choices (reproducible explain). */
static void test_tq07_tq08_reproducible(void **state)
{
	(void)state;
	struct pool *p = pool_new();
	for (int i = 0; i < 20; i++)
		pool_add(p, i % 2 ? 86400 : 5000, 1 + i, 50 + (size_t)i);
	struct gb_rng a, b;
	gb_rng_seed(&a, 99);
	gb_rng_seed(&b, 99);
	struct tq_result ra, rb;
	for (int d = 0; d < 1000; d++) {
		pool_match(p, &a, &ra);
		pool_match(p, &b, &rb);
		assert_int_equal(ra.chosen, rb.chosen);
		assert_true(ra.job_id == rb.job_id);
		assert_true(p->v[ra.chosen].cpu_time == 86400);
	}
	free(p);
}

/* tq_match refuses NULL arguments and a matching view whose levels
** disagree with its job count; a view the filters drop is not read. */
static void test_tq08_invalid_views(void **state)
{
	(void)state;
	struct pool *p = pool_new();
	struct tq_view *v = pool_add(p, 86400, 1, 5);
	struct gb_rng rng;
	gb_rng_seed(&rng, 1);
	struct tq_result res;
	assert_int_equal(tq_match(p->v, 1, NULL, &rng, p->w, NULL, &res),
			 GB_EINVAL);
	assert_int_equal(tq_match(p->v, 1, &p->r, NULL, p->w, NULL, &res),
			 GB_EINVAL);
	assert_int_equal(tq_match(p->v, 1, &p->r, &rng, NULL, NULL, &res),
			 GB_EINVAL);
	assert_int_equal(tq_match(NULL, 1, &p->r, &rng, p->w, NULL, &res),
			 GB_EINVAL);
	assert_int_equal(tq_match(p->v, 1, &p->r, &rng, p->w, NULL, NULL),
			 GB_EINVAL);

	v->njobs = 6; /* levels say 5 */
	assert_int_equal(tq_match(p->v, 1, &p->r, &rng, p->w, NULL, &res),
			 GB_EINVAL);
	assert_int_equal(res.chosen, -1);
	v->njobs = 5;
	p->lv[0].nlowest = 4; /* must be min(5, 10) */
	assert_int_equal(tq_match(p->v, 1, &p->r, &rng, p->w, NULL, &res),
			 GB_EINVAL);
	p->lv[0].nlowest = 5;
	v->levels = NULL;
	assert_int_equal(tq_match(p->v, 1, &p->r, &rng, p->w, NULL, &res),
			 GB_EINVAL);
	/* Dropped by the site filter: its levels do not matter. */
	p->other[0] = SITE_PIC;
	p->r.want[TQ_P_SITE] = (struct tq_idset){p->other, 1};
	assert_int_equal(tq_match(p->v, 1, &p->r, &rng, p->w, NULL, &res),
			 GB_OK);
	assert_int_equal(res.rejected[TQ_FL_SITE], 1);
	/* No views at all: nothing matched, not an error. */
	assert_int_equal(tq_match(NULL, 0, &p->r, &rng, NULL, NULL, &res),
			 GB_OK);
	assert_int_equal(res.chosen, -1);
	free(p);
}

/* ---- TQ-10: telling the pilot why --------------------------------------- */

/* TQ-10: no match, with the count of each failing filter. */
static void test_tq10_no_match_text(void **state)
{
	(void)state;
	struct pool *p = pool_new();
	static const uint32_t other[] = {SITE_RAL}, banned[] = {SITE_CERN};
	for (int i = 0; i < 500; i++) {
		struct tq_view *v = pool_add(p, 5000, 1, 3);
		if (i < 120) {
			v->cpu_time = 300000; /* pilot offers 100000 */
		} else if (i < 497) {
			v->set[TQ_F_SITES] = (struct tq_idset){other, 1};
		} else {
			v->set[TQ_F_BANNED_SITES] =
				(struct tq_idset){banned, 1};
			v->set[TQ_F_SITES].n = 0;
		}
	}
	struct gb_rng rng;
	gb_rng_seed(&rng, 10);
	struct tq_result res;
	pool_match(p, &rng, &res);
	assert_int_equal(res.chosen, -1);
	assert_true(res.job_id == 0);
	assert_int_equal(res.level, -1);
	assert_int_equal(res.in, 500);
	assert_int_equal(res.rejected[TQ_FL_CPU_TIME], 120);
	assert_int_equal(res.rejected[TQ_FL_SITE], 377);
	assert_int_equal(res.rejected[TQ_FL_BANNED_SITE], 3);
	assert_int_equal(res.matched, 0);
	char buf[256];
	int len = tq_result_format(&res, buf, sizeof(buf));
	assert_string_equal(buf, "no task queue matched: 500 considered; "
				 "site excluded 377, cpu_time excluded 120, "
				 "banned_site excluded 3");
	assert_int_equal(len, (int)strlen(buf));
	assert_string_equal(tq_result_code(&res), "no_tq_matched");

	/* Truncation keeps the full length and a terminated prefix. */
	char small[16];
	assert_int_equal(tq_result_format(&res, small, sizeof(small)), len);
	assert_string_equal(small, "no task queue m");

	/* Nothing to consider at all. */
	assert_int_equal(tq_match(NULL, 0, &p->r, &rng, NULL, NULL, &res),
			 GB_OK);
	tq_result_format(&res, buf, sizeof(buf));
	assert_string_equal(buf, "no task queue matched: 0 considered");
	free(p);
}

/* TQ-10: everything that matched is empty. */
static void test_tq10_all_empty_text(void **state)
{
	(void)state;
	struct pool *p = pool_new();
	for (int i = 0; i < 4; i++)
		pool_add(p, 5000 * (i + 1), 1, 0);
	pool_add(p, 300000, 1, 7); /* rejected: more CPU than offered */
	struct gb_rng rng;
	gb_rng_seed(&rng, 3);
	struct tq_result res;
	pool_match(p, &rng, &res);
	assert_int_equal(res.chosen, -1);
	assert_int_equal(res.matched, 4);
	assert_int_equal(res.empty, 4);
	assert_int_equal(res.entrants, 0);
	assert_true(res.top_cpu == 0);
	char buf[128];
	tq_result_format(&res, buf, sizeof(buf));
	assert_string_equal(buf, "all 4 matching task queues are empty");
	assert_string_equal(tq_result_code(&res), "all_empty");

	p->n = 1;
	pool_match(p, &rng, &res);
	tq_result_format(&res, buf, sizeof(buf));
	assert_string_equal(buf, "the 1 matching task queue is empty");
	assert_string_equal(tq_result_code(&res), "all_empty");
	free(p);
}

/* TQ-10: the summary of a successful match. */
static void test_tq10_matched_text(void **state)
{
	(void)state;
	struct pool *p = pool_new();
	for (int i = 0; i < 12; i++)
		pool_add(p, i < 3 ? 86400 : 21600, 1, 4);
	pool_add(p, 86400, 1, 0);   /* matched, empty */
	pool_add(p, 500000, 1, 4);  /* rejected */
	struct gb_rng rng;
	gb_rng_seed(&rng, 12);
	struct tq_result res;
	pool_match(p, &rng, &res);
	assert_true(res.chosen >= 0 && res.chosen < 3);
	assert_int_equal(res.matched, 13);
	assert_int_equal(res.empty, 1);
	assert_int_equal(res.entrants, 3);
	char buf[128];
	tq_result_format(&res, buf, sizeof(buf));
	assert_string_equal(
		buf, "matched: 13 task queues, 3 at cpu_time 86400 in the "
		     "lottery");
	assert_string_equal(tq_result_code(&res), "matched");

	p->n = 1;
	pool_match(p, &rng, &res);
	tq_result_format(&res, buf, sizeof(buf));
	assert_string_equal(buf, "matched: 1 task queue, 1 at cpu_time 86400 "
				 "in the lottery");
	assert_int_equal(tq_result_format(NULL, buf, sizeof(buf)), GB_EINVAL);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tq02_cpu_segments),
		cmocka_unit_test(test_tq02_segment_lists_valid),
		cmocka_unit_test(test_tq03_field_names),
		cmocka_unit_test(test_tq06_any_word),
		cmocka_unit_test(test_tq03_strset_normalise),
		cmocka_unit_test(test_tq01_canon_layout),
		cmocka_unit_test(test_tq01_canon_permuted_sets_equal),
		cmocka_unit_test(test_tq01_canon_fields_differ_unforgeable),
		cmocka_unit_test(test_tq01_canon_errors),
		cmocka_unit_test(test_tq04_tq05_tq06_filter_rows),
		cmocka_unit_test(test_tq04_filter_table),
		cmocka_unit_test(test_tq07_highest_cpu_wins),
		cmocka_unit_test(test_tq07_priority_lottery_exact),
		cmocka_unit_test(test_tq07_no_priority_is_uniform),
		cmocka_unit_test(test_tq08_level_lottery),
		cmocka_unit_test(test_tq08_ten_lowest_uniform),
		cmocka_unit_test(test_tq07_tq08_reproducible),
		cmocka_unit_test(test_tq08_invalid_views),
		cmocka_unit_test(test_tq10_no_match_text),
		cmocka_unit_test(test_tq10_all_empty_text),
		cmocka_unit_test(test_tq10_matched_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
