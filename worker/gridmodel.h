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

#include "arena.h"
#include "jobbroker.h"

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
};

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

#endif
