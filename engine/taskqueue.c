/*
** taskqueue.c — DIRAC task queues: the canonical signature and CPU segments
** of a submission (TQ-01..03) and the matching of one pilot against the
** in-memory views (TQ-04..08, TQ-10).
**
** Shape. Matching runs for every pilot over ~500 views (each listing ~33
** sites and ~17 platforms), so it is two linear passes over the caller's
** arrays with no allocation: pass 1 runs the filter table and records, in
** the caller's `weights` scratch, either -1 (not a candidate) or the
** view's usable priority; pass 2 keeps only the highest CPU time (TQ-07).
** The draw itself is gb_rng_weighted over that scratch. Set membership is
** a branch-free binary search over the sorted id arrays the index keeps,
** every filter row runs on every view (see fail_mask: no unpredictable
** branch per filter), and the rejection reasons are not formatted while
** matching: tq_reason builds them only when asked. 500 LHCb-like views
** take ~10 us per pilot.
**
** The filter table tq_filters[] has one row per enum tq_filter_id, in the
** enum's order, each with its rule ID and its own function; tq_check
** returns the first row that rejects, which is also the row that gets the
** view in the TQ-10 counts. A new requirement is a new row here.
**
** Interpretations (where the seed and RULES.md leave room):
** - TQ-04 (DIRAC's __generateTQMatchSQL): a pilot is private when it
**   names owner groups (a string or a list); the TQ's group must be one
**   of them. Only when it also names DNs does the owner count: a TQ of a
**   JOB_SHARING group matches whatever its owner, a TQ of another group
**   only when its owner is one of the DNs. Groups without DNs get their
**   groups' TQs whatever the owner. (DIRAC's Matcher since the
**   OwnerDN->Owner rename seems to drop a private pilot's owner
**   condition; we keep it, see the README's interpretations.)
** - TQ-05: setup must be equal; a TQ needing more CPU time than the slot
**   offers (TQ cpu_time > pilot's) is dropped, equality passes.
** - TQ-06, as DIRAC's TaskQueueDB: site, gridCE, platform, pilotType and
**   jobType are lists on the pilot; absent, empty or ANY is no constraint
**   (the caller resolves that into has[]); otherwise a TQ passes when it
**   lists no value for the field or shares one with the pilot. A TQ's
**   banned sites count only when the pilot's site constrains, and drop it
**   only when every site the pilot gives is banned. Tags: every tag of
**   the TQ must be among the pilot's (ANY lifts it; no tags offered means
**   only TQs without tags), and the TQ must carry every required tag. The
**   pilot's own bans drop a TQ only when it lists every banned value.
**   Submit pools and grid middlewares are never matched (the seed: "only
**   used by the pilot submission mechanism").
** - TQ_ID_UNKNOWN (a pilot value no TQ uses) equals nothing and is in no
**   set, so an unknown setup or site matches only where nothing is
**   required, an unknown required tag matches nothing and an unknown
**   banned value bans nothing.
** - The filters an index can evaluate from the TQs' sets alone come first
**   in the table (TQ_FL_NINDEXED), so tq_match_among, given what such an
**   index cut, counts every TQ under the same filter as a full scan.
** - TQ-07: an entrant is a view that passes every filter, has waiting jobs
**   and has the highest CPU time among such views (empty TQs do not raise
**   the bar). The lottery is exactly proportional to the priority (one
**   uniform draw over the cumulative sum), not DIRAC's ORDER BY
**   RAND()/Priority, which over-favours heavy queues: with priorities
**   {1,1,1,1,10} the heavy one wins 81.9% instead of 10/14 = 71.4%. A
**   priority that is NaN, infinite or <= 0 gives no ticket; when no
**   entrant has a ticket the pick is uniform among the entrants, so a
**   queue is not starved because its priority was not computed yet.
** - TQ-08: each waiting job is one ticket weighted by its UserPriority
**   (max(UserPriority, TQ_MIN_JOB_WEIGHT), so priority 0 is background,
**   not never), hence a level weighs njobs x that; then a uniform pick
**   among the level's TQ_PICK_FROM lowest ids, as DIRAC does to keep
**   claims of concurrent matchers from colliding on the single lowest id.
** - tq_match checks the levels of the views that pass the filters (the
**   only ones it reads levels from); the sets are trusted to be what
**   struct tq_idset promises (sorted, v non-NULL when n > 0), as the
**   index builds them.
*/
#include "taskqueue.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_error.h"

