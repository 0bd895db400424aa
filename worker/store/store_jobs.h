/*
** store_jobs.h — MariaDB for the production job brokerage: the job grid
** (queues with their counts per gshare, links, published software, file
** replicas), the jobs, and the job.broker requests with their pending
** retries. Tables: schemas/migrations/0003_jobbrokerage.sql.
**
** Same rules as store.h: one blocking connection, prepared statements with
** bound parameters only, times are unix seconds passed in by the caller.
** Errors: GB_EINVAL for bad arguments or a grid the tables cannot hold,
** GB_ENOTFOUND for a missing row, GB_ERANGE for a row read back out of
** range (a hand edit), GB_ETOOBIG when the result does not fit the arena,
** GB_ESTATE when a function that must run inside the caller's transaction
** is called outside one, and the store's GB_EDB / GB_EDBGONE / GB_EDBRETRY;
** st_error() has the text.
**
** "Inside a transaction" functions neither begin nor commit: the caller
** brackets them with st_begin/st_commit so that what they write commits
** with the decision and the outbox event, or not at all.
*/
#ifndef GB_STORE_JOBS_H
#define GB_STORE_JOBS_H

#include <stddef.h>

#include "base/arena.h"
#include "decision.h"
#include "model/gridmodel.h"
#include "jobbroker.h"
#include "store/store.h"
#include "taskbroker.h"

/*
** Replace the whole job grid with `g`, in one transaction of its own:
** queues (every static attribute of g->queues[i].q, the release list of
** LIST queues, sw_json), their counts per gshare, links, the ALL software
** dictionary (g->all_sw_json; none when NULL) and file replicas. The
** queues' last_pilot/last_start are absolute unix seconds, 0 = never
** (stored as NULL). `now` stamps the rows. Nothing of g is kept.
** Returns 0, GB_EINVAL (NULL arrays, an enum out of range, a NaN, or a row
** the tables refuse: a name listed twice, an empty name, a number out of
** range — st_error() names the key or the CHECK constraint), GB_ESTATE
** when called inside a transaction, or a database error; on error nothing
** changed.
*/
int st_jobs_grid_save(struct st_db *db, const struct gm_grid *g, long long now);

/*
** Inside a transaction (reads only): the grid request `r` is decided on.
** Every queue, ordered by name, with its counts for r->t.gshare (ncounts 1
** when a row exists, else 0), its release list, sw_json, and for AUTO
** queues q.sw parsed from sw_json (none published: q.sw NULL, so every RC
** check fails); the links to r->t.nucleus only; the ALL dictionary (text
** and parsed, NULL when absent); and the replicas of the distinct lfns of
** r's jobs only (one gm_file per lfn that has any). Per-task fields of the
** queues stay zero for gm_resolve(). Everything lives in `a`.
** Returns 0, GB_EINVAL (NULL arguments, r->t.gshare or r->t.nucleus NULL),
** GB_ERANGE (a row out of range or sw_json that does not parse),
** GB_ETOOBIG (arena cap) or a database error.
*/
int st_jobs_grid_load(struct st_db *db, const struct gm_request *r,
		      struct arena *a, struct gm_grid *out);

/*
** The job-brokerage context of task `task_id` from the task brokerage's
** tables: its nucleus and gshare (copied into `a`) and the FC-06 scope
** from its fullChain and the nucleus's bareNucleus (a nucleus missing from
** the nuclei table counts as a normal one). Returns 0, GB_ENOTFOUND when
** the task is unknown or has no nucleus yet, GB_ERANGE for a bad row, or
** a database error.
*/
int st_jobs_task_info(struct st_db *db, long long task_id, struct arena *a,
		      const char **nucleus, const char **gshare,
		      enum tb_job_scope *scope);

/*
** done[i] = 1 when job job_ids[i] already has a queue (any status but
** pending and throttled; a reassigned job is pending again), else 0; `done` has n slots. Ids may repeat. Reads in chunks,
** so n is bounded only by the caller's arrays. Returns 0 or a database
** error.
*/
int st_jobs_done(struct st_db *db, const long long *job_ids, size_t n,
		 unsigned char *done);

