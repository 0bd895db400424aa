/*
** scenario_jobs_grid.c — the grid half of the job-brokerage JSON: published
** software (RC-01 dictionaries), queues with their storage and per-gshare
** counts, site -> nucleus links and file replicas, as grid files and as the
** state part of a job scenario (scj_parse_grid, declared in
** scenario_jobs.h; the software dictionaries are model/gridmodel_sw.c's), and the grid file's
** "analysis" section (scj_parse_analysis_grid: users, working groups, share
** usage, task classes), which `grid load` stores for the analysis
** brokerage.
**
** Strict like scenario.c, for the same reason: these files are written by
** people, and a typo such as "maxrs" must not silently take a default and
** answer a different what-if. The flat records are tables of jsonutil.h
** rows (type, range and default of a field in one place; the same rows
** give the allowed keys), nested arrays and maps go through
** ju_parse_items, and only the odd shapes (releases as a word or a list,
** architectures) are by hand. Job requests, whole scenarios and scj_run are
** in scenario_jobs.c; the split keeps each file readable, not a boundary
** callers see.
**
** Limits (SCJ_MAX_* in the header, COD_MAX_STRING from the codec) bound
** every array and string, so a file cannot make the parser allocate without
** bound beyond the arena's cap.
*/
#include "explain/scenario_jobs.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "gb_error.h"
#include "base/jsonutil.h"

#define SCJ_MAX_AGE_S 1e10 /* ~300 years: an age beyond this is a typo */

/* JU_K_ENUM writes an int into enum members. */
_Static_assert(sizeof(enum jb_es) == sizeof(int), "enum size");
_Static_assert(sizeof(enum ab_queue_type) == sizeof(int), "enum size");
_Static_assert(sizeof(enum an_site_class) == sizeof(int), "enum size");
_Static_assert(sizeof(enum an_task_class) == sizeof(int), "enum size");

/* ---- queues ----------------------------------------------------------- */

static const char *const status_words[] = {"online", "offline", "brokeroff",
					   "test", "standby", "paused", NULL};
/* In the order of enum jb_es. */
static const char *const es_words[] = {"none", "allowed", "only", NULL};

#define Q struct jb_queue
static const struct ju_fld queue_flds[] = {
	JU_STR("name", Q, name, JU_F_REQ | JU_F_NONEMPTY, NULL),
	JU_WORD("status", Q, status, JU_F_REQ, status_words),
	JU_STR("site", Q, site, JU_F_REQ | JU_F_NONEMPTY, NULL),
	JU_STR("nucleus", Q, nucleus, 0, ""),
	JU_LNG("coreCount", Q, core_count, 0, 1e6, 1),
	JU_NUMF("corepower", Q, corepower, JU_F_POS, 0, INFINITY, 10),
	JU_NUM("minrss", Q, min_rss_per_core, 0, INFINITY, 0),
	JU_NUM("maxrss", Q, max_rss_per_core, 0, INFINITY, 0),
	JU_NUM("maxwdir", Q, maxwdir, 0, INFINITY, 0),
	JU_NUM("mintime", Q, mintime, 0, INFINITY, 0),
	JU_NUM("maxtime", Q, maxtime, 0, INFINITY, 0),
	JU_BOOL("directAccess", Q, direct_access),
	JU_STRCHK("wnconnectivity", Q, wnconnectivity, 0, "", ju_ipconn_ok,
		  JU_IPCONN_EXPECT),
	JU_NUMNULL("maxDiskIO", Q, max_diskio, 0, INFINITY),
	JU_NUM("diskIOAvg", Q, diskio_avg, 0, INFINITY, 0),
	JU_STR("fairsharepolicy", Q, fairsharepolicy, 0, ""),
	JU_ENUM("eventService", Q, es, es_words),
	JU_BOOL("dynamicNEvents", Q, dynamic_nevents),
	JU_NUM("transferringLimit", Q, transferring_limit, 0, INFINITY, 0),
	JU_LNG("numSlots", Q, num_slots, -1, 1e9, -1),
	JU_AGE("lastPilotAge", Q, last_pilot, SCJ_MAX_AGE_S),
	JU_AGE("lastStartAge", Q, last_start, SCJ_MAX_AGE_S),
	JU_TEXT("description"),
	JU_FLD_END,
};
static const char *const queue_extra[] = {
	"releases", "storage", "jobs", "type", "vp", "siteClass",
	"disableReassign", "transtimehi", "transtimelo", "workflow", NULL};

/* The analysis and timeout attributes of a queue (AJ-05, AJ-11, AJ-25,
** TO-09..TO-12), in the order of enum ab_queue_type / an_site_class. The
** enums' 0 values (analysis, hi) are not the defaults (unified, mid), so
** queue_item sets those when the key is absent. */
static const char *const qtype_words[] = {"analysis", "unified", "production",
					  "other", NULL};