const char *const tq_field_names[TQ_NFIELDS] = {
	[TQ_F_SITES] = "sites",
	[TQ_F_BANNED_SITES] = "bannedSites",
	[TQ_F_GRID_CES] = "gridCEs",
	[TQ_F_PLATFORMS] = "platforms",
	[TQ_F_PILOT_TYPES] = "pilotTypes",
	[TQ_F_SUBMIT_POOLS] = "submitPools",
	[TQ_F_GRID_MIDDLEWARES] = "gridMiddlewares",
	[TQ_F_JOB_TYPES] = "jobTypes",
	[TQ_F_TAGS] = "tags",
};

const enum tq_field tq_pfield_set[TQ_NPFIELDS] = {
	[TQ_P_SITE] = TQ_F_SITES,
	[TQ_P_GRID_CE] = TQ_F_GRID_CES,
	[TQ_P_PLATFORM] = TQ_F_PLATFORMS,
	[TQ_P_PILOT_TYPE] = TQ_F_PILOT_TYPES,
	[TQ_P_JOB_TYPE] = TQ_F_JOB_TYPES,
	[TQ_P_TAG] = TQ_F_TAGS,
};

const char *const tq_pfield_names[TQ_NPFIELDS] = {
	"site", "gridCE", "platform", "pilotType", "jobType", "tags",
};

const char *const tq_pfield_ban_names[TQ_NPFIELDS] = {
	"bannedSite",	   "bannedGridCE",  "bannedPlatform",
	"bannedPilotType", "bannedJobType", "bannedTag",
};

const enum tq_filter_id tq_pfield_filter[TQ_NPFIELDS] = {
	TQ_FL_SITE,	  TQ_FL_GRID_CE, TQ_FL_PLATFORM,
	TQ_FL_PILOT_TYPE, TQ_FL_JOB_TYPE, TQ_FL_TAG,
};

const enum tq_filter_id tq_pfield_ban_filter[TQ_NPFIELDS] = {
	TQ_FL_BAN_SITE,	      TQ_FL_BAN_GRID_CE,  TQ_FL_BAN_PLATFORM,
	TQ_FL_BAN_PILOT_TYPE, TQ_FL_BAN_JOB_TYPE, TQ_FL_BAN_TAG,
};

/* DIRAC compares "any" ignoring case (its test sends "ANY" and "aNy"). */
int tq_is_any(const char *s)
{
	return s != NULL && (s[0] == 'A' || s[0] == 'a') &&
	       (s[1] == 'N' || s[1] == 'n') && (s[2] == 'Y' || s[2] == 'y') &&
	       s[3] == '\0';
}

const long long tq_default_segments[4] = {500, 5000, 50000, 300000};

/* ---- submission: TQ-01..03 -------------------------------------------- */

int tq_segments_valid(const long long *seg, size_t n)
{
	if (seg == NULL || n < 1 || n > TQ_MAX_SEGMENTS)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (seg[i] <= 0 || (i > 0 && seg[i] <= seg[i - 1]))
			return 0;
	return 1;
}

/* At most TQ_MAX_SEGMENTS values, so a linear scan beats a binary search.
** A NULL or empty list (a caller bug) gives 0, which tq_canon refuses. */
long long tq_cpu_segment(long long cpu_time, const long long *seg, size_t n)
{
	if (seg == NULL || n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (cpu_time <= seg[i])
			return seg[i];
	return seg[n - 1];
}

/* strcmp order with NULL first, so that normalising a set holding a NULL
** does not crash and tq_canon can still refuse it. */
static int cmp_str(const void *a, const void *b)
{
	const char *x = *(const char *const *)a;
	const char *y = *(const char *const *)b;
	if (x == NULL || y == NULL)
		return (x != NULL) - (y != NULL);
	return strcmp(x, y);
}

static int str_same(const char *x, const char *y)
{
	return x == y || (x != NULL && y != NULL && strcmp(x, y) == 0);
}

void tq_strset_normalise(const char **v, size_t *n)
{
	if (v == NULL || n == NULL || *n < 2)
		return;
	qsort((void *)v, *n, sizeof(v[0]), cmp_str);
	size_t k = 1;
	for (size_t i = 1; i < *n; i++)
		if (!str_same(v[i], v[k - 1]))
			v[k++] = v[i];
	*n = k;
}

/* Output cursor for tq_canon: keeps counting past the end so the caller
** learns about overflow once, at the end. */
struct canon_out {
	char *buf;
	size_t len, pos;
};

static void canon_put(struct canon_out *o, const char *s, size_t n)
{
	if (o->pos < o->len && n > 0) {
		size_t room = o->len - o->pos;
		memcpy(o->buf + o->pos, s, n < room ? n : room);
	}
	o->pos += n;
}

static void canon_num(struct canon_out *o, long long x)
{
	char tmp[24];
	int k = snprintf(tmp, sizeof(tmp), "%lld", x);
	canon_put(o, tmp, (size_t)k);
}

/* "<len>:<bytes>": the length makes every value self-delimiting, so no
** content (";", "=", ",", digits) can be read as a separator. */
static void canon_str(struct canon_out *o, const char *s)
{
	size_t n = strlen(s);
	canon_num(o, (long long)n);
	canon_put(o, ":", 1);
	canon_put(o, s, n);
}

static void canon_key(struct canon_out *o, const char *key)
{
	canon_put(o, key, strlen(key));
	canon_put(o, "=", 1);
}

static int set_ok(const struct tq_strset *s)
{
	if (s->n > 0 && s->v == NULL)
		return 0;
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] == NULL ||
		    (i > 0 && strcmp(s->v[i - 1], s->v[i]) >= 0))
			return 0;
	return 1;
}

