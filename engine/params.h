/*
** params.h — the gdpconfig-style parameter catalogue and lookups.
**
** Every tunable in CAPITALS in RULES.md is a row of prm_table[]: component,
** name, default, unit and a one-line help. The database table `params`
** (component, name, value) is seeded from this catalogue by `gridbroker db
** migrate`, so the defaults live in exactly one place. Values are in the
** scenario's units: GB for sizes, kB/s for IO, files, hours, percent where the
** name says FRACTION. A default of NAN means "unset": the rule that reads it is
** off (for example the analysis caps CAP_RUNNING_USER_JOBS).
**
** Some names take a suffix: DISK_THRESHOLD_<gshare>, HEARTBEAT_TIMEOUT_
** <workflow>, FAST_REBRO_THRESHOLD_NQUEUE_<gshare>; prm_get_sfx() looks for
** the suffixed name first and falls back to the bare one.
*/
#ifndef GB_PARAMS_H
#define GB_PARAMS_H

#include <stddef.h>

enum prm_flags {
	PRM_SUFFIX = 1u << 0, /* accepts a _<gshare> or _<workflow> suffix */
	PRM_BOOL = 1u << 1,   /* 0 or 1 */
};

struct prm_def {
	const char *component; /* gdpconfig component, e.g. "taskbrokerage" */
	const char *name;      /* key, e.g. "DISK_THRESHOLD" */
	double def;            /* default in `unit`; NAN = unset (rule off) */
	double min;            /* smallest accepted value */
	double max;            /* largest accepted value */
	const char *unit;      /* "GB", "kB/s", "files", "h", "%", "" */
	unsigned flags;        /* enum prm_flags */
	const char *help;      /* one line */
};

/* The catalogue, terminated by a row with name == NULL. */
extern const struct prm_def prm_table[];

/* One override, as read from the database or a scenario file. */
struct prm_kv {
	const char *name; /* full name, suffix included */
	double value;
};

struct prm_set {
	const struct prm_kv *kv; /* may be NULL when n == 0 */
	size_t n;
};

/*
** Find the catalogue row for `name`: an exact match, or, for PRM_SUFFIX rows,
** `name` = "<row>_<something>". Returns NULL for an unknown name.
*/
const struct prm_def *prm_find(const char *name);

/*
** Value of `name`: the last override in `set` with exactly that name, else the
** catalogue default, else NAN for an unknown name. `set` may be NULL.
*/
double prm_get(const struct prm_set *set, const char *name);

/*
** Value of "<base>_<suffix>" when `set` overrides it, else prm_get(base).
** `suffix` may be NULL or empty (then just prm_get(base)).
*/
double prm_get_sfx(const struct prm_set *set, const char *base,
		   const char *suffix);

/*
** Check one override: the name must be known and the value inside the row's
** [min, max] (NAN is accepted only for rows whose default is NAN). Returns 0,
** GB_ENOTFOUND for an unknown name or GB_ERANGE for a bad value.
*/
int prm_check(const char *name, double value);

#endif
