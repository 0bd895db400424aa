/*
** dump.h — a decision's inputs as a scenario: what `gridbroker explain`
** re-decides offline to the same record and digest as the one the worker
** stored.
**
** The route files build the scenario of each decision inside its
** transaction from exactly what the decision path was given (explain/
** scenario_write.h) and hand it to wk_txn_dump, which
**   - stores it with the decision, compact and compressed, in the same
**     transaction ([worker] decision_inputs, on by default; table
**     decision_inputs, store/store_inputs.h): `why --scenario` and
**     `replay` read it back;
**   - keeps it for a file ([worker] decision_inputs_dir, off by default):
**     the runner writes it after the commit as <dir>/<kind>-<decision
**     id>.json (to a temporary name, then renamed, so a reader never sees
**     half a file).
** A rolled-back decision stores and writes nothing. Not kept, because no
** scenario can hold them: fast rebrokerage (which jobs move is the
** store's pick) and a pilot whose every pick another worker claimed first
** (code claim_conflict). A pilot's scenario is the whole task queue index,
** so it is built only when the index holds at most [worker]
** decision_inputs_max_jobs waiting jobs (or for a file).
*/
#ifndef GB_DUMP_H
#define GB_DUMP_H

#include <jansson.h>

#include "pipeline/pipeline.h"

/* A decision's inputs as a scenario, written after the commit. */
struct wk_dump {
	const char *kind;
	long long decision_id;
	char *text; /* malloc'd; freed by wk_txn_dumps_drop */
};

/* 1 when this worker stores or dumps decisions' inputs (cheap: test
** before building a scenario). */
int wk_dumping(const struct wk_worker *w);

/* wk_dumping for a pilot decision over an index of `njobs` waiting jobs:
** written as a file up to 20,000 jobs (WK_DUMP_DIR_MAX_JOBS), stored up
** to decision_inputs_max_jobs. */
int wk_dumping_pilot(const struct wk_worker *w, size_t njobs);

/*
** Store `scenario` as decision `decision_id`'s inputs, decided at `now`
** (the transaction's clock), when [worker] decision_inputs is 1: compact
** JSON, keys sorted, doubles to 17 digits, zlib-compressed, one
** decision_inputs row with the digest of `record` (the record text the
** decision stored; NULL: none), so that replay need not read the record
** to compare it. Returns 0 (also when off, or when the scenario
** cannot be serialised or compressed: logged, the decision goes on) or
** the store's error.
*/
int wk_dump_store(struct wk_worker *w, const char *kind, long long decision_id,
		  long long now, const char *record, json_t *scenario);

/* wk_txn_dump (pipeline_internal.h) keeps a scenario with the
** transaction; the runner writes it after the commit. */

/* Write one kept dump as <dir>/<kind>-<decision id>.json (the runner,
** after the commit). A file that cannot be written is logged and
** skipped: a dump never fails a decision. */
void wk_dump_write(const char *dir, const struct wk_dump *d);

#endif
