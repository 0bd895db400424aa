/*
** analbroker_filters.c — the filter rows of the analysis job brokerage
** (AJ-05..AJ-20; RC-* through swcheck.c): the functions behind
** ab_filters[] and the table itself.
**
** Split from analbroker.c (the passes, AJ-28, weights and the best 10) to
** keep each file readable; both read struct ab_ctx through
** analbroker_internal.h. A row keeps its queue (returns 1) or records one
** reason with dec_reject() and returns 0; the table order is the order of
** the stage summary. Rules shared with the production brokerage (AJ-09 =
** PJ-12, AJ-10 = PJ-13, AJ-12 = PJ-14, AJ-16 = PJ-21) call the same
** checks as the production rows (jb_check_* of jobbroker.h) with their own
** rule IDs.
**
** Interpretations (where the seed is silent or the public code differs):
** - AJ-05: the seed's types "analysis" and "unified"; the caller maps
**   CRIC's type into enum ab_queue_type.
** - AJ-06: a list entry matches a queue by its site or its own name (CRIC
**   lists hold either). excludedSite wins over everything. The include
**   list is includedSite plus the pre-assigned queues ("pre-assigned
**   queues are specified in includedSite or site"): with either non-empty
**   a queue must be in one of them.
** - AJ-07: only "online" passes (the seed); the public code also skips
**   offline pre-assigned queues, we follow the seed: pre-assigned passes
**   any status.
** - AJ-08: the input is at the queue's storage when it is complete enough,
**   as in the public code: at most MAX_MISSING_INPUT_FILES files missing
**   there and at least MIN_INPUT_COMPLETENESS percent of the files (the
**   jobs' input files) present. A task without input files passes
**   everywhere. IO_INTENSITY_CUTOFF_USER unset (NAN) never suppresses the
**   check, because ioIntensity <= NAN is false.
** - AJ-11: PanDA's overload test (AtlasAnalJobBroker), with the counts
**   of the task's gshare: a VP queue is overloaded when queued >
**   OVERLOAD_MIN_QUEUE and (running == 0 or queued / running >
**   OVERLOAD_RATIO_OFFSET x grandRatio), both strictly; "queued" is
**   defined + activated + assigned + starting, the same count as AJ-19,
**   and grandRatio the gshare's grid-wide queued / running
**   (ab_task.grand_ratio). When nothing of the gshare runs on the grid
**   PanDA's grandRatio is None, and its test never reads it: every queue
**   then has running == 0. A NAN grand_ratio with a queue that has running
**   jobs (inconsistent input) compares false: not overloaded. Only VP
**   queues are tested (the seed's AJ-11); PanDA's "-overloaded" of other
**   queues is not a rule of ours.
** - AJ-12: rc_check() gets the task's "ALL" dictionary (ab_task.all_sw),
**   so RC-05 resolves a container's source path through it as the
**   production rule does.
** - AJ-14: the seed's formula with outDiskCount as a ratio of the input
**   (analysis tasks give outDiskCount per input MB), not PJ-17's 500 MB
**   floor, which the analysis seed does not have.
** - AJ-15: free space is compared with STORAGE_MIN_FREE_SIZE_OUTPUT (the
**   seed's 200 GB); the queue's local storage is the one the jobs write.
** - AJ-16: the walltime of the task's smallest job (fewest events), as
**   PJ-21; a task that gives no jobs has no walltime estimate and passes.
** - AJ-19: the seed's 2 x max(20, running), not the public code's
**   max(20, 2 x running) (reference, discrepancy 7).
*/
#include "analbroker_internal.h"

#include <math.h>
#include <string.h>

#include "jobbroker.h"

static const char *str_or_empty(const char *s)
{
	return s ? s : "";
}

static int in_list(const char *const *list, size_t n, const char *a,
		   const char *b)
{
	for (size_t i = 0; i < n; i++) {
		const char *s = list[i];
		if (s == NULL)
			continue;
		if ((a && strcmp(s, a) == 0) || (b && strcmp(s, b) == 0))
			return 1;
	}
	return 0;
}

static const char *type_name(enum ab_queue_type t)
{
	switch (t) {
	case AB_QT_ANALYSIS:
		return "analysis";
	case AB_QT_UNIFIED:
		return "unified";
	case AB_QT_PRODUCTION:
		return "production";
	case AB_QT_OTHER:
		break;
	}
	return "other";
}

/* ---- candidates --------------------------------------------------------- */

