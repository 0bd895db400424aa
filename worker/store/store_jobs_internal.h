/*
** store_jobs_internal.h — what store_jobs.c (saving and loading the job
** grid) and store_jobs_decide.c (task context, decisions, pending requests,
** counts) share: the job statements' slots and the width of their IN
** lists. Neither file calls into the other; only they and the store's
** job test (which looks for a statement's slot in the cache) include it.
**
** The statement slots are one enum for both files because they index one
** range of the connection's statement caches (ST_SID_JOBS_BASE ..
** ST_SID_JOBS_LAST of store_internal.h): two enums could hand out the same
** slot to two statements, and the cache would then run the wrong SQL.
*/
#ifndef GB_STORE_JOBS_INTERNAL_H
#define GB_STORE_JOBS_INTERNAL_H

#include "store/store_internal.h"

/* ---- statements ---------------------------------------------------------- */

enum sj_slot {
	SJ_DEL_QUEUES = 0,
	SJ_DEL_COUNTS,
	SJ_DEL_LINKS,
	SJ_DEL_SW_ALL,
	SJ_DEL_REPLICAS,
	SJ_INS_QUEUE,
	SJ_INS_COUNT,
	SJ_INS_LINK,
	SJ_INS_SW_ALL,
	SJ_INS_REPLICA,
	SJ_QUEUES,
	SJ_LINKS,
	SJ_SW_ALL,
	SJ_REPLICAS_IN,
	SJ_TASK_INFO,
	SJ_DONE_IN,
	SJ_JOB_UPSERT,
	SJ_COUNTS_ADD,
	SJ_REQUEST_UPSERT,
	SJ_PENDING_DUE,
	SJ_REQUEST_LOAD,
	SJ_REQUEST_CLOSE,
	SJ_COUNTS_GET,
	SJ_LOCK,
	SJ_COUNTS_OF,
	SJ_NSLOTS
};
_Static_assert(ST_SID_JOBS_BASE + SJ_NSLOTS <= ST_SID_JOBS_LAST + 1,
	       "store_internal.h reserves too few job statement slots");
/* The statement-cache slot of job statement `slot`. */
#define SJ_SID(slot) ((enum st_sid)(ST_SID_JOBS_BASE + (slot)))

#define SJ_IN_CHUNK 128 /* entries of the IN lists */

/* Count columns of queue_counts: running, defined, assigned, activated,
** starting, transferring, nbatchjob (struct jb_counts, in that order). */
#define SJ_NCOUNTS 7

#endif
