/*
** params.c — the parameter catalogue. Defaults are the fallbacks of the public
** PanDA code (see the project's reference notes), converted to our units.
*/
#include "params.h"

#include "gb_error.h"

#include <math.h>
#include <string.h>

#define BIG 1e15

/* clang-format off */
const struct prm_def prm_table[] = {
	/* Task brokerage (TB-*) */
	{"taskbrokerage", "NQUEUED_NUC_CAP", 2000, 0, BIG, "files", 0, "TB-02: a nucleus with more files queued towards it is backlogged"},
	{"taskbrokerage", "DISK_THRESHOLD", 102400, 0, BIG, "GB", PRM_SUFFIX, "TB-04: free+expired-expected output must exceed this (per gshare: DISK_THRESHOLD_<gshare>); 100 TB"},
	{"taskbrokerage", "FREE_DISK_CUTOFF", 1024000, 0, BIG, "GB", 0, "cap of the free-space factor in the PanDA code's weight (not used by the specification's formula)"},
	{"taskbrokerage", "INPUT_SIZE_THRESHOLD", 1, 0, BIG, "GB", 0, "TB-07: the size fraction check applies above this total input size"},
	{"taskbrokerage", "INPUT_SIZE_FRACTION", 10, 0, 100, "%", 0, "TB-07: local size / total size must exceed this percentage"},
	{"taskbrokerage", "INPUT_NUM_THRESHOLD", 100, 0, BIG, "files", 0, "TB-08: the file fraction check applies above this number of input files"},
	{"taskbrokerage", "INPUT_NUM_FRACTION", 10, 0, 100, "%", 0, "TB-08: local files / total files must exceed this percentage"},
	{"taskbrokerage", "MIN_IO_INTENSITY_WITH_LOCAL_DATA", 200, 0, BIG, "kB/s", 0, "TB-09/TB-10: IO intensity at or below which locality may be dropped / the data factor is not weighted"},
	{"taskbrokerage", "MIN_INPUT_SIZE_WITH_LOCAL_DATA", 10000, 0, BIG, "GB", 0, "TB-09: total input size at or below which locality may be dropped"},
	{"taskbrokerage", "MAX_TASK_PRIO_WITH_LOCAL_DATA", 800, 0, BIG, "", 0, "TB-09: task priority from which locality is dropped when no nucleus passes"},
	{"taskbrokerage", "DATA_LOCATION_CHECK_PERIOD", 7, 0, BIG, "days", 0, "days in assigning after which the PanDA code drops the locality check"},
	/* Production job brokerage (PJ-*, NW-*) */
	{"jobbroker", "NQUEUED_SAT_CAP", 150, 0, BIG, "files", 0, "PJ-06/NW-02: files queued on a satellite link to the nucleus"},
	{"jobbroker", "NQUEUED_NUC_CAP_FOR_JOBS", 10000, 0, BIG, "files", 0, "PJ-07: files to be aggregated to the nucleus"},
	{"jobbroker", "IO_INTENSITY_CUTOFF", 200, 0, BIG, "kB/s", 0, "PJ-11: IO intensity above which the move-input limits apply"},
	{"jobbroker", "SIZE_CUTOFF_TO_MOVE_INPUT", 10, 0, BIG, "GB", 0, "PJ-11: largest missing input size"},
	{"jobbroker", "NUM_CUTOFF_TO_MOVE_INPUT", 100, 0, BIG, "files", 0, "PJ-11: largest number of missing input files"},
	{"jobbroker", "MAX_DISKIO_DEFAULT", 1e10, 0, BIG, "kB/s/core", 0, "PJ-12: default per-core disk IO limit of a queue"},
	{"jobbroker", "NW_ACTIVE", 0, 0, 1, "", PRM_BOOL, "PJ-32: multiply the network weight in (1) or only report it (0)"},
	{"jobbroker", "NW_QUEUE_IMPORTANCE", 0.5, 0, 1, "", 0, "NW-02: share of queuedWeight; throughputWeight gets the rest"},
	{"jobbroker", "NW_THRESHOLD", 1.7, 0, BIG, "", 0, "PJ-27: express tasks need a network weight of at least this x NW_WEIGHT_MULTIPLIER"},
	{"jobbroker", "NW_WEIGHT_MULTIPLIER", 1, 0, BIG, "", 0, "PJ-27: multiplier of NW_THRESHOLD"},
	{"jobbroker", "MAX_PRIO_TO_BOOTSTRAP", 150, 0, BIG, "", 0, "tasks above this priority do not use numSlots or worker bootstrap"},
	{"jobbroker", "NQUEUELIMITSITE", 20, 0, BIG, "jobs", PRM_SUFFIX, "floor of the per-queue cap max(this, 2 x running) (per gshare)"},
	{"jobbroker", "STORAGE_MIN_FREE_SIZE", 200, 0, BIG, "GB", 0, "PJ-18/AJ-15: free space needed in the queue's local storage"},
	{"jobbroker", "MAX_MISSING_INPUT_FILES", 10, 0, BIG, "files", 0, "AJ-08: a replica missing at most this many files counts as complete enough"},
	{"jobbroker", "MIN_INPUT_COMPLETENESS", 90, 0, 100, "%", 0, "AJ-08: a replica at least this complete counts as complete enough"},
	{"jobbroker", "MIN_WEIGHT", 0, 0, BIG, "", PRM_SUFFIX, "queues with a weight below this are skipped (0 = off)"},
	/* Analysis job brokerage (AJ-*) */
	{"anal_jobbroker", "TW_DONE_JOB_STAT", 6, 0, BIG, "h", 0, "AJ-18: window for the task's failed/closed/finished jobs at a queue"},
	{"anal_jobbroker", "MIN_BAD_JOBS_TO_SKIP_PQ", 5, 0, BIG, "jobs", 0, "AJ-18: floor of the bad-jobs limit"},
	{"anal_jobbroker", "IO_INTENSITY_CUTOFF_USER", NAN, 0, BIG, "kB/s", 0, "AJ-08: locality is suppressed at or below this IO intensity (unset: never)"},
	{"anal_jobbroker", "DATA_CHECK_TIMEOUT_USER", NAN, 0, BIG, "h", 0, "hours after which the analysis locality check is dropped (unset: never)"},
	{"anal_jobbroker", "BASE_QUEUE_LENGTH_PER_PQ", 100, 0, BIG, "jobs", 0, "AJ-21/AJ-22: queue length below which a queue is never throttled"},
	{"anal_jobbroker", "BASE_EXPECTED_WAIT_HOUR_ON_PQ", 8, 0, BIG, "h", 0, "AJ-21: expected wait below which a queue is never throttled"},
	{"anal_jobbroker", "BASE_DEFAULT_QUEUE_LENGTH_PER_PQ_USER", 5, 0, BIG, "jobs", 0, "AJ-23: floor of a user's queue length"},
	{"anal_jobbroker", "BASE_QUEUE_RATIO_ON_PQ", 0.05, 0, BIG, "", 0, "AJ-23: share of running jobs a user may queue"},
	{"anal_jobbroker", "STATIC_MAX_QUEUE_RUNNING_RATIO", 2.0, 0, BIG, "", 0, "AJ-22: queued/running ratio of nQ_max"},
	{"anal_jobbroker", "MAX_EXPECTED_WAIT_HOUR", 12.0, 0, BIG, "h", 0, "AJ-22: expected wait of nQ_max"},
	{"anal_jobbroker", "OVERLOAD_MIN_QUEUE", 20, 0, BIG, "jobs", 0, "AJ-11: VP queue overload floor"},
	{"anal_jobbroker", "OVERLOAD_RATIO_OFFSET", 1.2, 0, BIG, "", 0, "AJ-11: VP queue overload ratio"},
	{"anal_jobbroker", "STORAGE_MIN_FREE_SIZE_OUTPUT", 200, 0, BIG, "GB", 0, "AJ-15: free space needed in the output storage"},
	{"anal_jobbroker", "USE_NEW_BASIC_WEIGHT", 1, 0, 1, "", PRM_BOOL, "AJ-27: 1 = new basic weight (AJ-25/26), 0 = original (AJ-24)"},
	{"prio_mgr", "CAP_RUNNING_USER_JOBS", NAN, 0, BIG, "jobs", 0, "AJ-02: running jobs of a user (queued: 2x) (unset: no cap)"},
	{"prio_mgr", "CAP_RUNNING_USER_CORES", NAN, 0, BIG, "cores", 0, "AJ-02: running cores of a user (queued: 2x) (unset: no cap)"},
	{"prio_mgr", "CAP_RUNNING_GROUP_JOBS", NAN, 0, BIG, "jobs", 0, "AJ-02: running jobs of a working group (unset: no cap)"},
	{"prio_mgr", "CAP_RUNNING_GROUP_CORES", NAN, 0, BIG, "cores", 0, "AJ-02: running cores of a working group (unset: no cap)"},
	{"analy_eval", "USER_USAGE_THRESHOLD_A", 1000, 0, BIG, "slots", 0, "AJ-04: class A threshold numerator"},
	{"analy_eval", "USER_USAGE_THRESHOLD_B", 10000, 0, BIG, "slots", 0, "class B threshold of the task classification"},
	/* Timeouts and rebrokerage (TO-*) */
	{"watcher", "HEARTBEAT_TIMEOUT", 2, 0, BIG, "h", PRM_SUFFIX, "TO-09: heartbeat timeout (per workflow: HEARTBEAT_TIMEOUT_<workflow>)"},
	{"job_timeout", "TIMEOUT_defined", 4, 0, BIG, "h", 0, "TO-02: defined jobs"},
	{"job_timeout", "TIMEOUT_holding", 48, 0, BIG, "h", 0, "TO-10: holding jobs below priority 800"},
	{"rebroker", "FAST_REBRO_THRESHOLD_NQNR_RATIO", 3, 0, BIG, "", 0, "TO-13: nQueue/nRun above which a queue is overshooting"},
	{"rebroker", "FAST_REBRO_THRESHOLD_NQUEUE_FRAC", 0.3, 0, 1, "", 0, "TO-13: share of the gshare's queued jobs at one queue"},
	{"rebroker", "FAST_REBRO_THRESHOLD_NQUEUE", NAN, 0, BIG, "jobs", PRM_SUFFIX, "TO-13: per gshare only (FAST_REBRO_THRESHOLD_NQUEUE_<gshare>; the bare key opts no gshare in); unset: never"},
	{"rebroker", "ANALY_TIMEOUT", 12, 0, BIG, "h", PRM_SUFFIX, "analysis jobs without progress are rebrokered after this"},
	{"watchdog", "PENDING_TIMEOUT", 168, 0, BIG, "h", PRM_SUFFIX, "a task pending longer than this is exhausted"},
	{NULL, NULL, 0, 0, 0, NULL, 0, NULL},
};
/* clang-format on */