/*
** Inside a transaction, before the first job decision in it: lock the row
** every job decision locks (0010_broker_lock.sql), held to the commit, so
** that job decisions of all workers are taken one transaction at a time
** and each reads the queue counts every earlier one committed: racing
** decisions never pass a PJ-33/PJ-34/PJ-36 cap together. Waits while
** another worker's transaction holds it. Returns 0, GB_ESTATE (outside a
** transaction, or the row is missing: not migrated) or a database error
** (GB_EDBRETRY on a lock wait timeout or deadlock).
*/
int st_jobs_lock(struct st_db *db, long long now);

/*
** Inside the caller's transaction: record a job-brokerage decision.
**  - a decisions row (kind "jobs", subject the task id, d->outcome, chosen =
**    the name of queues[plan->best[0]] when assigned, else NULL,
**    `request_id`, `detail_json`); *decision_id gets its id;
**  - every job of r (r->jobs[i] with plan->job_queue[i] and
**    plan->job_status[i], indexes into `queues`, the array gm_resolve made
**    for r): placed jobs get their queue and status assigned/activated,
**    the others status pending with no queue. A job that already has a
**    queue is left as it is (a request racing another one for the same
**    job), and is not counted below;
**  - queue_counts of r->t.gshare: assigned/activated grow by the jobs this
**    decision placed (rows are created when missing), in the same
**    transaction, so the next decision sees them;
**  - the job_requests row of `request_id` (created or updated): the body
**    (`len` bytes of msgpack, at most a MEDIUMBLOB), the task id, status
**    pending with pending_until = retry_at when d->outcome is pending or a
**    job was left without a queue, else done.
**  - the life-cycle columns of 0005 for every job written: gshare =
**    r->t.gshare, user_name/working_group from r->an (NULL for
**    production), cores = r->t.core_count, current_priority =
**    r->t.priority, brokered_at = status_since = status_time = now,
**    created_at = now on insert only (kept across reassignments), and
**    check_at = to_next_check() of the new status at its queue (queue
**    last_start from `queues`; `set` gives the limits, NULL = catalogue
**    defaults);
**  - `unplaced_throttled` 1 (the analysis throttle stopped the task):
**    jobs without a queue get status throttled instead of pending.
** Returns 0, GB_EINVAL (NULL arguments, an index or status out of range, an
** assigned outcome without a best queue), GB_ETOOBIG (body too long),
** GB_ESTATE (outside a transaction) or a database error.
*/
int st_jobs_decide(struct st_db *db, const struct gm_request *r,
		   const struct jb_queue *queues, const struct dec_decision *d,
		   const struct jb_plan *plan, const char *request_id,
		   const void *body, size_t len, long long now,
		   long long retry_at, const char *detail_json,
		   const struct prm_set *set, int unplaced_throttled,
		   long long *decision_id);

/*
** Inside a transaction: ids of up to `max` job_requests rows that are
** pending with pending_until <= now, oldest due first, locked FOR UPDATE
** SKIP LOCKED so two workers never retry the same request (a row another
** transaction holds is skipped, not waited for). `ids` has `max` slots.
** Returns 0, GB_ESTATE (outside a transaction) or a database error.
*/
int st_jobs_pending_due(struct st_db *db, long long now, size_t max,
			long long *ids, size_t *n);

/*
** The stored request of job_requests row `id`: its message id and msgpack
** body, both copied into `a` (the body is never NULL on success).
** Returns 0, GB_ENOTFOUND, GB_ETOOBIG (arena cap) or a database error.
*/
int st_jobs_request_load(struct st_db *db, long long id, struct arena *a,
			 char **request_id, void **body, size_t *len);

/*
** Mark job_requests row `id` done (no retry; pending_until cleared), for a
** due request whose jobs were all placed meanwhile. Meant for the caller's
** transaction of the pending scan. Returns 0, GB_ENOTFOUND or a database
** error.
*/
int st_jobs_request_close(struct st_db *db, long long id, long long now);

/*
** The counts of `queue` for `gshare`. Returns 0, GB_ENOTFOUND when there is
** no row, GB_ERANGE for a bad row, or a database error.
*/
int st_jobs_counts(struct st_db *db, const char *queue, const char *gshare,
		   struct jb_counts *out);

#endif
