/*
** report_jobs.c — the JSON of a job-brokerage decision (report_jobs.h).
**
** Like report.c for task brokerage, the builders read only the decision,
** the plan and the request's job IDs: reasons keep static templates and
** numbers, and dec_reason_format renders them here, once. Queues dropped
** after they were weighed (caps, best 10) keep what they weighed, which
** the text (render.c) shows under their reasons.
*/
#include "report/report_jobs.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "base/jsonutil.h"
#include "gb_error.h"
#include "report/report.h"

static const char *cand_name(const struct jb_queue *queues,
			     const struct dec_decision *d, size_t i)
{
	if (d->cands[i].name)
		return d->cands[i].name;
	return queues && queues[i].name ? queues[i].name : "?";
}

/* The arguments agree with each other (sizes, indexes in range). */
static int consistent(const struct gm_request *r,
		      const struct jb_queue *queues, size_t nq,
		      const struct dec_decision *d, const struct jb_plan *plan)
{
	if (r == NULL || d == NULL || plan == NULL || d->ncands != nq ||
	    (nq && d->cands == NULL) || (nq && queues == NULL) ||
	    plan->nbest > JB_BEST_N || d->nstages > DEC_MAX_STAGES)
		return 0;
	if (r->njobs &&
	    (r->jobs == NULL || !plan->job_queue || !plan->job_status))
		return 0;
	for (size_t b = 0; b < plan->nbest; b++)
		if (plan->best[b] < 0 || (size_t)plan->best[b] >= nq)
			return 0;
	return 1;
}

/* ---- JSON --------------------------------------------------------------- */

/* The jobs of best queue `qi` with status `st`, or NULL when none. */
static json_t *assignment_json(const struct gm_request *r,
			       const struct jb_plan *plan, long qi,
			       enum jb_job_status st, const char *name,
			       double weight, int *bad)
{
	json_t *ids = NULL;
	for (size_t j = 0; j < r->njobs && !*bad; j++) {
		if (plan->job_queue[j] != qi || plan->job_status[j] != st)
			continue;
		if (ids == NULL && (ids = json_array()) == NULL)
			*bad = 1;
		else
			*bad |= ju_push(ids, json_integer(r->jobs[j].job_id));
	}
	if (ids == NULL || *bad) {
		json_decref(ids);
		return NULL;
	}
	json_t *o = json_object();
	*bad |= o == NULL;
	if (o != NULL) {
		*bad |= ju_set(o, "queue", ju_str(name));
		*bad |= ju_set(o, "weight",
			       isfinite(weight) ? json_real(weight)
						: json_null());
		*bad |= ju_set(o, "status", ju_str(jb_job_status_name(st)));
		*bad |= ju_set(o, "count",
			       json_integer((json_int_t)json_array_size(ids)));
	}
	if (o == NULL || ju_set(o, "jobIDs", ids)) {
		*bad = 1;
		json_decref(o);
		if (o == NULL)
			json_decref(ids);
		return NULL;
	}
	return o;
}

int rpj_plan_json(json_t *root, const struct gm_request *r,
		  const struct jb_queue *queues, const struct dec_decision *d,
		  const struct jb_plan *plan)
{
	if (root == NULL || d == NULL || !consistent(r, queues, d->ncands, d, plan))
		return GB_EINVAL;
	json_t *best = json_array(), *asg = json_array(), *un = json_array();
	int bad = !best || !asg || !un;
	static const enum jb_job_status order[] = {JB_JOB_ACTIVATED,
						   JB_JOB_ASSIGNED};
	for (size_t b = 0; !bad && b < plan->nbest; b++) {
		long qi = plan->best[b];
		const char *name = cand_name(queues, d, (size_t)qi);
		bad |= ju_push(best, ju_str(name));
		for (size_t s = 0; !bad && s < 2; s++) {
			json_t *o = assignment_json(r, plan, qi, order[s], name,
						    d->cands[qi].weight, &bad);
			if (o != NULL)
				bad |= ju_push(asg, o);
		}
	}
	for (size_t j = 0; !bad && j < r->njobs; j++)
		if (plan->job_queue[j] < 0)
			bad |= ju_push(un, json_integer(r->jobs[j].job_id));
	if (bad) {
		json_decref(best);
		json_decref(asg);
		json_decref(un);
		return GB_ENOMEM;
	}
	/* ju_set steals its value even when it fails */
	bad |= ju_set(root, "nJobs", json_integer((json_int_t)r->njobs));
	bad |= ju_set(root, "nQueues", json_integer((json_int_t)d->ncands));
	bad |= ju_set(root, "best", best);
	bad |= ju_set(root, "assignments", asg);
	bad |= ju_set(root, "unassigned", un);
	return bad ? GB_ENOMEM : GB_OK;
}

