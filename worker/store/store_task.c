/*
** store_task.c — the task brokerage's tables: the grid (nuclei, storages,
** replicas), the tasks with their input datasets, the decisions, and the
** pending-retry scan.
**
** Shape of the reads: st_tb_state runs one query per table and assembles
** the nested arrays the engine wants in the caller's arena. Rows are
** attached to their nucleus through a strcmp-sorted index built here rather
** than by trusting the server's ORDER BY to agree with strcmp, so the
** assembly does not depend on a collation. Replicas are read only for the
** task's own datasets, with one prepared IN list of ST_IN_CHUNK
** placeholders executed per chunk (unused entries bound to NULL, which
** matches nothing): a 1000-dataset task costs 32 round trips, not 1000.
** A task's datasets are written the same way, a multi-row INSERT of up to
** ST_ROWS_MAX rows a round trip.
**
** Values read back are validated (enum words, signs, ranges) before they
** reach the engine; the schema's CHECK constraints make a bad row unlikely,
** but an operator can still edit tables by hand.
*/
#include "store/store_internal.h"
#include "store/store_decisions.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "gb_error.h"

#define ST_IN_CHUNK 32
_Static_assert(ST_IN_CHUNK <= ST_ARGS_INLINE,
	       "an IN list of dataset names fits a list without the heap");

static const char SQL_NUCLEUS_UPSERT[] =
	"INSERT INTO nuclei (name, status, bare_nucleus, transfer_backlog, rw, "
	"updated_at) VALUES (?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE "
	"status = VALUE(status), bare_nucleus = VALUE(bare_nucleus), "
	"transfer_backlog = VALUE(transfer_backlog), rw = VALUE(rw), "
	"updated_at = VALUE(updated_at)";
static const char SQL_STORAGE_DELETE[] =
	"DELETE FROM storages WHERE nucleus = ?";
/* A storage name is global (an endpoint belongs to one site): listing it
** under another nucleus moves it there. */
static const char SQL_STORAGE_UPSERT[] =
	"INSERT INTO storages (name, nucleus, space_free, space_expired, "
	"space_total, tape, blacklisted) VALUES (?, ?, ?, ?, ?, ?, ?) "
	"ON DUPLICATE KEY UPDATE nucleus = VALUE(nucleus), "
	"space_free = VALUE(space_free), space_expired = VALUE(space_expired), "
	"space_total = VALUE(space_total), tape = VALUE(tape), "
	"blacklisted = VALUE(blacklisted)";
static const char SQL_REPLICA_DELETE[] =
	"DELETE FROM replicas WHERE nucleus = ?";
static const char SQL_REPLICA_INSERT[] =
	"INSERT INTO replicas (nucleus, dataset, size, files) "
	"VALUES (?, ?, ?, ?)";
static const char SQL_NUCLEI_ALL[] =
	"SELECT name, status, bare_nucleus, transfer_backlog, rw FROM nuclei "
	"ORDER BY name";
static const char SQL_STORAGES_ALL[] =
	"SELECT nucleus, name, space_free, space_expired, space_total, tape, "
	"blacklisted FROM storages ORDER BY nucleus, name";
static const char SQL_REPLICAS_IN[] =
	"SELECT nucleus, dataset, size, files FROM replicas WHERE dataset IN "
	"(" ST_LIST ") ORDER BY nucleus, dataset";
static const char SQL_TASK_UPSERT[] =
	"INSERT INTO tasks (task_id, gshare, task_priority, io_intensity, "
	"t1_weight, input_prestaging, broker_on_master, full_chain, "
	"parent_nucleus, norm_exp_out_size, status, nucleus, pending_until, "
	"attempts, request_id, created_at, updated_at) VALUES "
	"(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'brokering', NULL, NULL, 0, ?, ?, ?) "
	"ON DUPLICATE KEY UPDATE gshare = VALUE(gshare), "
	"task_priority = VALUE(task_priority), "
	"io_intensity = VALUE(io_intensity), t1_weight = VALUE(t1_weight), "
	"input_prestaging = VALUE(input_prestaging), "
	"broker_on_master = VALUE(broker_on_master), "
	"full_chain = VALUE(full_chain), "
	"parent_nucleus = VALUE(parent_nucleus), "
	"norm_exp_out_size = VALUE(norm_exp_out_size), status = 'brokering', "
	"nucleus = NULL, pending_until = NULL, request_id = VALUE(request_id), "
	"updated_at = VALUE(updated_at)";