/* AJ-05: analysis or unified queues only. */
static int f_type(const struct ab_ctx *ctx, const struct ab_queue *q,
		  struct dec_candidate *c)
{
	if (q->type == AB_QT_ANALYSIS || q->type == AB_QT_UNIFIED)
		return 1;
	return dec_reject(c, ctx->stage, "AJ-05", "type",
			  "type %s is neither analysis nor unified",
			  type_name(q->type), 0, 0, 0, 0);
}

/* AJ-06: excludedSite, then includedSite (+ the pre-assigned queues). */
static int f_sites(const struct ab_ctx *ctx, const struct ab_queue *q,
		   struct dec_candidate *c)
{
	const struct ab_task *at = ctx->at;
	const struct jb_queue *jq = q->q;
	if (in_list(at->excluded_sites, at->nexcluded, jq->site, jq->name))
		return dec_reject(c, ctx->stage, "AJ-06", "excluded",
				  "site %s is in excludedSite (%.0f entries)",
				  str_or_empty(jq->site),
				  (double)at->nexcluded, 0, 0, 0);
	if (at->nincluded == 0 && ctx->t->npreassigned == 0)
		return 1;
	if (ctx->f.preassigned ||
	    in_list(at->included_sites, at->nincluded, jq->site, jq->name))
		return 1;
	return dec_reject(c, ctx->stage, "AJ-06", "notincluded",
			  "site %s is not in includedSite (%.0f entries) nor "
			  "pre-assigned (%.0f queues)",
			  str_or_empty(jq->site), (double)at->nincluded,
			  (double)ctx->t->npreassigned, 0, 0);
}

/* ---- persistent filters ------------------------------------------------- */

/* AJ-07: online, unless pre-assigned. */
static int f_status(const struct ab_ctx *ctx, const struct ab_queue *q,
		    struct dec_candidate *c)
{
	const char *st = q->q->status;
	if (ctx->f.preassigned || (st && strcmp(st, "online") == 0))
		return 1;
	return dec_reject(c, ctx->stage, "AJ-07", "status",
			  "status %s is not online", st ? st : "(none)", 0, 0,
			  0, 0);
}

/* AJ-08: the task's input must be at the queue's storage, complete
** enough: few files missing and most of them there. */
static int f_locality(const struct ab_ctx *ctx, const struct ab_queue *q,
		      struct dec_candidate *c)
{
	const struct jb_queue *jq = q->q;
	double missing = (double)jq->missing_files;
	if (!ctx->locality || missing == 0 || !(ctx->total_files > 0))
		return 1;
	double complete = 100 * (ctx->total_files - missing) / ctx->total_files;
	if (missing > ctx->max_missing_files)
		return dec_reject(c, ctx->stage, "AJ-08", "locality",
				  "%s: %.0f input files missing > "
				  "MAX_MISSING_INPUT_FILES %.0f (of %.0f)",
				  str_or_empty(jq->storage), missing,
				  ctx->max_missing_files, ctx->total_files, 0);
	if (complete < ctx->min_completeness)
		return dec_reject(c, ctx->stage, "AJ-08", "locality",
				  "%s: input %.4g%% complete < "
				  "MIN_INPUT_COMPLETENESS %.4g%% (%.0f of %.0f "
				  "files missing)",
				  str_or_empty(jq->storage), complete,
				  ctx->min_completeness, missing,
				  ctx->total_files);
	return 1;
}

/* AJ-09 = PJ-12: an IO-saturated queue refuses IO-heavy tasks. */
static int f_diskio(const struct ab_ctx *ctx, const struct ab_queue *q,
		    struct dec_candidate *c)
{
	return jb_check_diskio(ctx->t, q->q, ctx->max_diskio_default,
			       ctx->stage, "AJ-09", c);
}

/* AJ-10 = PJ-13: core count matching (coreCount 0 takes any task). */
static int f_cores(const struct ab_ctx *ctx, const struct ab_queue *q,
		   struct dec_candidate *c)
{
	return jb_check_cores(ctx->t, q->q, ctx->stage, "AJ-10", c);
}

