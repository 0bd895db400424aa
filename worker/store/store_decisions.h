/*
** store_decisions.h — reading decision records back (`gridbroker why`)
** and deleting expired ones (the retention step of the worker's tick).
**
** Two tables hold decisions: `decisions` (task, jobs, timeout, rebro) and
** `pilot_matches` (pilot.match). Both are read the same way here, as
** struct st_dec_row, so the CLI renders every kind with one code path.
*/
#ifndef GB_STORE_DECISIONS_H
#define GB_STORE_DECISIONS_H

#include <stddef.h>

#include "base/arena.h"
#include "store/store.h"

/* Rows deleted per table and statement by st_dec_expire. */
#define ST_DEC_EXPIRE_BATCH 1000

/* What `why` asks about. */
enum st_dec_what {
	ST_DEC_TASK,  /* decisions kind 'task', subject = task id */
	ST_DEC_JOB,   /* a PanDA job: its timeout/rebro decisions and the
			 job brokerage decisions of its job.broker request;
			 a DIRAC job: the pilot decision that matched it */
	ST_DEC_PILOT, /* pilot_matches by pilot id or request id */
};

struct st_dec_row {
	long long id;         /* decisions.id or pilot_matches.id */
	const char *kind;     /* task, jobs, timeout, rebro, pilot */
	const char *subject;  /* task id, job id (text) or pilot id */
	const char *request_id;
	const char *outcome;  /* assigned, pending, reassign, matched, ... */
	const char *chosen;   /* NULL when nothing was chosen */
	long long decided_at; /* unix s */
	const char *detail;   /* the record JSON (decrec.h); NULL beyond max */
};

/*
** The decisions about `id` (what says how to look), newest first. All of
** them are counted in *n; only the first `max` (>= 1) carry their detail,
** the rest have detail NULL (the count of earlier decisions is all `why`
** prints of them without --all). Memory in `a`. Returns 0 (with *n == 0
** when there is none), GB_EINVAL, GB_ETOOBIG (arena full) or a database
** error.
*/
int st_dec_find(struct st_db *db, enum st_dec_what what, const char *id,
		size_t max, struct arena *a, struct st_dec_row **rows,
		size_t *n);

/*
** Retention: delete up to ST_DEC_EXPIRE_BATCH rows of `decisions`, of
** `pilot_matches` and of `decision_inputs` (store_inputs.h) decided before `before` (unix s), oldest first, but
** never a row as recent as the oldest unsent outbox event: its event is
** still to be published (the outbox row references it by request id and
** decision id). pilot_matches rows are also the dedup of pilot.match;
** a request is never redelivered days later, so the retention (>= 1 day)
** cannot reopen one. jobs.decision_id may afterwards name a deleted
** decision (nothing but `why job` reads it). Autocommit: each
** statement commits by itself and holds its row locks only for itself.
** *deleted gets the rows deleted (all three tables). Returns 0 or a database
** error.
*/
int st_dec_expire(struct st_db *db, long long before, size_t *deleted);

#endif
