/*
** metrics.h — the worker's metrics: a small fixed-size registry and its
** Prometheus text rendering (exposition format 0.0.4), plus the catalogue
** of gridbroker_* metrics the worker exports on GET /metrics (httpd.h).
**
** Why a registry of our own: the worker is one thread, so a counter is a
** plain double; what it must guarantee is that nothing a producer sends
** can grow memory. Every family is declared once with its label sets as
** fixed tables of values (request types, outcomes, rule IDs known at
** compile time); a value not in a table is counted under its "other"
** entry, never added. Storage is a fixed array inside the registry, so a
** registry never allocates, and the rendered text has a bounded size.
**
** Rendering (mx_render) is a pure function of the registry, so the unit
** test checks the exact text without a socket.
**
** The catalogue functions (mx_wk_*) work on one process-wide registry
** that the pipeline, the AMQP client and the store feed; in the command
** line tool, which shares that code, nobody reads it.
*/
#ifndef GB_METRICS_H
#define GB_METRICS_H

#include <stddef.h>

#define MX_MAX_FAMILIES 24
#define MX_MAX_CELLS 4096 /* counters, gauges, histogram buckets */
#define MX_MAX_BOUNDS 16  /* histogram buckets besides +Inf */

enum mx_kind { MX_COUNTER = 0, MX_GAUGE, MX_HISTOGRAM };

/* One label: its name and the fixed table of its values. */
struct mx_dim {
	const char *name;
	const char *const *values;
	size_t n;
};

struct mx_def {
	const char *name; /* full metric name, e.g. "gridbroker_up" */
	const char *help;
	enum mx_kind kind;
	const struct mx_dim *dim[2]; /* NULL when fewer labels */
	const double *bounds;        /* histograms: ascending upper bounds */
	size_t nbounds;
	int sparse; /* 1: render only series with a non-zero value/count */
};

struct mx_family {
	const struct mx_def *def;
	size_t base;    /* first cell */
	size_t n1, n2;  /* values of dim[0], dim[1] (1 when absent) */
	size_t width;   /* cells per series */
};

struct mx_registry {
	size_t nfam, ncells;
	struct mx_family fam[MX_MAX_FAMILIES];
	double cell[MX_MAX_CELLS];
};

/* Empty `r`. */
void mx_init(struct mx_registry *r);

/*
** Add the family `d` (which must outlive `r`); all its values start at 0.
** Returns the family's id (>= 0), GB_EINVAL for a malformed definition
** (no name, bounds not ascending or more than MX_MAX_BOUNDS, a label value
** with a character that would need escaping: '"', '\\' or a newline), or
** GB_ETOOBIG when the registry is full.
*/
int mx_register(struct mx_registry *r, const struct mx_def *d);

/*
** Index of `value` in `d`'s table; a value that is not there (or NULL)
** gives the index of the table's "other" entry, or d->n when it has none
** (a series index that mx_add and mx_observe ignore).
*/
size_t mx_index(const struct mx_dim *d, const char *value);

/*
** Add `v` to (counter, gauge) or set (mx_set: gauge) the series (i, j) of
** family `fam`; j is 0 for a family with one label, i and j are 0 without
** labels. Out-of-range ids or indexes are ignored: a metric must never
** stop the worker.
*/
void mx_add(struct mx_registry *r, int fam, size_t i, size_t j, double v);
void mx_set(struct mx_registry *r, int fam, size_t i, size_t j, double v);

/* Record one observation `v` in a histogram series (bucket le >= v, the
** sum and the count). Ignored as above, and for a NaN. */
void mx_observe(struct mx_registry *r, int fam, size_t i, size_t j,
		double v);

/* Value of a counter or gauge series, or a histogram series' count; 0 for
** out-of-range arguments. */
double mx_get(const struct mx_registry *r, int fam, size_t i, size_t j);

