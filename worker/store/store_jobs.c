/*
** store_jobs.c — the job brokerage's grid tables (0003_jobbrokerage.sql):
** saving the job grid and loading the part of it a request needs. The
** request-side writes and reads (task context, decisions with their jobs
** and counts, pending requests) are in store_jobs_decide.c; what both
** files share is in store_jobs_internal.h.
**
** Writes are multi-row INSERTs (struct st_rows): a grid reload is one
** transaction that empties the job grid's tables and inserts every row
** again, sent in statements bounded by rows and bytes (one stays well
** under max_allowed_packet although a queue row carries its software
** dictionary). The grid is validated by the tables' CHECK constraints: a
** violation fails the whole load with the constraint's name.
**
** Queue columns are described once (qcols[]): the INSERT writes them and
** the SELECT reads them in that order, and the read validates each value by
** its kind. The row is wider than one struct st_cols, so it is read into
** four whose binds are laid side by side: the store's getters keep
** working, and st_col_str — which re-fetches a long value by its column
** number within its own st_cols — is right because every long text column
** is in the first part, where that number is the real one. The analysis
** and timeout columns of 0005 (QX_SELECT) are written after qcols[] and
** read after the counts.
**
** Reads for a request: one query for the queues LEFT JOIN their counts for
** its gshare, one for the links to its nucleus, one for the ALL dictionary,
** and the replicas of its distinct input files in IN lists of SJ_IN_CHUNK
** (unused entries bound to NULL, which matches nothing).
*/
#include "store/store_internal.h"
#include "store/store_jobs.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gb_error.h"
#include "model/gridmodel.h"

#include "store/store_jobs_internal.h"

/* ---- statements ---------------------------------------------------------- */

static const char *const SQL_WIPE[] = {
	"DELETE FROM queues", "DELETE FROM queue_counts",  "DELETE FROM links",
	"DELETE FROM sw_all", "DELETE FROM file_replicas",
};
/*
** The analysis and timeout columns of 0005, outside qcols[]: written after
** them, read after the counts (QX_KINDS, in a fourth st_cols; their text
** is short by the schema, see queue_extras).
*/
#define QX_SELECT                                                              \
	"q.is_vp, q.queue_type, q.site_class, q.workflow, "                    \
	"q.disable_reassign, q.transtimehi, q.transtimelo"
#define QX_KINDS "lsssldd"
#define NQX (sizeof(QX_KINDS) - 1)
/* The columns of qcols[], in its order, updated_at, then QX_SELECT's. */
static const char SQL_INS_QUEUE[] =
	"INSERT INTO queues (name, status, site, nucleus, wnconnectivity, "
	"fairsharepolicy, storage, releases, event_service, sw_json, "
	"release_list, core_count, corepower, min_rss, max_rss, maxwdir, "
	"mintime, maxtime, direct_access, max_diskio, diskio_avg, "
	"dynamic_nevents, transferring_limit, num_slots, last_pilot, "
	"last_start, storage_free, storage_blacklisted, updated_at, is_vp, "
	"queue_type, site_class, workflow, disable_reassign, transtimehi, "
	"transtimelo) VALUES " ST_ROWS;
static const char SQL_INS_COUNT[] =
	"INSERT INTO queue_counts (queue, gshare, running, defined, assigned, "
	"activated, `starting`, transferring, nbatchjob) VALUES " ST_ROWS;
static const char SQL_INS_LINK[] =
	"INSERT INTO links (site, nucleus, blocked, queued_files, mbps_1h, "
	"mbps_1d, mbps_1w, closeness) VALUES " ST_ROWS;
static const char SQL_INS_SW_ALL[] =
	"INSERT INTO sw_all (id, sw_json) VALUES (1, ?)";
static const char SQL_INS_REPLICA[] =
	"INSERT INTO file_replicas (lfn, storage) VALUES " ST_ROWS;
/* qcols[] in its order, then the counts (c.running is NULL without a row),
** then QX_SELECT. */
static const char SQL_QUEUES[] =
	"SELECT q.name, q.status, q.site, q.nucleus, q.wnconnectivity, "
	"q.fairsharepolicy, q.storage, q.releases, q.event_service, q.sw_json, "
	"q.release_list, q.core_count, q.corepower, q.min_rss, q.max_rss, "
	"q.maxwdir, q.mintime, q.maxtime, q.direct_access, q.max_diskio, "
	"q.diskio_avg, q.dynamic_nevents, q.transferring_limit, q.num_slots, "
	"q.last_pilot, q.last_start, q.storage_free, q.storage_blacklisted, "
	"c.running, c.defined, c.assigned, c.activated, c.`starting`, "
	"c.transferring, c.nbatchjob, " QX_SELECT " FROM queues q LEFT JOIN "
	"queue_counts c ON c.queue = q.name AND c.gshare = ? ORDER BY q.name";
static const char SQL_LINKS[] =
	"SELECT site, nucleus, blocked, queued_files, mbps_1h, mbps_1d, "
	"mbps_1w, closeness FROM links WHERE nucleus = ? ORDER BY site";
static const char SQL_SW_ALL[] = "SELECT sw_json FROM sw_all WHERE id = 1";
static const char SQL_REPLICAS_IN[] =
	"SELECT lfn, storage FROM file_replicas WHERE lfn IN (" ST_LIST ") "
	"ORDER BY lfn, storage";

/* ---- small helpers ------------------------------------------------------- */

