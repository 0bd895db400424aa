/*
** jobbroker.h — production job brokerage: choose queues for a task's jobs
** (rules PJ-01..PJ-36 of the specification, with RC-* through swcheck.h and
** NW-* through netweight.h).
**
** Pure: the caller passes a snapshot of the candidate queues (each with its
** job counts for the task's gshare, its link to the task's nucleus and the
** task's input locality at its storage), the task with its jobs, resolved
** parameters, the time and a seeded generator. jb_broker() filters (one row
** of jb_filters[] per rule, first failing rule drops the queue), weighs the
** survivors (PJ-28..PJ-32), applies the cap filters (PJ-33/34), keeps the
** best JB_BEST_N (PJ-35) and spreads the jobs over them by weighted draws
** whose counts move with every assignment (PJ-36).
**
** Units: memory MB, disk MB (maxwdir, job input, workDiskCount), storage
** free space and input locality GB, time seconds, IO kB/s (per core where
** the name says so), cpuTime HS06 s per event, corepower HS06 per core.
**
** Where the seed and the public PanDA code differ we follow the code and say
** so at the rule (see jobbroker.c's header): manyAssigned smoothing, the
** cap floor NQUEUELIMITSITE, PJ-07 on satellites only, NW_ACTIVE gating.
*/
#ifndef GB_JOBBROKER_H
#define GB_JOBBROKER_H

#include <stddef.h>

#include "decision.h"
#include "netweight.h"
#include "params.h"
#include "rng.h"
#include "swcheck.h"
#include "taskbroker.h"

#define JB_BEST_N 10                /* PJ-35: candidates kept */
#define JB_PENDING_RETRY_S 3600     /* PJ-35: a pending task waits 1 hour */
#define JB_MEM_COMPENSATION 0.9     /* PJ-15 */
#define JB_INACTIVE_S 7200          /* PJ-09: no job start for 2 hours */
#define JB_NOPILOT_S 10800          /* PJ-26: no pilot for 3 hours */
#define JB_PREASSIGN_GIVEUP_S 86400 /* PJ-02: skipped for 24 hours */
#define JB_SCOUT_MIN_MAXTIME_S 86400 /* PJ-20: scouts/merges need 24 h */
#define JB_TRANSFERRING_LIMIT 2000  /* PJ-24: default transferring_limit */
#define JB_MIN_OUT_DISK_MB 500.0    /* PJ-17: max(0.5 GB, ...) */
#define JB_BOOTSTRAP_BATCH_CAP 20   /* PJ-28: min(nBatchJob, 20) */
#define JB_HIGH_PRIO 800            /* PJ-08/PJ-09 */
#define JB_EXPRESS_PRIO 1000        /* PJ-27 */

/* The queue's `releases` (PJ-14). */
enum jb_releases {
	JB_REL_ANY = 0, /* no check */
	JB_REL_AUTO,    /* RC-* against the published sw dictionary */
	JB_REL_LIST,    /* the task's sw_version must be in the list */
};

/* PJ-23: what the queue does with event service jobs. */
enum jb_es {
	JB_ES_NONE = 0, /* no event service */
	JB_ES_ALLOWED,  /* both event service and normal jobs */
	JB_ES_ONLY,     /* event service jobs only */
};

/* Job counts of a queue for the task's gshare (PJ-24, PJ-28..PJ-34). */
struct jb_counts {
	double running;
	double defined;
	double assigned;
	double activated;
	double starting;
	double transferring;
	double nbatchjob; /* running+submitted batch workers (bootstrap) */
};