static const char *const sclass_words[] = {"hi", "mid", "lo", NULL};
#define G struct gm_queue
static const struct ju_fld anal_flds[] = {
	JU_ENUM("type", G, type, qtype_words),
	JU_BOOL("vp", G, is_vp),
	JU_ENUM("siteClass", G, site_class, sclass_words),
	JU_BOOL("disableReassign", G, disable_reassign),
	JU_NUM("transtimehi", G, transtimehi, 0, INFINITY, 0),
	JU_NUM("transtimelo", G, transtimelo, 0, INFINITY, 0),
	JU_STR("workflow", G, workflow, 0, ""),
	JU_FLD_END,
};
#undef G

/* 1 when `key` of `o` is absent or null (the field takes its default). */
static int absent(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return v == NULL || json_is_null(v);
}
/* The storage object's fields live in the queue (jb_queue.storage*). */
static const struct ju_fld storage_flds[] = {
	JU_STR("name", Q, storage, JU_F_REQ | JU_F_NONEMPTY, NULL),
	JU_NUMF("spaceFree", Q, storage_free, JU_F_REQ, 0, INFINITY, 0),
	JU_BOOL("blacklisted", Q, storage_blacklisted),
	JU_FLD_END,
};
#undef Q

#define K struct jb_counts
static const struct ju_fld counts_flds[] = {
	JU_NUM("running", K, running, 0, INFINITY, 0),
	JU_NUM("defined", K, defined, 0, INFINITY, 0),
	JU_NUM("assigned", K, assigned, 0, INFINITY, 0),
	JU_NUM("activated", K, activated, 0, INFINITY, 0),
	JU_NUM("starting", K, starting, 0, INFINITY, 0),
	JU_NUM("transferring", K, transferring, 0, INFINITY, 0),
	JU_NUM("nBatchJob", K, nbatchjob, 0, INFINITY, 0),
	JU_FLD_END,
};
#undef K

/* PJ-14: "ANY", "AUTO" or a list of release names. */
static int parse_releases(const struct ju_ctx *c, json_t *o, const char *path,
			  struct jb_queue *q)
{
	char f[JU_PATH];
	ju_path_key(f, sizeof(f), path, "releases");
	json_t *v = json_object_get(o, "releases");
	const char *s = json_is_string(v) ? json_string_value(v) : NULL;
	q->releases = JB_REL_ANY;
	if (json_is_array(v)) {
		q->releases = JB_REL_LIST;
		return ju_str_list(c, v, f, SCJ_MAX_RELEASES, 1,
				   &q->release_list, &q->nrelease_list);
	}
	if (v == NULL || json_is_null(v) || (s && strcmp(s, "ANY") == 0))
		return GB_OK;
	if (s && strcmp(s, "AUTO") == 0) {
		q->releases = JB_REL_AUTO;
		return GB_OK;
	}
	if (s)
		return ju_fail(
			c, GB_ERANGE, f,
			"expected \"ANY\", \"AUTO\" or a list of releases, "
			"got '%.64s'",
			s);
	return ju_fail(c, GB_ETYPE, f, "expected string or array, got %s",
		       ju_type_name(v));
}

/* "jobs": one gshare's counts (PJ-24, PJ-28..PJ-34). */
static int counts_item(const struct ju_ctx *c, json_t *v, const char *path,
		       const char *key, void *elem)
{
	struct gm_counts *k = elem;
	int rc = ju_str_copy(c, key, strlen(key), path, 1, &k->gshare);
	return rc == GB_OK
		       ? ju_parse_record(c, v, path, counts_flds, NULL, &k->k)
		       : rc;
}

/* A queue's "jobs": its counts per share. */
static int parse_jobs(const struct ju_ctx *c, json_t *o, const char *path,
		      struct gm_queue *gq)
{
	char g[JU_PATH];
	ju_path_key(g, sizeof(g), path, "jobs");
	void *counts = NULL;
	int rc = ju_parse_items(c, json_object_get(o, "jobs"), g, 1,
				SCJ_MAX_GSHARES, sizeof(struct gm_counts),
				counts_item, &counts, &gq->ncounts);
	gq->counts = counts;
	return rc;
}

