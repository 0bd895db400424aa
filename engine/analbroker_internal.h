/*
** analbroker_internal.h — what analbroker.c (the pipeline: passes, AJ-28,
** weights, best 10) and analbroker_filters.c (the rows AJ-05..AJ-20 of
** ab_filters[]) share, and nothing else includes.
**
** The filter rows read per-task facts the pipeline resolves once per
** decision (parameters, the locality switch of AJ-08/AJ-28) and per-queue
** facts it computes once per queue (pre-assigned, cores, the stabilizer),
** so the context's layout must be visible in both files; analbroker.h
** keeps struct ab_ctx opaque for every other module.
*/
#ifndef GB_ANALBROKER_INTERNAL_H
#define GB_ANALBROKER_INTERNAL_H

#include "analbroker.h"

/* Rows of ab_filters[] before its NULL terminator; analbroker_filters.c
** checks the table against it at compile time, analbroker.c sizes its
** per-row drop counters with it (it sees only the extern declaration). */
#define AB_NFILTERS 16

/* Facts of the queue being filtered, computed before its rows run. */
struct ab_qfacts {
	int preassigned;     /* in the task's pre-assigned list (AJ-06/07) */
	long cores;          /* AJ-10/13/14/16: the queue's, or the task's on
				a coreCount 0 queue (as PJ-13) */
	struct an_stab stab; /* AJ-20 (AJ-21..AJ-23 for the task's user) */
};

/* One decision's working context: filled by analbroker.c, read by the
** rows. Pointers borrow the caller's inputs of ab_broker(). */
struct ab_ctx {
	const struct ab_task *at;
	const struct jb_task *t;     /* at->t */
	long long now;
	int locality;                /* AJ-08 in force in this pass */
	double max_diskio_default;   /* MAX_DISKIO_DEFAULT (AJ-09) */
	double max_missing_files;    /* MAX_MISSING_INPUT_FILES (AJ-08) */
	double min_completeness;     /* MIN_INPUT_COMPLETENESS, % (AJ-08) */
	double total_files;          /* the jobs' input files (AJ-08) */
	double overload_min_queue;   /* OVERLOAD_MIN_QUEUE (AJ-11) */
	double overload_ratio;       /* OVERLOAD_RATIO_OFFSET (AJ-11) */
	double storage_min_free;     /* STORAGE_MIN_FREE_SIZE_OUTPUT (AJ-15) */
	double tw_done_h;            /* TW_DONE_JOB_STAT, for the reason */
	double min_bad_jobs;         /* MIN_BAD_JOBS_TO_SKIP_PQ (AJ-18) */
	long min_nevents;            /* AJ-16: the task's smallest job, -1 none */
	struct ab_qfacts f;          /* the current queue */
	const char *stage;           /* the current row's name */
};

/*
** Whether row `f` can drop anything for the task in this pass (AJ-08 off
** when the locality check is suppressed or dropped by AJ-28). Rows that
** cannot are skipped and show in == out. Returns 1 or 0.
*/
int ab_row_applies(const struct ab_ctx *ctx, const struct ab_filter *f);

#endif
