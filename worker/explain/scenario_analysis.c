/*
** scenario_analysis.c — analysis-brokerage scenarios: parsing the
** "analysis" object next to a job scenario, and sca_run, the path
** `explain` decides them by (declared in scenario_analysis.h).
**
** The job-scenario part is scenario_jobs.c's parser, unchanged, so a
** queue or a request means the same in both kinds of file; only the
** owner's load, the task class, the gshare's grid-wide figures (AJ-11)
** and the per-queue user loads are new.
** sca_run hands the parsed state to the worker's own decision path
** (md_decide_analysis): the throttle first, and a throttled task is not
** brokered at all.
*/
#include "explain/scenario_analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gb_error.h"
#include "base/jsonutil.h"

_Static_assert(sizeof(enum an_task_class) == sizeof(int), "enum size");

#define SCA_MAX_QUEUES SCJ_MAX_QUEUES

#define U struct an_user_load
static const struct ju_fld owner_flds[] = {
	JU_BOOL("workingGroup", U, working_group),
	JU_NUM("runningJobs", U, running_jobs, 0, INFINITY, 0),
	JU_NUM("queuedJobs", U, queued_jobs, 0, INFINITY, 0),
	JU_NUM("runningCores", U, running_cores, 0, INFINITY, 0),
	JU_NUM("queuedCores", U, queued_cores, 0, INFINITY, 0),
	JU_BOOL("quotaExceeded", U, quota_exceeded),
	JU_NUM("shareUsage", U, share_usage, 0, INFINITY, 0),
	JU_NUM("shareTarget", U, share_target, 0, INFINITY, 0),
	JU_NUM("hiSiteSlots", U, hi_site_slots, 0, INFINITY, 0),
	JU_FLD_END,
};
#undef U

#define Q struct gm_analysis_queue
static const struct ju_fld queue_flds[] = {
	JU_NUM("trr", Q, trr, 0, INFINITY, 0),
	JU_NUM("nqUser", Q, nq_user, 0, INFINITY, 0),
	JU_NUM("nrUser", Q, nr_user, 0, INFINITY, 0),
	JU_NUM("nUsers", Q, nusers, 0, INFINITY, 0),
	JU_NUM("taskFailed", Q, task_failed, 0, INFINITY, 0),
	JU_NUM("taskClosed", Q, task_closed, 0, INFINITY, 0),
	JU_NUM("taskFinished", Q, task_finished, 0, INFINITY, 0),
	JU_FLD_END,
};
#undef Q

/* The flat keys of "analysis": the class, and AJ-11's grandRatio or the
** grid-wide counts it is made of (NAN: not given). */
struct sca_top {
	enum an_task_class task_class;
	double grid_queued, grid_running, grand_ratio;
};

/* In the order of enum an_task_class; the default B is set by hand. */
static const char *const class_words[] = {"S", "A", "B", "C", NULL};
static const struct ju_fld top_flds[] = {
	JU_ENUM("taskClass", struct sca_top, task_class, class_words),
	JU_NUMNULL("gridQueued", struct sca_top, grid_queued, 0, INFINITY),
	JU_NUMNULL("gridRunning", struct sca_top, grid_running, 0, INFINITY),
	JU_NUMNULL("grandRatio", struct sca_top, grand_ratio, 0, INFINITY),
	JU_FLD_END,
};
static const char *const anal_keys[] = {"owner", "queues", NULL};

static int queue_item(const struct ju_ctx *c, json_t *v, const char *path,
		      const char *key, void *elem)
{
	struct gm_analysis_queue *q = elem;
	memset(q, 0, sizeof(*q));
	int rc = ju_str_copy(c, key, strlen(key), path, 1, &q->name);
	return rc == GB_OK ? ju_parse_record(c, v, path, queue_flds, NULL, q)
			   : rc;
}

/* Every per-queue load names a queue of the grid: a typo must not
** silently leave a queue without its user load. */
static int queues_known(const struct ju_ctx *c, const struct gm_grid *g,
			const struct gm_analysis_queue *l, size_t n)
{
	if (n == 0)
		return GB_OK;
	struct ju_nameref *names =
		g->nqueues ? ju_alloc_n(c, g->nqueues, sizeof(*names)) : NULL;
	if (g->nqueues && names == NULL)
		return ju_fail(c, GB_ENOMEM, "analysis.queues", "out of memory");
	for (size_t i = 0; i < g->nqueues; i++)
		names[i] = (struct ju_nameref){g->queues[i].q.name, i};
	if (g->nqueues > 1)
		qsort(names, g->nqueues, sizeof(*names), ju_nameref_cmp);
	for (size_t i = 0; i < n; i++) {
		if (names && bsearch(l[i].name, names, g->nqueues,
				     sizeof(*names), ju_nameref_key_cmp))
			continue;
		char p[JU_PATH];
		ju_path_qkey(p, sizeof(p), "analysis.queues", l[i].name);
		return ju_fail(c, GB_ENOTFOUND, p,
			       "no queue of that name in queues");
	}
	return GB_OK;
}

/* AJ-11 without grid-wide figures in the file: the grid is the
** scenario's queues, so their counts of the task's gshare are summed. */
static void grid_from_queues(struct sca_scenario *out)
{
	const struct gm_grid *g = &out->job.grid;
	const char *gs = out->job.req.t.gshare;
	double nq = 0, nr = 0;
	for (size_t i = 0; gs && i < g->nqueues; i++)
		for (size_t j = 0; j < g->queues[i].ncounts; j++) {
			const struct gm_counts *k = &g->queues[i].counts[j];
			if (k->gshare == NULL || strcmp(k->gshare, gs) != 0)
				continue;
			nq += k->k.defined + k->k.assigned + k->k.activated +
			      k->k.starting;
			nr += k->k.running;
		}
	out->state.grid_queued = nq;
	out->state.grid_running = nr;
}

