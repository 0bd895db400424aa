/*
** report_analysis.h — how an analysis-brokerage decision is shown: the JSON of
** `explain --json` for an analysis scenario, which is also the decision
** detail the worker stores in MariaDB (route_jobs.c), and the readable
** table of `explain`.
**
** An analysis decision has a step the production one lacks: the task
** throttle (AJ-01..AJ-04) decides first, and a throttled task is not
** brokered at all. Both renderers therefore start with the throttle's
** verdict and the owner's numbers it compared, and show queues only when
** the task went on to the brokerage (AJ-05..AJ-28).
**
** The renderers read only what the worker holds after deciding: the
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
#include <stdio.h>

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
**    "best": [queue names, best first],
**    "assignments": [{"queue", "weight", "status": "activated" |
**                     "assigned", "jobIDs": [...]}]  (per best queue that
**                   got jobs and job status, rank order; rpj_plan_json),
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

/*
** The decision as a table: a title line; the throttle's verdict with the
** owner's numbers (jobs, cores, quota, share usage against target and the
** class limit); when throttled, the decision line and nothing else.
** Otherwise the best queues in rank order (weight, W_s x W_q breakdown),
** the dropped queues grouped under the stage that dropped them (rule,
** code, the numbers), "===== Analysis brokerage summary =====" with one
** dec_stage_format() line per stage, the AJ-28 second pass when it ran,
** the jobs per best queue, the unassigned count and the decision line.
** Prints nothing when `m` is inconsistent.
*/
void rpa_print_decision(FILE *out, const struct md_analysis *m);

#endif