/* AJ-11: virtual placement queues: avoidVP, or overloaded. */
static int f_vp(const struct ab_ctx *ctx, const struct ab_queue *q,
		struct dec_candidate *c)
{
	if (!q->is_vp)
		return 1;
	if (ctx->at->avoid_vp)
		return dec_reject(c, ctx->stage, "AJ-11", "avoid_vp",
				  "virtual placement queue, task sets avoidVP",
				  NULL, 0, 0, 0, 0);
	const struct jb_counts *k = &q->q->counts;
	double queued = k->defined + k->activated + k->assigned + k->starting;
	double running = k->running;
	if (!(queued > ctx->overload_min_queue))
		return 1;
	if (running == 0)
		return dec_reject(c, ctx->stage, "AJ-11", "overloaded_vp",
				  "VP queue: %.0f queued > OVERLOAD_MIN_QUEUE "
				  "%.4g and %.0f running",
				  NULL, queued, ctx->overload_min_queue,
				  running, 0);
	double ratio = queued / running;
	double limit = ctx->overload_ratio * ctx->at->grand_ratio;
	if (!(ratio > limit))
		return 1;
	return dec_reject(c, ctx->stage, "AJ-11", "overloaded_vp",
			  "VP queue: queued / running %.4g > %.4g = "
			  "OVERLOAD_RATIO_OFFSET x grandRatio, with %.0f "
			  "queued (> OVERLOAD_MIN_QUEUE) and %.0f running",
			  NULL, ratio, limit, queued, running);
}

/* AJ-12 = PJ-14: release/cache, RC-* for AUTO queues, with the "ALL"
** dictionary RC-05 resolves container names through. */
static int f_software(const struct ab_ctx *ctx, const struct ab_queue *q,
		      struct dec_candidate *c)
{
	return jb_check_release(ctx->t, q->q, ctx->at->all_sw, ctx->stage,
				"AJ-12", c);
}

/* AJ-13: memory within [minrss, maxrss] x cores. */
static int f_memory(const struct ab_ctx *ctx, const struct ab_queue *q,
		    struct dec_candidate *c)
{
	const struct jb_queue *jq = q->q;
	double cores = (double)ctx->f.cores;
	double mem = ab_memory_mb(ctx->at, ctx->f.cores);
	if (jq->max_rss_per_core > 0 && mem > jq->max_rss_per_core * cores)
		return dec_reject(c, ctx->stage, "AJ-13", "highmemory",
				  "memory %g MB > maxrss %g MB (%g cores)",
				  NULL, mem, jq->max_rss_per_core * cores,
				  cores, 0);
	if (jq->min_rss_per_core > 0 && mem < jq->min_rss_per_core * cores)
		return dec_reject(c, ctx->stage, "AJ-13", "lowmemory",
				  "memory %g MB < minrss %g MB (%g cores)",
				  NULL, mem, jq->min_rss_per_core * cores,
				  cores, 0);
	return 1;
}

/* AJ-14: the job's disk must be below maxwdir / cores. */
static int f_disk(const struct ab_ctx *ctx, const struct ab_queue *q,
		  struct dec_candidate *c)
{
	const struct jb_queue *jq = q->q;
	if (!(jq->maxwdir > 0))
		return 1; /* maxwdir unknown: nothing to compare with */
	double disk = ab_disk_mb(ctx->at, jq->direct_access);
	double limit = jq->maxwdir / (double)ctx->f.cores;
	if (disk < limit)
		return 1;
	return dec_reject(c, ctx->stage, "AJ-14", "disk",
			  "disk %g MB >= maxwdir %g MB / %g cores",
			  NULL, disk, jq->maxwdir, (double)ctx->f.cores, 0);
}

/* AJ-15: free space at the storage, and not blacklisted. */
static int f_storage(const struct ab_ctx *ctx, const struct ab_queue *q,
		     struct dec_candidate *c)
{
	const struct jb_queue *jq = q->q;
	if (!(jq->storage_free > ctx->storage_min_free))
		return dec_reject(c, ctx->stage, "AJ-15", "space",
				  "%s: %.0f GB free <= "
				  "STORAGE_MIN_FREE_SIZE_OUTPUT %.0f GB",
				  str_or_empty(jq->storage), jq->storage_free,
				  ctx->storage_min_free, 0, 0);
	if (jq->storage_blacklisted)
		return dec_reject(c, ctx->stage, "AJ-15", "blacklist",
				  "storage %s is blacklisted",
				  str_or_empty(jq->storage), 0, 0, 0, 0);
	return 1;
}

/* AJ-16 = PJ-21: walltime of the smallest job within [mintime, maxtime];
** a task that gives no jobs has no estimate and passes. */
static int f_walltime(const struct ab_ctx *ctx, const struct ab_queue *q,
		      struct dec_candidate *c)
{
	if (ctx->min_nevents < 0)
		return 1;
	return jb_check_walltime(ctx->t, q->q, ctx->min_nevents, ctx->f.cores,
				 ctx->stage, "AJ-16", c);
}

