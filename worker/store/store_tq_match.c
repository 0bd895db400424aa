/*
** store_tq_match.c — the DIRAC store's write path for jobs and pilots:
** submission into task queues (TQ-01..03), the claim (TQ-09) and writing
** the pilot match records (store_tq.c reads them back). Shared machinery
** is in store_tq.c (store_tq_internal.h); tables in 0004_taskqueues.sql.
**
** A submission is a few statements per thousand jobs, not a few per TQ:
**   1. group the jobs by canonical signature in memory (tq_canon, hashed
**      to 64 bits; equal hashes with different text are refused here);
**   2. find the TQs of every signature with one non-locking IN-list read;
**   3. lock them with SELECT ... FOR UPDATE by tq_id, in ascending tq_id
**      order, re-checking the signature text; a TQ the cleanup deleted in
**      between is not returned and counts as missing;
**   4. create the missing ones one INSERT each (rare), in hash order; a
**      duplicate key means another submission created it first: lock and
**      use that one; then the requirement rows of the created ones;
**   5. multi-row INSERTs of the wms_jobs rows (a duplicate job id fails
**      here, named) and the tq_jobs rows numbered from each TQ's next_seq;
**   6. one CASE update per 128 TQs advances next_seq;
**   7. when TQs were created, tq_state.dirty grows by their number.
** Why this order: every locker of task_queues rows (submissions, the
** priority save, the cleanup) takes them in ascending tq_id order and
** tq_state last, so they wait for each other but do not deadlock; new TQs
** have ids above every existing one, which keeps the order.
**
** The claim is one DELETE ... RETURNING over a padded IN list: the rows
** returned are the ones this transaction removed. A record is one
** multi-row INSERT ... RETURNING (ids read back by request id, since
** consecutive AUTO_INCREMENT values are a server setting, not a promise)
** and one joined UPDATE of the matched jobs.
*/
#include "store/store_internal.h"
#include "store/store_tq.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysqld_error.h>

#include "gb_error.h"
#include "store/store_tq_internal.h"

#define STQ_LOOKUP_CHUNK 256 /* hashes or ids per IN list */
#define STQ_CLAIM_WIDTH 64   /* the claim's IN list */
#define STQ_CREATE_TRIES 3   /* create-or-lock rounds for one signature */
#define STQ_SIG_START 1024   /* first size of the signature buffer */
#define STQ_SIG_MAX ((size_t)64 << 20)
#define STQ_SCRATCH_CAP ((size_t)1 << 30)
#define STQ_RECORD_BYTES ((size_t)4 << 20) /* payload of one record INSERT */

_Static_assert(STQ_CLAIM_WIDTH == ST_TQ_CLAIM_MAX,
	       "the claim's IN list must hold ST_TQ_CLAIM_MAX ids");
_Static_assert(STQ_CLAIM_WIDTH <= ST_ARGS_INLINE,
	       "the claim's ids must fit a list without the heap");

/* ---- statements ---------------------------------------------------------- */

static const char SQL_SIG_LOOKUP[] =
	"SELECT sig_hash, tq_id FROM task_queues WHERE sig_hash IN (" ST_LIST
	")";
static const char SQL_TQ_LOCK[] =
	"SELECT tq_id, sig_hash, next_seq, signature FROM task_queues "
	"WHERE tq_id IN (" ST_LIST ") ORDER BY tq_id FOR UPDATE";
static const char SQL_TQ_INSERT[] =
	"INSERT INTO task_queues (sig_hash, signature, owner, owner_group, "
	"setup, cpu_time, next_seq, created_at) VALUES (?, ?, ?, ?, ?, ?, 0, ?)";
static const char SQL_TQ_LOCK_SIG[] =
	"SELECT tq_id, next_seq, signature FROM task_queues WHERE sig_hash = ? "
	"FOR UPDATE";
static const char SQL_DIRTY_BUMP[] =
	"UPDATE tq_state SET dirty = dirty + ? WHERE id = 1";
/* Padding pairs are NULL: CASE x WHEN NULL never matches, nor IN (NULL). */
static const char SQL_NEXT_SEQ[] =
	"UPDATE task_queues SET next_seq = CASE tq_id " ST_PAIRS
	"END WHERE tq_id IN (" ST_LIST ")";
static const char SQL_CLAIM[] =
	"DELETE FROM tq_jobs WHERE job_id IN (" ST_LIST ") RETURNING job_id";