/* AJ-11's figures: grandRatio r (read as r queued per 1 running, which
** divides back to r exactly), or gridQueued with gridRunning, or none. */
static int grid_figures(const struct ju_ctx *c, const struct sca_top *top,
			struct sca_scenario *out)
{
	int has_q = !isnan(top->grid_queued),
	    has_r = !isnan(top->grid_running),
	    has_ratio = !isnan(top->grand_ratio);
	if (has_ratio && (has_q || has_r))
		return ju_fail(c, GB_EINVAL, "analysis.grandRatio",
			       "give grandRatio or gridQueued and gridRunning, "
			       "not both");
	if (has_q != has_r)
		return ju_fail(c, GB_EMISSING,
			       has_q ? "analysis.gridRunning"
				     : "analysis.gridQueued",
			       "missing (gridQueued and gridRunning go "
			       "together)");
	if (has_ratio) {
		out->state.grid_queued = top->grand_ratio;
		out->state.grid_running = 1;
	} else if (has_q) {
		out->state.grid_queued = top->grid_queued;
		out->state.grid_running = top->grid_running;
	} else {
		grid_from_queues(out);
	}
	return GB_OK;
}

/* The "analysis" object into out->state and out->task_class. */
static int parse_analysis(const struct ju_ctx *c, json_t *an,
			  struct sca_scenario *out)
{
	struct sca_top top = {AN_CLASS_B, NAN, NAN, NAN};
	out->task_class = AN_CLASS_B;
	if (an == NULL || json_is_null(an))
		return grid_figures(c, &top, out);
	int rc = ju_parse_record(c, an, "analysis", top_flds, anal_keys, &top);
	json_t *cls = json_object_get(an, "taskClass");
	if (rc == GB_OK && (cls == NULL || json_is_null(cls)))
		top.task_class = AN_CLASS_B;
	out->task_class = top.task_class;
	if (rc == GB_OK)
		rc = grid_figures(c, &top, out);
	json_t *owner = json_object_get(an, "owner");
	if (rc == GB_OK && owner != NULL && !json_is_null(owner))
		rc = ju_parse_record(c, owner, "analysis.owner", owner_flds,
				     NULL, &out->state.user);
	void *qs = NULL;
	if (rc == GB_OK)
		rc = ju_parse_items(c, json_object_get(an, "queues"),
				    "analysis.queues", 1, SCA_MAX_QUEUES,
				    sizeof(struct gm_analysis_queue), queue_item,
				    &qs, &out->state.nqueues);
	out->state.queues = qs;
	if (rc == GB_OK)
		rc = queues_known(c, &out->job.grid, out->state.queues,
				  out->state.nqueues);
	return rc;
}

int sca_is_analysis_scenario(json_t *root)
{
	if (!json_is_object(root) || json_object_get(root, "queues") == NULL ||
	    json_object_get(root, "kind") != NULL)
		return 0;
	json_t *tt = json_object_get(json_object_get(root, "task"), "taskType");
	return json_is_string(tt) && strcmp(json_string_value(tt), "anal") == 0;
}

int sca_parse_scenario(json_t *root, struct arena *a, struct sca_scenario *out,
		       char *err, size_t errlen)
{
	return sca_parse_scenario_opts(root, a, NULL, out, err, errlen);
}

int sca_parse_scenario_opts(json_t *root, struct arena *a,
			    const struct scj_opts *o, struct sca_scenario *out,
			    char *err, size_t errlen)
{
	struct ju_ctx c = {a, err, errlen, 1, 0};
	int rc = ju_scenario_begin(&c, root, out, sizeof(*out));
	if (rc != GB_OK)
		return rc;
	/* The job parser refuses keys it does not know: hand it a shallow
	** copy without ours (it copies what it keeps into the arena). */
	json_t *jobs = json_is_object(root) ? json_copy(root) : NULL;
	if (json_is_object(root) && jobs == NULL)
		return ju_fail(&c, GB_ENOMEM, "", "out of memory");
	if (jobs)
		json_object_del(jobs, "analysis");
	rc = scj_parse_scenario_opts(jobs ? jobs : root, a, o, &out->job, err,
				     errlen);
	json_decref(jobs);
	if (rc != GB_OK)
		return rc;
	if (!out->job.req.an.is_analysis)
		return ju_fail(&c, GB_ERANGE, "task.taskType",
			       "expected \"anal\" in an analysis scenario "
			       "(one with an \"analysis\" object)");
	rc = parse_analysis(&c, json_object_get(root, "analysis"), out);
	if (rc != GB_OK)
		return rc;
	/* AJ-04 looks at the User Analysis share only, and only when its
	** target is known. */
	const char *gs = out->job.req.t.gshare;
	out->state.user.user_analysis = gs && strcmp(gs, "User Analysis") == 0 &&
					out->state.user.share_target > 0;
	out->state.user.task_class = out->task_class;
	return GB_OK;
}

int sca_run(const struct sca_scenario *s, struct arena *a,
	    struct md_analysis *out)
{
	if (s == NULL)
		return GB_EINVAL;
	return md_decide_analysis(&s->job.grid, &s->job.req, &s->state,
				  s->task_class, &s->job.params, s->job.now,
				  s->job.seed, a, out);
}
