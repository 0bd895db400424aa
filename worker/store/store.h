/*
** store.h — MariaDB: migrations, grid state, tasks, decisions, dedup, outbox.
**
** Connector/C, blocking calls, one connection per process (a worker handles
** one request at a time; the fleet scales by processes). Every statement that
** carries data is a prepared statement with bound parameters; the only plain
** queries are the trusted migration files and transaction control. Times are
** unix seconds from the worker's clock (passed in), never NOW(), so that the
** clock seam of the tests moves every rule the same way.
**
** Errors: GB_EDBGONE when the connection is lost (the caller reconnects with
** st_reconnect and redoes the whole request), GB_EDBRETRY on a deadlock or a
** lock wait timeout (redo the transaction), GB_EDB otherwise; st_error() has
** the server's text.
*/
#ifndef GB_STORE_H
#define GB_STORE_H

#include <stddef.h>
#include <stdio.h>

#include "base/arena.h"
#include "base/config.h"
#include "decision.h"
#include "params.h"
#include "taskbroker.h"

struct st_db;

/* Connect (sets READ COMMITTED, utf8mb4, autocommit on). */
int st_open(const struct gb_config *cfg, struct st_db **out, char *err,
	    size_t errlen);
void st_close(struct st_db *db);
/* Drop and re-open the connection; prepared statements are re-prepared. */
int st_reconnect(struct st_db *db);
/* 0 when the server answers. */
int st_ping(struct st_db *db);
const char *st_error(const struct st_db *db);

/*
** Apply schemas/migrations/NNNN_name.sql files of `dir` not yet recorded in
** schema_migrations, in order, each recorded after it succeeds; then seed the
** params table with every prm_table default not present (INSERT IGNORE).
** Prints one line per applied file to `progress` (may be NULL). Re-running is
** a no-op. Returns 0 or an error.
*/
int st_migrate(struct st_db *db, const char *dir, FILE *progress);
/* Highest applied migration number (0 when none). */
int st_schema_version(struct st_db *db, int *version);
/*
** *read_only = 1 when the server refuses writes to accounts without
** READ ONLY ADMIN (@@global.read_only, set for maintenance or on a demoted
** primary). Return GB_OK, or the store's code for the failed query.
*/
int st_read_only(struct st_db *db, int *read_only);
/* 1 when the last failure was the server refusing a write because it is
** read-only (errors 1290 and 1836; st_map_errno made it GB_EDBGONE). */
int st_refused_write(const struct st_db *db);

int st_begin(struct st_db *db);
int st_commit(struct st_db *db);
int st_rollback(struct st_db *db);
/*
** Inside a transaction: mark (st_savepoint) the point one request of a
** group commit starts at, and undo only that request's writes
** (st_rollback_savepoint); when that fails too, st_error keeps the
** request's own failure (read it before: a rollback that works may
** replace it). One
** savepoint name: a new mark replaces the last. Return 0 or a store error
** (after which the whole transaction must be rolled back).
*/
int st_savepoint(struct st_db *db);
int st_rollback_savepoint(struct st_db *db);

/*
** Inside a transaction: record that request `message_id` (of `kind`, e.g.
** "task.broker") is being processed. *already = 1 when it was processed
** before (then nothing was inserted). The row commits with the decision.
*/
int st_claim_message(struct st_db *db, const char *message_id,
		     const char *kind, long long now, int *already);

/* All parameter rows as overrides (names and values live in `a`). */
int st_params_load(struct st_db *db, struct arena *a, struct prm_set *out);

/* Replace the listed nuclei with their storages and replicas (one txn). */
int st_grid_load_nuclei(struct st_db *db, const struct tb_nucleus *nuclei,
			size_t n);

/*
** Load every nucleus with its storages and, as `local`, its replicas of the
** task's input datasets. Arrays live in `a`.
*/
int st_tb_state(struct st_db *db, const struct tb_task *task, struct arena *a,
		struct tb_nucleus **out, size_t *n);

/* Upsert the task's inputs (tasks + task_datasets) with status brokering. */
int st_task_save(struct st_db *db, const struct tb_task *task,
		 const char *request_id, long long now);

/* Rebuild a task's inputs from the database (for pending retries). */
int st_task_load(struct st_db *db, long long task_id, struct arena *a,
		 struct tb_task *out);

/*
** Record a decision: the task's status (assigned with `nucleus`, or pending
** until `retry_at`), and a decisions row (kind "task", outcome, chosen,
** request id, the JSON detail). *decision_id gets the row's id.
*/
int st_task_decide(struct st_db *db, const struct tb_task *task,
		   const struct dec_decision *d, const char *nucleus,
		   long long now, long long retry_at, const char *request_id,
		   const char *detail_json, long long *decision_id);

/*
** Tasks whose pending time is over, locked for this transaction
** (FOR UPDATE SKIP LOCKED, so two workers never retry the same task).
*/
int st_pending_due(struct st_db *db, long long now, size_t max,
		   long long *ids, size_t *n);

/* ---- outbox -------------------------------------------------------------- */

struct st_outbox_row {
	long long id;
	char *message_id;
	char *exchange;
	char *routing_key;
	char *type;
	void *body;
	size_t len;
};

/*
** Inside the decision's transaction: queue an event, leased to `owner`
** until `lease_until` so that no other worker's relay publishes it first.
*/
int st_outbox_add(struct st_db *db, const char *message_id,
		  const char *request_id, const char *exchange,
		  const char *routing_key, const char *type, const void *body,
		  size_t len, const char *owner, long long lease_until,
		  long long *id);

/* Mark an event published (after the broker's confirm). */
int st_outbox_sent(struct st_db *db, long long id);
/* As st_outbox_sent for `n` rows at once (a row that is gone is no
** error: a relay or the retention may have taken it). 0 or an error. */
int st_outbox_sent_many(struct st_db *db, const long long *ids, size_t n);

/*
** Claim (in its own transaction) up to `max` unsent events whose lease has
** expired, leasing them to `owner` for `lease_s`. Rows live in `a`.
*/
int st_outbox_claim(struct st_db *db, const char *owner, long long now,
		    int lease_s, size_t max, struct arena *a,
		    struct st_outbox_row **rows, size_t *n);

/*
** Claim (in its own transaction, as st_outbox_claim) the unsent events of
** one request that arrived again after its decision. `redelivered` is the
** delivery's AMQP flag: nonzero (the worker that held it lost its link)
** claims them whatever their lease; 0 (a producer's retry: a new message
** with the same message id) claims only those whose lease has run out by
** `now`, leaving live ones to the deciding worker, which publishes them
** itself. *n = 0 when there is nothing to publish. 0 or a store error.
*/
int st_outbox_claim_request(struct st_db *db, const char *request_id,
			    int redelivered, const char *owner, long long now,
			    int lease_s, struct arena *a,
			    struct st_outbox_row **rows, size_t *n);

#endif
