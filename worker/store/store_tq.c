/*
** store_tq.c — the DIRAC store's shared helpers (store_tq_internal.h)
** and its reads: what the workers' task queue index lives on (the TQ list
** with requirements, one TQ, the waiting jobs by seq, the claim log) and
** the recorded match of a request. Submission, claim and writing match
** records are in store_tq_match.c; configuration, job status, lease,
** priorities, history and cleanup in store_tq_leader.c. Tables:
** 0004_taskqueues.sql.
**
** Reads that must agree with each other are single statements: a TQ and
** its requirement rows come from one LEFT JOIN, so they are one snapshot
** even under READ COMMITTED (two statements could see a TQ whose
** requirement rows a cleanup deleted in between, and present it as a TQ
** without requirements — one that accepts every pilot).
**
** The job scan pages by key (tq_id, seq) with a bounded page, copies a page
** out of the statement before calling back, and so holds neither a
** million rows nor the connection while the caller works.
*/
#include "store/store_internal.h"
#include "store/store_tq.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_error.h"
#include "store/store_tq_internal.h"

#define STQ_SCAN_PAGE 10000 /* waiting jobs per page of st_tq_jobs_scan */

/* ---- statements ---------------------------------------------------------- */

#define TQ_COLS                                                                \
	"t.tq_id, t.owner, t.owner_group, t.setup, t.cpu_time, t.priority, "  \
	"t.next_seq, t.signature, t.rm_next_seq"
static const char SQL_LIST[] = "SELECT " TQ_COLS
			       " FROM task_queues t ORDER BY t.tq_id";
/* One statement, so a TQ and its requirements are one snapshot. */
static const char SQL_LIST_REQS[] =
	"SELECT " TQ_COLS ", r.field, r.value FROM task_queues t "
	"LEFT JOIN tq_requirements r ON r.tq_id = t.tq_id "
	"ORDER BY t.tq_id, r.field, r.value";
static const char SQL_GET[] =
	"SELECT " TQ_COLS ", r.field, r.value FROM task_queues t "
	"LEFT JOIN tq_requirements r ON r.tq_id = t.tq_id WHERE t.tq_id = ? "
	"ORDER BY r.field, r.value";
static const char SQL_SCAN_ONE[] =
	"SELECT job_id, tq_id, user_priority, seq FROM tq_jobs "
	"WHERE tq_id = ? AND seq >= ? ORDER BY seq LIMIT ?";
static const char SQL_SCAN_ALL[] =
	"SELECT job_id, tq_id, user_priority, seq FROM tq_jobs "
	"WHERE tq_id > ? OR (tq_id = ? AND seq > ?) ORDER BY tq_id, seq "
	"LIMIT ?";
static const char SQL_MATCH_GET[] =
	"SELECT p.id, p.request_id, p.pilot_id, p.site, p.outcome, p.job_id, "
	"p.tq_id, p.tq_cpu_time, p.code, p.reason, w.owner, w.owner_group "
	"FROM pilot_matches p LEFT JOIN wms_jobs w ON w.job_id = p.job_id "
	"WHERE p.request_id = ?";
static const char SQL_MATCH_DETAIL[] =
	"SELECT detail FROM pilot_matches WHERE request_id = ?";

/* ---- small helpers ------------------------------------------------------- */