static int queue_item(const struct ju_ctx *c, json_t *o, const char *path,
		      const char *key, void *elem)
{
	struct gm_queue *gq = elem;
	(void)key;
	char f[JU_PATH];
	ju_path_key(f, sizeof(f), path, "storage");
	int rc = ju_parse_record(c, o, path, queue_flds, queue_extra, &gq->q);
	json_t *st = rc == GB_OK ? json_object_get(o, "storage") : NULL;
	if (rc == GB_OK)
		rc = parse_releases(c, o, path, &gq->q);
	for (const struct ju_fld *d = anal_flds; rc == GB_OK && d->key; d++)
		rc = ju_fld_parse(c, o, path, d, gq);
	if (rc == GB_OK && absent(o, "type"))
		gq->type = AB_QT_UNIFIED;
	if (rc == GB_OK && absent(o, "siteClass"))
		gq->site_class = AN_SITE_MID;
	if (rc == GB_OK && st == NULL)
		return ju_fail(c, GB_EMISSING, f, "missing");
	if (rc == GB_OK)
		rc = ju_parse_record(c, st, f, storage_flds, NULL, &gq->q);
	if (rc == GB_OK)
		rc = parse_jobs(c, o, path, gq);
	return rc;
}

/* ---- links and replicas ------------------------------------------------ */

#define L struct gm_link
static const struct ju_fld link_flds[] = {
	JU_STR("site", L, site, JU_F_REQ | JU_F_NONEMPTY, NULL),
	JU_STR("nucleus", L, nucleus, JU_F_REQ | JU_F_NONEMPTY, NULL),
	JU_BOOL("blocked", L, blocked),
	JU_NUM("queuedFiles", L, l.queued_files, 0, INFINITY, 0),
	JU_NUMNULL("mbps1h", L, l.mbps_1h, 0, INFINITY),
	JU_NUMNULL("mbps1d", L, l.mbps_1d, 0, INFINITY),
	JU_NUMNULL("mbps1w", L, l.mbps_1w, 0, INFINITY),
	JU_NUMNULL("closeness", L, l.closeness, -1, 11),
	JU_FLD_END,
};
#undef L

static int link_item(const struct ju_ctx *c, json_t *v, const char *path,
		     const char *key, void *elem)
{
	struct gm_link *l = elem;
	(void)key;
	int rc = ju_parse_record(c, v, path, link_flds, NULL, l);
	if (rc == GB_OK && l->l.closeness > -1 && l->l.closeness < 0) {
		char f[JU_PATH];
		ju_path_key(f, sizeof(f), path, "closeness");
		return ju_fail(c, GB_ERANGE, f,
			       "expected -1 (blocked) or a number in [0, 11], "
			       "got %g",
			       l->l.closeness);
	}
	return rc;
}

/* One pair per link: "site -> nucleus" names make the duplicate check. */
static int link_dups(const struct ju_ctx *c, const struct gm_link *l, size_t n)
{
	struct ju_nameref *names = n ? ju_alloc_n(c, n, sizeof(*names)) : NULL;
	if (n && names == NULL)
		return ju_fail(c, GB_ENOMEM, "links", "out of memory");
	for (size_t i = 0; i < n; i++) {
		char key[2 * COD_MAX_STRING + 8]; /* names are bounded */
		snprintf(key, sizeof(key), "%s -> %s", l[i].site, l[i].nucleus);
		names[i] = (struct ju_nameref){arena_strdup(c->a, key), i};
		if (names[i].name == NULL)
			return ju_fail(c, GB_ENOMEM, "links", "out of memory");
	}
	return ju_dups(c, names, n, "links", "", "link");
}

/* fileReplicas: one file's storages, each once. */
static int replica_item(const struct ju_ctx *c, json_t *v, const char *path,
			const char *key, void *elem)
{
	struct gm_file *f = elem;
	int rc = ju_str_copy(c, key, strlen(key), path, 1, &f->lfn);
	if (rc == GB_OK)
		rc = ju_str_list(c, v, path, SCJ_MAX_REPLICAS, 1, &f->storages,
				 &f->nstorages);
	if (v == NULL || json_is_null(v))
		return ju_fail(c, GB_ETYPE, path, "expected array, got null");
	struct ju_nameref refs[SCJ_MAX_REPLICAS];
	for (size_t x = 0; rc == GB_OK && x < f->nstorages; x++)
		refs[x] = (struct ju_nameref){f->storages[x], x};
	return rc == GB_OK ? ju_dups(c, refs, f->nstorages, path, "", "storage")
			   : rc;
}

/* ---- grid ----------------------------------------------------------------- */

/* One "sw" entry: the parsed dictionary and, when `keep_text`, its compact
** sorted text (else *text stays NULL: only writing a scenario needs it). */
static int sw_entry(const struct ju_ctx *c, json_t *v, const char *path,
		    int keep_text, const struct rc_sw **sw, const char **text)
{
	struct rc_sw *s = ju_alloc_n(c, 1, sizeof(*s));
	if (s == NULL)
		return ju_fail(c, GB_ENOMEM, path, "out of memory");
	int rc = gm_parse_sw(v, path, c->a, s, c->err, c->errlen);
	if (rc != GB_OK)
		return rc;
	if (keep_text) {
		char *dump = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
		*text = dump ? arena_strdup(c->a, dump) : NULL;
		free(dump);
		if (*text == NULL)
			return ju_fail(c, GB_ENOMEM, path, "out of memory");
	}
	*sw = s;
	return GB_OK;
}

