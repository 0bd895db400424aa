/*
** runner.c — the request runner: every delivery goes through here, is
** checked, decoded by its route's row, decided in one transaction that
** claims its message id, and acked once its events are confirmed. The
** transaction runner (wk_txn_run), publishing, confirms, dead-lettering,
** the redelivery path and the outbox relay exist here once; what differs
** between request types is a row of the route table (routes.c), which
** the daemon hands to wk_init: this file names no handler. See pipeline.h
** for the shape and why nothing is lost or done twice.
*/
#include "pipeline/pipeline.h"

#include <inttypes.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "gb_error.h"
#include "base/log.h"
#include "base/metrics.h"
#include "pipeline/dump.h"
#include "pipeline/park.h"
#include "pipeline/pipeline_internal.h"
#include "store/store_summary.h"

#define WK_RELAY_BATCH 50  /* outbox rows relayed per scan */

static void sent_flush(struct wk_worker *w);

struct wk_pending {
	int used;
	uint64_t seq;
	long long outbox_id; /* 0 for dead-letter copies */
	int has_delivery;    /* ack (or nack) this delivery on the confirm */
	uint64_t gen, tag;
	uint64_t *tags;      /* or these deliveries of generation gen (a
				group commit), malloc'd */
	size_t ntags;
	double t0;           /* clk_mono() at the publish (metrics) */
};

int wk_init(struct wk_worker *w, const struct gb_config *cfg, const char *id,
	    const struct wk_route *const *routes)
{
	memset(w, 0, sizeof(*w));
	w->mx_type = w->mx_outcome = -1;
	w->cfg = cfg;
	w->routes = routes;
	snprintf(w->id, sizeof(w->id), "%s", id);
	w->npend = (size_t)(cfg->amqp_confirm_window > 0 ? cfg->amqp_confirm_window
						     : 1);
	w->pend = calloc(w->npend, sizeof(*w->pend));
	if (w->pend == NULL)
		return GB_ENOMEM;
	for (size_t i = 0; routes[i]; i++) {
		int rc = routes[i]->init ? routes[i]->init(w) : GB_OK;
		if (rc != GB_OK) {
			while (i-- > 0)
				if (routes[i]->fini)
					routes[i]->fini(w);
			free(w->pend);
			w->pend = NULL;
			return rc;
		}
	}
	return GB_OK;
}

void wk_free(struct wk_worker *w)
{
	for (size_t i = 0; w->pend && i < w->npend; i++)
		free(w->pend[i].tags);
	/* In reverse: a route's state may rest on an earlier one's. */
	size_t n = 0;
	while (w->routes && w->routes[n])
		n++;
	while (n-- > 0)
		if (w->routes[n]->fini)
			w->routes[n]->fini(w);
	wk_park_drop(w);
	wk_group_drop(w);
	sent_flush(w);
	free(w->sent);
	w->sent = NULL;
	w->nsent = w->capsent = 0;
	free(w->pend);
	w->pend = NULL;
	if (w->db)
		st_close(w->db);
	w->db = NULL;
}

size_t wk_inflight(const struct wk_worker *w)
{
	size_t n = 0;
	for (size_t i = 0; i < w->npend; i++)
		n += w->pend[i].used;
	return n;
}

int wk_db_connect(struct wk_worker *w)
{
	char err[256] = "";
	int had = w->db != NULL; /* else the first connect, not a reconnect */
	if (w->db == NULL) {
		int rc = st_open(w->cfg, &w->db, err, sizeof(err));
		if (rc != GB_OK) {
			log_warn("database: %s", err);
			return rc;
		}
	} else if ((w->db_down || st_ping(w->db) != GB_OK) &&
		   st_reconnect(w->db) != GB_OK) {
		/* After a lost connection, reconnect rather than trust a ping:
		** a Galera node on its way out still answers pings. */
		log_warn("database: %s", st_error(w->db));
		return GB_EDBGONE;
	}
	if (w->db_down && had)
		mx_wk_reconnect(MX_TG_DB);
	if (w->db_down)
		log_info("database connection restored");
	w->db_down = 0;
	return GB_OK;
}

void wk_db_failed(struct wk_worker *w, int rc, const char *what)
{
	w->n_db_errors++;
	log_error("%s: %s (%s)", what, gb_strerror(rc),
		  w->db ? st_error(w->db) : "no connection");
	if (rc == GB_EDBGONE) {
		w->db_down = 1;
		if (w->db && st_refused_write(w->db))
			w->db_read_only = 1;
	}
}

/* ---- publishing ------------------------------------------------------ */

static struct wk_pending *slot_free(struct wk_worker *w)
{
	for (size_t i = 0; i < w->npend; i++)
		if (!w->pend[i].used)
			return &w->pend[i];
	return NULL;
}

/*
** Publish one event row; remember the delivery to settle on the confirm.
** On failure the row stays leased in the outbox and a relay publishes it
** when the lease ends.
*/
static int publish_row(struct wk_worker *w, const struct st_outbox_row *r,
		       const struct amq_delivery *d, struct wk_pending **slot)
{
	struct wk_pending *p = slot_free(w);
	if (p == NULL)
		return GB_ETIMEOUT;
	struct amq_props props = {
		.message_id = r->message_id,
		.type = r->type,
		.content_type = "application/msgpack",
		.persistent = 1,
	};
	uint64_t seq = 0;
	int rc = amq_publish(w->amq, r->exchange, r->routing_key, &props,
			     r->body, r->len, &seq);
	if (rc != GB_OK) {
		log_warn("publish %s: %s (left in the outbox)", r->message_id,
			 gb_strerror(rc));
		return rc;
	}
	memset(p, 0, sizeof(*p));
	p->used = 1;
	p->seq = seq;
	p->t0 = clk_mono();
	p->outbox_id = r->id;
	if (d) {
		p->has_delivery = 1;
		p->gen = d->gen;
		p->tag = d->tag;
	}
	if (slot)
		*slot = p;
	return GB_OK;
}

