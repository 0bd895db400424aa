/*
** scenario_write_jobs.c — job and analysis scenarios written from the
** grid and the request as the worker holds them (scw_jobs, scw_analysis,
** declared in scenario_write.h): the inverse of scenario_jobs.c,
** scenario_jobs_grid.c and scenario_analysis.c.
**
** The flat records are writer tables (scenario_write.c) with the
** parsers' keys; what is not flat is by hand: releases (a word or a
** list), the per-gshare counts and file replicas (maps), the "sw" map
** (the dictionaries' own JSON text, parsed again, since that text is what
** the parser and MariaDB keep and no second writer of RC-01 dictionaries
** can then drift from gm_parse_sw), and the analysis state's per-queue
** loads, of which only those at grid queues are written (the parser
** refuses a load naming no queue of the grid, and gm_analysis_resolve
** never reads one). The gshare's grid-wide counts (AJ-11) are always
** written as gridQueued and gridRunning, never left for the parser to
** sum from the queues.
*/
#include "explain/scenario_write.h"

#include <stdlib.h>
#include <string.h>

#include "base/jsonutil.h"
#include "gb_error.h"

/* SCW_K_ENUM reads an int from enum members. */
_Static_assert(sizeof(enum jb_es) == sizeof(int), "enum size");
_Static_assert(sizeof(enum ab_queue_type) == sizeof(int), "enum size");
_Static_assert(sizeof(enum an_site_class) == sizeof(int), "enum size");
_Static_assert(sizeof(enum tb_job_scope) == sizeof(int), "enum size");
_Static_assert(sizeof(enum rc_kind) == sizeof(int), "enum size");

/* The parsers' words, in the order of their enums (jb_es, ab_queue_type,
** an_site_class, tb_job_scope, rc_kind; ramCountUnit MB is 0). */
static const char *const es_words[] = {"none", "allowed", "only"};
static const char *const qtype_words[] = {"analysis", "unified",
					  "production", "other"};
static const char *const sclass_words[] = {"hi", "mid", "lo"};
static const char *const scope_words[] = {"satellites", "nucleus"};
static const char *const kind_words[] = {"release", "nightly"};
static const char *const ram_words[] = {"MB", "MBPerCore"};


/* ---- the records --------------------------------------------------------- */

/* The records of job and analysis scenarios, rows in the parsers' order;
** what is not flat (releases, storage, counts, sw, jobs) is by hand. */
enum {
	QUEUE,  /* struct jb_queue: "queues" */
	QSTORE, /* struct jb_queue: a queue's "storage" */
	QEXTRA, /* struct gm_queue: the analysis and timeout attributes */
	COUNTS, /* struct jb_counts: a queue's counts for one gshare */
	LINK,   /* struct gm_link: "links" */
	REQ,    /* struct gm_request: "task" */
	ANAL,   /* struct gm_analysis: "task" of an analysis request */
	JOB,    /* struct gm_job: "task.jobs" */
	INPUT,  /* struct gm_input: a job's "inputFiles" */
	OWNER,  /* struct an_user_load: "analysis.owner" */
	LOAD,   /* struct gm_analysis_queue: "analysis.queues" */
};

