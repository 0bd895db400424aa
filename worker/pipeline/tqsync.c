/*
** tqsync.c — load and refresh the task queue index from MariaDB
** (tqsync.h).
**
** Both calls are straight sequences of store reads applied to the index,
** in the order tqsync.h gives and for the reasons it gives. Shape choices:
**   - The store's rows live in an arena that is freed before returning, so
**     a refresh every few hundred milliseconds leaves nothing behind; the
**     index copies every string it keeps.
**   - Jobs are streamed (st_tq_jobs_scan calls back per row) and added one
**     by one: a full load of a million jobs never holds them twice.
**   - State that says "read up to here" (a TQ's seq and rm seq) moves
**     only after what was read has been applied, so a refresh that fails
**     half-way (database gone, out of memory) is simply done again: adds
**     are idempotent and a repeated removal is GB_ENOTFOUND, which is
**     normal here.
**   - The removals of every TQ that has new ones are read with one scan
**     (st_tq_removals_scan_many), after all the job scans: a statement
**     per TQ made the refresh, which runs on the event loop between
**     batches, the longest wait a pilot saw at light load.
**   - A job whose TQ the index does not hold is skipped: the TQ appeared
**     after the TQ list was read, and the next refresh adds it with all its
**     jobs (its seq starts at 0).
*/
#include "pipeline/tqsync.h"

#include <stdlib.h>
#include <string.h>

#include "gb_error.h"
#include "store/store_tq.h"

/* Cap of one call's row arena: the TQ list with every requirement string
** of a large grid is a few MB; the cap only stops a runaway. */
#define TQS_ARENA_CAP ((size_t)256 << 20)
#define TQS_OWN_LOCAL 256 /* own removals sorted without the heap */

struct scan_ctx {
	struct tqi_index *x;
	struct wk_tqs_stats *st;
};

/* st_tq_jobs_scan callback: add one waiting job. */
static int scan_add(void *ud, const struct st_tq_jobrow *r)
{
	struct scan_ctx *c = ud;
	size_t before = tqi_njobs(c->x);
	int rc = tqi_job_add(c->x, r->tq_id, r->job_id, r->user_priority);
	if (rc == GB_ENOTFOUND)
		return GB_OK;
	if (rc == GB_EINVAL)
		return GB_ERANGE; /* a row the store should have refused */
	if (rc != GB_OK)
		return rc;
	c->st->jobs_added += tqi_njobs(c->x) - before;
	return GB_OK;
}

/* Put one TQ row (with its requirements) into the index at job seq `seq`
** and the row's rm_next_seq: the job scan that follows reads tq_jobs after
** the row was, so removals below it are already out of tq_jobs. */
static int put_row(struct tqi_index *x, const struct st_tq_row *r,
		   long long seq)
{
	int rc = tqi_tq_put(x, r->tq_id, r->owner, r->owner_group, r->setup,
			    r->cpu_time, r->set, r->priority);
	if (rc == GB_EINVAL)
		return GB_ERANGE;
	if (rc == GB_OK)
		rc = tqi_set_seq(x, r->tq_id, seq);
	if (rc == GB_OK)
		rc = tqi_set_rm_seq(x, r->tq_id, r->rm_next_seq);
	return rc;
}

/* The index's view of tq_id, or NULL (views are sorted by tq_id). */
static const struct tq_view *view_of(const struct tqi_index *x,
				     long long tq_id)
{
	size_t n, lo = 0, hi;
	const struct tq_view *v = tqi_views(x, &n);
	hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].tq_id < tq_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].tq_id == tq_id ? &v[lo] : NULL;
}

/* Removals are applied per TQ in seq order; a hole means pruned. One
** entry per TQ read by a refresh's removal scan, in tq_id order. */
struct rm_tq {
	const struct st_tq_row *row; /* its task_queues row, as listed */
	long long next;              /* the seq expected next */
	int gap;                     /* a hole: the TQ is reloaded */
};

struct rm_ctx {
	struct tqi_index *x;
	struct wk_tqs_stats *st;
	struct rm_tq *tq;
	size_t n, cur; /* rows come in tq_id order: cur only moves up */
};

static int rm_apply(void *ud, const struct st_tq_rmrow *r)
{
	struct rm_ctx *c = ud;
	while (c->cur < c->n && c->tq[c->cur].row->tq_id < r->tq_id)
		c->cur++;
	if (c->cur == c->n || c->tq[c->cur].row->tq_id != r->tq_id)
		return GB_ERANGE; /* the store returned a TQ not asked for */
	struct rm_tq *t = &c->tq[c->cur];
	if (t->gap)
		return GB_OK;
	if (r->seq != t->next) {
		t->gap = 1;
		return GB_OK;
	}
	/* Not there: this worker's own claim, or a job never loaded. */
	if (tqi_job_remove(c->x, r->tq_id, r->job_id) == GB_OK)
		c->st->jobs_removed++;
	t->next = r->seq + 1;
	return GB_OK;
}