/* One candidate queue with everything the rules read. */
struct jb_queue {
	const char *name;
	const char *status;   /* "online", "offline", "brokeroff", "test", ... */
	const char *site;
	const char *nucleus;  /* nucleus it is associated with, "" if none */
	long core_count;      /* 0 = any (unified), 1 single, >1 multi */
	double corepower;     /* HS06 per core (PJ-21), > 0 */
	double min_rss_per_core; /* MB, 0 = no lower limit (PJ-15) */
	double max_rss_per_core; /* MB, 0 = no upper limit (PJ-15) */
	double maxwdir;       /* MB of scratch per job slot (PJ-17), 0 = unknown */
	double mintime;       /* s, 0 = none (PJ-21) */
	double maxtime;       /* s, 0 = unlimited (PJ-20, PJ-21) */
	enum jb_releases releases;
	const char *const *release_list; /* JB_REL_LIST */
	size_t nrelease_list;
	const struct rc_sw *sw;        /* JB_REL_AUTO: RC-01 dictionary */
	int direct_access;    /* reads input directly from local storage (PJ-16/17) */
	const char *wnconnectivity; /* "full#IPv4", "http", "" ... (PJ-22) */
	double max_diskio;    /* kB/s per core, NAN = MAX_DISKIO_DEFAULT (PJ-12) */
	double diskio_avg;    /* kB/s per core of its running jobs (PJ-12) */
	const char *fairsharepolicy; /* e.g. "type=evgensimul:100%" (PJ-10) */
	enum jb_es es;        /* PJ-23 */
	int dynamic_nevents;  /* supports a dynamic number of events (PJ-23) */
	double transferring_limit; /* PJ-24, 0 = JB_TRANSFERRING_LIMIT */
	long num_slots;       /* PJ-28: -1 unset, 0 = add starting, > 0 cores */
	long long last_pilot; /* unix s of the last pilot request, 0 never (PJ-26) */
	long long last_start; /* unix s of the last job start, 0 never (PJ-09) */
	const char *storage;  /* local storage endpoint name */
	double storage_free;  /* GB free on it (PJ-18) */
	int storage_blacklisted; /* PJ-19 */
	struct jb_counts counts;
	/* The link from the queue's site to the task's nucleus: NULL when no
	** row exists (not skipped: worst-but-usable defaults, NW-03). */
	const struct nw_link *link;
	int link_blocked;     /* PJ-05 (closeness -1 also blocks) */
	/* The task's input at this queue's storage (PJ-11, PJ-29, PJ-31). */
	double local_size;    /* GB of the task's input available */
	double missing_size;  /* GB to transfer */
	long missing_files;   /* files to transfer */
};

/* PJ-17: outDiskCountUnit. A per-event unit gives the output of one event;
** any other unit makes outDiskCount a ratio to the job's input. */
enum jb_out_unit {
	JB_OUT_RATIO = 0,    /* "", "kB", ...: outDiskCount x input */
	JB_OUT_KB_PER_EVENT, /* "kBPerEvent" */
	JB_OUT_MB_PER_EVENT, /* "MBPerEvent" */
	JB_OUT_GB_PER_EVENT, /* "GBPerEvent" */
};

/* One job of the request. */
struct jb_job {
	long long job_id;
	long nevents;
	double input_mb;   /* size of its input files */
	long input_files;
};

/* The task and the jobs to place. */
struct jb_task {
	long long task_id;
	const char *gshare;
	const char *nucleus;         /* where the task brokerage put it (PJ-03) */
	enum tb_job_scope scope;     /* FC-06: nucleus-only for full chain */
	long priority;               /* currentPriority */
	const char *processing_type; /* "evgen", "simul", "urgent", ... */
	double io_intensity;         /* kB/s (PJ-11) */
	double diskio;               /* kB/s per core (PJ-12) */
	long core_count;             /* task coreCount, >= 1 (PJ-13) */
	long max_core_count;         /* 0 = unset (PJ-13) */
	double base_ram;             /* baseRamCount, MB (PJ-15) */
	double ram_count;            /* ramCount, MB per core (PJ-15) */
	double out_disk_count;       /* outDiskCount, in out_disk_unit (PJ-17) */
	enum jb_out_unit out_disk_unit; /* outDiskCountUnit, jb_out_unit_parse */
	double work_disk_count;      /* workDiskCount, MB (PJ-17) */
	double cpu_time;             /* HS06 s per event (PJ-21) */
	double cpu_efficiency;       /* percent, > 0 (PJ-21) */
	double base_time;            /* s (PJ-21) */
	const char *ip_connectivity; /* "http#IPv6", "" (PJ-22) */
	int direct_access_only;      /* PJ-16 */
	int use_es;                  /* event service jobs (PJ-23) */
	int dynamic_nevents;         /* PJ-23 */
	double t1_weight;            /* < 0: nucleus queues only (PJ-25) */
	int scout, merge, premerged; /* flags of this set of jobs */
	/* Software (PJ-14 / RC-*): the parsed need, and the raw version for a
	** JB_REL_LIST queue. */
	const struct rc_need *sw;
	/* PJ-01/PJ-02: pre-assigned queue names (NULL/0 when none) and since
	** when they have been skipped (unix s, 0 = not skipped). */
	const char *const *preassigned;
	size_t npreassigned;
	long long preassign_skipped_since;
	/* The input, totals over all jobs (PJ-31) and the jobs themselves. */
	double total_input_gb;
	const struct jb_job *jobs;
	size_t njobs;
};

