/*
** record.h — the decision record of each kind (prefix rec_): what the
** worker stores with a decision (decisions.detail, pilot_matches.detail)
** and what `gridbroker explain --json` prints for the same inputs.
**
** One function per kind turns what the decision path returned
** (model/decide.h) into the kind's detail object and finishes it into the
** record (decrec.h: digest, stage cuts, size bound). The worker and
** `explain` both call these, so the same inputs give the same record,
** digest included, and one renderer (render.h) prints either: the record
** holds everything the text shows.
*/
#ifndef GB_RECORD_H
#define GB_RECORD_H

#include <jansson.h>

#include "codec/codec_panda.h"
#include "model/decide.h"

/*
** The record text of a decision, at most DR_RECORD_MAX bytes of compact
** JSON: a malloc'd string for free(), or NULL when out of memory or given
** an inconsistent decision. Every rec_ function takes `kept` last: when
** not NULL, it gets a reference to the record as an object (decrec.h
** dr_finish_keep), or NULL with the text; NULL asks for the text only.
**   rec_task      report.h's task detail
**   rec_jobs      report_jobs.h's detail with the parameters and env
**   rec_analysis  report_analysis.h's detail
*/
char *rec_task(const struct md_task *d, json_t **kept);
char *rec_jobs(const struct md_jobs *d, json_t **kept);
char *rec_analysis(const struct md_analysis *d, json_t **kept);

/* One pilot's match: its description, the match and the final verdict. */
struct rec_pilot {
	const char *pilot_id;
	struct md_pilot p;           /* what it offers */
	int job_sharing;             /* one of its groups has JOB_SHARING */
	const struct tq_result *res; /* the (last) pick's counts */
	int matched;                 /* a job was given (claimed) */
	const char *code, *reason;   /* TQ-10: "matched" or why not */
	long long tq_id, job_id;     /* when matched */
	int user_priority;
	long long tq_cpu;
	const char *owner_dn, *tq_owner_group; /* the TQ's */
	int lost;                    /* picks another worker claimed first
					(not digested: no re-run knows it) */
};

/*
** The record of a pilot.match decision:
**   {"decision": "matched" | "nomatch", "code", "reason", "pilot" (id),
**    "site", "resource": {"setup", "cpuTime", then each of "site",
**    "gridCE", "platform", "pilotType", "jobType", "tags", "bannedSite",
**    "bannedGridCE", "bannedPlatform", "bannedPilotType", "bannedJobType",
**    "bannedTag", "requiredTags", "ownerGroup", "ownerDN" as "ANY", a
**    string, an array of several or null, and "jobSharing"}, "tq", "job",
**    "userPriority", "tqOwnerDN", "tqOwnerGroup", "tqCpuTime" (null when
**    nothing matched), "considered", "matched", "empty", "entrants",
**    "topCpuTime", "lotteryTotal", "rejectedBy": {filter: count},
**    "stages": [{"name", "rule", "in", "out", "cut"}] (the filters that
**    cut, in table order), and after the digest "lostClaims"}.
*/
char *rec_match(const struct rec_pilot *p, json_t **kept);

/* Set a pilot's lists on `o` as the match record's "resource" shows them
** (each key of pilot.match: "ANY", a string, an array of several, or
** null; with `skip` the absent ones are left out, as a scenario file
** writes them). Returns 0 or non-zero when out of memory. */
int rec_pilot_lists(json_t *o, const struct tqi_pilot *d, int skip);

/*
** The record of a timeout or fast-rebrokerage decision about the job
** `ev` names (the job.timeout event's fields: jobID, taskID, queue,
** gshare, status and the verdict; the rest is not read), with `in` and
** `out` the TO-13 numbers (NULL for a timeout):
**   {"jobID", "taskID", "queue" (or null), "gshare", "status", "rule",
**    "what", "age", "limit" (s), "action", "fastRebro": {"nQueue", "nRun",
**    "nQueueTotal", "ratioLimit", "fracLimit", "nQueueLimit", "excess"}
**    (TO-13 only), "decision" (the action)}.
*/
char *rec_timeout(const struct cdp_timeout_event *ev,
		  const struct to_rebro_in *in,
		  const struct to_rebro_out *out, json_t **kept);

#endif