static int nan_or_nonneg(double v)
{
	return isnan(v) || st_finite_nonneg(v);
}

static const char *const releases_words[] = {"ANY", "AUTO", "LIST"};
static const char *const es_words[] = {"none", "allowed", "only"};

/* Index of `s` among the three `words`, or -1. */
static int word_find(const char *const *words, const char *s)
{
	for (int i = 0; s && i < 3; i++)
		if (strcmp(words[i], s) == 0)
			return i;
	return -1;
}

/* A nullable DOUBLE: NAN for SQL NULL, the engine's "no figure". */
static double col_dbl_nan(const struct st_cols *c, unsigned i)
{
	return st_col_isnull(c, i) ? NAN : st_col_dbl(c, i);
}

/* A BOOL column as 0/1; -1 for anything else. */
static int col_flag(const struct st_cols *c, unsigned i)
{
	long long v = st_col_ll(c, i);
	return v == 0 || v == 1 ? (int)v : -1;
}

/* ---- queue columns ------------------------------------------------------- */

/*
** One column of the queues table and where it lives in struct gm_queue.
** Kinds: 'S' text (NULL written as ''), 'j' nullable text (sw_json), 'r'
** releases, 'e' eventService, 'R' the release list as a JSON array, 'C'
** long >= 0, 'M' long >= -1, 'F' flag, 'T' unix s (0 = never = NULL), 'P'
** double > 0, 'D' double >= 0, 'N' double >= 0 or NAN (= NULL).
*/
struct qcol {
	const char *name;
	char kind;
	size_t off;
};

#define QO(f) offsetof(struct gm_queue, f)
static const struct qcol qcols[] = {
	/* Text first: all of it in the first st_cols (see the header). */
	{"name", 'S', QO(q.name)},
	{"status", 'S', QO(q.status)},
	{"site", 'S', QO(q.site)},
	{"nucleus", 'S', QO(q.nucleus)},
	{"wnconnectivity", 'S', QO(q.wnconnectivity)},
	{"fairsharepolicy", 'S', QO(q.fairsharepolicy)},
	{"storage", 'S', QO(q.storage)},
	{"releases", 'r', QO(q.releases)},
	{"event_service", 'e', QO(q.es)},
	{"sw_json", 'j', QO(sw_json)},
	{"release_list", 'R', QO(q.release_list)},
	{"core_count", 'C', QO(q.core_count)},
	{"corepower", 'P', QO(q.corepower)},
	{"min_rss", 'D', QO(q.min_rss_per_core)},
	{"max_rss", 'D', QO(q.max_rss_per_core)},
	{"maxwdir", 'D', QO(q.maxwdir)},
	{"mintime", 'D', QO(q.mintime)},
	{"maxtime", 'D', QO(q.maxtime)},
	{"direct_access", 'F', QO(q.direct_access)},
	{"max_diskio", 'N', QO(q.max_diskio)},
	{"diskio_avg", 'D', QO(q.diskio_avg)},
	{"dynamic_nevents", 'F', QO(q.dynamic_nevents)},
	{"transferring_limit", 'D', QO(q.transferring_limit)},
	{"num_slots", 'M', QO(q.num_slots)},
	{"last_pilot", 'T', QO(q.last_pilot)},
	{"last_start", 'T', QO(q.last_start)},
	{"storage_free", 'D', QO(q.storage_free)},
	{"storage_blacklisted", 'F', QO(q.storage_blacklisted)},
};
#define NQCOLS (sizeof(qcols) / sizeof(qcols[0]))
#define QC_NTEXT 11 /* text columns at the head of qcols[] */
#define QC_NPARTS 4 /* st_cols the queue row is read into */
_Static_assert(QC_NTEXT <= ST_MAX_COLS &&
		       NQCOLS + SJ_NCOUNTS + NQX <= QC_NPARTS * ST_MAX_COLS,
	       "the queue row must fit QC_NPARTS st_cols, text in the first");

/* The SQL type of a kind: 's', 'l' or 'd'. */
static char qkind_sql(char k)
{
	return strchr("SjreR", k) ? 's' : strchr("PDN", k) ? 'd' : 'l';
}

/* LIST queues: the release list as compact JSON in `mem`; else NULL. */
static int releases_json(struct st_db *db, const struct jb_queue *q,
			 struct arena *mem, const char **out)
{
	*out = NULL;
	if (q->releases != JB_REL_LIST)
		return GB_OK;
	if (q->nrelease_list && q->release_list == NULL)
		return st_failf(db, GB_EINVAL, "queue %s: no release list",
				q->name ? q->name : "?");
	json_t *arr = json_array();
	int bad = arr == NULL;
	for (size_t j = 0; !bad && j < q->nrelease_list; j++)
		bad = q->release_list[j] == NULL ||
		      json_array_append_new(arr,
					    json_string(q->release_list[j]));
	char *txt = bad ? NULL : json_dumps(arr, JSON_COMPACT);
	json_decref(arr);
	*out = txt ? arena_strdup(mem, txt) : NULL;
	free(txt);
	if (*out == NULL)
		return st_failf(db, GB_EINVAL,
				"queue %s: a release is NULL, not UTF-8, or "
				"out of memory",
				q->name ? q->name : "?");
	return GB_OK;
}

