/*
** pipeline_internal.h — what the request handlers of pipeline.c (task
** brokerage) and pipeline_jobs.c (job brokerage) share: publishing an
** outbox row with a confirm, dead-lettering, the redelivery path, turning
** an encoded event into an outbox row, and the crash test seam. Not part
** of the worker's public interface (pipeline.h).
*/
#ifndef GB_PIPELINE_INTERNAL_H
#define GB_PIPELINE_INTERNAL_H

#include <msgpack.h>

#include "base/arena.h"
#include "codec/codec_tq.h"
#include "decision.h"
#include "model/gridmodel.h"
#include "base/metrics.h"
#include "pipeline/pipeline.h"
#include "priority.h"
#include "model/tqindex.h"
#include "pipeline/tqsync.h"

#define WK_DB_RETRIES 3    /* deadlock / lock-wait retries of one request */
#define WK_RETRY_BATCH 20  /* pending requests retried per scan */

/*
** Publish one outbox row with a confirm; when `d` is non-NULL the delivery
** is acked on the confirm (nacked with requeue if the broker refuses).
** Returns 0, or an error with the row left leased in the outbox (a relay
** publishes it when the lease ends) and `d` acked at once.
*/
int wk_publish_row(struct wk_worker *w, const struct st_outbox_row *r,
		   const struct amq_delivery *d);

/* Copy `d` to the DLX with "x-gridbroker-error: field: problem"; the
** original is acked once the copy is confirmed. */
void wk_dead_letter(struct wk_worker *w, const struct amq_delivery *d,
		    const char *field, const char *problem);

/* `d` was decided before: republish its unsent events, then ack. */
void wk_redelivered(struct wk_worker *w, const struct amq_delivery *d,
		    long long now, struct arena *a);

/*
** Inside the decision's transaction: turn the encoded event `sb` into an
** outbox row (message id gb-decision-<decision_id>, memory in `a`) leased
** to this worker, and insert it. Returns 0 or a store/arena error.
*/
int wk_outbox_event(struct wk_worker *w, const char *event,
		    long long decision_id, const char *request_id,
		    const msgpack_sbuffer *sb, long long now, struct arena *a,
		    struct st_outbox_row *row);

/* The same with the event's own message id (a pilot batch's events are
** named after their first decision, see pipeline_match.c). */
int wk_outbox_row(struct wk_worker *w, const char *message_id,
		  const char *event, const char *request_id,
		  const msgpack_sbuffer *sb, long long now, struct arena *a,
		  struct st_outbox_row *row);

/* Count and log a database failure; marks the database down on
** GB_EDBGONE so the loop stops consuming until it is back. */
void wk_db_failed(struct wk_worker *w, int rc, const char *what);

/*
** Hold `d` unacknowledged (a copy, pipeline_park.c) until the database is
** back, when wk_unpark replays it. Falls back to a requeueing nack when
** the copy cannot be made. Why not nack at once: a quorum queue counts
** every requeue against the delivery limit, and a request bounced between
** workers through a short database restart would be dead-lettered,
** though nothing is wrong with it.
*/
void wk_park(struct wk_worker *w, const struct amq_delivery *d);

/* After a failed attempt at `d`: park it when the database is down (see
** wk_park), else nack it with requeue (a transient error of one request). */
void wk_requeue(struct wk_worker *w, const struct amq_delivery *d);

/* A 64-bit seed for one decision: request id, time and a per-worker
** counter, so two decisions never share a stream. */
uint64_t wk_seed(struct wk_worker *w, const char *request_id, long long now);

