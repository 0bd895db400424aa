/*
** gridmodel_analysis.c — the analysis brokerage's input from the grid model:
** the words of the queue types and classes, and gm_analysis_resolve, which
** wraps the production view of each queue (gm_resolve) with what the
** analysis rules read (and turns the gshare's grid-wide counts into the
** grandRatio of AJ-11). Shared by `explain` (scenario_analysis.c) and the
** worker (route_jobs.c), so both derive the engine's input one way.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gb_error.h"
#include "model/gridmodel.h"

static const char *const qtype_names[] = {
	[AB_QT_ANALYSIS] = "analysis",
	[AB_QT_UNIFIED] = "unified",
	[AB_QT_PRODUCTION] = "production",
	[AB_QT_OTHER] = "other",
};
static const char *const sclass_names[] = {
	[AN_SITE_HI] = "hi", [AN_SITE_MID] = "mid", [AN_SITE_LO] = "lo"};
static const char *const tclass_names[] = {
	[AN_CLASS_S] = "S", [AN_CLASS_A] = "A", [AN_CLASS_B] = "B",
	[AN_CLASS_C] = "C"};

#define NELEM(a) (sizeof(a) / sizeof(*(a)))

static const char *name_of(const char *const *names, size_t n, int v)
{
	return v >= 0 && (size_t)v < n ? names[v] : NULL;
}

static int parse_in(const char *const *names, size_t n, const char *s)
{
	if (s == NULL)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], s) == 0)
			return (int)i;
	return -1;
}

const char *gm_queue_type_name(enum ab_queue_type t)
{
	return name_of(qtype_names, NELEM(qtype_names), (int)t);
}
int gm_queue_type_parse(const char *s)
{
	return parse_in(qtype_names, NELEM(qtype_names), s);
}
const char *gm_site_class_name(enum an_site_class c)
{
	return name_of(sclass_names, NELEM(sclass_names), (int)c);
}
int gm_site_class_parse(const char *s)
{
	return parse_in(sclass_names, NELEM(sclass_names), s);
}
const char *gm_task_class_name(enum an_task_class c)
{
	return name_of(tclass_names, NELEM(tclass_names), (int)c);
}
int gm_task_class_parse(const char *s)
{
	return parse_in(tclass_names, NELEM(tclass_names), s);
}

static int cmp_aq(const void *a, const void *b)
{
	const struct gm_analysis_queue *x = a, *y = b;
	return strcmp(x->name, y->name);
}

int gm_analysis_resolve(const struct gm_grid *g, const struct jb_queue *queues,
		    const struct gm_request *r, const struct gm_analysis_state *st,
		    enum an_task_class tclass, struct arena *a,
		    struct ab_queue **out, struct ab_task *t)
{
	if (g == NULL || (g->nqueues && queues == NULL) || r == NULL ||
	    st == NULL || a == NULL || out == NULL || t == NULL ||
	    !r->an.is_analysis || r->njobs == 0 ||
	    (st->nqueues && st->queues == NULL) ||
	    !(isfinite(st->grid_queued) && st->grid_queued >= 0) ||
	    !(isfinite(st->grid_running) && st->grid_running >= 0))
		return GB_EINVAL;
	/* A sorted copy of the per-queue loads: one bsearch per queue
	** instead of queues x loads comparisons. */
	struct gm_analysis_queue *loads = NULL;
	if (st->nqueues) {
		loads = arena_alloc(a, st->nqueues * sizeof(*loads));
		if (loads == NULL)
			return GB_ENOMEM;
		memcpy(loads, st->queues, st->nqueues * sizeof(*loads));
		for (size_t i = 0; i < st->nqueues; i++)
			if (loads[i].name == NULL)
				return GB_EINVAL;
		qsort(loads, st->nqueues, sizeof(*loads), cmp_aq);
	}
	struct ab_queue *qs =
		arena_alloc(a, (g->nqueues ? g->nqueues : 1) * sizeof(*qs));
	if (qs == NULL)
		return GB_ENOMEM;
	for (size_t i = 0; i < g->nqueues; i++) {
		const struct gm_queue *gq = &g->queues[i];
		const struct jb_queue *q = &queues[i];
		const struct jb_counts *k = &q->counts;
		struct gm_analysis_queue key = {.name = q->name};
		const struct gm_analysis_queue *l =
			loads ? bsearch(&key, loads, st->nqueues,
					sizeof(*loads), cmp_aq)
			      : NULL;
		qs[i] = (struct ab_queue){
			.q = q,
			.type = gq->type,
			.is_vp = gq->is_vp,
			.site_class = gq->site_class,
			.load = {
				.nq = k->defined + k->assigned + k->activated +
				      k->starting,
				.nr = k->running,
				.trr = l ? l->trr : 0,
				.nq_user = l ? l->nq_user : 0,
				.nr_user = l ? l->nr_user : 0,
				.nusers = l ? l->nusers : 0,
			},
			.task_failed = l ? l->task_failed : 0,
			.task_closed = l ? l->task_closed : 0,
			.task_finished = l ? l->task_finished : 0,
		};
	}
	double max_in = 0;
	for (size_t i = 0; i < r->njobs; i++) {
		double in = 0;
		for (size_t f = 0; f < r->jobs[i].ninputs; f++)
			in += r->jobs[i].inputs[f].size_mb;
		if (in > max_in)
			max_in = in;
	}
	const char *gs = r->t.gshare ? r->t.gshare : "";
	*t = (struct ab_task){
		.t = &r->t,
		.task_priority = r->an.task_priority,
		.ram_per_core = r->an.ram_per_core,
		.input_disk_count = max_in,
		/* AJ-14 multiplies outDiskCount by the input: a per-event
		** count has no meaning there, so it adds nothing. */
		.out_disk_ratio =
			r->t.out_disk_unit != JB_OUT_RATIO ? 0 : r->t.out_disk_count,
		.excluded_sites = r->an.excluded_sites,
		.nexcluded = r->an.nexcluded,
		.included_sites = r->an.included_sites,
		.nincluded = r->an.nincluded,
		.avoid_vp = r->an.avoid_vp,
		/* AJ-11: PanDA's grandRatio, None (NAN) without running. */
		.grand_ratio = st->grid_running > 0
				       ? st->grid_queued / st->grid_running
				       : NAN,
		.user_analysis = strcmp(gs, "User Analysis") == 0 ||
				 strcmp(gs, "Express Analysis") == 0,
		.task_class = tclass,
		.nj = (double)r->njobs,
		.all_sw = g->all_sw,
	};
	*out = qs;
	return GB_OK;
}
