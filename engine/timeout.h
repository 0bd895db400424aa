/*
** timeout.h — the PanDA job timeout rules (TO-01..TO-12) and fast
** rebrokerage (TO-13), as pure functions of a job, its queue, the
** parameters and `now`. The worker's periodic scan (issue 5) reads the
** jobs, calls to_check for each, and applies the action with exactly one
** job.timeout event per expired job (TO-14) in the same transaction.
**
** Rules (seed panda-brokerage "Timeout Rules"; actions and reference values
** from reference/panda-code-facts.md section 6):
**   TO-01 pending        1 h since the status change       reassign
**   TO-02 defined        TIMEOUT_defined (4 h)             reassign
**   TO-03 assigned       12 h                              reassign
**   TO-04 throttled      7 days                            kill
**   TO-05 activated, starting   2 days                     reassign
**   TO-06 activated, starting with currentPriority >= 800 at a queue
**         whose last job start is older than 2 h (or never): 4 h   reassign
**   TO-07 sent           30 min                            fail
**   TO-08 running        21 days since the job was created kill
**   TO-09 running, starting (and transferring with its own stage-out,
**         jobSubStatus set): no heartbeat for HEARTBEAT_TIMEOUT_<workflow>
**         (2 h) since the later of the last heartbeat and the status
**         change (so the status change when none yet)           fail
**   TO-10 holding        3 h at currentPriority >= 800, else
**                        TIMEOUT_holding (48 h)            fail
**   TO-11 transferring   the queue's transtimehi days at priority >= 800,
**                        transtimelo days below (0 = the reference 2 and
**                        6 days)                           fail
**   TO-12 nothing fires at a queue that is paused or has disableReassign
**         (the seed's rule; PanDA's code skips paused queues only for the
**         heartbeat check, a known bug not copied)
** When several rules fire for one job, the first in this order wins, so a
** job gets one verdict (and the worker one event, TO-14).
**
** TO-13 (fast rebrokerage) is per queue and gshare: see to_fast_rebro.
**
** No I/O, no clock, no allocation.
*/
#ifndef GB_TIMEOUT_H
#define GB_TIMEOUT_H

#include <stddef.h>

#include "params.h"

enum to_status {
	TO_ST_PENDING = 0,
	TO_ST_DEFINED,
	TO_ST_ASSIGNED,
	TO_ST_THROTTLED,
	TO_ST_ACTIVATED,
	TO_ST_STARTING,
	TO_ST_SENT,
	TO_ST_RUNNING,
	TO_ST_HOLDING,
	TO_ST_TRANSFERRING,
	TO_ST_FINISHED, /* final states: no rule applies */
	TO_ST_FAILED,
	TO_ST_CLOSED,
	TO_ST_CANCELLED,
	TO_NSTATUS
};

/* "pending", "defined", ..., "cancelled"; NULL out of range. */
const char *to_status_name(enum to_status s);
/* -1 when unknown. */
int to_status_parse(const char *s);

enum to_action {
	TO_ACT_NONE = 0,
	TO_ACT_REASSIGN, /* back to brokerage (closed/toreassign in PanDA) */
	TO_ACT_FAIL,     /* failed, the retry module decides */
	TO_ACT_KILL,     /* killed for good */
};

/* "none", "reassign", "fail", "kill". */
const char *to_action_name(enum to_action a);

struct to_job {
	long long job_id;
	enum to_status status;
	long long status_since;   /* unix s of the last status change */
	long long created_at;     /* unix s */
	long long last_heartbeat; /* unix s; 0 = none yet */
	int current_priority;
	const char *workflow;     /* HEARTBEAT_TIMEOUT_<workflow>; NULL/"" */
	int own_stageout;         /* jobSubStatus set (TO-09, transferring) */
};

struct to_queue {
	int paused;               /* status paused (TO-12) */
	int disable_reassign;     /* catchall has disableReassign (TO-12) */
	long long last_start;     /* unix s of the last job start; 0 = never */
	double transtimehi;       /* days, 0 = reference 2 (TO-11) */
	double transtimelo;       /* days, 0 = reference 6 (TO-11) */
};

