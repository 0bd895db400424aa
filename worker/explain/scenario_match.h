/*
** scenario_match.h — DIRAC match scenarios for `gridbroker explain`
** (prefix scm_): task queues with their waiting jobs, the group and
** share-correction configuration, a running-job history and one pilot,
** matched offline through the code path of the worker: the TQs are
** interned into a tqindex (tqindex.h), priorities come from pr_recompute
** over the index's statistics (PR-01..PR-08), and the pilot is resolved
** with tqi_resource and matched with tq_match (TQ-04..TQ-10).
**
** Format (schemas/scenario-match.schema.json):
**   {"$schema", "description", "now" (RFC 3339), "seed",
**    "groups", "shareCorrections", "cpuSegments"   (dirac_json.h),
**    "taskQueues": [{"id", "description", ownerDN, ownerGroup, setup,
**                    cpuTime (raw seconds; TQ-02 gives the segment),
**                    sites, bannedSites, gridCEs, platforms, pilotTypes,
**                    submitPools, gridMiddlewares,
**                    "priority" (optional, >= 0: the TQ's lottery
**                    priority as the worker's index held it; every TQ
**                    has one or none has),
**                    "jobs": [{"jobID", "userPriority"}]
**                    or "jobsByPriority": {"1": 300, "5": 20}}],
**    "history": [{"age" (s before now), "ownerGroup", "ownerDN"
**                 (optional), "running"}],
**    "pilot": {...}   (dirac_json.h's pilot)}
** jobsByPriority generates the ids id x SCM_GEN_BASE + 1, + 2, ... in
** ascending UserPriority. Parsing is strict (unknown fields, types,
** ranges; TQ ids and job ids unique; two TQs with the same requirements
** are refused, since TQ-01 would make them one; "priority" on some TQs
** but not all is refused), with "PATH: problem" errors.
*/
#ifndef GB_SCENARIO_MATCH_H
#define GB_SCENARIO_MATCH_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "base/arena.h"
#include "codec/codec_tq.h"
#include "decision.h"
#include "explain/dirac_json.h"
#include "model/decide.h"
#include "priority.h"
#include "taskqueue.h"

#define SCM_MAX_TQS 100000       /* task queues of one scenario */
#define SCM_MAX_JOBS 5000000     /* waiting jobs of one scenario */
#define SCM_MAX_HISTORY 1000000  /* history samples */
#define SCM_MAX_TQ_ID 1000000000LL /* so generated job ids fit */
#define SCM_GEN_BASE 1000000LL   /* jobsByPriority ids: id x this + n */

struct scm_job {
	long long job_id;
	int user_priority;
};

/* One task queue as the scenario writes it. */
struct scm_tq {
	long long tq_id;
	const char *description; /* NULL when none */
	/* owner, owner_group, setup, cpu_time (raw seconds) and the sets;
	** job_id and user_priority unused */
	struct cdt_job def;
	long long segment;       /* TQ-02 segment of def.cpu_time */
	struct scm_job *jobs;
	size_t njobs;
	/* "priority": the lottery priority the worker's index held (PR-08,
	** as the leader last computed it), >= 0; has_priority 0 and
	** priority 0 when the file gives none. Either every TQ has one or
	** none has. */
	double priority;
	int has_priority;
};

struct scm_scenario {
	long long now;           /* unix s */
	unsigned long long seed; /* of the TQ-07 / TQ-08 draws */
	struct dj_config cfg;
	struct scm_tq *tqs;      /* file order */
	size_t ntqs;
	/* t = now - age; a sample without ownerDN has owner "" (it counts
	** for its group between groups, for no owner inside one) */
	struct pr_sample *hist;
	size_t nhist;
	struct cdt_pilot pilot;  /* pilot_id may be NULL */
};

/* 1 when `root` is an object with a "taskQueues" key, else 0. */
int scm_is_match_scenario(json_t *root);

/*
** Parse a whole match scenario; everything lives in `a`. Returns 0 or
** GB_E* with "PATH: problem" in err (GB_EDUP for a repeated TQ id or job
** id, or two TQs with one requirement set; GB_EMISSING or GB_EINVAL at
** "taskQueues[i].priority" when taskQueues[0] has a priority and TQ i
** has none, or the other way round).
*/
int scm_parse_scenario(json_t *root, struct arena *a, struct scm_scenario *out,
		       char *err, size_t errlen);