/* What one memo's arenas may hold: as a job scenario's arena. */
#define SCJ_MEMO_CAP (512u << 20)
#define SCJ_MEMO_SLOTS (2 * SCJ_MEMO_QUEUES)

static void memo_sw_clear(struct scj_memo *m)
{
	json_decref(m->sw);
	m->sw = NULL;
	arena_free(&m->sw_a);
	arena_init(&m->sw_a, SCJ_MEMO_CAP);
	m->names = NULL;
	m->dict = NULL;
	m->n = 0;
}

static void memo_queues_clear(struct scj_memo *m)
{
	for (size_t i = 0; m->qs && i < SCJ_MEMO_SLOTS; i++) {
		json_decref(m->qs[i].node);
		m->qs[i].node = NULL;
	}
	m->nq = 0;
	m->nlast = 0;
	arena_free(&m->q_a);
	arena_init(&m->q_a, SCJ_MEMO_CAP);
}

static void memo_links_clear(struct scj_memo *m)
{
	json_decref(m->links);
	m->links = NULL;
	m->link = NULL;
	m->nlink = 0;
	arena_free(&m->links_a);
	arena_init(&m->links_a, SCJ_MEMO_CAP);
}

int scj_memo_init(struct scj_memo *m)
{
	memset(m, 0, sizeof(*m));
	arena_init(&m->sw_a, SCJ_MEMO_CAP);
	arena_init(&m->q_a, SCJ_MEMO_CAP);
	arena_init(&m->links_a, SCJ_MEMO_CAP);
	m->qs = calloc(SCJ_MEMO_SLOTS, sizeof(*m->qs));
	m->last = calloc(SCJ_MEMO_QUEUES, sizeof(*m->last));
	return m->qs && m->last ? GB_OK : GB_ENOMEM;
}

void scj_memo_fini(struct scj_memo *m)
{
	memo_sw_clear(m);
	memo_queues_clear(m);
	memo_links_clear(m);
	arena_free(&m->sw_a);
	arena_free(&m->q_a);
	arena_free(&m->links_a);
	free(m->qs);
	free(m->last);
	memset(m, 0, sizeof(*m));
}

/* The slot of element `o`: its own, or the free one where it would go. */
static struct scj_memo_queue *memo_slot(struct scj_memo *m, const json_t *o)
{
	size_t h = (size_t)(((uintptr_t)o >> 4) * 0x9E3779B97F4A7C15ull);
	for (size_t i = 0;; i++) {
		struct scj_memo_queue *e =
			&m->qs[(h + i) & (SCJ_MEMO_SLOTS - 1)];
		if (e->node == o || e->node == NULL)
			return e;
	}
}

/* 1 when `key` is one of a queue's ages (JU_K_AGE rows of queue_flds). */
static int is_age(const char *key)
{
	for (const struct ju_fld *d = queue_flds; d->key; d++)
		if (d->kind == JU_K_AGE && strcmp(d->key, key) == 0)
			return 1;
	return 0;
}

/* 1 when queue element `o` is `prev` but for its ages and job counts:
** the same members, each the same value (the same json_t, or json_equal)
** unless an age or "jobs"; *jobs_moved says whether "jobs" differs. */
static int same_but_counts(const json_t *prev, json_t *o, int *jobs_moved)
{
	*jobs_moved = 0;
	if (!json_is_object(prev) || !json_is_object(o) ||
	    json_object_size(prev) != json_object_size(o))
		return 0;
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v) {
		json_t *pv = json_object_get(prev, k);
		if (pv == NULL)
			return 0;
		if (pv == v || is_age(k) || json_equal(pv, v))
			continue;
		if (strcmp(k, "jobs") != 0)
			return 0;
		*jobs_moved = 1;
	}
	return 1;
}

/* A copied queue's ages read again (they count back from this
** scenario's `now`). */
static int reread_ages(const struct ju_ctx *c, json_t *o, const char *path,
		       struct gm_queue *gq)
{
	int rc = GB_OK;
	for (const struct ju_fld *d = queue_flds; rc == GB_OK && d->key; d++)
		if (d->kind == JU_K_AGE)
			rc = ju_fld_parse(c, o, path, d, &gq->q);
	return rc;
}

