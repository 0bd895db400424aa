/*
** store_analysis.h — MariaDB for the analysis brokerage (AJ-01..AJ-28): the
** owners' load and quota, share usage, task classes, and per candidate
** queue the owner's queued/running jobs, the number of owners, the
** to-running rate and the task's recent outcomes. Tables: jobs, queues
** (0003 with the 0005 columns), analysis_owners, share_usage,
** task_classes (0005).
**
** Same rules as store.h: prepared statements with bound parameters only,
** times from the caller's clock.
**
** What counts (the choices, also in the README):
**  - queued = defined, assigned, activated, sent, starting; running =
**    running. pending and throttled jobs have no queue and count for
**    nothing, so a throttled task does not keep itself throttled;
**  - an owner's load (AJ-01) = its jobs in the jobs table (user_name, or
**    working_group when the request names one) + the analysis_owners
**    row's figures (load the grid reports besides gridbroker's jobs);
**    cores = the jobs' cores column;
**  - hi-site slots (AJ-04) = cores of the user's running jobs at queues of
**    site_class hi + the row's hi_site_slots;
**  - quota exceeded (AJ-03) when the row has quota_gb and quota_used_gb >
**    quota_gb;
**  - the share's usage/target from share_usage; user_analysis (AJ-04) is
**    set only for gshare "User Analysis" with a share_usage row (no row:
**    immune, logged by the caller);
**  - trr (AJ-21) = jobs whose started_at is in (now - 6 h, now] at the
**    queue, per hour (any owner, any gshare);
**  - nusers = distinct user_name with queued or running jobs at the queue;
**  - the task's outcomes (AJ-18): its jobs at the queue whose status is
**    failed, closed or finished and whose status_since is in
**    (now - TW_DONE_JOB_STAT h, now];
**  - a task without a task_classes row is class B;
**  - the gshare's grid-wide counts (AJ-11's grandRatio) = the sums of
**    defined + assigned + activated + starting and of running over every
**    queue_counts row of the task's gshare, the rows the per-queue counts
**    come from (a row of a queue not in queues counts too: PanDA's ratio
**    is over every site with jobs).
*/
#ifndef GB_STORE_ANAL_H
#define GB_STORE_ANAL_H

#include <stddef.h>

#include "base/arena.h"
#include "model/gridmodel.h"
#include "params.h"
#include "store/store.h"

/*
** The analysis state for request `r` (r->an.is_analysis, r->an.user set;
** r->t.gshare set): out->user complete for an_throttle_check (except
** task_class, which *tclass gets), grid_queued and grid_running of
** r->t.gshare, and one gm_analysis_queue for every queue
** where any of its numbers is non-zero (others are all zero), names in
** `a`. `set` gives TW_DONE_JOB_STAT (NULL = catalogue default). Reads
** only; meant for the decision's transaction. Returns 0, GB_EINVAL (NULL
** arguments, not an analysis request), GB_ETOOBIG (arena cap), GB_ERANGE
** (a bad row) or a database error.
*/
int st_analysis_state(struct st_db *db, const struct gm_request *r,
		  const struct prm_set *set, long long now, struct arena *a,
		  struct gm_analysis_state *out, enum an_task_class *tclass);

/*
** Replace the analysis tables (analysis_owners, share_usage,
** task_classes) with `g` in one transaction of its own; `now` stamps the
** rows. Returns 0, GB_EINVAL (NULL arrays with counts, a name twice, a
** negative or NaN number, a class out of range; st_error() names it),
** GB_ESTATE inside a transaction, or a database error; on error nothing
** changed.
*/
int st_analysis_save(struct st_db *db, const struct gm_analysis_grid *g,
		 long long now);

#endif
