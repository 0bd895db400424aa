/*
** decide.h — one decision path per kind (prefix md_): from what was loaded
** to the decision, for the worker and for `gridbroker explain` alike.
**
** Each function takes the request, the state it is decided on (loaded from
** MariaDB by the worker, parsed from a scenario file by `explain`), the
** parameters, the clock value and the seed, and returns everything the
** decision record and the events are made of. Nothing else decides: the
** worker's pipeline and the explain layer call these and only these, so a
** rule is fixed in one place and `explain` shows what the fleet does (the
** digest-equality test of tests/integration holds them to it).
**
** Candidates are considered in name order, whatever order they came in
** (the worker's loaders read them so; a scenario file may list them in any
** order), so a decision depends on its inputs, not on how they were listed.
**
** Pure like the engine: no I/O, no clock, no globals; memory comes from
** the caller's arena. The result structs point into themselves (the
** resolved request's software lives inside it), so fill them in place and
** do not copy them.
*/
#ifndef GB_DECIDE_H
#define GB_DECIDE_H

#include <stddef.h>
#include <stdint.h>

#include "analbroker.h"
#include "analysis.h"
#include "base/arena.h"
#include "base/limits.h"
#include "decision.h"
#include "jobbroker.h"
#include "model/gridmodel.h"
#include "model/tqindex.h"
#include "params.h"
#include "priority.h"
#include "taskbroker.h"
#include "taskqueue.h"
#include "timeout.h"

/* ---- task brokerage (TB-01..TB-13, FC-01..FC-07) ----------------------- */

struct md_task {
	struct tb_params params;     /* resolved for the task's gshare */
	struct dec_candidate *cands; /* one per nucleus; dec.cands points here */
	struct dec_decision dec;
	long long retry_at;          /* pending: now + retryAfter; else 0 */
};

/*
** Decide `task` over nuclei[0..n) with `params` (the overrides in force),
** the generator seeded with `seed` (the weighted choice, TB-13). Returns 0,
** GB_EINVAL (what the engine refuses as inconsistent) or GB_ETOOBIG (the
** arena is full).
*/
int md_decide_task(const struct tb_task *task, const struct tb_nucleus *nuclei,
		   size_t n, const struct prm_set *params, long long now,
		   uint64_t seed, struct arena *a, struct md_task *out);

/* ---- job brokerage (PJ-01..PJ-36, RC-*, NW-*) --------------------------- */

struct md_jobs {
	struct gm_request req;       /* the request, resolved (gm_resolve) */
	struct jb_queue *queues;     /* one per grid queue, grid order */
	size_t nqueues;
	struct jb_params params;     /* resolved for req's gshare */
	struct jb_env env;
	struct dec_candidate *cands; /* nqueues; dec.cands points here */
	struct dec_decision dec;
	struct jb_plan plan;         /* job_queue/job_status: req.njobs each */
	long long retry_at;          /* pending, or jobs left: now + 1 h */
};

/*
** Decide production request `r` (not modified) on grid `g`: gm_resolve,
** jb_params_resolve for its gshare, jb_broker with the generator seeded
** with `seed` (the PJ-36 draws). Returns 0, or what gm_resolve and
** jb_broker return (GB_EINVAL, GB_ENOMEM), GB_ETOOBIG when the arena is
** full.
*/
int md_decide_jobs(const struct gm_grid *g, const struct gm_request *r,
		   const struct prm_set *params, long long now, uint64_t seed,
		   struct arena *a, struct md_jobs *out);

/* ---- analysis (AJ-01..AJ-28) ------------------------------------------ */

struct md_analysis {
	struct gm_request req;       /* the request, resolved */
	struct jb_queue *queues;     /* nqueues, grid order */
	size_t nqueues;
	struct jb_env env;
	enum an_task_class task_class;
	struct an_user_load user;    /* what the throttle compared */
	struct an_throttle throttle; /* AJ-01..AJ-04 */
	struct ab_task task;         /* zero when throttled */
	struct ab_queue *aqs;        /* nqueues; NULL when throttled */
	struct dec_candidate *cands; /* nqueues; dec.cands points here */
	struct dec_decision dec;     /* throttled: pending, nothing weighed,
					the note says which cap */
	struct ab_plan aplan;        /* best queues with their weights */
	struct jb_plan plan;         /* each job's queue and status */
	long long retry_at;          /* throttled, pending or jobs left:
					now + 20 min; else 0 */
};