/* queue_item through the memo, for element `idx` of "queues": an element
** seen before is copied and only its ages are read again; the previous
** scenario's element at `idx` but for its ages and job counts is copied
** and those read again (the counts into the memo); a new one is parsed
** into the memo. */
static int queue_item_memo(const struct ju_ctx *c, json_t *o, const char *path,
			   struct gm_queue *gq, struct scj_memo *m, size_t idx)
{
	if (m->qs == NULL)
		return queue_item(c, o, path, NULL, gq);
	json_t *prev = idx < m->nlast ? m->last[idx] : NULL;
	if (idx < SCJ_MEMO_QUEUES)
		m->last[idx] = NULL;
	struct scj_memo_queue *e = memo_slot(m, o);
	if (e->node == o) {
		m->queue_hits++;
		*gq = e->q;
		if (idx < SCJ_MEMO_QUEUES)
			m->last[idx] = o;
		return reread_ages(c, o, path, gq);
	}
	if (m->nq >= SCJ_MEMO_QUEUES) /* full: this one is not kept */
		return queue_item(c, o, path, NULL, gq);
	struct ju_ctx mc = *c;
	mc.a = &m->q_a;
	struct scj_memo_queue *pe = prev ? memo_slot(m, prev) : NULL;
	int jobs_moved = 0, rc;
	if (pe && pe->node == prev && same_but_counts(prev, o, &jobs_moved)) {
		/* the rest of the parse is pe's: its strings live in the
		** memo's arena, as the counts read here */
		m->queue_hits++;
		*gq = pe->q;
		rc = reread_ages(c, o, path, gq);
		if (rc == GB_OK && jobs_moved)
			rc = parse_jobs(&mc, o, path, gq);
	} else {
		rc = queue_item(&mc, o, path, NULL, gq);
	}
	if (rc != GB_OK)
		return rc;
	e->node = json_incref(o);
	e->q = *gq;
	m->nq++;
	if (idx < SCJ_MEMO_QUEUES)
		m->last[idx] = o;
	return GB_OK;
}

/* "links": site -> nucleus, each pair once. */
static int parse_links(const struct ju_ctx *c, json_t *v, void **out,
		       size_t *n)
{
	int rc = ju_parse_items(c, v, "links", 0, SCJ_MAX_LINKS,
				sizeof(struct gm_link), link_item, out, n);
	return rc == GB_OK ? link_dups(c, *out, *n) : rc;
}

/* parse_links through the memo: the same checks and the same result, the
** array parsed only when `v` is not the memo's; a copy of it in c->a. */
static int parse_links_memo(const struct ju_ctx *c, json_t *v,
			    struct scj_memo *m, void **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (v == NULL || v != m->links) {
		memo_links_clear(m);
		struct ju_ctx mc = *c;
		mc.a = &m->links_a;
		void *l = NULL;
		size_t nl = 0;
		int rc = parse_links(&mc, v, &l, &nl);
		if (rc != GB_OK) {
			memo_links_clear(m);
			return rc;
		}
		m->link = l;
		m->nlink = nl;
		m->links = json_incref(v);
	} else {
		m->links_hits++;
	}
	if (m->nlink == 0)
		return GB_OK;
	struct gm_link *copy = ju_alloc_n(c, m->nlink, sizeof(*copy));
	if (copy == NULL)
		return ju_fail(c, GB_ENOMEM, "links", "out of memory");
	memcpy(copy, m->link, m->nlink * sizeof(*copy));
	*out = copy;
	*n = m->nlink;
	return GB_OK;
}

/* "queues" through the memo: ju_parse_items' checks and array, each
** element by queue_item_memo. */
static int parse_queues_memo(const struct ju_ctx *c, json_t *v,
			     struct scj_memo *m, void **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (v == NULL || json_is_null(v))
		return GB_OK;
	int rc = ju_want_array(c, v, "queues", SCJ_MAX_QUEUES);
	size_t cnt = rc == GB_OK ? json_array_size(v) : 0;
	if (cnt > SCJ_MAX_QUEUES)
		return ju_fail(c, GB_ETOOBIG, "queues",
			       "%zu entries exceed the limit of %zu", cnt,
			       (size_t)SCJ_MAX_QUEUES);
	if (rc != GB_OK || cnt == 0)
		return rc;
	struct gm_queue *arr = ju_alloc_n(c, cnt, sizeof(*arr));
	if (arr == NULL)
		return ju_fail(c, GB_ENOMEM, "queues", "out of memory");
	/* Emptied between scenarios, never during one: the queues copied
	** from it point into its arena until this scenario is decided. */
	if (m->nq + cnt > SCJ_MEMO_QUEUES)
		memo_queues_clear(m);
	for (size_t i = 0; i < cnt && rc == GB_OK; i++) {
		char p[JU_PATH];
		ju_path_idx(p, sizeof(p), "queues", i);
		rc = queue_item_memo(c, json_array_get(v, i), p, &arr[i], m,
				     i);
	}
	m->nlast = rc == GB_OK ? (cnt < SCJ_MEMO_QUEUES ? cnt
							: SCJ_MEMO_QUEUES)
			       : 0;
	*out = arr;
	*n = cnt;
	return rc;
}

