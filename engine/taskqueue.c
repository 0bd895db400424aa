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
** - TQ-04 "if private pilot": a pilot is private when it names an owner
**   group (has_owner_group). Only then do owner_group and owner_dn apply.
**   owner_dn applies when that group lacks JOB_SHARING: the TQ's owner
**   must equal the pilot's DN, and a private pilot of such a group that
**   gives no DN matches nothing ("owner DN required"), as DIRAC's Matcher
**   refuses it. A DN given without a group is ignored: a pilot cannot be
**   private to a user outside a group.
** - TQ-05: setup must be equal; a TQ needing more CPU time than the slot
**   offers (TQ cpu_time > pilot's) is dropped, equality passes.
** - TQ-06: an empty set means "no requirement" for pilot types, sites, CEs
**   and platforms. When the TQ lists pilot types, CEs or platforms, a pilot
**   that gave no value is rejected (the job requires one it cannot check).
**   banned_site rejects only when the pilot's site is in the TQ's banned
**   set. Submit pools and grid middlewares are never matched (the seed:
**   "only used by the pilot submission mechanism").
** - TQ_ID_UNKNOWN (a pilot value no TQ uses) equals nothing and is in no
**   set, so an unknown setup or site matches only where nothing is
**   required.
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
};

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

/* An optional pilot value against a "required if listed" set: an empty set
** accepts anything; a listed set needs a value the pilot gave, in it. */
static inline int required_in(const struct tq_idset *s, int has, uint32_t x)
{
	return s->n == 0 || (has && id_in(s, x));
}

/* Each filter returns 1 when the view passes, 0 when it is dropped. */
typedef int (*tq_filter_fn)(const struct tq_view *v,
			    const struct tq_resource *r);

/* TQ-04: a private pilot runs only its group's jobs. */
static int f_owner_group(const struct tq_view *v, const struct tq_resource *r)
{
	return !r->has_owner_group || id_eq(v->owner_group, r->owner_group);
}

