/*
** analysis.c — the numeric parts of the ATLAS analysis job brokerage: the
** task throttle (AJ-01..AJ-04), the analysis stabilizer (AJ-21..AJ-23) and
** the basic weights (AJ-24..AJ-27). The formulas are in analysis.h; this
** file records the decisions taken where the seed, the public JEDI code
** (reference/panda-code-facts.md) and the rules leave room.
**
** Decisions:
** - AJ-04 class A: the seed's max(USER_USAGE_THRESHOLD_A / hi-site slots, 1)
**   x 100 %, not the public code's flat 100 %. The quotient falls as the
**   user holds more hi-site slots, so a user with no running slots at
**   hi-sites is the most lenient case of the formula: 0 slots give an
**   infinite limit and class A is then never throttled by the share. A
**   USER_USAGE_THRESHOLD_A of 0 with some slots gives max(0, 1) = 100 %.
** - AJ-04 compares percentages (100 x usage / target > limit), so usage
**   exactly at the limit is not throttled, as everywhere in AJ-02..AJ-04.
** - AJ-02: an unset cap (NAN, the catalogue default) checks nothing; a cap
**   of 0 is a real cap (any running job exceeds it).
** - AJ-21: trr is the caller's; an_trr counts starts in (now - 6 h, now]
**   as the seed says ("within last 6 hours"). The public code uses
**   [now - 6 h, now - 5 min] and scales the site rate by the gshare's
**   share of running jobs; a caller wanting that passes its own trr.
** - AJ-22: a term of `percentage` whose denominator is 0 counts as 0, so a
**   queue with neither running jobs nor users gives 0 and max_q_len falls
**   back to its two other terms. nR(PQ,user) > nR(PQ) is not rejected
**   (the counts are read at different moments); the ratio is used as is.
** - AJ-25: the seed's class table with eps1 = 0.05, eps2 = 0.002 (the
**   public code's hi->mid and hi->lo shifts), not the public code's
**   redistribution of N_j over the classes.
** - AJ-26: the seed's formula with the raw terms max_q_len - nQ(PQ,user)
**   (the public code clamps each at 0). The result is floored at 2^-20,
**   the public code's floor, and a denominator <= 0 gives the floor for
**   every queue: with more jobs than room everywhere no queue is preferred
**   by W_q, and the sign of the ratio would otherwise mean nothing.
*/
#include "analysis.h"

#include <math.h>

#include "gb_error.h"

#define AN_SECONDS_PER_HOUR 3600.0

/* AJ-04 percent limits of the classes whose limit is fixed. */
#define AN_LIMIT_CLASS_B 95.0
#define AN_LIMIT_CLASS_C 90.0

static int bad_count(double x)
{
	return !(x >= 0) || !isfinite(x);
}

static int valid_task_class(enum an_task_class c)
{
	return c == AN_CLASS_S || c == AN_CLASS_A || c == AN_CLASS_B ||
	       c == AN_CLASS_C;
}

static int valid_site_class(enum an_site_class c)
{
	return c == AN_SITE_HI || c == AN_SITE_MID || c == AN_SITE_LO;
}

static void set_throttled(struct an_throttle *out, const char *rule,
			  const char *code, double value, double limit)
{
	out->throttled = 1;
	out->rule = rule;
	out->code = code;
	out->value = value;
	out->limit = limit;
}

/*
** AJ-02 for one kind (jobs or cores): running > cap, then queued > 2 x cap.
** Returns 1 when `out` was filled.
*/
static int over_cap(double running, double queued, double cap,
		    const char *code_running, const char *code_queued,
		    struct an_throttle *out)
{
	if (isnan(cap))
		return 0;
	if (running > cap) {
		set_throttled(out, "AJ-02", code_running, running, cap);
		return 1;
	}
	if (queued > 2 * cap) {
		set_throttled(out, "AJ-02", code_queued, queued, 2 * cap);
		return 1;
	}
	return 0;
}