const struct prm_def *prm_find(const char *name)
{
	if (name == NULL)
		return NULL;
	const struct prm_def *best = NULL;
	size_t bestlen = 0;
	for (const struct prm_def *d = prm_table; d->name; d++) {
		size_t len = strlen(d->name);
		if (strcmp(name, d->name) == 0)
			return d;
		/* Suffixed names: the longest matching base wins, so that
		** "FAST_REBRO_THRESHOLD_NQUEUE_FRAC" is not read as a suffix. */
		if ((d->flags & PRM_SUFFIX) && strncmp(name, d->name, len) == 0 &&
		    name[len] == '_' && name[len + 1] != '\0' && len > bestlen) {
			best = d;
			bestlen = len;
		}
	}
	return best;
}

static const struct prm_kv *prm_override(const struct prm_set *set,
					 const char *name)
{
	if (set == NULL)
		return NULL;
	const struct prm_kv *hit = NULL;
	for (size_t i = 0; i < set->n; i++)
		if (set->kv[i].name && strcmp(set->kv[i].name, name) == 0)
			hit = &set->kv[i];
	return hit;
}

double prm_get(const struct prm_set *set, const char *name)
{
	const struct prm_kv *kv = prm_override(set, name);
	if (kv)
		return kv->value;
	for (const struct prm_def *d = prm_table; d->name; d++)
		if (strcmp(d->name, name) == 0)
			return d->def;
	return NAN;
}

double prm_get_sfx(const struct prm_set *set, const char *base,
		   const char *suffix)
{
	if (suffix && *suffix) {
		char full[160];
		size_t bl = strlen(base), sl = strlen(suffix);
		if (bl + 1 + sl < sizeof(full)) {
			memcpy(full, base, bl);
			full[bl] = '_';
			memcpy(full + bl + 1, suffix, sl + 1);
			const struct prm_kv *kv = prm_override(set, full);
			if (kv)
				return kv->value;
		}
	}
	return prm_get(set, base);
}

int prm_check(const char *name, double value)
{
	const struct prm_def *d = prm_find(name);
	if (d == NULL)
		return GB_ENOTFOUND;
	if (isnan(value))
		return isnan(d->def) ? GB_OK : GB_ERANGE;
	if (!isfinite(value) || value < d->min || value > d->max)
		return GB_ERANGE;
	if ((d->flags & PRM_BOOL) && value != 0 && value != 1)
		return GB_ERANGE;
	return GB_OK;
}
