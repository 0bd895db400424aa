/*
** scenario_timeout.h — timeout scenarios for `gridbroker explain`: a set of
** jobs at queues at one instant, run through the timeout rules
** (TO-01..TO-12, engine/timeout.h) and fast rebrokerage (TO-13), so that
** "why was this job reassigned / why not yet?" is answered offline with
** the same functions the worker's periodic scan calls.
**
** File (schemas/scenario-timeout.schema.json):
**   {"kind": "timeout", "description", "now" (RFC 3339), "params",
**    "queues": {"NAME": {"status" ("paused" = paused, TO-12),
**               "disableReassign" (TO-12), "lastStart" (RFC 3339, null
**               = never; TO-06), "transtimehi", "transtimelo" (days, 0 =
**               reference; TO-11), "workflow" (HEARTBEAT_TIMEOUT_<w>,
**               TO-09)}},
**    "jobs": [{"jobID", "status" (to_status words), "queue" (a name of
**              "queues" or null), "statusSince", "createdAt" (default
**              statusSince), "lastHeartbeat" (null = none yet),
**              "currentPriority", "jobSubStatus" (non-empty = its own
**              stage-out, TO-09)}],
**    "rebro": [{"queue", "gshare", "nQueue", "nRun", "nQueueTotal",
**               "hasNSlots"}]}
** Parsing is strict like the other scenarios: unknown fields are errors
** and every error is "PATH: problem".
*/
#ifndef GB_SCENARIO_TIMEOUT_H
#define GB_SCENARIO_TIMEOUT_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "base/arena.h"
#include "params.h"
#include "timeout.h"

#define SCT_MAX_QUEUES 20000
#define SCT_MAX_JOBS 100000
#define SCT_MAX_REBRO 100000

struct sct_queue {
	const char *name;
	const char *status;     /* "online", ..., "paused" */
	const char *workflow;   /* "" = none */
	struct to_queue q;
};

struct sct_job {
	struct to_job j;        /* j.workflow = the queue's workflow */
	long long task_id;      /* taskID, 0 when not given */
	const char *gshare;     /* gshare, "" when not given */
	const char *queue;      /* NULL: no queue */
	const char *sub_status; /* jobSubStatus, "" = none */
	long qidx;              /* index in sct_scenario.queues, -1 none */
};

struct sct_rebro {
	const char *queue;
	const char *gshare;     /* "" reads the bare parameter */
	struct to_rebro_in in;
};

struct sct_scenario {
	long long now;
	struct prm_set params;
	struct sct_queue *queues;
	size_t nqueues;
	struct sct_job *jobs;
	size_t njobs;
	struct sct_rebro *rebro;
	size_t nrebro;
};

/* One job's verdict. */
struct sct_job_result {
	int fired;              /* a rule fired (v.rule set) */
	struct to_verdict v;
	const char *exempt;     /* "paused", "disableReassign" or NULL (TO-12) */
	int has_next;           /* to_next_check gave a time */
	long long next_at;      /* unix s, when has_next */
};

struct sct_result {
	struct sct_job_result *jobs;    /* njobs, in file order */
	struct to_rebro_out *rebro;     /* nrebro, in file order */
};

/* 1 when `root` is an object with "kind": "timeout", else 0. */
int sct_is_timeout_scenario(json_t *root);

/*
** Parse a timeout scenario into `out` (strings in `a`). Errors name their
** path, e.g. "jobs[2].status: unknown status 'runing'" (GB_ERANGE),
** 'jobs[0].queue: no queue "X" in queues' (GB_ENOTFOUND),
** "queues[\"Q\"].lastStart: expected RFC 3339 time ..." , "jobs[1].jobID:
** duplicate jobID ..." (GB_EDUP), "kind: expected \"timeout\"".
** Returns 0 or GB_E* with err.
*/
int sct_parse_scenario(json_t *root, struct arena *a, struct sct_scenario *out,
		       char *err, size_t errlen);

/*
** Run every job through to_check (and to_next_check when nothing fires)
** at its queue, and every rebro row through to_fast_rebro with the
** scenario's parameters. Arrays live in `a`. Returns 0, GB_EINVAL (NULL
** arguments or what the engine refuses) or GB_ENOMEM.
*/
int sct_run(const struct sct_scenario *s, struct arena *a,
	    struct sct_result *out);

/*
** The whole result as JSON (`explain --json` shows "now", "rebro" and the
** rows of the jobs no rule fires for next to the records of the others,
** explain_print.h): {"now", "jobs": [{"jobID", "status", "queue",
** "rule" (null when none), "what", "action", "ageSeconds",
** "limitSeconds", "ageHours", "limitHours", "ageDays", "limitDays"
** (null when none), "exempt" (null or "TO-12: paused" / "TO-12:
** disableReassign"), "nextCheck" (RFC 3339 or null), "nextCheckIn"
** (seconds or null)}], "rebro": [{"queue", "gshare", "nQueue", "nRun",
** "nQueueTotal", "hasNSlots", "triggered", "excess", "ratioLimit",
** "fracLimit", "nQueueLimit" (null when unset)}]}. New reference, NULL
** when out of memory or given NULL.
*/
json_t *sct_result_json(const struct sct_scenario *s,
			const struct sct_result *r);

/*
** What only an offline run shows, as text (`explain` prints it after the
** records of the jobs a rule fires for, render.h): one line per job no
** rule fires for (its next check, or TO-12's exemption), one per rebro row
** (TO-13's verdict, the three limits, the excess), and a summary line.
*/
void sct_print_offline(FILE *out, const struct sct_scenario *s,
		       const struct sct_result *r);

#endif
