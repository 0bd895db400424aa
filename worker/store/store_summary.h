/*
** store_summary.h — what `gridbroker summary` reads: the decisions of a
** time window, grouped the way an operator looks at a grid (tasks by
** nucleus, jobs by queue, pilots by outcome) and the explanations whose
** rejection reasons it counts; and the backlog the workers' /metrics
** report (work pending or throttled now).
**
** Every query is a prepared statement with the window start bound as a
** parameter, read-only, and reads aggregates (GROUP BY) except the
** explanations, which come newest first up to a caller's limit, so the
** work per call is bounded whatever the size of the tables.
*/
#ifndef GB_STORE_SUMMARY_H
#define GB_STORE_SUMMARY_H

#include "store/store.h"

/* What a summary query groups. */
enum ss_kind {
	SS_TASKS = 0, /* key1 nucleus (NULL while pending), key2 status */
	SS_JOBS,      /* key1 queue (NULL while pending/throttled), key2 status */
	SS_PILOTS,    /* key1 outcome, key2 code (TQ-10) */
	SS_NKIND
};

/*
** One group: `key1` may be NULL (SQL NULL), `key2` never is; `n` rows.
** Return 0 to go on, non-zero to stop the scan (returned to the caller).
*/
typedef int (*ss_group_cb)(void *ud, const char *key1, const char *key2,
			   long long n);

/*
** Call `cb` for each group of `kind` among the rows decided at or after
** `since` (unix s of the workers' clock), largest groups first.
** Returns 0, a database error (st_error has the text), or cb's non-zero.
*/
int st_summary_groups(struct st_db *db, enum ss_kind kind, long long since,
		      ss_group_cb cb, void *ud);

/*
** One stored explanation: `kind` is the decision's kind ("task", "jobs",
** "timeout", "rebro", ..., or "pilot" for pilot_matches), `detail` its
** JSON text (never NULL; rows without one are skipped).
*/
typedef int (*ss_detail_cb)(void *ud, const char *kind, const char *detail);

/*
** Call `cb` for the explanations of at most `limit` decisions and at most
** `limit` pilot decisions made at or after `since`, newest first.
** Returns 0, a database error, GB_ENOMEM, or cb's non-zero.
*/
int st_summary_details(struct st_db *db, long long since, long long limit,
		       ss_detail_cb cb, void *ud);

/* The work waiting now, as the backlog gauges of /metrics report it. */
struct st_backlog {
	long long tasks_pending;        /* tasks with status pending (TB-13) */
	long long job_requests_pending; /* job.broker requests due again */
	long long jobs_pending;         /* jobs without a queue yet (PJ-35) */
	long long tasks_throttled;      /* tasks with a throttled job (AJ-01..04) */
	long long jobs_throttled;       /* jobs held by the analysis throttle */
	long long outbox_oldest; /* created_at of the oldest unsent outbox
				 ** event (the workers' clock); 0 = none */
};

/*
** Count the backlog into *out with one read-only statement that reads only
** index ranges (migration 0007; the outbox's unsent rows by
** idx_outbox_due), so its cost follows the size of the backlog, not of
** the tables. Returns 0 or a database error (st_error has
** the text); *out is untouched on error.
*/
int st_backlog(struct st_db *db, struct st_backlog *out);

/* The statement st_backlog runs (for a test's EXPLAIN of its plan). */
const char *st_backlog_sql(void);

#endif
