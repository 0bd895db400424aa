/*
** timeout.c — the job timeout rules TO-01..TO-12 and fast rebrokerage
** (TO-13): which job has waited too long in its status, and what happens
** to it; which queue holds more queued jobs of a gshare than it can run.
**
** The worker's periodic scan owns the clock and the database; this file
** only answers "does a rule fire for this job at `now`". Each rule is a row
** of to_rules[]: its ID, the statuses it looks at, a function giving the
** age and the limit (or saying the rule does not concern this job), the
** action and the words for the event. Rows are tried in order and the
** first that fires wins, so a job gets exactly one verdict and the worker
** writes exactly one job.timeout event for it (TO-14).
**
** Interpretations (where the seed is silent or the public code differs):
** - Every age is measured from the last status change except TO-08
**   (from the job's creation, as in PanDA's "any active job, 21 days") and
**   TO-09 (from the last sign of life, see below).
** - TO-05 before TO-06: a high-priority job past 2 days gets TO-05; both
**   reassign, so only the rule ID differs.
** - TO-06: "older than 2 h" is strict (a start exactly 2 h ago is recent).
**   A queue that never started a job (last_start 0, or no queue given)
**   counts as older. PanDA's extra offline/test queue case is not a rule
**   of the seed and is left out.
** - TO-08 before TO-09: a running job past 21 days and without heartbeat
**   is killed (TO-08), not failed, since a 21-day job must not be retried.
** - TO-05/TO-06 before TO-09 for starting jobs: a starting job that is
**   stuck long enough to be reassigned is reassigned rather than failed.
** - TO-09 before TO-11 for transferring jobs with their own stage-out.
** - TO-09 measures from the later of the last heartbeat and the status
**   change: PanDA's watcher compares modificationTime, which every status
**   change also moves, so a fresh status change counts as a sign of life
**   and "no heartbeat yet" means "since the status change".
** - TO-10/TO-11: priority ">= 800" is the seed's (PanDA's holding rule
**   has "> 800"). TO-11 uses the queue's transtimehi/lo days, a value <= 0
**   (or NaN) meaning "not set": the reference 2 and 6 days.
** - TO-12: paused or disableReassign exempts every rule (the seed's
**   wording; PanDA's code only skips paused queues for heartbeats).
** - A limit that reads as NaN (an unchecked override) never fires: the
**   comparison "age > NaN" is false, which is the safe side.
*/
#include "timeout.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#include "gb_error.h"

#define HOUR 3600.0
#define DAY 86400.0
#define HIGH_PRIO 800 /* TO-06, TO-10, TO-11 */

static const char *const status_names[TO_NSTATUS] = {
	[TO_ST_PENDING] = "pending",
	[TO_ST_DEFINED] = "defined",
	[TO_ST_ASSIGNED] = "assigned",
	[TO_ST_THROTTLED] = "throttled",
	[TO_ST_ACTIVATED] = "activated",
	[TO_ST_STARTING] = "starting",
	[TO_ST_SENT] = "sent",
	[TO_ST_RUNNING] = "running",
	[TO_ST_HOLDING] = "holding",
	[TO_ST_TRANSFERRING] = "transferring",
	[TO_ST_FINISHED] = "finished",
	[TO_ST_FAILED] = "failed",
	[TO_ST_CLOSED] = "closed",
	[TO_ST_CANCELLED] = "cancelled",
};

static const char *const action_names[] = {
	[TO_ACT_NONE] = "none",
	[TO_ACT_REASSIGN] = "reassign",
	[TO_ACT_FAIL] = "fail",
	[TO_ACT_KILL] = "kill",
};

const char *to_status_name(enum to_status s)
{
	if ((int)s < 0 || (int)s >= TO_NSTATUS)
		return NULL;
	return status_names[s];
}

int to_status_parse(const char *s)
{
	if (s == NULL)
		return -1;
	for (int i = 0; i < TO_NSTATUS; i++)
		if (strcmp(s, status_names[i]) == 0)
			return i;
	return -1;
}