static const char SQL_TASK_DS_DELETE[] =
	"DELETE FROM task_datasets WHERE task_id = ?";
static const char SQL_TASK_DS_INSERT[] =
	"INSERT INTO task_datasets (task_id, position, name, is_primary, size, "
	"files, on_tape) VALUES " ST_ROWS;
static const char SQL_TASK_GET[] =
	"SELECT gshare, task_priority, io_intensity, t1_weight, "
	"input_prestaging, broker_on_master, full_chain, parent_nucleus, "
	"norm_exp_out_size FROM tasks WHERE task_id = ?";
static const char SQL_TASK_DS_GET[] =
	"SELECT name, is_primary, size, files, on_tape FROM task_datasets "
	"WHERE task_id = ? ORDER BY position";
static const char SQL_TASK_UPDATE[] =
	"UPDATE tasks SET status = ?, nucleus = ?, pending_until = ?, "
	"attempts = attempts + 1, updated_at = ? WHERE task_id = ?";
static const char SQL_PENDING_DUE[] =
	"SELECT task_id FROM tasks WHERE status = 'pending' AND "
	"pending_until <= ? ORDER BY pending_until LIMIT ? "
	"FOR UPDATE SKIP LOCKED";

/* ---- grid load ----------------------------------------------------------- */

/* Two nuclei of one file with the same name, or one storage listed twice,
** would silently overwrite each other; name the duplicate instead. */
static int grid_check_unique(struct st_db *db, const struct tb_nucleus *nuc,
			     size_t n)
{
	size_t nst = 0;
	for (size_t i = 0; i < n; i++)
		nst += nuc[i].nstorages;
	size_t cap = n > nst ? n : nst;
	if (cap == 0)
		return GB_OK;
	const char **names = malloc(cap * sizeof(*names));
	if (names == NULL)
		return st_failf(db, GB_ENOMEM, "out of memory");
	int rc = GB_OK;
	for (size_t i = 0; i < n; i++)
		names[i] = nuc[i].name;
	qsort(names, n, sizeof(*names), st_cmp_strp);
	for (size_t i = 1; rc == GB_OK && i < n; i++)
		if (strcmp(names[i], names[i - 1]) == 0)
			rc = st_failf(db, GB_EINVAL, "nucleus %s listed twice",
				      names[i]);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < nuc[i].nstorages; j++)
			names[k++] = nuc[i].storages[j].name;
	qsort(names, k, sizeof(*names), st_cmp_strp);
	for (size_t i = 1; rc == GB_OK && i < k; i++)
		if (strcmp(names[i], names[i - 1]) == 0)
			rc = st_failf(db, GB_EINVAL, "storage %s listed twice",
				      names[i]);
	free(names);
	return rc;
}

static int grid_check(struct st_db *db, const struct tb_nucleus *nuc, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct tb_nucleus *x = &nuc[i];
		if (x->name == NULL || x->name[0] == '\0' || x->status == NULL)
			return st_failf(db, GB_EINVAL,
					"nuclei[%zu]: name and status required",
					i);
		if ((unsigned)x->bare > TB_BARE_ALLOW ||
		    x->transfer_backlog < 0 || !st_finite_nonneg(x->rw))
			return st_failf(db, GB_EINVAL,
					"nucleus %s: bad bareNucleus, backlog "
					"or RW",
					x->name);
		if ((x->nstorages && x->storages == NULL) ||
		    (x->nlocal && x->local == NULL))
			return st_failf(db, GB_EINVAL,
					"nucleus %s: missing arrays", x->name);
		for (size_t j = 0; j < x->nstorages; j++) {
			const struct tb_storage *st = &x->storages[j];
			if (st->name == NULL || st->name[0] == '\0' ||
			    !st_finite_nonneg(st->space_free) ||
			    !st_finite_nonneg(st->space_expired) ||
			    !st_finite_nonneg(st->space_total))
				return st_failf(db, GB_EINVAL,
						"nucleus %s: storage %zu: name "
						"and sizes >= 0 required",
						x->name, j);
		}
		for (size_t j = 0; j < x->nlocal; j++) {
			const struct tb_replica *r = &x->local[j];
			if (r->dataset == NULL || r->dataset[0] == '\0' ||
			    !st_finite_nonneg(r->size) || r->files < 0)
				return st_failf(db, GB_EINVAL,
						"nucleus %s: replica %zu: "
						"dataset, size and files >= 0 "
						"required",
						x->name, j);
		}
	}
	return grid_check_unique(db, nuc, n);
}