int wk_publish_row(struct wk_worker *w, const struct st_outbox_row *r,
		   const struct amq_delivery *d)
{
	int rc = publish_row(w, r, d, NULL);
	/* Not published now (broker blocking publishers, confirm window
	** full, connection gone): the decision is committed and the row
	** stays leased in the outbox for the relay, so the request is done.
	** Left unsettled it would sit unacknowledged until the connection
	** closes, never redelivered and never finished (the fault suite's
	** memory alarms found this). */
	if (rc != GB_OK && d)
		amq_ack(w->amq, d->gen, d->tag);
	return rc;
}

int wk_publish_row_acks(struct wk_worker *w, const struct st_outbox_row *r,
			uint64_t gen, const uint64_t *tags, size_t n)
{
	uint64_t *copy = malloc((n ? n : 1) * sizeof(*copy));
	if (copy == NULL)
		return GB_ENOMEM;
	memcpy(copy, tags, n * sizeof(*copy));
	struct wk_pending *p = NULL;
	int rc = publish_row(w, r, NULL, &p);
	if (rc != GB_OK) {
		free(copy);
		return rc;
	}
	p->tags = copy;
	p->ntags = n;
	p->gen = gen;
	return GB_OK;
}

int wk_publish_acked(struct wk_worker *w, const char *exchange,
		     const char *rkey, const struct amq_props *props,
		     const void *body, size_t len, uint64_t gen, uint64_t tag)
{
	struct wk_pending *p = slot_free(w);
	if (p == NULL)
		return GB_ETIMEOUT;
	uint64_t seq = 0;
	int rc = amq_publish(w->amq, exchange, rkey, props, body, len, &seq);
	if (rc != GB_OK)
		return rc;
	memset(p, 0, sizeof(*p));
	p->used = 1;
	p->seq = seq;
	p->t0 = clk_mono();
	p->has_delivery = 1;
	p->gen = gen;
	p->tag = tag;
	return GB_OK;
}

/* Ack what a confirmed publish settles: its delivery, or a group
** commit's deliveries. */
static void ack_all(struct wk_worker *w, const struct wk_pending *p)
{
	if (p->has_delivery)
		amq_ack(w->amq, p->gen, p->tag);
	for (size_t i = 0; i < p->ntags; i++)
		amq_ack(w->amq, p->gen, p->tags[i]);
}

/*
** Mark the confirmed outbox rows sent, in one statement per 64 (its own
** transaction: autocommit). Why not one each: a commit per event was one
** more fsync per request. Why it is safe to wait: a row confirmed and not
** yet marked is published again by a relay only if this worker dies
** first and the row's lease ends, and an event sent twice keeps its
** message id, which consumers deduplicate on (at-least-once, as before:
** the mark never was in the confirm's transaction). Held at most until
** the pump goes idle or the next tick (250 ms).
*/
static void sent_flush(struct wk_worker *w)
{
	if (w->nsent == 0 || w->db == NULL || w->db_down)
		return;
	int rc = st_outbox_sent_many(w->db, w->sent, w->nsent);
	if (rc != GB_OK)
		wk_db_failed(w, rc, "outbox mark sent");
	/* Dropped either way: the relay publishes an unmarked row again
	** after its lease, which is what the mark saves, not what it
	** guarantees. */
	w->nsent = 0;
}

#define WK_SENT_MAX 256 /* marks held before they are written */

static void sent_add(struct wk_worker *w, long long id)
{
	if (w->nsent == w->capsent) {
		size_t cap = w->capsent ? w->capsent * 2 : 64;
		long long *n = realloc(w->sent, cap * sizeof(*n));
		if (n == NULL) {
			/* No memory to hold it: mark it alone. */
			int rc = w->db && !w->db_down
					 ? st_outbox_sent(w->db, id)
					 : GB_OK;
			if (rc != GB_OK)
				wk_db_failed(w, rc, "outbox mark sent");
			return;
		}
		w->sent = n;
		w->capsent = cap;
	}
	w->sent[w->nsent++] = id;
	if (w->nsent >= WK_SENT_MAX)
		sent_flush(w);
}

void wk_on_confirm(void *ud, uint64_t seq, enum amq_confirm outcome)
{
	struct wk_worker *w = ud;
	struct wk_pending *p = NULL;
	for (size_t i = 0; i < w->npend; i++)
		if (w->pend[i].used && w->pend[i].seq == seq)
			p = &w->pend[i];
	if (p == NULL)
		return;
	if (outcome != AMQ_CONFIRM_LOST)
		mx_wk_amqp_roundtrip(clk_mono() - p->t0);
	switch (outcome) {
	case AMQ_CONFIRM_ACK:
		if (p->outbox_id)
			sent_add(w, p->outbox_id);
		ack_all(w, p);
		break;
	case AMQ_CONFIRM_NACK:
		/* The broker refused the event. The decision is committed and
		** the row stays in the outbox, where the relay publishes it
		** when its lease ends, so the request is done: ack it. Handing
		** it back instead looped (redelivery, "already decided",
		** publish, refused again) until the delivery limit, while a
		** quorum queue's leader node was down (cluster test). */
		log_warn("broker refused publish %" PRIu64
			 "; the outbox relay sends it later",
			 seq);
		ack_all(w, p);
		break;
	case AMQ_CONFIRM_LOST:
		/* Connection gone: the broker requeues the delivery itself. */
		break;
	}
	free(p->tags);
	p->tags = NULL;
	p->ntags = 0;
	p->used = 0;
}

