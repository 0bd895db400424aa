/*
** codec_panda.h — msgpack wire format of the PanDA job life cycle: the
** job.status request for PanDA jobs (system "panda"), and the events the
** analysis throttle and the timeout scan publish: task.throttled,
** job.timeout and job.rebrokered.
**
** job.status carries both systems' updates on one routing key. The DIRAC
** form (codec_tq.h, cdt_decode_status) has no "system" key or "system":
** "dirac"; the PanDA form has "system": "panda" and PanDA's status words.
** cdp_status_system() reads only that key, so the handler can pick the
** decoder before decoding; each decoder then validates every field.
**
** Built on codec.h's scanner and typed field checks, like every other
** message: types and ranges checked before use, unknown keys ignored,
** duplicate keys refused, sizes capped before msgpack-c allocates, memory
** from a capped arena, failures named by field. One document per message
** in schemas/messages/.
*/
#ifndef GB_CODEC_PANDA_H
#define GB_CODEC_PANDA_H

#include <stddef.h>

#include <msgpack.h>

#include "analysis.h"
#include "base/arena.h"
#include "codec/codec.h"
#include "timeout.h"

#define CDP_MAX_TIME 253402300799LL /* 9999-12-31T23:59:59Z, unix s */

enum cdp_system { CDP_SYS_DIRAC = 0, CDP_SYS_PANDA = 1 };

/*
** Which decoder a job.status body needs: "system" absent or nil -> DIRAC,
** "dirac" -> DIRAC, "panda" -> PanDA. Returns 0 with *sys set, or
** GB_EDECODE (not one msgpack map), GB_ETYPE (system not a string),
** GB_ERANGE (another word: "unknown value 'x'; expected dirac or panda"),
** GB_EDUP (the key twice), with `err` naming the field ("body" when the
** whole message is at fault). Reads nothing else, allocates nothing
** beyond msgpack's bounded zone.
*/
int cdp_status_system(const void *buf, size_t len, enum cdp_system *sys,
		      struct cod_error *err);

/* A PanDA job.status update. */
struct cdp_status {
	long long job_id;        /* jobID (PandaID), 1 .. 2^63-1 */
	int heartbeat;           /* status "heartbeat": no change, alive */
	enum to_status status;   /* when !heartbeat: defined, assigned,
				    activated, throttled, sent, starting,
				    running, holding, transferring, finished,
				    failed, closed, cancelled; "started" is
				    read as running. Never TO_ST_PENDING
				    (gridbroker's own word: no queue yet) */
	long long time;          /* unix s at the producer, 0..CDP_MAX_TIME */
	const char *job_sub_status; /* jobSubStatus: NULL absent/nil, ""
				       clears, else 1..63 bytes */
	const char *site;        /* computingSite; NULL when absent/nil */
};

/*
** Decode a PanDA job.status body: {"system": "panda", "jobID", "status",
** "time", optional "jobSubStatus", "computingSite"}. Strings live in `a`.
** Returns 0 or GB_EDECODE, GB_ETYPE, GB_EMISSING, GB_ERANGE (an unknown
** status word lists the accepted ones), GB_ETOOBIG, GB_EDUP, GB_ENOMEM
** with `err` naming the field; GB_EINVAL on NULL arguments.
*/
int cdp_decode_status(const void *buf, size_t len, struct arena *a,
		      struct cdp_status *out, struct cod_error *err);
/* Encode one (what `gridbroker job status --panda` sends). GB_EINVAL for
** a status out of range or TO_ST_PENDING, GB_ENOMEM on a write failure. */
int cdp_encode_status(const struct cdp_status *s, msgpack_sbuffer *out);

/*
** task.throttled: the analysis throttle (AJ-01..AJ-04) stopped a task.
** Keys: event "task.throttled", decisionId, requestId, taskID, gshare,
** userName, workingGroup (nil when none), countsOf ("user" or
** "workingGroup"), taskClass ("S".."C"), rule, code, value, limit,
** runningJobs, queuedJobs, runningCores, queuedCores, quotaExceeded,
** shareUsage, shareTarget (nil when the share is not User Analysis),
** hiSiteSlots, decidedAt, retryAt, reasons (an array of one string: the
** rule, what was compared and the numbers, as the log line says it).
*/
struct cdp_throttled_event {
	long long decision_id;
	const char *request_id;
	long long task_id;
	const char *gshare;
	const char *user;
	const char *working_group;  /* NULL when none */
	enum an_task_class task_class;
	const struct an_user_load *load;
	const struct an_throttle *th; /* throttled = 1 */
	long long decided_at, retry_at;
};
int cdp_encode_throttled(const struct cdp_throttled_event *e,
			 msgpack_sbuffer *out);

/*
** job.timeout: one per job a timeout rule fired for (TO-14). Keys: event
** "job.timeout", decisionId, requestId, jobID, taskID, queue (nil when the
** job had none), gshare, status (the status it timed out in), rule, what,
** age (s), limit (s), action ("reassign", "fail", "kill"), newStatus
** ("pending" after a reassign, "failed", "cancelled"), attempt (the job's
** reassignment count after this decision), decidedAt, reasons (one
** string, e.g. "TO-05: activated or starting for 172801 s > 172800 s").
*/
struct cdp_timeout_event {
	long long decision_id;
	const char *request_id;
	long long job_id, task_id;
	const char *queue;          /* NULL when the job had none */
	const char *gshare;
	enum to_status status;
	const struct to_verdict *v; /* rule set, action not NONE */
	const char *new_status;
	int attempt;
	long long decided_at;
};
int cdp_encode_timeout(const struct cdp_timeout_event *e,
		       msgpack_sbuffer *out);

/*
** job.rebrokered: a job went back to the brokerage, after a timeout
** (TO-01..TO-06 reassign) or by fast rebrokerage (TO-13). Keys: event
** "job.rebrokered", decisionId, requestId, jobID, taskID, fromQueue (nil
** when none), gshare, rule, attempt, jobRequestId (the job.broker
** request whose pending retry places the job again), decidedAt,
** fastRebro (nil, or for TO-13 a map: nQueue, nRun, nQueueTotal,
** ratioLimit, fracLimit, nQueueLimit, excess), reasons (one string).
*/
struct cdp_rebrokered_event {
	long long decision_id;
	const char *request_id;
	long long job_id, task_id;
	const char *from_queue;
	const char *gshare;
	const char *rule;
	int attempt;
	const char *job_request_id;
	long long decided_at;
	/* TO-13 only (NULL otherwise): the numbers that triggered it */
	const struct to_rebro_in *rebro_in;
	const struct to_rebro_out *rebro_out;
};
int cdp_encode_rebrokered(const struct cdp_rebrokered_event *e,
			  msgpack_sbuffer *out);

#endif
