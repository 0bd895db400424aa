/*
** metrics.c — fixed-size metric registry, Prometheus text rendering and
** the worker's gridbroker_* catalogue. See metrics.h for why the registry
** never allocates and why label values come only from fixed tables.
*/
#include "base/metrics.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decision.h"
#include "gb_error.h"
#include "taskqueue.h"

void mx_init(struct mx_registry *r)
{
	memset(r, 0, sizeof(*r));
}

static int value_ok(const char *s)
{
	return s && strpbrk(s, "\"\\\n") == NULL;
}

int mx_register(struct mx_registry *r, const struct mx_def *d)
{
	if (d == NULL || d->name == NULL || d->help == NULL)
		return GB_EINVAL;
	if (d->kind == MX_HISTOGRAM &&
	    (d->bounds == NULL || d->nbounds == 0 ||
	     d->nbounds > MX_MAX_BOUNDS))
		return GB_EINVAL;
	for (size_t k = 1; d->kind == MX_HISTOGRAM && k < d->nbounds; k++)
		if (!(d->bounds[k] > d->bounds[k - 1]))
			return GB_EINVAL;
	size_t n[2] = {1, 1};
	for (int k = 0; k < 2; k++) {
		const struct mx_dim *m = d->dim[k];
		if (m == NULL)
			continue;
		if (m->name == NULL || m->n == 0 || (k == 1 && !d->dim[0]))
			return GB_EINVAL;
		for (size_t v = 0; v < m->n; v++)
			if (!value_ok(m->values[v]))
				return GB_EINVAL;
		n[k] = m->n;
	}
	/* Histogram series: nbounds + 1 buckets (the last is +Inf, counts
	** kept per bucket and cumulated when rendered), the sum, the count. */
	size_t width = d->kind == MX_HISTOGRAM ? d->nbounds + 3 : 1;
	size_t cells = n[0] * n[1] * width;
	if (r->nfam == MX_MAX_FAMILIES || cells > MX_MAX_CELLS - r->ncells)
		return GB_ETOOBIG;
	struct mx_family *f = &r->fam[r->nfam];
	f->def = d;
	f->base = r->ncells;
	f->n1 = n[0];
	f->n2 = n[1];
	f->width = width;
	r->ncells += cells;
	return (int)r->nfam++;
}

size_t mx_index(const struct mx_dim *d, const char *value)
{
	size_t other = d->n;
	for (size_t i = 0; i < d->n; i++) {
		if (value && strcmp(d->values[i], value) == 0)
			return i;
		if (strcmp(d->values[i], "other") == 0)
			other = i;
	}
	return other;
}

/* The first cell of series (i, j), or NULL when out of range. */
static double *series(struct mx_registry *r, int fam, size_t i, size_t j)
{
	if (fam < 0 || (size_t)fam >= r->nfam)
		return NULL;
	struct mx_family *f = &r->fam[fam];
	if (i >= f->n1 || j >= f->n2)
		return NULL;
	return &r->cell[f->base + (i * f->n2 + j) * f->width];
}

void mx_add(struct mx_registry *r, int fam, size_t i, size_t j, double v)
{
	double *c = series(r, fam, i, j);
	if (c && r->fam[fam].def->kind != MX_HISTOGRAM)
		*c += v;
}

void mx_set(struct mx_registry *r, int fam, size_t i, size_t j, double v)
{
	double *c = series(r, fam, i, j);
	if (c && r->fam[fam].def->kind == MX_GAUGE)
		*c = v;
}

void mx_observe(struct mx_registry *r, int fam, size_t i, size_t j,
		double v)
{
	double *c = series(r, fam, i, j);
	if (c == NULL || isnan(v) || r->fam[fam].def->kind != MX_HISTOGRAM)
		return;
	const struct mx_def *d = r->fam[fam].def;
	size_t b = 0;
	while (b < d->nbounds && v > d->bounds[b])
		b++;
	c[b] += 1;
	c[d->nbounds + 1] += v;
	c[d->nbounds + 2] += 1;
}

double mx_get(const struct mx_registry *r, int fam, size_t i, size_t j)
{
	double *c = series((struct mx_registry *)r, fam, i, j);
	if (c == NULL)
		return 0;
	const struct mx_def *d = r->fam[fam].def;
	return d->kind == MX_HISTOGRAM ? c[d->nbounds + 2] : c[0];
}

