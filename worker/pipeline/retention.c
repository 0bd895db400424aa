/*
** retention.c — delete expired decision records in bounded batches (see
** retention.h). Bounded so that one pass never holds locks or the loop
** for long: a backlog (retention lowered, a worker fleet down for days) is
** worked off a batch per tick instead of one huge DELETE.
*/
#include "pipeline/retention.h"

#include "base/clock.h"
#include "gb_error.h"
#include "base/log.h"
#include "store/store_decisions.h"

double wk_retention_tick(struct st_db *db, const struct gb_config *cfg, double mono)
{
	if (cfg == NULL)
		return mono + 60;
	double next = mono + cfg->decision_retention_interval;
	if (db == NULL || cfg->decision_retention_days <= 0)
		return next;
	long long before =
		clk_now() - (long long)cfg->decision_retention_days * 86400;
	size_t deleted = 0;
	int rc = st_dec_expire(db, before, &deleted);
	if (rc != GB_OK) {
		log_warn("decision retention: %s (%s)", gb_strerror(rc),
			 st_error(db));
		return next;
	}
	if (deleted)
		log_info("decision retention: deleted %zu record(s) older "
			 "than %d day%s", deleted, cfg->decision_retention_days,
			 cfg->decision_retention_days == 1 ? "" : "s");
	/* A full batch in either table: more are due, go on next tick. */
	return deleted >= ST_DEC_EXPIRE_BATCH ? mono : next;
}