const char *to_action_name(enum to_action a)
{
	if ((int)a < 0 ||
	    (size_t)a >= sizeof(action_names) / sizeof(*action_names))
		return NULL;
	return action_names[a];
}

/* ---- the rules -------------------------------------------------------- */

/* What a rule function sees; q is never NULL here (to_check supplies an
** empty queue for NULL). */
struct to_ctx {
	const struct to_job *j;
	const struct to_queue *q;
	const struct prm_set *set;
	long long now;
};

/* Seconds between two unix times. In double so that no pair of inputs can
** overflow a long long subtraction; exact for any realistic time. */
static double secs(long long now, long long since)
{
	return (double)now - (double)since;
}

/* A rule function: 0 when the rule does not concern this job (beyond its
** status), else 1 with the age and the limit in seconds. */
typedef int (*to_measure_fn)(const struct to_ctx *c, double *age,
			     double *limit);

static int since_change(const struct to_ctx *c, double *age, double *limit,
			double lim)
{
	*age = secs(c->now, c->j->status_since);
	*limit = lim;
	return 1;
}

static int m_pending(const struct to_ctx *c, double *age, double *limit)
{
	return since_change(c, age, limit, 1 * HOUR);
}

static int m_defined(const struct to_ctx *c, double *age, double *limit)
{
	return since_change(c, age, limit,
			    prm_get(c->set, "TIMEOUT_defined") * HOUR);
}

static int m_assigned(const struct to_ctx *c, double *age, double *limit)
{
	return since_change(c, age, limit, 12 * HOUR);
}

static int m_throttled(const struct to_ctx *c, double *age, double *limit)
{
	return since_change(c, age, limit, 7 * DAY);
}

static int m_activated(const struct to_ctx *c, double *age, double *limit)
{
	return since_change(c, age, limit, 2 * DAY);
}

/* TO-06: a high-priority job should not wait 2 days at a queue that has
** stopped starting jobs; 4 h is enough to decide the queue is stuck. */
static int m_stuck_queue(const struct to_ctx *c, double *age, double *limit)
{
	if (c->j->current_priority < HIGH_PRIO)
		return 0;
	if (c->q->last_start != 0 &&
	    !(secs(c->now, c->q->last_start) > 2 * HOUR))
		return 0;
	return since_change(c, age, limit, 4 * HOUR);
}

static int m_sent(const struct to_ctx *c, double *age, double *limit)
{
	return since_change(c, age, limit, 30 * 60.0);
}

static int m_lifetime(const struct to_ctx *c, double *age, double *limit)
{
	*age = secs(c->now, c->j->created_at);
	*limit = 21 * DAY;
	return 1;
}

/* TO-09: transferring jobs are watched only when their workflow does its
** own stage-out (jobSubStatus set); otherwise the transfer system is in
** charge and TO-11 applies. */
static int m_heartbeat(const struct to_ctx *c, double *age, double *limit)
{
	const struct to_job *j = c->j;
	if (j->status == TO_ST_TRANSFERRING && !j->own_stageout)
		return 0;
	long long alive = j->last_heartbeat > j->status_since ?
				  j->last_heartbeat : j->status_since;
	*age = secs(c->now, alive);
	*limit = prm_get_sfx(c->set, "HEARTBEAT_TIMEOUT", j->workflow) * HOUR;
	return 1;
}

static int m_holding(const struct to_ctx *c, double *age, double *limit)
{
	double lim = c->j->current_priority >= HIGH_PRIO ?
			     3 * HOUR :
			     prm_get(c->set, "TIMEOUT_holding") * HOUR;
	return since_change(c, age, limit, lim);
}

/* The queue's days, or the reference when unset (0, negative or NaN). */
static double days_or(double days, double ref)
{
	return days > 0 ? days : ref;
}

static int m_transferring(const struct to_ctx *c, double *age, double *limit)
{
	double days = c->j->current_priority >= HIGH_PRIO ?
			      days_or(c->q->transtimehi, 2) :
			      days_or(c->q->transtimelo, 6);
	return since_change(c, age, limit, days * DAY);
}