/*
** Copy an unusable request to the dead-letter exchange with a header that
** names the field and the problem; ack the original once the copy is
** confirmed. If even that publish fails, reject without requeue so the
** queue's own dead-lettering keeps the message (without our header).
*/
static void wk_dead_letter(struct wk_worker *w, const struct amq_delivery *d,
		    const char *field, const char *problem)
{
	char hdr[400];
	snprintf(hdr, sizeof(hdr), "%s: %s", field, problem);
	const char *headers[] = {AMQ_ERROR_HEADER, hdr,
				 "x-original-routing-key",
				 d->routing_key ? d->routing_key : "",
				 "x-gridbroker-worker", w->id, NULL};
	struct amq_props props = {
		.message_id = d->props.message_id,
		.type = d->props.type,
		.content_type = d->props.content_type,
		.persistent = 1,
		.headers = headers,
	};
	w->n_dead++;
	mx_wk_dead_letter(d->routing_key);
	wk_mx_outcome(w, MX_O_DEAD_LETTERED);
	log_warn("dead-lettered %s message %s: %s",
		 d->routing_key ? d->routing_key : "?",
		 d->props.message_id ? d->props.message_id : "(no id)", hdr);
	if (wk_publish_acked(w, AMQ_EX_DLX,
			     d->routing_key ? d->routing_key : "unknown",
			     &props, d->body, d->len, d->gen,
			     d->tag) != GB_OK)
		amq_nack(w->amq, d->gen, d->tag, 0);
}

/* ---- one transaction --------------------------------------------------- */

uint64_t wk_seed(struct wk_worker *w, const char *request_id, long long now)
{
	/* 63 bits: a scenario file carries the seed as a JSON integer,
	** 0..LLONG_MAX (scenario_write.h), and a decision whose seed it
	** cannot hold could not be dumped ([worker] decision_inputs_dir) */
	return (gb_hash64(request_id) ^ (uint64_t)now ^
		(++w->seq_counter << 32)) &
	       (uint64_t)INT64_MAX;
}

void wk_txn_init(struct wk_txn *t, struct wk_worker *w, struct arena *a,
		 const char *request_id, const char *key)
{
	memset(t, 0, sizeof(*t));
	t->w = w;
	t->a = a;
	t->request_id = request_id;
	t->key = key;
}

int wk_txn_params(struct wk_txn *t, struct prm_set *out)
{
	if (!t->have_params) {
		int rc = st_params_load(t->w->db, t->a, &t->params);
		if (rc != GB_OK)
			return rc;
		t->have_params = 1;
	}
	*out = t->params;
	return GB_OK;
}

/* Room for one more element of an arena array (the arena never frees, so
** growing copies; these arrays stay small: a request's events and lines). */
static int wk_txn_grow(struct arena *a, void **arr, size_t n, size_t *cap,
		size_t size)
{
	if (n < *cap)
		return GB_OK;
	size_t ncap = *cap ? *cap * 2 : 4;
	void *p = arena_alloc(a, ncap * size);
	if (p == NULL)
		return GB_ETOOBIG;
	if (n)
		memcpy(p, *arr, n * size);
	*arr = p;
	*cap = ncap;
	return GB_OK;
}

int wk_txn_dump(struct wk_txn *t, const char *kind, long long decision_id,
		const char *record, json_t *scenario)
{
	if (!wk_dumping(t->w)) {
		json_decref(scenario);
		return GB_OK;
	}
	if (scenario == NULL) {
		log_warn("decision %lld (%s): its inputs could not be written "
			 "as a scenario", decision_id, kind);
		return GB_OK;
	}
	/* Stored first, in this transaction: a database error fails the
	** attempt like any other statement of it (and it is retried). */
	int rc = wk_dump_store(t->w, kind, decision_id, t->now, record,
			       scenario);
	if (rc != GB_OK || t->w->cfg->decision_inputs_dir[0] == '\0') {
		json_decref(scenario);
		return rc;
	}
	/* Bit for bit: a double written with 17 significant digits reads
	** back to the same double. */
	char *text = json_dumps(scenario, JSON_INDENT(1) | JSON_SORT_KEYS |
						  JSON_REAL_PRECISION(17));
	json_decref(scenario);
	/* The text stays malloc'd (a pilot's index can be megabytes, more
** than a request's arena holds) until wk_txn_dumps_drop. */
	struct wk_dump *d = NULL;
	if (text != NULL && wk_txn_grow(t->a, (void **)&t->dumps, t->ndumps,
					&t->capdumps,
					sizeof(*t->dumps)) == GB_OK) {
		d = &t->dumps[t->ndumps];
		d->kind = arena_strdup(t->a, kind);
		d->text = text;
		d->decision_id = decision_id;
	}
	if (d != NULL && d->kind != NULL) {
		t->ndumps++;
	} else {
		free(text);
		log_warn("decision %lld (%s): no memory to keep its inputs",
			 decision_id, kind);
	}
	return GB_OK;
}

void wk_txn_dumps_drop(struct wk_txn *t, size_t from)
{
	for (size_t i = from; i < t->ndumps; i++) {
		free(t->dumps[i].text);
		t->dumps[i].text = NULL;
	}
	if (from < t->ndumps)
		t->ndumps = from;
}

int wk_txn_event_id(struct wk_txn *t, const char *message_id,
		    const char *event, const char *request_id,
		    const msgpack_sbuffer *sb)
{
	struct wk_worker *w = t->w;
	int rc = wk_txn_grow(t->a, (void **)&t->rows, t->nrows, &t->caprows,
		      sizeof(*t->rows));
	if (rc != GB_OK)
		return rc;
	struct st_outbox_row *row = &t->rows[t->nrows];
	memset(row, 0, sizeof(*row));
	row->message_id = arena_strdup(t->a, message_id);
	row->exchange = arena_strdup(t->a, AMQ_EX_EVENTS);
	row->routing_key = arena_strdup(t->a, event);
	row->type = row->routing_key;
	row->body = arena_alloc(t->a, sb->size ? sb->size : 1);
	row->len = sb->size;
	if (!row->message_id || !row->exchange || !row->routing_key ||
	    !row->body)
		return GB_ETOOBIG;
	memcpy(row->body, sb->data, sb->size);
	rc = st_outbox_add(w->db, row->message_id, request_id, row->exchange,
			   row->routing_key, row->type, row->body, row->len,
			   w->id, t->now + w->cfg->outbox_lease, &row->id);
	if (rc == GB_OK)
		t->nrows++;
	return rc;
}

