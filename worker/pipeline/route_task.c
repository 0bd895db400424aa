/*
** route_task.c — task.broker: place a task on a nucleus (TB-*, FC-*).
**
** Inside the runner's transaction: save the task, load the nuclei the
** task brokerage reads, decide (md_decide_task), store the decision with
** its record and queue task.assigned or task.pending. A pending task is
** due again after retryAfter; the retry hook decides the due ones again
** in one transaction, a row lock (SKIP LOCKED) keeping two workers apart.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "codec/codec.h"
#include "gb_error.h"
#include "model/decide.h"
#include "explain/scenario_write.h"
#include "pipeline/dump.h"
#include "pipeline/pipeline_internal.h"
#include "report/record.h"

/*
** Inside the transaction: load the state, decide, record the decision and
** queue its event. `request_id` is the message id, or the retry's own.
*/
static int decide_task(struct wk_txn *t, const struct tb_task *task,
		       const char *request_id)
{
	struct wk_worker *w = t->w;
	struct prm_set set;
	int rc = wk_txn_params(t, &set);
	if (rc != GB_OK)
		return rc;
	struct tb_nucleus *nuclei = NULL;
	size_t n = 0;
	rc = st_tb_state(w->db, task, t->a, &nuclei, &n);
	if (rc != GB_OK)
		return rc;
	uint64_t seed = wk_seed(w, request_id, t->now);
	struct md_task d;
	rc = md_decide_task(task, nuclei, n, &set, t->now, seed, t->a, &d);
	if (rc != GB_OK)
		return rc;
	mx_wk_decision(&d.dec);

	const char *nucleus = d.dec.chosen >= 0 ? d.cands[d.dec.chosen].name
						: NULL;
	char *record = rec_task(&d, NULL);
	long long decision_id = 0;
	rc = st_task_decide(w->db, task, &d.dec, nucleus, t->now, d.retry_at,
			    request_id, record ? record : "{}", &decision_id);
	if (rc == GB_OK && wk_dumping(w))
		rc = wk_txn_dump(t, "task", decision_id, record,
				 scw_task(t->now, seed, &set, nuclei, n, task));
	free(record);
	if (rc != GB_OK)
		return rc;

	const char *event = d.dec.outcome == DEC_ASSIGNED ? "task.assigned"
							  : "task.pending";
	struct cod_task_event ev = {
		.event = event,
		.decision_id = decision_id,
		.request_id = request_id,
		.task = task,
		.nuclei = nuclei,
		.dec = &d.dec,
		.decided_at = t->now,
		.retry_at = d.retry_at,
	};
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	rc = cod_encode_task_event(&ev, &sb);
	if (rc == GB_OK)
		rc = wk_txn_event(t, event, decision_id, request_id, &sb);
	msgpack_sbuffer_destroy(&sb);
	if (rc != GB_OK)
		return rc;

	if (nucleus)
		wk_txn_decided(t, request_id, task->task_id, wk_mx_of(d.dec.outcome),
			       "task %lld assigned to %s (%zu of %zu nuclei "
			       "eligible) decision %lld request %s",
			       task->task_id, nucleus, dec_alive(&d.dec), n,
			       decision_id, request_id);
	else
		wk_txn_decided(t, request_id, task->task_id, wk_mx_of(d.dec.outcome),
			       "task %lld pending, retry in %d s (0 of %zu "
			       "nuclei eligible) decision %lld request %s",
			       task->task_id, d.dec.retry_after_s, n,
			       decision_id, request_id);
	return GB_OK;
}

static int decode(const void *body, size_t len, struct arena *a, void *req,
		  struct cod_error *err)
{
	return cod_decode_task(body, len, a, req, err);
}

static int decide(struct wk_txn *t, void *req)
{
	const struct tb_task *task = req;
	int rc = st_task_save(t->w->db, task, t->request_id, t->now);
	return rc == GB_OK ? decide_task(t, task, t->request_id) : rc;
}

/* The retry scan's body: the due pending tasks, each decided again. */
static int retry_body(struct wk_txn *t, void *arg)
{
	(void)arg;
	long long ids[WK_RETRY_BATCH];
	size_t n = 0;
	int rc = st_pending_due(t->w->db, t->now, WK_RETRY_BATCH, ids, &n);
	for (size_t i = 0; rc == GB_OK && i < n; i++) {
		struct tb_task task;
		char reqid[96];
		snprintf(reqid, sizeof(reqid), "gb-retry-%lld-%lld", ids[i],
			 t->now);
		rc = st_task_load(t->w->db, ids[i], t->a, &task);
		if (rc == GB_OK)
			rc = decide_task(t, &task, reqid);
		t->done += rc == GB_OK;
	}
	return rc;
}

static void retry(struct wk_worker *w)
{
	wk_retry_scan(w, MX_T_TASK_BROKER, "task", retry_body);
}

const struct wk_route wk_route_task = {
	.key = "task.broker",
	.size = sizeof(struct tb_task),
	.decode = decode,
	.decide = decide,
	.refuse = wk_refuse_inconsistent,
	.republish = 1,
	.group = 1,
	.retry = retry,
};
