/*
** store_inputs.c — each decision's inputs (store_inputs.h). Prepared
** statements only.
*/
#include "store/store_inputs.h"

#include <string.h>

#include "gb_error.h"
#include "store/store_internal.h"

enum {
	SI_WRITE,
	SI_GET_D,
	SI_GET_P,
	SI_SCAN,
	SI_SCAN_DIGESTS,
	SI_COUNT,
	SI_READ_ONLY,
	SI_NSLOTS
};
_Static_assert(ST_SID_INPUTS_BASE + SI_NSLOTS <= ST_SID_INPUTS_LAST + 1,
	       "store_inputs.c needs more statement slots");
#define SI_SID(slot) ((enum st_sid)(ST_SID_INPUTS_BASE + (slot)))

static const char SQL_WRITE[] =
	"INSERT INTO decision_inputs (src, decision_id, kind, decided_at, "
	"raw_bytes, body, digest) VALUES (?, ?, ?, ?, ?, ?, ?)";

/* The columns every read returns, in st_in_row's order: src, id, kind,
** decided_at, raw_bytes, body, digest, then the decision row's subject,
** outcome, chosen and record: REC, the record's column, or NULL for a
** scan that leaves the records unread (they are tens of kB each, stored
** off the row: reading them was most of the database's time in a
** replay). */
#define SI_COLS_D(REC)                                                       \
	"i.src, i.decision_id, i.kind, i.decided_at, i.raw_bytes, i.body, "  \
	"i.digest, d.subject, d.outcome, d.chosen, " REC                     \
	" FROM decision_inputs i JOIN decisions d ON d.id = i.decision_id "
#define SI_COLS_P(REC)                                                       \
	"i.src, i.decision_id, i.kind, i.decided_at, i.raw_bytes, i.body, "  \
	"i.digest, p.pilot_id, p.outcome, CAST(p.job_id AS CHAR), " REC      \
	" FROM decision_inputs i JOIN pilot_matches p ON p.id = i.decision_id "
#define SI_REC_D "d.detail"
#define SI_REC_P                                                             \
	"COALESCE(p.detail, JSON_OBJECT('code', p.code, 'reason', p.reason))"
#define SI_SPEC "slsllbsssss"

static const char SQL_GET_D[] =
	"SELECT " SI_COLS_D(SI_REC_D) "WHERE i.src = 'd' AND i.decision_id = ?";
static const char SQL_GET_P[] =
	"SELECT " SI_COLS_P(SI_REC_P) "WHERE i.src = 'p' AND i.decision_id = ?";

/* Keyset pagination on (decided_at, src, decision_id); decided_at >= ?
** first so idx_decision_inputs_decided bounds each branch's range. The
** kind: NULL for every kind. */
#define SI_WINDOW                                                            \
	"i.decided_at >= ? AND i.decided_at < ? AND "                        \
	"(i.decided_at, i.src, i.decision_id) > (?, ?, ?) AND "              \
	"(? IS NULL OR i.kind = ?) "
#define SI_SCAN_SQL(REC_D, REC_P)                                            \
	"(SELECT " SI_COLS_D(REC_D) "WHERE i.src = 'd' AND " SI_WINDOW       \
	"ORDER BY i.decided_at, i.src, i.decision_id LIMIT ?) "               \
	"UNION ALL (SELECT " SI_COLS_P(REC_P) "WHERE i.src = 'p' AND "       \
	SI_WINDOW "ORDER BY i.decided_at, i.src, i.decision_id LIMIT ?) "     \
	"ORDER BY 4, 1, 2 LIMIT ?"
static const char SQL_SCAN[] = SI_SCAN_SQL(SI_REC_D, SI_REC_P);
static const char SQL_SCAN_DIGESTS[] = SI_SCAN_SQL("NULL", "NULL");
static const char SQL_COUNT[] =
	"SELECT COUNT(*) FROM decision_inputs i WHERE i.decided_at >= ? AND "
	"i.decided_at < ? AND (? IS NULL OR i.kind = ?)";

int st_in_write(struct st_db *db, enum st_in_src src, long long decision_id,
		const char *kind, long long decided_at, const char *digest,
		const void *body, size_t len, size_t raw)
{
	if (db == NULL || kind == NULL || body == NULL ||
	    (src != ST_IN_DECISIONS && src != ST_IN_PILOTS))
		return GB_EINVAL;
	char s[2] = {(char)src, '\0'};
	struct st_args a;
	MYSQL_STMT *st;
	st_args_init(&a);
	st_arg_str(&a, s);
	st_arg_ll(&a, decision_id);
	st_arg_str(&a, kind);
	st_arg_ll(&a, decided_at);
	st_arg_ll(&a, (long long)raw);
	st_arg_blob(&a, body, len);
	if (digest && digest[0])
		st_arg_str(&a, digest);
	else
		st_arg_null(&a);
	return st_exec(db, SI_SID(SI_WRITE), SQL_WRITE, &a, &st);
}