/*
** One queues row (qcols[], updated_at, then the QX_SELECT columns) into
** `r`; text that must live until the row is sent goes to `mem`. No CHECK
** guards the transfer times, so they are checked here.
*/
static int queue_row(struct st_db *db, struct st_rows *r, struct arena *mem,
		     const struct gm_queue *x, long long now)
{
	const struct jb_queue *q = &x->q;
	const char *type = gm_queue_type_name(x->type);
	const char *sclass = gm_site_class_name(x->site_class);
	if ((unsigned)q->releases > JB_REL_LIST || (unsigned)q->es > JB_ES_ONLY)
		return st_failf(db, GB_EINVAL,
				"queue %s: bad releases or eventService",
				q->name ? q->name : "?");
	if (type == NULL || sclass == NULL ||
	    !st_finite_nonneg(x->transtimehi) ||
	    !st_finite_nonneg(x->transtimelo))
		return st_failf(db, GB_EINVAL,
				"queue %s: bad type, site class or transfer "
				"time",
				q->name ? q->name : "?");
	const char *rel = NULL;
	int rc = releases_json(db, q, mem, &rel);
	if (rc != GB_OK)
		return rc;
	struct st_args *a = &r->a;
	const char *base = (const char *)x;
	for (size_t i = 0; i < NQCOLS; i++) {
		const void *f = base + qcols[i].off;
		switch (qcols[i].kind) {
		case 'S':
			st_arg_str(a, *(const char *const *)f
					      ? *(const char *const *)f
					      : "");
			break;
		case 'j':
			st_arg_str(a, x->sw_json);
			break;
		case 'r':
			st_arg_str(a, releases_words[q->releases]);
			break;
		case 'e':
			st_arg_str(a, es_words[q->es]);
			break;
		case 'R':
			st_arg_str(a, rel);
			break;
		case 'C':
		case 'M':
			st_arg_ll(a, *(const long *)f);
			break;
		case 'F':
			st_arg_ll(a, *(const int *)f != 0);
			break;
		case 'T':
			/* Negative: written, for the CHECK to refuse. */
			if (*(const long long *)f == 0)
				st_arg_null(a);
			else
				st_arg_ll(a, *(const long long *)f);
			break;
		case 'N':
			st_arg_dbl_or_null(a, *(const double *)f);
			break;
		default:
			st_arg_dbl(a, *(const double *)f);
			break;
		}
	}
	st_arg_ll(a, now);
	st_arg_ll(a, x->is_vp != 0);
	st_arg_str(a, type);
	st_arg_str(a, sclass);
	st_arg_str(a, x->workflow ? x->workflow : "");
	st_arg_ll(a, x->disable_reassign != 0);
	st_arg_dbl(a, x->transtimehi);
	st_arg_dbl(a, x->transtimelo);
	return st_rows_end(db, r);
}

/* Parse a stored release list (a JSON array of strings) into `a`. */
static int releases_parse(struct st_db *db, const char *txt, struct arena *a,
			  struct jb_queue *q)
{
	json_error_t jerr;
	json_t *arr = json_loads(txt, JSON_REJECT_DUPLICATES, &jerr);
	size_t n = json_is_array(arr) ? json_array_size(arr) : 0;
	const char **list = n ? arena_alloc(a, n * sizeof(*list)) : NULL;
	int rc = json_is_array(arr) ? GB_OK : GB_ERANGE;
	for (size_t i = 0; rc == GB_OK && i < n; i++) {
		json_t *v = json_array_get(arr, i);
		if (list == NULL)
			rc = GB_ETOOBIG;
		else if (!json_is_string(v))
			rc = GB_ERANGE;
		else if ((list[i] = arena_strdup(a, json_string_value(v))) ==
			 NULL)
			rc = GB_ETOOBIG;
	}
	json_decref(arr);
	if (rc != GB_OK)
		return st_failf(db, rc,
				"queues row %s: release_list is not a JSON "
				"array of strings, or too big",
				q->name);
	q->release_list = list;
	q->nrelease_list = n;
	return GB_OK;
}

/* Column `j` of qcols[] from the current row into `x`, validated. */
static int queue_col(struct st_db *db, MYSQL_STMT *s, struct st_cols *parts,
		     size_t j, struct arena *a, struct gm_queue *x,
		     const char **rel)
{
	const struct qcol *qc = &qcols[j];
	struct st_cols *c = &parts[j / ST_MAX_COLS];
	unsigned i = (unsigned)(j % ST_MAX_COLS);
	void *f = (char *)x + qc->off;
	const char *txt = NULL;
	if (qkind_sql(qc->kind) == 's') {
		int rc = st_col_cstr(db, s, c, i, a, &txt);
		if (rc != GB_OK)
			return rc;
	}
	long long v = st_col_ll(c, i);
	double d = qc->kind == 'N' ? col_dbl_nan(c, i) : st_col_dbl(c, i);
	int ok = 1, w;
	switch (qc->kind) {
	case 'S':
		*(const char **)f = txt;
		ok = txt != NULL;
		break;
	case 'j':
		x->sw_json = txt;
		break;
	case 'R':
		*rel = txt;
		break;
	case 'r':
		ok = (w = word_find(releases_words, txt)) >= 0;
		x->q.releases = ok ? (enum jb_releases)w : JB_REL_ANY;
		break;
	case 'e':
		ok = (w = word_find(es_words, txt)) >= 0;
		x->q.es = ok ? (enum jb_es)w : JB_ES_NONE;
		break;
	case 'C':
	case 'M':
		ok = v >= (qc->kind == 'C' ? 0 : -1) && v <= INT_MAX;
		*(long *)f = (long)v;
		break;
	case 'F':
		ok = v == 0 || v == 1;
		*(int *)f = (int)v;
		break;
	case 'T':
		ok = v >= 0;
		*(long long *)f = v;
		break;
	case 'P':
		ok = isfinite(d) && d > 0;
		*(double *)f = d;
		break;
	case 'N':
		ok = nan_or_nonneg(d);
		*(double *)f = d;
		break;
	default:
		ok = st_finite_nonneg(d);
		*(double *)f = d;
		break;
	}
	if (!ok)
		return st_failf(db, GB_ERANGE, "queues row %s: %s out of range",
				x->q.name ? x->q.name : "?", qc->name);
	return GB_OK;
}