/*
** Layout: owner=L:s;ownerGroup=L:s;setup=L:s;cpuTime=N; then per field in
** enum order name=COUNT[L:s,L:s]; e.g. "sites=2[4:CERN,3:RAL];". The count
** and the lengths make the text a prefix-free encoding of the definition,
** so equal text means equal definition and vice versa.
*/
int tq_canon(const struct tq_def *d, char *buf, size_t len, size_t *outlen)
{
	if (d == NULL || buf == NULL || outlen == NULL || d->owner == NULL ||
	    d->owner_group == NULL || d->setup == NULL || d->cpu_time <= 0)
		return GB_EINVAL;
	for (int f = 0; f < TQ_NFIELDS; f++)
		if (!set_ok(&d->set[f]))
			return GB_EINVAL;

	struct canon_out o = {buf, len, 0};
	canon_key(&o, "owner");
	canon_str(&o, d->owner);
	canon_put(&o, ";", 1);
	canon_key(&o, "ownerGroup");
	canon_str(&o, d->owner_group);
	canon_put(&o, ";", 1);
	canon_key(&o, "setup");
	canon_str(&o, d->setup);
	canon_put(&o, ";", 1);
	canon_key(&o, "cpuTime");
	canon_num(&o, d->cpu_time);
	canon_put(&o, ";", 1);
	for (int f = 0; f < TQ_NFIELDS; f++) {
		const struct tq_strset *s = &d->set[f];
		/* fields added later appear only when set: old TQs keep their
		** signature (and their UNIQUE hash in the store) */
		if (f >= TQ_F_JOB_TYPES && s->n == 0)
			continue;
		canon_key(&o, tq_field_names[f]);
		canon_num(&o, (long long)s->n);
		canon_put(&o, "[", 1);
		for (size_t i = 0; i < s->n; i++) {
			if (i > 0)
				canon_put(&o, ",", 1);
			canon_str(&o, s->v[i]);
		}
		canon_put(&o, "];", 2);
	}
	*outlen = o.pos;
	if (o.pos >= len) {
		if (len > 0)
			buf[len - 1] = '\0';
		return GB_ETOOBIG;
	}
	buf[o.pos] = '\0';
	return GB_OK;
}

/* ---- filters: TQ-04..06 ------------------------------------------------ */

/* Equal interned ids; TQ_ID_UNKNOWN equals nothing, not even itself. */
static inline int id_eq(uint32_t a, uint32_t b)
{
	return a == b && a != TQ_ID_UNKNOWN;
}

/*
** Binary search of a sorted id set (~33 sites: six probes). Branch-free:
** the probe moves the base with a conditional move, so the unpredictable
** "left or right" costs no misprediction (measured on 500 views: ~23 ->
** ~19 us per match). Invariant: if x is in the set it lies in
** [b, b + len).
*/
static inline int id_in(const struct tq_idset *s, uint32_t x)
{
	if (s->n == 0 || x == TQ_ID_UNKNOWN)
		return 0;
	const uint32_t *b = s->v;
	size_t len = s->n;
	while (len > 1) {
		size_t half = len / 2;
		b = b[half] <= x ? b + half : b;
		len -= half;
	}
	return *b == x;
}

/* 1 when the sorted sets a and b share a value (a merge walk; the pilot
** gives one to a few values, the TQ a few dozen, so a binary search of
** the TQ's set per pilot value when the pilot gives few). */
static inline int ids_meet(const struct tq_idset *tq, const struct tq_idset *p)
{
	if (p->n <= 4) {
		int hit = 0;
		for (size_t i = 0; i < p->n; i++)
			hit |= id_in(tq, p->v[i]);
		return hit;
	}
	size_t i = 0, j = 0;
	while (i < tq->n && j < p->n) {
		if (tq->v[i] == p->v[j])
			return 1;
		if (tq->v[i] < p->v[j])
			i++;
		else
			j++;
	}
	return 0;
}