/* Parameters resolved once per decision (gshare suffixes applied). */
struct jb_params {
	double nqueued_sat_cap;      /* NQUEUED_SAT_CAP */
	double nqueued_nuc_cap;      /* NQUEUED_NUC_CAP_FOR_JOBS */
	double io_cutoff;            /* IO_INTENSITY_CUTOFF, kB/s */
	double size_cutoff_move;     /* SIZE_CUTOFF_TO_MOVE_INPUT, GB */
	double num_cutoff_move;      /* NUM_CUTOFF_TO_MOVE_INPUT, files */
	double max_diskio_default;   /* MAX_DISKIO_DEFAULT, kB/s per core */
	int nw_active;               /* NW_ACTIVE */
	double nw_queue_importance;  /* NW_QUEUE_IMPORTANCE */
	double nw_threshold;         /* NW_THRESHOLD */
	double nw_multiplier;        /* NW_WEIGHT_MULTIPLIER */
	double max_prio_bootstrap;   /* MAX_PRIO_TO_BOOTSTRAP */
	double nqueue_limit;         /* NQUEUELIMITSITE[_<gshare>] */
	double storage_min_free;     /* STORAGE_MIN_FREE_SIZE, GB */
	double min_weight;           /* MIN_WEIGHT[_<gshare>], 0 = off */
};

/* Per-decision totals the caller knows from the network tables. */
struct jb_env {
	long long now;              /* unix s */
	double nucleus_queued_files; /* files queued to the nucleus (PJ-07) */
	const struct rc_sw *all_sw; /* the "ALL" queue (RC-05), may be NULL */
};

/* What happens to each job (PJ-36). */
enum jb_job_status {
	JB_JOB_UNASSIGNED = 0, /* no best queue could take it (cap) */
	JB_JOB_ASSIGNED,       /* its input must be transferred first */
	JB_JOB_ACTIVATED,      /* its input is already local */
};

struct jb_plan {
	long best[JB_BEST_N];  /* queue indexes, best weight first */
	size_t nbest;
	long *job_queue;       /* caller array, njobs: queue index or -1 */
	enum jb_job_status *job_status; /* caller array, njobs */
	size_t nassigned;      /* jobs given a queue */
};

/* One filter row. `fn` returns 1 to keep, 0 after dec_reject(). */
struct jb_ctx;
struct jb_filter {
	const char *name; /* stage name, e.g. "memory" */
	const char *rule; /* rule ID, e.g. "PJ-15" */
	int (*fn)(const struct jb_ctx *ctx, const struct jb_queue *q,
		  struct dec_candidate *c);
};

/* The filter table, in order, terminated by a row with name == NULL. */
extern const struct jb_filter jb_filters[];

/*
** Checks the analysis brokerage shares (AJ-09 = PJ-12, AJ-10 = PJ-13,
** AJ-12 = PJ-14, AJ-16 = PJ-21): each returns 1 to keep `q`, or 0 after
** dec_reject(c, stage, rule, ...) with the numbers compared (RC-* rules
** name themselves). all_sw may be NULL; walltime uses the job of
** `nevents` events on `cores` cores.
*/
int jb_check_diskio(const struct jb_task *t, const struct jb_queue *q,
		    double max_diskio_default, const char *stage,
		    const char *rule, struct dec_candidate *c);
int jb_check_cores(const struct jb_task *t, const struct jb_queue *q,
		   const char *stage, const char *rule,
		   struct dec_candidate *c);