#define Q struct jb_queue
#define G struct gm_queue
#define K struct jb_counts
#define L struct gm_link
#define R struct gm_request
#define A struct gm_analysis
#define JB struct gm_job
#define IN struct gm_input
#define U struct an_user_load
#define AQ struct gm_analysis_queue
static const struct scw_fld fields[] = {
	SCW_F(QUEUE, "name", SCW_K_STR, Q, name),
	SCW_F(QUEUE, "status", SCW_K_STR, Q, status),
	SCW_F(QUEUE, "site", SCW_K_STR, Q, site),
	SCW_F(QUEUE, "nucleus", SCW_K_STR, Q, nucleus),
	SCW_F(QUEUE, "coreCount", SCW_K_LONG, Q, core_count),
	SCW_F(QUEUE, "corepower", SCW_K_NUM, Q, corepower),
	SCW_F(QUEUE, "minrss", SCW_K_NUM, Q, min_rss_per_core),
	SCW_F(QUEUE, "maxrss", SCW_K_NUM, Q, max_rss_per_core),
	SCW_F(QUEUE, "maxwdir", SCW_K_NUM, Q, maxwdir),
	SCW_F(QUEUE, "mintime", SCW_K_NUM, Q, mintime),
	SCW_F(QUEUE, "maxtime", SCW_K_NUM, Q, maxtime),
	SCW_F(QUEUE, "directAccess", SCW_K_BOOL, Q, direct_access),
	SCW_F(QUEUE, "wnconnectivity", SCW_K_STR, Q, wnconnectivity),
	SCW_F(QUEUE, "maxDiskIO", SCW_K_NUMNULL, Q, max_diskio),
	SCW_F(QUEUE, "diskIOAvg", SCW_K_NUM, Q, diskio_avg),
	SCW_F(QUEUE, "fairsharepolicy", SCW_K_STR, Q, fairsharepolicy),
	SCW_ENUM(QUEUE, "eventService", Q, es, es_words),
	SCW_F(QUEUE, "dynamicNEvents", SCW_K_BOOL, Q, dynamic_nevents),
	SCW_F(QUEUE, "transferringLimit", SCW_K_NUM, Q, transferring_limit),
	SCW_F(QUEUE, "numSlots", SCW_K_LONG, Q, num_slots),
	SCW_F(QUEUE, "lastPilotAge", SCW_K_AGE, Q, last_pilot),
	SCW_F(QUEUE, "lastStartAge", SCW_K_AGE, Q, last_start),
	SCW_F(QSTORE, "name", SCW_K_STR, Q, storage),
	SCW_F(QSTORE, "spaceFree", SCW_K_NUM, Q, storage_free),
	SCW_F(QSTORE, "blacklisted", SCW_K_BOOL, Q, storage_blacklisted),
	SCW_ENUM(QEXTRA, "type", G, type, qtype_words),
	SCW_F(QEXTRA, "vp", SCW_K_BOOL, G, is_vp),
	SCW_ENUM(QEXTRA, "siteClass", G, site_class, sclass_words),
	SCW_F(QEXTRA, "disableReassign", SCW_K_BOOL, G, disable_reassign),
	SCW_F(QEXTRA, "transtimehi", SCW_K_NUM, G, transtimehi),
	SCW_F(QEXTRA, "transtimelo", SCW_K_NUM, G, transtimelo),
	SCW_F(QEXTRA, "workflow", SCW_K_STR, G, workflow),
	SCW_F(COUNTS, "running", SCW_K_NUM, K, running),
	SCW_F(COUNTS, "defined", SCW_K_NUM, K, defined),
	SCW_F(COUNTS, "assigned", SCW_K_NUM, K, assigned),
	SCW_F(COUNTS, "activated", SCW_K_NUM, K, activated),
	SCW_F(COUNTS, "starting", SCW_K_NUM, K, starting),
	SCW_F(COUNTS, "transferring", SCW_K_NUM, K, transferring),
	SCW_F(COUNTS, "nBatchJob", SCW_K_NUM, K, nbatchjob),
	SCW_F(LINK, "site", SCW_K_STR, L, site),
	SCW_F(LINK, "nucleus", SCW_K_STR, L, nucleus),
	SCW_F(LINK, "blocked", SCW_K_BOOL, L, blocked),
	SCW_F(LINK, "queuedFiles", SCW_K_NUM, L, l.queued_files),
	SCW_F(LINK, "mbps1h", SCW_K_NUMNULL, L, l.mbps_1h),
	SCW_F(LINK, "mbps1d", SCW_K_NUMNULL, L, l.mbps_1d),
	SCW_F(LINK, "mbps1w", SCW_K_NUMNULL, L, l.mbps_1w),
	SCW_F(LINK, "closeness", SCW_K_NUMNULL, L, l.closeness),
	SCW_F(REQ, "taskID", SCW_K_LLONG, R, t.task_id),
	SCW_F(REQ, "gshare", SCW_K_STR, R, t.gshare),
	SCW_F(REQ, "currentPriority", SCW_K_LONG, R, t.priority),
	SCW_F(REQ, "processingType", SCW_K_STR, R, t.processing_type),
	SCW_F(REQ, "ioIntensity", SCW_K_NUM, R, t.io_intensity),
	SCW_F(REQ, "diskIO", SCW_K_NUM, R, t.diskio),
	SCW_F(REQ, "coreCount", SCW_K_LONG, R, t.core_count),
	SCW_F(REQ, "maxCoreCount", SCW_K_LONG, R, t.max_core_count),
	SCW_F(REQ, "baseRamCount", SCW_K_NUM, R, t.base_ram),
	SCW_F(REQ, "ramCount", SCW_K_NUM, R, t.ram_count),
	SCW_F(REQ, "outDiskCount", SCW_K_NUM, R, t.out_disk_count),
	SCW_F(REQ, "workDiskCount", SCW_K_NUM, R, t.work_disk_count),
	SCW_F(REQ, "cpuTime", SCW_K_NUM, R, t.cpu_time),
	SCW_F(REQ, "cpuEfficiency", SCW_K_NUM, R, t.cpu_efficiency),
	SCW_F(REQ, "baseWalltime", SCW_K_NUM, R, t.base_time),
	SCW_F(REQ, "ipConnectivity", SCW_K_STR, R, t.ip_connectivity),
	SCW_F(REQ, "directAccessOnly", SCW_K_BOOL, R, t.direct_access_only),
	SCW_F(REQ, "useEventService", SCW_K_BOOL, R, t.use_es),
	SCW_F(REQ, "dynamicNEvents", SCW_K_BOOL, R, t.dynamic_nevents),
	SCW_F(REQ, "t1Weight", SCW_K_NUM, R, t.t1_weight),
	SCW_F(REQ, "architecture", SCW_K_STR, R, architecture),
	SCW_F(REQ, "containerName", SCW_K_STR, R, need.container_name),
	SCW_F(REQ, "onlyTagsForFC", SCW_K_BOOL, R, need.only_tags_fc),
	SCW_F(REQ, "swProject", SCW_K_STR, R, need.sw_project),
	SCW_F(REQ, "swVersion", SCW_K_STR, R, need.sw_version),
	SCW_ENUM(REQ, "jobScope", R, t.scope, scope_words),
	SCW_ENUM(REQ, "swKind", R, need.kind, kind_words),
	SCW_LIST(REQ, "preassigned", R, t.preassigned, t.npreassigned),
	SCW_F(REQ, "preassignSkippedSince", SCW_K_TIME, R,
	      t.preassign_skipped_since),
	SCW_F(REQ, "scout", SCW_K_BOOL, R, t.scout),
	SCW_F(REQ, "merge", SCW_K_BOOL, R, t.merge),
	SCW_F(REQ, "premerged", SCW_K_BOOL, R, t.premerged),
	SCW_F(ANAL, "userName", SCW_K_STR, A, user),
	SCW_F(ANAL, "workingGroup", SCW_K_STR, A, working_group),
	SCW_F(ANAL, "taskPriority", SCW_K_LONG, A, task_priority),
	SCW_ENUM(ANAL, "ramCountUnit", A, ram_per_core, ram_words),
	SCW_LIST(ANAL, "excludedSite", A, excluded_sites, nexcluded),
	SCW_LIST(ANAL, "includedSite", A, included_sites, nincluded),
	SCW_F(ANAL, "avoidVP", SCW_K_BOOL, A, avoid_vp),
	SCW_F(JOB, "jobID", SCW_K_LLONG, JB, job_id),
	SCW_F(JOB, "nEvents", SCW_K_LONG, JB, nevents),
	SCW_F(INPUT, "lfn", SCW_K_STR, IN, lfn),
	SCW_F(INPUT, "size", SCW_K_NUM, IN, size_mb),
	SCW_F(OWNER, "workingGroup", SCW_K_BOOL, U, working_group),
	SCW_F(OWNER, "runningJobs", SCW_K_NUM, U, running_jobs),
	SCW_F(OWNER, "queuedJobs", SCW_K_NUM, U, queued_jobs),
	SCW_F(OWNER, "runningCores", SCW_K_NUM, U, running_cores),
	SCW_F(OWNER, "queuedCores", SCW_K_NUM, U, queued_cores),
	SCW_F(OWNER, "quotaExceeded", SCW_K_BOOL, U, quota_exceeded),
	SCW_F(OWNER, "shareUsage", SCW_K_NUM, U, share_usage),
	SCW_F(OWNER, "shareTarget", SCW_K_NUM, U, share_target),
	SCW_F(OWNER, "hiSiteSlots", SCW_K_NUM, U, hi_site_slots),
	SCW_F(LOAD, "trr", SCW_K_NUM, AQ, trr),
	SCW_F(LOAD, "nqUser", SCW_K_NUM, AQ, nq_user),
	SCW_F(LOAD, "nrUser", SCW_K_NUM, AQ, nr_user),
	SCW_F(LOAD, "nUsers", SCW_K_NUM, AQ, nusers),
	SCW_F(LOAD, "taskFailed", SCW_K_NUM, AQ, task_failed),
	SCW_F(LOAD, "taskClosed", SCW_K_NUM, AQ, task_closed),
	SCW_F(LOAD, "taskFinished", SCW_K_NUM, AQ, task_finished),
	SCW_END,
};
#undef Q
#undef G
#undef K
#undef L
#undef R
#undef A
#undef JB
#undef IN
#undef U
#undef AQ