/* Index of the first value of `sub` not in `sup`, or sub->n when every
** one is (an empty sub is a subset of anything). */
static inline size_t first_missing(const struct tq_idset *sub,
				   const struct tq_idset *sup)
{
	for (size_t i = 0; i < sub->n; i++)
		if (!id_in(sup, sub->v[i]))
			return i;
	return sub->n;
}

/* "Shares a value" (TQ-06): a pilot that does not constrain the field
** takes anything; a TQ with no values for it takes any pilot; else they
** must share one. */
static inline int shares(const struct tq_view *v, const struct tq_resource *r,
			 enum tq_pfield pf)
{
	const struct tq_idset *s = &v->set[tq_pfield_set[pf]];
	return !r->has[pf] || s->n == 0 || ids_meet(s, &r->want[pf]);
}

/* A pilot's ban (TQ-06): the TQ is dropped only when it lists every value
** the pilot bans (DIRAC ORs the per-value NOT IN tests). */
static inline int ban_ok(const struct tq_view *v, const struct tq_resource *r,
			 enum tq_pfield pf)
{
	const struct tq_idset *b = &r->banned[pf];
	return b->n == 0 ||
	       first_missing(b, &v->set[tq_pfield_set[pf]]) < b->n;
}

/* Each filter returns 1 when the view passes, 0 when it is dropped. */
typedef int (*tq_filter_fn)(const struct tq_view *v,
			    const struct tq_resource *r);

/* TQ-06 */
static int f_pilot_type(const struct tq_view *v, const struct tq_resource *r)
{
	return shares(v, r, TQ_P_PILOT_TYPE);
}

/* TQ-06 */
static int f_site(const struct tq_view *v, const struct tq_resource *r)
{
	return shares(v, r, TQ_P_SITE);
}

/* TQ-06 */
static int f_grid_ce(const struct tq_view *v, const struct tq_resource *r)
{
	return shares(v, r, TQ_P_GRID_CE);
}

/* TQ-06 */
static int f_platform(const struct tq_view *v, const struct tq_resource *r)
{
	return shares(v, r, TQ_P_PLATFORM);
}

/* TQ-06 */
static int f_job_type(const struct tq_view *v, const struct tq_resource *r)
{
	return shares(v, r, TQ_P_JOB_TYPE);
}

/* TQ-06: the TQ carries every tag the pilot requires. */
static int f_required_tag(const struct tq_view *v, const struct tq_resource *r)
{
	return first_missing(&r->required, &v->set[TQ_F_TAGS]) ==
	       r->required.n;
}

/* TQ-04: a private pilot runs only its groups' jobs. */
static int f_owner_group(const struct tq_view *v, const struct tq_resource *r)
{
	return r->groups.n == 0 || id_in(&r->groups, v->owner_group);
}

/* TQ-04: ...and, when it also names DNs, only their jobs unless the TQ's
** group shares jobs (DIRAC's OR over the groups of "OwnerGroup = g" for a
** JOB_SHARING g, else "Owner = o AND OwnerGroup = g"). */
static int f_owner_dn(const struct tq_view *v, const struct tq_resource *r)
{
	if (r->groups.n == 0 || r->owners.n == 0)
		return 1;
	return id_in(&r->js_groups, v->owner_group) ||
	       id_in(&r->owners, v->owner);
}

/* TQ-05 */
static int f_setup(const struct tq_view *v, const struct tq_resource *r)
{
	return id_eq(v->setup, r->setup);
}

/* TQ-05: the TQ's CPU segment must fit in the slot. */
static int f_cpu_time(const struct tq_view *v, const struct tq_resource *r)
{
	return v->cpu_time <= r->cpu_time;
}

/* TQ-06: the TQ's banned sites count only when the pilot's site
** constrains the match, and drop the TQ only when every site the pilot
** gives is banned. */
static int f_banned_site(const struct tq_view *v, const struct tq_resource *r)
{
	const struct tq_idset *w = &r->want[TQ_P_SITE];
	return !r->has[TQ_P_SITE] ||
	       first_missing(w, &v->set[TQ_F_BANNED_SITES]) < w->n;
}

/* TQ-06: every tag of the TQ is among the pilot's (ANY: no test). */
static int f_tag(const struct tq_view *v, const struct tq_resource *r)
{
	const struct tq_idset *t = &v->set[TQ_F_TAGS];
	return !r->has[TQ_P_TAG] || first_missing(t, &r->want[TQ_P_TAG]) == t->n;
}