uint64_t stq_hash64(const char *s, size_t n)
{
	uint64_t h = 14695981039346656037ULL;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	/* FNV-1a mixes its last bytes poorly; the murmur3 finaliser spreads
	** them over every bit of the hash. */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

int stq_name_ok(const char *s)
{
	return s && s[0] && strlen(s) <= STQ_MAX_NAME_BYTES;
}

int stq_set_per_tq(struct st_db *db, enum stq_slot slot, const char *sql,
		   const long long *ids, const long long *vals, size_t n)
{
	struct st_chunks ch;
	int rc = GB_OK;
	st_chunks_init(&ch, n, STQ_CASE_CHUNK);
	while (st_chunks_next(&ch, &rc)) {
		for (size_t i = 0; i < ch.k; i++) {
			st_arg_ll(&ch.a, ids[ch.off + i]);
			st_arg_ll(&ch.a, vals[ch.off + i]);
		}
		st_arg_nulls(&ch.a, 2 * (STQ_CASE_CHUNK - ch.k));
		for (size_t i = 0; i < ch.k; i++)
			st_arg_ll(&ch.a, ids[ch.off + i]);
		st_arg_nulls(&ch.a, STQ_CASE_CHUNK - ch.k);
		MYSQL_STMT *s;
		rc = st_run_n(db, STQ_SID(slot), sql, STQ_CASE_CHUNK, &ch.a,
			      NULL, &s);
	}
	st_chunks_free(&ch);
	return rc;
}

int stq_col_equals(struct st_db *db, MYSQL_STMT *s, struct st_cols *c,
		   unsigned i, const char *str, size_t len)
{
	if (st_col_isnull(c, i) || c->len[i] != len)
		return 0;
	if (len <= ST_STRBUF)
		return memcmp(c->s[i], str, len) == 0;
	struct arena a;
	arena_init(&a, len + 64);
	char *v = NULL;
	int rc = st_col_str(db, s, c, i, &a, &v);
	int eq = rc == GB_OK ? v && memcmp(v, str, len) == 0 : rc;
	arena_free(&a);
	return eq;
}

/* ---- task queues --------------------------------------------------------- */

/* A requirement value waiting for its TQ's sets to be built. */
struct req_val {
	int field;
	const char *value;
};

struct req_buf {
	struct req_val *v;
	size_t n, cap;
};

/* Build out->set[] from the collected values, in `a`. */
static int sets_build(struct st_db *db, struct req_buf *rb, struct arena *a,
		      struct st_tq_row *out)
{
	size_t cnt[TQ_NFIELDS] = {0};
	for (size_t i = 0; i < rb->n; i++)
		cnt[rb->v[i].field]++;
	for (int f = 0; f < TQ_NFIELDS; f++) {
		out->set[f].v = NULL;
		out->set[f].n = 0;
		if (cnt[f] == 0)
			continue;
		const char **v = arena_alloc(a, cnt[f] * sizeof(*v));
		if (v == NULL)
			return st_too_big(db, "requirement values", cnt[f]);
		out->set[f].v = v;
	}
	for (size_t i = 0; i < rb->n; i++) {
		struct tq_strset *s = &out->set[rb->v[i].field];
		s->v[s->n++] = rb->v[i].value;
	}
	/* The collation orders bytes like strcmp; normalising again costs
	** nothing at these sizes and makes the contract independent of it. */
	for (int f = 0; f < TQ_NFIELDS; f++)
		tq_strset_normalise(out->set[f].v, &out->set[f].n);
	rb->n = 0;
	return GB_OK;
}

/* The TQ columns (TQ_COLS) of the current row into `r`. */
static int tq_cols_read(struct st_db *db, MYSQL_STMT *s, struct st_cols *c,
			struct arena *a, struct st_tq_row *r)
{
	memset(r, 0, sizeof(*r));
	r->tq_id = st_col_ll(c, 0);
	r->cpu_time = st_col_ll(c, 4);
	r->priority = st_col_dbl(c, 5);
	r->next_seq = st_col_ll(c, 6);
	r->rm_next_seq = st_col_ll(c, 8);
	int rc = st_col_str(db, s, c, 1, a, &r->owner);
	if (rc == GB_OK)
		rc = st_col_str(db, s, c, 2, a, &r->owner_group);
	if (rc == GB_OK)
		rc = st_col_str(db, s, c, 3, a, &r->setup);
	if (rc == GB_OK)
		rc = st_col_str(db, s, c, 7, a, &r->signature);
	if (rc != GB_OK)
		return rc;
	if (r->tq_id <= 0 || !r->owner || !r->owner_group || !r->setup ||
	    !r->signature || r->cpu_time <= 0 || !isfinite(r->priority) ||
	    r->priority < 0 || r->next_seq < 0 || r->rm_next_seq < 0)
		return st_failf(db, GB_ERANGE,
				"task_queues row %lld out of range", r->tq_id);
	return GB_OK;
}

/* The requirement columns (9, 10) of the current row, when not NULL. */
static int req_cols_read(struct st_db *db, MYSQL_STMT *s, struct st_cols *c,
			 struct arena *a, long long tq_id, struct req_buf *rb)
{
	if (st_col_isnull(c, 9))
		return GB_OK;
	int field = -1;
	for (int f = 0; f < TQ_NFIELDS; f++)
		if (c->len[9] == strlen(tq_field_names[f]) &&
		    memcmp(c->s[9], tq_field_names[f], c->len[9]) == 0)
			field = f;
	char *value = NULL;
	int rc = st_col_str(db, s, c, 10, a, &value);
	if (rc != GB_OK)
		return rc;
	if (field < 0 || value == NULL || value[0] == '\0')
		return st_failf(db, GB_ERANGE,
				"tq_requirements row of TQ %lld out of range",
				tq_id);
	if (rb->n == rb->cap) {
		size_t cap = rb->cap ? rb->cap * 2 : 64;
		struct req_val *v = realloc(rb->v, cap * sizeof(*v));
		if (v == NULL)
			return st_failf(db, GB_ENOMEM, "out of memory");
		rb->v = v;
		rb->cap = cap;
	}
	rb->v[rb->n++] = (struct req_val){field, value};
	return GB_OK;
}

/*
** Read TQ rows (TQ_COLS, then field and value when want_reqs) grouped by
** tq_id into an array in `a`.
*/
static int tqs_read(struct st_db *db, MYSQL_STMT *s, struct st_cols *c,
		    int want_reqs, struct arena *a, struct st_tq_row **rows,
		    size_t *n)
{
	size_t cap = 0, k = 0;
	struct st_tq_row *v = NULL;
	struct req_buf rb = {NULL, 0, 0};
	int rc = GB_OK;
	while (st_row(db, s, &rc)) {
		long long id = st_col_ll(c, 0);
		if (k == 0 || v[k - 1].tq_id != id) {
			if (k > 0 && want_reqs)
				rc = sets_build(db, &rb, a, &v[k - 1]);
			if (rc == GB_OK && k == cap) {
				size_t nc = cap ? cap * 2 : 64;
				struct st_tq_row *nv =
					realloc(v, nc * sizeof(*nv));
				if (nv == NULL)
					rc = st_failf(db, GB_ENOMEM,
						      "out of memory");
				else {
					v = nv;
					cap = nc;
				}
			}
			if (rc == GB_OK)
				rc = tq_cols_read(db, s, c, a, &v[k]);
			if (rc != GB_OK)
				break;
			k++;
		}
		if (want_reqs)
			rc = req_cols_read(db, s, c, a, id, &rb);
		if (rc != GB_OK)
			break;
	}
	if (rc == GB_OK && k > 0 && want_reqs)
		rc = sets_build(db, &rb, a, &v[k - 1]);
	free(rb.v);
	if (rc == GB_OK && k > 0) {
		*rows = arena_alloc(a, k * sizeof(**rows));
		if (*rows == NULL)
			rc = st_too_big(db, "task queues", k);
		else
			memcpy(*rows, v, k * sizeof(**rows));
	}
	free(v);
	if (rc == GB_OK)
		*n = k;
	return rc;
}

int st_tq_list(struct st_db *db, int want_reqs, struct arena *a,
	       struct st_tq_row **rows, size_t *n)
{
	if (db == NULL || a == NULL || rows == NULL || n == NULL)
		return GB_EINVAL;
	*rows = NULL;
	*n = 0;
	struct st_cols c;
	MYSQL_STMT *s;
	st_cols_init(&c, want_reqs ? "lsssldlslss" : "lsssldlsl");
	int rc = want_reqs ? st_query(db, STQ_SID(STQ_LIST_REQS), SQL_LIST_REQS,
				      NULL, &c, &s)
			   : st_query(db, STQ_SID(STQ_LIST), SQL_LIST, NULL, &c,
				      &s);
	if (rc != GB_OK)
		return rc;
	rc = tqs_read(db, s, &c, want_reqs, a, rows, n);
	st_done(s);
	return rc;
}

int st_tq_get(struct st_db *db, long long tq_id, struct arena *a,
	      struct st_tq_row *out)
{
	if (db == NULL || a == NULL || out == NULL || tq_id <= 0)
		return GB_EINVAL;
	struct st_cols c;
	MYSQL_STMT *s;
	int rc = st_query_key(db, STQ_SID(STQ_GET), SQL_GET, ST_ID(tq_id),
			      "lsssldlslss", &c, &s);
	if (rc != GB_OK)
		return rc;
	struct st_tq_row *rows = NULL;
	size_t n = 0;
	rc = tqs_read(db, s, &c, 1, a, &rows, &n);
	st_done(s);
	if (rc != GB_OK)
		return rc;
	if (n != 1)
		return st_failf(db, GB_ENOTFOUND, "task queue %lld is gone",
				tq_id);
	*out = rows[0];
	return GB_OK;
}

/* ---- waiting jobs -------------------------------------------------------- */

/* One page of the scan into `page`; *got rows. */
static int scan_page(struct st_db *db, long long tq_id, long long a1,
		     long long a2, struct st_tq_jobrow *page, size_t *got)
{
	struct st_args args;
	struct st_cols c;
	MYSQL_STMT *s;
	*got = 0;
	st_args_init(&args);
	if (tq_id > 0) {
		st_arg_ll(&args, tq_id);
		st_arg_ll(&args, a1);
	} else {
		st_arg_ll(&args, a1);
		st_arg_ll(&args, a1);
		st_arg_ll(&args, a2);
	}
	st_arg_ll(&args, STQ_SCAN_PAGE);
	st_cols_init(&c, "llll");
	int rc = tq_id > 0 ? st_query(db, STQ_SID(STQ_SCAN_ONE), SQL_SCAN_ONE,
				      &args, &c, &s)
			   : st_query(db, STQ_SID(STQ_SCAN_ALL), SQL_SCAN_ALL,
				      &args, &c, &s);
	if (rc != GB_OK)
		return rc;
	while (*got < STQ_SCAN_PAGE && st_row(db, s, &rc)) {
		struct st_tq_jobrow *r = &page[*got];
		r->job_id = st_col_ll(&c, 0);
		r->tq_id = st_col_ll(&c, 1);
		long long up = st_col_ll(&c, 2);
		r->seq = st_col_ll(&c, 3);
		if (r->job_id <= 0 || r->tq_id <= 0 || r->seq < 0 ||
		    up < TQ_MIN_PRIORITY || up > TQ_MAX_PRIORITY) {
			rc = st_failf(db, GB_ERANGE,
				      "tq_jobs row %lld out of range",
				      r->job_id);
			break;
		}
		r->user_priority = (int)up;
		(*got)++;
	}
	st_done(s);
	return rc;
}

int st_tq_jobs_scan(struct st_db *db, long long tq_id, long long from_seq,
		    int (*fn)(void *ud, const struct st_tq_jobrow *r),
		    void *ud)
{
	if (db == NULL || fn == NULL || tq_id < 0)
		return GB_EINVAL;
	struct st_tq_jobrow *page = malloc(STQ_SCAN_PAGE * sizeof(*page));
	if (page == NULL)
		return st_failf(db, GB_ENOMEM, "out of memory");
	/* Key of the next page: (tq, seq) of one TQ from seq a1, or every
	** row after (a1, a2) in (tq_id, seq) order. */
	long long a1 = tq_id > 0 ? (from_seq > 0 ? from_seq : 0) : 0;
	long long a2 = 0;
	int rc = GB_OK;
	for (;;) {
		size_t got = 0;
		rc = scan_page(db, tq_id, a1, a2, page, &got);
		for (size_t i = 0; rc == GB_OK && i < got; i++)
			rc = fn(ud, &page[i]);
		if (rc != GB_OK || got < STQ_SCAN_PAGE)
			break;
		const struct st_tq_jobrow *last = &page[got - 1];
		if (tq_id > 0) {
			a1 = last->seq + 1;
		} else {
			a1 = last->tq_id;
			a2 = last->seq;
		}
	}
	free(page);
	return rc;
}

/* ---- match records ------------------------------------------------------- */

int st_tq_match_get(struct st_db *db, const char *request_id,
		    struct arena *a, struct cdt_match *out, int *found)
{
	if (db == NULL || request_id == NULL || a == NULL || out == NULL ||
	    found == NULL)
		return GB_EINVAL;
	memset(out, 0, sizeof(*out));
	*found = 0;
	struct st_cols c;
	MYSQL_STMT *s;
	char *outcome = NULL, *str[7] = {NULL};
	const unsigned col[7] = {1, 2, 3, 8, 9, 10, 11};
	int rc = st_query_key(db, STQ_SID(STQ_MATCH_GET), SQL_MATCH_GET,
			      ST_TEXT(request_id), "lsssslllssss", &c, &s);
	int got = st_row(db, s, &rc);
	if (got)
		rc = st_col_str(db, s, &c, 4, a, &outcome);
	for (unsigned i = 0; rc == GB_OK && got && i < 7; i++)
		rc = st_col_str(db, s, &c, col[i], a, &str[i]);
	if (rc == GB_OK && got) {
		out->decision_id = st_col_ll(&c, 0);
		out->job_id = st_col_ll(&c, 5);
		out->tq_id = st_col_ll(&c, 6);
		out->tq_cpu_time = st_col_ll(&c, 7);
	}
	st_done(s);
	if (rc != GB_OK || !got)
		return rc;
	out->request_id = str[0];
	out->pilot_id = str[1];
	out->site = str[2];
	out->code = str[3];
	out->reason = str[4];
	out->owner = str[5];
	out->owner_group = str[6];
	out->matched = outcome && strcmp(outcome, "matched") == 0;
	if (outcome == NULL || (out->matched && out->job_id <= 0) ||
	    out->pilot_id == NULL || out->site == NULL || out->code == NULL) {
		memset(out, 0, sizeof(*out));
		return st_failf(db, GB_ERANGE,
				"pilot_matches row of %s out of range",
				request_id);
	}
	*found = 1;
	return GB_OK;
}

int st_tq_match_detail(struct st_db *db, const char *request_id,
		       struct arena *a, char **json)
{
	if (db == NULL || request_id == NULL || a == NULL || json == NULL)
		return GB_EINVAL;
	*json = NULL;
	struct st_cols c;
	MYSQL_STMT *s;
	int rc = st_query_key(db, STQ_SID(STQ_MATCH_DETAIL), SQL_MATCH_DETAIL,
			      ST_TEXT(request_id), "s", &c, &s);
	if (st_row(db, s, &rc))
		rc = st_col_str(db, s, &c, 0, a, json);
	st_done(s);
	return rc;
}