/* AJ-04's limit in percent of the target for the task's class; +inf when
** the class is immune (S) or class A has no hi-site slots. */
static double share_limit_pct(enum an_task_class c, double hi_slots,
			      const struct prm_set *set, const char **code)
{
	switch (c) {
	case AN_CLASS_C:
		*code = "share_class_c";
		return AN_LIMIT_CLASS_C;
	case AN_CLASS_B:
		*code = "share_class_b";
		return AN_LIMIT_CLASS_B;
	case AN_CLASS_A:
		*code = "share_class_a";
		if (hi_slots <= 0)
			return INFINITY;
		return fmax(prm_get(set, "USER_USAGE_THRESHOLD_A") / hi_slots,
			    1.0) *
		       100.0;
	case AN_CLASS_S:
		break;
	}
	*code = NULL;
	return INFINITY;
}

int an_throttle_check(const struct an_user_load *u, const struct prm_set *set,
		      struct an_throttle *out)
{
	if (!u || !out)
		return GB_EINVAL;
	if (bad_count(u->running_jobs) || bad_count(u->queued_jobs) ||
	    bad_count(u->running_cores) || bad_count(u->queued_cores) ||
	    bad_count(u->share_usage) || bad_count(u->hi_site_slots) ||
	    !valid_task_class(u->task_class))
		return GB_EINVAL;
	if (u->user_analysis &&
	    (!(u->share_target > 0) || !isfinite(u->share_target)))
		return GB_EINVAL;

	*out = (struct an_throttle){0};

	/* AJ-01: the caller already chose whose counts these are; only the
	** caps differ. */
	const char *cap_jobs = u->working_group ? "CAP_RUNNING_GROUP_JOBS"
						: "CAP_RUNNING_USER_JOBS";
	const char *cap_cores = u->working_group ? "CAP_RUNNING_GROUP_CORES"
						 : "CAP_RUNNING_USER_CORES";
	if (over_cap(u->running_jobs, u->queued_jobs, prm_get(set, cap_jobs),
		     "running_jobs", "queued_jobs", out))
		return GB_OK;
	if (over_cap(u->running_cores, u->queued_cores,
		     prm_get(set, cap_cores), "running_cores", "queued_cores",
		     out))
		return GB_OK;

	if (u->quota_exceeded) { /* AJ-03: no number behind the flag */
		set_throttled(out, "AJ-03", "quota", 1, 0);
		return GB_OK;
	}

	/* AJ-04: other shares are immune, whatever their class. */
	if (u->user_analysis) {
		const char *code;
		double limit = share_limit_pct(u->task_class, u->hi_site_slots,
					       set, &code);
		double pct = 100.0 * u->share_usage / u->share_target;
		if (code && pct > limit) {
			set_throttled(out, "AJ-04", code, pct, limit);
			return GB_OK;
		}
	}
	return GB_OK;
}

int an_stabilizer(const struct an_queue_load *q, const struct prm_set *set,
		  struct an_stab *out)
{
	if (!q || !out)
		return GB_EINVAL;
	if (bad_count(q->nq) || bad_count(q->nr) || bad_count(q->trr) ||
	    bad_count(q->nq_user) || bad_count(q->nr_user) ||
	    bad_count(q->nusers))
		return GB_EINVAL;

	double base_len = prm_get(set, "BASE_QUEUE_LENGTH_PER_PQ");
	double base_wait = prm_get(set, "BASE_EXPECTED_WAIT_HOUR_ON_PQ");
	double ratio = prm_get(set, "STATIC_MAX_QUEUE_RUNNING_RATIO");
	double max_wait = prm_get(set, "MAX_EXPECTED_WAIT_HOUR");
	double user_len = prm_get(set, "BASE_DEFAULT_QUEUE_LENGTH_PER_PQ_USER");
	double user_ratio = prm_get(set, "BASE_QUEUE_RATIO_ON_PQ");