/* The rank test is in the WHERE clause: a multi-table UPDATE does not
** promise the order of its assignments. STRAIGHT_JOIN: from the few
** decisions by id to their jobs, never a scan of wms_jobs (an empty
** table's statistics suggest one). */
static const char SQL_MATCHED_UPDATE[] =
	"UPDATE pilot_matches p STRAIGHT_JOIN wms_jobs w "
	"ON w.job_id = p.job_id SET w.status = ?, w.status_rank = ?, w.status_at = p.decided_at, "
	"w.site = p.site, w.pilot_id = p.pilot_id, "
	"w.match_request = p.request_id, w.matched_at = p.decided_at, "
	"w.updated_at = p.decided_at WHERE p.id IN (" ST_LIST ") AND "
	"w.status_rank < ?";
/* Multi-row INSERTs (struct st_rows), with their values per row. */
static const char INS_REQS[] =
	"INSERT INTO tq_requirements (tq_id, field, value) VALUES " ST_ROWS;
#define NREQS 3
static const char INS_WMS[] =
	"INSERT INTO wms_jobs (job_id, owner, owner_group, setup, cpu_time, "
	"user_priority, tq_id, status, status_rank, submit_request, "
	"submitted_at, status_at, updated_at) VALUES " ST_ROWS;
#define NWMS 13
static const char INS_TQ_JOBS[] =
	"INSERT INTO tq_jobs (job_id, tq_id, user_priority, seq, "
	"submitted_at) VALUES " ST_ROWS;
#define NTQ_JOBS 5
static const char INS_MATCHES[] =
	"INSERT INTO pilot_matches (request_id, pilot_id, site, outcome, code, "
	"reason, job_id, tq_id, tq_cpu_time, decided_at, detail) VALUES "
	ST_ROWS " RETURNING id, request_id";
#define NMATCHES 11

/* ---- submission ---------------------------------------------------------- */

/* One signature of the submission: its jobs go to one TQ. */
struct grp {
	uint64_t hash;
	const char *sig; /* tq_canon text, in the call's scratch arena */
	size_t siglen;
	const struct cdt_job *job; /* the first job: owner, group, sets */
	long long segment;
	long long tq_id;    /* 0 until found or created */
	long long next_seq; /* seq of its next job */
	int created;
};

struct sub {
	struct st_db *db;
	struct grp *g;
	size_t ng;
	size_t *of;    /* per job: its group */
	uint32_t *tab; /* open addressing by hash: group index + 1, 0 free */
	size_t mask;
	struct arena tmp;
};

static struct grp *grp_find(const struct sub *x, uint64_t hash)
{
	for (size_t i = (size_t)hash & x->mask;; i = (i + 1) & x->mask) {
		if (x->tab[i] == 0)
			return NULL;
		if (x->g[x->tab[i] - 1].hash == hash)
			return &x->g[x->tab[i] - 1];
	}
}

static int collision(struct st_db *db, long long tq_id)
{
	if (tq_id > 0)
		return st_failf(db, GB_EDB,
				"signature hash collision with task queue %lld",
				tq_id);
	return st_failf(db, GB_EDB, "signature hash collision between two "
				    "requirement sets of this submission");
}