static int grid_put(struct st_db *db, const struct tb_nucleus *x, long long now)
{
	struct st_args a;
	MYSQL_STMT *s;
	st_args_init(&a);
	st_arg_str(&a, x->name);
	st_arg_str(&a, x->status);
	st_arg_str(&a, tb_bare_name(x->bare));
	st_arg_ll(&a, x->transfer_backlog);
	st_arg_dbl(&a, x->rw);
	st_arg_ll(&a, now);
	int rc = st_exec(db, ST_SID_NUCLEUS_UPSERT, SQL_NUCLEUS_UPSERT, &a, &s);
	st_args_init(&a);
	st_arg_str(&a, x->name);
	if (rc == GB_OK)
		rc = st_exec(db, ST_SID_STORAGE_DELETE, SQL_STORAGE_DELETE, &a,
			     &s);
	if (rc == GB_OK)
		rc = st_exec(db, ST_SID_REPLICA_DELETE, SQL_REPLICA_DELETE, &a,
			     &s);
	for (size_t j = 0; rc == GB_OK && j < x->nstorages; j++) {
		const struct tb_storage *st = &x->storages[j];
		st_args_init(&a);
		st_arg_str(&a, st->name);
		st_arg_str(&a, x->name);
		st_arg_dbl(&a, st->space_free);
		st_arg_dbl(&a, st->space_expired);
		st_arg_dbl(&a, st->space_total);
		st_arg_ll(&a, st->tape != 0);
		st_arg_ll(&a, st->blacklisted != 0);
		rc = st_exec(db, ST_SID_STORAGE_UPSERT, SQL_STORAGE_UPSERT, &a,
			     &s);
	}
	for (size_t j = 0; rc == GB_OK && j < x->nlocal; j++) {
		const struct tb_replica *r = &x->local[j];
		st_args_init(&a);
		st_arg_str(&a, x->name);
		st_arg_str(&a, r->dataset);
		st_arg_dbl(&a, r->size);
		st_arg_ll(&a, r->files);
		rc = st_exec(db, ST_SID_REPLICA_INSERT, SQL_REPLICA_INSERT, &a,
			     &s);
	}
	return rc;
}

int st_grid_load_nuclei(struct st_db *db, const struct tb_nucleus *nuclei,
			size_t n)
{
	if (db == NULL || (n && nuclei == NULL))
		return GB_EINVAL;
	int rc = grid_check(db, nuclei, n);
	if (rc != GB_OK)
		return rc;
	long long now = clk_now();
	rc = st_begin(db);
	for (size_t i = 0; rc == GB_OK && i < n; i++)
		rc = grid_put(db, &nuclei[i], now);
	return st_end(db, rc);
}

/* ---- grid state for one task --------------------------------------------- */

struct nuc_ref {
	const char *name;
	size_t pos; /* in nuc_index.nuc */
};

struct nuc_index {
	struct tb_nucleus *nuc;
	size_t n;
	struct nuc_ref *order; /* sorted by strcmp of the name */
};

static int cmp_ref(const void *a, const void *b)
{
	return strcmp(((const struct nuc_ref *)a)->name,
		      ((const struct nuc_ref *)b)->name);
}

/* Position in nuc[] of the nucleus called `name`, or -1. */
static long nuc_find(const struct nuc_index *ix, const char *name)
{
	struct nuc_ref key = {name, 0};
	const struct nuc_ref *hit = ix->n ? bsearch(&key, ix->order, ix->n,
						    sizeof(*ix->order), cmp_ref)
					  : NULL;
	return hit ? (long)hit->pos : -1;
}