static int f_ban_site(const struct tq_view *v, const struct tq_resource *r)
{
	return ban_ok(v, r, TQ_P_SITE);
}

static int f_ban_grid_ce(const struct tq_view *v, const struct tq_resource *r)
{
	return ban_ok(v, r, TQ_P_GRID_CE);
}

static int f_ban_platform(const struct tq_view *v, const struct tq_resource *r)
{
	return ban_ok(v, r, TQ_P_PLATFORM);
}

static int f_ban_pilot_type(const struct tq_view *v,
			    const struct tq_resource *r)
{
	return ban_ok(v, r, TQ_P_PILOT_TYPE);
}

static int f_ban_job_type(const struct tq_view *v, const struct tq_resource *r)
{
	return ban_ok(v, r, TQ_P_JOB_TYPE);
}

static int f_ban_tag(const struct tq_view *v, const struct tq_resource *r)
{
	return ban_ok(v, r, TQ_P_TAG);
}

struct tq_filter_row {
	struct tq_filter_desc d;
	tq_filter_fn fn;
};

/* The order is the enum's: it decides which row a view that fails several
** is counted under (TQ-10) and which reason it gets. Since every row runs
** on every view (fail_mask), the order costs nothing in speed. */
static const struct tq_filter_row tq_filters[] = {
	[TQ_FL_PILOT_TYPE] = {{"pilot_type", "TQ-06"}, f_pilot_type},
	[TQ_FL_SITE] = {{"site", "TQ-06"}, f_site},
	[TQ_FL_GRID_CE] = {{"grid_ce", "TQ-06"}, f_grid_ce},
	[TQ_FL_PLATFORM] = {{"platform", "TQ-06"}, f_platform},
	[TQ_FL_JOB_TYPE] = {{"job_type", "TQ-06"}, f_job_type},
	[TQ_FL_REQUIRED_TAG] = {{"required_tag", "TQ-06"}, f_required_tag},
	[TQ_FL_OWNER_GROUP] = {{"owner_group", "TQ-04"}, f_owner_group},
	[TQ_FL_OWNER_DN] = {{"owner_dn", "TQ-04"}, f_owner_dn},
	[TQ_FL_SETUP] = {{"setup", "TQ-05"}, f_setup},
	[TQ_FL_CPU_TIME] = {{"cpu_time", "TQ-05"}, f_cpu_time},
	[TQ_FL_BANNED_SITE] = {{"banned_site", "TQ-06"}, f_banned_site},
	[TQ_FL_TAG] = {{"tag", "TQ-06"}, f_tag},
	[TQ_FL_BAN_SITE] = {{"ban_site", "TQ-06"}, f_ban_site},
	[TQ_FL_BAN_GRID_CE] = {{"ban_grid_ce", "TQ-06"}, f_ban_grid_ce},
	[TQ_FL_BAN_PLATFORM] = {{"ban_platform", "TQ-06"}, f_ban_platform},
	[TQ_FL_BAN_PILOT_TYPE] = {{"ban_pilot_type", "TQ-06"},
				  f_ban_pilot_type},
	[TQ_FL_BAN_JOB_TYPE] = {{"ban_job_type", "TQ-06"}, f_ban_job_type},
	[TQ_FL_BAN_TAG] = {{"ban_tag", "TQ-06"}, f_ban_tag},
};

_Static_assert(sizeof(tq_filters) / sizeof(tq_filters[0]) == TQ_NFILTERS,
	       "tq_filters[] needs one row per enum tq_filter_id");

const struct tq_filter_desc *tq_filter(enum tq_filter_id f)
{
	if ((unsigned)f >= TQ_NFILTERS)
		return NULL;
	return &tq_filters[f].d;
}

/* Index of the lowest set bit of m != 0. */
static inline int lowest_bit(unsigned m)
{
#if defined(__GNUC__)
	return __builtin_ctz(m);
#else
	int i = 0;
	while (!(m & 1u)) {
		m >>= 1;
		i++;
	}
	return i;
#endif
}

/*
** The table walk, as a bit mask of the rows that reject (bit f = row f),
** so that tq_check's "first failing filter" is the lowest bit. Every row
** runs, without short-circuit: filters are pure, and with no branch on
** each verdict the CPU overlaps the binary searches of consecutive views
** instead of stalling on a mispredicted site or platform test. Measured
** on 500 LHCb-like views, with levels checked only for matching views
** (levels_ok), this takes a match from ~19 us to ~10 us. The
** unroll lets the compiler call the rows directly, not through the table.
*/
static inline unsigned fail_mask(const struct tq_view *v,
				 const struct tq_resource *r)
{
	unsigned m = 0;
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 32
#endif
	for (int f = 0; f < TQ_NFILTERS; f++)
		m |= (unsigned)!tq_filters[f].fn(v, r) << f;
	return m;
}

