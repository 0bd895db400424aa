/*
** route_status.c — job.status: one routing key for both systems' job
** updates. "system" picks the decoder (codec_panda.h's cdp_status_system):
** a DIRAC job's update (route_tq.c) feeds the running-job history; a PanDA
** job's (route_panda.c) moves the queue counts and the heartbeats the
** timeouts read. Either runs inside the runner's transaction and never
** moves a job backwards.
*/
#include <stdio.h>
#include <string.h>

#include "gb_error.h"
#include "pipeline/pipeline_internal.h"

struct status_req {
	enum cdp_system sys;
	struct cdt_status dirac;
	struct cdp_status panda;
};

static int decode(const void *body, size_t len, struct arena *a, void *req,
		  struct cod_error *err)
{
	struct status_req *q = req;
	q->sys = CDP_SYS_DIRAC;
	int rc = cdp_status_system(body, len, &q->sys, err);
	if (rc != GB_OK)
		return rc;
	if (q->sys == CDP_SYS_PANDA)
		return cdp_decode_status(body, len, a, &q->panda, err);
	return cdt_decode_status(body, len, a, &q->dirac, err);
}

static int decide(struct wk_txn *t, void *req)
{
	const struct status_req *q = req;
	return q->sys == CDP_SYS_PANDA ? wk_status_panda(t, &q->panda)
				       : wk_status_dirac(t, &q->dirac);
}

/* A PanDA update the store refuses as inconsistent is refused for good. */
static int refuse(const struct wk_txn *t, const void *req, int rc,
		  const char **field, char *problem, size_t n)
{
	(void)t;
	const struct status_req *q = req;
	if (q->sys != CDP_SYS_PANDA || rc != GB_EINVAL)
		return 0;
	*field = "status";
	snprintf(problem, n, "refused by the store as inconsistent");
	return 1;
}

const struct wk_route wk_route_status = {
	.key = "job.status",
	.size = sizeof(struct status_req),
	.decode = decode,
	.decide = decide,
	.refuse = refuse,
};
