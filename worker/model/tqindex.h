/*
** tqindex.h — a worker's in-memory index of the task queues and their
** waiting jobs, so that matching a pilot is one pass of tq_match over
** ~500 views with no SQL (only the claim touches MariaDB).
**
** What it holds: interned strings (owner, group, setup, every requirement
** value) as uint32 ids; per task queue an engine view (struct tq_view)
** whose requirement sets are sorted id arrays; per TQ and UserPriority the
** waiting job ids in ascending order. A level's `lowest` points straight
** into that order, so the views are always ready for tq_match. Removing
** the lowest id (what a match usually takes) is O(1) amortised; other
** removals and insertions cost a binary search and a move.
**
** How it stays fresh is tqsync.h's business; the index is plain data and
** is unit-tested without servers. Pointers returned by tqi_views and the
** levels inside are valid until the next call that changes the index.
**
** Memory: about 12 bytes per waiting job plus the TQs; a million jobs in
** 500 TQs is ~15 MB. Allocation failures return GB_ENOMEM and leave the
** index as it was.
*/
#ifndef GB_TQINDEX_H
#define GB_TQINDEX_H

#include <stddef.h>
#include <stdint.h>

#include "priority.h"
#include "taskqueue.h"

struct tqi_index;

/* An empty index, or NULL when out of memory. The caller frees it with
** tqi_free (NULL is accepted), which frees every string and array. */
struct tqi_index *tqi_new(void);
void tqi_free(struct tqi_index *x);

/* Intern `s` (copied); the same string always gets the same id. Returns
** TQ_ID_UNKNOWN on allocation failure. */
uint32_t tqi_intern(struct tqi_index *x, const char *s);
/* The id of `s`, or TQ_ID_UNKNOWN when no TQ ever used it (then it
** matches no requirement set). */
uint32_t tqi_lookup(const struct tqi_index *x, const char *s);
/* The string of an id; NULL for an unknown id. */
const char *tqi_name(const struct tqi_index *x, uint32_t id);

/*
** Add task queue tq_id or, when present, replace its owner, group, setup,
** cpu_time and sets (its jobs stay, and so do its seqs). Sets are string
** sets (any order, repeats allowed; `set` NULL = no requirement at all);
** every string is copied. priority as tqi_set_priority. Returns 0,
** GB_EINVAL (tq_id <= 0, NULL strings, priority not finite) or GB_ENOMEM.
*/
int tqi_tq_put(struct tqi_index *x, long long tq_id, const char *owner,
	       const char *owner_group, const char *setup, long long cpu_time,
	       const struct tq_strset set[TQ_NFIELDS], double priority);

/* Remove a TQ and its jobs. GB_ENOTFOUND when absent. */
int tqi_tq_remove(struct tqi_index *x, long long tq_id);

/* 1 when the TQ is present. */
int tqi_tq_has(const struct tqi_index *x, long long tq_id);

/* Set a TQ's lottery priority (finite; <= 0 never wins tq_match's draw).
** Returns 0, GB_EINVAL (not finite) or GB_ENOTFOUND. */
int tqi_set_priority(struct tqi_index *x, long long tq_id, double priority);

/* The highest job seq loaded for a TQ (what tqsync asks the store from),
** and setting it (seq >= 0, else GB_EINVAL). 0 for a new TQ. GB_ENOTFOUND
** when absent. */
long long tqi_seq(const struct tqi_index *x, long long tq_id);
int tqi_set_seq(struct tqi_index *x, long long tq_id, long long seq);

/* The same for the TQ's removal log (st_tq_log_removals): removals below
** tqi_rm_seq are applied. 0 for a new TQ; kept by tqi_tq_put. */
long long tqi_rm_seq(const struct tqi_index *x, long long tq_id);
int tqi_set_rm_seq(struct tqi_index *x, long long tq_id, long long seq);