int jb_check_release(const struct jb_task *t, const struct jb_queue *q,
		     const struct rc_sw *all_sw, const char *stage,
		     const char *rule, struct dec_candidate *c);
int jb_check_walltime(const struct jb_task *t, const struct jb_queue *q,
		      long nevents, long cores, const char *stage,
		      const char *rule, struct dec_candidate *c);

/* Fill `out` from the parameter set, applying the gshare suffix. */
void jb_params_resolve(const struct prm_set *set, const char *gshare,
		       struct jb_params *out);

/*
** Run the job brokerage.
**
** `cands` has `nqueues` slots; on return cands[i] describes queues[i]
** (weight, or the stage and reasons that dropped it) and `out` holds the
** stage counts and the outcome: DEC_ASSIGNED with out->chosen = plan->best[0]
** when at least one job got a queue, or DEC_PENDING with retry_after_s =
** JB_PENDING_RETRY_S (PJ-35). `plan->job_queue` and `plan->job_status`
** must have task->njobs slots. Returns 0, or GB_EINVAL for NULL pointers or
** inputs out of range (negative counts, NaN sizes, cpu_efficiency <= 0).
*/
int jb_broker(const struct jb_task *task, const struct jb_queue *queues,
	      size_t nqueues, const struct jb_params *params,
	      const struct jb_env *env, struct gb_rng *rng,
	      struct dec_candidate *cands, struct dec_decision *out,
	      struct jb_plan *plan);

/* The pieces, exported for the tests and `explain`. */

/* PJ-28: the running count the weight and the caps use: max(running,
** numSlots / cores) with numSlots > 0, running + starting with numSlots 0,
** after the nBatchJob bootstrap; real running above MAX_PRIO_TO_BOOTSTRAP. */
double jb_running(const struct jb_queue *q, const struct jb_task *t,
		  const struct jb_params *p);

/* PJ-29/PJ-30: the base weight from counts; `input_local` drops assigned. */
double jb_base_weight(const struct jb_counts *k, double running,
		      int input_local);

/* PJ-31: the data factor (1 when total_gb is 0). */
double jb_data_factor(double local_gb, double total_gb, long missing_files);

/* PJ-15: the expected memory of a job on a queue with `cores` cores. */
double jb_memory_mb(const struct jb_task *t, long cores);

/* PJ-17: the expected disk use of a job of `nevents` with `input_mb`, in
** MB (1 MB = 1024 kB, as PanDA counts). */
double jb_disk_mb(const struct jb_task *t, long nevents, double input_mb,
		  int direct_access);

/* PJ-17: the scratch a job may use at `q`: maxwdir x task coreCount /
** queue coreCount, all of maxwdir at a coreCount 0 queue (MB). */
double jb_maxwdir_mb(const struct jb_task *t, const struct jb_queue *q);

/* PJ-12: the task's diskIO per core at `q`: divided by the queue's
** coreCount for a multicore task at a multicore queue (kB/s). */
double jb_task_diskio(const struct jb_task *t, const struct jb_queue *q);

/* PJ-17: the unit of outDiskCountUnit: "kBPerEvent", "MBPerEvent",
** "GBPerEvent" (by their first two letters, as PanDA reads them; any other
** prefix of a PerEvent unit is kB), else JB_OUT_RATIO. NULL reads as "". */
enum jb_out_unit jb_out_unit_parse(const char *unit);

/* The unit's canonical word ("kB" for a ratio), for writing it back. */
const char *jb_out_unit_name(enum jb_out_unit u);

/* PJ-21: the expected walltime of a job of `nevents` on `cores` x `power`. */
double jb_walltime_s(const struct jb_task *t, long nevents, long cores,
		     double corepower);

/* PJ-22: 1 when a queue's wnconnectivity accepts the task's ipConnectivity. */
int jb_ip_accepts(const char *queue_wnconn, const char *task_ipconn);

/* PJ-10: 1 when `policy` gives `processing_type` a zero share. */
int jb_zero_share(const char *policy, const char *processing_type);

/* "assigned", "activated" or "unassigned". */
const char *jb_job_status_name(enum jb_job_status s);

#endif
