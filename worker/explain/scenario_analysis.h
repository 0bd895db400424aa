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
**    "gridQueued", "gridRunning": the task's gshare over the whole grid
**              (AJ-11's grandRatio = gridQueued / gridRunning), or
**    "grandRatio": that ratio itself; with neither, the sums of the
**              scenario's queues' counts of the task's gshare,
**    "queues": {"QUEUE": {"trr", "nqUser", "nrUser", "nUsers",
**               "taskFailed", "taskClosed", "taskFinished"}}}
** Every key is optional (counts 0). A queue missing from "queues" has no
** load of the user there.
**
** sca_run decides it through the worker's decision path
** (md_decide_analysis: the throttle, then the analysis brokerage, each
** job activated or assigned); report_analysis.h renders the result. The format is in schemas/scenario-jobs.schema.json.
*/
#ifndef GB_SCENARIO_ANALYSIS_H
#define GB_SCENARIO_ANALYSIS_H

#include <stddef.h>

#include <jansson.h>

#include "analbroker.h"
#include "analysis.h"
#include "base/arena.h"
#include "decision.h"
#include "model/decide.h"
#include "model/gridmodel.h"
#include "explain/scenario_jobs.h"

/* A parsed analysis scenario. */
struct sca_scenario {
	struct scj_scenario job;      /* now, seed, params, grid, req */
	struct gm_analysis_state state;   /* state.user: the owner's load */
	enum an_task_class task_class;
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
** unknown field' (GB_EINVAL), 'analysis.taskClass: unknown value ...',
** 'analysis.grandRatio: give grandRatio or gridQueued and gridRunning,
** not both' (GB_EINVAL), 'analysis.gridRunning: missing ...'
** (GB_EMISSING, one of the two counts without the other).
** user_analysis of the owner's load is set when the task's gshare is
** "User Analysis" and shareTarget > 0 (the share throttle, AJ-04).
** Everything lives in `a`. Returns 0 or GB_E* with err.
*/
int sca_parse_scenario(json_t *root, struct arena *a, struct sca_scenario *out,
		       char *err, size_t errlen);

/* sca_parse_scenario with options `o` for its grid (scenario_jobs.h; NULL:
** the defaults). */
int sca_parse_scenario_opts(json_t *root, struct arena *a,
			    const struct scj_opts *o, struct sca_scenario *out,
			    char *err, size_t errlen);

/*
** Decide `s` as the worker decides an analysis request: md_decide_analysis
** (model/decide.h) with the scenario's grid, request, owner's and queues'
** loads, task class, parameters, `now` and seed. Arrays live in `a`.
** Returns 0, or what md_decide_analysis returns.
*/
int sca_run(const struct sca_scenario *s, struct arena *a,
	    struct md_analysis *out);

#endif
