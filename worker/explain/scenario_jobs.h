/*
** scenario_jobs.h — job-brokerage JSON: the grid's queues, published
** software, links and file replicas (grid files for `gridbroker grid load`
** and the state part of a job scenario), job requests (`gridbroker job
** submit` and a scenario's "task"), whole job scenarios for `gridbroker
** explain`, and scj_run, which decides one through the worker's decision
** path.
**
** The formats are documented in schemas/scenario-jobs.schema.json. Parsing
** is strict like scenario.c's: unknown fields are errors, every value's type
** and range is checked, and every error is "PATH: problem" with the JSON
** path, e.g. "queues[3].maxrss: expected a number >= 0, got -1". Strings
** and arrays are copied into the caller's arena, so the results outlive the
** json_t they were parsed from.
*/
#ifndef GB_SCENARIO_JOBS_H
#define GB_SCENARIO_JOBS_H

#include <stddef.h>

#include <jansson.h>

#include "base/arena.h"
#include "decision.h"
#include "model/decide.h"
#include "model/gridmodel.h"
#include "jobbroker.h"
#include "params.h"

#define SCJ_MAX_QUEUES 20000     /* queues in one grid */
#define SCJ_MAX_GSHARES 256      /* gshares with counts per queue */
#define SCJ_MAX_LINKS 200000     /* site -> nucleus links */
#define SCJ_MAX_REPLICA_FILES 2000000 /* files in fileReplicas */
#define SCJ_MAX_REPLICAS 64      /* storages per file */
#define SCJ_MAX_RELEASES 10000   /* entries of a releases list */
#define SCJ_MAX_JOBS 10000       /* jobs of one request */
#define SCJ_MAX_INPUTS 200       /* input files of one job */
#define SCJ_MAX_PREASSIGNED 1000 /* pre-assigned queues of a request */
#define SCJ_MAX_SITE_LIST 1000   /* excludedSite / includedSite entries */
#define SCJ_MAX_OWNERS 1000000   /* users (and groups) of a grid's analysis */
#define SCJ_MAX_CLASSES 1000000  /* taskClasses of a grid's analysis */

/*
** What a caller deciding many scenarios in a row keeps from one to the
** next (replay, one per thread), keyed by the very json_t values it hands
** in: replay's reader (explain/reuse.h) gives consecutive decisions whose
** text is the same one value, so a value seen before is parsed already.
** Each entry holds a reference on its value, so an address is not reused
** while it is kept. Used only with no_sw_text (writing a scenario back out
** needs each dictionary's text).
**
** sw: the parsed "sw" dictionaries of one "sw" object, two thirds of a
** sample-grid job scenario, which change only when software is published;
** a scenario with another object replaces them.
** queues: each "queues" element parsed (gm_queue), but for its ages
** (lastPilotAge, lastStartAge), which are read again for each scenario's
** `now`; emptied whole when it holds SCJ_MEMO_QUEUES entries. An element
** not found by its address is compared with the previous scenario's
** element at the same index: when every member but the ages is the same
** value (the same json_t, as the reader makes an element whose ages alone
** moved, or json_equal), it takes that element's parse too.
** links: the parsed "links" of one "links" array (they change when `now`
** does: their rates are recent averages); each scenario gets a copy of
** the array, the strings shared.
*/
#define SCJ_MEMO_QUEUES 4096
struct scj_memo_queue {
	json_t *node;   /* the element (a reference), NULL: free slot */
	struct gm_queue q;
};
struct scj_memo {
	json_t *sw;         /* the "sw" object parsed (a reference), or NULL */
	struct arena sw_a;  /* the dictionaries and the lists below */
	const char **names; /* the entries' keys, in the object's order */
	const struct rc_sw **dict;
	size_t n;
	struct arena q_a;   /* the queues' strings and lists */
	struct scj_memo_queue *qs; /* 2 * SCJ_MEMO_QUEUES slots, by address */
	size_t nq;
	json_t **last;     /* the previous scenario's elements by index (held
			      by their slots; NULL: not kept) */
	size_t nlast;
	json_t *links;      /* the "links" array parsed (a reference), or NULL */
	struct arena links_a; /* its links and their strings */
	const struct gm_link *link;
	size_t nlink;
	long long links_hits; /* scenarios whose links were found here */
	long long sw_hits, queue_hits; /* scenarios / elements found here */
};

/* An empty memo (GB_OK), or GB_ENOMEM; scj_memo_fini frees it. */
int scj_memo_init(struct scj_memo *m);
void scj_memo_fini(struct scj_memo *m);

/* What the parsers of a grid or scenario keep beyond what deciding needs;
** all zero (or a NULL pointer) is the default. */
struct scj_opts {
	/* Parse each "sw" dictionary (q.sw, all_sw) but leave its text
	** (gm_queue.sw_json, gm_grid.all_sw_json) NULL: only storing a grid
	** and writing a scenario back out read the text (scenario_write.h
	** refuses such a grid), deciding reads the parsed dictionaries. It
	** saves a JSON dump per dictionary, for callers that only decide. */
	int no_sw_text;
	/* With no_sw_text: take the "sw" dictionaries and the queues this
	** memo holds for this scenario's very values; parse the rest into
	** it. NULL: parse everything. */
	struct scj_memo *memo;
	/* ex_opts.keep_json, passed down to the record (explain.c). */
	int keep_json;
};