static int job_check(struct st_db *db, const struct cdt_job *j, size_t i)
{
	const char *bad = NULL;
	if (j->job_id <= 0)
		bad = "jobID must be > 0";
	else if (!stq_name_ok(j->owner) || !stq_name_ok(j->owner_group) ||
		 !stq_name_ok(j->setup))
		bad = "ownerDN, ownerGroup and setup must be 1..1024 bytes";
	else if (j->cpu_time < 1)
		bad = "cpuTime must be >= 1";
	else if (j->user_priority < TQ_MIN_PRIORITY ||
		 j->user_priority > TQ_MAX_PRIORITY)
		bad = "userPriority out of range";
	for (int f = 0; bad == NULL && f < TQ_NFIELDS; f++) {
		const struct tq_strset *s = &j->set[f];
		if (s->n && s->v == NULL)
			bad = "a requirement set without values";
		for (size_t k = 0; bad == NULL && k < s->n; k++)
			if (!stq_name_ok(s->v[k]))
				bad = "a requirement value must be 1..1024 "
				      "bytes";
	}
	if (bad)
		return st_failf(db, GB_EINVAL, "jobs[%zu] (job %lld): %s", i,
				j->job_id, bad);
	return GB_OK;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

/* Validate the jobs; a job id given twice is GB_EDUP. */
static int jobs_check(struct st_db *db, const struct cdt_job *jobs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int rc = job_check(db, &jobs[i], i);
		if (rc != GB_OK)
			return rc;
	}
	long long *ids = malloc(n * sizeof(*ids));
	if (ids == NULL)
		return st_failf(db, GB_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		ids[i] = jobs[i].job_id;
	qsort(ids, n, sizeof(*ids), cmp_ll);
	int rc = GB_OK;
	for (size_t i = 1; rc == GB_OK && i < n; i++)
		if (ids[i] == ids[i - 1])
			rc = st_failf(db, GB_EDUP,
				      "job %lld appears twice in the "
				      "submission",
				      ids[i]);
	free(ids);
	return rc;
}

/* Step 1: every job's signature; jobs with equal text share a group. */
static int group_jobs(struct sub *x, const struct cdt_job *jobs, size_t n,
		      const long long *seg, size_t nseg)
{
	struct st_db *db = x->db;
	size_t size = 16;
	while (size < 2 * n)
		size *= 2;
	x->mask = size - 1;
	x->tab = calloc(size, sizeof(*x->tab));
	x->g = calloc(n, sizeof(*x->g));
	x->of = malloc(n * sizeof(*x->of));
	size_t cap = STQ_SIG_START;
	char *buf = malloc(cap);
	int rc = x->tab && x->g && x->of && buf
			 ? GB_OK
			 : st_failf(db, GB_ENOMEM, "out of memory");
	for (size_t i = 0; rc == GB_OK && i < n; i++) {
		const struct cdt_job *j = &jobs[i];
		struct tq_def d;
		d.owner = j->owner;
		d.owner_group = j->owner_group;
		d.setup = j->setup;
		d.cpu_time = tq_cpu_segment(j->cpu_time, seg, nseg);
		memcpy(d.set, j->set, sizeof(d.set));
		size_t len = 0;
		rc = tq_canon(&d, buf, cap, &len);
		if (rc == GB_ETOOBIG && len < STQ_SIG_MAX) {
			char *nb = realloc(buf, len + 1);
			if (nb == NULL) {
				rc = st_failf(db, GB_ENOMEM, "out of memory");
				break;
			}
			buf = nb;
			cap = len + 1;
			rc = tq_canon(&d, buf, cap, &len);
		}
		if (rc != GB_OK) {
			rc = st_failf(db, rc == GB_ETOOBIG ? GB_ETOOBIG
							   : GB_EINVAL,
				      "jobs[%zu] (job %lld): no canonical "
				      "signature (%s)",
				      i, j->job_id, gb_strerror(rc));
			break;
		}
		uint64_t h = stq_hash64(buf, len);
		struct grp *g = grp_find(x, h);
		if (g && (g->siglen != len || memcmp(g->sig, buf, len) != 0)) {
			rc = collision(db, 0);
			break;
		}
		if (g == NULL) {
			char *sig = arena_strndup(&x->tmp, buf, len);
			if (sig == NULL) {
				rc = st_failf(db, GB_ETOOBIG,
					      "signatures do not fit memory");
				break;
			}
			g = &x->g[x->ng++];
			*g = (struct grp){h, sig, len, j, d.cpu_time, 0, 0, 0};
			size_t k = (size_t)h & x->mask;
			while (x->tab[k])
				k = (k + 1) & x->mask;
			x->tab[k] = (uint32_t)x->ng;
		}
		x->of[i] = (size_t)(g - x->g);
	}
	free(buf);
	return rc;
}

/* Step 2: the tq_id of every signature that has a TQ (not locked yet). */
static int find_tqs(struct sub *x)
{
	struct st_chunks ch;
	int rc = GB_OK;
	st_chunks_init(&ch, x->ng, STQ_LOOKUP_CHUNK);
	while (st_chunks_next(&ch, &rc)) {
		for (size_t i = 0; i < ch.k; i++)
			st_arg_u64(&ch.a, x->g[ch.off + i].hash);
		st_arg_nulls(&ch.a, STQ_LOOKUP_CHUNK - ch.k);
		struct st_cols c;
		MYSQL_STMT *s = NULL;
		st_cols_init(&c, "ll");
		c.b[0].is_unsigned = 1;
		rc = st_run_n(x->db, STQ_SID(STQ_SIG_LOOKUP), SQL_SIG_LOOKUP,
			      STQ_LOOKUP_CHUNK, &ch.a, &c, &s);
		while (st_row(x->db, s, &rc)) {
			uint64_t h;
			memcpy(&h, &c.ll[0], sizeof(h));
			struct grp *g = grp_find(x, h);
			if (g)
				g->tq_id = st_col_ll(&c, 1);
		}
		st_done(s);
	}
	st_chunks_free(&ch);
	return rc;
}

struct idg {
	long long id;
	size_t g;
};

static int cmp_idg(const void *a, const void *b)
{
	long long x = ((const struct idg *)a)->id;
	long long y = ((const struct idg *)b)->id;
	return (x > y) - (x < y);
}

/* Step 3: lock the TQs found, ascending tq_id; vanished ones become 0. */
static int lock_tqs(struct sub *x)
{
	struct st_db *db = x->db;
	size_t nc = 0;
	struct idg *c = malloc((x->ng ? x->ng : 1) * sizeof(*c));
	char *locked = calloc(x->ng ? x->ng : 1, 1);
	if (c == NULL || locked == NULL) {
		free(c);
		free(locked);
		return st_failf(db, GB_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < x->ng; i++)
		if (x->g[i].tq_id > 0)
			c[nc++] = (struct idg){x->g[i].tq_id, i};
	qsort(c, nc, sizeof(*c), cmp_idg);
	struct st_chunks ch;
	int rc = GB_OK;
	st_chunks_init(&ch, nc, STQ_LOOKUP_CHUNK);
	while (st_chunks_next(&ch, &rc)) {
		for (size_t i = 0; i < ch.k; i++)
			st_arg_ll(&ch.a, c[ch.off + i].id);
		st_arg_nulls(&ch.a, STQ_LOOKUP_CHUNK - ch.k);
		struct st_cols cols;
		MYSQL_STMT *s = NULL;
		st_cols_init(&cols, "llls");
		cols.b[1].is_unsigned = 1;
		rc = st_run_n(db, STQ_SID(STQ_TQ_LOCK), SQL_TQ_LOCK,
			      STQ_LOOKUP_CHUNK, &ch.a, &cols, &s);
		while (st_row(db, s, &rc)) {
			long long id = st_col_ll(&cols, 0);
			uint64_t h;
			memcpy(&h, &cols.ll[1], sizeof(h));
			struct grp *g = grp_find(x, h);
			if (g == NULL || g->tq_id != id) {
				rc = st_failf(db, GB_EDB,
					      "task queue %lld changed its "
					      "signature hash",
					      id);
				break;
			}
			int eq = stq_col_equals(db, s, &cols, 3, g->sig,
						g->siglen);
			if (eq < 0) {
				rc = eq;
				break;
			}
			if (!eq) {
				rc = collision(db, id);
				break;
			}
			g->next_seq = st_col_ll(&cols, 2);
			locked[g - x->g] = 1;
		}
		st_done(s);
	}
	/* Deleted by the cleanup between the lookup and the lock. */
	for (size_t i = 0; rc == GB_OK && i < x->ng; i++)
		if (!locked[i])
			x->g[i].tq_id = 0;
	st_chunks_free(&ch);
	free(c);
	free(locked);
	return rc;
}

/* Lock the TQ of g's signature that another transaction created. *found
** 0 when there is none (deleted again meanwhile). */
static int lock_by_sig(struct st_db *db, struct grp *g, int *found)
{
	struct st_args a;
	struct st_cols c;
	MYSQL_STMT *s;
	st_args_init(&a);
	st_arg_u64(&a, g->hash);
	st_cols_init(&c, "lls");
	int rc = st_query(db, STQ_SID(STQ_TQ_LOCK_SIG), SQL_TQ_LOCK_SIG, &a, &c,
			  &s);
	*found = st_row(db, s, &rc);
	if (*found) {
		int eq = stq_col_equals(db, s, &c, 2, g->sig, g->siglen);
		if (eq < 0)
			rc = eq;
		else if (!eq)
			rc = collision(db, st_col_ll(&c, 0));
		g->tq_id = st_col_ll(&c, 0);
		g->next_seq = st_col_ll(&c, 1);
	}
	st_done(s);
	return rc;
}

/* Create g's TQ, or lock the one a concurrent submission created. */
static int create_tq(struct st_db *db, struct grp *g, long long now)
{
	for (int round = 0; round < STQ_CREATE_TRIES; round++) {
		struct st_args a;
		MYSQL_STMT *s;
		st_args_init(&a);
		st_arg_u64(&a, g->hash);
		st_arg_str(&a, g->sig);
		st_arg_str(&a, g->job->owner);
		st_arg_str(&a, g->job->owner_group);
		st_arg_str(&a, g->job->setup);
		st_arg_ll(&a, g->segment);
		st_arg_ll(&a, now);
		int rc = st_exec(db, STQ_SID(STQ_TQ_INSERT), SQL_TQ_INSERT, &a,
				 &s);
		if (rc == GB_OK) {
			g->tq_id = (long long)mysql_stmt_insert_id(s);
			g->next_seq = 0;
			g->created = 1;
			return GB_OK;
		}
		if (db->errnum != ER_DUP_ENTRY)
			return st_input_error(db, rc, 0);
		int found = 0;
		rc = lock_by_sig(db, g, &found);
		if (rc != GB_OK || found)
			return rc;
	}
	return st_failf(db, GB_EDBRETRY,
			"the task queue of a signature was created and "
			"deleted %d times during the submission",
			STQ_CREATE_TRIES);
}

static int cmp_grp_hash(const void *a, const void *b)
{
	uint64_t x = (*(struct grp *const *)a)->hash;
	uint64_t y = (*(struct grp *const *)b)->hash;
	return (x > y) - (x < y);
}

/* Step 4: create the missing TQs with their requirement rows; *created
** counts the TQs this call created. */
static int create_tqs(struct sub *x, long long now, size_t *created)
{
	struct st_db *db = x->db;
	*created = 0;
	struct grp **m = malloc((x->ng ? x->ng : 1) * sizeof(*m));
	if (m == NULL)
		return st_failf(db, GB_ENOMEM, "out of memory");
	size_t nm = 0;
	for (size_t i = 0; i < x->ng; i++)
		if (x->g[i].tq_id == 0)
			m[nm++] = &x->g[i];
	/* Hash order: two submissions creating the same TQs take their
	** locks in the same order. */
	qsort(m, nm, sizeof(*m), cmp_grp_hash);
	int rc = GB_OK;
	for (size_t i = 0; rc == GB_OK && i < nm; i++)
		rc = create_tq(db, m[i], now);
	struct st_rows r;
	st_rows_init(&r, STQ_SID(STQ_INS_REQS), INS_REQS, NREQS);
	for (size_t i = 0; rc == GB_OK && i < nm; i++) {
		if (!m[i]->created)
			continue;
		(*created)++;
		for (int f = 0; rc == GB_OK && f < TQ_NFIELDS; f++) {
			const struct tq_strset *s = &m[i]->job->set[f];
			for (size_t k = 0; rc == GB_OK && k < s->n; k++) {
				st_arg_ll(&r.a, m[i]->tq_id);
				st_arg_str(&r.a, tq_field_names[f]);
				st_arg_str(&r.a, s->v[k]);
				rc = st_rows_end(db, &r);
			}
		}
	}
	if (rc == GB_OK)
		rc = st_rows_flush(db, &r);
	st_rows_free(&r);
	free(m);
	return st_input_error(db, rc, 0);
}

/*
** Step 7: count the created TQs in tq_state.dirty (PR-08). Last of all:
** once a submission holds that row it waits for no other lock, so a
** cleanup (which takes it after gap locks on tq_jobs) cannot close a
** cycle with it.
*/
static int bump_dirty(struct st_db *db, size_t created)
{
	struct st_args a;
	MYSQL_STMT *s;
	st_args_init(&a);
	st_arg_ll(&a, (long long)created);
	return st_exec(db, STQ_SID(STQ_DIRTY_BUMP), SQL_DIRTY_BUMP, &a, &s);
}

int st_tq_mark_dirty(struct st_db *db, size_t n)
{
	if (db == NULL)
		return GB_EINVAL;
	int rc = st_need_txn(db, 1, "st_tq_mark_dirty");
	return rc != GB_OK || n == 0 ? rc : bump_dirty(db, n);
}

/* A duplicate key on a job row names the job. */
static int job_dup(struct st_db *db, int rc)
{
	if (rc != GB_EDB || db->errnum != ER_DUP_ENTRY)
		return st_input_error(db, rc, 0);
	long long id = 0;
	char why[sizeof(db->msg)];
	memcpy(why, db->msg, sizeof(why));
	const char *p = strstr(why, "Duplicate entry '");
	if (p && sscanf(p, "Duplicate entry '%lld'", &id) == 1)
		return st_failf(db, GB_EDUP, "job %lld already exists", id);
	return st_failf(db, GB_EDUP, "a job of the submission already exists "
				     "(%s)",
			why);
}

/* Step 5: the wms_jobs rows, then the tq_jobs rows numbered per TQ. */
static int insert_jobs(struct sub *x, const struct cdt_job *jobs, size_t n,
		       const char *request_id, long long now)
{
	struct st_db *db = x->db;
	const char *waiting = cdt_status_name(CDT_ST_WAITING);
	int rank = cdt_status_rank(CDT_ST_WAITING);
	struct st_rows w;
	st_rows_init(&w, STQ_SID(STQ_INS_WMS), INS_WMS, NWMS);
	int rc = GB_OK;
	for (size_t i = 0; rc == GB_OK && i < n; i++) {
		const struct cdt_job *j = &jobs[i];
		st_arg_ll(&w.a, j->job_id);
		st_arg_str(&w.a, j->owner);
		st_arg_str(&w.a, j->owner_group);
		st_arg_str(&w.a, j->setup);
		st_arg_ll(&w.a, j->cpu_time);
		st_arg_ll(&w.a, j->user_priority);
		st_arg_ll(&w.a, x->g[x->of[i]].tq_id);
		st_arg_str(&w.a, waiting);
		st_arg_ll(&w.a, rank);
		st_arg_str(&w.a, request_id);
		st_arg_ll(&w.a, now);
		st_arg_ll(&w.a, now);
		st_arg_ll(&w.a, now);
		rc = st_rows_end(db, &w);
	}
	if (rc == GB_OK)
		rc = st_rows_flush(db, &w);
	st_rows_free(&w);
	if (rc != GB_OK)
		return job_dup(db, rc);
	struct st_rows t;
	st_rows_init(&t, STQ_SID(STQ_INS_TQ_JOBS), INS_TQ_JOBS, NTQ_JOBS);
	for (size_t i = 0; rc == GB_OK && i < n; i++) {
		struct grp *g = &x->g[x->of[i]];
		st_arg_ll(&t.a, jobs[i].job_id);
		st_arg_ll(&t.a, g->tq_id);
		st_arg_ll(&t.a, jobs[i].user_priority);
		st_arg_ll(&t.a, g->next_seq++);
		st_arg_ll(&t.a, now);
		rc = st_rows_end(db, &t);
	}
	if (rc == GB_OK)
		rc = st_rows_flush(db, &t);
	st_rows_free(&t);
	return rc == GB_OK ? GB_OK : job_dup(db, rc);
}

/* Step 6: store every TQ's advanced next_seq, ascending tq_id. */
static int advance_seqs(struct sub *x)
{
	struct idg *c = malloc((x->ng ? x->ng : 1) * sizeof(*c));
	long long *ids = malloc((x->ng ? x->ng : 1) * sizeof(*ids));
	long long *seqs = malloc((x->ng ? x->ng : 1) * sizeof(*seqs));
	int rc = GB_OK;
	if (c == NULL || ids == NULL || seqs == NULL)
		rc = st_failf(x->db, GB_ENOMEM, "out of memory");
	if (rc == GB_OK) {
		for (size_t i = 0; i < x->ng; i++)
			c[i] = (struct idg){x->g[i].tq_id, i};
		qsort(c, x->ng, sizeof(*c), cmp_idg);
		for (size_t i = 0; i < x->ng; i++) {
			ids[i] = c[i].id;
			seqs[i] = x->g[c[i].g].next_seq;
		}
		rc = stq_set_per_tq(x->db, STQ_NEXT_SEQ, SQL_NEXT_SEQ, ids,
				    seqs, x->ng);
	}
	free(c);
	free(ids);
	free(seqs);
	return rc;
}

int st_tq_submit(struct st_db *db, const struct cdt_job *jobs, size_t n,
		 const long long *seg, size_t nseg, const char *request_id,
		 long long now, struct arena *a, struct st_tq_submitted *out)
{
	if (db == NULL || (n && jobs == NULL) || a == NULL || out == NULL)
		return GB_EINVAL;
	memset(out, 0, sizeof(*out));
	if (!tq_segments_valid(seg, nseg))
		return st_failf(db, GB_EINVAL, "invalid CPU time segments");
	if (request_id && strlen(request_id) > STQ_MAX_NAME_BYTES)
		return st_failf(db, GB_EINVAL, "request id too long");
	int rc = st_need_txn(db, 1, "st_tq_submit");
	if (rc != GB_OK || n == 0)
		return rc;
	if (n > UINT32_MAX / 2)
		return st_failf(db, GB_ETOOBIG, "%zu jobs in one call", n);
	rc = jobs_check(db, jobs, n);
	if (rc != GB_OK)
		return rc;
	long long *tq_of = arena_alloc(a, n * sizeof(*tq_of));
	if (tq_of == NULL)
		return st_failf(db, GB_ETOOBIG,
				"%zu jobs do not fit the request's memory", n);
	struct sub x;
	memset(&x, 0, sizeof(x));
	x.db = db;
	arena_init(&x.tmp, STQ_SCRATCH_CAP);
	size_t created = 0;
	rc = group_jobs(&x, jobs, n, seg, nseg);
	if (rc == GB_OK)
		rc = find_tqs(&x);
	if (rc == GB_OK)
		rc = lock_tqs(&x);
	if (rc == GB_OK)
		rc = create_tqs(&x, now, &created);
	if (rc == GB_OK)
		rc = insert_jobs(&x, jobs, n, request_id, now);
	if (rc == GB_OK)
		rc = advance_seqs(&x);
	if (rc == GB_OK && created)
		rc = bump_dirty(db, created);
	if (rc == GB_OK) {
		for (size_t i = 0; i < n; i++)
			tq_of[i] = x.g[x.of[i]].tq_id;
		out->tqs = x.ng;
		out->new_tqs = created;
		out->tq_of = tq_of;
	}
	arena_free(&x.tmp);
	free(x.g);
	free(x.of);
	free(x.tab);
	return rc;
}

/* ---- the claim ----------------------------------------------------------- */

int st_tq_claim(struct st_db *db, const long long *job_ids, size_t n,
		int *claimed)
{
	if (db == NULL || (n && (job_ids == NULL || claimed == NULL)) ||
	    n > ST_TQ_CLAIM_MAX)
		return GB_EINVAL;
	for (size_t i = 0; i < n; i++) {
		claimed[i] = 0;
		for (size_t k = 0; k < i; k++)
			if (job_ids[k] == job_ids[i])
				return st_failf(db, GB_EINVAL,
						"job %lld listed twice in a "
						"claim",
						job_ids[i]);
	}
	/* In autocommit the removal would be final before the match is
	** recorded, and a crash in between would lose the job. */
	int rc = st_need_txn(db, 1, "st_tq_claim");
	if (rc != GB_OK || n == 0)
		return rc;
	struct st_args a;
	struct st_cols c;
	MYSQL_STMT *s = NULL;
	st_args_init(&a);
	st_arg_ids(&a, job_ids, n, STQ_CLAIM_WIDTH);
	st_cols_init(&c, "l");
	rc = st_run_n(db, STQ_SID(STQ_CLAIM), SQL_CLAIM, STQ_CLAIM_WIDTH, &a,
		      &c, &s);
	while (st_row(db, s, &rc)) {
		long long id = st_col_ll(&c, 0);
		for (size_t i = 0; i < n; i++)
			if (job_ids[i] == id)
				claimed[i] = 1;
	}
	st_done(s);
	return rc;
}

/* ---- match records ------------------------------------------------------- */

static int rec_check(struct st_db *db, const struct st_tq_match_rec *r,
		     size_t i)
{
	const struct cdt_match *m = &r->m;
	const char *bad = NULL;
	if (m->request_id == NULL || m->request_id[0] == '\0' ||
	    strlen(m->request_id) > 4 * 191)
		bad = "request id missing or too long";
	else if (!stq_name_ok(m->pilot_id) || !stq_name_ok(m->site))
		bad = "pilot id and site must be 1..1024 bytes";
	else if (m->code == NULL || m->code[0] == '\0' || strlen(m->code) > 64)
		bad = "code missing or too long";
	else if (m->matched && (m->job_id <= 0 || m->tq_id <= 0))
		bad = "a match without its job and task queue";
	else if (r->detail_json && strlen(r->detail_json) > ST_MEDIUM_MAX)
		bad = "detail longer than a MEDIUMTEXT";
	if (bad)
		return st_failf(db, GB_EINVAL, "match record %zu: %s", i, bad);
	return GB_OK;
}

/* A record's request id and its index, sorted by id for the read-back. */
struct rid_idx {
	const char *rid;
	size_t i;
};

static int cmp_rid(const void *a, const void *b)
{
	return strcmp(((const struct rid_idx *)a)->rid,
		      ((const struct rid_idx *)b)->rid);
}

/* Write each returned id into its record (found by request id). */
static int record_ids(struct st_db *db, MYSQL_STMT *s, struct st_cols *c,
		      struct st_tq_match_rec *recs, size_t n)
{
	struct rid_idx *ord = malloc(n * sizeof(*ord));
	if (ord == NULL)
		return st_failf(db, GB_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		ord[i] = (struct rid_idx){recs[i].m.request_id, i};
		recs[i].m.decision_id = 0;
	}
	qsort(ord, n, sizeof(*ord), cmp_rid);
	struct arena a;
	arena_init(&a, (size_t)16 << 20);
	size_t seen = 0;
	int rc = GB_OK;
	while (st_row(db, s, &rc)) {
		char *rid = NULL;
		rc = st_col_str(db, s, c, 1, &a, &rid);
		if (rc != GB_OK)
			break;
		struct rid_idx key = {rid ? rid : "", 0};
		struct rid_idx *hit =
			bsearch(&key, ord, n, sizeof(*ord), cmp_rid);
		if (hit && recs[hit->i].m.decision_id == 0) {
			recs[hit->i].m.decision_id = st_col_ll(c, 0);
			seen++;
		}
	}
	arena_free(&a);
	free(ord);
	if (rc == GB_OK && seen != n)
		rc = st_failf(db, GB_EDB,
			      "pilot_matches returned %zu ids for %zu rows",
			      seen, n);
	return rc;
}

/* Mark the matched jobs of recs[0..n) matched, 64 decisions a statement. */
static int mark_matched(struct st_db *db, const struct st_tq_match_rec *recs,
			size_t n)
{
	const char *matched = cdt_status_name(CDT_ST_MATCHED);
	int rank = cdt_status_rank(CDT_ST_MATCHED);
	long long ids[STQ_CLAIM_WIDTH];
	struct st_args a;
	st_args_init_many(&a);
	int rc = GB_OK;
	size_t i = 0;
	while (rc == GB_OK && i < n) {
		size_t k = 0;
		for (; i < n && k < STQ_CLAIM_WIDTH; i++)
			if (recs[i].m.matched)
				ids[k++] = recs[i].m.decision_id;
		if (k == 0)
			break;
		st_args_reset(&a);
		st_arg_str(&a, matched);
		st_arg_ll(&a, rank);
		st_arg_ids(&a, ids, k, STQ_CLAIM_WIDTH);
		st_arg_ll(&a, rank);
		MYSQL_STMT *s;
		rc = st_run_n(db, STQ_SID(STQ_MATCHED_UPDATE),
			      SQL_MATCHED_UPDATE, STQ_CLAIM_WIDTH, &a, NULL,
			      &s);
	}
	st_args_free(&a);
	return rc;
}

/* Bytes one record adds to the INSERT, roughly: strings plus overhead. */
static size_t rec_bytes(const struct st_tq_match_rec *r)
{
	const struct cdt_match *m = &r->m;
	return 128 + strlen(m->request_id) + strlen(m->pilot_id) +
	       strlen(m->site) + strlen(m->code) +
	       (m->reason ? strlen(m->reason) : 0) +
	       (r->detail_json ? strlen(r->detail_json) : 0);
}

/* One INSERT ... RETURNING of recs[0..n); ids written back. */
static int record_chunk(struct st_db *db, struct st_tq_match_rec *recs,
			size_t n, long long now)
{
	struct st_args a;
	st_args_init_many(&a);
	for (size_t i = 0; i < n; i++) {
		const struct cdt_match *m = &recs[i].m;
		st_arg_str(&a, m->request_id);
		st_arg_str(&a, m->pilot_id);
		st_arg_str(&a, m->site);
		st_arg_str(&a, m->matched ? "matched" : "nomatch");
		st_arg_str(&a, m->code);
		st_arg_str(&a, m->reason);
		if (m->matched) {
			st_arg_ll(&a, m->job_id);
			st_arg_ll(&a, m->tq_id);
			st_arg_ll(&a, m->tq_cpu_time);
		} else {
			st_arg_nulls(&a, 3);
		}
		st_arg_ll(&a, now);
		st_arg_str(&a, recs[i].detail_json);
	}
	struct st_cols c;
	MYSQL_STMT *s = NULL;
	st_cols_init(&c, "ls");
	int rc = st_prepared_n(db, STQ_SID(STQ_INS_MATCHES), INS_MATCHES,
			       (unsigned)n, NMATCHES, &s);
	if (rc == GB_OK)
		rc = st_run(db, s, &a, &c);
	st_args_free(&a);
	if (rc == GB_EDB && db->errnum == ER_DUP_ENTRY) {
		char why[sizeof(db->msg)];
		memcpy(why, db->msg, sizeof(why));
		if (strstr(why, "uk_pilot_matches_job"))
			return st_failf(db, GB_EDB,
					"a job of this batch was matched "
					"before (TQ-09 guard): %s",
					why);
		return st_failf(db, GB_EDUP,
				"a request of this batch was recorded "
				"before: %s",
				why);
	}
	if (rc != GB_OK)
		return st_input_error(db, rc, 0);
	rc = record_ids(db, s, &c, recs, n);
	st_done(s);
	return rc;
}

int st_tq_record(struct st_db *db, struct st_tq_match_rec *recs, size_t n,
		 long long now)
{
	if (db == NULL || (n && recs == NULL) || n > ST_TQ_RECORD_MAX)
		return GB_EINVAL;
	for (size_t i = 0; i < n; i++) {
		int rc = rec_check(db, &recs[i], i);
		if (rc != GB_OK)
			return rc;
	}
	int rc = st_need_txn(db, 1, "st_tq_record");
	/* Usually one statement; large details are split so that no
	** statement approaches max_allowed_packet. */
	for (size_t off = 0, k; rc == GB_OK && off < n; off += k) {
		size_t bytes = 0;
		for (k = 0; off + k < n; k++) {
			size_t rb = rec_bytes(&recs[off + k]);
			if (k > 0 && bytes + rb > STQ_RECORD_BYTES)
				break;
			bytes += rb;
		}
		rc = record_chunk(db, recs + off, k, now);
	}
	if (rc == GB_OK)
		rc = mark_matched(db, recs, n);
	return rc;
}
