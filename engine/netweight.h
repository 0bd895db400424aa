/*
** netweight.h — the network weight of a satellite queue towards the task's
** nucleus (rules NW-01..NW-04; formula from the public PanDA code, where the
** seed only plots it).
**
**   queuedWeight     = 2 - nFilesQueued / NQUEUED_SAT_CAP
**   throughputWeight = step function of the link's FTS Mbps when known,
**                      else 1 + (11 - closeness) / 11
**   weightNw         = NW_QUEUE_IMPORTANCE x queuedWeight
**                    + (1 - NW_QUEUE_IMPORTANCE) x throughputWeight
**
** At the nucleus itself both terms are NW_AT_NUCLEUS (2.5), the maximum.
** Throughput takes the freshest figure that exists: the last hour, else the
** last day, else the last week (the seed's wording, NW-01). The public code
** reads 1w, then 1d, then 1h and stops at the first missing one, so it
** ignores a fresh 1h figure whenever the 1w one is missing; we do not copy
** that.
*/
#ifndef GB_NETWEIGHT_H
#define GB_NETWEIGHT_H

#define NW_AT_NUCLEUS 2.5          /* NW-04 */
#define NW_CLOSENESS_BEST 0.0      /* NW-01 */
#define NW_CLOSENESS_WORST 11.0    /* NW-01 */
#define NW_CLOSENESS_DEFAULT 7.7   /* NW-03: 0.7 x 11 when CRIC has none */

/* One link satellite -> nucleus, as the network tables hold it. NAN marks a
** figure that is missing (or older than the metrics' freshness window). */
struct nw_link {
	double queued_files; /* files queued on the link for the activity */
	double mbps_1h;
	double mbps_1d;
	double mbps_1w;
	double closeness;    /* 0 best .. 11 worst; -1 = blocked; NAN missing */
};

struct nw_params {
	double nqueued_sat_cap;  /* NQUEUED_SAT_CAP, files (> 0) */
	double queue_importance; /* NW_QUEUE_IMPORTANCE, 0..1 */
};

/* The weight and its parts, for the explanation. */
struct nw_weight {
	double weight;     /* weightNw */
	double queued;     /* queuedWeight */
	double throughput; /* throughputWeight */
	double mbps;       /* the figure used, NAN when none */
	const char *mbps_window; /* "1h", "1d", "1w" or NULL */
	double closeness;  /* the closeness used (default applied), NAN at nucleus */
	double queued_files;
};

/*
** NW-01..NW-04. `link` may be NULL (no row: worst-but-usable defaults,
** queued 0 and closeness NW_CLOSENESS_DEFAULT). `at_nucleus` non-zero gives
** the NW-04 maximum regardless of the link. Never fails; the result is
** finite for finite inputs.
*/
void nw_compute(const struct nw_link *link, int at_nucleus,
		const struct nw_params *p, struct nw_weight *out);

/* NW-02: the throughput step function (> 200 Mbps -> 2.0 ... else 1.0). */
double nw_throughput_step(double mbps);

/* NW-03: 1 + (11 - closeness) / 11, closeness clamped to [0, 11]. */
double nw_closeness_weight(double closeness);

#endif