/* Read TQ r's jobs from scratch: its removal log no longer reaches back
** to the index's rm seq. */
static int reload_tq(struct st_db *db, struct tqi_index *x,
		     const struct st_tq_row *r, struct arena *a,
		     struct scan_ctx *c)
{
	struct st_tq_row full;
	int rc = st_tq_get(db, r->tq_id, a, &full);
	if (rc == GB_OK)
		rc = tqi_tq_remove(x, r->tq_id);
	if (rc == GB_ENOTFOUND)
		return GB_OK; /* deleted meanwhile: the next refresh drops it */
	if (rc == GB_OK)
		rc = put_row(x, &full, 0);
	if (rc == GB_OK)
		rc = st_tq_jobs_scan(db, r->tq_id, 0, scan_add, c);
	if (rc == GB_OK)
		rc = tqi_set_seq(x, r->tq_id, full.next_seq);
	if (rc == GB_OK)
		c->st->tqs_reloaded++;
	return rc;
}

/*
** Apply the removals logged since the index's rm seq of every listed TQ
** that has some (rows[0..nrows), ascending tq_id), with one scan for all
** of them (st_tq_removals_scan_many): after every TQ's jobs were read, as
** tqsync.h asks. A TQ whose log does not reach back to its rm seq (a hole,
** or fewer rows than its listed rm_next_seq promises: rows were pruned) is
** reloaded.
*/
static int apply_removals(struct st_db *db, struct tqi_index *x,
			  const struct st_tq_row *rows, size_t nrows,
			  struct arena *a, struct scan_ctx *sc)
{
	size_t n = 0;
	for (size_t i = 0; i < nrows; i++) {
		long long from = tqi_rm_seq(x, rows[i].tq_id);
		n += from >= 0 && rows[i].rm_next_seq > from;
	}
	if (n == 0)
		return GB_OK;
	struct rm_tq *tq = arena_alloc(a, n * sizeof(*tq));
	struct st_tq_rmfrom *from = arena_alloc(a, n * sizeof(*from));
	if (tq == NULL || from == NULL)
		return GB_ENOMEM;
	n = 0;
	for (size_t i = 0; i < nrows; i++) {
		long long f = tqi_rm_seq(x, rows[i].tq_id);
		if (f < 0 || rows[i].rm_next_seq <= f)
			continue;
		tq[n] = (struct rm_tq){.row = &rows[i], .next = f};
		from[n++] = (struct st_tq_rmfrom){rows[i].tq_id, f};
	}
	struct rm_ctx c = {.x = x, .st = sc->st, .tq = tq, .n = n};
	int rc = st_tq_removals_scan_many(db, from, n, rm_apply, &c);
	for (size_t i = 0; rc == GB_OK && i < n; i++) {
		if (tq[i].gap || tq[i].next < tq[i].row->rm_next_seq)
			rc = reload_tq(db, x, tq[i].row, a, sc);
		else
			rc = tqi_set_rm_seq(x, tq[i].row->tq_id, tq[i].next);
	}
	return rc;
}