int wk_txn_event(struct wk_txn *t, const char *event, long long decision_id,
		 const char *request_id, const msgpack_sbuffer *sb)
{
	char msgid[64];
	snprintf(msgid, sizeof(msgid), "gb-decision-%lld", decision_id);
	return wk_txn_event_id(t, msgid, event, request_id, sb);
}

/* Keep note `n` (its strings copied into the arena) with the message
** `fmt` formatted. */
static void note(struct wk_txn *t, const struct wk_note *n, const char *fmt,
		 va_list ap)
{
	if (wk_txn_grow(t->a, (void **)&t->notes, t->nnotes, &t->capnotes,
			sizeof(*t->notes)) != GB_OK)
		return;
	char msg[512];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	struct wk_note *k = &t->notes[t->nnotes];
	*k = *n;
	k->msg = arena_strdup(t->a, msg);
	k->request_id = n->request_id ? arena_strdup(t->a, n->request_id)
				      : NULL;
	for (size_t i = 0; i < 2 && n->fields[i]; i++)
		k->fields[i] = arena_strdup(t->a, n->fields[i]);
	if (k->msg != NULL)
		t->nnotes++;
}

void wk_txn_log(struct wk_txn *t, enum log_level level, const char *field1,
		const char *field2, const char *fmt, ...)
{
	struct wk_note n = {.level = level};
	n.fields[0] = field1 ? field1 : field2;
	n.fields[1] = field1 ? field2 : NULL;
	va_list ap;
	va_start(ap, fmt);
	note(t, &n, fmt, ap);
	va_end(ap);
}

void wk_txn_decided(struct wk_txn *t, const char *request_id, long long task_id,
		    enum mx_outcome mx, const char *fmt, ...)
{
	const struct wk_note n = {.level = LOG_LVL_INFO,
				  .decided = 1,
				  .mx = mx,
				  .request_id = request_id,
				  .task_id = task_id};
	va_list ap;
	va_start(ap, fmt);
	note(t, &n, fmt, ap);
	va_end(ap);
}

enum mx_outcome wk_mx_of(enum dec_outcome outcome)
{
	return outcome == DEC_ASSIGNED ? MX_O_ASSIGNED : MX_O_PENDING;
}

/* Count a decision and log it (what wk_txn_decided asks for, after the
** commit). */
static void wk_decided(struct wk_worker *w, const char *request_id,
		       long long task_id, enum mx_outcome mx, const char *msg)
{
	w->n_decided++;
	wk_mx_outcome(w, mx);
	if (mx == MX_O_ASSIGNED)
		w->n_assigned++;
	else
		w->n_pending++;
	char f_req[220], f_task[64], f_out[48];
	snprintf(f_req, sizeof(f_req), "GB_REQUEST_ID=%s",
		 request_id ? request_id : "");
	snprintf(f_task, sizeof(f_task), "GB_TASK_ID=%lld", task_id);
	snprintf(f_out, sizeof(f_out), "GB_OUTCOME=%s",
		 mx == MX_O_ASSIGNED ? "assigned" : "pending");
	const char *fields[] = {f_req, f_task, f_out, NULL};
	log_fields(LOG_LVL_INFO, fields, "%s", msg);
}

int wk_txn_run(struct wk_txn *t, int (*body)(struct wk_txn *t, void *arg),
	       void *arg, void (*undo)(struct wk_txn *t, void *arg))
{
	struct wk_worker *w = t->w;
	int rc = GB_EDBGONE;
	for (t->attempt = 0; t->attempt < WK_DB_RETRIES; t->attempt++) {
		wk_txn_dumps_drop(t, 0);
		t->nrows = t->nnotes = t->done = 0;
		t->have_params = t->jobs_locked = 0;
		t->db_error[0] = '\0';
		t->now = clk_now();
		rc = w->db ? st_begin(w->db) : GB_EDBGONE;
		if (rc == GB_OK)
			rc = body(t, arg);
		if (rc == GB_OK)
			rc = st_commit(w->db);
		if (rc == GB_OK)
			break;
		if (w->db) {
			snprintf(t->db_error, sizeof(t->db_error), "%s",
				 st_error(w->db));
			st_rollback(w->db);
		}
		if (undo)
			undo(t, arg);
		if (rc != GB_EDBRETRY)
			break;
	}
	if (rc != GB_OK) {
		wk_txn_dumps_drop(t, 0);
		return rc;
	}
	for (size_t i = 0; i < t->ndumps && w->cfg->decision_inputs_dir[0];
	     i++)
		wk_dump_write(w->cfg->decision_inputs_dir, &t->dumps[i]);
	wk_txn_dumps_drop(t, 0);
	for (size_t i = 0; i < t->nnotes; i++) {
		const struct wk_note *n = &t->notes[i];
		if (n->decided)
			wk_decided(w, n->request_id, n->task_id, n->mx, n->msg);
		else
			log_fields(n->level, n->fields, "%s", n->msg);
	}
	return GB_OK;
}

void wk_txn_publish(struct wk_txn *t, const struct amq_delivery *d)
{
	if (t->nrows == 0) {
		if (d)
			amq_ack(t->w->amq, d->gen, d->tag);
		return;
	}
	for (size_t i = 0; i < t->nrows; i++)
		wk_publish_row(t->w, &t->rows[i], i + 1 == t->nrows ? d : NULL);
}

size_t wk_publishable(const struct wk_worker *w, size_t per_item, size_t want)
{
	size_t used = wk_inflight(w);
	size_t free = w->npend > used ? w->npend - used : 0;
	return want < free / per_item ? want : free / per_item;
}

/* Test seam: GB_TEST_CRASH_AT=after-commit kills the process right after
** the decision commits and before the event is published or the request
** acked — the window the outbox exists for. */
void wk_crash_point(const char *where)
{
	const char *at = getenv("GB_TEST_CRASH_AT");
	if (at && strcmp(at, where) == 0) {
		log_warn("GB_TEST_CRASH_AT=%s: killing myself", where);
		raise(SIGKILL);
	}
}

