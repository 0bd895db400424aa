/*
** gridmodel.c — resolve the grid model for one request into the engine's
** per-task input (gm_resolve, declared in gridmodel.h).
**
** Both `explain` (scenario_jobs.c) and the worker (store_jobs.c) fill a
** gm_grid and a gm_request and call this, so the counts for the task's
** gshare, the link to the task's nucleus and the input locality are derived
** in exactly one place.
**
** Shape: a grid may hold thousands of queues and a request up to 10,000
** jobs x 200 files, so nothing here is queues x files. Locality is computed
** per storage endpoint, not per queue: the request's distinct files are
** sorted once, every replica of a request file becomes a (storage, file)
** hit, the hits are sorted and folded into one row per storage (local MB,
** local files), and each queue then finds its storage's row by binary
** search. Links are handled the same way: the links to the task's nucleus
** are sorted by site once and each queue searches its site. Cost:
** O(R log R + Q log S) for R replicas of request files, Q queues and S
** storages or sites, plus the sort of the request's files.
**
** A file named by several jobs is one file for locality and for the task's
** totals (it is transferred once); each job still counts it in its own
** input_mb, which is what its disk (PJ-17) needs. A replica listed twice
** for the same storage counts once.
**
** Units: job input sizes are MB, locality is GB (PJ-11, PJ-31), with the
** decimal factor 1000 of the scenario formats (GB = 10^9 bytes).
*/
#include "model/gridmodel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gb_error.h"

#define GM_MB_PER_GB 1000.0

/* One distinct input file of the request. */
struct rfile {
	const char *lfn;
	double size_mb;
};

/* A replica of request file `file` on `storage`. */
struct hit {
	const char *storage;
	size_t file;
};

/* What of the request's input one storage holds. */
struct local {
	const char *storage;
	double mb;
	long files;
};

/* A link to the task's nucleus, keyed by its satellite site. */
struct siteref {
	const char *site;
	size_t idx; /* into gm_grid.links */
};

static int rfile_cmp(const void *x, const void *y)
{
	return strcmp(((const struct rfile *)x)->lfn,
		      ((const struct rfile *)y)->lfn);
}

static int hit_cmp(const void *x, const void *y)
{
	const struct hit *a = x, *b = y;
	int r = strcmp(a->storage, b->storage);
	if (r)
		return r;
	return (a->file > b->file) - (a->file < b->file);
}

static int local_key_cmp(const void *key, const void *elem)
{
	return strcmp((const char *)key, ((const struct local *)elem)->storage);
}

static int rfile_key_cmp(const void *key, const void *elem)
{
	return strcmp((const char *)key, ((const struct rfile *)elem)->lfn);
}