static int load_nuclei(struct st_db *db, struct arena *a, struct nuc_index *ix)
{
	struct st_cols c;
	MYSQL_STMT *s;
	st_cols_init(&c, "sssld");
	int rc = st_query(db, ST_SID_NUCLEI_ALL, SQL_NUCLEI_ALL, NULL, &c, &s);
	if (rc != GB_OK)
		return rc;
	size_t rows = (size_t)mysql_stmt_num_rows(s);
	ix->n = 0;
	ix->nuc = rows ? arena_alloc(a, rows * sizeof(*ix->nuc)) : NULL;
	ix->order = rows ? arena_alloc(a, rows * sizeof(*ix->order)) : NULL;
	if (rows && (ix->nuc == NULL || ix->order == NULL)) {
		st_done(s);
		return st_failf(db, GB_ETOOBIG, "%zu nuclei do not fit", rows);
	}
	while (ix->n < rows && st_row(db, s, &rc)) {
		struct tb_nucleus *x = &ix->nuc[ix->n];
		char *bare = NULL;
		rc = st_col_cstr(db, s, &c, 0, a, &x->name);
		if (rc == GB_OK)
			rc = st_col_cstr(db, s, &c, 1, a, &x->status);
		if (rc == GB_OK)
			rc = st_col_str(db, s, &c, 2, a, &bare);
		if (rc != GB_OK)
			break;
		int b = tb_bare_parse(bare ? bare : "");
		long long backlog = st_col_ll(&c, 3);
		x->rw = st_col_dbl(&c, 4);
		if (x->name == NULL || x->status == NULL || b < 0 ||
		    backlog < 0 || backlog > LONG_MAX ||
		    !st_finite_nonneg(x->rw)) {
			rc = st_failf(
				db, GB_ERANGE,
				"nuclei row %s: bad status, bare_nucleus, "
				"transfer_backlog or rw",
				x->name ? x->name : "?");
			break;
		}
		x->bare = (enum tb_bare)b;
		x->transfer_backlog = (long)backlog;
		ix->order[ix->n].name = x->name;
		ix->order[ix->n].pos = ix->n;
		ix->n++;
	}
	st_done(s);
	if (rc != GB_OK)
		return rc;
	qsort(ix->order, ix->n, sizeof(*ix->order), cmp_ref);
	return GB_OK;
}

static int load_storages(struct st_db *db, struct arena *a,
			 struct nuc_index *ix)
{
	struct st_cols c;
	MYSQL_STMT *s;
	st_cols_init(&c, "ssdddll");
	int rc = st_query(db, ST_SID_STORAGES_ALL, SQL_STORAGES_ALL, NULL, &c,
			  &s);
	if (rc != GB_OK)
		return rc;
	size_t rows = (size_t)mysql_stmt_num_rows(s);
	if (rows == 0) {
		st_done(s);
		return GB_OK;
	}
	/* Read every row, then place them per nucleus (counting sort). */
	struct tb_storage *tmp = arena_alloc(a, rows * sizeof(*tmp));
	struct tb_storage *all = arena_alloc(a, rows * sizeof(*all));
	long *owner = arena_alloc(a, rows * sizeof(*owner));
	size_t *count = arena_alloc(a, (ix->n + 1) * sizeof(*count));
	if (!tmp || !all || !owner || !count) {
		st_done(s);
		return st_failf(db, GB_ETOOBIG, "%zu storages do not fit",
				rows);
	}
	size_t k = 0;
	while (k < rows && st_row(db, s, &rc)) {
		char *nucleus = NULL;
		struct tb_storage *x = &tmp[k];
		rc = st_col_str(db, s, &c, 0, a, &nucleus);
		if (rc == GB_OK)
			rc = st_col_cstr(db, s, &c, 1, a, &x->name);
		if (rc != GB_OK)
			break;
		x->space_free = st_col_dbl(&c, 2);
		x->space_expired = st_col_dbl(&c, 3);
		x->space_total = st_col_dbl(&c, 4);
		long long tape = st_col_ll(&c, 5), bl = st_col_ll(&c, 6);
		if (x->name == NULL || !st_finite_nonneg(x->space_free) ||
		    !st_finite_nonneg(x->space_expired) ||
		    !st_finite_nonneg(x->space_total) ||
		    (tape != 0 && tape != 1) || (bl != 0 && bl != 1)) {
			rc = st_failf(db, GB_ERANGE,
				      "storages row %s: bad size or flag",
				      x->name ? x->name : "?");
			break;
		}
		x->tape = (int)tape;
		x->blacklisted = (int)bl;
		owner[k] = nucleus ? nuc_find(ix, nucleus) : -1;
		if (owner[k] >= 0)
			count[owner[k]]++;
		k++;
	}
	st_done(s);
	if (rc != GB_OK)
		return rc;
	size_t off = 0;
	for (size_t i = 0; i < ix->n; i++) {
		ix->nuc[i].storages = count[i] ? &all[off] : NULL;
		ix->nuc[i].nstorages = 0;
		off += count[i];
	}
	for (size_t j = 0; j < k; j++) {
		if (owner[j] < 0)
			continue;
		struct tb_nucleus *x = &ix->nuc[owner[j]];
		((struct tb_storage *)x->storages)[x->nstorages++] = tmp[j];
	}
	return GB_OK;
}

