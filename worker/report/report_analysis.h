/*
** report_analysis.h — an analysis-brokerage decision as JSON: the detail
** of the decision record the worker stores in MariaDB (record.h), which
** `explain --json` prints for an analysis scenario and render.h turns
** into text.
**
** An analysis decision has a step the production one lacks: the task
** throttle (AJ-01..AJ-04) decides first, and a throttled task is not
** brokered at all. The JSON therefore carries the throttle's verdict and
** the owner's numbers it compared, and queues only when the task went on
** to the brokerage (AJ-05..AJ-28).
**
** The builder reads only what the worker holds after deciding: the
** request, the ab_queue array (for names, types and the user's load per
** queue), the dec_decision, the ab_plan, the job -> queue array of
** ab_distribute, the throttle result, the owner's load and the task class.
** They never look anything up in the grid.
**
** Size: one entry per candidate queue with at most DEC_MAX_REASONS reasons
** (the excess counted), one per stage, one per best queue with its job IDs;
** nothing per job and reason, so a decision of 10000 jobs over 20000
** queues stays in the hundreds of kilobytes at most.
*/
#ifndef GB_REPORT_ANAL_H
#define GB_REPORT_ANAL_H

#include <stddef.h>

#include <jansson.h>

#include "analbroker.h"
#include "analysis.h"
#include "decision.h"
#include "model/decide.h"
#include "model/gridmodel.h"

/*
** The decision as JSON:
**   {"taskID", "gshare", "user", "workingGroup" (string or null),
**    "taskClass": "S".."C",
**    "decision": "assigned" | "pending" | "throttled",
**    "retryAfter" (pending and throttled: seconds),
**    "throttle": {"throttled": bool, "rule", "code" (null when not),
**                 "value", "limit" (null when not)},
**    "owner": {"countsOf": "user" | "workingGroup", "runningJobs",
**              "queuedJobs", "runningCores", "queuedCores",
**              "quotaExceeded", "userAnalysis", "shareUsage",
**              "shareTarget", "sharePercent" (null without a target),
**              "hiSiteSlots"},
**    "localityDropped": bool (AJ-28 second pass), "note" (string or null),
**    "nJobs", "nQueues", "best": [queue names, best first],
**    "assignments": [{"queue", "weight", "status": "activated" |
**                     "assigned", "count", "jobIDs": [...]}]  (per best
**                   queue that got jobs and job status, rank order;
**                   rpj_plan_json),
**    "unassigned": [jobIDs no queue took],
**    "candidates": [{"name", "type", "siteClass", "weight" (or null),
**                    "stage", "reasons", "moreReasons", "weightDetail",
**                    "userQueued", "userRunning"}]  (grid order),
**    "stages": [{"name", "rule", "in", "out"}]}
** When throttled, candidates and stages are [] and best and assignments
** are [], every job is unassigned. `m` is what md_decide_analysis filled.
** Returns a new reference the caller must json_decref, or NULL when out
** of memory or given NULL / inconsistent arguments.
*/
json_t *rpa_decision_json(const struct md_analysis *m);

#endif