struct to_verdict {
	const char *rule;      /* "TO-05", or NULL when nothing fires */
	enum to_action action;
	double age_s;          /* the age compared */
	double limit_s;        /* the limit it passed */
	const char *what;      /* "activated for", "no heartbeat for", ... */
};

/*
** Apply TO-01..TO-12 to job `j` at queue `q` (NULL: a queue with no
** attributes: not paused, never started, reference transfer times) at
** time `now`, with parameters `set` (NULL = catalogue defaults:
** TIMEOUT_defined, TIMEOUT_holding, HEARTBEAT_TIMEOUT[_<workflow>], in
** hours). Returns 1 and fills *out when a rule fires (age strictly greater
** than the limit), 0 when none does (out->rule NULL), GB_EINVAL on NULL
** j/out or a status out of range.
*/
int to_check(const struct to_job *j, const struct to_queue *q,
	     const struct prm_set *set, long long now, struct to_verdict *out);

/*
** When the worker must look at job `j` again: *at gets the earliest unix
** second at which a rule of TO-01..TO-11 can fire for the job's current
** status at queue `q` (NULL as in to_check), assuming nothing about the job
** changes meanwhile. TO-12 is ignored (an exempt queue may stop being
** exempt; the caller re-checks such jobs on its own interval). TO-06 takes
** the queue's last start into account: with a start 30 min ago the rule
** cannot fire before that start is 2 h old. The time may be <= now when a
** rule is already due. Returns 1 (*at set), 0 when no rule can ever fire
** (a final status, or every limit unset), GB_EINVAL on NULL j/at or a
** status out of range.
*/
int to_next_check(const struct to_job *j, const struct to_queue *q,
		  const struct prm_set *set, long long now, long long *at);

/* Per queue and gshare (TO-13). */
struct to_rebro_in {
	double nqueue;       /* defined+assigned+activated+starting here */
	double nrun;         /* running here */
	double nqueue_total; /* queued jobs of the gshare at every queue */
	int has_nslots;      /* the queue has nSlots (Harvester_Slots): never */
};

struct to_rebro_out {
	int triggered;
	long long excess;    /* jobs to rebroker (the oldest first) */
	double ratio_limit;  /* FAST_REBRO_THRESHOLD_NQNR_RATIO x nrun */
	double frac_limit;   /* FAST_REBRO_THRESHOLD_NQUEUE_FRAC x total */
	double nqueue_limit; /* FAST_REBRO_THRESHOLD_NQUEUE_<gshare>; NAN */
	/* Not triggered: why, the first condition that failed, in the
	** order checked: "nslots" (the queue has nSlots), "no_threshold"
	** (the gshare's own key unset), "ratio" (nqueue <= ratio_limit),
	** "frac" (nqueue <= frac_limit), "nqueue" (nqueue <= nqueue_limit).
	** NULL when triggered. */
	const char *code;
};

/*
** TO-13: triggered when nqueue > ratio x nrun, nqueue > frac x total and
** nqueue > FAST_REBRO_THRESHOLD_NQUEUE_<gshare> (unset: never), and the
** queue has no nSlots. excess = ceil(min(nqueue - ratio x nrun, nqueue -
** limit, nqueue - frac x total)) (PanDA's SQL takes one fewer, a bug not
** copied). Only the gshare's own key counts: a bare
** FAST_REBRO_THRESHOLD_NQUEUE is not a default for every gshare (the
** public code dry-runs a gshare without its key), so a NULL or "" gshare,
** or one without its key, never triggers.
** Returns 0 (out filled), GB_EINVAL on NULL in/out or negative or
** non-finite counts.
*/
int to_fast_rebro(const struct to_rebro_in *in, const struct prm_set *set,
		  const char *gshare, struct to_rebro_out *out);

#endif