/* Into *gq the queue of `g` named `name` (NULL for "ALL"); or a
** GB_ENOTFOUND failure at path `p`. */
static int sw_owner(const struct ju_ctx *c, struct gm_grid *g,
		    const struct ju_nameref *names, const char *name,
		    const char *p, struct gm_queue **gq)
{
	*gq = NULL;
	if (strcmp(name, "ALL") == 0)
		return GB_OK;
	const struct ju_nameref *r =
		g->nqueues ? bsearch(name, names, g->nqueues, sizeof(*names),
				     ju_nameref_key_cmp)
			   : NULL;
	if (r == NULL)
		return ju_fail(c, GB_ENOTFOUND, p,
			       "no queue of that name in queues");
	*gq = &g->queues[r->idx];
	return GB_OK;
}

/* parse_sw_map through a memo: the same checks and the same result, the
** dictionaries parsed only when `o` is not the memo's object. */
static int parse_sw_memo(const struct ju_ctx *c, json_t *o, struct gm_grid *g,
			 const struct ju_nameref *names, struct scj_memo *m)
{
	int rc = ju_want_object(c, o, "sw");
	if (rc != GB_OK)
		return rc;
	int hit = m->sw == o;
	if (!hit) {
		memo_sw_clear(m);
		size_t n = json_object_size(o);
		m->names = n ? arena_alloc(&m->sw_a, n * sizeof(*m->names))
			     : NULL;
		m->dict = n ? arena_alloc(&m->sw_a, n * sizeof(*m->dict))
			    : NULL;
		if (n && (m->names == NULL || m->dict == NULL))
			return ju_fail(c, GB_ENOMEM, "sw", "out of memory");
	} else {
		m->sw_hits++;
	}
	struct ju_ctx mc = *c;
	mc.a = &m->sw_a;
	const char *name;
	json_t *v;
	size_t i = 0;
	json_object_foreach(o, name, v) {
		char p[JU_PATH];
		ju_path_qkey(p, sizeof(p), "sw", name);
		struct gm_queue *gq;
		rc = sw_owner(c, g, names, name, p, &gq);
		if (rc == GB_OK && !hit) {
			const char *none = NULL;
			rc = sw_entry(&mc, v, p, 0, &m->dict[i], &none);
			m->names[i] = rc == GB_OK ? arena_strdup(&m->sw_a, name)
						  : NULL;
			if (rc == GB_OK && m->names[i] == NULL)
				rc = ju_fail(c, GB_ENOMEM, p, "out of memory");
		}
		if (rc != GB_OK) {
			/* a half-built memo is no memo */
			if (!hit)
				memo_sw_clear(m);
			return rc;
		}
		if (gq)
			gq->q.sw = m->dict[i];
		else
			g->all_sw = m->dict[i];
		i++;
	}
	if (!hit) {
		m->n = i;
		m->sw = json_incref(o);
	}
	return GB_OK;
}

/* "sw": queue name (or "ALL") -> dictionary; `names` sorted by name. */
static int parse_sw_map(const struct ju_ctx *c, json_t *o, struct gm_grid *g,
			const struct ju_nameref *names, int keep_text,
			struct scj_memo *memo)
{
	if (o == NULL)
		return GB_OK;
	if (memo != NULL && !keep_text)
		return parse_sw_memo(c, o, g, names, memo);
	int rc = ju_want_object(c, o, "sw");
	const char *name;
	json_t *v;
	json_object_foreach(o, name, v) {
		if (rc != GB_OK)
			break;
		char p[JU_PATH];
		ju_path_qkey(p, sizeof(p), "sw", name);
		if (strcmp(name, "ALL") == 0) {
			rc = sw_entry(c, v, p, keep_text, &g->all_sw,
				      &g->all_sw_json);
			continue;
		}
		const struct ju_nameref *r =
			g->nqueues ? bsearch(name, names, g->nqueues,
					     sizeof(*names), ju_nameref_key_cmp)
				   : NULL;
		if (r == NULL)
			return ju_fail(c, GB_ENOTFOUND, p,
				       "no queue of that name in queues");
		struct gm_queue *gq = &g->queues[r->idx];
		rc = sw_entry(c, v, p, keep_text, &gq->q.sw, &gq->sw_json);
	}
	return rc;
}

int scj_parse_grid(json_t *root, struct arena *a, long long now,
		   struct gm_grid *out, char *err, size_t errlen)
{
	return scj_parse_grid_opts(root, a, now, NULL, out, err, errlen);
}

