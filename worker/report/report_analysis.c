/*
** report_analysis.c — the JSON of an analysis-brokerage decision
** (report_analysis.h).
**
** Like report_jobs.c, reasons keep their static templates and numbers
** until dec_reason_format renders them here, once. What is different: the
** throttle's verdict and the owner's numbers it compared come first (a
** throttled task has no candidates at all), each candidate carries the
** analysis facts of its queue, and the weights are W_s x W_q (AJ-25/26)
** rather than PJ-30's. The plan part (best queues, each job activated or
** assigned, unassigned jobs) is the production record's (rpj_plan_json).
*/
#include "report/report_analysis.h"

#include <math.h>

#include "base/jsonutil.h"
#include "gb_error.h"
#include "report/report.h"
#include "report/report_jobs.h"

static const char *qname(const struct ab_queue *qs,
			 const struct dec_decision *d, size_t i)
{
	if (d && d->cands && i < d->ncands && d->cands[i].name)
		return d->cands[i].name;
	return qs && qs[i].q && qs[i].q->name ? qs[i].q->name : "?";
}

/* The arguments agree with each other (see the contract in the header). */
static int consistent(const struct gm_request *r, const struct ab_queue *qs,
		      size_t nq, const struct dec_decision *d,
		      const struct ab_plan *plan, const long *job_queue,
		      const struct an_throttle *th,
		      const struct an_user_load *u)
{
	if (r == NULL || th == NULL || u == NULL ||
	    (r->njobs && r->jobs == NULL))
		return 0;
	if (th->throttled)
		return 1;
	if (d == NULL || plan == NULL || d->ncands != nq ||
	    (nq && (qs == NULL || d->cands == NULL)) ||
	    (r->njobs && job_queue == NULL) || plan->nbest > AB_BEST_N ||
	    d->nstages > DEC_MAX_STAGES)
		return 0;
	for (size_t b = 0; b < plan->nbest; b++)
		if (plan->best[b] < 0 || (size_t)plan->best[b] >= nq)
			return 0;
	for (size_t j = 0; j < r->njobs; j++)
		if (job_queue[j] >= (long)nq)
			return 0;
	return 1;
}

static const char *decision_word(const struct dec_decision *d,
				 const struct an_throttle *th)
{
	return th->throttled ? "throttled" : dec_outcome_name(d->outcome);
}

static double share_percent(const struct an_user_load *u)
{
	return u->share_target > 0 ? 100.0 * u->share_usage / u->share_target
				   : NAN;
}

/* ---- JSON --------------------------------------------------------------- */

static json_t *jnum(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

static json_t *throttle_json(const struct an_throttle *th)
{
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	int bad = ju_set(o, "throttled", json_boolean(th->throttled));
	bad |= ju_set(o, "rule", th->throttled ? ju_str(th->rule) : json_null());
	bad |= ju_set(o, "code", th->throttled ? ju_str(th->code) : json_null());
	bad |= ju_set(o, "value", th->throttled ? jnum(th->value) : json_null());
	bad |= ju_set(o, "limit", th->throttled ? jnum(th->limit) : json_null());
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *owner_json(const struct an_user_load *u)
{
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	int bad = ju_set(o, "countsOf",
			 ju_str(u->working_group ? "workingGroup" : "user"));
	bad |= ju_set(o, "runningJobs", jnum(u->running_jobs));
	bad |= ju_set(o, "queuedJobs", jnum(u->queued_jobs));
	bad |= ju_set(o, "runningCores", jnum(u->running_cores));
	bad |= ju_set(o, "queuedCores", jnum(u->queued_cores));
	bad |= ju_set(o, "quotaExceeded", json_boolean(u->quota_exceeded));
	bad |= ju_set(o, "userAnalysis", json_boolean(u->user_analysis));
	bad |= ju_set(o, "shareUsage", jnum(u->share_usage));
	bad |= ju_set(o, "shareTarget", jnum(u->share_target));
	bad |= ju_set(o, "sharePercent", jnum(share_percent(u)));
	bad |= ju_set(o, "hiSiteSlots", jnum(u->hi_site_slots));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The production candidate entry plus the analysis facts of the queue. */
static json_t *cand_json(const struct ab_queue *q,
			 const struct dec_candidate *c, const char *name)
{
	json_t *o = ju_candidate_json(c, name, 1);
	if (o == NULL)
		return NULL;
	int bad = ju_set(o, "type", ju_str(gm_queue_type_name(q->type)));
	bad |= ju_set(o, "siteClass",
		      ju_str(gm_site_class_name(q->site_class)));
	bad |= ju_set(o, "userQueued", jnum(q->load.nq_user));
	bad |= ju_set(o, "userRunning", jnum(q->load.nr_user));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *rpa_decision_json(const struct md_analysis *m)
{
	if (m == NULL)
		return NULL;
	const struct gm_request *r = &m->req;
	const struct an_throttle *th = &m->throttle;
	int brokered = !th->throttled;
	const struct ab_queue *qs = brokered ? m->aqs : NULL;
	const struct dec_decision *d = &m->dec;
	size_t nq = m->nqueues;
	if (!consistent(r, qs, nq, d, &m->aplan, m->plan.job_queue, th,
			&m->user))
		return NULL;
	json_t *root = json_object(), *cands = json_array();
	int bad = !root || !cands;
	for (size_t i = 0; brokered && !bad && i < nq; i++)
		bad |= ju_push(cands, cand_json(&qs[i], &d->cands[i],
						qname(qs, d, i)));
	/* retryAfter: throttled and pending decisions only */
	long long retry = -1;
	if (th->throttled)
		retry = AB_PENDING_RETRY_S;
	else if (d->outcome == DEC_PENDING)
		retry = d->retry_after_s;
	bad = bad || ju_set(root, "taskID", json_integer(r->t.task_id)) ||
	      ju_set(root, "gshare", ju_str(r->t.gshare)) ||
	      ju_set(root, "user", ju_str(r->an.user)) ||
	      ju_set(root, "workingGroup", ju_str(r->an.working_group)) ||
	      ju_set(root, "taskClass",
		     ju_str(gm_task_class_name(m->task_class))) ||
	      ju_set(root, "decision", ju_str(decision_word(d, th))) ||
	      (retry >= 0 &&
	       ju_set(root, "retryAfter", json_integer(retry))) ||
	      ju_set(root, "throttle", throttle_json(th)) ||
	      ju_set(root, "owner", owner_json(&m->user)) ||
	      ju_set(root, "localityDropped",
		     json_boolean(brokered && m->aplan.locality_dropped)) ||
	      ju_set(root, "note", brokered && d->note[0] ? ju_str(d->note)
							  : json_null()) ||
	      /* best, assignments (each job activated or assigned) and
	      ** unassigned, the shape of the production record */
	      rpj_plan_json(root, r, m->queues, d, &m->plan) != GB_OK;
	/* a throttled task was not brokered: no stages */
	return rpt_finish_json(root, cands, brokered ? d : NULL, bad);
}
