/*
** pipeline_internal.h — what the request runner (runner.c) offers the
** route files, and the route row they fill in (routes.c holds the table).
**
** A request type is one row: how to decode its body, what to do inside
** the transaction, what to log after the commit, which errors refuse it.
** Everything around that — size and id checks, dead-lettering, the
** transaction with its message-id claim and deadlock retries, the
** redelivery path, publishing the events after the commit with a confirm,
** the ack, requeueing or parking on a database error — is the runner's,
** written once. The periodic scans and the pilot.match group commit use
** the same transaction runner (wk_txn_run) and publishing helpers.
**
** Not part of the worker's interface (pipeline.h).
*/
#ifndef GB_PIPELINE_INTERNAL_H
#define GB_PIPELINE_INTERNAL_H

#include <msgpack.h>

#include "base/arena.h"
#include "base/log.h"
#include "base/metrics.h"
#include "codec/codec.h"
#include "codec/codec_panda.h"
#include "codec/codec_tq.h"
#include "decision.h"
#include "model/decide.h"
#include "model/tqindex.h"
#include "pipeline/dump.h"
#include "pipeline/pipeline.h"
#include "pipeline/tqsync.h"
#include "priority.h"
#include "store/store_grants.h"

#define WK_DB_RETRIES 3    /* deadlock / lock-wait retries of one request */
#define WK_RETRY_BATCH 20  /* pending requests retried per scan */
#define WK_ALREADY 1       /* a body's "the message id was claimed before" */

/* ---- one transaction ---------------------------------------------------- */

/* A line to log once the transaction commits (a rolled-back decision must
** not be logged as made). */
struct wk_note {
	enum log_level level;
	int decided;              /* count it as a decision (wk_decided) */
	enum mx_outcome mx;       /* when decided: assigned, pending or
				     throttled */
	const char *request_id;   /* GB_REQUEST_ID, may be NULL */
	long long task_id;        /* GB_TASK_ID when decided */
	const char *fields[3];    /* other journal fields, NULL-terminated */
	char *msg;
};


struct wk_txn {
	struct wk_worker *w;
	struct arena *a;          /* the request's; every row and note */
	const char *request_id;   /* the message id, NULL for a scan */
	const char *key;          /* routing key (the dedup row's kind) */
	long long now;            /* the worker clock at this attempt */
	size_t attempt;           /* 0 for the first */
	/* Events for the outbox, published after the commit. */
	struct st_outbox_row *rows;
	size_t nrows, caprows;
	struct wk_note *notes;
	size_t nnotes, capnotes;
	struct wk_dump *dumps;
	size_t ndumps, capdumps;
	size_t done;              /* what a scan decided (its own count) */
	/* Per attempt (wk_txn_run clears them): the parameters, read once
	** for every decision of the transaction (wk_txn_params), and
	** whether it holds the job brokerage lock (st_jobs_lock). */
	struct prm_set params;
	int have_params;
	int jobs_locked;
	char db_error[512];       /* the store's text of a failed attempt */
};

/* Inside the body: the parameters rows (st_params_load), read at the
** first call of the attempt and kept for the decisions after it (a group
** commit decides many); *out is valid while the transaction's arenas are.
** 0 or a store error. */
int wk_txn_params(struct wk_txn *t, struct prm_set *out);

/* Start `t` for one request (request_id and key may be NULL). */
void wk_txn_init(struct wk_txn *t, struct wk_worker *w, struct arena *a,
		 const char *request_id, const char *key);

/*
** Run `body` in one MariaDB transaction and commit. A deadlock or lock
** wait (GB_EDBRETRY) rolls back, calls `undo` (may be NULL: put back what
** the body changed in memory) and runs the body again, WK_DB_RETRIES
** times at most; each attempt starts with no rows and no notes and the
** clock read anew. After the commit the notes are logged. Returns 0, or
** what the body or the commit returned after the rollback (WK_ALREADY
** included); t->db_error then holds the store's text.
*/
int wk_txn_run(struct wk_txn *t, int (*body)(struct wk_txn *t, void *arg),
	       void *arg, void (*undo)(struct wk_txn *t, void *arg));