/* ---- grid save ----------------------------------------------------------- */

#define SJ_TEXT_ARENA (1u << 30) /* bound of the release lists' JSON */

static int save_queues(struct st_db *db, const struct gm_grid *g, long long now)
{
	struct st_rows r;
	struct arena mem;
	arena_init(&mem, SJ_TEXT_ARENA);
	st_rows_init(&r, SJ_SID(SJ_INS_QUEUE), SQL_INS_QUEUE,
		     NQCOLS + 1 + NQX);
	int rc = GB_OK;
	for (size_t i = 0; rc == GB_OK && i < g->nqueues; i++) {
		rc = queue_row(db, &r, &mem, &g->queues[i], now);
		if (g->queues[i].ncounts && g->queues[i].counts == NULL)
			rc = st_failf(db, GB_EINVAL, "queues[%zu]: no counts",
				      i);
	}
	if (rc == GB_OK)
		rc = st_rows_flush(db, &r);
	st_rows_free(&r);
	arena_free(&mem);
	if (rc != GB_OK)
		return rc;
	st_rows_init(&r, SJ_SID(SJ_INS_COUNT), SQL_INS_COUNT, 2 + SJ_NCOUNTS);
	for (size_t i = 0; rc == GB_OK && i < g->nqueues; i++) {
		const struct gm_queue *x = &g->queues[i];
		for (size_t j = 0; rc == GB_OK && j < x->ncounts; j++) {
			const struct jb_counts *k = &x->counts[j].k;
			st_arg_str(&r.a, x->q.name);
			st_arg_str(&r.a, x->counts[j].gshare);
			st_arg_dbl(&r.a, k->running);
			st_arg_dbl(&r.a, k->defined);
			st_arg_dbl(&r.a, k->assigned);
			st_arg_dbl(&r.a, k->activated);
			st_arg_dbl(&r.a, k->starting);
			st_arg_dbl(&r.a, k->transferring);
			st_arg_dbl(&r.a, k->nbatchjob);
			rc = st_rows_end(db, &r);
		}
	}
	if (rc == GB_OK)
		rc = st_rows_flush(db, &r);
	st_rows_free(&r);
	return rc;
}

static int save_links_files(struct st_db *db, const struct gm_grid *g)
{
	struct st_rows r;
	st_rows_init(&r, SJ_SID(SJ_INS_LINK), SQL_INS_LINK, 8);
	int rc = GB_OK;
	for (size_t i = 0; rc == GB_OK && i < g->nlinks; i++) {
		const struct gm_link *l = &g->links[i];
		st_arg_str(&r.a, l->site);
		st_arg_str(&r.a, l->nucleus);
		st_arg_ll(&r.a, l->blocked != 0);
		st_arg_dbl(&r.a, l->l.queued_files);
		st_arg_dbl_or_null(&r.a, l->l.mbps_1h);
		st_arg_dbl_or_null(&r.a, l->l.mbps_1d);
		st_arg_dbl_or_null(&r.a, l->l.mbps_1w);
		st_arg_dbl_or_null(&r.a, l->l.closeness);
		rc = st_rows_end(db, &r);
	}
	if (rc == GB_OK)
		rc = st_rows_flush(db, &r);
	st_rows_free(&r);
	for (size_t i = 0; rc == GB_OK && i < g->nfiles; i++)
		if (g->files[i].nstorages && g->files[i].storages == NULL)
			rc = st_failf(db, GB_EINVAL, "file %s: no storages",
				      g->files[i].lfn ? g->files[i].lfn : "?");
	st_rows_init(&r, SJ_SID(SJ_INS_REPLICA), SQL_INS_REPLICA, 2);
	for (size_t i = 0; rc == GB_OK && i < g->nfiles; i++)
		for (size_t j = 0; rc == GB_OK && j < g->files[i].nstorages;
		     j++) {
			st_arg_str(&r.a, g->files[i].lfn);
			st_arg_str(&r.a, g->files[i].storages[j]);
			rc = st_rows_end(db, &r);
		}
	if (rc == GB_OK)
		rc = st_rows_flush(db, &r);
	st_rows_free(&r);
	if (rc != GB_OK || g->all_sw_json == NULL)
		return rc;
	struct st_args a;
	MYSQL_STMT *s;
	st_args_init(&a);
	st_arg_str(&a, g->all_sw_json);
	return st_exec(db, SJ_SID(SJ_INS_SW_ALL), SQL_INS_SW_ALL, &a, &s);
}

