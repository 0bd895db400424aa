/*
** store_outbox.c — the transactional outbox: events are written in the
** decision's transaction and published after it commits.
**
** Leases instead of a "being sent" status: a row carries the worker that
** may publish it (owner) and until when (lease_until). The deciding worker
** leases its own rows for the time a confirm normally takes, so the relay
** of another worker does not publish them first; if that worker dies, the
** lease runs out and any relay claims the row.
**
** A request that arrives again after its decision claims its rows by the
** AMQP `redelivered` flag (st_outbox_claim_request):
**  - redelivered: at once, whatever the lease. The broker hands a message
**    back only when the worker holding it lost its link (or handed it
**    back), so the lease holder may be dead, and waiting out the lease
**    would hold the events back for nothing.
**  - not redelivered: a producer's retry, a new message with the same
**    message id (the message documents invite it). The deciding worker is
**    alive as far as anyone knows and publishes the rows itself after its
**    commit; claiming them too would publish every event twice (a retry
**    published back to back did, every time: it finds the decision the
**    moment the first transaction commits, before that worker's confirm
**    and sent mark). So only rows whose lease has run out are claimed,
**    as the relay would; a row with a live lease is left to its holder,
**    and to the relay if that holder dies.
** An event may still be published twice (a lease that runs out before
** its holder's confirm, a redelivery while the holder lives, a lost sent
** mark), never zero times: consumers dedup on the message id.
**
** Claims follow the pattern of the reference notes: one short transaction,
** SELECT ... FOR UPDATE SKIP LOCKED to take rows no other relay holds, then
** UPDATE by primary key. The UPDATE changes lease_until, which is in the
** (sent_at, lease_until) index, so two relays scanning at once can still
** deadlock on index records (MySQL bug #111637); that surfaces as
** GB_EDBRETRY and the relay simply tries again on its next tick.
*/
#include "store/store_internal.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <mysqld_error.h>

#include "base/clock.h"
#include "gb_error.h"

static const char SQL_OUTBOX_ADD[] =
	"INSERT INTO outbox (message_id, request_id, exchange, routing_key, "
	"type, body, created_at, owner, lease_until, sent_at) "
	"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)";
static const char SQL_OUTBOX_SENT[] =
	"UPDATE outbox SET sent_at = COALESCE(sent_at, ?) WHERE id = ?";
static const char SQL_OUTBOX_SENT_MANY[] =
	"UPDATE outbox SET sent_at = COALESCE(sent_at, ?) WHERE id IN (" ST_LIST
	")";
#define OUTBOX_SENT_CHUNK 64 /* ids per statement (one prepared length) */
/* The index (sent_at, lease_until) serves both the filter and the order. */
static const char SQL_OUTBOX_DUE[] =
	"SELECT id, message_id, exchange, routing_key, type, body FROM outbox "
	"WHERE sent_at IS NULL AND (lease_until IS NULL OR lease_until <= ?) "
	"ORDER BY lease_until, id LIMIT ? FOR UPDATE SKIP LOCKED";
static const char SQL_OUTBOX_OF_REQUEST[] =
	"SELECT id, message_id, exchange, routing_key, type, body FROM outbox "
	"WHERE request_id = ? AND sent_at IS NULL ORDER BY id "
	"FOR UPDATE SKIP LOCKED";
/* The same, leaving rows whose lease is live to their holder. */
static const char SQL_OUTBOX_OF_REQUEST_DUE[] =
	"SELECT id, message_id, exchange, routing_key, type, body FROM outbox "
	"WHERE request_id = ? AND sent_at IS NULL "
	"AND (lease_until IS NULL OR lease_until <= ?) ORDER BY id "
	"FOR UPDATE SKIP LOCKED";
static const char SQL_OUTBOX_LEASE[] =
	"UPDATE outbox SET owner = ?, lease_until = ? WHERE id = ?";