/* One chunk's replica rows, read before they are placed per nucleus. */
struct rep_chunk {
	struct tb_replica *rows;
	long *owner;
	size_t n;
};

/* The replica rows of chunk `ch` of the distinct dataset `names` into
** `out`, counted per nucleus in `count`. */
static int load_replica_chunk(struct st_db *db, struct arena *a,
			      const struct nuc_index *ix, struct st_chunks *ch,
			      const char *const *names, struct rep_chunk *out,
			      size_t *count)
{
	struct st_cols c;
	MYSQL_STMT *s;
	for (size_t i = 0; i < ch->k; i++)
		st_arg_str(&ch->a, names[ch->off + i]);
	st_arg_nulls(&ch->a, ST_IN_CHUNK - ch->k);
	st_cols_init(&c, "ssdl");
	int rc = st_run_n(db, ST_SID_REPLICAS_IN, SQL_REPLICAS_IN, ST_IN_CHUNK,
			  &ch->a, &c, &s);
	if (rc != GB_OK)
		return rc;
	size_t rows = (size_t)mysql_stmt_num_rows(s);
	out->n = 0;
	out->rows = rows ? arena_alloc(a, rows * sizeof(*out->rows)) : NULL;
	out->owner = rows ? arena_alloc(a, rows * sizeof(*out->owner)) : NULL;
	if (rows && (!out->rows || !out->owner)) {
		st_done(s);
		return st_failf(db, GB_ETOOBIG, "%zu replicas do not fit",
				rows);
	}
	while (out->n < rows && st_row(db, s, &rc)) {
		char *nucleus = NULL;
		struct tb_replica *r = &out->rows[out->n];
		rc = st_col_str(db, s, &c, 0, a, &nucleus);
		if (rc == GB_OK)
			rc = st_col_cstr(db, s, &c, 1, a, &r->dataset);
		if (rc != GB_OK)
			break;
		r->size = st_col_dbl(&c, 2);
		long long files = st_col_ll(&c, 3);
		if (r->dataset == NULL || !st_finite_nonneg(r->size) ||
		    files < 0 || files > LONG_MAX) {
			rc = st_failf(db, GB_ERANGE,
				      "replicas row %s: bad size or files",
				      r->dataset ? r->dataset : "?");
			break;
		}
		r->files = (long)files;
		long k = nucleus ? nuc_find(ix, nucleus) : -1;
		out->owner[out->n] = k;
		if (k >= 0)
			count[k]++;
		out->n++;
	}
	st_done(s);
	return rc;
}