int st_jobs_grid_save(struct st_db *db, const struct gm_grid *g, long long now)
{
	if (db == NULL || g == NULL || (g->nqueues && g->queues == NULL) ||
	    (g->nlinks && g->links == NULL) || (g->nfiles && g->files == NULL))
		return GB_EINVAL;
	/* START TRANSACTION would silently commit the caller's. */
	int rc = st_need_txn(db, 0, "st_jobs_grid_save");
	if (rc != GB_OK)
		return rc;
	rc = st_begin(db);
	for (size_t i = 0; rc == GB_OK && i < 5; i++) {
		MYSQL_STMT *s;
		rc = st_exec(db, SJ_SID(SJ_DEL_QUEUES + i), SQL_WIPE[i], NULL,
			     &s);
	}
	if (rc == GB_OK)
		rc = save_queues(db, g, now);
	if (rc == GB_OK)
		rc = save_links_files(db, g);
	/* A row the tables refuse is the grid's fault, not the server's. */
	return st_end(db, st_input_error(db, rc, 1));
}

/* ---- grid load ----------------------------------------------------------- */

/*
** The QX_SELECT columns of the current row into `x`, validated. Their text
** (ENUM words, a VARCHAR(64)) always fits the fixed buffer, so
** st_col_str never re-fetches it by a column number that would be wrong
** outside the first st_cols; a longer value is refused instead.
*/
static int queue_extras(struct st_db *db, MYSQL_STMT *s, struct st_cols *c,
			struct arena *a, struct gm_queue *x)
{
	const char *txt[NQX] = {NULL};
	double d[NQX] = {0};
	long long v[NQX] = {0};
	int ok = 1;
	for (size_t k = 0; ok && k < NQX; k++) {
		size_t j = NQCOLS + SJ_NCOUNTS + k;
		struct st_cols *p = &c[j / ST_MAX_COLS];
		unsigned i = (unsigned)(j % ST_MAX_COLS);
		if (QX_KINDS[k] == 's') {
			ok = p->len[i] <= ST_STRBUF && !st_col_isnull(p, i);
			int rc = ok ? st_col_cstr(db, s, p, i, a, &txt[k])
				    : GB_OK;
			if (rc != GB_OK)
				return rc;
		}
		v[k] = st_col_ll(p, i);
		d[k] = st_col_dbl(p, i);
	}
	int type = ok ? gm_queue_type_parse(txt[1]) : -1;
	int sclass = ok ? gm_site_class_parse(txt[2]) : -1;
	if (!ok || type < 0 || sclass < 0 || (v[0] != 0 && v[0] != 1) ||
	    (v[4] != 0 && v[4] != 1) || !st_finite_nonneg(d[5]) ||
	    !st_finite_nonneg(d[6]))
		return st_failf(db, GB_ERANGE,
				"queues row %s: analysis or timeout column out "
				"of range",
				x->q.name ? x->q.name : "?");
	x->is_vp = (int)v[0];
	x->type = (enum ab_queue_type)type;
	x->site_class = (enum an_site_class)sclass;
	x->workflow = txt[3];
	x->disable_reassign = (int)v[4];
	x->transtimehi = d[5];
	x->transtimelo = d[6];
	return GB_OK;
}

/* One queue row into `x`, its counts (when it has a row) into `cnt`. */
static int queue_read(struct st_db *db, MYSQL_STMT *s, struct st_cols *c,
		      struct arena *a, const char *gshare, struct gm_queue *x,
		      struct gm_counts *cnt)
{
	const char *rel = NULL;
	int rc = GB_OK;
	for (size_t j = 0; rc == GB_OK && j < NQCOLS; j++)
		rc = queue_col(db, s, c, j, a, x, &rel);
	if (rc == GB_OK)
		rc = queue_extras(db, s, c, a, x);
	if (rc == GB_OK && x->q.releases == JB_REL_LIST && rel)
		rc = releases_parse(db, rel, a, &x->q);
	if (rc == GB_OK && x->q.releases == JB_REL_AUTO && x->sw_json) {
		char what[320];
		snprintf(what, sizeof(what), "queues[%s].sw", x->q.name);
		rc = stc_sw_get(db, x->sw_json, what, a, &x->q.sw);
	}
	x->counts = NULL;
	x->ncounts = 0;
	if (rc != GB_OK ||
	    st_col_isnull(&c[NQCOLS / ST_MAX_COLS], NQCOLS % ST_MAX_COLS))
		return rc;
	double *v[SJ_NCOUNTS] = {&cnt->k.running,  &cnt->k.defined,
				 &cnt->k.assigned, &cnt->k.activated,
				 &cnt->k.starting, &cnt->k.transferring,
				 &cnt->k.nbatchjob};
	for (size_t i = 0; i < SJ_NCOUNTS; i++) {
		size_t j = NQCOLS + i;
		*v[i] = st_col_dbl(&c[j / ST_MAX_COLS],
				   (unsigned)(j % ST_MAX_COLS));
		if (!st_finite_nonneg(*v[i]))
			return st_failf(db, GB_ERANGE,
					"queue_counts row %s/%s: negative",
					x->q.name, gshare);
	}
	cnt->gshare = gshare;
	x->counts = cnt;
	x->ncounts = 1;
	return GB_OK;
}