static inline int check_view(const struct tq_view *v,
			     const struct tq_resource *r)
{
	unsigned m = fail_mask(v, r);
	return m ? lowest_bit(m) : -1;
}

int tq_check(const struct tq_view *v, const struct tq_resource *r)
{
	return check_view(v, r);
}

/*
** Templates carry no %s (str stays NULL): ids are not names, and the
** caller that prints names takes the ids from v[] (tq_reason in
** taskqueue.h says which).
*/
void tq_reason(const struct tq_view *v, const struct tq_resource *r,
	       enum tq_filter_id f, struct dec_reason *out)
{
	if (out == NULL)
		return;
	memset(out, 0, sizeof(*out));
	if (v == NULL || r == NULL || (unsigned)f >= TQ_NFILTERS)
		return;
	out->rule = tq_filters[f].d.rule;
	out->code = tq_filters[f].d.name;
	const struct tq_idset *tags = &v->set[TQ_F_TAGS];
	size_t k;
	switch (f) {
	case TQ_FL_PILOT_TYPE:
	case TQ_FL_SITE:
	case TQ_FL_GRID_CE:
	case TQ_FL_PLATFORM:
	case TQ_FL_JOB_TYPE: {
		enum tq_pfield pf = f == TQ_FL_PILOT_TYPE ? TQ_P_PILOT_TYPE
				    : f == TQ_FL_SITE     ? TQ_P_SITE
				    : f == TQ_FL_GRID_CE  ? TQ_P_GRID_CE
				    : f == TQ_FL_PLATFORM ? TQ_P_PLATFORM
							  : TQ_P_JOB_TYPE;
		out->fmt = "lists %.0f value(s), none of the pilot's %.0f";
		out->v[0] = (double)v->set[tq_pfield_set[pf]].n;
		out->v[1] = (double)r->want[pf].n;
		return;
	}
	case TQ_FL_REQUIRED_TAG:
		k = first_missing(&r->required, tags);
		out->fmt = "lacks a tag the pilot requires (has %.0f)";
		out->v[0] = (double)tags->n;
		out->v[1] = k < r->required.n ? (double)r->required.v[k] : -1;
		return;
	case TQ_FL_OWNER_GROUP:
		out->fmt = "owner group not among the private pilot's";
		out->v[0] = v->owner_group;
		out->v[1] = (double)r->groups.n;
		return;
	case TQ_FL_OWNER_DN:
		out->fmt = "owner DN not among the private pilot's (group "
			   "without JOB_SHARING)";
		out->v[0] = v->owner;
		out->v[1] = (double)r->owners.n;
		return;
	case TQ_FL_SETUP:
		out->fmt = "setup differs from the pilot's";
		out->v[0] = v->setup;
		out->v[1] = r->setup;
		return;
	case TQ_FL_CPU_TIME:
		out->fmt = "CPU time %.0f s exceeds the pilot's %.0f s";
		out->v[0] = (double)v->cpu_time;
		out->v[1] = (double)r->cpu_time;
		return;
	case TQ_FL_BANNED_SITE:
		out->fmt = "bans %.0f site(s), among them every one of the "
			   "pilot's %.0f";
		out->v[0] = (double)v->set[TQ_F_BANNED_SITES].n;
		out->v[1] = (double)r->want[TQ_P_SITE].n;
		return;
	case TQ_FL_TAG:
		k = first_missing(tags, &r->want[TQ_P_TAG]);
		out->fmt = "needs a tag the pilot does not offer (needs %.0f)";
		out->v[0] = (double)tags->n;
		out->v[1] = k < tags->n ? (double)tags->v[k] : -1;
		return;
	case TQ_FL_BAN_SITE:
	case TQ_FL_BAN_GRID_CE:
	case TQ_FL_BAN_PLATFORM:
	case TQ_FL_BAN_PILOT_TYPE:
	case TQ_FL_BAN_JOB_TYPE:
	case TQ_FL_BAN_TAG:
		out->fmt = "lists every one of the %.0f value(s) the pilot "
			   "bans";
		out->v[0] = (double)r->banned[f - TQ_FL_BAN_SITE].n;
		out->v[1] = -1;
		return;
	case TQ_NFILTERS:
		return;
	}
}

/* ---- matching: TQ-07, TQ-08 -------------------------------------------- */

