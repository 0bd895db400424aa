/*
** netweight.c — network weight of a satellite queue towards the task's
** nucleus (NW-01..NW-04); the formula is documented in netweight.h.
**
** Plain arithmetic on one link row, called once per candidate queue, so it
** takes its inputs as they come from the network tables (NAN = missing) and
** never fails: a missing figure falls back to the documented default rather
** than dropping the queue, because the brokerage treats an unknown link as
** "worst but usable" (NW-03), not as an error.
**
** Choices where the reference is silent (tested in test_netweight.c):
** - A negative or NAN queued-file count counts as 0. The queuedWeight is not
**   clamped: links at or above NQUEUED_SAT_CAP are skipped by the job
**   brokerage (PJ-06) before the weight matters, and clamping here would
**   hide a caller that forgot to.
** - A closeness of -1 marks a blocked link (PJ-05 drops such queues); here
**   it is merely clamped into [0, 11] like any out-of-range value.
** - A cap <= 0 or NAN falls back to 150 and an importance outside [0, 1]
**   (or NAN) is clamped (NAN -> 0.5): the parameter catalogue already
**   bounds both, these guards only keep the result finite.
*/
#include "netweight.h"

#include <math.h>
#include <stddef.h>

#define NW_CAP_FALLBACK 150.0       /* NQUEUED_SAT_CAP default */
#define NW_IMPORTANCE_FALLBACK 0.5  /* NW_QUEUE_IMPORTANCE default */

/* NW-02 steps: above `mbps` the throughput weight is `w`; first match wins. */
static const struct {
	double mbps;
	double w;
} nw_steps[] = {
	{200, 2.0}, {100, 1.9}, {75, 1.8}, {50, 1.6},
	{20, 1.5},  {10, 1.3},  {2, 1.2},  {1, 1.1},
};

double nw_throughput_step(double mbps)
{
	for (size_t i = 0; i < sizeof(nw_steps) / sizeof(nw_steps[0]); i++)
		if (mbps > nw_steps[i].mbps)
			return nw_steps[i].w;
	return 1.0; /* <= 1 Mbps, and NAN (no comparison holds) */
}

double nw_closeness_weight(double closeness)
{
	if (isnan(closeness))
		closeness = NW_CLOSENESS_DEFAULT;
	closeness = fmin(fmax(closeness, NW_CLOSENESS_BEST),
			 NW_CLOSENESS_WORST);
	return 1.0 + (NW_CLOSENESS_WORST - closeness) /
			     (NW_CLOSENESS_WORST - NW_CLOSENESS_BEST);
}

void nw_compute(const struct nw_link *link, int at_nucleus,
		const struct nw_params *p, struct nw_weight *out)
{
	double cap = p != NULL ? p->nqueued_sat_cap : NAN;
	double imp = p != NULL ? p->queue_importance : NAN;
	if (!(cap > 0))
		cap = NW_CAP_FALLBACK;
	if (isnan(imp))
		imp = NW_IMPORTANCE_FALLBACK;
	imp = fmin(fmax(imp, 0.0), 1.0);

	double queued = link != NULL ? link->queued_files : 0.0;
	if (!(queued > 0))
		queued = 0.0;
	out->queued_files = queued;
	out->mbps = NAN;
	out->mbps_window = NULL;

	if (at_nucleus) {
		/* NW-04: the data is already there; both terms at the maximum,
		** so the weight is exactly NW_AT_NUCLEUS whatever imp is. */
		out->queued = out->throughput = out->weight = NW_AT_NUCLEUS;
		out->closeness = NAN;
		return;
	}

	out->closeness = link != NULL && !isnan(link->closeness)
				 ? link->closeness
				 : NW_CLOSENESS_DEFAULT;
	out->queued = 2.0 - queued / cap;

	/* NW-01: the freshest throughput figure that exists. */
	if (link != NULL) {
		if (!isnan(link->mbps_1h)) {
			out->mbps = link->mbps_1h;
			out->mbps_window = "1h";
		} else if (!isnan(link->mbps_1d)) {
			out->mbps = link->mbps_1d;
			out->mbps_window = "1d";
		} else if (!isnan(link->mbps_1w)) {
			out->mbps = link->mbps_1w;
			out->mbps_window = "1w";
		}
	}
	out->throughput = out->mbps_window != NULL
				  ? nw_throughput_step(out->mbps)
				  : nw_closeness_weight(out->closeness);
	out->weight = imp * out->queued + (1.0 - imp) * out->throughput;
}