static int load_queues(struct st_db *db, const char *gshare_in, struct arena *a,
		       struct gm_grid *out)
{
	const char *gshare = arena_strdup(a, gshare_in);
	if (gshare == NULL)
		return st_too_big(db, "gshare names", 1);
	/* The row's kinds, split over QC_NPARTS st_cols. */
	char spec[QC_NPARTS][ST_MAX_COLS + 1];
	memset(spec, 0, sizeof(spec));
	for (size_t j = 0; j < NQCOLS + SJ_NCOUNTS + NQX; j++) {
		char k = j < NQCOLS		  ? qkind_sql(qcols[j].kind)
			 : j < NQCOLS + SJ_NCOUNTS ? 'd'
						   : QX_KINDS[j - NQCOLS -
							      SJ_NCOUNTS];
		if (k == 's' && j >= ST_MAX_COLS && j < NQCOLS)
			return st_failf(
				db, GB_EINVAL,
				"qcols[%zu]: text after the first st_cols", j);
		spec[j / ST_MAX_COLS][j % ST_MAX_COLS] = k;
	}
	struct st_args args;
	struct st_cols c[QC_NPARTS];
	MYSQL_BIND rb[QC_NPARTS * ST_MAX_COLS];
	unsigned nr = 0;
	for (int p = 0; p < QC_NPARTS; p++) {
		st_cols_init(&c[p], spec[p]);
		for (unsigned j = 0; j < c[p].n; j++)
			rb[nr++] = c[p].b[j];
	}
	st_args_init(&args);
	st_arg_str(&args, gshare);
	MYSQL_STMT *s;
	int rc = st_prepared(db, SJ_SID(SJ_QUEUES), SQL_QUEUES, &s);
	if (rc == GB_OK)
		rc = st_run_binds(db, s, &args, rb, nr);
	if (rc != GB_OK)
		return rc;
	size_t rows = (size_t)mysql_stmt_num_rows(s), n = 0;
	struct gm_queue *qs = rows ? arena_alloc(a, rows * sizeof(*qs)) : NULL;
	struct gm_counts *cnt =
		rows ? arena_alloc(a, rows * sizeof(*cnt)) : NULL;
	if (rows && (qs == NULL || cnt == NULL))
		rc = st_too_big(db, "queues", rows);
	while (n < rows && st_row(db, s, &rc)) {
		rc = queue_read(db, s, c, a, gshare, &qs[n], &cnt[n]);
		n += rc == GB_OK;
	}
	st_done(s);
	out->queues = qs;
	out->nqueues = n;
	return rc;
}

/*
** The queues one transaction read, kept for the next job decisions of the
** same transaction (a group commit decides many, one gshare mostly).
**
** Why: reading every queue row with its software dictionary text (213 KB
** for the sample grid's 166 queues) was the most expensive statement of a
** job decision (0.8 ms of ~2.3 ms in the server, slow log). Within one
** transaction the job brokerage lock (st_jobs_lock) is held, so no other
** job decision can move a count meanwhile; the counts are read afresh for
** every decision anyway (one small statement over queue_counts), so the
** decision sees its group's earlier decisions and every status update
** committed since. What is kept is the rest of the row: the grid as the
** last grid load wrote it, and last_pilot/last_start as they were at the
** transaction's first job decision (they move with PanDA status updates,
** a few hundred milliseconds of a group's age at most). A new transaction
** (st_begin counts them) reads the rows again.
*/
#define ST_QCACHE_BYTES ((size_t)256 << 20) /* one transaction's queue rows */

struct sj_qcache {
	struct arena a;                 /* the rows' strings and arrays */
	unsigned long long txn_seq;     /* of the transaction that read them */
	int valid;
	char gshare[256];
	struct gm_queue *qs;
	size_t n;
};

void sj_qcache_free(struct st_db *db)
{
	if (db->qcache == NULL)
		return;
	arena_free(&db->qcache->a);
	free(db->qcache);
	db->qcache = NULL;
}

static const char SQL_COUNTS_OF[] =
	"SELECT queue, running, defined, assigned, activated, `starting`, "
	"transferring, nbatchjob FROM queue_counts WHERE gshare = ? "
	"ORDER BY queue";

/* The counts of every queue of `gshare` into qs[0..n) (sorted by name, as
** SQL_QUEUES sorts them): a queue without a row has none, as a LEFT JOIN
** gives it. `cnt` has room for n. */
static int counts_refresh(struct st_db *db, const char *gshare,
			  struct arena *a, struct gm_queue *qs, size_t n,
			  struct gm_counts *cnt)
{
	for (size_t i = 0; i < n; i++) {
		qs[i].counts = NULL;
		qs[i].ncounts = 0;
	}
	struct st_cols c;
	MYSQL_STMT *s;
	int rc = st_query_key(db, SJ_SID(SJ_COUNTS_OF), SQL_COUNTS_OF,
			      ST_TEXT(gshare), "sddddddd", &c, &s);
	if (rc != GB_OK)
		return rc;
	size_t j = 0;
	while (st_row(db, s, &rc)) {
		const char *name = NULL;
		rc = st_col_cstr(db, s, &c, 0, a, &name);
		if (rc != GB_OK)
			break;
		while (j < n && strcmp(qs[j].q.name, name) < 0)
			j++;
		if (j == n || strcmp(qs[j].q.name, name) != 0)
			continue; /* counts of a queue the grid no longer has */
		struct gm_counts *k = &cnt[j];
		double *v[SJ_NCOUNTS] = {&k->k.running,  &k->k.defined,
					 &k->k.assigned, &k->k.activated,
					 &k->k.starting, &k->k.transferring,
					 &k->k.nbatchjob};
		for (unsigned i = 0; i < SJ_NCOUNTS; i++) {
			*v[i] = st_col_dbl(&c, i + 1);
			if (!st_finite_nonneg(*v[i])) {
				rc = st_failf(db, GB_ERANGE,
					      "queue_counts row %s/%s: negative",
					      name, gshare);
				break;
			}
		}
		if (rc != GB_OK)
			break;
		k->gshare = gshare;
		qs[j].counts = k;
		qs[j].ncounts = 1;
	}
	st_done(s);
	return rc;
}

