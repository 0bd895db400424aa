/*
** scenario_write.h — scenario writers (prefix scw_): the inputs of one
** decision, as the worker holds them in memory, written as the scenario
** file `gridbroker explain` reads back to the same structs.
**
** Why: every decision the worker makes can then be replayed offline. A
** test dumps each decision of the integration runs as a scenario, decides
** it again through `explain`'s code path and compares the two decision
** records; that only means something when reading a written scenario gives
** back exactly what was written. So each writer is the inverse of one
** parser (scenario.h, scenario_jobs.h, scenario_analysis.h,
** scenario_match.h, scenario_timeout.h) and writes every field that parser
** reads:
**   - numbers bit for bit: a double is a JSON real (an integral one of
**     magnitude below 2^53 an integer, which reads back to the same
**     double; -0.0 stays a real); dump the result with jansson's default
**     precision or JSON_REAL_PRECISION(17), never fewer digits;
**   - integer fields as JSON integers;
**   - times as the parser expects them: RFC 3339 (tf_format) where the
**     format has a time, seconds before `now` where it has an age;
**   - what the parser takes as "absent" (a NULL string, a NAN where the
**     format has null, a zero time meaning never, an empty list) is left
**     out, so it reads back as the same NULL, NAN, 0 or empty list.
** Strings must be valid UTF-8 (jansson refuses others). The writers do
** not repeat the parsers' range checks: a value the parser refuses (a
** negative size, a string over its limit) is written as it is and the
** parser names it when the file is read.
**
** What the formats cannot say, and what the writers do about it (each is
** a value no decision depends on, or the call returns NULL):
**   - an age is >= 0: a time after `now` (another worker's clock ahead of
**     this one) is written as age 0 and reads back as `now`; the rules
**     only compare now - t with a limit, so they see the same (PJ-09,
**     PJ-26, AJ-17);
**   - a match history sample after `now`, or older than CDT_MAX_TIME
**     seconds, is left out: no slice (TimeSpan <= CDT_MAX_TIME) counts it
**     at `now` (pr_usage);
**   - the analysis state's load at a queue that is not in the grid is
**     left out: gm_analysis_resolve only looks up grid queues;
**   - a timeout job at a queue without a row (q NULL) is written with no
**     queue: to_check sees the same NULL queue;
**   - the grid's sw dictionaries are written from their JSON text
**     (gm_queue.sw_json, gm_grid.all_sw_json), which is what the parser
**     and MariaDB keep; a queue whose dictionary exists only parsed
**     (q.sw set, sw_json NULL) is refused. A dictionary written for a
**     queue that is not releases AUTO reads back parsed (q.sw set) where
**     the store leaves it NULL; only AUTO queues read it (RC-*).
** Each writer returns a new reference the caller must json_decref, or
** NULL when out of memory or given NULL, inconsistent or unwritable
** arguments (listed with each writer).
*/
#ifndef GB_SCENARIO_WRITE_H
#define GB_SCENARIO_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "analysis.h"
#include "codec/codec_tq.h"
#include "model/gridmodel.h"
#include "model/tqindex.h"
#include "params.h"
#include "priority.h"
#include "taskbroker.h"
#include "timeout.h"

/* jobSubStatus written for a timeout job with its own stage-out when the
** caller has no text (the worker keeps only whether there is one). */
#define SCW_OWN_STAGEOUT "own-stageout"

/*
** A task scenario (schemas/scenario-task.schema.json, scn_parse_task_
** scenario): {now, seed, params, nuclei, task}. `nuclei` has n entries
** (NULL when n is 0). NULL also when now <= 0 or beyond 9999, seed >
** LLONG_MAX (the format's integer), a NULL name, status, dataset or
** storage array with entries, a nucleus with two local entries for one
** dataset, an enum out of range or a number that is not finite.
*/
json_t *scw_task(long long now, uint64_t seed, const struct prm_set *params,
		 const struct tb_nucleus *nuclei, size_t n,
		 const struct tb_task *task);