/* TQ-04: ...and only its owner's, unless the group shares jobs. */
static int f_owner_dn(const struct tq_view *v, const struct tq_resource *r)
{
	if (!r->has_owner_group || r->job_sharing)
		return 1;
	return r->has_owner && id_eq(v->owner, r->owner);
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

/* TQ-06 */
static int f_pilot_type(const struct tq_view *v, const struct tq_resource *r)
{
	return required_in(&v->set[TQ_F_PILOT_TYPES], r->has_pilot_type,
			   r->pilot_type);
}

/* TQ-06: the site is mandatory on the pilot, so only the set can be empty. */
static int f_site(const struct tq_view *v, const struct tq_resource *r)
{
	return required_in(&v->set[TQ_F_SITES], 1, r->site);
}

/* TQ-06 */
static int f_banned_site(const struct tq_view *v, const struct tq_resource *r)
{
	return !id_in(&v->set[TQ_F_BANNED_SITES], r->site);
}

/* TQ-06 */
static int f_grid_ce(const struct tq_view *v, const struct tq_resource *r)
{
	return required_in(&v->set[TQ_F_GRID_CES], r->has_grid_ce, r->grid_ce);
}

/* TQ-06 */
static int f_platform(const struct tq_view *v, const struct tq_resource *r)
{
	return required_in(&v->set[TQ_F_PLATFORMS], r->has_platform,
			   r->platform);
}

struct tq_filter_row {
	struct tq_filter_desc d;
	tq_filter_fn fn;
};

/* The order is the enum's: it decides which row a view that fails several
** is counted under (TQ-10) and which reason it gets. Since every row runs
** on every view (fail_mask), the order costs nothing in speed. */
static const struct tq_filter_row tq_filters[] = {
	[TQ_FL_OWNER_GROUP] = {{"owner_group", "TQ-04"}, f_owner_group},
	[TQ_FL_OWNER_DN] = {{"owner_dn", "TQ-04"}, f_owner_dn},
	[TQ_FL_SETUP] = {{"setup", "TQ-05"}, f_setup},
	[TQ_FL_CPU_TIME] = {{"cpu_time", "TQ-05"}, f_cpu_time},
	[TQ_FL_PILOT_TYPE] = {{"pilot_type", "TQ-06"}, f_pilot_type},
	[TQ_FL_SITE] = {{"site", "TQ-06"}, f_site},
	[TQ_FL_BANNED_SITE] = {{"banned_site", "TQ-06"}, f_banned_site},
	[TQ_FL_GRID_CE] = {{"grid_ce", "TQ-06"}, f_grid_ce},
	[TQ_FL_PLATFORM] = {{"platform", "TQ-06"}, f_platform},
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
#pragma GCC unroll 16
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
** caller that prints names takes the ids from v[]. Id-compare filters:
** v[0] the TQ's id, v[1] the pilot's (-1 when it gave none). Set filters:
** v[0] the set size, v[1] the pilot's id (-1 when none). cpu_time: v[0]
** the TQ's segment, v[1] the pilot's seconds.
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
	const struct tq_idset *s = NULL;
	int has = 1;
	uint32_t mine = 0;
	switch (f) {
	case TQ_FL_OWNER_GROUP:
		out->fmt = "owner group differs from the private pilot's";
		out->v[0] = v->owner_group;
		out->v[1] = r->owner_group;
		return;
	case TQ_FL_OWNER_DN:
		out->v[0] = v->owner;
		if (!r->has_owner) {
			out->fmt = "owner DN required: private pilot of a "
				   "group without JOB_SHARING gave none";
			out->v[1] = -1;
		} else {
			out->fmt = "owner DN differs from the private pilot's "
				   "(group without JOB_SHARING)";
			out->v[1] = r->owner;
		}
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
	case TQ_FL_PILOT_TYPE:
		s = &v->set[TQ_F_PILOT_TYPES];
		has = r->has_pilot_type;
		mine = r->pilot_type;
		out->fmt = has ? "pilot type not among the %.0f accepted"
			       : "accepts %.0f pilot types, the pilot gave "
				 "none";
		break;
	case TQ_FL_SITE:
		s = &v->set[TQ_F_SITES];
		mine = r->site;
		out->fmt = "site not among the %.0f accepted";
		break;
	case TQ_FL_BANNED_SITE:
		s = &v->set[TQ_F_BANNED_SITES];
		mine = r->site;
		out->fmt = "site is among the %.0f banned";
		break;
	case TQ_FL_GRID_CE:
		s = &v->set[TQ_F_GRID_CES];
		has = r->has_grid_ce;
		mine = r->grid_ce;
		out->fmt = has ? "grid CE not among the %.0f required"
			       : "requires one of %.0f grid CEs, the pilot "
				 "gave none";
		break;
	case TQ_FL_PLATFORM:
		s = &v->set[TQ_F_PLATFORMS];
		has = r->has_platform;
		mine = r->platform;
		out->fmt = has ? "platform not among the %.0f required"
			       : "requires one of %.0f platforms, the pilot "
				 "gave none";
		break;
	case TQ_NFILTERS:
		return;
	}
	out->v[0] = (double)s->n;
	out->v[1] = has ? (double)mine : -1;
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

int tq_match(const struct tq_view *views, size_t n, const struct tq_resource *r,
	     struct gb_rng *rng, double *weights, uint8_t *verdict,
	     struct tq_result *out)
{
	if (out == NULL)
		return GB_EINVAL;
	memset(out, 0, sizeof(*out));
	out->chosen = -1;
	out->level = -1;
	out->in = n;
	if (r == NULL || rng == NULL ||
	    (n > 0 && (views == NULL || weights == NULL)))
		return GB_EINVAL;

	/* Pass 1, filters: weights[i] = -1 for a view out of the race, else
	** its ticket (>= 0); top = highest CPU time of non-empty matches. */
	long long top = LLONG_MIN;
	for (size_t i = 0; i < n; i++) {
		const struct tq_view *v = &views[i];
		int f = check_view(v, r);
		if (f < 0 && !levels_ok(v))
			return GB_EINVAL;
		uint8_t vd;
		if (f >= 0) {
			out->rejected[f]++;
			weights[i] = -1.0;
			vd = (uint8_t)f;
		} else {
			out->matched++;
			if (v->njobs == 0) {
				out->empty++;
				weights[i] = -1.0;
				vd = TQ_V_EMPTY;
			} else {
				weights[i] = ticket(v->priority);
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
	for (size_t i = 0; i < n; i++) {
		if (weights[i] < 0.0)
			continue;
		if (views[i].cpu_time != top) {
			weights[i] = -1.0;
			if (verdict != NULL)
				verdict[i] = TQ_V_LOWER_CPU;
			continue;
		}
		out->entrants++;
		out->lottery_total += weights[i];
	}

	/* TQ-07 lottery: exact proportions; gb_rng_weighted skips the -1 and
	** 0 entries. No ticket at all (or a sum that overflowed): uniform. */
	long c = -1;
	if (out->lottery_total > 0.0 && isfinite(out->lottery_total))
		c = gb_rng_weighted(rng, weights, n, 0);
	if (c < 0)
		c = nth_entrant(weights, n,
				(size_t)gb_rng_below(rng, out->entrants));
	if (c < 0)
		return GB_EINVAL; /* unreachable: entrants > 0 */

	/* TQ-08: UserPriority level, then one of its lowest ids. */
	const struct tq_view *v = &views[c];
	size_t lv = draw_level(v, rng);
	const struct tq_level *l = &v->levels[lv];
	size_t pick =
		l->nlowest == 1 ? 0 : (size_t)gb_rng_below(rng, l->nlowest);
	out->chosen = c;
	out->level = (long)lv;
	out->job_id = l->lowest[pick];
	if (verdict != NULL)
		verdict[c] = TQ_V_CHOSEN;
	return GB_OK;
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