json_t *rpj_decision_json(const struct gm_request *r,
			  const struct jb_queue *queues, size_t nqueues,
			  const struct dec_decision *d,
			  const struct jb_plan *plan)
{
	if (!consistent(r, queues, nqueues, d, plan))
		return NULL;
	json_t *root = json_object(), *cands = json_array();
	int bad = !root || !cands;
	for (size_t i = 0; !bad && i < nqueues; i++)
		bad |= ju_push(cands,
			       ju_candidate_json(&d->cands[i],
						 cand_name(queues, d, i), 1));
	bad = bad || ju_set(root, "taskID", json_integer(r->t.task_id)) ||
	      ju_set(root, "nucleus", ju_str(r->t.nucleus)) ||
	      ju_set(root, "gshare", ju_str(r->t.gshare)) ||
	      ju_set(root, "decision", ju_str(dec_outcome_name(d->outcome))) ||
	      (d->outcome == DEC_PENDING &&
	       ju_set(root, "retryAfter", json_integer(d->retry_after_s))) ||
	      ju_set(root, "note",
		     d->note[0] ? ju_str(d->note) : json_null()) ||
	      rpj_plan_json(root, r, queues, d, plan) != GB_OK;
	return rpt_finish_json(root, cands, d, bad);
}

/* A parameter as JSON: NaN (unset) becomes null. */
static json_t *jnum(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

/* The jb_params fields by their catalogue names (NW_ACTIVE is an int). */
#define P(name, field) {name, offsetof(struct jb_params, field)}
static const struct {
	const char *name;
	size_t off;
} param_names[] = {
	P("NQUEUED_SAT_CAP", nqueued_sat_cap),
	P("NQUEUED_NUC_CAP_FOR_JOBS", nqueued_nuc_cap),
	P("IO_INTENSITY_CUTOFF", io_cutoff),
	P("SIZE_CUTOFF_TO_MOVE_INPUT", size_cutoff_move),
	P("NUM_CUTOFF_TO_MOVE_INPUT", num_cutoff_move),
	P("MAX_DISKIO_DEFAULT", max_diskio_default),
	P("NW_QUEUE_IMPORTANCE", nw_queue_importance),
	P("NW_THRESHOLD", nw_threshold),
	P("NW_WEIGHT_MULTIPLIER", nw_multiplier),
	P("MAX_PRIO_TO_BOOTSTRAP", max_prio_bootstrap),
	P("NQUEUELIMITSITE", nqueue_limit),
	P("STORAGE_MIN_FREE_SIZE", storage_min_free),
	P("MIN_WEIGHT", min_weight),
};
#undef P

json_t *rpj_detail_json(const struct gm_request *r,
			const struct jb_queue *queues, size_t nqueues,
			const struct dec_decision *d,
			const struct jb_plan *plan, const struct jb_params *p,
			const struct jb_env *env)
{
	json_t *root = rpj_decision_json(r, queues, nqueues, d, plan);
	if (root == NULL)
		return NULL;
	int bad = 0;
	/* jset steals `o` even when it fails, so nothing leaks on error */
	if (p != NULL) {
		json_t *o = json_object();
		bad = ju_set(root, "params", o);
		for (size_t i = 0; !bad && i < sizeof(param_names) /
							sizeof(param_names[0]);
		     i++) {
			double v;
			memcpy(&v, (const char *)p + param_names[i].off,
			       sizeof(v));
			bad |= ju_set(o, param_names[i].name, jnum(v));
		}
		if (!bad)
			bad = ju_set(o, "NW_ACTIVE",
				     json_integer(p->nw_active));
	}
	if (env != NULL && !bad) {
		json_t *o = json_object();
		bad = ju_set(root, "env", o);
		if (!bad)
			bad = ju_set(o, "now", json_integer(env->now)) ||
			      ju_set(o, "nucleusQueuedFiles",
				     jnum(env->nucleus_queued_files));
	}
	if (bad) {
		json_decref(root);
		return NULL;
	}
	return root;
}