/* ---- rendering ---------------------------------------------------------- */

struct out {
	char *buf;
	size_t cap, len; /* len counts what did not fit too */
};

static void put(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	size_t room = o->len < o->cap ? o->cap - o->len : 0;
	int n = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
}

/* Integers in full; other numbers in the shortest text that reads back as
** the same double ("0.25", "1e-06"), as Prometheus' own clients write
** them; +Inf, -Inf, NaN by name. */
static void put_num(struct out *o, double v)
{
	if (isnan(v)) {
		put(o, "NaN");
		return;
	}
	if (isinf(v)) {
		put(o, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	char s[32];
	if (v == floor(v) && fabs(v) < 9007199254740992.0) {
		/* Counts and epoch seconds in full, not as 1.7e+09. */
		put(o, "%.0f", v);
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(s, sizeof(s), "%.*g", prec, v);
		if (strtod(s, NULL) == v)
			break;
	}
	put(o, "%s", s);
}

/* name{dim0="a",dim1="b"[,le="x"]} — the label part, possibly empty. */
static void put_labels(struct out *o, const struct mx_def *d, size_t i,
		       size_t j, const double *le)
{
	size_t idx[2] = {i, j};
	int first = 1;
	for (int k = 0; k < 2; k++) {
		if (d->dim[k] == NULL)
			continue;
		put(o, "%s%s=\"%s\"", first ? "{" : ",", d->dim[k]->name,
		    d->dim[k]->values[idx[k]]);
		first = 0;
	}
	if (le) {
		put(o, "%sle=\"", first ? "{" : ",");
		put_num(o, *le);
		put(o, "\"");
		first = 0;
	}
	if (!first)
		put(o, "}");
}

static void render_series(struct out *o, const struct mx_def *d,
			  const double *c, size_t i, size_t j)
{
	if (d->kind != MX_HISTOGRAM) {
		put(o, "%s", d->name);
		put_labels(o, d, i, j, NULL);
		put(o, " ");
		put_num(o, c[0]);
		put(o, "\n");
		return;
	}
	double cum = 0;
	for (size_t b = 0; b <= d->nbounds; b++) {
		double le = b < d->nbounds ? d->bounds[b] : INFINITY;
		cum += c[b];
		put(o, "%s_bucket", d->name);
		put_labels(o, d, i, j, &le);
		put(o, " ");
		put_num(o, cum);
		put(o, "\n");
	}
	put(o, "%s_sum", d->name);
	put_labels(o, d, i, j, NULL);
	put(o, " ");
	put_num(o, c[d->nbounds + 1]);
	put(o, "\n%s_count", d->name);
	put_labels(o, d, i, j, NULL);
	put(o, " ");
	put_num(o, c[d->nbounds + 2]);
	put(o, "\n");
}

int mx_render(const struct mx_registry *r, char *buf, size_t cap,
	      size_t *need)
{
	static const char *const kinds[] = {"counter", "gauge", "histogram"};
	struct out o = {buf, cap, 0};
	if (cap)
		buf[0] = '\0';
	for (size_t f = 0; f < r->nfam; f++) {
		const struct mx_family *fa = &r->fam[f];
		const struct mx_def *d = fa->def;
		put(&o, "# HELP %s %s\n# TYPE %s %s\n", d->name, d->help,
		    d->name, kinds[d->kind]);
		for (size_t i = 0; i < fa->n1; i++)
			for (size_t j = 0; j < fa->n2; j++) {
				const double *c =
					&r->cell[fa->base +
						 (i * fa->n2 + j) * fa->width];
				double v = d->kind == MX_HISTOGRAM
						   ? c[d->nbounds + 2]
						   : c[0];
				if (d->sparse && v == 0)
					continue;
				render_series(&o, d, c, i, j);
			}
	}
	*need = o.len;
	return o.len < cap ? GB_OK : GB_ETOOBIG;
}

/* ---- the worker's catalogue --------------------------------------------- */

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *const v_type[] = {"task.broker", "job.broker",
				     "job.submit",  "pilot.match",
				     "job.status",  "other"};
static const char *const v_outcome[] = {
	"assigned",  "pending",       "throttled", "matched", "nomatch",
	"accepted",  "updated",       "ignored",   "duplicate",
	"dead_lettered", "retried",   "parked",    "error"};
static const char *const v_target[] = {"amqp", "db"};
/* The rule IDs the engine's filters reject candidates with (the engine sources,
** RULES.md); a rule added there without a row here counts as "other". */
static const char *const v_rule[] = {
	"AJ-02", "AJ-03", "AJ-04", "AJ-05", "AJ-06", "AJ-07", "AJ-08",
	"AJ-09", "AJ-10", "AJ-11", "AJ-12", "AJ-13", "AJ-14", "AJ-15",
	"AJ-16", "AJ-17", "AJ-18", "AJ-19", "AJ-20", "AJ-24", "AJ-25",
	"AJ-28", "FC-02", "FC-03", "FC-04", "FC-05", "FC-06", "PJ-01",
	"PJ-04", "PJ-05", "PJ-06", "PJ-07", "PJ-08", "PJ-09", "PJ-10",
	"PJ-11", "PJ-12", "PJ-13", "PJ-14", "PJ-15", "PJ-16", "PJ-17",
	"PJ-18", "PJ-19", "PJ-20", "PJ-21", "PJ-22", "PJ-23", "PJ-24",
	"PJ-25", "PJ-26", "PJ-27", "PJ-30", "PJ-33", "PJ-34", "PJ-35",
	"PJ-36", "RC-01", "RC-03", "RC-04", "RC-05", "RC-06", "RC-07",
	"TB-01", "TB-02", "TB-03", "TB-04", "TB-07", "TB-08", "TB-09",
	"TB-10", "TB-11", "TB-12", "TQ-04", "TQ-05", "TQ-06", "other"};
static const char *const v_backlog[] = {
	"tasks_pending",  "job_requests_pending", "jobs_pending",
	"tasks_throttled", "jobs_throttled",      "dirac_jobs_waiting"};
static const char *v_version[1] = {"unknown"};

_Static_assert(NELEM(v_type) == MX_NTYPES, "request type table");
_Static_assert(NELEM(v_outcome) == MX_NOUTCOMES, "outcome table");
_Static_assert(NELEM(v_target) == MX_NTARGETS, "target table");
_Static_assert(NELEM(v_backlog) == MX_NBACKLOG, "backlog table");

const struct mx_dim mx_dim_type = {"type", v_type, NELEM(v_type)};
static const struct mx_dim dim_outcome = {"outcome", v_outcome,
					  NELEM(v_outcome)};
static const struct mx_dim dim_target = {"target", v_target,
					 NELEM(v_target)};
static const struct mx_dim dim_rule = {"rule", v_rule, NELEM(v_rule)};
static const struct mx_dim dim_backlog = {"what", v_backlog,
					  NELEM(v_backlog)};
static const struct mx_dim dim_version = {"version", v_version, 1};

/* Decisions take milliseconds (a job brokerage over a thousand queues
** about 10 ms); statements and confirms well under one on a LAN. */
static const double b_decision[] = {0.001, 0.0025, 0.005, 0.01, 0.025,
				    0.05,  0.1,    0.25,  0.5,  1,
				    2.5,   5,      10};
static const double b_db[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025,
			      0.005,  0.01,    0.025,  0.05,  0.1,
			      0.25,   0.5,     1,      2.5};
static const double b_amqp[] = {0.0005, 0.001, 0.0025, 0.005, 0.01,
				0.025,  0.05,  0.1,    0.25,  0.5,
				1,      2.5,   5,      10};

enum {
	F_UP, F_BUILD, F_START, F_REQUESTS, F_DECISION, F_DB, F_AMQP,
	F_REJECT, F_RECONNECT, F_DEAD, F_AMQP_UP, F_DB_UP, F_PARKED,
	F_INFLIGHT, F_BACKLOG, F_BACKLOG_TIME, F_OUTBOX_AGE, F_CLAIM_LOST, F_N
};

static const struct mx_def wk_defs[F_N] = {
	[F_UP] = {"gridbroker_up", "1 while the worker process runs",
		  MX_GAUGE, {NULL, NULL}, NULL, 0, 0},
	[F_BUILD] = {"gridbroker_build_info",
		     "always 1; the version label names the build", MX_GAUGE,
		     {&dim_version, NULL}, NULL, 0, 0},
	[F_START] = {"gridbroker_start_time_seconds",
		     "start time of the process, seconds since the epoch",
		     MX_GAUGE, {NULL, NULL}, NULL, 0, 0},
	[F_REQUESTS] = {"gridbroker_requests_total",
			"requests handled, by type and outcome (pending "
			"and throttled included)",
			MX_COUNTER, {&mx_dim_type, &dim_outcome}, NULL, 0, 0},
	[F_DECISION] = {"gridbroker_decision_duration_seconds",
			"from the delivery of a request to its decision "
			"committed",
			MX_HISTOGRAM, {&mx_dim_type, NULL}, b_decision,
			NELEM(b_decision), 0},
	[F_DB] = {"gridbroker_db_roundtrip_seconds",
		  "one statement execute or transaction statement on MariaDB",
		  MX_HISTOGRAM, {NULL, NULL}, b_db, NELEM(b_db), 0},
	[F_AMQP] = {"gridbroker_amqp_confirm_seconds",
		    "from a publish to the broker's confirm", MX_HISTOGRAM,
		    {NULL, NULL}, b_amqp, NELEM(b_amqp), 0},
	[F_REJECT] = {"gridbroker_rejections_total",
		      "candidates rejected by the engine, by rule ID",
		      MX_COUNTER, {&dim_rule, NULL}, NULL, 0, 1},
	[F_RECONNECT] = {"gridbroker_reconnects_total",
			 "connections re-established after a loss",
			 MX_COUNTER, {&dim_target, NULL}, NULL, 0, 0},
	[F_DEAD] = {"gridbroker_dead_letters_total",
		    "requests copied to the dead-letter exchange, by type",
		    MX_COUNTER, {&mx_dim_type, NULL}, NULL, 0, 0},
	[F_AMQP_UP] = {"gridbroker_amqp_connected",
		       "1 while connected to RabbitMQ and consuming",
		       MX_GAUGE, {NULL, NULL}, NULL, 0, 0},
	[F_DB_UP] = {"gridbroker_db_connected",
		     "1 while the MariaDB connection is usable", MX_GAUGE,
		     {NULL, NULL}, NULL, 0, 0},
	[F_PARKED] = {"gridbroker_parked_requests",
		      "requests held while the database is away", MX_GAUGE,
		      {NULL, NULL}, NULL, 0, 0},
	[F_INFLIGHT] = {"gridbroker_unconfirmed_publishes",
			"publishes waiting for the broker's confirm",
			MX_GAUGE, {NULL, NULL}, NULL, 0, 0},
	[F_BACKLOG] = {"gridbroker_backlog",
		       "work waiting now: pending and throttled tasks, job "
		       "requests and jobs (MariaDB, every backlog_interval "
		       "s), DIRAC jobs waiting (this worker's task queue "
		       "index)",
		       MX_GAUGE, {&dim_backlog, NULL}, NULL, 0, 0},
	[F_BACKLOG_TIME] = {"gridbroker_backlog_time_seconds",
			    "when gridbroker_backlog was last counted, "
			    "seconds since the epoch; 0 = not yet",
			    MX_GAUGE, {NULL, NULL}, NULL, 0, 0},
	[F_OUTBOX_AGE] = {"gridbroker_outbox_oldest_seconds",
			  "age of the oldest event still to publish in the "
			  "outbox (MariaDB, every backlog_interval s); 0 = "
			  "none",
			  MX_GAUGE, {NULL, NULL}, NULL, 0, 0},
	[F_CLAIM_LOST] = {"gridbroker_claim_conflicts_total",
			  "pilot.match picks whose job another worker claimed "
			  "first (the pilot picks again, up to 3 rounds)",
			  MX_COUNTER, {NULL, NULL}, NULL, 0, 0},
};

static struct mx_registry wk_reg;
static int wk_fam[F_N];
static int wk_ready;

int mx_wk_init(const char *version, double start_unix)
{
	if (wk_ready)
		return GB_OK;
	mx_init(&wk_reg);
	v_version[0] = version && value_ok(version) ? version : "unknown";
	for (int f = 0; f < F_N; f++) {
		wk_fam[f] = mx_register(&wk_reg, &wk_defs[f]);
		if (wk_fam[f] < 0)
			return wk_fam[f];
	}
	mx_set(&wk_reg, wk_fam[F_UP], 0, 0, 1);
	mx_set(&wk_reg, wk_fam[F_BUILD], 0, 0, 1);
	mx_set(&wk_reg, wk_fam[F_START], 0, 0, start_unix);
	wk_ready = 1;
	return GB_OK;
}

const struct mx_registry *mx_wk(void)
{
	return &wk_reg;
}

/* Before mx_wk_init (the command-line tool) the registry has no families
** and every call below is ignored by the range checks. */
void mx_wk_request(enum mx_rtype t, enum mx_outcome o, double n)
{
	mx_add(&wk_reg, wk_fam[F_REQUESTS], (size_t)t, (size_t)o, n);
}

void mx_wk_decision_latency(enum mx_rtype t, double seconds)
{
	mx_observe(&wk_reg, wk_fam[F_DECISION], (size_t)t, 0, seconds);
}

void mx_wk_db_roundtrip(double seconds)
{
	mx_observe(&wk_reg, wk_fam[F_DB], 0, 0, seconds);
}

void mx_wk_amqp_roundtrip(double seconds)
{
	mx_observe(&wk_reg, wk_fam[F_AMQP], 0, 0, seconds);
}

void mx_wk_rejection(const char *rule)
{
	mx_add(&wk_reg, wk_fam[F_REJECT], mx_index(&dim_rule, rule), 0, 1);
}

void mx_wk_decision(const struct dec_decision *dec)
{
	for (size_t i = 0; dec && i < dec->ncands; i++) {
		const struct dec_candidate *c = &dec->cands[i];
		if (!dec_dropped(c))
			continue; /* alive, or restored by a relaxing rule */
		unsigned n = c->nreasons < DEC_MAX_REASONS ? c->nreasons
							   : DEC_MAX_REASONS;
		for (unsigned k = 0; k < n; k++)
			mx_wk_rejection(c->reasons[k].rule);
	}
}

void mx_wk_tq_result(const struct tq_result *res)
{
	for (int f = 0; res && f < TQ_NFILTERS; f++)
		if (res->rejected[f])
			mx_add(&wk_reg, wk_fam[F_REJECT],
			       mx_index(&dim_rule,
					tq_filter((enum tq_filter_id)f)->rule),
			       0, (double)res->rejected[f]);
}

void mx_wk_reconnect(enum mx_target t)
{
	mx_add(&wk_reg, wk_fam[F_RECONNECT], (size_t)t, 0, 1);
}

void mx_wk_dead_letter(const char *routing_key)
{
	mx_add(&wk_reg, wk_fam[F_DEAD], mx_index(&mx_dim_type, routing_key),
	       0, 1);
}

void mx_wk_backlog(const double v[MX_NBACKLOG], double at_unix)
{
	for (size_t i = 0; i < MX_NBACKLOG; i++)
		mx_set(&wk_reg, wk_fam[F_BACKLOG], i, 0, v[i]);
	mx_set(&wk_reg, wk_fam[F_BACKLOG_TIME], 0, 0, at_unix);
}

void mx_wk_outbox_age(double seconds)
{
	mx_set(&wk_reg, wk_fam[F_OUTBOX_AGE], 0, 0, seconds > 0 ? seconds : 0);
}

void mx_wk_claim_conflict(void)
{
	mx_add(&wk_reg, wk_fam[F_CLAIM_LOST], 0, 0, 1);
}

void mx_wk_gauges(int amqp_up, int db_up, double parked, double inflight)
{
	mx_set(&wk_reg, wk_fam[F_AMQP_UP], 0, 0, amqp_up ? 1 : 0);
	mx_set(&wk_reg, wk_fam[F_DB_UP], 0, 0, db_up ? 1 : 0);
	mx_set(&wk_reg, wk_fam[F_PARKED], 0, 0, parked);
	mx_set(&wk_reg, wk_fam[F_INFLIGHT], 0, 0, inflight);
}