/* ---- queues ------------------------------------------------------------- */

/* PJ-14: "ANY", "AUTO" or the list (an empty list is still a list). */
static json_t *releases_json(const struct jb_queue *q)
{
	switch (q->releases) {
	case JB_REL_ANY:
		return json_string("ANY");
	case JB_REL_AUTO:
		return json_string("AUTO");
	case JB_REL_LIST:
		return scw_strings(q->release_list, q->nrelease_list);
	}
	return NULL;
}

/* "jobs": the queue's counts per gshare, each gshare once. */
static json_t *counts_json(const struct gm_queue *gq)
{
	json_t *o = json_object();
	int bad = o == NULL || (gq->ncounts && gq->counts == NULL);
	for (size_t i = 0; !bad && i < gq->ncounts; i++)
		bad = gq->counts[i].gshare == NULL ||
		      ju_set(o, gq->counts[i].gshare,
			     scw_object(fields, COUNTS, &gq->counts[i].k, 0));
	return scw_done(o, bad || json_object_size(o) != gq->ncounts);
}

static json_t *queue_json(const struct gm_queue *gq, long long now)
{
	json_t *o = scw_object(fields, QUEUE, &gq->q, now);
	int bad = o == NULL ||
		  scw_record(o, fields, QEXTRA, gq, now) != GB_OK;
	bad = bad || ju_set(o, "releases", releases_json(&gq->q));
	bad = bad || ju_set(o, "storage",
			    scw_object(fields, QSTORE, &gq->q, 0));
	bad = bad || ju_set(o, "jobs", counts_json(gq));
	return scw_done(o, bad);
}

