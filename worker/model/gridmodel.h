/*
** gridmodel.h — the job-brokerage view of the grid (queues, their job
** counts per gshare, links to nuclei, published software, file replicas)
** and a job.broker request, as read from a grid/scenario JSON file
** (scenario_jobs.c) or from MariaDB (store_jobs.c), and their resolution
** into the engine's per-task input (gm_resolve).
**
** Why a model between the sources and the engine: the engine's jb_queue
** holds per-task facts (counts for the task's gshare, the link to the task's
** nucleus, the task's input locality at the queue's storage). Both the
** offline `explain` and the worker must derive those the same way, so the
** derivation lives here once and both sources only fill these structs.
**
** All strings and arrays live in the arena the filler was given.
*/
#ifndef GB_GRIDMODEL_H
#define GB_GRIDMODEL_H

#include <stddef.h>

#include <jansson.h>

#include "analbroker.h"
#include "base/arena.h"
#include "jobbroker.h"

/* Bounds of a published-software dictionary (gm_parse_sw). */
#define GM_MAX_SW_LIST 10000 /* cmtconfigs, containers, cvmfs, hw attrs */
#define GM_MAX_TAGS 100000   /* tags of one sw dictionary */
#define GM_MAX_SOURCES 1000  /* sources of one tag */

/* Job counts of one queue for one gshare. */
struct gm_counts {
	const char *gshare;
	struct jb_counts k;
};

/* A queue as the grid holds it. `q` has every static attribute set (its
** `sw` points at its parsed dictionary for AUTO queues); the per-task fields
** (q.counts, q.link, q.link_blocked, q.local_size, q.missing_size,
** q.missing_files) are left zero/NULL and filled by gm_resolve(). */
struct gm_queue {
	struct jb_queue q;
	const struct gm_counts *counts; /* per gshare */
	size_t ncounts;
	/* The RC-01 dictionary as compact JSON text, which is what MariaDB
	** stores (NULL when the queue publishes none). */
	const char *sw_json;
	/* Analysis brokerage and timeouts (0005): defaults unified, not VP,
	** mid, reassign allowed, reference transfer times, no workflow. */
	enum ab_queue_type type;       /* AJ-05 */
	int is_vp;                     /* AJ-11 */
	enum an_site_class site_class; /* AJ-04, AJ-25 */
	int disable_reassign;          /* TO-12 */
	double transtimehi, transtimelo; /* days, 0 = reference (TO-11) */
	const char *workflow;          /* "" = none (TO-09) */
};

/* A link from a satellite site to a nucleus (PJ-05/06, NW-*). */
struct gm_link {
	const char *site;
	const char *nucleus;
	int blocked;
	struct nw_link l; /* closeness -1 also means blocked */
};

/* Where one input file has replicas. */
struct gm_file {
	const char *lfn;
	const char *const *storages;
	size_t nstorages;
};

struct gm_grid {
	struct gm_queue *queues;
	size_t nqueues;
	const struct gm_link *links;
	size_t nlinks;
	const struct rc_sw *all_sw; /* the "ALL" pseudo-queue (RC-05), or NULL */
	const char *all_sw_json;    /* the same as compact JSON text, or NULL */
	const struct gm_file *files; /* replicas of the request's files */
	size_t nfiles;
};

/* One input file of a job. */
struct gm_input {
	const char *lfn;
	double size_mb;
};

/* One job of a request: the engine's view plus its files. */
struct gm_job {
	long long job_id;
	long nevents;
	const struct gm_input *inputs;
	size_t ninputs;
};

/*
** The analysis part of a job.broker request (taskType "anal"): who owns
** the task and the analysis brokerage's own task fields. Zeroed for a
** production request (is_analysis 0).
*/
struct gm_analysis {
	int is_analysis;            /* taskType "anal" */
	const char *user;           /* userName; required when is_analysis */
	const char *working_group;  /* workingGroup; NULL = none (AJ-01) */
	long task_priority;         /* taskPriority (AJ-08); default 1000 */
	int ram_per_core;           /* ramCountUnit MBPerCore 1 (default), MB 0 */
	const char *const *excluded_sites; /* excludedSite (AJ-06) */
	size_t nexcluded;
	const char *const *included_sites; /* includedSite (AJ-06) */
	size_t nincluded;
	int avoid_vp;               /* avoidVP (AJ-11) */
};

/*
** A job.broker request (or a scenario's task and jobs). `t` is complete
** except t.jobs/t.njobs/t.total_input_gb and t.sw, which gm_resolve() sets
** from `jobs` and `need`; `need.arch` is parsed from `architecture`.
*/
struct gm_request {
	struct jb_task t;
	struct rc_need need;
	const char *architecture; /* raw task architecture (RC-02) */
	const struct gm_job *jobs;
	size_t njobs;
	struct gm_analysis an;
};