/* Read the current row of `s` (columns SI_SPEC) into r. */
static int read_row(struct st_db *db, MYSQL_STMT *s, struct st_cols *c,
		    struct arena *a, struct st_in_row *r)
{
	memset(r, 0, sizeof(*r));
	char *src = NULL, *v[6] = {NULL};
	int rc = st_col_str(db, s, c, 0, a, &src);
	r->src = src && src[0] == 'p' ? ST_IN_PILOTS : ST_IN_DECISIONS;
	r->decision_id = st_col_ll(c, 1);
	if (rc == GB_OK)
		rc = st_col_str(db, s, c, 2, a, &v[0]);
	r->decided_at = st_col_ll(c, 3);
	long long raw = st_col_ll(c, 4);
	r->raw = raw > 0 ? (size_t)raw : 0;
	void *body = NULL;
	if (rc == GB_OK)
		rc = st_col_blob(db, s, c, 5, a, &body, &r->len);
	r->body = body;
	for (unsigned i = 0; rc == GB_OK && i < 5; i++)
		rc = st_col_str(db, s, c, 6 + i, a, &v[1 + i]);
	r->kind = v[0];
	r->digest = v[1];
	r->subject = v[2];
	r->outcome = v[3];
	r->chosen = v[4];
	r->detail = v[5];
	return rc;
}

int st_in_get(struct st_db *db, enum st_in_src src, long long decision_id,
	      struct arena *a, struct st_in_row *row, int *found)
{
	if (db == NULL || a == NULL || row == NULL || found == NULL ||
	    (src != ST_IN_DECISIONS && src != ST_IN_PILOTS))
		return GB_EINVAL;
	*found = 0;
	struct st_cols c;
	MYSQL_STMT *s;
	int pilot = src == ST_IN_PILOTS;
	int rc = st_query_key(db, SI_SID(pilot ? SI_GET_P : SI_GET_D),
			      pilot ? SQL_GET_P : SQL_GET_D, ST_ID(decision_id),
			      SI_SPEC, &c, &s);
	if (rc != GB_OK)
		return rc;
	if (st_row(db, s, &rc)) {
		rc = read_row(db, s, &c, a, row);
		*found = rc == GB_OK;
	}
	st_done(s);
	return rc;
}

/* The window's parameters of one SQL_SCAN branch. `src` is the cursor's
** source as a string; it is bound by pointer, so it must live until the
** statement has run (the caller's, not a local of this function). */
static void window_args(struct st_args *a, const struct st_in_cursor *cur,
			const char *src, long long until, const char *kind,
			size_t max)
{
	st_arg_ll(a, cur->decided_at);
	st_arg_ll(a, until);
	st_arg_ll(a, cur->decided_at);
	st_arg_str(a, src);
	st_arg_ll(a, cur->decision_id);
	st_arg_str(a, kind);
	st_arg_str(a, kind);
	st_arg_ll(a, (long long)max);
}

int st_in_scan(struct st_db *db, struct st_in_cursor *cur, long long until,
	       const char *kind, size_t max, int with_records, struct arena *a,
	       struct st_in_row *rows, size_t *n)
{
	if (db == NULL || cur == NULL || a == NULL || rows == NULL ||
	    n == NULL || max == 0 || max > ST_IN_SCAN_MAX)
		return GB_EINVAL;
	*n = 0;
	struct st_args args;
	st_args_init(&args);
	char src[2] = {cur->src ? cur->src : '\0', '\0'};
	window_args(&args, cur, src, until, kind, max);
	window_args(&args, cur, src, until, kind, max);
	st_arg_ll(&args, (long long)max);
	struct st_cols c;
	MYSQL_STMT *s;
	st_cols_init(&c, SI_SPEC);
	int rc = with_records ? st_query(db, SI_SID(SI_SCAN), SQL_SCAN, &args,
					 &c, &s)
			      : st_query(db, SI_SID(SI_SCAN_DIGESTS),
					 SQL_SCAN_DIGESTS, &args, &c, &s);
	if (rc != GB_OK)
		return rc;
	size_t k = 0;
	while (k < max && st_row(db, s, &rc)) {
		rc = read_row(db, s, &c, a, &rows[k]);
		if (rc != GB_OK)
			break;
		k++;
	}
	st_done(s);
	if (rc != GB_OK)
		return rc;
	if (k > 0) {
		cur->decided_at = rows[k - 1].decided_at;
		cur->src = (char)rows[k - 1].src;
		cur->decision_id = rows[k - 1].decision_id;
	}
	*n = k;
	return GB_OK;
}

int st_in_count(struct st_db *db, long long since, long long until,
		const char *kind, long long *n)
{
	if (db == NULL || n == NULL)
		return GB_EINVAL;
	*n = 0;
	struct st_args args;
	st_args_init(&args);
	st_arg_ll(&args, since);
	st_arg_ll(&args, until);
	st_arg_str(&args, kind);
	st_arg_str(&args, kind);
	struct st_cols c;
	MYSQL_STMT *s;
	st_cols_init(&c, "l");
	int rc = st_query(db, SI_SID(SI_COUNT), SQL_COUNT, &args, &c, &s);
	if (rc != GB_OK)
		return rc;
	if (st_row(db, s, &rc))
		*n = st_col_ll(&c, 0);
	st_done(s);
	return rc;
}

int st_in_read_only(struct st_db *db)
{
	if (db == NULL)
		return GB_EINVAL;
	MYSQL_STMT *s;
	return st_exec(db, SI_SID(SI_READ_ONLY),
		       "SET SESSION TRANSACTION READ ONLY", NULL, &s);
}