/*
** Decide analysis request `r` (r->an.is_analysis) on grid `g` with the
** owner's and the queues' loads `st` and task class `tclass`: the throttle
** (AJ-01..AJ-04) first; when it holds the task nothing is brokered (the
** decision names every queue and weighs none); otherwise gm_analysis_resolve,
** ab_broker and ab_distribute. A job given a queue is activated when all
** its input is at the queue's storage, else assigned. `seed` is accepted
** for the common shape and unused: the analysis brokerage draws nothing.
** Returns 0, GB_EINVAL (bad arguments, what the engine refuses),
** GB_ENOMEM or GB_ETOOBIG.
*/
int md_decide_analysis(const struct gm_grid *g, const struct gm_request *r,
		       const struct gm_analysis_state *st,
		       enum an_task_class tclass, const struct prm_set *params,
		       long long now, uint64_t seed, struct arena *a,
		       struct md_analysis *out);

/* ---- DIRAC: priorities and one pilot (PR-01..PR-08, TQ-04..TQ-10) ----- */

/*
** PR-01..PR-08 over the index's task queues: tqs[0..tqi_ntqs(x)) gets each
** TQ's statistics and its recomputed priority from `cfg` and the
** running-job history hist[0..nhist) at `now`; `note` (may be NULL) what
** the share correctors did. The index itself is not changed: the leader
** stores the priorities first, then sets them (tqi_set_priority). Returns
** 0 or pr_recompute's error.
*/
int md_priorities(const struct tqi_index *x, const struct pr_config *cfg,
		  const struct pr_sample *hist, size_t nhist, long long now,
		  struct pr_tq *tqs, char *note, size_t notelen);

/* 1 when `group` has JOB_SHARING in `cfg` (TQ-04), else 0. */
int md_job_sharing(const struct pr_config *cfg, const char *group);

/* A pilot's resource description (the pilot.match fields TQ-04..06 read)
** and the site its records name (the first site it gave, or "ANY"). */
struct md_pilot {
	const char *site;
	struct tqi_pilot d;
};

struct md_match {
	struct tq_resource res;  /* the pilot in the index's terms */
	struct tqi_resource_ids ids; /* res's lists point here: do not copy
					an md_match and use the copy's res */
	int job_sharing;         /* how many of the pilot's groups have
				    JOB_SHARING */
	struct tq_result result; /* filters, lottery, pick (TQ-04..TQ-10) */
	const char *code;        /* "matched", or the TQ-10 code */
	char reason[GB_MAX_STRING]; /* tq_result_format's line (ASCII, the
				       wire format's string cap) */
	/* The pick, when result.chosen >= 0 (names are the index's). */
	long long tq_id, job_id;
	int user_priority;
	long long tq_cpu;
	const char *owner, *owner_group;
};

/*
** Match pilot `p` against index `x` as it is now (its priorities as last
** set), with the generator seeded with `seed`: the resource is resolved
** against the index, JOB_SHARING looked up in `cfg`, the index's
** postings cut the TQs the pilot's fields exclude (tqi_candidates), then
** tq_match_among over the rest: the same result as tq_match over every
** view. `weights` is scratch of tqi_ntqs(x) doubles; `verdict` (may be
** NULL) gets each view's verdict (tq_match). The index is not changed
** (but for its match scratch): the caller takes the picked job out. Returns 0 (out->result.chosen -1: no
** job, out->code says why) or GB_EINVAL.
*/
int md_match_pilot(const struct tqi_index *x, const struct pr_config *cfg,
		   const struct md_pilot *p, uint64_t seed, double *weights,
		   uint8_t *verdict, struct md_match *out);

/* ---- timeouts (TO-01..TO-12) -------------------------------------------- */

struct md_timeout {
	int fired;               /* a rule fired: v holds it */
	struct to_verdict v;
	const char *exempt;      /* "paused", "disableReassign" or NULL */
	int has_next;            /* not fired: next_at is when one can */
	long long next_at;
};

/*
** The timeout rules for job `j` at queue `q` (NULL: no queue row) at
** `now`: the first rule that fires, or when one next can. Returns 0 or
** to_check's / to_next_check's error.
*/
int md_timeout(const struct to_job *j, const struct to_queue *q,
	       const struct prm_set *params, long long now,
	       struct md_timeout *out);

#endif