static int load_replicas(struct st_db *db, const struct tb_task *task,
			 struct arena *a, struct nuc_index *ix)
{
	if (task->ndatasets == 0 || ix->n == 0)
		return GB_OK;
	/* The distinct dataset names: a name listed twice must not count
	** its replicas twice. */
	const char **names = arena_alloc(a, task->ndatasets * sizeof(*names));
	size_t *count = arena_alloc(a, ix->n * sizeof(*count));
	if (names == NULL || count == NULL)
		return st_failf(db, GB_ETOOBIG, "%zu datasets do not fit",
				task->ndatasets);
	size_t nn = 0;
	for (size_t i = 0; i < task->ndatasets; i++)
		if (task->datasets[i].name && task->datasets[i].name[0])
			names[nn++] = task->datasets[i].name;
	size_t u = st_distinct(names, nn);
	size_t nchunks = (u + ST_IN_CHUNK - 1) / ST_IN_CHUNK;
	if (nchunks == 0)
		return GB_OK;
	struct rep_chunk *ch = arena_alloc(a, nchunks * sizeof(*ch));
	if (ch == NULL)
		return st_failf(db, GB_ETOOBIG, "replica chunks do not fit");
	struct st_chunks in;
	int rc = GB_OK;
	st_chunks_init(&in, u, ST_IN_CHUNK);
	for (size_t i = 0; st_chunks_next(&in, &rc); i++)
		rc = load_replica_chunk(db, a, ix, &in, names, &ch[i], count);
	st_chunks_free(&in);
	if (rc != GB_OK)
		return rc;
	for (size_t k = 0; k < ix->n; k++) {
		struct tb_nucleus *x = &ix->nuc[k];
		x->nlocal = 0;
		x->local = NULL;
		if (count[k] == 0)
			continue;
		x->local = arena_alloc(a, count[k] * sizeof(*x->local));
		if (x->local == NULL)
			return st_failf(db, GB_ETOOBIG,
					"replicas of %s do not fit", x->name);
	}
	for (size_t i = 0; i < nchunks; i++)
		for (size_t j = 0; j < ch[i].n; j++) {
			if (ch[i].owner[j] < 0)
				continue;
			struct tb_nucleus *x = &ix->nuc[ch[i].owner[j]];
			((struct tb_replica *)x->local)[x->nlocal++] =
				ch[i].rows[j];
		}
	return GB_OK;
}

int st_tb_state(struct st_db *db, const struct tb_task *task, struct arena *a,
		struct tb_nucleus **out, size_t *n)
{
	if (db == NULL || task == NULL || a == NULL || out == NULL ||
	    n == NULL || (task->ndatasets && task->datasets == NULL))
		return GB_EINVAL;
	*out = NULL;
	*n = 0;
	struct nuc_index ix;
	memset(&ix, 0, sizeof(ix));
	int rc = load_nuclei(db, a, &ix);
	if (rc == GB_OK && ix.n)
		rc = load_storages(db, a, &ix);
	if (rc == GB_OK)
		rc = load_replicas(db, task, a, &ix);
	if (rc != GB_OK)
		return rc;
	*out = ix.nuc;
	*n = ix.n;
	return GB_OK;
}

/* ---- tasks --------------------------------------------------------------- */

/* The task's datasets, in their order. */
static int task_ds_insert(struct st_db *db, const struct tb_task *task)
{
	struct st_rows r;
	st_rows_init(&r, ST_SID_TASK_DS_INSERT, SQL_TASK_DS_INSERT, 7);
	int rc = GB_OK;
	for (size_t i = 0; rc == GB_OK && i < task->ndatasets; i++) {
		const struct tb_dataset *d = &task->datasets[i];
		st_arg_ll(&r.a, task->task_id);
		st_arg_ll(&r.a, (long long)i);
		st_arg_str(&r.a, d->name);
		st_arg_ll(&r.a, d->primary != 0);
		st_arg_dbl(&r.a, d->size);
		st_arg_ll(&r.a, d->files);
		st_arg_ll(&r.a, d->on_tape != 0);
		rc = st_rows_end(db, &r);
	}
	if (rc == GB_OK)
		rc = st_rows_flush(db, &r);
	st_rows_free(&r);
	return rc;
}