/*
** Count a recorded decision (decided, assigned or pending) and log `fmt`
** at info level with the journald fields GB_REQUEST_ID, GB_TASK_ID and
** GB_OUTCOME, so an operator can follow one request or task.
*/
void wk_decided(struct wk_worker *w, const char *request_id, long long task_id,
		enum dec_outcome outcome, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Metrics: the outcome of the delivery being handled (ignored outside
** one: the pending scans count their own). */
void wk_mx_outcome(struct wk_worker *w, enum mx_outcome o);

/* Metrics: a request of type t settled outside its delivery (a batched
** pilot.match): count it, and for a decision the time since t0
** (clk_mono() when it was delivered). */
void wk_mx_settled(enum mx_rtype t, enum mx_outcome o, double t0);

/* Test seam: GB_TEST_CRASH_AT=<where> kills the process at that point. */
void wk_crash_point(const char *where);

/*
** As wk_publish_row, but the confirm settles n deliveries (gen, tags[]) of
** one group commit: all acked, or all nacked with requeue when the broker
** refuses. The tags are copied.
*/
int wk_publish_row_acks(struct wk_worker *w, const struct st_outbox_row *r,
			uint64_t gen, const uint64_t *tags, size_t n);

/* Job brokerage (pipeline_jobs.c). */
void wk_handle_job_broker(struct wk_worker *w, const struct amq_delivery *d,
			  struct arena *a);
void wk_jobs_pending_scan(struct wk_worker *w);

/* Inside the caller's transaction: queue the jobs.assigned / jobs.pending
** event of a job decision (either brokerage) into `row`. */
int wk_jobs_event(struct wk_worker *w, const struct gm_request *r,
		  const struct jb_queue *queues, const struct dec_decision *dec,
		  const struct jb_plan *plan, long long decision_id,
		  const char *request_id, long long now, long long retry_at,
		  struct arena *a, struct st_outbox_row *row);

/*
** Inside the caller's transaction (pipeline_analysis.c): decide an analysis
** request (r->an.is_analysis, completed by the caller): the throttle
** (AJ-01..AJ-04), else the analysis brokerage (AJ-05..AJ-28); record the
** decision, the jobs and the request row, and queue the event
** (task.throttled, jobs.assigned or jobs.pending) into `row`.
*/
int wk_decide_analysis(struct wk_worker *w, struct gm_request *r,
		       const char *request_id, const void *body, size_t len,
		       long long now, const struct prm_set *set,
		       struct arena *a, struct st_outbox_row *row);

/* PanDA job life cycle (pipeline_panda.c): job.status with system
** "panda" (wk_handle_job_status hands it over). */
void wk_handle_panda_status(struct wk_worker *w, const struct amq_delivery *d,
			    struct arena *a);

/* One pilot.match waiting in the batch (strings in the batch arena). */
struct wk_match_req {
	uint64_t gen, tag;
	char *msgid, *reply_to, *corr_id;
	struct cdt_pilot p;
	int state;               /* WK_MR_* of pipeline_match.c */
	long long job_id, tq_id; /* the current pick */
	int prio;                /* its UserPriority (to put it back) */
	int lost;                /* picks other workers claimed first */
	struct tq_result res;
	const char *code, *reason;
	long long tq_cpu;
	const char *owner, *owner_group;
	long long decision_id;
	double t0;               /* clk_mono() at delivery (metrics) */
};

struct wk_reply_wait;

struct wk_tq {
	struct tqi_index *idx;
	struct tqs_state sync;
	double refreshed_at;      /* monotonic s of the last refresh */
	/* groups, corrector settings, CPU segments (store_tq config) */
	struct arena cfg_arena;
	struct pr_config pcfg;
	long long *seg;
	size_t nseg;
	double cfg_at;            /* monotonic s of the last load, 0 never */
	/* the batch */
	struct arena batch_arena;
	struct wk_match_req *req;
	size_t nreq, cap;
	double *weights;
	size_t nweights;
	/* leader */
	int leader;
	double lease_next, prio_next, sample_next, cleanup_next;
	/* Replies the broker could not take yet (publishing blocked by an
	** alarm, confirm window full), with their deliveries, which are
	** acked once the reply is out. At most the prefetch: each holds an
	** unacknowledged delivery. */
	struct wk_reply_wait *rw;
	size_t nrw, caprw;
};

/* Publish the held pilot.match replies that the broker now accepts and
** ack their requests; drop those of an earlier AMQP connection. */
void wk_tq_replies_retry(struct wk_worker *w);

/* DIRAC side. pipeline_match.c: pilot.match (batched, see wk_on_idle) and
** the state of struct wk_tq; pipeline_tq.c: job.submit, job.status and the
** leader's periodic work. */
int wk_tq_init(struct wk_worker *w);
void wk_tq_free(struct wk_worker *w);
void wk_handle_pilot_match(struct wk_worker *w, const struct amq_delivery *d,
			   struct arena *a);
void wk_handle_job_submit(struct wk_worker *w, const struct amq_delivery *d,
			  struct arena *a);
void wk_handle_job_status(struct wk_worker *w, const struct amq_delivery *d,
			  struct arena *a);
/* Refresh the index when it is older than index_refresh_ms (or never
** loaded); 0 when the index is usable. */
int wk_tq_fresh(struct wk_worker *w, int force);
/* The groups/segments configuration, reloaded from MariaDB at most every
** 30 s (grid load changes it). */
int wk_tq_config(struct wk_worker *w);
/* 1 when `group` has JOB_SHARING in the loaded configuration. */
int wk_tq_job_sharing(const struct wk_worker *w, const char *group);

#endif