/*
** Inside the body: encode-free helpers that turn an encoded event into an
** outbox row leased to this worker, kept in t->rows for publishing.
** wk_txn_event names it gb-decision-<decision_id>; wk_txn_event_id takes
** the message id. Return 0 or a store/arena error.
*/
int wk_txn_event(struct wk_txn *t, const char *event, long long decision_id,
		 const char *request_id, const msgpack_sbuffer *sb);
int wk_txn_event_id(struct wk_txn *t, const char *message_id,
		    const char *event, const char *request_id,
		    const msgpack_sbuffer *sb);

/*
** Inside the body: the inputs of decision `decision_id`, as `scenario`
** (consumed; NULL is logged as inputs that could not be written, e.g. out
** of memory), with `record`, the record text the decision stored (its
** digest is stored beside the inputs; NULL: none): stored in this
** transaction ([worker] decision_inputs, dump.h) and kept to be written
** as <kind>-<decision_id>.json after the commit ([worker]
** decision_inputs_dir). Nothing when the worker does neither. Returns 0
** or the store's error (the attempt fails with it); a scenario that
** cannot be compressed is logged, not an error.
*/
int wk_txn_dump(struct wk_txn *t, const char *kind, long long decision_id,
		const char *record, json_t *scenario);

/* Free the kept dumps from index `from` on (a rolled-back savepoint, a
** new attempt, after they are written). */
void wk_txn_dumps_drop(struct wk_txn *t, size_t from);