static json_t *queues_json(const struct gm_grid *g, long long now)
{
	json_t *a = json_array();
	int bad = a == NULL || (g->nqueues && g->queues == NULL);
	for (size_t i = 0; !bad && i < g->nqueues; i++)
		bad = ju_push(a, queue_json(&g->queues[i], now));
	return scw_done(a, bad);
}

/* One dictionary from its compact text. */
static int sw_put(json_t *sw, const char *key, const struct rc_sw *parsed,
		  const char *text)
{
	if (text == NULL)
		return parsed != NULL; /* parsed without text: unwritable */
	json_error_t e;
	json_t *v = json_loads(text, JSON_REJECT_DUPLICATES, &e);
	if (json_is_object(v))
		return ju_set(sw, key, v);
	json_decref(v);
	return 1;
}

/* "sw": the queues' dictionaries by queue name, and "ALL". */
static json_t *sw_json(const struct gm_grid *g)
{
	json_t *o = json_object();
	size_t n = g->all_sw_json != NULL;
	int bad = o == NULL || sw_put(o, "ALL", g->all_sw, g->all_sw_json);
	for (size_t i = 0; !bad && i < g->nqueues; i++) {
		const struct gm_queue *gq = &g->queues[i];
		/* a queue named ALL: the key means the pseudo-queue */
		bad = (gq->sw_json && strcmp(gq->q.name, "ALL") == 0) ||
		      sw_put(o, gq->q.name, gq->q.sw, gq->sw_json);
		n += gq->sw_json != NULL;
	}
	return scw_done(o, bad || json_object_size(o) != n);
}