int scj_parse_grid_opts(json_t *root, struct arena *a, long long now,
			const struct scj_opts *o, struct gm_grid *out,
			char *err, size_t errlen)
{
	struct ju_ctx c = {a, err, errlen, 0, now};
	if (out == NULL || a == NULL)
		return ju_fail(&c, GB_EINVAL, "", "invalid arguments");
	memset(out, 0, sizeof(*out));
	int rc = ju_want_object(&c, root, "");
	void *qs = NULL, *links = NULL, *files = NULL;
	struct scj_memo *memo = o && o->no_sw_text ? o->memo : NULL;
	if (rc == GB_OK && memo)
		rc = parse_queues_memo(&c, json_object_get(root, "queues"),
				       memo, &qs, &out->nqueues);
	else if (rc == GB_OK)
		rc = ju_parse_items(&c, json_object_get(root, "queues"),
				    "queues", 0, SCJ_MAX_QUEUES,
				    sizeof(struct gm_queue), queue_item, &qs,
				    &out->nqueues);
	out->queues = qs;
	size_t n = rc == GB_OK ? out->nqueues : 0;
	struct ju_nameref *names = n ? ju_alloc_n(&c, n, sizeof(*names)) : NULL;
	if (n && names == NULL)
		return ju_fail(&c, GB_ENOMEM, "queues", "out of memory");
	for (size_t i = 0; i < n; i++)
		names[i] = (struct ju_nameref){out->queues[i].q.name, i};
	if (rc == GB_OK)
		rc = ju_dups(&c, names, n, "queues", ".name", "queue name");
	if (rc == GB_OK)
		rc = parse_sw_map(&c, json_object_get(root, "sw"), out, names,
				  o == NULL || !o->no_sw_text,
				  o ? o->memo : NULL);
	if (rc == GB_OK)
		rc = memo ? parse_links_memo(&c, json_object_get(root, "links"),
					     memo, &links, &out->nlinks)
			  : parse_links(&c, json_object_get(root, "links"),
					&links, &out->nlinks);
	out->links = links;
	if (rc == GB_OK)
		rc = ju_parse_items(&c, json_object_get(root, "fileReplicas"),
				    "fileReplicas", 1, SCJ_MAX_REPLICA_FILES,
				    sizeof(struct gm_file), replica_item,
				    &files, &out->nfiles);
	out->files = files;
	return rc;
}

/* ---- the analysis section of a grid file ------------------------------- */

#define O struct gm_owner
static const struct ju_fld owner_flds[] = {
	JU_NUM("runningJobs", O, running_jobs, 0, INFINITY, 0),
	JU_NUM("queuedJobs", O, queued_jobs, 0, INFINITY, 0),
	JU_NUM("runningCores", O, running_cores, 0, INFINITY, 0),
	JU_NUM("queuedCores", O, queued_cores, 0, INFINITY, 0),
	JU_NUM("hiSiteSlots", O, hi_site_slots, 0, INFINITY, 0),
	JU_NUM("quotaUsedGB", O, quota_used_gb, 0, INFINITY, 0),
	/* absent or null: unlimited (0 would be a quota nobody fits in) */
	JU_NUMNULL("quotaGB", O, quota_gb, 0, INFINITY),
	JU_FLD_END,
};
#undef O
#define SH struct gm_share
static const struct ju_fld share_flds[] = {
	JU_NUMF("target", SH, target, JU_F_REQ | JU_F_POS, 0, INFINITY, 0),
	JU_NUM("usage", SH, usage, 0, INFINITY, 0),
	JU_FLD_END,
};
#undef SH
static const char *const anal_keys[] = {"users", "workingGroups", "shares",
					"taskClasses", NULL};

static int owner_item(const struct ju_ctx *c, json_t *v, const char *path,
		      const char *key, void *elem)
{
	struct gm_owner *o = elem;
	memset(o, 0, sizeof(*o));
	int rc = ju_str_copy(c, key, strlen(key), path, 1, &o->name);
	return rc == GB_OK ? ju_parse_record(c, v, path, owner_flds, NULL, o)
			   : rc;
}

static int share_item(const struct ju_ctx *c, json_t *v, const char *path,
		      const char *key, void *elem)
{
	struct gm_share *s = elem;
	int rc = ju_str_copy(c, key, strlen(key), path, 1, &s->gshare);
	return rc == GB_OK ? ju_parse_record(c, v, path, share_flds, NULL, s)
			   : rc;
}

