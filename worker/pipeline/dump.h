/*
** dump.h — a decision's inputs as a scenario file ([worker]
** decision_inputs_dir): what `gridbroker explain` re-decides offline to
** the same record and digest as the one the worker stored.
**
** Off by default (an empty directory). When set, the route files build
** the scenario of each decision inside its transaction from exactly what
** the decision path was given (explain/scenario_write.h) and hand it to
** wk_txn_dump; the runner writes it after the commit as
** <dir>/<kind>-<decision id>.json (written to a temporary name, then
** renamed, so a reader never sees half a file). A rolled-back decision
** writes nothing. Not dumped, because no scenario can hold them: fast
** rebrokerage (which jobs move is the store's pick) and a pilot whose
** every pick another worker claimed first (code claim_conflict).
*/
#ifndef GB_DUMP_H
#define GB_DUMP_H

#include <jansson.h>

#include "pipeline/pipeline.h"

/* A decision's inputs as a scenario, written after the commit. */
struct wk_dump {
	const char *kind;
	long long decision_id;
	const char *text;
};

/* 1 when this worker dumps decisions (cheap: test before building). */
int wk_dumping(const struct wk_worker *w);

/* wk_txn_dump (pipeline_internal.h) keeps a scenario with the
** transaction; the runner writes it after the commit. */

/* Write one kept dump as <dir>/<kind>-<decision id>.json (the runner,
** after the commit). A file that cannot be written is logged and
** skipped: a dump never fails a decision. */
void wk_dump_write(const char *dir, const struct wk_dump *d);

#endif