/* By site, then by position, so the first row given for a pair wins. */
static int siteref_cmp(const void *x, const void *y)
{
	const struct siteref *a = x, *b = y;
	int r = strcmp(a->site, b->site);
	if (r)
		return r;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

/* Lowest-index link of `site` in the sorted refs, or NULL. */
static const struct gm_link *find_link(const struct gm_grid *g,
				       const struct siteref *refs, size_t n,
				       const char *site)
{
	size_t lo = 0, hi = n;
	while (lo < hi) { /* lower bound */
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(refs[mid].site, site) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && strcmp(refs[lo].site, site) == 0)
		return &g->links[refs[lo].idx];
	return NULL;
}

static int str_eq(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static int nonempty(const char *s)
{
	return s != NULL && s[0] != '\0';
}

/*
** The request's distinct files, sorted by name, into *out (*n of them),
** and the per-job engine view into r->t. Sizes must be finite and >= 0.
*/
static int build_jobs(struct gm_request *r, struct arena *a,
		      struct rfile **out, size_t *n, double *total_mb)
{
	size_t nin = 0;
	for (size_t i = 0; i < r->njobs; i++) {
		if (r->jobs[i].ninputs && r->jobs[i].inputs == NULL)
			return GB_EINVAL;
		if (r->jobs[i].ninputs > SIZE_MAX / sizeof(struct rfile) - nin)
			return GB_ENOMEM;
		nin += r->jobs[i].ninputs;
	}
	struct jb_job *jobs = NULL;
	if (r->njobs) {
		if (r->njobs > SIZE_MAX / sizeof(*jobs))
			return GB_ENOMEM;
		jobs = arena_alloc(a, r->njobs * sizeof(*jobs));
		if (jobs == NULL)
			return GB_ENOMEM;
	}
	struct rfile *files = NULL;
	if (nin) {
		files = arena_alloc(a, nin * sizeof(*files));
		if (files == NULL)
			return GB_ENOMEM;
	}
	size_t k = 0;
	for (size_t i = 0; i < r->njobs; i++) {
		const struct gm_job *j = &r->jobs[i];
		double mb = 0;
		for (size_t f = 0; f < j->ninputs; f++) {
			const struct gm_input *in = &j->inputs[f];
			if (in->lfn == NULL || !isfinite(in->size_mb) ||
			    in->size_mb < 0)
				return GB_EINVAL;
			mb += in->size_mb;
			files[k++] = (struct rfile){in->lfn, in->size_mb};
		}
		jobs[i] = (struct jb_job){j->job_id, j->nevents, mb,
					  (long)j->ninputs};
	}
	if (nin > 1)
		qsort(files, nin, sizeof(*files), rfile_cmp);
	size_t u = 0;
	double total = 0;
	for (size_t i = 0; i < nin; i++) {
		if (u > 0 && strcmp(files[u - 1].lfn, files[i].lfn) == 0)
			continue;
		files[u++] = files[i];
		total += files[i].size_mb;
	}
	r->t.jobs = jobs;
	r->t.njobs = r->njobs;
	*out = files;
	*n = u;
	*total_mb = total;
	return GB_OK;
}

/*
** Fold the replicas of the request's files into one row per storage,
** sorted by storage name.
*/
static int build_locality(const struct gm_grid *g, const struct rfile *files,
			  size_t nfiles, struct arena *a, struct local **out,
			  size_t *n)
{
	*out = NULL;
	*n = 0;
	if (nfiles == 0 || g->nfiles == 0)
		return GB_OK;
	if (g->files == NULL)
		return GB_EINVAL;
	size_t nhits = 0;
	for (size_t i = 0; i < g->nfiles; i++) {
		const struct gm_file *f = &g->files[i];
		if (f->lfn == NULL || (f->nstorages && f->storages == NULL))
			return GB_EINVAL;
		if (f->nstorages > SIZE_MAX / sizeof(struct hit) - nhits)
			return GB_ENOMEM;
		nhits += f->nstorages;
	}
	if (nhits == 0)
		return GB_OK;
	struct hit *hits = arena_alloc(a, nhits * sizeof(*hits));
	if (hits == NULL)
		return GB_ENOMEM;
	size_t h = 0;
	for (size_t i = 0; i < g->nfiles; i++) {
		const struct gm_file *f = &g->files[i];
		const struct rfile *rf = bsearch(f->lfn, files, nfiles,
						 sizeof(*files), rfile_key_cmp);
		if (rf == NULL)
			continue; /* a replica of a file this request does not read */
		for (size_t s = 0; s < f->nstorages; s++) {
			if (f->storages[s] == NULL)
				return GB_EINVAL;
			hits[h++] = (struct hit){f->storages[s],
						 (size_t)(rf - files)};
		}
	}
	if (h == 0)
		return GB_OK;
	qsort(hits, h, sizeof(*hits), hit_cmp);
	size_t nst = 1;
	for (size_t i = 1; i < h; i++)
		nst += strcmp(hits[i - 1].storage, hits[i].storage) != 0;
	struct local *loc = arena_alloc(a, nst * sizeof(*loc));
	if (loc == NULL)
		return GB_ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < h; i++) {
		if (i == 0 || strcmp(hits[i - 1].storage, hits[i].storage)) {
			loc[k++] = (struct local){hits[i].storage, 0, 0};
		} else if (hits[i - 1].file == hits[i].file) {
			continue; /* the same replica listed twice */
		}
		loc[k - 1].mb += files[hits[i].file].size_mb;
		loc[k - 1].files++;
	}
	*out = loc;
	*n = k;
	return GB_OK;
}

/* The links to `nucleus`, sorted by site, and the files queued on them. */
static int build_links(const struct gm_grid *g, const char *nucleus,
		       struct arena *a, struct siteref **out, size_t *n,
		       double *queued)
{
	*out = NULL;
	*n = 0;
	*queued = 0;
	if (g->nlinks == 0)
		return GB_OK;
	if (g->links == NULL)
		return GB_EINVAL;
	size_t cnt = 0;
	for (size_t i = 0; i < g->nlinks; i++) {
		if (g->links[i].site == NULL || g->links[i].nucleus == NULL)
			return GB_EINVAL;
		cnt += str_eq(g->links[i].nucleus, nucleus);
	}
	if (cnt == 0)
		return GB_OK;
	struct siteref *refs = arena_alloc(a, cnt * sizeof(*refs));
	if (refs == NULL)
		return GB_ENOMEM;
	size_t k = 0;
	double sum = 0;
	for (size_t i = 0; i < g->nlinks; i++) {
		const struct gm_link *l = &g->links[i];
		if (!str_eq(l->nucleus, nucleus))
			continue;
		refs[k++] = (struct siteref){l->site, i};
		/* PJ-07 counts what is queued; a missing figure is none. */
		if (isfinite(l->l.queued_files) && l->l.queued_files > 0)
			sum += l->l.queued_files;
	}
	qsort(refs, k, sizeof(*refs), siteref_cmp);
	*out = refs;
	*n = k;
	*queued = sum;
	return GB_OK;
}

int gm_resolve(const struct gm_grid *g, struct gm_request *r, long long now,
	       struct arena *a, struct jb_queue **out, struct jb_env *env)
{
	if (g == NULL || r == NULL || a == NULL || out == NULL || env == NULL)
		return GB_EINVAL;
	*out = NULL;
	if ((g->nqueues && g->queues == NULL) || (r->njobs && r->jobs == NULL) ||
	    r->t.nucleus == NULL || r->t.gshare == NULL)
		return GB_EINVAL;

	/* RC-02: parse once per decision; the engine reads the fixed buffers. */
	if (rc_parse_arch(r->architecture, &r->need.arch) != GB_OK)
		return GB_EINVAL;
	r->t.sw = nonempty(r->architecture) ||
				  nonempty(r->need.container_name) ||
				  nonempty(r->need.sw_version)
			  ? &r->need
			  : NULL;

	struct rfile *files = NULL;
	size_t nfiles = 0;
	double total_mb = 0;
	int rc = build_jobs(r, a, &files, &nfiles, &total_mb);
	if (rc != GB_OK)
		return rc;
	r->t.total_input_gb = total_mb / GM_MB_PER_GB;

	struct local *loc = NULL;
	size_t nloc = 0;
	rc = build_locality(g, files, nfiles, a, &loc, &nloc);
	if (rc != GB_OK)
		return rc;

	struct siteref *refs = NULL;
	size_t nrefs = 0;
	double queued = 0;
	rc = build_links(g, r->t.nucleus, a, &refs, &nrefs, &queued);
	if (rc != GB_OK)
		return rc;

	struct jb_queue *qs = NULL;
	if (g->nqueues) {
		if (g->nqueues > SIZE_MAX / sizeof(*qs))
			return GB_ENOMEM;
		qs = arena_alloc(a, g->nqueues * sizeof(*qs));
		if (qs == NULL)
			return GB_ENOMEM;
	}
	for (size_t i = 0; i < g->nqueues; i++) {
		const struct gm_queue *gq = &g->queues[i];
		struct jb_queue *q = &qs[i];
		*q = gq->q;
		memset(&q->counts, 0, sizeof(q->counts));
		for (size_t c = 0; c < gq->ncounts; c++) {
			if (str_eq(gq->counts[c].gshare, r->t.gshare)) {
				q->counts = gq->counts[c].k;
				break;
			}
		}
		q->link = NULL;
		q->link_blocked = 0;
		if (q->site != NULL) {
			const struct gm_link *l =
				find_link(g, refs, nrefs, q->site);
			if (l != NULL) {
				q->link = &l->l;
				/* PJ-05: CRIC marks a blocked link with
				** closeness -1 as well as with the flag. */
				q->link_blocked = l->blocked ||
						  l->l.closeness == -1.0;
			}
		}
		const struct local *lc = NULL;
		if (q->storage != NULL && nloc)
			lc = bsearch(q->storage, loc, nloc, sizeof(*loc),
				     local_key_cmp);
		double local_mb = lc ? lc->mb : 0;
		long local_files = lc ? lc->files : 0;
		q->local_size = local_mb / GM_MB_PER_GB;
		/* Clamp: summing in another order must not leave -1e-13. */
		q->missing_size = fmax(0.0, total_mb - local_mb) / GM_MB_PER_GB;
		q->missing_files = (long)nfiles - local_files;
	}

	memset(env, 0, sizeof(*env));
	env->now = now;
	env->nucleus_queued_files = queued;
	env->all_sw = g->all_sw;
	*out = qs;
	return GB_OK;
}