/* load_queues through the transaction's cache (struct sj_qcache). */
static int load_queues_cached(struct st_db *db, const char *gshare,
			      struct arena *a, struct gm_grid *out)
{
	struct sj_qcache *c = db->qcache;
	if (c == NULL) {
		c = calloc(1, sizeof(*c));
		if (c == NULL)
			return load_queues(db, gshare, a, out);
		arena_init(&c->a, ST_QCACHE_BYTES);
		db->qcache = c;
	}
	int hit = c->valid && c->txn_seq == db->txn_seq &&
		  st_in_transaction(db) && strcmp(c->gshare, gshare) == 0;
	if (!hit) {
		c->valid = 0;
		arena_free(&c->a);
		arena_init(&c->a, ST_QCACHE_BYTES);
		struct gm_grid g;
		memset(&g, 0, sizeof(g));
		if (strlen(gshare) >= sizeof(c->gshare) ||
		    !st_in_transaction(db))
			return load_queues(db, gshare, a, out);
		int rc = load_queues(db, gshare, &c->a, &g);
		if (rc == GB_ETOOBIG) /* the cache's arena is the smaller */
			return load_queues(db, gshare, a, out);
		if (rc != GB_OK)
			return rc;
		c->qs = g.queues;
		c->n = g.nqueues;
		c->txn_seq = db->txn_seq;
		snprintf(c->gshare, sizeof(c->gshare), "%s", gshare);
		c->valid = 1;
	}
	/* The request's own copy: the rows shallow (their strings stay in
	** the cache for the transaction), the counts its own. */
	size_t n = c->n;
	struct gm_queue *qs = n ? arena_alloc(a, n * sizeof(*qs)) : NULL;
	struct gm_counts *cnt = n ? arena_alloc(a, n * sizeof(*cnt)) : NULL;
	const char *gs = arena_strdup(a, gshare);
	if ((n && (qs == NULL || cnt == NULL)) || gs == NULL)
		return st_too_big(db, "queues", n);
	if (n)
		memcpy(qs, c->qs, n * sizeof(*qs));
	int rc = GB_OK;
	if (hit) {
		rc = counts_refresh(db, gs, a, qs, n, cnt);
	} else {
		/* just read with their counts: copy those */
		for (size_t i = 0; i < n; i++) {
			if (qs[i].ncounts == 0)
				continue;
			cnt[i] = qs[i].counts[0];
			cnt[i].gshare = gs;
			qs[i].counts = &cnt[i];
		}
	}
	out->queues = qs;
	out->nqueues = rc == GB_OK ? n : 0;
	return rc;
}

static int load_links(struct st_db *db, const char *nucleus, struct arena *a,
		      struct gm_grid *g)
{
	struct st_cols c;
	MYSQL_STMT *s;
	int rc = st_query_key(db, SJ_SID(SJ_LINKS), SQL_LINKS, ST_TEXT(nucleus),
			      "sslddddd", &c, &s);
	if (rc != GB_OK)
		return rc;
	size_t rows = 0, n = 0;
	struct gm_link *l =
		st_result_array(db, s, a, sizeof(*l), "links", &rows, &rc);
	while (n < rows && st_row(db, s, &rc)) {
		struct gm_link *x = &l[n];
		rc = st_col_cstr(db, s, &c, 0, a, &x->site);
		if (rc == GB_OK)
			rc = st_col_cstr(db, s, &c, 1, a, &x->nucleus);
		if (rc != GB_OK)
			break;
		x->blocked = col_flag(&c, 2);
		x->l.queued_files = st_col_dbl(&c, 3);
		x->l.mbps_1h = col_dbl_nan(&c, 4);
		x->l.mbps_1d = col_dbl_nan(&c, 5);
		x->l.mbps_1w = col_dbl_nan(&c, 6);
		x->l.closeness = col_dbl_nan(&c, 7);
		if (x->site == NULL || x->nucleus == NULL || x->blocked < 0 ||
		    !st_finite_nonneg(x->l.queued_files) ||
		    !nan_or_nonneg(x->l.mbps_1h) ||
		    !nan_or_nonneg(x->l.mbps_1d) ||
		    !nan_or_nonneg(x->l.mbps_1w) ||
		    (!isnan(x->l.closeness) && x->l.closeness < -1))
			rc = st_failf(db, GB_ERANGE,
				      "links row %s: out of range",
				      x->site ? x->site : "?");
		n += rc == GB_OK;
	}
	st_done(s);
	g->links = l;
	g->nlinks = n;
	return rc;
}

static int load_sw_all(struct st_db *db, struct arena *a, struct gm_grid *g)
{
	struct st_cols c;
	MYSQL_STMT *s;
	st_cols_init(&c, "s");
	int rc = st_query(db, SJ_SID(SJ_SW_ALL), SQL_SW_ALL, NULL, &c, &s);
	if (rc != GB_OK)
		return rc;
	char *json = NULL;
	if (st_row(db, s, &rc))
		rc = st_col_str(db, s, &c, 0, a, &json);
	st_done(s);
	if (rc != GB_OK || json == NULL)
		return rc;
	g->all_sw_json = json;
	return stc_sw_get(db, json, "sw.ALL", a, &g->all_sw);
}