int st_task_save(struct st_db *db, const struct tb_task *task,
		 const char *request_id, long long now)
{
	if (db == NULL || task == NULL || request_id == NULL ||
	    task->gshare == NULL || (task->ndatasets && task->datasets == NULL))
		return GB_EINVAL;
	if ((unsigned)task->full_chain > TB_FC_CAPABLE ||
	    !isfinite(task->io_intensity) || !isfinite(task->t1_weight) ||
	    !isfinite(task->norm_exp_out_size))
		return st_failf(db, GB_EINVAL,
				"task %lld: bad fullChain or non-finite number",
				task->task_id);
	for (size_t i = 0; i < task->ndatasets; i++) {
		const struct tb_dataset *d = &task->datasets[i];
		if (d->name == NULL || !st_finite_nonneg(d->size) ||
		    d->files < 0)
			return st_failf(
				db, GB_EINVAL,
				"task %lld: dataset %zu: name, size and "
				"files >= 0 required",
				task->task_id, i);
	}
	const char *fc = tb_fullchain_name(task->full_chain);
	const char *parent = task->parent_nucleus && task->parent_nucleus[0]
				     ? task->parent_nucleus
				     : NULL;
	struct st_args a;
	MYSQL_STMT *s;
	st_args_init(&a);
	st_arg_ll(&a, task->task_id);
	st_arg_str(&a, task->gshare);
	st_arg_ll(&a, task->priority);
	st_arg_dbl(&a, task->io_intensity);
	st_arg_dbl(&a, task->t1_weight);
	st_arg_ll(&a, task->input_prestaging != 0);
	st_arg_ll(&a, task->broker_on_master != 0);
	st_arg_str(&a, fc ? fc : "");
	st_arg_str(&a, parent);
	st_arg_dbl(&a, task->norm_exp_out_size);
	st_arg_str(&a, request_id);
	st_arg_ll(&a, now);
	st_arg_ll(&a, now);
	int rc = st_exec(db, ST_SID_TASK_UPSERT, SQL_TASK_UPSERT, &a, &s);
	st_args_init(&a);
	st_arg_ll(&a, task->task_id);
	if (rc == GB_OK)
		rc = st_exec(db, ST_SID_TASK_DS_DELETE, SQL_TASK_DS_DELETE, &a,
			     &s);
	if (rc == GB_OK)
		rc = task_ds_insert(db, task);
	return rc;
}

static int flag01(long long v, int *out)
{
	if (v != 0 && v != 1)
		return -1;
	*out = (int)v;
	return 0;
}

static int task_datasets_load(struct st_db *db, long long task_id,
			      struct arena *a, struct tb_task *out)
{
	struct st_cols c;
	MYSQL_STMT *s;
	int rc = st_query_key(db, ST_SID_TASK_DS_GET, SQL_TASK_DS_GET,
			      ST_ID(task_id), "sldll", &c, &s);
	if (rc != GB_OK)
		return rc;
	size_t rows = 0, n = 0;
	struct tb_dataset *ds =
		st_result_array(db, s, a, sizeof(*ds), "datasets", &rows, &rc);
	while (n < rows && st_row(db, s, &rc)) {
		struct tb_dataset *d = &ds[n];
		rc = st_col_cstr(db, s, &c, 0, a, &d->name);
		if (rc != GB_OK)
			break;
		d->size = st_col_dbl(&c, 2);
		long long files = st_col_ll(&c, 3);
		if (d->name == NULL || flag01(st_col_ll(&c, 1), &d->primary) ||
		    flag01(st_col_ll(&c, 4), &d->on_tape) ||
		    !st_finite_nonneg(d->size) || files < 0 ||
		    files > LONG_MAX) {
			rc = st_failf(db, GB_ERANGE,
				      "task %lld: dataset row %zu out of range",
				      task_id, n);
			break;
		}
		d->files = (long)files;
		n++;
	}
	st_done(s);
	if (rc != GB_OK)
		return rc;
	out->datasets = ds;
	out->ndatasets = n;
	return GB_OK;
}

