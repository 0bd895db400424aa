/*
** scenario_analysis.h — analysis-brokerage scenarios for `gridbroker
** explain`: a job scenario (scenario_jobs.h: now, seed, params, queues,
** sw, links, fileReplicas, task) whose task has taskType "anal", plus a
** top-level "analysis" object with what the worker would read from
** MariaDB besides the grid:
**   {"owner": {"workingGroup": bool (the counts are the task's working
**              group's, AJ-01), "runningJobs", "queuedJobs",
**              "runningCores", "queuedCores", "quotaExceeded": bool,
**              "shareUsage", "shareTarget", "hiSiteSlots"},
**    "taskClass": "S" | "A" | "B" (default) | "C",
**    "queues": {"QUEUE": {"trr", "nqUser", "nrUser", "nUsers",
**               "taskFailed", "taskClosed", "taskFinished"}}}
** Every key is optional (counts 0). A queue missing from "queues" has no
** load of the user there.
**
** sca_run decides it as the worker does (pipeline_analysis.c): gm_resolve,
** the throttle (an_throttle_check; throttled = nothing else runs), then
** gm_analysis_resolve, ab_broker and ab_distribute. report_analysis.h renders the
** result. The format is in schemas/scenario-jobs.schema.json.
*/
#ifndef GB_SCENARIO_ANALYSIS_H
#define GB_SCENARIO_ANALYSIS_H

#include <stddef.h>

#include <jansson.h>

#include "analbroker.h"
#include "analysis.h"
#include "base/arena.h"
#include "decision.h"
#include "model/gridmodel.h"
#include "explain/scenario_jobs.h"

/* A parsed analysis scenario. */
struct sca_scenario {
	struct scj_scenario job;      /* now, seed, params, grid, req */
	struct gm_analysis_state state;   /* state.user: the owner's load */
	enum an_task_class task_class;
};

/* Everything `explain` shows about one decided analysis scenario. Holds
** pointers into itself (task.t -> &req.t), so use it where sca_run filled
** it; do not copy it. */
struct sca_result {
	struct gm_request req;        /* the request, resolved */
	struct jb_queue *queues;      /* nqueues, resolved for req */
	size_t nqueues;
	struct jb_env env;
	enum an_task_class task_class;
	struct an_user_load user;     /* what the throttle read */
	struct an_throttle throttle;  /* AJ-01..AJ-04 */
	/* Set only when not throttled (aqs NULL and nothing below
	** meaningful otherwise). */
	struct ab_task task;
	struct ab_queue *aqs;         /* nqueues, grid order */
	struct dec_candidate *cands;  /* nqueues; dec.cands points here */
	struct dec_decision dec;
	struct ab_plan plan;
	long *job_queue;              /* req.njobs: queue index or -1 */
};

/*
** 1 when `root` is an analysis scenario: an object with "queues", no
** "kind", and a "task" whose taskType is "anal". Else 0.
*/
int sca_is_analysis_scenario(json_t *root);

/*
** Parse an analysis scenario. The job-scenario part is parsed by
** scj_parse_scenario (its errors unchanged); the task must have taskType
** "anal" ("task.taskType: expected \"anal\" ..." otherwise, GB_ERANGE).
** "analysis" errors name their path, e.g. 'analysis.queues["Q"].trr:
** expected a number >= 0, got -1' (GB_ERANGE), 'analysis.queues["X"]: no
** queue of that name in queues' (GB_ENOTFOUND), 'analysis.owner.foo:
** unknown field' (GB_EINVAL), 'analysis.taskClass: unknown value ...'.
** user_analysis of the owner's load is set when the task's gshare is
** "User Analysis" and shareTarget > 0 (the share throttle, AJ-04).
** Everything lives in `a`. Returns 0 or GB_E* with err.
*/
int sca_parse_scenario(json_t *root, struct arena *a, struct sca_scenario *out,
		       char *err, size_t errlen);

/*
** Decide `s`: gm_resolve on a copy of the request, an_throttle_check with
** the scenario's parameters; when throttled, stop there (out->aqs NULL,
** out->throttle says why); else gm_analysis_resolve, ab_broker and
** ab_distribute (only when assigned; every job -1 otherwise). Arrays live
** in `a`. Returns 0, GB_EINVAL (bad arguments, or what the engine
** refuses) or GB_ENOMEM.
*/
int sca_run(const struct sca_scenario *s, struct arena *a,
	    struct sca_result *out);

#endif