/* Inside the body: log this at `level` (LOG_LVL_*) after the commit, with
** up to two journal fields ("GB_JOB_ID=42"; NULL for none);
** wk_txn_decided also counts a decision (`mx`: MX_O_ASSIGNED, MX_O_PENDING
** or MX_O_THROTTLED) with the journal fields GB_REQUEST_ID, GB_TASK_ID and
** GB_OUTCOME (assigned or pending: a throttled task is pending). */
void wk_txn_log(struct wk_txn *t, enum log_level level, const char *field1,
		const char *field2, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void wk_txn_decided(struct wk_txn *t, const char *request_id, long long task_id,
		    enum mx_outcome mx, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* After the commit: publish t's rows with a confirm; the last settles `d`
** (NULL for a scan), which is acked at once when there is no row. */
void wk_txn_publish(struct wk_txn *t, const struct amq_delivery *d);

/* ---- the route row ------------------------------------------------------- */

struct wk_route {
	const char *key;   /* routing key; its queue is gridbroker.<key> */
	size_t size;       /* of the decoded request */
	/* Decode and validate `body` into `req` (size bytes, zeroed, in
	** `a`); 0 or an error naming the field in `err`. */
	int (*decode)(const void *body, size_t len, struct arena *a,
		      void *req, struct cod_error *err);
	/* Optional: take the request in without a transaction of its own
	** (pilot.match joins the group commit, route_match.c). */
	void (*enqueue)(struct wk_worker *w, const struct amq_delivery *d,
			void *req);
	/* Optional, right after the decode, before enqueue or prepare: may
	** the sender ask this (route_match.c: the pilot's groups against
	** its account)? 1 admits it; 0 refuses it for good (dead-lettered
	** with `field` and `problem`); a negative error hands it back. Not
	** called for a group route (none has one). */
	int (*admit)(struct wk_worker *w, const struct amq_delivery *d,
		     const void *req, const char **field, char *problem,
		     size_t n);
	/* Optional, before the transaction (a configuration to load): 0, or
	** an error that hands the request back. */
	int (*prepare)(struct wk_worker *w, void *req);
	/* Inside the transaction, after the message id was claimed: save,
	** decide, record and queue the events (wk_txn_event). */
	int (*decide)(struct wk_txn *t, void *req);
	/* Optional: 1 when the error `rc` of decide refuses the request for
	** good (dead-lettered with `field` and `problem`), else 0 (requeued
	** as transient). */
	int (*refuse)(const struct wk_txn *t, const void *req, int rc,
		      const char **field, char *problem, size_t n);
	/* An already-decided request: 1 publishes its unsent events (a
	** decision's) that are not another live worker's to publish (see
	** runner.c, already_decided), 0 acks it (an update that has no
	** event). */
	int republish;
	/* 1: decided in a group commit with the other such requests
	** received meanwhile ([worker] broker_batch), each request between
	** savepoints so one that fails is undone alone (runner.c). The
	** route has no enqueue or prepare hook, and its decide may not
	** change memory that a rollback would not undo. */
	int group;
	/* Optional hooks: set up and free the route's state (wk_init,
	** wk_free), run when the AMQP pump is idle (and at every tick, as a
	** backstop: wk_tick), and retry pending work (wk_pending_scan), and
	** run every tick of the loop (wk_tick). */
	int (*init)(struct wk_worker *w);
	void (*fini)(struct wk_worker *w);
	void (*idle)(struct wk_worker *w);
	void (*retry)(struct wk_worker *w);
	void (*tick)(struct wk_worker *w); /* every tick of the loop */
};

/* Each route file exports its row; routes.c lists them in the table the
** daemon hands to wk_init (pipeline.h), so the runner names no handler. */
extern const struct wk_route wk_route_task;   /* route_task.c */
extern const struct wk_route wk_route_jobs;   /* route_jobs.c */
extern const struct wk_route wk_route_submit; /* route_tq.c */
extern const struct wk_route wk_route_match;  /* route_match.c */
extern const struct wk_route wk_route_status; /* route_status.c */

/* ---- publishing and settling --------------------------------------------- */

/*
** Publish one outbox row with a confirm; when `d` is non-NULL the delivery
** is acked on the confirm (nacked with requeue if the broker refuses).
** Returns 0, or an error with the row left leased in the outbox (a relay
** publishes it when the lease ends) and `d` acked at once.
*/
int wk_publish_row(struct wk_worker *w, const struct st_outbox_row *r,
		   const struct amq_delivery *d);

/*
** As wk_publish_row, but the confirm settles n deliveries (gen, tags[]) of
** one group commit: all acked, or all nacked with requeue when the broker
** refuses. The tags are copied.
*/
int wk_publish_row_acks(struct wk_worker *w, const struct st_outbox_row *r,
			uint64_t gen, const uint64_t *tags, size_t n);

/*
** Publish a message that has no outbox row (a pilot.match reply, a
** dead-letter copy) with a confirm, and ack the delivery (gen, tag) on
** that confirm, not before.
** Why: an ack sent while the reply is unconfirmed reaches the broker on
** another channel; if the connection then dies, the request is gone and
** its reply with it (the fault suite lost a reply so: a link cut during a
** memory alarm). Unacked, the request goes back to its queue and its
** redelivery is answered from the recorded decision. Returns 0;
** GB_ETIMEOUT when the confirm window is full or the broker blocks
** publishers (nothing sent: the caller holds the reply); or the
** publish's error (nothing acked).
*/
int wk_publish_acked(struct wk_worker *w, const char *exchange,
		     const char *rkey, const struct amq_props *props,
		     const void *body, size_t len, uint64_t gen, uint64_t tag);

/* Count and log a database failure; marks the database down on
** GB_EDBGONE so the loop stops consuming until it is back. */
void wk_db_failed(struct wk_worker *w, int rc, const char *what);

/* A 63-bit seed for one decision: request id, time and a per-worker
** counter, so two decisions never share a stream. */
uint64_t wk_seed(struct wk_worker *w, const char *request_id, long long now);

/* MX_O_ASSIGNED or MX_O_PENDING, as the decision's outcome says. */
enum mx_outcome wk_mx_of(enum dec_outcome outcome);

/* Metrics: the outcome of the delivery being handled (ignored outside
** one: the scans count their own). */
void wk_mx_outcome(struct wk_worker *w, enum mx_outcome o);

/* Metrics: a request of type t settled outside its delivery (a batched
** pilot.match): count it, and for a decision the time since t0
** (clk_mono() when it was delivered). */
void wk_mx_settled(enum mx_rtype t, enum mx_outcome o, double t0);

/* Test seam: GB_TEST_CRASH_AT=<where> kills the process at that point. */
void wk_crash_point(const char *where);

/* A route's refuse hook for a decision the engine or the store refuses
** as inconsistent (GB_EINVAL): dead-lettered as "task: rejected by the
** engine as inconsistent". */
int wk_refuse_inconsistent(const struct wk_txn *t, const void *req, int rc,
			   const char **field, char *problem, size_t n);

/* A route's retry hook: run `body` (which counts what it decided in
** t->done) in one transaction, publish its events, count and log them as
** retried requests of `type` ("task", "job request": `what`). */
void wk_retry_scan(struct wk_worker *w, enum mx_rtype type, const char *what,
		   int (*body)(struct wk_txn *t, void *arg));

/* Free confirm slots: how many rows can be published now. */
size_t wk_publishable(const struct wk_worker *w, size_t per_item,
		      size_t want);

/* ---- the DIRAC side's state (route_tq.c, route_match.c) ------------------ */

/* One pilot.match waiting in the batch (strings in the batch arena). */
struct wk_match_req {
	uint64_t gen, tag;
	char *msgid, *reply_to, *corr_id;
	struct cdt_pilot p;
	struct md_pilot mp;      /* p as the decision path reads it */
	int state;               /* WK_MR_* of route_match.c */
	long long job_id, tq_id; /* the current pick */
	int prio;                /* its UserPriority (to put it back) */
	int lost;                /* picks other workers claimed first */
	uint64_t seed;           /* of the last pick's draws */
	int job_sharing;         /* its group has JOB_SHARING */
	json_t *dump;            /* the index it was matched on, when the
				    worker dumps decisions (dump.h) */
	struct tq_result res;
	const char *code, *reason;
	long long tq_cpu;
	const char *owner, *owner_group;
	long long decision_id;
	double t0;               /* clk_mono() at delivery (metrics) */
};

struct wk_reply_wait;

/* A second copy of a batch's pilot.match (same message id) that wants
** its reply elsewhere: answered from the recorded decision once the
** batch commits (route_match.c). Strings live in the batch arena. */
struct wk_match_copy {
	uint64_t gen, tag;
	char *msgid, *reply_to, *corr_id;
	double t0; /* clk_mono() at delivery (metrics) */
};

struct wk_tq {
	struct tqi_index *idx;
	struct wk_tqs_state sync;
	double refreshed_at;      /* monotonic s of the last refresh */
	/* groups, corrector settings, CPU segments (store_tq config) */
	struct arena cfg_arena;
	struct pr_config pcfg;
	long long *seg;
	size_t nseg;
	double cfg_at;            /* monotonic s of the last load, 0 never */
	/* pilot_grants (store_grants.h): what each account may claim as a
	** pilot's ownerGroup/ownerDN, reloaded every owner_check_refresh s
	** ([dirac] owner_check; route_match.c) */
	struct arena grants_arena;
	struct st_grants grants;
	double grants_at;         /* monotonic s of the last load, 0 never */
	/* the batch */
	struct arena batch_arena;
	struct wk_match_req *req;
	size_t nreq, cap;
	struct wk_match_copy *copy; /* at most cap */
	size_t ncopy;
	double *weights;
	size_t nweights;
	/* the jobs the batch's transaction took out of tq_jobs, with their
	** seqs in the removal log (in the transaction's arena) */
	struct st_tq_removal *rm;
	size_t nrm;
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

/* route_tq.c, what both DIRAC routes read: refresh the index when it is
** older than index_refresh_ms (or never loaded); 0 when the index is
** usable. */
int wk_tq_fresh(struct wk_worker *w, int force);
/* The groups/segments configuration, reloaded from MariaDB at most every
** 30 s (grid load changes it). */
int wk_tq_config(struct wk_worker *w);


/* job.status carries both systems' updates (route_status.c decodes and
** picks): the DIRAC body (route_tq.c) and the PanDA one (route_panda.c),
** each inside the runner's transaction. */
int wk_status_dirac(struct wk_txn *t, const struct cdt_status *s);
int wk_status_panda(struct wk_txn *t, const struct cdp_status *s);

#endif
