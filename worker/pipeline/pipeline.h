/*
** pipeline.h — what a worker does with a request, from delivery to ack.
**
**   delivery -> size/id checks -> msgpack decode and validate
**     (invalid: copy to gridbroker.dlx with x-gridbroker-error, ack after
**      the copy is confirmed)
**   -> one MariaDB transaction: dedup on the message id, save the task,
**      load the grid state, run the engine, record the decision, queue the
**      event in the outbox (leased to this worker)
**   -> publish the event with a publisher confirm -> mark the outbox row
**      sent and ack the delivery.
**
** A crash anywhere loses nothing: before the commit the broker redelivers
** and nothing was written; after it the redelivery finds the message id,
** and the event still in the outbox is published (by this path right away,
** or by any worker's outbox relay once the lease ends). A producer's
** retry (the same message id again, not flagged redelivered) is acked
** without publishing while the deciding worker's lease on its events
** lives: that worker publishes them, so nothing is published twice
** without a fault (runner.c, already_decided). Pending tasks are
** retried by a periodic scan that locks due rows with SKIP LOCKED, so two
** workers never retry the same task.
*/
#ifndef GB_PIPELINE_H
#define GB_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "amqp/amqp.h"
#include "base/config.h"
#include "store/store.h"

struct wk_pending; /* a publish waiting for its confirm */
struct wk_tq;      /* the DIRAC side's state (route_tq.c) */
struct wk_parked;  /* a delivery held while the database is away */
struct wk_route;   /* one request type (pipeline_internal.h) */

struct wk_worker {
	const struct gb_config *cfg;
	const struct wk_route *const *routes; /* wk_route_table() */
	struct st_db *db;          /* NULL while disconnected */
	struct amq_conn *amq;
	char id[160];              /* owner name for outbox leases */
	uint64_t seq_counter;      /* seeds: request hash ^ counter */
	struct wk_pending *pend;   /* cfg->amqp_confirm_window slots */
	size_t npend;
	int db_down;               /* set on GB_EDBGONE until reconnected */
	int db_read_only;          /* the failure was a refused write: the
				    * server answers but is read-only */
	struct wk_tq *tq;          /* task queue index, match batch, leader */
	/* Deliveries that came (or failed) while the database was away,
	** held unacknowledged until it is back (park.c); at most
	** amqp_prefetch of them, since the broker sends no more. */
	struct wk_parked *parked;
	size_t nparked, cap_parked;
	/* Brokerage requests received and not yet decided: decided
	** together, one transaction, when the broker has nothing more
	** waiting or [worker] broker_batch are in (runner.c). */
	struct wk_group *group;
	/* Outbox rows the broker confirmed, marked sent together (runner.c):
	** one UPDATE for many instead of a commit each. */
	long long *sent;
	size_t nsent, capsent;
	/* The delivery being handled, for the metrics (runner.c):
	** its mx_rtype (-1 outside a delivery), the outcome the handler
	** reached (-1 none yet; the last one set wins, so a decision whose
	** commit failed ends as the error) and when it came. */
	int mx_type, mx_outcome;
	double mx_t0;
	/* counters (the stopping line; the metrics are in metrics.c) */
	unsigned long n_decided, n_assigned, n_pending, n_dead, n_dup,
		n_retried, n_relayed, n_db_errors, n_matched, n_nomatch,
		n_claim_lost, n_submitted, n_status, n_parked;
};

/* The request types this worker consumes: NULL-terminated rows (routes.c),
** in the order of amq_request_types[]. */
const struct wk_route *const *wk_route_table(void);

/* Set up `w` for `routes` (wk_route_table()): allocates the confirm table
** and runs each route's init hook. Returns 0 or GB_ENOMEM. */
int wk_init(struct wk_worker *w, const struct gb_config *cfg,
	    const char *id, const struct wk_route *const *routes);
void wk_free(struct wk_worker *w);

/* amq callbacks; `ud` is the struct wk_worker. */
void wk_on_delivery(void *ud, const struct amq_delivery *d);
void wk_on_confirm(void *ud, uint64_t seq, enum amq_confirm outcome);

/*
** Replay the parked deliveries (the database is back). Deliveries of an
** earlier AMQP connection are dropped: the broker requeued them when that
** connection closed. Then decides what waits for the end of a read (the
** brokerage group, a pilot batch the outage caught), as wk_on_idle: no
** read may come to do it. Returns how many were replayed.
*/
size_t wk_unpark(struct wk_worker *w);

/* Forget every parked delivery without settling it: call when the AMQP
** connection is being closed (the broker requeues them). */
void wk_park_drop(struct wk_worker *w);

/* Likewise, the brokerage requests waiting for their group commit. */
void wk_group_drop(struct wk_worker *w);

/* amq on_idle callback: each route's idle hook (pilot.match decides the
** requests batched so far: group commit). */
void wk_on_idle(void *ud);

/*
** Every tick of the loop: what the end of a read does (wk_on_idle, for
** what a read left unsettled: pilot.match also sends the replies the
** broker could not take before), then each route's tick hook — the
** DIRAC side refreshes its task queue index and, on the worker holding
** the leader lease, recomputes priorities (PR-08), samples the
** running-job history (PR-04) and deletes empty task queues.
*/
void wk_tick(struct wk_worker *w);

/* Periodic work: each route's retry hook (due pending tasks and job
** requests); publish leftover outbox rows. */
void wk_pending_scan(struct wk_worker *w);
void wk_outbox_relay(struct wk_worker *w);
/* Periodic: count the backlog (pending and throttled work, DIRAC waiting
** jobs) into the gridbroker_backlog gauges of /metrics. Does nothing while
** the database is away; a failed count keeps the last values. */
void wk_backlog_scan(struct wk_worker *w);

/*
** The timeout scan (TO-01..TO-12): one transaction claiming up to
** [panda] timeout_batch due jobs, and no more than the free publisher
** confirm slots can publish at once (two events per job). Returns 1 when
** it took as many jobs as it could, so more may be due and the caller
** scans again at once; 0 otherwise.
*/
int wk_timeout_scan(struct wk_worker *w);

/* Fast rebrokerage (TO-13), on the worker holding the leader lease. */
void wk_fast_rebro(struct wk_worker *w);

/* Try to (re)connect the database; 0 when connected. */
int wk_db_connect(struct wk_worker *w);

/* Publishes still waiting for a confirm. */
size_t wk_inflight(const struct wk_worker *w);

#endif