/*
** Render every family as Prometheus text format 0.0.4 into buf (cap
** bytes, NUL-terminated when cap > 0). *need gets the length of the whole
** text without the NUL. Returns 0, or GB_ETOOBIG when it did not fit (buf
** then holds a truncated prefix). Pure: no I/O, no clock.
*/
int mx_render(const struct mx_registry *r, char *buf, size_t cap,
	      size_t *need);

/* ---- the worker's catalogue ------------------------------------------- */

/* Label values (indexes into the fixed tables). */
enum mx_rtype {
	MX_T_TASK_BROKER = 0, MX_T_JOB_BROKER, MX_T_JOB_SUBMIT,
	MX_T_PILOT_MATCH, MX_T_JOB_STATUS, MX_T_OTHER, MX_NTYPES
};
enum mx_outcome {
	MX_O_ASSIGNED = 0, MX_O_PENDING, MX_O_THROTTLED, MX_O_MATCHED,
	MX_O_NOMATCH, MX_O_ACCEPTED, MX_O_UPDATED, MX_O_IGNORED,
	MX_O_DUPLICATE, MX_O_DEAD_LETTERED, MX_O_RETRIED, MX_O_PARKED,
	MX_O_ERROR, MX_NOUTCOMES
};
enum mx_target { MX_TG_AMQP = 0, MX_TG_DB, MX_NTARGETS };
/* The backlog gauge's `what` label: work waiting now. */
enum mx_backlog {
	MX_B_TASKS_PENDING = 0, MX_B_JOB_REQUESTS_PENDING, MX_B_JOBS_PENDING,
	MX_B_TASKS_THROTTLED, MX_B_JOBS_THROTTLED, MX_B_DIRAC_JOBS_WAITING,
	MX_NBACKLOG
};

/* The request-type label table ("task.broker", ..., "other"). */
extern const struct mx_dim mx_dim_type;

/*
** Register the catalogue in the process-wide registry (once; later calls
** do nothing) and set gridbroker_up, the build info and the start time
** (`start_unix`, seconds since the epoch). Returns 0 or a mx_register
** error (a bug in the tables).
*/
int mx_wk_init(const char *version, double start_unix);

/* The process-wide registry (for rendering). */
const struct mx_registry *mx_wk(void);

/* `n` requests of type t ended with outcome o. */
void mx_wk_request(enum mx_rtype t, enum mx_outcome o, double n);
/* Seconds from the delivery of a request to its decision committed. */
void mx_wk_decision_latency(enum mx_rtype t, double seconds);
/* One statement (or commit) round trip to MariaDB. */
void mx_wk_db_roundtrip(double seconds);
/* One publish -> broker confirm round trip. */
void mx_wk_amqp_roundtrip(double seconds);
/* A candidate rejected by `rule` (a rule ID; unknown ones count as
** "other"). */
void mx_wk_rejection(const char *rule);
/* Every rejection reason recorded in an engine decision: one count per
** reason (at most DEC_MAX_REASONS per candidate), under its rule ID. */
struct dec_decision;
void mx_wk_decision(const struct dec_decision *dec);
/* The same for a pilot.match: the task queues each filter dropped. */
struct tq_result;
void mx_wk_tq_result(const struct tq_result *res);
/* A connection re-established after it was lost. */
void mx_wk_reconnect(enum mx_target t);
/* A request copied to the dead-letter exchange (`routing_key` may be
** anything a producer sent: unknown keys count as "other"). */
void mx_wk_dead_letter(const char *routing_key);
/* The backlog as counted at `at_unix` (seconds since the epoch): each
** gauge of gridbroker_backlog, and gridbroker_backlog_time_seconds. */
void mx_wk_backlog(const double v[MX_NBACKLOG], double at_unix);
/* Age in seconds of the oldest unsent outbox event (0: none; a negative
** age counts as 0), counted with the backlog. */
void mx_wk_outbox_age(double seconds);
/* A pilot.match pick lost: another worker claimed its job first. */
void mx_wk_claim_conflict(void);
/* Gauges refreshed before each scrape. */
void mx_wk_gauges(int amqp_up, int db_up, double parked, double inflight);

#endif