/*
** A job scenario (schemas/scenario-jobs.schema.json, scj_parse_scenario):
** {now, seed, params, queues, sw, links, fileReplicas, task}. `g` is the
** grid as loaded (its queues with their counts per gshare, sw_json and
** all_sw_json, links, file replicas); `r` the request as the decoder or
** scj_parse_request gives it, before gm_resolve (t.jobs, t.njobs,
** t.total_input_gb, t.sw and need.arch are not read: the parser and
** gm_resolve make them again). lastPilotAge/lastStartAge are now - t
** (see the file comment for t > now). NULL also when: the grid holds two
** queues' sw under one name, a queue named "ALL" publishes a dictionary
** (the key means the ALL pseudo-queue), a dictionary exists only parsed,
** an sw_json is not JSON, two counts of one queue share a gshare, two
** replica entries share an lfn, a time is negative, or as scw_task.
** `params` may be NULL (no overrides).
*/
json_t *scw_jobs(long long now, unsigned long long seed,
		 const struct prm_set *params, const struct gm_grid *g,
		 const struct gm_request *r);

/*
** An analysis scenario (scenario_analysis.h): scw_jobs of an analysis
** request (r->an.is_analysis) plus "analysis": {owner (st->user),
** taskClass (tclass), gridQueued and gridRunning (st->grid_queued,
** st->grid_running; NULL when either is not finite), queues (st->queues
** at grid queues)}. The parser
** derives st->user.task_class (= tclass) and st->user.user_analysis (the
** gshare is "User Analysis" and shareTarget > 0), so a state that says
** otherwise is refused (NULL); so are a production request, two loads for
** one queue name and a NULL queue name.
*/
json_t *scw_analysis(long long now, unsigned long long seed,
		     const struct prm_set *params, const struct gm_grid *g,
		     const struct gm_request *r,
		     const struct gm_analysis_state *st,
		     enum an_task_class tclass);

/*
** A match scenario (schemas/scenario-match.schema.json, scm_parse_
** scenario): the configuration `cfg` ("groups" and "shareCorrections",
** enabled = cfg->corrections, WMSHistory listed to start), the CPU
** segments seg[0..nseg), the index's task queues in its (tq_id) order,
** each with its definition (names from the index), its CPU segment as
** cpuTime, every waiting job with its UserPriority (tqi_level_ids) and
** its "priority" as the index holds it, the history samples hist[0..
** nhist) as ages before now, and the pilot `p`. NULL also when: the
** segments are not valid (tq_segments_valid), a TQ's cpu_time is not one
** of them (it would read back as another segment), a TQ's priority is
** negative or not finite, cfg->default_share is not PR_DEFAULT_SHARE (the
** format has no key for it), two instances or two slices of one
** instance share a name, a slice is named like an instance option
** (Group, MaxGlobalCorrectionFactor, MaxGlobalCorrection), a sample has
** a NULL group or owner, or a value is not finite.
*/
json_t *scw_match(long long now, unsigned long long seed,
		  const struct pr_config *cfg, const long long *seg,
		  size_t nseg, const struct tqi_index *idx,
		  const struct pr_sample *hist, size_t nhist,
		  const struct cdt_pilot *p);

/*
** A timeout scenario (schemas/scenario-timeout.schema.json, sct_parse_
** scenario) with the one job `j`: {"kind": "timeout", now, params,
** queues, jobs: [j]}. `task_id` (0: none) and `gshare` (NULL or "": none)
** name the job's task and share as its decision record does. `q` is the job's queue row, NULL when it has none
** (then the job is written with no queue); with a row, `queue_name` names
** it and carries j->workflow as its "workflow" (the parser gives a job its
** queue's workflow), status "paused" when q->paused. `sub_status` is the
** job's jobSubStatus, or NULL to write SCW_OWN_STAGEOUT when
** j->own_stageout and nothing otherwise. NULL also when: q without a
** queue_name, a workflow without q, sub_status disagreeing with
** j->own_stageout, status_since or created_at <= 0 (the parser reads an
** absent createdAt as statusSince), a negative time, or a status out of
** range.
*/
json_t *scw_timeout(long long now, const struct prm_set *params,
		    const struct to_job *j, long long task_id,
		    const char *gshare, const char *queue_name,
		    const struct to_queue *q, const char *sub_status);

/* ---- the pieces the writers share ---------------------------------------- */