int st_outbox_add(struct st_db *db, const char *message_id,
		  const char *request_id, const char *exchange,
		  const char *routing_key, const char *type, const void *body,
		  size_t len, const char *owner, long long lease_until,
		  long long *id)
{
	if (db == NULL || message_id == NULL || message_id[0] == '\0' ||
	    request_id == NULL || exchange == NULL || routing_key == NULL ||
	    type == NULL || (len && body == NULL) || id == NULL)
		return GB_EINVAL;
	*id = 0;
	if (len > ST_MEDIUM_MAX)
		return st_failf(db, GB_ETOOBIG,
				"event %s: %zu bytes exceed the outbox's %u",
				message_id, len, ST_MEDIUM_MAX);
	/* Outside the decision's transaction the event could commit without
	** its decision (or the other way round). */
	if (!st_in_transaction(db))
		return st_failf(db, GB_ESTATE,
				"st_outbox_add outside a transaction");
	struct st_args a;
	MYSQL_STMT *s;
	st_args_init(&a);
	st_arg_str(&a, message_id);
	st_arg_str(&a, request_id);
	st_arg_str(&a, exchange);
	st_arg_str(&a, routing_key);
	st_arg_str(&a, type);
	st_arg_blob(&a, body, len);
	st_arg_ll(&a, clk_now());
	st_arg_str(&a, owner && owner[0] ? owner : NULL);
	if (owner && owner[0])
		st_arg_ll(&a, lease_until);
	else
		st_arg_null(&a);
	int rc = st_exec(db, ST_SID_OUTBOX_ADD, SQL_OUTBOX_ADD, &a, &s);
	if (rc != GB_OK) {
		if (db->errnum == ER_DUP_ENTRY)
			return st_failf(db, GB_EDUP,
					"event %s is already in the outbox",
					message_id);
		return rc;
	}
	*id = (long long)mysql_stmt_insert_id(s);
	return GB_OK;
}

int st_outbox_sent(struct st_db *db, long long id)
{
	if (db == NULL)
		return GB_EINVAL;
	/* A row sent twice still matches. */
	return st_update_id(db, ST_SID_OUTBOX_SENT, SQL_OUTBOX_SENT, clk_now(),
			    id, "outbox row");
}

int st_outbox_sent_many(struct st_db *db, const long long *ids, size_t n)
{
	if (db == NULL || (n && ids == NULL))
		return GB_EINVAL;
	long long now = clk_now();
	int rc = GB_OK;
	struct st_chunks ch;
	st_chunks_init(&ch, n, OUTBOX_SENT_CHUNK);
	while (st_chunks_next(&ch, &rc)) {
		st_arg_ll(&ch.a, now);
		for (size_t i = 0; i < ch.k; i++)
			st_arg_ll(&ch.a, ids[ch.off + i]);
		st_arg_nulls(&ch.a, OUTBOX_SENT_CHUNK - ch.k);
		MYSQL_STMT *s;
		rc = st_run_n(db, ST_SID_OUTBOX_SENT_MANY, SQL_OUTBOX_SENT_MANY,
			      OUTBOX_SENT_CHUNK, &ch.a, NULL, &s);
	}
	st_chunks_free(&ch);
	return rc;
}

/* Read the selected rows into `a`; the statement's result is released. */
static int read_rows(struct st_db *db, MYSQL_STMT *s, struct st_cols *c,
		     struct arena *a, struct st_outbox_row **rows, size_t *n)
{
	int rc = GB_OK;
	size_t total = 0, k = 0;
	struct st_outbox_row *r = st_result_array(db, s, a, sizeof(*r),
						  "outbox rows", &total, &rc);
	while (k < total && st_row(db, s, &rc)) {
		struct st_outbox_row *x = &r[k];
		x->id = st_col_ll(c, 0);
		rc = st_col_str(db, s, c, 1, a, &x->message_id);
		if (rc == GB_OK)
			rc = st_col_str(db, s, c, 2, a, &x->exchange);
		if (rc == GB_OK)
			rc = st_col_str(db, s, c, 3, a, &x->routing_key);
		if (rc == GB_OK)
			rc = st_col_str(db, s, c, 4, a, &x->type);
		if (rc == GB_OK)
			rc = st_col_blob(db, s, c, 5, a, &x->body, &x->len);
		if (rc == GB_OK && (!x->message_id || !x->exchange ||
				    !x->routing_key || !x->type))
			rc = st_failf(db, GB_ERANGE,
				      "outbox row %lld has a NULL field",
				      x->id);
		if (rc == GB_OK)
			k++;
	}
	st_done(s);
	*rows = rc == GB_OK ? r : NULL;
	*n = rc == GB_OK ? k : 0;
	return rc;
}