	/* AJ-21: a short queue, in jobs or in hours of starts, is left alone
	** whatever its users queue. */
	out->can_throttle =
		!(q->nq < base_len || q->nq < base_wait * q->trr);

	/* AJ-22: the queue length the site can afford, and the user's part
	** of it (at least an equal share among the users there). */
	out->nq_max = fmax(base_len, fmax(ratio * q->nr, max_wait * q->trr));
	double by_running = q->nr > 0 ? q->nr_user / q->nr : 0;
	double by_users = q->nusers > 0 ? 1.0 / q->nusers : 0;
	out->percentage = fmax(by_running, by_users);

	/* AJ-23: the outputs are filled even when the queue cannot be
	** throttled, because AJ-26 reads max_q_len for every candidate. */
	out->max_q_len = fmax(user_len, fmax(user_ratio * q->nr,
					     out->nq_max * out->percentage));
	out->skip = out->can_throttle && q->nq_user > out->max_q_len;
	return GB_OK;
}

double an_trr(const long long *start_times, size_t n, long long now)
{
	if (n == 0)
		return 0;
	if (!start_times) /* NAN makes an_stabilizer refuse the count */
		return NAN;
	const unsigned long long window =
		(unsigned long long)(AN_TRR_WINDOW_H * AN_SECONDS_PER_HOUR);
	size_t started = 0;
	for (size_t k = 0; k < n; k++) {
		long long t = start_times[k];
		if (t > now)
			continue;
		/* now - t >= 0 fits in unsigned even when the signed
		** difference would overflow. */
		unsigned long long age =
			(unsigned long long)now - (unsigned long long)t;
		if (age < window)
			started++;
	}
	return (double)started / AN_TRR_WINDOW_H;
}

int an_weight_original(double running, double activated, double assigned,
		       double starting, double defined, double *out)
{
	if (!out || bad_count(running) || bad_count(activated) ||
	    bad_count(assigned) || bad_count(starting) || bad_count(defined))
		return GB_EINVAL;
	*out = (running + 1) /
	       (activated + assigned + starting + defined + 1);
	return GB_OK;
}

double an_weight_site(int user_analysis, enum an_task_class task,
		      enum an_site_class site, double nj)
{
	/* Rows: task class S, A, B, C; columns: hi, mid, lo. A value of -1 or
	** -2 stands for eps1 or eps2, 0 for N_j. */
	static const signed char table[4][3] = {
		{0, -1, -2}, /* S */
		{0, -1, -2}, /* A */
		{-2, 0, -1}, /* B */
		{-2, -1, 0}, /* C */
	};
	if (bad_count(nj) || !valid_task_class(task) ||
	    !valid_site_class(site))
		return NAN;
	if (!user_analysis)
		return nj;
	switch (table[task][site]) {
	case -1:
		return AN_EPS1;
	case -2:
		return AN_EPS2;
	default:
		return nj;
	}
}

int an_weight_queue(const double *max_q_len, const double *nq_user, size_t n,
		    size_t i, double nj, double *out)
{
	if (!max_q_len || !nq_user || !out || n == 0 || i >= n ||
	    bad_count(nj))
		return GB_EINVAL;
	double room = 0;
	for (size_t k = 0; k < n; k++) {
		if (bad_count(max_q_len[k]) || bad_count(nq_user[k]))
			return GB_EINVAL;
		room += max_q_len[k] - nq_user[k];
	}
	double den = room - nj;
	double num = max_q_len[i] - nq_user[i] - nj / (double)n;
	*out = den > 0 ? fmax(num / den, AN_WQ_FLOOR) : AN_WQ_FLOOR;
	return GB_OK;
}

int an_use_new_weight(const struct prm_set *set)
{
	/* Only an explicit 0 selects the original weight (AJ-27). */
	return prm_get(set, "USE_NEW_BASIC_WEIGHT") != 0;
}
