/*
** explain.h — `gridbroker explain` as a library (prefix ex_): a scenario
** file of any kind decided through the worker's decision path and turned
** into the records the worker would store.
**
** ex_run tells the kind from the file's shape ("kind": "timeout"; a
** "queues" key with an analysis or production task; "taskQueues"; else a
** task scenario), parses it (the parsers of scenario*.h), decides it with
** model/decide.h and builds each decision's record with report/record.h:
** one record for a task, job, analysis or match scenario, one per job a
** timeout rule fires for. The CLI prints them (and, for a match or timeout
** scenario, what only an offline run can show: every task queue's verdict,
** every job's next check); the digest-equality test compares them with
** what the workers stored.
*/
#ifndef GB_EXPLAIN_H
#define GB_EXPLAIN_H

#include <stddef.h>

#include <jansson.h>

#include "base/arena.h"
#include "explain/scenario.h"
#include "explain/scenario_analysis.h"
#include "explain/scenario_jobs.h"
#include "explain/scenario_match.h"
#include "explain/scenario_timeout.h"
#include "model/decide.h"

enum ex_kind {
	EX_TASK = 0,
	EX_JOBS,
	EX_ANALYSIS,
	EX_MATCH,
	EX_TIMEOUT,
};

/* The kind's name: "task", "jobs", "analysis", "pilot", "timeout" (the
** kind column of the decision records). */
const char *ex_kind_name(enum ex_kind k);

/* The kind of scenario `root` by its shape, as ex_run tells it (see the
** file comment); EX_TASK for anything else, including NULL. */
enum ex_kind ex_kind_of(json_t *root);

struct ex_record {
	const char *text;     /* the record as the worker stores it */
	const char *subject;  /* task id, pilot id or job id */
	const char *outcome;  /* assigned, pending, throttled, matched,
				 nomatch, or the timeout's action */
	const char *chosen;   /* nucleus, best queue, job id; NULL: none */
	long long job_id;     /* timeout: the job; else 0 */
	json_t *json;         /* with ex_opts.keep_json: the record as an
				 object (report/decrec.h dr_finish_keep),
				 a reference ex_result_release drops; else
				 NULL */
};

struct ex_result {
	enum ex_kind kind;
	struct ex_record *records; /* nrecords, in `a` */
	size_t nrecords;
	/* The scenario and the decision path's result, for what only an
	** offline run shows (one member is set, by kind). */
	union {
		struct scn_task_scenario task;
		struct scj_scenario jobs;
		struct sca_scenario analysis;
		struct scm_scenario match;
		struct sct_scenario timeout;
	} in;
	union {
		struct md_task task;
		struct md_jobs jobs;
		struct md_analysis analysis;
		struct scm_result match;
		struct sct_result timeout;
	} out;
};

/*
** Decide scenario `root` (not modified) as described above; everything
** lives in `a`. Returns 0, a parse error with "PATH: problem" in err, or
** the decision path's error (err says which step). `out` points into
** itself (the resolved requests): fill it in place, do not copy it.
*/
int ex_run(json_t *root, struct arena *a, struct ex_result *out, char *err,
	   size_t errlen);

/* What ex_run keeps beyond the records; all zero is ex_run's behaviour. */
struct ex_opts {
	/* A job or analysis scenario's sw dictionaries are parsed but not
	** kept as text (struct scj_opts): the records are the same, but
	** out->in cannot be written back as a scenario (scenario_write.h).
	** For callers that only compare records, such as replay. */
	int no_sw_text;
	/* With no_sw_text: what a caller deciding many scenarios in a row
	** keeps of the job and analysis grids (scenario_jobs.h struct
	** scj_memo), one per thread; NULL parses everything each time. */
	struct scj_memo *memo;
	/* Keep each record as an object too (ex_record.json), for a caller
	** that reads the records it made (replay counts their drops)
	** without parsing the text; it calls ex_result_release. */
	int keep_json;
};

/* ex_run with options `o` (NULL: the defaults, as ex_run). */
int ex_run_opts(json_t *root, struct arena *a, struct ex_result *out,
		char *err, size_t errlen, const struct ex_opts *o);

/* Drop the record objects ex_run_opts kept (keep_json); the rest of `r`
** lives in its arena. Safe on a result without them, and after a failed
** run (the records made before the failure). */
void ex_result_release(struct ex_result *r);

#endif