int st_task_load(struct st_db *db, long long task_id, struct arena *a,
		 struct tb_task *out)
{
	if (db == NULL || a == NULL || out == NULL)
		return GB_EINVAL;
	memset(out, 0, sizeof(*out));
	struct st_cols c;
	MYSQL_STMT *s;
	char *fc = NULL, *parent = NULL;
	int rc = st_query_key(db, ST_SID_TASK_GET, SQL_TASK_GET, ST_ID(task_id),
			      "slddllssd", &c, &s);
	if (!st_row(db, s, &rc) && rc == GB_OK)
		rc = st_failf(db, GB_ENOTFOUND, "task %lld not found", task_id);
	if (rc == GB_OK)
		rc = st_col_cstr(db, s, &c, 0, a, &out->gshare);
	if (rc == GB_OK)
		rc = st_col_str(db, s, &c, 6, a, &fc);
	if (rc == GB_OK)
		rc = st_col_str(db, s, &c, 7, a, &parent);
	if (rc == GB_OK) {
		long long prio = st_col_ll(&c, 1);
		int f = tb_fullchain_parse(fc ? fc : "");
		out->task_id = task_id;
		out->io_intensity = st_col_dbl(&c, 2);
		out->t1_weight = st_col_dbl(&c, 3);
		out->norm_exp_out_size = st_col_dbl(&c, 8);
		out->parent_nucleus = parent;
		if (out->gshare == NULL || f < 0 || prio < LONG_MIN ||
		    prio > LONG_MAX ||
		    flag01(st_col_ll(&c, 4), &out->input_prestaging) ||
		    flag01(st_col_ll(&c, 5), &out->broker_on_master) ||
		    !st_finite_nonneg(out->io_intensity) ||
		    !isfinite(out->t1_weight) ||
		    !st_finite_nonneg(out->norm_exp_out_size))
			rc = st_failf(db, GB_ERANGE,
				      "task %lld: row out of range", task_id);
		out->priority = (long)prio;
		out->full_chain = f < 0 ? TB_FC_NONE : (enum tb_fullchain)f;
	}
	st_done(s);
	if (rc == GB_OK)
		rc = task_datasets_load(db, task_id, a, out);
	return rc;
}

int st_task_decide(struct st_db *db, const struct tb_task *task,
		   const struct dec_decision *d, const char *nucleus,
		   long long now, long long retry_at, const char *request_id,
		   const char *detail_json, long long *decision_id)
{
	if (db == NULL || task == NULL || d == NULL || request_id == NULL ||
	    detail_json == NULL || decision_id == NULL)
		return GB_EINVAL;
	*decision_id = 0;
	int assigned = d->outcome == DEC_ASSIGNED;
	if (assigned && (nucleus == NULL || nucleus[0] == '\0'))
		return st_failf(db, GB_EINVAL,
				"task %lld: assigned without a nucleus",
				task->task_id);
	if (!assigned && d->outcome != DEC_PENDING)
		return st_failf(db, GB_EINVAL, "task %lld: unknown outcome %d",
				task->task_id, (int)d->outcome);
	struct st_args a;
	MYSQL_STMT *s;
	st_args_init(&a);
	st_arg_str(&a, assigned ? "assigned" : "pending");
	st_arg_str(&a, assigned ? nucleus : NULL);
	if (assigned)
		st_arg_null(&a);
	else
		st_arg_ll(&a, retry_at);
	st_arg_ll(&a, now);
	st_arg_ll(&a, task->task_id);
	int rc = st_exec(db, ST_SID_TASK_UPDATE, SQL_TASK_UPDATE, &a, &s);
	if (rc != GB_OK)
		return rc;
	if (mysql_stmt_affected_rows(s) == 0)
		return st_failf(db, GB_ENOTFOUND,
				"task %lld is not saved; nothing to decide",
				task->task_id);
	char subject[32];
	snprintf(subject, sizeof(subject), "%lld", task->task_id);
	struct st_dec_row row = {
		.kind = "task",
		.subject = subject,
		.request_id = request_id,
		.outcome = dec_outcome_name(d->outcome),
		.chosen = assigned ? nucleus : NULL,
		.decided_at = now,
		.detail = detail_json,
	};
	rc = st_dec_write(db, &row);
	*decision_id = row.id;
	return rc;
}

int st_pending_due(struct st_db *db, long long now, size_t max, long long *ids,
		   size_t *n)
{
	return st_due_ids(db, ST_SID_PENDING_DUE, SQL_PENDING_DUE,
			  "st_pending_due", now, max, ids, n);
}