#define ST(s) (1u << (s))

struct to_rule {
	const char *id;
	unsigned statuses; /* ST() bits */
	to_measure_fn measure;
	enum to_action action;
	const char *what;
};

/* The order is the tie-break (file header); first that fires wins. */
static const struct to_rule to_rules[] = {
	{"TO-01", ST(TO_ST_PENDING), m_pending, TO_ACT_REASSIGN, "pending for"},
	{"TO-02", ST(TO_ST_DEFINED), m_defined, TO_ACT_REASSIGN, "defined for"},
	{"TO-03", ST(TO_ST_ASSIGNED), m_assigned, TO_ACT_REASSIGN,
	 "assigned for"},
	{"TO-04", ST(TO_ST_THROTTLED), m_throttled, TO_ACT_KILL,
	 "throttled for"},
	{"TO-05", ST(TO_ST_ACTIVATED) | ST(TO_ST_STARTING), m_activated,
	 TO_ACT_REASSIGN, "activated or starting for"},
	{"TO-06", ST(TO_ST_ACTIVATED) | ST(TO_ST_STARTING), m_stuck_queue,
	 TO_ACT_REASSIGN, "waiting at a queue with no recent start for"},
	{"TO-07", ST(TO_ST_SENT), m_sent, TO_ACT_FAIL,
	 "sent without pilot reply for"},
	{"TO-08", ST(TO_ST_RUNNING), m_lifetime, TO_ACT_KILL,
	 "running since creation for"},
	{"TO-09",
	 ST(TO_ST_RUNNING) | ST(TO_ST_STARTING) | ST(TO_ST_TRANSFERRING),
	 m_heartbeat, TO_ACT_FAIL, "no heartbeat for"},
	{"TO-10", ST(TO_ST_HOLDING), m_holding, TO_ACT_FAIL, "holding for"},
	{"TO-11", ST(TO_ST_TRANSFERRING), m_transferring, TO_ACT_FAIL,
	 "transferring for"},
};

int to_check(const struct to_job *j, const struct to_queue *q,
	     const struct prm_set *set, long long now, struct to_verdict *out)
{
	if (j == NULL || out == NULL || (int)j->status < 0 ||
	    (int)j->status >= TO_NSTATUS)
		return GB_EINVAL;
	*out = (struct to_verdict){.rule = NULL, .action = TO_ACT_NONE};
	static const struct to_queue no_queue = {0};
	if (q == NULL)
		q = &no_queue;
	/* TO-12: the queue's operators have taken timeouts into their hands. */
	if (q->paused || q->disable_reassign)
		return 0;
	const struct to_ctx c = {.j = j, .q = q, .set = set, .now = now};
	for (size_t i = 0; i < sizeof(to_rules) / sizeof(*to_rules); i++) {
		const struct to_rule *r = &to_rules[i];
		double age, limit;
		if (!(r->statuses & ST(j->status)) ||
		    !r->measure(&c, &age, &limit))
			continue;
		if (age > limit) {
			*out = (struct to_verdict){.rule = r->id,
						   .action = r->action,
						   .age_s = age,
						   .limit_s = limit,
						   .what = r->what};
			return 1;
		}
	}
	return 0;
}

/* The first whole second at which "now - base > limit" holds: base + limit
** is when the rule's age reaches its limit, and the rule wants strictly
** more. Clamped so that no limit can overflow a long long. */
static long long fire_time(double base, double limit)
{
	double t = floor(base + limit) + 1;
	if (t >= 9.2e18)
		return LLONG_MAX;
	if (t <= -9.2e18)
		return LLONG_MIN;
	return (long long)t;
}

