/*
** store_tq_internal.h — what the DIRAC store files share: store_tq.c
** (helpers, the index's reads, reading match records), store_tq_match.c
** (submission, claim, writing match records) and store_tq_leader.c
** (configuration, job status, lease, priorities, history, cleanup) and
** store_tq_removed.c (the removal log the workers' indexes follow). Only
** those four files include it.
**
** The statement slots are one enum for all four files because they index
** one range of the connection's statement caches (ST_SID_TQ_BASE ..
** ST_SID_TQ_LAST of store_internal.h): two enums could hand the same slot
** to two statements, and the cache would then run the wrong SQL. The
** statements with lists (IN lists, CASE arms, multi-row INSERTs) are
** bound and built like every other of the store (store_internal.h).
*/
#ifndef GB_STORE_TQ_INTERNAL_H
#define GB_STORE_TQ_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <mysql.h>

#include "store/store_internal.h"

/* ---- statements ---------------------------------------------------------- */

enum stq_slot {
	/* store_tq.c */
	STQ_LIST = 0,
	STQ_LIST_REQS,
	STQ_GET,
	STQ_SCAN_ONE,
	STQ_SCAN_ALL,
	STQ_MATCH_GET,
	STQ_MATCH_DETAIL,
	/* store_tq_match.c */
	STQ_SIG_LOOKUP,
	STQ_TQ_LOCK,
	STQ_TQ_INSERT,
	STQ_TQ_LOCK_SIG,
	STQ_DIRTY_BUMP,
	STQ_NEXT_SEQ,
	STQ_CLAIM,
	STQ_MATCHED_UPDATE,
	STQ_INS_REQS,
	STQ_INS_WMS,
	STQ_INS_TQ_JOBS,
	STQ_INS_MATCHES,
	/* store_tq_leader.c */
	STQ_JOB_STATUS,
	STQ_JOB_EXISTS,
	STQ_JOB_GET,
	STQ_CFG_DEL_SLICES,
	STQ_CFG_DEL_INST,
	STQ_CFG_DEL_GROUPS,
	STQ_CFG_DEL_SEGS,
	STQ_CFG_INS_GROUP,
	STQ_CFG_INS_INST,
	STQ_CFG_INS_SLICE,
	STQ_CFG_INS_SEG,
	STQ_CFG_SETTINGS,
	STQ_CFG_GET_SETTINGS,
	STQ_CFG_GET_GROUPS,
	STQ_CFG_GET_INST,
	STQ_CFG_GET_SLICES,
	STQ_CFG_GET_SEGS,
	STQ_LEASE,
	STQ_LEASE_RELEASE,
	STQ_PRIO_STATE,
	STQ_PRIO_UPDATE,
	STQ_PRIO_DONE,
	STQ_HIST_SAMPLE,
	STQ_HIST_LOAD,
	STQ_HIST_PRUNE,
	STQ_CLEAN_CANDIDATES,
	STQ_CLEAN_LOCK,
	STQ_CLEAN_HAS_JOB,
	STQ_CLEAN_DELETE,
	STQ_CLEAN_DIRTY,
	STQ_JOB_UNQUEUE,
	/* store_tq_removed.c */
	STQ_RM_LOCK,
	STQ_RM_ADVANCE,
	STQ_INS_REMOVED,
	STQ_RM_SCAN,
	STQ_RM_PRUNE,
	STQ_NSLOTS
};
_Static_assert(ST_SID_TQ_BASE + STQ_NSLOTS <= ST_SID_TQ_LAST + 1,
	       "store_internal.h reserves too few task queue statement slots");
/* The statement-cache slot of task queue statement `slot`. */
#define STQ_SID(slot) ((enum st_sid)(ST_SID_TQ_BASE + (slot)))

/* Longest text a VARCHAR(256) utf8mb4 column can hold, in bytes. A longer
** value is refused before it is sent: it could not be stored anyway, and a
** multi-row statement of such values could pass max_allowed_packet, which
** costs the connection rather than the statement. */
#define STQ_MAX_NAME_BYTES 1024

/* ---- small helpers ------------------------------------------------------- */

/* 64-bit hash of a signature (FNV-1a with a final avalanche). */
uint64_t stq_hash64(const char *s, size_t n);

/* A name for a VARCHAR(256) column: non-NULL, non-empty, not longer than
** STQ_MAX_NAME_BYTES. */
int stq_name_ok(const char *s);

/* TQs per statement of stq_set_per_tq (CASE arms). */
#define STQ_CASE_CHUNK 128

/*
** In the caller's transaction: one BIGINT column of task_queues set per TQ,
** ids[0..n) (ascending: the lock order of store_tq_match.c) getting
** vals[i], STQ_CASE_CHUNK TQs per statement. `sql` is
** "UPDATE task_queues SET col = CASE tq_id " ST_PAIRS "END WHERE tq_id IN
** (" ST_LIST ")", prepared in slot `slot`. The one writer of next_seq
** (submission) and rm_next_seq (the removal log).
*/
int stq_set_per_tq(struct st_db *db, enum stq_slot slot, const char *sql,
		   const long long *ids, const long long *vals, size_t n);

/* Text column `i` compared with s[0..len) without copying it when it fit
** the fixed buffer; 1 equal, 0 different, negative a store error. */
int stq_col_equals(struct st_db *db, MYSQL_STMT *s, struct st_cols *c,
		   unsigned i, const char *str, size_t len);

#endif