/* Names of the analysis words, for codecs, scenario files and reports. */
const char *gm_queue_type_name(enum ab_queue_type t);  /* "analysis", ... */
int gm_queue_type_parse(const char *s);                /* -1 unknown */
const char *gm_site_class_name(enum an_site_class c);  /* "hi", "mid", "lo" */
int gm_site_class_parse(const char *s);                /* -1 unknown */
const char *gm_task_class_name(enum an_task_class c);  /* "S", "A", "B", "C" */
int gm_task_class_parse(const char *s);                /* -1 unknown */

/*
** What the analysis brokerage reads besides the grid, for one request:
** the owner's load (AJ-01..AJ-04), the task's gshare over the whole grid
** (AJ-11) and, per queue name, the owner's load there and the task's
** recent outcomes there. A queue missing from `queues` has zero user
** load, no recent outcomes and trr 0.
*/
struct gm_analysis_queue {
	const char *name;
	double trr;                 /* jobs started per hour, last 6 h */
	double nq_user, nr_user;    /* the owner's queued and running jobs */
	double nusers;              /* owners with active jobs there */
	double task_failed, task_closed, task_finished; /* AJ-18 window */
};

struct gm_analysis_state {
	struct an_user_load user;   /* complete: AJ-01..AJ-04 inputs */
	/* AJ-11: the task's gshare at every queue of the grid, queued =
	** defined + assigned + activated + starting, and running; their
	** ratio is PanDA's grandRatio (none when grid_running is 0). */
	double grid_queued, grid_running;
	const struct gm_analysis_queue *queues;
	size_t nqueues;
};

/*
** The analysis part of a grid file ("analysis": users, workingGroups,
** shares, taskClasses), replaced as a whole by `grid load`.
*/
struct gm_owner {
	const char *name;
	int is_group;               /* a working group, else a user */
	double running_jobs, queued_jobs, running_cores, queued_cores;
	double hi_site_slots;
	double quota_used_gb;
	double quota_gb;            /* NAN = unlimited */
};
struct gm_share {
	const char *gshare;
	double target, usage;       /* target > 0 */
};
struct gm_task_class {
	long long task_id;
	enum an_task_class cls;
};
struct gm_analysis_grid {
	const struct gm_owner *owners;
	size_t nowners;
	const struct gm_share *shares;
	size_t nshares;
	const struct gm_task_class *classes;
	size_t nclasses;
};

/*
** Build the analysis brokerage input from the resolved production view:
** `queues` (n = g->nqueues, what gm_resolve made for r, in grid order)
** become `*out` (n ab_queues in the same order, in `a`): type, VP, site
** class from g, the stabilizer load (nq = defined + assigned + activated
** + starting of the task's gshare, nr = running, trr, the owner's nq/nr
** and nusers from st), the task's outcomes. `*t` gets the ab_task of r
** (r->an fields, task class `tclass`, user_analysis when r->t.gshare is
** "User Analysis" or "Express Analysis", nj = r->njobs, the input disk
** count = the largest job input in MB, grand_ratio = st->grid_queued /
** st->grid_running, NAN when grid_running is 0). Returns 0, GB_EINVAL
** (NULL arguments, r not an analysis request, njobs 0, a grid count
** negative or not finite) or GB_ENOMEM.
*/
int gm_analysis_resolve(const struct gm_grid *g, const struct jb_queue *queues,
		    const struct gm_request *r, const struct gm_analysis_state *st,
		    enum an_task_class tclass, struct arena *a,
		    struct ab_queue **out, struct ab_task *t);

/*
** Build the engine input for request `r` on grid `g`: one jb_queue per grid
** queue, in grid order, with counts for r->t.gshare (zeros when the queue
** has none), the link from the queue's site to r->t.nucleus (NULL when
** there is no row; link_blocked when the row says blocked or closeness is
** -1), and the request's input locality at the queue's storage (a file is
** local when one of its replicas is on that storage). Also fills the
** request's t.jobs (arena copy), t.njobs, t.total_input_gb and t.sw, and
** `env` (nucleus_queued_files = the sum of queued files over every link to
** the nucleus; all_sw; `now` as given).
** Cost: O(files x replicas + queues x log(storages)), not queues x files.
** Returns 0, GB_EINVAL (NULL arguments, no nucleus or gshare in the
** request, a negative or NaN input size, an architecture RC-02 rejects) or
** GB_ENOMEM (arena cap).
*/
int gm_resolve(const struct gm_grid *g, struct gm_request *r, long long now,
	       struct arena *a, struct jb_queue **out, struct jb_env *env);

/*
** Parse one RC-01 dictionary (cmtconfigs, containers, cvmfs, architectures,
** tags; each optional) at JSON path `path`. Strings live in `a`. Returns 0
** or GB_E* with err.
*/
int gm_parse_sw(json_t *obj, const char *path, struct arena *a,
		 struct rc_sw *out, char *err, size_t errlen);

/*
** The same from JSON text (what MariaDB stores in a queue's sw_json); a
** text that is not one JSON object is GB_EDECODE. `json` must be
** NUL-terminated; the result does not point into it.
*/
int gm_parse_sw_text(const char *json, const char *path, struct arena *a,
		      struct rc_sw *out, char *err, size_t errlen);

#endif