int wk_refuse_inconsistent(const struct wk_txn *t, const void *req, int rc,
			   const char **field, char *problem, size_t n)
{
	(void)t;
	(void)req;
	if (rc != GB_EINVAL)
		return 0;
	*field = "task";
	snprintf(problem, n, "rejected by the engine as inconsistent");
	return 1;
}

static void group_flush(struct wk_worker *w);

/* ---- held deliveries ---------------------------------------------------- */

/*
** Hold `d` unacknowledged (a copy, park.c) until the database is back,
** when wk_unpark replays it. Falls back to a requeueing nack when the
** copy cannot be made. Why not nack at once: a quorum queue counts every
** requeue against the delivery limit, and a request bounced between
** workers through a short database restart would be dead-lettered,
** though nothing is wrong with it.
*/
static void wk_park(struct wk_worker *w, const struct amq_delivery *d)
{
	if (wk_park_put(w, d) != GB_OK) {
		amq_nack(w->amq, d->gen, d->tag, 1);
		return;
	}
	wk_mx_outcome(w, MX_O_PARKED);
	if (w->nparked == 1)
		log_warn("database unavailable: holding requests until it is "
			 "back (first: %s)",
			 d->props.message_id ? d->props.message_id : "?");
}

/* After a failed attempt at `d`: park it when the database is down (see
** wk_park), else nack it with requeue (a transient error of one request). */
static void wk_requeue(struct wk_worker *w, const struct amq_delivery *d)
{
	wk_mx_outcome(w, MX_O_ERROR); /* wk_park makes it "parked" */
	if (w->db == NULL || w->db_down)
		wk_park(w, d);
	else
		amq_nack(w->amq, d->gen, d->tag, 1);
}

size_t wk_unpark(struct wk_worker *w)
{
	if (w->amq == NULL)
		return 0;
	size_t n = 0, replayed = 0;
	struct wk_parked *list = wk_park_take(w, &n);
	uint64_t gen = amq_generation(w->amq);
	for (size_t i = 0; i < n; i++) {
		const struct amq_delivery *d = wk_parked_delivery(list, i);
		/* Deliveries of an earlier connection went back to the queue
		** when it closed. */
		if (d->gen == gen) {
			wk_on_delivery(w, d);
			replayed++;
		}
	}
	wk_park_release(list, n);
	/* No pump round ends here, and none may come: replayed brokerage
	** requests joined the group, and a pilot batch that the outage
	** caught (its requests arrived in the read whose group commit found
	** the database gone, so they were queued, not parked) still waits.
	** Both are decided now, as at the end of a read. */
	wk_on_idle(w);
	if (replayed)
		log_info("database back: replayed %zu held request(s)",
			 replayed);
	return replayed;
}

/* ---- one request ------------------------------------------------------- */

/*
** The request was decided before: publish what of its events is still
** unsent and no longer someone else's to publish. Which rows that is
** depends on how it came again (st_outbox_claim_request):
**  - redelivered by the broker: the worker that held it lost its link
**    (or handed it back), so every unsent row, whatever its lease;
**  - a first delivery (a producer's retry with the same message id, here
**    or on another worker, possibly in the same group commit as the
**    first copy): the deciding worker publishes its rows after its
**    commit, so only rows whose lease has run out; the others are left
**    to it, and to the relay if it dies. Claiming them too published
**    every event twice when the retry came back to back with the
**    original. This copy is acked without publishing: the request is
**    decided and its events are in the outbox.
*/
static void already_decided(struct wk_worker *w, const struct amq_delivery *d,
			    struct arena *a)
{
	struct st_outbox_row *rows = NULL;
	size_t n = 0;
	int rc = st_outbox_claim_request(w->db, d->props.message_id,
					 d->redelivered, w->id, clk_now(),
					 w->cfg->outbox_lease, a, &rows, &n);
	if (rc != GB_OK) {
		wk_db_failed(w, rc, "outbox claim for a decided request");
		wk_requeue(w, d);
		return;
	}
	log_info("request %s already decided (%s); %zu event(s) to publish",
		 d->props.message_id,
		 d->redelivered ? "redelivered" : "sent again", n);
	if (n == 0) {
		amq_ack(w->amq, d->gen, d->tag);
		return;
	}
	for (size_t i = 0; i < n; i++)
		wk_publish_row(w, &rows[i], i + 1 == n ? d : NULL);
}

struct request {
	const struct wk_route *rt;
	void *req;
};

/* The body of a request's transaction: claim its message id, then the
** route decides. */
static int request_body(struct wk_txn *t, void *arg)
{
	const struct request *q = arg;
	int already = 0;
	int rc = st_claim_message(t->w->db, t->request_id, q->rt->key, t->now,
				  &already);
	if (rc != GB_OK)
		return rc;
	if (already)
		return WK_ALREADY;
	return q->rt->decide(t, q->req);
}

static int group_add(struct wk_worker *w, const struct wk_route *rt,
		     const struct amq_delivery *d);