int to_next_check(const struct to_job *j, const struct to_queue *q,
		  const struct prm_set *set, long long now, long long *at)
{
	if (j == NULL || at == NULL || (int)j->status < 0 ||
	    (int)j->status >= TO_NSTATUS)
		return GB_EINVAL;
	static const struct to_queue no_queue = {0};
	if (q == NULL)
		q = &no_queue;
	const struct to_ctx c = {.j = j, .q = q, .set = set, .now = now};
	int found = 0;
	long long best = LLONG_MAX;
	for (size_t i = 0; i < sizeof(to_rules) / sizeof(*to_rules); i++) {
		const struct to_rule *r = &to_rules[i];
		if (!(r->statuses & ST(j->status)))
			continue;
		double age, limit, base;
		if (r->measure == m_stuck_queue) {
			/* Fires once the job is 4 h in its status and the
			** queue's last start is 2 h old, whichever is later;
			** both are known now. */
			if (j->current_priority < HIGH_PRIO)
				continue;
			base = (double)j->status_since;
			limit = 4 * HOUR;
			if (q->last_start != 0 &&
			    (double)q->last_start + 2 * HOUR > base + limit) {
				base = (double)q->last_start;
				limit = 2 * HOUR;
			}
		} else {
			if (!r->measure(&c, &age, &limit))
				continue;
			base = (double)now - age;
		}
		if (isnan(limit))
			continue; /* an unset limit never fires */
		long long t = fire_time(base, limit);
		if (!found || t < best)
			best = t;
		found = 1;
	}
	if (found)
		*at = best;
	return found;
}

/* ---- TO-13 ------------------------------------------------------------ */

static int count_ok(double x)
{
	return isfinite(x) && x >= 0;
}

int to_fast_rebro(const struct to_rebro_in *in, const struct prm_set *set,
		  const char *gshare, struct to_rebro_out *out)
{
	if (in == NULL || out == NULL || !count_ok(in->nqueue) ||
	    !count_ok(in->nrun) || !count_ok(in->nqueue_total))
		return GB_EINVAL;
	double nq = in->nqueue;
	double ratio = prm_get(set, "FAST_REBRO_THRESHOLD_NQNR_RATIO");
	double frac = prm_get(set, "FAST_REBRO_THRESHOLD_NQUEUE_FRAC");
	*out = (struct to_rebro_out){
		.ratio_limit = ratio * in->nrun,
		.frac_limit = frac * in->nqueue_total,
		.nqueue_limit = NAN,
	};
	/* The gshare's own key only: prm_get of the suffixed name finds an
	** override or nothing (the catalogue has no suffixed rows), never
	** the bare FAST_REBRO_THRESHOLD_NQUEUE that would opt every gshare
	** in at once. */
	char key[160];
	static const char base[] = "FAST_REBRO_THRESHOLD_NQUEUE_";
	size_t gl = gshare != NULL ? strlen(gshare) : 0;
	if (gl > 0 && sizeof(base) + gl <= sizeof(key)) {
		memcpy(key, base, sizeof(base) - 1);
		memcpy(key + sizeof(base) - 1, gshare, gl + 1);
		/* A gshare named "FRAC" must not read ..._NQUEUE_FRAC. */
		const struct prm_def *d = prm_find(key);
		if (d == NULL || strcmp(d->name, key) != 0)
			out->nqueue_limit = prm_get(set, key);
	}
	/* nSlots queues get many queued jobs on purpose (Harvester fills the
	** slots it was given), so their nQ/nR says nothing. A NaN limit (the
	** gshare did not opt in) fails its comparison, hence "never". */
	out->code = in->has_nslots                 ? "nslots"
		    : isnan(out->nqueue_limit)      ? "no_threshold"
		    : !(nq > out->ratio_limit)      ? "ratio"
		    : !(nq > out->frac_limit)       ? "frac"
		    : !(nq > out->nqueue_limit)     ? "nqueue"
						    : NULL;
	if (out->code)
		return GB_OK;
	double ex = fmin(nq - out->ratio_limit,
			 fmin(nq - out->nqueue_limit, nq - out->frac_limit));
	ex = ceil(ex);
	out->triggered = 1;
	/* Counts are finite but not bounded: clamp rather than overflow. */
	out->excess = ex >= 9.2e18 ? LLONG_MAX : (long long)ex;
	return GB_OK;
}
