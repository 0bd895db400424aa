/*
** report_jobs.h — a job-brokerage decision as JSON: the detail of the
** worker's decision record (record.h), which `explain --json` prints and
** render.h turns into text.
**
** The builders read the decision (candidates with their reasons, stages,
** outcome), the plan (best queues, each job's queue and status) and the
** request's job IDs; they never look anything up in the grid, so the worker
** records a decision with only what it already holds.
*/
#ifndef GB_REPORT_JOBS_H
#define GB_REPORT_JOBS_H

#include <stddef.h>

#include <jansson.h>

#include "decision.h"
#include "model/gridmodel.h"
#include "jobbroker.h"

/*
** The decision as JSON:
**   {"taskID", "nucleus", "gshare", "decision": "assigned"|"pending",
**    "retryAfter" (only when pending), "note" (string or null),
**    "nJobs", "nQueues" (the request's jobs, the candidate queues),
**    "best": [queue names, best first],
**    "assignments": [{"queue", "weight", "status": "assigned"|"activated",
**                     "count", "jobIDs": [...]}]  (per best queue and job
**                     status; count is the number of jobIDs, which the
**                     record's size bound may cut),
**    "unassigned": [jobIDs no queue took],
**    "candidates": [{"name", "weight" (number or null), "stage" (the stage
**                    that dropped it, or null), "reasons": [{"rule", "code",
**                    "detail"}], "moreReasons" (only when > 0),
**                    "weightDetail" ({"rule", "code", "detail"} for every
**                    queue that was weighed, survivors and those the caps
**                    dropped, else null)}]   (every queue once, grid order),
**    "stages": [{"name", "rule", "in", "out"}]}
** `r` gives the task fields and the job IDs (r->jobs, r->njobs, which the
** plan's job arrays follow); `queues` (nqueues, the decision's candidates in
** the same order) names queues whose candidate has no name. Returns a new
** reference the caller must json_decref, or NULL when out of memory or
** given NULL / inconsistent arguments.
*/
json_t *rpj_decision_json(const struct gm_request *r,
			  const struct jb_queue *queues, size_t nqueues,
			  const struct dec_decision *d,
			  const struct jb_plan *plan);

/*
** The plan part of a job decision, shared with the analysis record
** (report_analysis.h): sets "nJobs" (r->njobs), "nQueues" (d->ncands),
** "best" (queue names, best first), "assignments" ([{"queue", "weight",
** "status", "count", "jobIDs"}] per best queue and job status, activated
** first) and "unassigned" (job IDs without a queue) in `root`. `d` has one candidate per queue of `queues`. Returns
** 0, GB_EINVAL (inconsistent arguments) or GB_ENOMEM.
*/
int rpj_plan_json(json_t *root, const struct gm_request *r,
		  const struct jb_queue *queues, const struct dec_decision *d,
		  const struct jb_plan *plan);

/*
** The decision record the worker stores: rpj_decision_json plus "params"
** (the resolved jb_params the decision used, by their catalogue names)
** and "env" ({"now", "nucleusQueuedFiles"}), so a stored decision says
** which thresholds were in force. `p` and `env` may be NULL (then those
** keys are omitted). Ownership as rpj_decision_json.
*/
json_t *rpj_detail_json(const struct gm_request *r,
			const struct jb_queue *queues, size_t nqueues,
			const struct dec_decision *d, const struct jb_plan *plan,
			const struct jb_params *p, const struct jb_env *env);

#endif