static void run_request(struct wk_worker *w, const struct wk_route *rt,
			const struct amq_delivery *d, struct arena *a)
{
	if (rt->group && w->cfg->broker_batch > 1 && group_add(w, rt, d) == GB_OK)
		return;
	struct cod_error err;
	memset(&err, 0, sizeof(err));
	void *req = arena_alloc(a, rt->size ? rt->size : 1);
	int rc = req ? rt->decode(d->body, d->len, a, req, &err) : GB_ETOOBIG;
	if (rc != GB_OK) {
		wk_dead_letter(w, d, err.field[0] ? err.field : "body",
			       err.problem[0] ? err.problem : gb_strerror(rc));
		return;
	}
	if (rt->admit) {
		const char *field = NULL;
		char problem[400] = "";
		int ok = rt->admit(w, d, req, &field, problem,
				   sizeof(problem));
		if (ok == 0) {
			wk_dead_letter(w, d, field ? field : "body", problem);
			return;
		}
		if (ok < 0) {
			wk_db_failed(w, ok, rt->key);
			wk_requeue(w, d);
			return;
		}
	}
	if (rt->enqueue) {
		rt->enqueue(w, d, req);
		return;
	}
	if (rt->prepare && (rc = rt->prepare(w, req)) != GB_OK) {
		wk_db_failed(w, rc, rt->key);
		wk_requeue(w, d);
		return;
	}
	struct wk_txn t;
	wk_txn_init(&t, w, a, d->props.message_id, rt->key);
	struct request q = {rt, req};
	rc = wk_txn_run(&t, request_body, &q, NULL);
	if (rc == GB_OK) {
		wk_crash_point("after-commit");
		wk_txn_publish(&t, d);
		return;
	}
	if (rc == WK_ALREADY) {
		w->n_dup++;
		wk_mx_outcome(w, MX_O_DUPLICATE);
		if (rt->republish) {
			already_decided(w, d, a);
		} else {
			log_info("%s %s was processed before", rt->key,
				 d->props.message_id);
			amq_ack(w->amq, d->gen, d->tag);
		}
		return;
	}
	const char *field = NULL;
	char problem[512] = "";
	if (rt->refuse &&
	    rt->refuse(&t, req, rc, &field, problem, sizeof(problem))) {
		wk_dead_letter(w, d, field, problem);
		return;
	}
	wk_db_failed(w, rc, rt->key);
	wk_requeue(w, d);
}

/* ---- group commit of brokerage requests ----------------------------------- */

/*
** Why: a brokerage request's own transaction costs a durable commit (an
** fsync) and its round trips; the requests a worker holds are decided in
** one transaction instead, one after another, so each sees the counts the
** ones before it moved (same transaction) and every committed decision of
** other workers (READ COMMITTED). Each request runs between savepoints:
** one the engine refuses, or whose statement fails alone, is undone alone
** and dead-lettered or handed back, and the others commit. A deadlock or
** lock wait rolls back the whole transaction and runs it again
** (wk_txn_run); a lost database hands every request back (parked).
** Nothing is acked before the commit, so a crash before it redelivers the
** whole group, and the message-id claims make a redelivery after it a
** duplicate, as for a request alone. Events are published after the
** commit; each delivery is acked on its own last event's confirm.
*/

enum { WK_GI_NEW, WK_GI_DONE, WK_GI_ALREADY, WK_GI_REFUSED, WK_GI_FAILED };

struct wk_gitem {
	const struct wk_route *rt;
	struct amq_delivery *d; /* a copy (wk_delivery_copy) */
	struct arena a;         /* its decoded request and its rows */
	void *req;
	double t0;              /* clk_mono() at delivery (metrics) */
	int state;              /* WK_GI_* of the last attempt */
	size_t row0, nrows;     /* its events among the transaction's rows */
	size_t note0, nnotes;   /* its lines among the transaction's notes */
	int rc;                 /* WK_GI_FAILED: what decide returned */
	const char *field;      /* WK_GI_REFUSED: what the refusal names */
	char problem[512];
	char db_error[512];     /* WK_GI_FAILED: the store's text */
};

struct wk_group {
	struct wk_gitem *item;
	size_t n, cap;
};

static void group_free_items(struct wk_group *g)
{
	for (size_t i = 0; i < g->n; i++) {
		arena_free(&g->item[i].a);
		free(g->item[i].d);
	}
	g->n = 0;
}

static void group_flush(struct wk_worker *w);

void wk_group_drop(struct wk_worker *w)
{
	if (w->group == NULL)
		return;
	group_free_items(w->group);
	free(w->group->item);
	free(w->group);
	w->group = NULL;
}

/*
** Take `d` into the group: copied and decoded (a body that does not decode
** is dead-lettered at once and counts as taken). Returns 0, or an error
** when it could not be kept (no memory): the caller then runs it alone.
*/
static int group_add(struct wk_worker *w, const struct wk_route *rt,
		     const struct amq_delivery *d)
{
	struct wk_group *g = w->group;
	size_t cap = (size_t)w->cfg->broker_batch;
	if (g == NULL) {
		g = calloc(1, sizeof(*g));
		struct wk_gitem *items = g ? calloc(cap, sizeof(*items)) : NULL;
		if (items == NULL) {
			free(g);
			return GB_ENOMEM;
		}
		g->item = items;
		g->cap = cap;
		w->group = g;
	}
	struct wk_gitem *it = &g->item[g->n];
	memset(it, 0, sizeof(*it));
	it->d = wk_delivery_copy(d);
	if (it->d == NULL)
		return GB_ENOMEM;
	it->rt = rt;
	it->t0 = w->mx_t0;
	arena_init(&it->a, (size_t)w->cfg->max_decode_bytes);
	struct cod_error err;
	memset(&err, 0, sizeof(err));
	it->req = arena_alloc(&it->a, rt->size ? rt->size : 1);
	int rc = it->req ? rt->decode(it->d->body, it->d->len, &it->a, it->req,
				      &err)
			 : GB_ETOOBIG;
	if (rc != GB_OK) {
		wk_dead_letter(w, d, err.field[0] ? err.field : "body",
			       err.problem[0] ? err.problem : gb_strerror(rc));
		arena_free(&it->a);
		free(it->d);
		return GB_OK;
	}
	g->n++;
	if (g->n == g->cap)
		group_flush(w);
	return GB_OK;
}