/* "TASKID": "S".."C"; the key must be a positive decimal task ID. */
static int class_item(const struct ju_ctx *c, json_t *v, const char *path,
		      const char *key, void *elem)
{
	struct gm_task_class *t = elem;
	char *end = NULL;
	errno = 0;
	long long id = strtoll(key, &end, 10);
	if (key[0] < '0' || key[0] > '9' || *end != '\0' || errno || id < 1)
		return ju_fail(c, GB_ERANGE, path,
			       "expected a task ID (integer >= 1) as the key, "
			       "got '%.64s'",
			       key);
	if (!json_is_string(v))
		return ju_fail(c, GB_ETYPE, path, "expected string, got %s",
			       ju_type_name(v));
	int cls = gm_task_class_parse(json_string_value(v));
	if (cls < 0)
		return ju_fail(c, GB_ERANGE, path,
			       "unknown value '%.64s' (expected \"S\", \"A\", "
			       "\"B\", \"C\")",
			       json_string_value(v));
	t->task_id = id;
	t->cls = (enum an_task_class)cls;
	return GB_OK;
}

static int cmp_class(const void *x, const void *y)
{
	const struct gm_task_class *a = x, *b = y;
	return (a->task_id > b->task_id) - (a->task_id < b->task_id);
}

/* jansson refuses repeated keys, but "01" and "1" are one task: sorted by
** task ID, a neighbour with the same ID is a duplicate. */
static int class_dups(const struct ju_ctx *c, struct gm_task_class *t,
		      size_t n)
{
	if (n > 1)
		qsort(t, n, sizeof(*t), cmp_class);
	for (size_t i = 1; i < n; i++)
		if (t[i - 1].task_id == t[i].task_id)
			return ju_fail(c, GB_EDUP, "analysis.taskClasses",
				       "duplicate task ID %lld", t[i].task_id);
	return GB_OK;
}

int scj_parse_analysis_grid(json_t *analysis, struct arena *a,
			struct gm_analysis_grid *out, char *err, size_t errlen)
{
	struct ju_ctx c = {a, err, errlen, 0, 0};
	if (out == NULL || a == NULL)
		return ju_fail(&c, GB_EINVAL, "", "invalid arguments");
	memset(out, 0, sizeof(*out));
	if (analysis == NULL || json_is_null(analysis))
		return GB_OK;
	int rc = ju_want_object(&c, analysis, "analysis");
	const char *key;
	json_t *v;
	json_object_foreach(analysis, key, v) {
		int known = 0;
		for (size_t i = 0; anal_keys[i]; i++)
			known |= strcmp(anal_keys[i], key) == 0;
		if (rc == GB_OK && !known) {
			char p[JU_PATH];
			ju_path_key(p, sizeof(p), "analysis", key);
			return ju_fail(&c, GB_EINVAL, p, "unknown field");
		}
	}
	void *users = NULL, *groups = NULL, *shares = NULL, *classes = NULL;
	size_t nu = 0, ng = 0;
	if (rc == GB_OK)
		rc = ju_parse_items(&c, json_object_get(analysis, "users"),
				    "analysis.users", 1, SCJ_MAX_OWNERS,
				    sizeof(struct gm_owner), owner_item, &users,
				    &nu);
	if (rc == GB_OK)
		rc = ju_parse_items(
			&c, json_object_get(analysis, "workingGroups"),
			"analysis.workingGroups", 1, SCJ_MAX_OWNERS,
			sizeof(struct gm_owner), owner_item, &groups, &ng);
	if (rc == GB_OK)
		rc = ju_parse_items(&c, json_object_get(analysis, "shares"),
				    "analysis.shares", 1, SCJ_MAX_GSHARES,
				    sizeof(struct gm_share), share_item,
				    &shares, &out->nshares);
	if (rc == GB_OK)
		rc = ju_parse_items(&c, json_object_get(analysis, "taskClasses"),
				    "analysis.taskClasses", 1, SCJ_MAX_CLASSES,
				    sizeof(struct gm_task_class), class_item,
				    &classes, &out->nclasses);
	if (rc == GB_OK)
		rc = class_dups(&c, classes, out->nclasses);
	if (rc != GB_OK)
		return rc;
	/* one array, users first, then the groups marked as such */
	struct gm_owner *own = nu + ng ? ju_alloc_n(&c, nu + ng, sizeof(*own))
				       : NULL;
	if (nu + ng && own == NULL)
		return ju_fail(&c, GB_ENOMEM, "analysis", "out of memory");
	for (size_t i = 0; i < nu; i++)
		own[i] = ((struct gm_owner *)users)[i];
	for (size_t i = 0; i < ng; i++) {
		own[nu + i] = ((struct gm_owner *)groups)[i];
		own[nu + i].is_group = 1;
	}
	out->owners = own;
	out->nowners = nu + ng;
	out->shares = shares;
	out->classes = classes;
	return GB_OK;
}