/* One task queue's outcome. */
struct scm_row {
	const struct scm_tq *tq;
	struct pr_tq pr;   /* pr_recompute's inputs and outputs (owner strings
			      point into the scenario) */
	int verdict;       /* an enum tq_filter_id (rejected by that filter)
			      or an enum tq_verdict */
	struct dec_reason reason; /* tq_reason, when rejected */
	const char *detail; /* the reason rendered with the names compared
			       (in the arena), NULL when not rejected */
};

/* One corrector instance's corrections, from pr_correct (PR-05..07). */
struct scm_correction {
	const struct pr_instance *inst;
	int ignored;            /* for a JOB_SHARING group (PR-07) */
	struct pr_entity *ents; /* the entities it corrects, in the arena */
	size_t nents;
};

struct scm_result {
	struct scm_row *rows;   /* one per TQ, ascending tq_id (the order the
				   worker's index hands to tq_match) */
	size_t nrows;
	struct md_match m;      /* the decision path's result (the pick) */
	struct tq_result match; /* tq_match's counts (m.result) */
	long chosen;            /* index into rows, -1 when no job */
	long long job_id;       /* 0 when none */
	int job_priority;       /* the chosen job's UserPriority */
	int job_sharing;        /* the pilot's group has JOB_SHARING */
	struct scm_correction *corr; /* per instance when corrections are on */
	size_t ncorr;
	char note[256];         /* pr_recompute's note */
	char outcome[384];      /* tq_result_format */
};

/*
** Match scenario `s` as the worker does (see the file comment); every
** array of `out` lives in `a`, the index is freed before returning, `s`
** is not modified. Returns 0 (out->chosen -1 means no job: the counts say
** why), or GB_ENOMEM / GB_EINVAL from the index, pr_recompute or
** tq_match.
*/
int scm_run(const struct scm_scenario *s, struct arena *a,
	    struct scm_result *out);

/* A pilot.match request's resource description in the terms of the
** decision path (md_match_pilot); the strings stay p's. */
struct md_pilot scm_md_pilot(const struct cdt_pilot *p);

/* The last CN of a DN ("/DC=ch/.../CN=alice" -> "alice"), for tables; the
** DN itself when it has none. Points into dn. (render.h's rn_short_dn.) */
const char *scm_short_dn(const char *dn);

/* "chosen", "lottery entrant", "lower CPU time", "empty", or "rejected by
** <filter>"; written into buf (n bytes), which is returned. */
const char *scm_verdict_text(int verdict, char *buf, size_t n);

/*
** The whole result as JSON (`explain --json` shows its "taskQueues" and
** "corrections" next to the pilot's record, explain_print.h; the rest is
** the record's, and here for tests that compare two runs):
**   {"pilot": {pilotID, setup, cpuTime, site, gridCE, platform, pilotType,
**              ownerGroup, ownerDN, jobSharing},
**    "outcome": "matched"|"nomatch", "code" (tq_result_code), "reason"
**    (tq_result_format), "job": {jobID, tqID, userPriority, ownerDN,
**    ownerGroup} or null,
**    "counts": {considered, matched, empty, entrants, topCpuTime,
**               lotteryTotal, rejected: {filter: n, ...}},
**    "taskQueues": [{id, description, ownerDN, ownerGroup, setup, cpuTime,
**      cpuSegment, jobs, groupShare, groupCorrection, userCorrection,
**      entityShare, j, priority, verdict, filter, rule, detail}]
**      (filter, rule, detail null unless rejected),
**    "corrections": {"enabled", "note", "instances": [{name, group,
**      maxGlobalCorrection, ignored, slices: [{name, timeSpan, weight,
**      maxCorrection}], entities: [{name, share, usage: [..],
**      sliceCorrections: [.. or null], correction}]}]}}
** A new reference, NULL when out of memory.
*/
json_t *scm_result_json(const struct scm_scenario *s,
			const struct scm_result *r);

/*
** What only an offline run shows, as a table (`explain` prints it after the
** pilot's record, render.h): one row per TQ (id, owner, group, segment,
** jobs, shares and corrections, J, priority, verdict) with the rejected
** ones' reasons under them, the corrector's per-slice corrections per
** instance and pr_recompute's note. The pilot, the counts, the TQ-10 line
** and the chosen job are the record's.
*/
void scm_print_queues(FILE *out, const struct scm_scenario *s,
		      const struct scm_result *r);

#endif