/*
** Add a waiting job. Idempotent: adding a job already present (same TQ)
** changes nothing and returns 0. GB_ENOTFOUND when the TQ is absent,
** GB_EINVAL for job_id <= 0 or a priority outside
** TQ_MIN_PRIORITY..TQ_MAX_PRIORITY, GB_ENOMEM.
*/
int tqi_job_add(struct tqi_index *x, long long tq_id, long long job_id,
		int user_priority);

/* Remove a job of a TQ (any level). GB_ENOTFOUND when not there. */
int tqi_job_remove(struct tqi_index *x, long long tq_id, long long job_id);

/* Waiting jobs in the index (all TQs), and in one TQ (0 when absent). */
size_t tqi_njobs(const struct tqi_index *x);
size_t tqi_tq_njobs(const struct tqi_index *x, long long tq_id);
size_t tqi_ntqs(const struct tqi_index *x);

/* The views, one per TQ, ordered by tq_id (valid until the next change);
** never NULL, *n gets the count. */
const struct tq_view *tqi_views(const struct tqi_index *x, size_t *n);

/*
** Every waiting job id of level `l` of the TQ at position `pos` of
** tqi_views, ascending: views[pos].levels[l].njobs of them, where the
** level's `lowest` shows only the first TQ_PICK_FROM (all tq_match
** reads); for writing the whole index out, as a match scenario. Valid
** until the next change; NULL with *n 0 when pos or l is out of range.
*/
const long long *tqi_level_ids(const struct tqi_index *x, size_t pos,
			       size_t l, size_t *n);

/*
** Inputs of pr_recompute, one per TQ in tq_id order: tq_id, owner and
** owner_group (the interned strings, valid while the index lives), njobs,
** prio_sum (sum of the jobs' UserPriorities). `out` has room for
** tqi_ntqs() entries; outputs of struct pr_tq are zeroed.
*/
void tqi_stats(const struct tqi_index *x, struct pr_tq *out);

/*
** A pilot's description as strings (pilot.match, a match scenario). Each
** list is a tq_strset (any order; at most TQ_MAX_PILOT_VALUES values are
** read). any[f]: the pilot gave ANY for field f (then want[f] is
** ignored); for the other fields an empty want[f] is no constraint too,
** for tags it means "offers none".
*/
struct tqi_pilot {
	const char *setup;      /* required */
	long long cpu_time;
	struct tq_strset want[TQ_NPFIELDS];
	int any[TQ_NPFIELDS];
	struct tq_strset required;           /* requiredTags */
	struct tq_strset banned[TQ_NPFIELDS]; /* bannedSite, ... */
	struct tq_strset groups, owners;     /* ownerGroup, ownerDN */
};

/* Room for the id lists of one resolved pilot (they live as long as the
** tq_resource that points into it). */
struct tqi_resource_ids {
	uint32_t v[(2 * TQ_NPFIELDS + 4) * TQ_MAX_PILOT_VALUES];
};

/*
** Resolve pilot `p` into a tq_resource whose lists point into `ids`
** (TQ_ID_UNKNOWN for values no TQ uses). job_sharing (may be NULL: none)
** has one flag per p->groups value: that group has JOB_SHARING.
*/
void tqi_resource(const struct tqi_index *x, const struct tqi_pilot *p,
		  const int *job_sharing, struct tqi_resource_ids *ids,
		  struct tq_resource *out);

/*
** The index's cut for `r`: the positions (in tqi_views order, ascending)
** of the views passing the first TQ_FL_NINDEXED filters, and cut[f] how
** many of the others filter f counts (the first of those filters, in
** table order, that the view fails); a field the pilot does not
** constrain is skipped. `verdict` (may be NULL) gets f for each view cut.
** *cand points into the index's scratch, valid until the next call on
** the index: one match at a time. Returns 0 or GB_EINVAL.
*/
int tqi_candidates(const struct tqi_index *x, const struct tq_resource *r,
		   const size_t **cand, size_t *ncand,
		   size_t cut[TQ_NFILTERS], uint8_t *verdict);

#endif
