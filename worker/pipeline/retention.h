/*
** retention.h — the housekeeping step that deletes expired decision
** records ([worker] decision_retention_days), called from the worker's
** tick. Every worker runs it: the DELETEs take disjoint oldest rows under
** row locks, so several at once only share the work.
*/
#ifndef GB_RETENTION_H
#define GB_RETENTION_H

#include "base/config.h"
#include "store/store.h"

/*
** One retention pass if it is due: deletes at most one batch per table
** (store_decisions.h) of records older than decision_retention_days by the
** worker clock (0 days: nothing). `mono` is clk_mono() now. Returns the
** monotonic time of the next pass: at once when a batch came back full
** (more are due), else mono + decision_retention_interval. A database
** error is logged and retried at the next interval.
*/
double wk_retention_tick(struct st_db *db, const struct gb_config *cfg, double mono);

#endif
