/*
** store_inputs.h — each decision's inputs (table decision_inputs,
** migration 0012): written in the decision's transaction, read back by
** `gridbroker why ... --scenario` and, in bounded batches, by `gridbroker
** replay`.
**
** What is stored is the decision's scenario file (explain/scenario_
** write.h), compressed by the caller (base/zbuf.h); this module moves
** bytes and never looks inside them. A row is keyed by the table its
** decision lives in (ST_IN_DECISIONS: task, jobs, analysis, timeout;
** ST_IN_PILOTS: pilot) and the decision's id there. The retention step
** deletes rows with their decisions (st_dec_expire).
*/
#ifndef GB_STORE_INPUTS_H
#define GB_STORE_INPUTS_H

#include <stddef.h>

#include "base/arena.h"
#include "store/store.h"

/* Which table decision_id points into (the src column). */
enum st_in_src {
	ST_IN_DECISIONS = 'd',
	ST_IN_PILOTS = 'p',
};

/* Most rows one st_in_scan returns: replay reads in batches this big, so
** its memory and each statement's time are bounded. */
#define ST_IN_SCAN_MAX 1000

/*
** Store decision `decision_id`'s inputs: `kind` (task, jobs, analysis,
** pilot, timeout), its decided_at, the digest of the record the decision
** stored (64 hex, report/decrec.h; NULL or "": none), and body[0..len),
** the scenario JSON of `raw` bytes compressed. Inside the caller's
** transaction. Returns 0,
** GB_EINVAL (NULL arguments) or a database error; a second row for the
** same decision is a duplicate-key error (the id is new in the same
** transaction, so that is a bug).
*/
int st_in_write(struct st_db *db, enum st_in_src src, long long decision_id,
		const char *kind, long long decided_at, const char *digest,
		const void *body, size_t len, size_t raw);

/* One stored decision with its inputs, as st_in_get and st_in_scan read
** it. Strings and body live in the caller's arena. */
struct st_in_row {
	enum st_in_src src;
	long long decision_id;
	const char *kind;      /* the scenario's kind */
	long long decided_at;  /* unix s */
	size_t raw;            /* scenario JSON bytes */
	const void *body;      /* compressed; len bytes */
	size_t len;
	const char *digest;    /* the stored record's digest (64 hex), NULL
				  when not known (migration 0013) */
	/* From the decision's own row (decisions or pilot_matches): */
	const char *subject;   /* task id, request's subject, pilot id */
	const char *outcome;
	const char *chosen;    /* NULL when nothing was chosen */
	const char *detail;    /* the stored record JSON (decrec.h); NULL
				  from a scan without records */
};

/*
** The inputs of one decision. Returns 0 with *found 1 and *row filled,
** 0 with *found 0 when the decision has no stored inputs (decided before
** migration 0012, not storable, or expired), GB_EINVAL, GB_ETOOBIG (the
** arena is full) or a database error.
*/
int st_in_get(struct st_db *db, enum st_in_src src, long long decision_id,
	      struct arena *a, struct st_in_row *row, int *found);

/* Where a scan resumes: after (decided_at, src, decision_id); start with
** {since, 0, 0}, which begins at `since` itself. */
struct st_in_cursor {
	long long decided_at;
	char src;
	long long decision_id;
};

/*
** Up to `max` (1..ST_IN_SCAN_MAX) stored decisions with their inputs,
** decided in [cursor, until) (unix s), of kind `kind` (NULL: every kind),
** in (decided_at, src, decision_id) order, from after `cur`; `cur`
** advances to the last row returned. with_records 0 leaves each row's
** record (detail) unread and NULL: a caller that needs only the digest
** reads the few records it does need with st_in_get. One autocommit
** statement per call: no transaction is held between batches, so a long
** replay never holds locks or an old read view the workers would pay
** for. *n == 0: the
** window is done. Returns 0, GB_EINVAL, GB_ETOOBIG (arena full) or a
** database error.
*/
int st_in_scan(struct st_db *db, struct st_in_cursor *cur, long long until,
	       const char *kind, size_t max, int with_records, struct arena *a,
	       struct st_in_row *rows, size_t *n);

/* How many stored decisions with inputs [since, until) of `kind` (NULL:
** every kind) holds: replay's progress line. */
int st_in_count(struct st_db *db, long long since, long long until,
		const char *kind, long long *n);

/*
** Make this connection's later transactions read-only (SET SESSION
** TRANSACTION READ ONLY): replay's promise that it writes nothing holds
** even under an account that could. Returns 0 or a database error.
*/
int st_in_read_only(struct st_db *db);

#endif
