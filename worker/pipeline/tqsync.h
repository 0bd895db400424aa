/*
** tqsync.h — keeps a worker's task queue index (tqindex.h) in step with
** MariaDB (store_tq.h): a full load at start and after a reconnect, then
** cheap refreshes every tq_refresh_ms.
**
** A refresh reads the task_queues rows (a few hundred, without their
** requirements): a TQ new to the index is fetched with its requirements
** (st_tq_get) and added; a TQ gone from the table is dropped; priorities
** are copied; a TQ whose next_seq passed the index's seq gets its new jobs
** (st_tq_jobs_scan from the index's seq), after which the index's seq is
** that next_seq. Then the jobs claimed by any worker since the last seen
** pilot_matches id are removed (st_tq_claimed_since, in chunks).
**
** Why this is enough for "never hand out a job another worker claimed":
** it is not meant to be. The claim (st_tq_claim) is what guarantees it; a
** refresh only keeps the index close enough that a claim rarely loses.
** Why no job is missed: jobs of one TQ commit in seq order (store_tq.h),
** so reading from the index's seq never skips a committed job.
*/
#ifndef GB_TQSYNC_H
#define GB_TQSYNC_H

#include <stddef.h>

#include "store/store.h"
#include "model/tqindex.h"

struct wk_tqs_state {
	long long last_match_id; /* highest pilot_matches id applied */
	int loaded;              /* a full load has completed */
};

/* What one load or refresh changed (for the debug log and tests). */
struct wk_tqs_stats {
	size_t tqs_added, tqs_removed, jobs_added, jobs_removed,
		priorities_changed;
};

/*
** Replace the contents of `x` with the database's: read the last match id
** first, then every TQ with its requirements, then every waiting job, so a
** claim committed during the load is removed by the next refresh.
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

#endif