static int cmp_removal(const void *a, const void *b)
{
	const struct st_tq_removal *x = a, *y = b;
	if (x->tq_id != y->tq_id)
		return x->tq_id < y->tq_id ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

void wk_tqs_own_removals(struct tqi_index *x, const struct st_tq_removal *rm,
			 size_t n)
{
	if (x == NULL || rm == NULL || n == 0)
		return;
	/* A batch's worth (match_batch is at most 256) is sorted on the
	** stack: this runs after every batch's commit. */
	struct st_tq_removal local[TQS_OWN_LOCAL];
	struct st_tq_removal *v = n <= TQS_OWN_LOCAL ? local
						     : malloc(n * sizeof(*v));
	if (v == NULL)
		return; /* the next refresh reads them back: only slower */
	memcpy(v, rm, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_removal);
	for (size_t i = 0; i < n; i++)
		if (v[i].seq >= 0 && tqi_rm_seq(x, v[i].tq_id) == v[i].seq)
			tqi_set_rm_seq(x, v[i].tq_id, v[i].seq + 1);
	if (v != local)
		free(v);
}

int wk_tqs_load(struct st_db *db, struct tqi_index *x, struct wk_tqs_state *s,
	     struct wk_tqs_stats *st)
{
	struct wk_tqs_stats local;
	if (db == NULL || x == NULL || s == NULL)
		return GB_EINVAL;
	if (st == NULL)
		st = &local;
	memset(st, 0, sizeof(*st));
	s->loaded = 0;

	/* Clear: removing from the end moves nothing. */
	size_t n;
	const struct tq_view *v = tqi_views(x, &n);
	while (n > 0) {
		int rc = tqi_tq_remove(x, v[n - 1].tq_id);
		if (rc != GB_OK)
			return rc;
		st->tqs_removed++;
		v = tqi_views(x, &n);
	}

	struct arena a;
	arena_init(&a, TQS_ARENA_CAP);
	struct st_tq_row *rows = NULL;
	size_t nrows = 0;
	int rc = st_tq_list(db, 1, &a, &rows, &nrows);
	for (size_t i = 0; rc == GB_OK && i < nrows; i++) {
		/* seq = the next_seq seen now: jobs committed later have a
		** seq at least that, so the next refresh reads them even if
		** the scan below already did (adding is idempotent); the
		** same for removals and rm_next_seq. */
		rc = put_row(x, &rows[i], rows[i].next_seq);
		if (rc == GB_OK)
			st->tqs_added++;
	}
	arena_free(&a);
	if (rc != GB_OK)
		return rc;

	struct scan_ctx c = {.x = x, .st = st};
	rc = st_tq_jobs_scan(db, 0, 0, scan_add, &c);
	if (rc != GB_OK)
		return rc;
	s->loaded = 1;
	return GB_OK;
}

/* Drop the index's TQs that the table no longer has (rows by tq_id). */
static int drop_gone(struct tqi_index *x, const struct st_tq_row *rows,
		     size_t nrows, struct wk_tqs_stats *st)
{
	size_t n, i = 0, r = 0;
	const struct tq_view *v = tqi_views(x, &n);
	while (i < n) {
		long long id = v[i].tq_id;
		while (r < nrows && rows[r].tq_id < id)
			r++;
		if (r < nrows && rows[r].tq_id == id) {
			i++;
			continue;
		}
		int rc = tqi_tq_remove(x, id);
		if (rc != GB_OK)
			return rc;
		st->tqs_removed++;
		v = tqi_views(x, &n); /* the same position now holds the next */
	}
	return GB_OK;
}

int wk_tqs_refresh(struct st_db *db, struct tqi_index *x, struct wk_tqs_state *s,
		struct wk_tqs_stats *st)
{
	struct wk_tqs_stats local;
	if (db == NULL || x == NULL || s == NULL)
		return GB_EINVAL;
	if (!s->loaded)
		return GB_ESTATE;
	if (st == NULL)
		st = &local;
	memset(st, 0, sizeof(*st));

	struct arena a;
	arena_init(&a, TQS_ARENA_CAP);
	struct st_tq_row *rows = NULL;
	size_t nrows = 0;
	int rc = st_tq_list(db, 0, &a, &rows, &nrows);
	if (rc == GB_OK)
		rc = drop_gone(x, rows, nrows, st);
	struct scan_ctx c = {.x = x, .st = st};
	for (size_t i = 0; rc == GB_OK && i < nrows; i++) {
		const struct st_tq_row *r = &rows[i];
		if (!tqi_tq_has(x, r->tq_id)) {
			struct st_tq_row full;
			rc = st_tq_get(db, r->tq_id, &a, &full);
			if (rc == GB_ENOTFOUND) {
				rc = GB_OK; /* deleted since the list */
				continue;
			}
			/* seq 0: every job it holds is read below. */
			if (rc == GB_OK)
				rc = put_row(x, &full, 0);
			if (rc != GB_OK)
				break;
			st->tqs_added++;
		}
		const struct tq_view *v = view_of(x, r->tq_id);
		if (v != NULL && v->priority != r->priority) {
			rc = tqi_set_priority(x, r->tq_id, r->priority);
			if (rc == GB_EINVAL)
				rc = GB_ERANGE;
			if (rc != GB_OK)
				break;
			st->priorities_changed++;
		}
		long long seq = tqi_seq(x, r->tq_id);
		if (seq >= 0 && r->next_seq > seq) {
			rc = st_tq_jobs_scan(db, r->tq_id, seq, scan_add, &c);
			if (rc == GB_OK)
				rc = tqi_set_seq(x, r->tq_id, r->next_seq);
		}
	}
	/* After the jobs, for the reason tqsync.h gives. */
	if (rc == GB_OK)
		rc = apply_removals(db, x, rows, nrows, &a, &c);
	arena_free(&a);
	return rc;
}