/* Levels agree with njobs and each level's pick list has the promised
** length. Checked for the views that pass the filters, the only ones whose
** levels are read: validating all 500 on every pilot cost ~30% of a match,
** and a view the filters drop cannot affect the outcome. */
static int levels_ok(const struct tq_view *v)
{
	if (v->nlevels > 0 && v->levels == NULL)
		return 0;
	size_t sum = 0;
	for (size_t j = 0; j < v->nlevels; j++) {
		const struct tq_level *l = &v->levels[j];
		size_t want = l->njobs < TQ_PICK_FROM ? l->njobs : TQ_PICK_FROM;
		if (l->njobs == 0 || l->nlowest != want || l->lowest == NULL ||
		    l->njobs > SIZE_MAX - sum)
			return 0;
		sum += l->njobs;
	}
	return sum == v->njobs;
}

/* A lottery ticket: finite and positive, else none. */
static inline double ticket(double p)
{
	return isfinite(p) && p > 0.0 ? p : 0.0;
}

static double level_weight(const struct tq_level *l)
{
	double p = (double)l->user_priority;
	return (double)l->njobs *
	       (p > TQ_MIN_JOB_WEIGHT ? p : TQ_MIN_JOB_WEIGHT);
}

/* TQ-08 level lottery; the same walk as gb_rng_weighted, which cannot be
** used because the weights are computed, not stored. Every level has a
** positive weight (njobs > 0, weight floor TQ_MIN_JOB_WEIGHT). */
static size_t draw_level(const struct tq_view *v, struct gb_rng *rng)
{
	if (v->nlevels == 1)
		return 0;
	double sum = 0.0;
	for (size_t j = 0; j < v->nlevels; j++)
		sum += level_weight(&v->levels[j]);
	double x = gb_rng_uniform(rng) * sum;
	for (size_t j = 0; j < v->nlevels; j++) {
		double w = level_weight(&v->levels[j]);
		if (x < w)
			return j;
		x -= w;
	}
	return v->nlevels - 1; /* rounding ran past the end */
}

/* The k-th (0-based) index i with weights[i] >= 0, i.e. the k-th entrant. */
static long nth_entrant(const double *weights, size_t n, size_t k)
{
	for (size_t i = 0; i < n; i++)
		if (weights[i] >= 0.0 && k-- == 0)
			return (long)i;
	return -1;
}

/*
** The match over views[pos(k)], k < m, where pos(k) is cand[k] or, with
** cand NULL, k itself. weights and the draws are indexed by k, so the
** same candidates in the same order give the same draws whether an index
** cut the others or not (skipped views hold no ticket either way).
*/
static int match_core(const struct tq_view *views, const size_t *cand,
		      size_t m, const struct tq_resource *r,
		      struct gb_rng *rng, double *weights, uint8_t *verdict,
		      struct tq_result *out)
{
	/* Pass 1, filters: weights[k] = -1 for a view out of the race, else
	** its ticket (>= 0); top = highest CPU time of non-empty matches. */
	long long top = LLONG_MIN;
	for (size_t k = 0; k < m; k++) {
		size_t i = cand ? cand[k] : k;
		const struct tq_view *v = &views[i];
		int f = check_view(v, r);
		if (f < 0 && !levels_ok(v))
			return GB_EINVAL;
		uint8_t vd;
		if (f >= 0) {
			out->rejected[f]++;
			weights[k] = -1.0;
			vd = (uint8_t)f;
		} else {
			out->matched++;
			if (v->njobs == 0) {
				out->empty++;
				weights[k] = -1.0;
				vd = TQ_V_EMPTY;
			} else {
				weights[k] = ticket(v->priority);
				if (v->cpu_time > top)
					top = v->cpu_time;
				vd = TQ_V_ENTRANT;
			}
		}
		if (verdict != NULL)
			verdict[i] = vd;
	}
	if (out->matched == out->empty)
		return GB_OK; /* TQ-10: nothing matched, or all empty */

	/* Pass 2, TQ-07: only the highest CPU time stays in the lottery. */
	out->top_cpu = top;
	for (size_t k = 0; k < m; k++) {
		if (weights[k] < 0.0)
			continue;
		size_t i = cand ? cand[k] : k;
		if (views[i].cpu_time != top) {
			weights[k] = -1.0;
			if (verdict != NULL)
				verdict[i] = TQ_V_LOWER_CPU;
			continue;
		}
		out->entrants++;
		out->lottery_total += weights[k];
	}

	/* TQ-07 lottery: exact proportions; gb_rng_weighted skips the -1 and
	** 0 entries. No ticket at all (or a sum that overflowed): uniform. */
	long c = -1;
	if (out->lottery_total > 0.0 && isfinite(out->lottery_total))
		c = gb_rng_weighted(rng, weights, m, 0);
	if (c < 0)
		c = nth_entrant(weights, m,
				(size_t)gb_rng_below(rng, out->entrants));
	if (c < 0)
		return GB_EINVAL; /* unreachable: entrants > 0 */
	size_t ci = cand ? cand[c] : (size_t)c;