/* What a row of a writer table reads at base + off and writes. */
enum scw_kind {
	SCW_K_NUM,     /* double, finite (scw_num) */
	SCW_K_NUMNULL, /* double; NAN: left out (the parser's null) */
	SCW_K_LONG,    /* long, as an integer */
	SCW_K_LLONG,   /* long long, as an integer */
	SCW_K_BOOL,    /* int, as true (non-zero) or false */
	SCW_K_STR,     /* const char *; NULL: left out */
	SCW_K_LIST,    /* const char *const * at off, size_t count at off2;
			  none: left out */
	SCW_K_ENUM,    /* int, written as words[it]; a NULL word: left out */
	SCW_K_TIME,    /* long long unix s, RFC 3339; 0: left out */
	SCW_K_AGE,     /* long long unix s, seconds before now; 0: left out */
};

/* One row: which record of its table it belongs to (a file keeps every
** record it writes in one table, rows tagged), the key, what it reads. */
struct scw_fld {
	int rec;
	const char *key;
	unsigned char kind;
	size_t off, off2;
	const char *const *words; /* SCW_K_ENUM: nwords words */
	size_t nwords;
};

#define SCW_F(r, k, kd, s, m)                                             \
	{.rec = r, .key = k, .kind = kd, .off = offsetof(s, m)}
#define SCW_LIST(r, k, s, m, n)                                           \
	{.rec = r, .key = k, .kind = SCW_K_LIST, .off = offsetof(s, m),    \
	 .off2 = offsetof(s, n)}
#define SCW_ENUM(r, k, s, m, w)                                           \
	{.rec = r, .key = k, .kind = SCW_K_ENUM, .off = offsetof(s, m),    \
	 .words = w, .nwords = sizeof(w) / sizeof((w)[0])}
#define SCW_END {.key = NULL}

/*
** Set o[key] for every row of record `rec` of table `t` (ended by
** SCW_END) from the struct at `base`; `now` is what SCW_K_AGE rows count
** back from. Returns 0, or GB_EINVAL when a value cannot be written (see
** enum scw_kind) or memory ran out; `o` may then hold some of the rows.
*/
int scw_record(json_t *o, const struct scw_fld *t, int rec, const void *base,
	       long long now);

/* A new object of record `rec` of table `t` over `base` (scw_record);
** NULL when a value cannot be written or out of memory. */
json_t *scw_object(const struct scw_fld *t, int rec, const void *base,
		   long long now);

/* An array of the n structs of `size` bytes at v, each scw_object(t, rec,
** ..., now); NULL as scw_object, or when v is NULL and n is not 0. */
json_t *scw_objects(const struct scw_fld *t, int rec, const void *v,
		    size_t n, size_t size, long long now);

/* A double as JSON: an integer when integral, of magnitude below 2^53 and
** not -0.0 (it reads back to the same double), else a real. NULL when x
** is not finite or out of memory. */
json_t *scw_num(double x);

/* t (unix s, > 0, at most 9999-12-31T23:59:59Z) as RFC 3339; NULL
** otherwise or when out of memory. */
json_t *scw_time(long long t);

/* Seconds from t to now (t > 0); 0 when t is after now. NULL when t <= 0
** or out of memory. */
json_t *scw_age(long long now, long long t);

/* An array of the n strings of v (NULL only when n is 0); NULL when one
** is NULL or not UTF-8, or out of memory. */
json_t *scw_strings(const char *const *v, size_t n);

/*
** The overrides of `set` as a "params" object (NULL or empty: {}): the
** value a number, NAN null (unset); a name given twice keeps its last
** value, which is the one prm_get reads. NULL for a NULL name, a value
** that is infinite, or out of memory.
*/
json_t *scw_params(const struct prm_set *set);

/*
** The head of task, job and match scenarios: {"now": RFC 3339, "seed"}.
** NULL when now cannot be written (scw_time), the seed exceeds LLONG_MAX
** (the formats' integer) or out of memory.
*/
json_t *scw_head(long long now, unsigned long long seed);

/* `o` when `bad` is 0, else NULL after releasing `o` (NULL accepted):
** how a writer that filled `o` member by member ends. */
json_t *scw_done(json_t *o, int bad);

#endif