/* The group's transaction body: each request between savepoints. */
static int group_body(struct wk_txn *t, void *arg)
{
	struct wk_group *g = arg;
	struct st_db *db = t->w->db;
	for (size_t i = 0; i < g->n; i++) {
		struct wk_gitem *it = &g->item[i];
		it->state = WK_GI_NEW;
		t->a = &it->a;
		t->request_id = it->d->props.message_id;
		t->key = it->rt->key;
		size_t r0 = t->nrows, n0 = t->nnotes, d0 = t->ndumps;
		int rc = st_savepoint(db);
		if (rc != GB_OK)
			return rc;
		int already = 0;
		rc = st_claim_message(db, t->request_id, t->key, t->now,
				      &already);
		if (rc == GB_OK && already) {
			it->state = WK_GI_ALREADY;
			continue;
		}
		if (rc == GB_OK)
			rc = it->rt->decide(t, it->req);
		if (rc == GB_OK) {
			it->state = WK_GI_DONE;
			it->row0 = r0;
			it->nrows = t->nrows - r0;
			it->note0 = n0;
			it->nnotes = t->nnotes - n0;
			continue;
		}
		/* The whole transaction is lost (deadlock victim, lock wait,
		** connection): wk_txn_run rolls back and runs it again, or
		** hands every request back. */
		if (rc == GB_EDBRETRY || rc == GB_EDBGONE)
			return rc;
		snprintf(it->db_error, sizeof(it->db_error), "%s",
			 st_error(db));
		t->nrows = r0;
		t->nnotes = n0;
		wk_txn_dumps_drop(t, d0);
		int rb = st_rollback_savepoint(db);
		if (rb != GB_OK)
			return rb;
		it->rc = rc;
		it->field = NULL;
		it->problem[0] = '\0';
		it->state = it->rt->refuse &&
					    it->rt->refuse(t, it->req, rc,
							   &it->field,
							   it->problem,
							   sizeof(it->problem))
				    ? WK_GI_REFUSED
				    : WK_GI_FAILED;
	}
	return GB_OK;
}

/* The outcome a committed request's lines name (none: not counted, as a
** request alone whose decide logs no decision). */
static int group_outcome(const struct wk_txn *t, const struct wk_gitem *it)
{
	for (size_t k = it->note0; k < it->note0 + it->nnotes; k++)
		if (t->notes[k].decided)
			return (int)t->notes[k].mx;
	return -1;
}

/* Decide every request of the group in one transaction, then publish and
** settle each (see the section's comment). */
static void group_flush(struct wk_worker *w)
{
	struct wk_group *g = w->group;
	if (g == NULL || g->n == 0)
		return;
	/* The delivery being handled (one that filled the group) is
	** counted with the others below, not by wk_on_delivery. */
	int mx_type = w->mx_type;
	w->mx_type = w->mx_outcome = -1;
	struct arena a;
	arena_init(&a, 1u << 20);
	struct wk_txn t;
	wk_txn_init(&t, w, &a, NULL, "group");
	int rc = wk_txn_run(&t, group_body, g, NULL);
	if (rc != GB_OK) {
		wk_db_failed(w, rc, "brokerage group commit");
		for (size_t i = 0; i < g->n; i++) {
			struct wk_gitem *it = &g->item[i];
			wk_requeue(w, it->d);
			wk_mx_settled((enum mx_rtype)mx_index(&mx_dim_type,
								it->rt->key),
				      w->db_down ? MX_O_PARKED : MX_O_ERROR,
				      it->t0);
		}
	} else {
		wk_crash_point("after-commit");
		for (size_t i = 0; i < g->n; i++) {
			struct wk_gitem *it = &g->item[i];
			enum mx_rtype type =
				(enum mx_rtype)mx_index(&mx_dim_type, it->rt->key);
			switch (it->state) {
			case WK_GI_DONE: {
				int o = group_outcome(&t, it);
				if (it->nrows == 0)
					amq_ack(w->amq, it->d->gen, it->d->tag);
				for (size_t k = 0; k < it->nrows; k++)
					wk_publish_row(w, &t.rows[it->row0 + k],
						       k + 1 == it->nrows ? it->d
									  : NULL);
				if (o >= 0)
					wk_mx_settled(type, (enum mx_outcome)o,
						      it->t0);
				break;
			}
			case WK_GI_ALREADY:
				w->n_dup++;
				wk_mx_settled(type, MX_O_DUPLICATE, it->t0);
				if (it->rt->republish) {
					already_decided(w, it->d, &it->a);
				} else {
					amq_ack(w->amq, it->d->gen, it->d->tag);
				}
				break;
			case WK_GI_REFUSED:
				wk_dead_letter(w, it->d, it->field, it->problem);
				wk_mx_settled(type, MX_O_DEAD_LETTERED, it->t0);
				break;
			default:
				log_error("%s %s: %s (%s); handed back",
					  it->rt->key, it->d->props.message_id,
					  gb_strerror(it->rc), it->db_error);
				w->n_db_errors++;
				wk_requeue(w, it->d);
				wk_mx_settled(type, MX_O_ERROR, it->t0);
				break;
			}
		}
	}
	arena_free(&a);
	group_free_items(g);
	w->mx_type = mx_type;
	w->mx_outcome = -1;
}

/* Outcomes that are decisions: they get a latency observation. */
static int mx_is_decision(enum mx_outcome o)
{
	return o == MX_O_ASSIGNED || o == MX_O_PENDING ||
	       o == MX_O_THROTTLED || o == MX_O_MATCHED ||
	       o == MX_O_NOMATCH || o == MX_O_ACCEPTED ||
	       o == MX_O_UPDATED || o == MX_O_IGNORED;
}

void wk_mx_outcome(struct wk_worker *w, enum mx_outcome o)
{
	if (w->mx_type >= 0)
		w->mx_outcome = (int)o;
}

void wk_mx_settled(enum mx_rtype t, enum mx_outcome o, double t0)
{
	mx_wk_request(t, o, 1);
	if (mx_is_decision(o))
		mx_wk_decision_latency(t, clk_mono() - t0);
}

static void on_delivery(struct wk_worker *w, const struct amq_delivery *d);

/*
** Every delivery is counted once by type and outcome, here, after its
** handler: the handlers only name the outcome (wk_mx_outcome). A
** pilot.match that joined the batch names none; the batch counts it when
** it is answered (route_match.c).
*/
void wk_on_delivery(void *ud, const struct amq_delivery *d)
{
	struct wk_worker *w = ud;
	w->mx_type = (int)mx_index(&mx_dim_type, d->routing_key);
	w->mx_outcome = -1;
	w->mx_t0 = clk_mono();
	on_delivery(w, d);
	if (w->mx_outcome >= 0)
		wk_mx_settled((enum mx_rtype)w->mx_type,
			      (enum mx_outcome)w->mx_outcome, w->mx_t0);
	w->mx_type = w->mx_outcome = -1;
}

