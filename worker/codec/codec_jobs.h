/*
** codec_jobs.h — msgpack wire format of job brokerage: the job.broker
** request (a task and the jobs to place) and the jobs.assigned /
** jobs.pending events.
**
** Built on codec.h's scanner, typed field checks and event tail, so a
** job.broker message is validated exactly like a task.broker one: types and
** ranges checked before use, unknown keys ignored, duplicate keys refused,
** lengths checked against the bytes present, memory from a capped arena,
** and every failure named by its path ("jobs[3].inputFiles[0].size").
** One document per message in schemas/messages/ (job.broker.md,
** jobs.assigned.md, jobs.pending.md).
*/
#ifndef GB_CODEC_JOBS_H
#define GB_CODEC_JOBS_H

#include <stddef.h>

#include <msgpack.h>

#include "base/arena.h"
#include "codec/codec.h"
#include "decision.h"
#include "model/gridmodel.h"
#include "jobbroker.h"

#define CDJ_MAX_JOBS 10000       /* jobs of one request */
#define CDJ_MAX_FILES 200        /* input files of one job */
#define CDJ_MAX_PREASSIGNED 1000 /* pre-assigned queue names */
#define CDJ_MAX_SITES 1000       /* excludedSite, includedSite names */
#define CDJ_MAX_TASK_PRIORITY 1000000   /* taskPriority (AJ-08) */
#define CDJ_DEFAULT_TASK_PRIORITY 1000  /* JEDI's default taskPriority */
/* The largest valid request has about 10000 x (7 + 200 x 5) values; the
** scan refuses more before msgpack-c allocates anything. */
#define CDJ_MAX_VALUES (1u << 24)
#define CDJ_MAX_TIME 253402300799LL /* 9999-12-31T23:59:59Z, unix s */
#define CDJ_MAX_CORES 1000000       /* coreCount, maxCoreCount */
#define CDJ_MAX_EVENTS 1000000000   /* nEvents of one job */

/* What a request says beyond struct gm_request. */
struct cdj_extra {
	/* 1 when the message carried jobScope; 0 when the worker must take
	** the FC-06 scope from the task record (out->t.scope is then
	** TB_SCOPE_SATELLITES, a placeholder). */
	int has_scope;
};

/*
** Decode a job.broker request into `out` (and `extra`, which may be NULL).
** Every string and array lives in `a`, none points into `buf`; the caller
** caps `a` (the decoder also charges the size of msgpack-c's object tree
** against what is left of the cap before unpacking).
**
** out->t holds the task fields; out->t.nucleus and out->t.gshare are NULL
** when absent (the worker completes them from the task record);
** out->jobs/njobs hold the jobs with their input files, in message order;
** out->architecture is the raw RC-02 string (checked with rc_parse_arch,
** parsed again by gm_resolve); out->need holds containerName,
** onlyTagsForFC, swProject, swVersion, swKind. t.jobs, t.njobs,
** t.total_input_gb, t.sw and need.arch are left zero for gm_resolve().
** Required: taskID and jobs (and each job's jobID, each file's lfn and
** size). Defaults of absent or nil optional fields: numbers and flags 0
** (currentPriority and nEvents included), strings "", coreCount 1,
** cpuEfficiency 100, swKind "release", no pre-assignment.
**
** out->an holds the analysis fields. taskType "anal" sets is_analysis and
** requires userName (GB_EMISSING on "userName"); workingGroup NULL when
** absent or nil, taskPriority default CDJ_DEFAULT_TASK_PRIORITY,
** ramCountUnit "MBPerCore" (ram_per_core 1, the default) or "MB" (0),
** excludedSite/includedSite NULL/0 when absent, nil or [], avoidVP 0. For
** a production request (taskType "prod", absent or nil) the other
** analysis keys are ignored like unknown keys (as the JSON request parser
** ignores them) and out->an is zero except task_priority and
** ram_per_core, which hold their defaults.
**
** Returns 0, or GB_EDECODE (not one msgpack object, truncated, trailing
** bytes), GB_ETYPE, GB_EMISSING, GB_ERANGE, GB_ETOOBIG (limits: 1..
** CDJ_MAX_JOBS jobs, 0..CDJ_MAX_FILES files per job, CDJ_MAX_PREASSIGNED
** names, strings up to COD_MAX_STRING - 1 bytes, nesting COD_MAX_DEPTH),
** GB_EDUP (a key twice in one map, a jobID twice, an lfn twice in one
** job, a pre-assigned queue twice, a site twice in excludedSite or in
** includedSite; CDJ_MAX_SITES names each) or GB_ENOMEM (arena cap), with `err`
** naming the field; GB_EINVAL when `a` or `out` is NULL. `*out` is written
** only on success.
*/
int cdj_decode_request(const void *buf, size_t len, struct arena *a,
		       struct gm_request *out, struct cdj_extra *extra,
		       struct cod_error *err);

/*
** Encode request `r` as job.broker (what `gridbroker job submit` sends),
** with jobScope only when `extra` says it was given (NULL: not given);
** nucleus and gshare are left out when NULL. Every field is checked as
** cdj_decode_request would check it (GB_EINVAL, nothing useful in `out`),
** so decode(encode(r)) reproduces r. The unit of outDiskCount is sent as
** "kBPerEvent" or "kB". taskType is always sent ("prod" or "anal"); the
** other analysis fields only for an analysis request (r->an.is_analysis),
** all of them (workingGroup nil when NULL, ramCountUnit "MBPerCore" or
** "MB"); a production request's r->an is not looked at. Returns 0,
** GB_EINVAL or GB_ENOMEM.
*/
int cdj_encode_request_ext(const struct gm_request *r,
			   const struct cdj_extra *extra,
			   msgpack_sbuffer *out);

/*
** The same for a request parsed from JSON, which does not record whether
** jobScope was there: it is sent only when r->t.scope is nucleus-only.
** Sending "satellites" would override a nucleus-only FC-06 scope kept in
** the task record, letting a full-chain task's jobs leave its nucleus;
** leaving it out lets the worker use the record.
*/
int cdj_encode_request(const struct gm_request *r, msgpack_sbuffer *out);

/* What a jobs.assigned / jobs.pending event says. */
struct cdj_event {
	const char *event;             /* "jobs.assigned" or "jobs.pending" */
	long long decision_id;
	const char *request_id;        /* the request's message id, or NULL */
	const struct gm_request *req;  /* nucleus and gshare completed */
	const struct jb_queue *queues; /* dec->ncands, as decided */
	const struct dec_decision *dec;
	const struct jb_plan *plan;    /* job_queue/job_status: req->njobs */
	long long decided_at;          /* unix s */
	long long retry_at;            /* unix s when jobs are left, else 0 */
};

/*
** Encode an event. Both carry event, decisionId, requestId, taskID,
** gshare, nucleus, decidedAt (RFC 3339) and decidedAtUnix, and end with
** cod_pack_outcome()'s stages, reasons and rejected. An assigned decision
** adds assignments [{queue, weight, status, jobIDs}] (one entry per queue
** and job status, queues in plan->best order, jobIDs in request order),
** unassigned [jobIDs] and, only when that list is not empty, retryAt. A
** pending one adds retryAfter, retryAt and njobs.
** Returns 0, GB_EINVAL (NULL pieces, a time that cannot be formatted, a
** plan naming a queue outside plan->best, jobs left without retry_at) or
** GB_ENOMEM.
*/
int cdj_encode_event(const struct cdj_event *ev, msgpack_sbuffer *out);

#endif