/* A whole job scenario: {now, seed, params, queues, sw, links,
** fileReplicas, task}. */
struct scj_scenario {
	long long now;           /* unix s, from RFC 3339 `now` */
	unsigned long long seed; /* of the PJ-36 draws */
	struct prm_set params;   /* overrides, in the arena */
	struct gm_grid grid;
	struct gm_request req;
};

/*
** Parse the job-brokerage keys of a grid file or scenario `root`:
** "queues", "sw", "links", "fileReplicas" (each optional; other top-level
** keys are the caller's business). `now` turns lastPilotAge/lastStartAge
** into unix seconds (now - age; null or absent -> 0, never). A queue's q.sw
** and sw_json come from its entry in "sw" (NULL when it has none); "ALL"
** fills all_sw/all_sw_json. Everything lives in `a`. Returns 0 or GB_E*
** with "PATH: problem" in err (GB_EDUP for a repeated queue name, link or
** replica; GB_EINVAL for an unknown field; GB_ENOTFOUND for an "sw" entry
** that names no queue).
*/
int scj_parse_grid(json_t *root, struct arena *a, long long now,
		   struct gm_grid *out, char *err, size_t errlen);

/* scj_parse_grid with options `o` (NULL: the defaults, which
** scj_parse_grid uses). */
int scj_parse_grid_opts(json_t *root, struct arena *a, long long now,
			const struct scj_opts *o, struct gm_grid *out,
			char *err, size_t errlen);

/*
** Parse the "analysis" section of a grid file (what `grid load` stores for
** the analysis brokerage; the whole section replaces the stored one):
**   {"users": {"NAME": {"runningJobs", "queuedJobs", "runningCores",
**                       "queuedCores", "hiSiteSlots", "quotaUsedGB",
**                       "quotaGB"}},
**    "workingGroups": {"NAME": {the same}},
**    "shares": {"GSHARE": {"target" (> 0, required), "usage" (>= 0)}},
**    "taskClasses": {"TASKID": "S" | "A" | "B" | "C"}}
** Every key is optional; counts default to 0 (>= 0), quotaGB absent or
** null means unlimited (NAN). out->owners holds the users first, then the
** working groups (is_group 1); classes are sorted by task ID. `analysis`
** NULL or null gives an empty section. Strings live in `a`. Returns 0 or
** GB_E* with "PATH: problem" in err, paths starting at "analysis" (e.g.
** 'analysis.users["alice"].runningJobs: expected a number >= 0, got -1';
** GB_EINVAL unknown field, GB_ERANGE a bad task ID or class, GB_EDUP a
** task ID given twice, GB_EMISSING a share without target).
*/
int scj_parse_analysis_grid(json_t *analysis, struct arena *a,
			struct gm_analysis_grid *out, char *err, size_t errlen);

/*
** Parse a job request (the JOB REQUEST object). `scenario` non-zero makes
** "nucleus" and "gshare" required; otherwise they may be absent (NULL in
** out->t) for the worker to complete from the task record.
** Analysis fields (out->an; the msgpack decoder's names and rules):
** "taskType" "prod" (default) | "anal"; "userName" (required for anal);
** "workingGroup" (optional, NULL when absent); "taskPriority" 0..1000000
** (default 1000); "ramCountUnit" "MBPerCore" (default) | "MB";
** "excludedSite" / "includedSite" (arrays of unique non-empty names);
** "avoidVP" (bool). An analysis request needs no nucleus (t.nucleus ""
** when absent) and its gshare defaults to "User Analysis", in both modes.
** A production request ignores them (out->an stays zero). Limits: 1..
** SCJ_MAX_JOBS jobs, 0..SCJ_MAX_INPUTS files per job, strings up to
** COD_MAX_STRING - 1 bytes, unique jobIDs. The architecture is checked with
** rc_parse_arch (RC-02); out->need.arch is filled again by gm_resolve.
** t.jobs/t.njobs/t.total_input_gb/t.sw are left for gm_resolve. Returns 0
** or GB_E* with err.
*/
int scj_parse_request(json_t *obj, const char *path, struct arena *a,
		      int scenario, struct gm_request *out, char *err,
		      size_t errlen);

/* Parse a whole job scenario. Returns 0 or GB_E* with err. */
int scj_parse_scenario(json_t *root, struct arena *a, struct scj_scenario *out,
		       char *err, size_t errlen);

/* scj_parse_scenario with options `o` for its grid (NULL: the defaults). */
int scj_parse_scenario_opts(json_t *root, struct arena *a,
			    const struct scj_opts *o, struct scj_scenario *out,
			    char *err, size_t errlen);

/*
** 1 when `root` is a production job scenario: an object with a "queues"
** key, no "kind" (a timeout scenario has "kind": "timeout") and a "task"
** whose taskType is not "anal" (an analysis scenario, scenario_analysis.h).
** Else 0.
*/
int scj_is_job_scenario(json_t *root);

/*
** Decide scenario `s` as the worker decides a request: md_decide_jobs
** (model/decide.h) with the scenario's grid, request, parameters, `now`
** and seed. Every array of `out` lives in `a`; `s` is not modified.
** Returns 0, or what md_decide_jobs returns.
*/
int scj_run(const struct scj_scenario *s, struct arena *a,
	    struct md_jobs *out);

#endif