/* ---- file replicas ------------------------------------------------------- */

static json_t *replicas_json(const struct gm_grid *g)
{
	json_t *o = json_object();
	int bad = o == NULL || (g->nfiles && g->files == NULL);
	for (size_t i = 0; !bad && i < g->nfiles; i++) {
		const struct gm_file *f = &g->files[i];
		bad = f->lfn == NULL ||
		      ju_set(o, f->lfn, scw_strings(f->storages, f->nstorages));
	}
	return scw_done(o, bad || json_object_size(o) != g->nfiles);
}

/* ---- the request --------------------------------------------------------- */

static json_t *job_json(const struct gm_job *j)
{
	json_t *o = scw_object(fields, JOB, j, 0);
	int bad = o == NULL ||
		  ju_set(o, "inputFiles",
			 scw_objects(fields, INPUT, j->inputs, j->ninputs,
				     sizeof(*j->inputs), 0));
	return scw_done(o, bad);
}

static json_t *jobs_json(const struct gm_request *r)
{
	json_t *a = json_array();
	int bad = a == NULL || (r->njobs && r->jobs == NULL);
	for (size_t i = 0; !bad && i < r->njobs; i++)
		bad = ju_push(a, job_json(&r->jobs[i]));
	return scw_done(a, bad);
}

static json_t *request_json(const struct gm_request *r)
{
	/* analysis fields first: taskType decides what the rest means */
	json_t *o = json_object();
	int an = r->an.is_analysis != 0;
	int bad = o == NULL ||
		  ju_set(o, "taskType", json_string(an ? "anal" : "prod"));
	if (an)
		bad = bad || scw_record(o, fields, ANAL, &r->an, 0) != GB_OK;
	bad = bad || scw_record(o, fields, REQ, r, 0) != GB_OK;
	/* "" is what the parser gives an analysis task without a nucleus;
	** the key itself must be a name */
	if (r->t.nucleus && r->t.nucleus[0])
		bad = bad || ju_set(o, "nucleus", json_string(r->t.nucleus));
	if (r->t.out_disk_unit != JB_OUT_RATIO)
		bad = bad || ju_set(o, "outDiskCountUnit",
				    json_string(jb_out_unit_name(
					    r->t.out_disk_unit)));
	bad = bad || ju_set(o, "jobs", jobs_json(r));
	return scw_done(o, bad);
}

/* ---- job scenarios ------------------------------------------------------- */

