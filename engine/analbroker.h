/*
** analbroker.h — the ATLAS analysis job brokerage: candidates, persistent
** and temporary filters, weights and the best queues for an analysis task
** (AJ-05..AJ-20, AJ-28, with the numbers of analysis.h for AJ-21..AJ-27).
** The task throttle (AJ-01..AJ-04, an_throttle_check) decides before this
** runs: a throttled task is not brokered at all.
**
** Pure, like jobbroker.h whose queue and task structs it reuses: the caller
** passes each candidate queue (struct jb_queue: static attributes, counts
** for the task's gshare, the task's input locality at its storage) with
** the analysis extras (type, VP, site class, the user's load there, the
** task's recent job outcomes there), the task, the parameters and `now`.
**
** Stages, each a row of ab_filters[] (name, rule ID, function; the first
** failing row drops the queue with its rule, code and numbers):
**   AJ-05 type analysis or unified
**   AJ-06 excludedSite / includedSite (a pre-assigned site counts as
**         included)
**   persistent: AJ-07 status online unless pre-assigned; AJ-08 input
**   locality (the task's input must be at the queue's storage), off when
**   taskPriority >= 2000 or ioIntensity <= IO_INTENSITY_CUTOFF_USER (unset:
**   never off); AJ-09 disk IO as PJ-12; AJ-10 core count as PJ-13; AJ-11 VP
**   queues skipped when the task has avoidVP or the queue is overloaded
**   (queued > OVERLOAD_MIN_QUEUE and (running == 0 or queued / running >
**   OVERLOAD_RATIO_OFFSET x the gshare's grid-wide queued / running));
**   AJ-12 release/cache as PJ-14 (RC-*); AJ-13 memory; AJ-14 disk; AJ-15
**   storage free > STORAGE_MIN_FREE_SIZE_OUTPUT GB and not blacklisted;
**   AJ-16 walltime as PJ-21; AJ-17 a pilot within 3 hours
**   temporary: AJ-18 the task's failed + closed there in the last
**   TW_DONE_JOB_STAT hours >= max(2 x finished, MIN_BAD_JOBS_TO_SKIP_PQ);
**   AJ-19 defined + activated + assigned + starting > 2 x max(20,
**   running); AJ-20 the stabilizer's skip (an_stabilizer)
**   weights: AJ-24 or AJ-25 x AJ-26 as AJ-27 says
**   AJ-28: when the persistent filters leave nothing, everything is run
**   again without AJ-08 (the decision says so); when still nothing,
**   pending for AB_PENDING_RETRY_S; else the best AB_BEST_N by weight
**   (ties by queue name).
** Every stage records its in/out counts in the dec_decision.
**
** No I/O, no clock, no allocation (the caller gives the candidate array).
*/
#ifndef GB_ANALBROKER_H
#define GB_ANALBROKER_H

#include <stddef.h>

#include "analysis.h"
#include "decision.h"
#include "jobbroker.h"
#include "params.h"

#define AB_BEST_N 10
#define AB_PENDING_RETRY_S 1200    /* AJ-28: 20 minutes */
#define AB_LOCALITY_OFF_PRIO 2000  /* AJ-08: taskPriority >= this */
#define AB_MEM_COMPENSATION 0.9    /* AJ-13 */
#define AB_NOPILOT_S 10800         /* AJ-17: 3 hours */
#define AB_QUEUED_FLOOR 20         /* AJ-19: 2 x max(20, running) */

enum ab_queue_type {
	AB_QT_ANALYSIS = 0,
	AB_QT_UNIFIED,
	AB_QT_PRODUCTION,
	AB_QT_OTHER,
};

/* One candidate queue: the production view plus the analysis extras. */
struct ab_queue {
	const struct jb_queue *q;   /* name, status, site, counts, storage,
				       limits, sw, local_size/missing_size */
	enum ab_queue_type type;    /* AJ-05 */
	int is_vp;                  /* virtual placement queue (AJ-11) */
	enum an_site_class site_class; /* AJ-25 */
	struct an_queue_load load;  /* the task user's load there (AJ-20..26) */
	/* the task's jobs at this queue in the last TW_DONE_JOB_STAT hours */
	double task_failed, task_closed, task_finished; /* AJ-18 */
};