/*
** The claim transaction shared by both entry points: `sid`/`sql` select the
** rows (parameters in `sel`), each is leased to `owner` until
** now + lease_s, and the transaction commits.
*/
static int claim(struct st_db *db, enum st_sid sid, const char *sql,
		 struct st_args *sel, const char *owner, long long now,
		 int lease_s, struct arena *a, struct st_outbox_row **rows,
		 size_t *n)
{
	*rows = NULL;
	*n = 0;
	if (owner == NULL || owner[0] == '\0' || lease_s < 0 || a == NULL)
		return st_failf(db, GB_EINVAL,
				"outbox claim: owner and a "
				"lease >= 0 required");
	/* START TRANSACTION would silently commit the caller's work. */
	if (st_in_transaction(db))
		return st_failf(db, GB_ESTATE,
				"outbox claim inside another transaction");
	struct st_cols c;
	MYSQL_STMT *s;
	struct st_outbox_row *r = NULL;
	size_t k = 0;
	st_cols_init(&c, "lssssb");
	int rc = st_begin(db);
	if (rc == GB_OK)
		rc = st_query(db, sid, sql, sel, &c, &s);
	if (rc == GB_OK)
		rc = read_rows(db, s, &c, a, &r, &k);
	for (size_t i = 0; rc == GB_OK && i < k; i++) {
		struct st_args u;
		MYSQL_STMT *us;
		st_args_init(&u);
		st_arg_str(&u, owner);
		st_arg_ll(&u, now + lease_s);
		st_arg_ll(&u, r[i].id);
		rc = st_exec(db, ST_SID_OUTBOX_LEASE, SQL_OUTBOX_LEASE, &u,
			     &us);
	}
	if (rc == GB_OK)
		rc = st_commit(db);
	if (rc != GB_OK) {
		st_rollback(db);
		return rc;
	}
	*rows = r;
	*n = k;
	return GB_OK;
}

int st_outbox_claim(struct st_db *db, const char *owner, long long now,
		    int lease_s, size_t max, struct arena *a,
		    struct st_outbox_row **rows, size_t *n)
{
	if (db == NULL || rows == NULL || n == NULL)
		return GB_EINVAL;
	*rows = NULL;
	*n = 0;
	if (max == 0)
		return GB_OK;
	struct st_args sel;
	st_args_init(&sel);
	st_arg_ll(&sel, now);
	st_arg_ll(&sel, st_limit(max));
	return claim(db, ST_SID_OUTBOX_DUE, SQL_OUTBOX_DUE, &sel, owner, now,
		     lease_s, a, rows, n);
}

int st_outbox_claim_request(struct st_db *db, const char *request_id,
			    int redelivered, const char *owner, long long now,
			    int lease_s, struct arena *a,
			    struct st_outbox_row **rows, size_t *n)
{
	if (db == NULL || request_id == NULL || rows == NULL || n == NULL)
		return GB_EINVAL;
	struct st_args sel;
	st_args_init(&sel);
	st_arg_str(&sel, request_id);
	if (redelivered)
		return claim(db, ST_SID_OUTBOX_OF_REQUEST,
			     SQL_OUTBOX_OF_REQUEST, &sel, owner, now, lease_s,
			     a, rows, n);
	/* A producer's retry: see the file's header. */
	st_arg_ll(&sel, now);
	return claim(db, ST_SID_OUTBOX_OF_REQUEST_DUE,
		     SQL_OUTBOX_OF_REQUEST_DUE, &sel, owner, now, lease_s, a,
		     rows, n);
}