	/* TQ-08: UserPriority level, then one of its lowest ids. */
	const struct tq_view *v = &views[ci];
	size_t lv = draw_level(v, rng);
	const struct tq_level *l = &v->levels[lv];
	size_t pick =
		l->nlowest == 1 ? 0 : (size_t)gb_rng_below(rng, l->nlowest);
	out->chosen = (long)ci;
	out->level = (long)lv;
	out->job_id = l->lowest[pick];
	if (verdict != NULL)
		verdict[ci] = TQ_V_CHOSEN;
	return GB_OK;
}

static void result_reset(struct tq_result *out, size_t n)
{
	memset(out, 0, sizeof(*out));
	out->chosen = -1;
	out->level = -1;
	out->in = n;
}

int tq_match(const struct tq_view *views, size_t n, const struct tq_resource *r,
	     struct gb_rng *rng, double *weights, uint8_t *verdict,
	     struct tq_result *out)
{
	if (out == NULL)
		return GB_EINVAL;
	result_reset(out, n);
	if (r == NULL || rng == NULL ||
	    (n > 0 && (views == NULL || weights == NULL)))
		return GB_EINVAL;
	return match_core(views, NULL, n, r, rng, weights, verdict, out);
}

int tq_match_among(const struct tq_view *views, size_t n, const size_t *cand,
		   size_t ncand, const size_t cut[TQ_NFILTERS],
		   const struct tq_resource *r, struct gb_rng *rng,
		   double *weights, uint8_t *verdict, struct tq_result *out)
{
	if (out == NULL)
		return GB_EINVAL;
	result_reset(out, n);
	if (r == NULL || rng == NULL || cut == NULL || ncand > n ||
	    (n > 0 && views == NULL) ||
	    (ncand > 0 && (cand == NULL || weights == NULL)))
		return GB_EINVAL;
	size_t ncut = 0;
	for (int f = 0; f < TQ_NFILTERS; f++) {
		if (f >= TQ_FL_NINDEXED && cut[f] != 0)
			return GB_EINVAL;
		ncut += cut[f];
	}
	if (ncut + ncand != n)
		return GB_EINVAL;
	for (size_t k = 0; k < ncand; k++)
		if (cand[k] >= n || (k > 0 && cand[k] <= cand[k - 1]))
			return GB_EINVAL;
	int rc = match_core(views, cand, ncand, r, rng, weights, verdict, out);
	for (int f = 0; f < TQ_FL_NINDEXED; f++)
		out->rejected[f] += cut[f];
	return rc;
}

/* ---- TQ-10 --------------------------------------------------------------- */

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static void app(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
	size_t room = *pos < len ? len - *pos : 0;
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(room > 0 ? buf + *pos : NULL, room, fmt, ap);
	va_end(ap);
	if (k > 0)
		*pos += (size_t)k;
}

/* One count reads "1 task queue" / "2 task queues"; the rest of the text
** is fixed so that logs and tests can match it. */
int tq_result_format(const struct tq_result *res, char *buf, size_t len)
{
	if (buf != NULL && len > 0)
		buf[0] = '\0';
	else
		len = 0;
	if (res == NULL)
		return GB_EINVAL;
	size_t pos = 0;
	if (res->chosen >= 0) {
		app(buf, len, &pos,
		    "matched: %zu task queue%s, %zu at cpu_time %lld in the "
		    "lottery",
		    res->matched, res->matched == 1 ? "" : "s", res->entrants,
		    res->top_cpu);
	} else if (res->matched == 0) {
		app(buf, len, &pos, "no task queue matched: %zu considered",
		    res->in);
		int first = 1;
		for (int f = 0; f < TQ_NFILTERS; f++) {
			if (res->rejected[f] == 0)
				continue;
			app(buf, len, &pos, "%s%s excluded %zu",
			    first ? "; " : ", ", tq_filters[f].d.name,
			    res->rejected[f]);
			first = 0;
		}
	} else if (res->matched == 1) {
		app(buf, len, &pos, "the 1 matching task queue is empty");
	} else {
		app(buf, len, &pos, "all %zu matching task queues are empty",
		    res->matched);
	}
	return pos > INT_MAX ? INT_MAX : (int)pos;
}

const char *tq_result_code(const struct tq_result *res)
{
	if (res != NULL && res->chosen >= 0)
		return "matched";
	if (res == NULL || res->matched == 0)
		return "no_tq_matched";
	return "all_empty";
}