struct ab_task {
	const struct jb_task *t;    /* task_id, gshare, priority, core counts,
				       io_intensity, diskio, base_ram,
				       ram_count, work_disk_count, cpu_time,
				       cpu_efficiency, base_time, sw,
				       preassigned, jobs (walltime, AJ-16) */
	long task_priority;         /* taskPriority (AJ-08) */
	int ram_per_core;           /* ramCountUnit MBPerCore (1) or MB (0) */
	double input_disk_count;    /* MB, inputDiskCount of a job (AJ-14) */
	double out_disk_ratio;      /* outDiskCount as a ratio (AJ-14) */
	const char *const *excluded_sites; /* AJ-06 */
	size_t nexcluded;
	const char *const *included_sites; /* AJ-06; empty = no restriction */
	size_t nincluded;
	int avoid_vp;               /* AJ-11 */
	double grand_ratio;         /* AJ-11: the gshare's grid-wide queued /
				       running (PanDA's grandRatio), >= 0;
				       NAN when nothing of the gshare runs on
				       the grid */
	int user_analysis;          /* User or Express Analysis share (AJ-25) */
	enum an_task_class task_class;
	double nj;                  /* N_j: jobs to submit this cycle, > 0 */
	const struct rc_sw *all_sw; /* the "ALL" queue (RC-05, AJ-12), or
				       NULL when not published */
};

struct ab_plan {
	long best[AB_BEST_N];       /* queue indexes, best weight first */
	double weight[AB_BEST_N];
	size_t nbest;
	int locality_dropped;       /* AJ-28 ran the second pass */
};

/* The filter table in order (AJ-05..AJ-20), terminated by name == NULL.
** `fn` returns 1 to keep, 0 after dec_reject(). */
struct ab_ctx;
struct ab_filter {
	const char *name;     /* stage name, e.g. "memory" */
	const char *rule;     /* "AJ-13" */
	int persistent;       /* AJ-28: counts for the locality retry */
	int (*fn)(const struct ab_ctx *ctx, const struct ab_queue *q,
		  struct dec_candidate *c);
};
extern const struct ab_filter ab_filters[];

/*
** Broker `t` over qs[0..n). `cands` (n slots, caller-owned) gets every
** queue's weight or reasons (names from qs[i].q->name); `d` the stages and
** the outcome (DEC_ASSIGNED with chosen = best[0], or DEC_PENDING with
** retry_after_s AB_PENDING_RETRY_S); `plan` the best queues. `set` may be
** NULL (catalogue defaults). Returns 0, GB_EINVAL (NULL arguments, nj <=
** 0, a grand_ratio neither NAN nor finite and >= 0, a queue without q or
** without a name, counts an_stabilizer refuses, a class out of range).
*/
int ab_broker(const struct ab_task *t, const struct ab_queue *qs, size_t n,
	      const struct prm_set *set, long long now,
	      struct dec_candidate *cands, struct dec_decision *d,
	      struct ab_plan *plan);

/*
** Spread `njobs` jobs over plan->best in proportion to plan->weight
** (largest remainders; a tie goes to the better-ranked queue), in rank
** order: job_queue[0..k) get best[0], the next ones best[1], and so on.
** A plan with no queue leaves every job -1; when no weight is positive
** every job goes to best[0]. Returns 0,
** GB_EINVAL (NULL plan, or NULL job_queue with njobs > 0, or a negative or
** non-finite weight).
*/
int ab_distribute(const struct ab_plan *plan, size_t njobs, long *job_queue);

/* AJ-13: the expected memory of a job in MB at a queue with `cores`
** (the task's core count on a unified queue). */
double ab_memory_mb(const struct ab_task *t, long cores);

/* AJ-14: the expected disk of a job in MB (0 input on direct access). */
double ab_disk_mb(const struct ab_task *t, int direct_access);

#endif