json_t *scw_jobs(long long now, unsigned long long seed,
		 const struct prm_set *params, const struct gm_grid *g,
		 const struct gm_request *r)
{
	json_t *root = g && r ? scw_head(now, seed) : NULL;
	int bad = root == NULL;
	bad = bad || ju_set(root, "params", scw_params(params));
	bad = bad || ju_set(root, "queues", queues_json(g, now));
	bad = bad || ju_set(root, "sw", sw_json(g));
	bad = bad || ju_set(root, "links",
			    scw_objects(fields, LINK, g->links, g->nlinks,
					sizeof(*g->links), 0));
	bad = bad || ju_set(root, "fileReplicas", replicas_json(g));
	bad = bad || ju_set(root, "task", request_json(r));
	return scw_done(root, bad);
}

/* ---- analysis scenarios -------------------------------------------------- */

/* The loads at grid queues, by queue name, each name once. */
static json_t *aqueues_json(const struct gm_grid *g,
			    const struct gm_analysis_state *st)
{
	size_t nq = g->nqueues, kept = 0;
	struct ju_nameref *names = malloc((nq ? nq : 1) * sizeof(*names));
	json_t *o = json_object();
	int bad = names == NULL || o == NULL ||
		  (st->nqueues && st->queues == NULL);
	for (size_t i = 0; !bad && i < nq; i++) {
		names[i] = (struct ju_nameref){g->queues[i].q.name, i};
		bad = names[i].name == NULL;
	}
	if (!bad && nq > 1)
		qsort(names, nq, sizeof(*names), ju_nameref_cmp);
	for (size_t i = 0; !bad && i < st->nqueues; i++) {
		const struct gm_analysis_queue *l = &st->queues[i];
		bad = l->name == NULL;
		if (bad || bsearch(l->name, names, nq, sizeof(*names),
				   ju_nameref_key_cmp) == NULL)
			continue;
		bad = ju_set(o, l->name, scw_object(fields, LOAD, l, 0));
		kept++;
	}
	free(names);
	return scw_done(o, bad || json_object_size(o) != kept);
}

static json_t *analysis_json(const struct gm_grid *g,
			     const struct gm_analysis_state *st,
			     enum an_task_class tclass)
{
	json_t *o = json_object();
	int bad = o == NULL;
	bad = bad || ju_set(o, "owner",
			    scw_object(fields, OWNER, &st->user, 0));
	bad = bad || ju_set(o, "taskClass",
			    json_string(gm_task_class_name(tclass)));
	/* AJ-11: always the counts, never left to the parser's sum of the
	** queues (the worker's sum is over every queue_counts row); a
	** count that is not finite is refused by scw_num. */
	bad = bad || ju_set(o, "gridQueued", scw_num(st->grid_queued));
	bad = bad || ju_set(o, "gridRunning", scw_num(st->grid_running));
	bad = bad || ju_set(o, "queues", aqueues_json(g, st));
	return scw_done(o, bad);
}

json_t *scw_analysis(long long now, unsigned long long seed,
		     const struct prm_set *params, const struct gm_grid *g,
		     const struct gm_request *r,
		     const struct gm_analysis_state *st,
		     enum an_task_class tclass)
{
	if (g == NULL || r == NULL || st == NULL || !r->an.is_analysis ||
	    gm_task_class_name(tclass) == NULL ||
	    st->user.task_class != tclass)
		return NULL;
	/* what the parser derives must be what the state says */
	const char *gs = r->t.gshare ? r->t.gshare : "User Analysis";
	int ua = strcmp(gs, "User Analysis") == 0 && st->user.share_target > 0;
	if (ua != (st->user.user_analysis != 0))
		return NULL;
	json_t *root = scw_jobs(now, seed, params, g, r);
	int bad = root == NULL ||
		  ju_set(root, "analysis", analysis_json(g, st, tclass));
	return scw_done(root, bad);
}
