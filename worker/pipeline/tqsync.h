/*
** tqsync.h — keeps a worker's task queue index (tqindex.h) in step with
** MariaDB (store_tq.h): a full load at start and after a reconnect, then
** cheap refreshes every [dirac] index_refresh_ms.
**
** A refresh reads the task_queues rows (a few hundred, without their
** requirements): a TQ new to the index is fetched with its requirements
** (st_tq_get) and added; a TQ gone from the table is dropped; priorities
** are copied; a TQ whose next_seq passed the index's seq gets its new jobs
** (st_tq_jobs_scan from the index's seq), after which the index's seq is
** that next_seq; then every TQ whose rm_next_seq passed the index's rm
** seq loses the jobs removed since (one st_tq_removals_scan_many for all
** of them: claims by any worker and waits ended by job.status), after
** which the index's rm seq follows.
**
** Why this is enough for "never hand out a job another worker claimed":
** it is not meant to be. The claim (st_tq_claim) is what guarantees it; a
** refresh only keeps the index close enough that a claim rarely loses.
** Why no job is missed and no removal either: jobs of one TQ commit in
** seq order and removals in rm seq order (store_tq.h), so reading from the
** index's seqs never skips a committed row. A TQ's removals are read after
** its jobs: a job removed before the job scan is not in tq_jobs any more,
** one removed after it is in the removal log. When the log was pruned
** below the index's rm seq (a worker far behind), that TQ is reloaded.
*/
#ifndef GB_TQSYNC_H
#define GB_TQSYNC_H

#include <stddef.h>

#include "store/store.h"
#include "store/store_tq.h"
#include "model/tqindex.h"

struct wk_tqs_state {
	int loaded; /* a full load has completed */
};

/* What one load or refresh changed (for the debug log and tests). */
struct wk_tqs_stats {
	size_t tqs_added, tqs_removed, jobs_added, jobs_removed,
		priorities_changed, tqs_reloaded;
};

/*
** Replace the contents of `x` with the database's: every TQ with its
** requirements and its seqs, then every waiting job, so a removal
** committed during the load is applied by the next refresh.
** `st` (may be NULL) gets the counts. Returns 0, GB_EINVAL (NULL db, x or
** s), GB_ERANGE (a row the index refuses), GB_ENOMEM or a store error.
** On error `x` may be partly filled and s->loaded is 0 (load again).
*/
int wk_tqs_load(struct st_db *db, struct tqi_index *x, struct wk_tqs_state *s,
	     struct wk_tqs_stats *st);

/* Bring `x` up to date as described above (s->loaded must be 1, else
** GB_ESTATE); errors as wk_tqs_load. A failed refresh leaves a consistent
** index that a later refresh or load completes. */
int wk_tqs_refresh(struct st_db *db, struct tqi_index *x, struct wk_tqs_state *s,
		struct wk_tqs_stats *st);

/*
** After the commit of this worker's own removals rm[0..n) (seqs written by
** st_tq_log_removals; the jobs already left the index): move each TQ's rm
** seq past them when nothing of another worker came in between, so a
** worker alone never reads its own claims back. Unknown TQs are skipped.
*/
void wk_tqs_own_removals(struct tqi_index *x, const struct st_tq_removal *rm,
			 size_t n);

#endif