/* A growing array of files, on the heap until the last chunk. */
struct file_vec {
	struct gm_file *v;
	size_t n, cap;
};

/* The replicas of chunk `ch` of the distinct `lfns`, appended to `fv`. */
static int replica_chunk(struct st_db *db, struct arena *a,
			 struct st_chunks *ch, const char *const *lfns,
			 struct file_vec *fv)
{
	struct st_cols c;
	MYSQL_STMT *s;
	for (size_t i = 0; i < ch->k; i++)
		st_arg_str(&ch->a, lfns[ch->off + i]);
	st_arg_nulls(&ch->a, SJ_IN_CHUNK - ch->k);
	st_cols_init(&c, "ss");
	int rc = st_run_n(db, SJ_SID(SJ_REPLICAS_IN), SQL_REPLICAS_IN,
			  SJ_IN_CHUNK, &ch->a, &c, &s);
	if (rc != GB_OK)
		return rc;
	size_t rows = 0;
	const char **st =
		st_result_array(db, s, a, sizeof(*st), "replicas", &rows, &rc);
	struct gm_file *cur = NULL;
	for (size_t k = 0; k < rows && st_row(db, s, &rc); k++) {
		const char *lfn = NULL;
		rc = st_col_cstr(db, s, &c, 1, a, &st[k]);
		/* Rows come grouped by lfn; one that fit the fixed buffer
		** is compared in place, so each lfn is copied once. */
		int same = 0;
		if (rc == GB_OK && cur && c.len[0] <= ST_STRBUF)
			same = strlen(cur->lfn) == c.len[0] &&
			       memcmp(cur->lfn, c.s[0], c.len[0]) == 0;
		if (rc == GB_OK && !same)
			rc = st_col_cstr(db, s, &c, 0, a, &lfn);
		if (rc == GB_OK && (st[k] == NULL || (!same && lfn == NULL)))
			rc = st_failf(db, GB_ERANGE, "file_replicas: NULL");
		if (rc != GB_OK)
			break;
		if (!same && cur && strcmp(lfn, cur->lfn) == 0)
			same = 1; /* a long name, equal after all */
		if (!same && fv->n == fv->cap) {
			size_t cap = fv->cap ? fv->cap * 2 : 256;
			struct gm_file *f = realloc(fv->v, cap * sizeof(*f));
			if (f == NULL) {
				rc = st_failf(db, GB_ENOMEM, "out of memory");
				break;
			}
			fv->v = f;
			fv->cap = cap;
		}
		if (!same) {
			cur = &fv->v[fv->n++];
			*cur = (struct gm_file){lfn, &st[k], 0};
		}
		cur->nstorages++;
	}
	st_done(s);
	return rc;
}

static int load_replicas(struct st_db *db, const struct gm_request *r,
			 struct arena *a, struct gm_grid *g)
{
	size_t total = 0;
	for (size_t i = 0; i < r->njobs; i++)
		total += r->jobs[i].ninputs;
	if (total == 0)
		return GB_OK;
	/* The distinct names: an input of several jobs is asked for once.
	** Temporary, so from the heap rather than the request's arena. */
	const char **names = malloc(total * sizeof(*names));
	if (names == NULL)
		return st_failf(db, GB_ENOMEM, "out of memory");
	size_t nn = 0;
	for (size_t i = 0; i < r->njobs; i++)
		for (size_t j = 0; j < r->jobs[i].ninputs; j++) {
			const char *lfn = r->jobs[i].inputs[j].lfn;
			if (lfn && lfn[0])
				names[nn++] = lfn;
		}
	struct file_vec fv = {NULL, 0, 0};
	struct st_chunks ch;
	int rc = GB_OK;
	st_chunks_init(&ch, st_distinct(names, nn), SJ_IN_CHUNK);
	while (st_chunks_next(&ch, &rc))
		rc = replica_chunk(db, a, &ch, names, &fv);
	st_chunks_free(&ch);
	free(names);
	struct gm_file *f = NULL;
	if (rc == GB_OK && fv.n) {
		f = arena_alloc(a, fv.n * sizeof(*f));
		if (f == NULL)
			rc = st_too_big(db, "files", fv.n);
		else
			memcpy(f, fv.v, fv.n * sizeof(*f));
	}
	free(fv.v);
	g->files = f;
	g->nfiles = f ? fv.n : 0;
	return rc;
}

int st_jobs_grid_load(struct st_db *db, const struct gm_request *r,
		      struct arena *a, struct gm_grid *out)
{
	if (db == NULL || r == NULL || a == NULL || out == NULL ||
	    r->t.gshare == NULL || r->t.nucleus == NULL ||
	    (r->njobs && r->jobs == NULL))
		return GB_EINVAL;
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < r->njobs; i++)
		if (r->jobs[i].ninputs && r->jobs[i].inputs == NULL)
			return GB_EINVAL;
	/* The queue cache points into the dictionary cache: emptying that
	** ends this transaction's queues too. */
	if (stc_sw_begin(db) && db->qcache)
		db->qcache->valid = 0;
	int rc = load_queues_cached(db, r->t.gshare, a, out);
	if (rc == GB_OK)
		rc = load_links(db, r->t.nucleus, a, out);
	if (rc == GB_OK)
		rc = load_sw_all(db, a, out);
	if (rc == GB_OK)
		rc = load_replicas(db, r, a, out);
	if (rc != GB_OK)
		memset(out, 0, sizeof(*out));
	return rc;
}