static void on_delivery(struct wk_worker *w, const struct amq_delivery *d)
{
	if (w->db == NULL || w->db_down) {
		/* No database: hold the request until it is back (see
		** park.c); the main loop closes the AMQP connection
		** if the outage lasts. */
		wk_park(w, d);
		return;
	}
	if (d->len > (size_t)w->cfg->max_message_bytes) {
		char problem[128];
		snprintf(problem, sizeof(problem),
			 "message of %zu bytes exceeds max_message_bytes %d",
			 d->len, w->cfg->max_message_bytes);
		wk_dead_letter(w, d, "body", problem);
		return;
	}
	if (d->props.message_id == NULL || d->props.message_id[0] == '\0') {
		wk_dead_letter(w, d, "message_id",
			    "missing: every request needs a unique message id");
		return;
	}
	if (strlen(d->props.message_id) > 190) {
		wk_dead_letter(w, d, "message_id", "longer than 190 characters");
		return;
	}
	struct arena a;
	arena_init(&a, (size_t)w->cfg->max_decode_bytes);
	const struct wk_route *const *r = w->routes;
	while (*r && (d->routing_key == NULL ||
		      strcmp(d->routing_key, (*r)->key) != 0))
		r++;
	if (*r) {
		run_request(w, *r, d, &a);
	} else {
		char problem[160];
		snprintf(problem, sizeof(problem),
			 "no handler for routing key '%s'",
			 d->routing_key ? d->routing_key : "");
		wk_dead_letter(w, d, "routing_key", problem);
	}
	arena_free(&a);
}

/* ---- periodic work ---------------------------------------------------- */

void wk_retry_scan(struct wk_worker *w, enum mx_rtype type, const char *what,
		   int (*body)(struct wk_txn *t, void *arg))
{
	struct arena a;
	arena_init(&a, (size_t)w->cfg->max_decode_bytes * 4);
	struct wk_txn t;
	wk_txn_init(&t, w, &a, NULL, NULL);
	int rc = wk_txn_run(&t, body, NULL, NULL);
	if (rc != GB_OK) {
		char why[96];
		snprintf(why, sizeof(why), "pending %s retry scan", what);
		wk_db_failed(w, rc, why);
	} else {
		wk_txn_publish(&t, NULL);
		w->n_retried += t.done;
		mx_wk_request(type, MX_O_RETRIED, (double)t.done);
		if (t.done)
			log_info("retried %zu pending %s(s)", t.done, what);
	}
	arena_free(&a);
}

void wk_pending_scan(struct wk_worker *w)
{
	for (size_t i = 0; w->routes[i]; i++) {
		if (w->db == NULL || w->db_down || !amq_is_up(w->amq))
			return;
		if (w->routes[i]->retry)
			w->routes[i]->retry(w);
	}
}

void wk_tick(struct wk_worker *w)
{
	/* What the end of a read settles (the brokerage group, a pilot
	** batch, the sent marks), for what a read left unsettled: a read
	** that ended without a database left its pilot batch queued, and
	** none may come to decide it. */
	wk_on_idle(w);
	for (size_t i = 0; w->routes[i]; i++)
		if (w->routes[i]->tick)
			w->routes[i]->tick(w);
}

void wk_on_idle(void *ud)
{
	struct wk_worker *w = ud;
	group_flush(w);
	for (size_t i = 0; w->routes[i]; i++)
		if (w->routes[i]->idle)
			w->routes[i]->idle(w);
	sent_flush(w);
}

void wk_backlog_scan(struct wk_worker *w)
{
	if (w->db == NULL || w->db_down)
		return;
	struct st_backlog b;
	int rc = st_backlog(w->db, &b);
	if (rc != GB_OK) {
		/* the gauges keep their last values; backlog_time shows age */
		wk_db_failed(w, rc, "backlog count");
		return;
	}
	double v[MX_NBACKLOG];
	v[MX_B_TASKS_PENDING] = (double)b.tasks_pending;
	v[MX_B_JOB_REQUESTS_PENDING] = (double)b.job_requests_pending;
	v[MX_B_JOBS_PENDING] = (double)b.jobs_pending;
	v[MX_B_TASKS_THROTTLED] = (double)b.tasks_throttled;
	v[MX_B_JOBS_THROTTLED] = (double)b.jobs_throttled;
	/* DIRAC's waiting jobs are already counted in memory: the index the
	** matcher refreshes every index_refresh_ms (a COUNT over a million
	** tq_jobs rows on every worker would cost far more). */
	v[MX_B_DIRAC_JOBS_WAITING] =
		w->tq && w->tq->sync.loaded ? (double)tqi_njobs(w->tq->idx) : 0;
	/* Real time, not the clock seam: Prometheus compares it with its
	** own clock to tell a stale count. */
	mx_wk_backlog(v, (double)time(NULL));
	/* The outbox stamps rows with the clock seam: its age is taken on
	** the same clock. */
	mx_wk_outbox_age(b.outbox_oldest > 0
				 ? (double)(clk_now() - b.outbox_oldest)
				 : 0);
}

void wk_outbox_relay(struct wk_worker *w)
{
	if (w->db == NULL || w->db_down || !amq_is_up(w->amq))
		return;
	struct arena a;
	arena_init(&a, (size_t)w->cfg->max_decode_bytes * 4);
	struct st_outbox_row *rows = NULL;
	size_t n = 0;
	int rc = st_outbox_claim(w->db, w->id, clk_now(),
				 w->cfg->outbox_lease, WK_RELAY_BATCH, &a,
				 &rows, &n);
	if (rc != GB_OK) {
		wk_db_failed(w, rc, "outbox relay");
	} else {
		for (size_t i = 0; i < n; i++)
			if (wk_publish_row(w, &rows[i], NULL) == GB_OK)
				w->n_relayed++;
		if (n)
			log_info("relayed %zu event(s) left in the outbox", n);
	}
	arena_free(&a);
}