/* AJ-17: no pilot for 3 hours. */
static int f_pilot(const struct ab_ctx *ctx, const struct ab_queue *q,
		   struct dec_candidate *c)
{
	long long last = q->q->last_pilot;
	if (last == 0)
		return dec_reject(c, ctx->stage, "AJ-17", "nopilot",
				  "no pilot ever", NULL, 0, AB_NOPILOT_S, 0,
				  0);
	double age = (double)(ctx->now - last);
	if (age <= AB_NOPILOT_S)
		return 1;
	return dec_reject(c, ctx->stage, "AJ-17", "nopilot",
			  "last pilot %.0f s ago > %.0f s", NULL, age,
			  AB_NOPILOT_S, 0, 0);
}

/* ---- temporary filters -------------------------------------------------- */

/* AJ-18: too many of the task's jobs failed or closed there recently. */
static int f_bad_jobs(const struct ab_ctx *ctx, const struct ab_queue *q,
		      struct dec_candidate *c)
{
	double bad = q->task_failed + q->task_closed;
	double limit = fmax(2 * q->task_finished, ctx->min_bad_jobs);
	if (bad < limit)
		return 1;
	return dec_reject(c, ctx->stage, "AJ-18", "badjobs",
			  "%.0f failed + closed >= max(2 x %.0f finished, "
			  "MIN_BAD_JOBS_TO_SKIP_PQ) = %.0f in the last %.0f h",
			  NULL, bad, q->task_finished, limit, ctx->tw_done_h);
}

/* AJ-19: too many queued jobs for the running ones. */
static int f_queued(const struct ab_ctx *ctx, const struct ab_queue *q,
		    struct dec_candidate *c)
{
	const struct jb_counts *k = &q->q->counts;
	double queued = k->defined + k->activated + k->assigned + k->starting;
	double limit = 2 * fmax(AB_QUEUED_FLOOR, k->running);
	if (!(queued > limit))
		return 1;
	return dec_reject(c, ctx->stage, "AJ-19", "cap_rt",
			  "%.0f queued > 2 x max(%.0f, running %.0f) = %.0f",
			  NULL, queued, AB_QUEUED_FLOOR, k->running, limit);
}

/* AJ-20: the user has too many queued jobs there (AJ-21..AJ-23). */
static int f_stabilizer(const struct ab_ctx *ctx, const struct ab_queue *q,
			struct dec_candidate *c)
{
	const struct an_stab *s = &ctx->f.stab;
	if (!s->skip)
		return 1;
	return dec_reject(c, ctx->stage, "AJ-20", "user_queue",
			  "user has %.0f queued > max_q_len %.4g (queue "
			  "%.0f queued, %.0f running)",
			  NULL, q->load.nq_user, s->max_q_len, q->load.nq,
			  q->load.nr);
}

/* clang-format off */
const struct ab_filter ab_filters[] = {
	{"type",           "AJ-05", 0, f_type},
	{"sites",          "AJ-06", 0, f_sites},
	{"status",         "AJ-07", 1, f_status},
	{"locality",       "AJ-08", 1, f_locality},
	{"disk io",        "AJ-09", 1, f_diskio},
	{"core count",     "AJ-10", 1, f_cores},
	{"vp",             "AJ-11", 1, f_vp},
	{"software",       "AJ-12", 1, f_software},
	{"memory",         "AJ-13", 1, f_memory},
	{"disk",           "AJ-14", 1, f_disk},
	{"storage",        "AJ-15", 1, f_storage},
	{"walltime",       "AJ-16", 1, f_walltime},
	{"pilot",          "AJ-17", 1, f_pilot},
	{"bad jobs",       "AJ-18", 0, f_bad_jobs},
	{"queued",         "AJ-19", 0, f_queued},
	{"user queue",     "AJ-20", 0, f_stabilizer},
	{NULL, NULL, 0, NULL},
};
/* clang-format on */

_Static_assert(sizeof(ab_filters) / sizeof(ab_filters[0]) == AB_NFILTERS + 1,
	       "AB_NFILTERS must count the rows of ab_filters[]");

int ab_row_applies(const struct ab_ctx *ctx, const struct ab_filter *f)
{
	if (f->fn == f_locality)
		return ctx->locality;
	if (f->fn == f_software)
		return ctx->t->sw != NULL;
	return 1;
}
