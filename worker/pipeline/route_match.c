/*
** route_match.c — pilot.match: hand each pilot the right waiting job
** (TQ-04..TQ-10), many pilots per MariaDB transaction.
**
** Why batched: a pilot's match must be durable before its reply, and one
** durable commit costs more than everything else of a match together
** (about 0.6 ms here, ~1,600 commits/s per client). So deliveries are not
** decided one by one: the runner decodes and validates them and this
** route's enqueue hook queues them, and when the AMQP pump has read every frame that was waiting
** (amq on_idle), or the batch is full, the queued pilots are decided
** together:
**
**   refresh the in-memory task queue index if it is older than
**   index_refresh_ms (tqsync.h; seldom under load, see the last step)
**   -> per pilot: md_match_pilot over the index's views (no SQL; the
**      decision path `explain` runs on a match scenario); the picked job
**      leaves the index at once, so two pilots of one batch never pick the
**      same job
**   -> one transaction (wk_txn_run): st_tq_claim removes the picked jobs from tq_jobs
**      and says which this transaction won (TQ-09); a pilot whose job
**      another worker won picks again (up to WK_MATCH_ROUNDS picks), then
**      st_tq_record writes every decision (matched or not, with the TQ-10
**      counts), the outbox gets one pilot.matched and one pilot.nomatch
**      event for the whole batch, st_tq_log_removals logs the claimed
**      jobs for every worker's index; commit
**   -> reply to each pilot (default exchange, its reply_to, its
**      correlation_id), publish the events with a confirm, and ack the
**      deliveries when the event is confirmed; no reply waits for a
**      confirm
**   -> refresh the index again if it is older than index_refresh_ms:
**      after the replies, so that under load the refreshes fall between
**      batches and no pilot of this batch waits for one.
**
** Who may ask: before a pilot joins the batch, the admit hook checks the
** groups and owners it claims (ownerGroup, ownerDN; TQ-04) against the
** grants of the account in its AMQP user_id, which RabbitMQ validated
** (store_grants.h; [dirac] owner_check). A pilot its account may not
** send is dead-lettered by the runner with the reason, unmatched and
** unanswered. The grants are kept in memory and reloaded every
** owner_check_refresh seconds, so the check adds no SQL per pilot.
**
** Nothing is lost or done twice: before the commit nothing is written and
** the deliveries are redelivered; after it a redelivered request finds its
** recorded decision (pilot_matches.request_id is UNIQUE) and the pilot
** gets the same answer again; the events sit in the outbox until a confirm.
** A rolled-back transaction puts the picked jobs back into the index.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/log.h"
#include "gb_error.h"
#include "model/decide.h"
#include "explain/scenario_match.h"
#include "explain/scenario_write.h"
#include "pipeline/dump.h"
#include "pipeline/pipeline_internal.h"
#include "report/record.h"
#include "store/store_grants.h"
#include "store/store_tq.h"

#define WK_MATCH_ROUNDS 3     /* picks per pilot before "claim_conflict" */
#define WK_REQ_BYTES (CDT_MAX_PILOT_BYTES + 1024) /* batch arena per queued
						  request: the pilot and its
						  AMQP ids */

enum {
	WK_MR_NEW = 0,     /* queued */
	WK_MR_REDELIVERED, /* queued, the broker says it was delivered before */
	WK_MR_PICKED,      /* has a pick to claim */
	WK_MR_MATCHED,     /* claimed */
	WK_MR_NOMATCH,     /* decided: nothing */
	WK_MR_DONE,        /* answered from an earlier decision, settled */
};

/* ---- state ------------------------------------------------------------- */

struct wk_reply_wait {
	uint64_t gen, tag;     /* the pilot.match delivery to ack */
	char *reply_to, *corr_id, *msgid;
	void *body;
	size_t len;
};

static void rw_free(struct wk_reply_wait *x)
{
	free(x->reply_to);
	free(x->corr_id);
	free(x->msgid);
	free(x->body);
}

static void reset_batch(struct wk_tq *t)
{
	for (size_t i = 0; i < t->nreq; i++) {
		json_decref(t->req[i].dump);
		t->req[i].dump = NULL;
	}
	t->nreq = 0;
	t->ncopy = 0;
	t->rm = NULL; /* lived in the transaction's arena */
	t->nrm = 0;
	arena_free(&t->batch_arena);
	arena_init(&t->batch_arena, t->cap * WK_REQ_BYTES);
}

/* The batch of struct wk_tq (the index is route_tq.c's, set up first). */
static int match_init(struct wk_worker *w)
{
	struct wk_tq *t = w->tq;
	if (t == NULL)
		return GB_ESTATE;
	t->cap = (size_t)(w->cfg->match_batch > 0 ? w->cfg->match_batch : 1);
	t->req = calloc(t->cap, sizeof(*t->req));
	t->copy = calloc(t->cap, sizeof(*t->copy));
	if (t->req == NULL || t->copy == NULL) {
		free(t->req);
		free(t->copy);
		t->req = NULL;
		t->copy = NULL;
		return GB_ENOMEM;
	}
	arena_init(&t->batch_arena, t->cap * WK_REQ_BYTES);
	return GB_OK;
}

static void match_fini(struct wk_worker *w)
{
	struct wk_tq *t = w->tq;
	if (t == NULL)
		return;
	reset_batch(t); /* the dumps a batch may still hold */
	for (size_t i = 0; i < t->nrw; i++)
		rw_free(&t->rw[i]);
	free(t->rw);
	t->rw = NULL;
	t->nrw = t->caprw = 0;
	free(t->req);
	t->req = NULL;
	free(t->copy);
	t->copy = NULL;
	free(t->weights);
	t->weights = NULL;
	arena_free(&t->batch_arena);
	arena_free(&t->grants_arena);
	memset(&t->grants, 0, sizeof(t->grants));
	t->grants_at = 0;
}

/* ---- who may claim which groups ([dirac] owner_check) ------------------- */

#define WK_GRANTS_BYTES (64u << 20) /* cap of the pilot_grants copy */

/* pilot_grants as of at most owner_check_refresh seconds ago. A failed
** reload keeps the rows of the last one (logged); a failed first load
** is the error. */
static int grants_fresh(struct wk_worker *w)
{
	struct wk_tq *t = w->tq;
	double now = clk_mono();
	if (t->grants_at > 0 && now - t->grants_at < w->cfg->owner_check_refresh)
		return GB_OK;
	struct arena fresh;
	arena_init(&fresh, WK_GRANTS_BYTES);
	struct st_grants g;
	int rc = st_grants_load(w->db, &fresh, &g);
	if (rc != GB_OK) {
		arena_free(&fresh);
		if (t->grants_at == 0)
			return rc;
		log_warn("pilot_grants: reload failed, checking pilots against "
			 "the rows read %.0f s ago: %s",
			 now - t->grants_at, st_error(w->db));
		t->grants_at = now; /* try again after the period */
		return GB_OK;
	}
	if (t->grants_at == 0 || g.n != t->grants.n)
		log_info("pilot_grants: %zu grant(s) loaded; owner_check %s",
			 g.n, w->cfg->owner_check);
	arena_free(&t->grants_arena);
	t->grants_arena = fresh;
	t->grants = g;
	t->grants_at = now;
	return GB_OK;
}

/*
** The admit hook: may the account that published this pilot (the AMQP
** user_id, which RabbitMQ checked against the connection's user) claim
** the groups and owners it gives? With owner_check off, or auto and no
** grant at all, every pilot is admitted as before; otherwise a pilot
** without user_id, or claiming what its account was not granted, is
** dead-lettered with the reason (store_grants.h: st_grants_check).
*/
static int admit(struct wk_worker *w, const struct amq_delivery *d,
		 const void *req, const char **field, char *problem, size_t n)
{
	const char *mode = w->cfg->owner_check;
	if (strcmp(mode, "off") == 0)
		return 1;
	int rc = grants_fresh(w);
	if (rc != GB_OK)
		return rc < 0 ? rc : GB_EDB;
	struct wk_tq *t = w->tq;
	if (strcmp(mode, "auto") == 0 && t->grants.n == 0)
		return 1;
	const struct cdt_pilot *p = req;
	return st_grants_check(&t->grants, d->props.user_id, p->d.groups.v,
			       p->d.groups.n, p->d.owners.v, p->d.owners.n,
			       field, problem, n);
}


/* ---- queueing ---------------------------------------------------------- */

static char *keep(struct wk_tq *t, const char *s)
{
	return s ? arena_strdup(&t->batch_arena, s) : NULL;
}

static void flush(struct wk_worker *w);
static void replies_retry(struct wk_worker *w);

static int same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Keep `d`, a second copy of a request in the batch that wants its reply
** elsewhere, for answer_copies. No room or memory: hand it back, and its
** redelivery is answered from the record (answer_redelivered). */
static void keep_copy(struct wk_worker *w, const struct amq_delivery *d)
{
	struct wk_tq *t = w->tq;
	struct wk_match_copy *c = t->ncopy < t->cap ? &t->copy[t->ncopy] : NULL;
	if (c != NULL) {
		memset(c, 0, sizeof(*c));
		c->gen = d->gen;
		c->tag = d->tag;
		c->t0 = w->mx_t0;
		c->msgid = keep(t, d->props.message_id);
		c->reply_to = keep(t, d->props.reply_to);
		c->corr_id = keep(t, d->props.correlation_id);
	}
	if (c == NULL || c->msgid == NULL ||
	    (d->props.reply_to && c->reply_to == NULL) ||
	    (d->props.correlation_id && c->corr_id == NULL)) {
		amq_nack(w->amq, d->gen, d->tag, 1);
		return;
	}
	log_info("pilot.match %s is twice in one batch, with another reply "
		 "address; it gets the recorded decision after the batch",
		 d->props.message_id);
	t->ncopy++;
}

static int decode(const void *body, size_t len, struct arena *a, void *req,
		  struct cod_error *err)
{
	return cdt_decode_pilot(body, len, a, req, err);
}

static void enqueue(struct wk_worker *w, const struct amq_delivery *d,
		    void *req)
{
	struct wk_tq *t = w->tq;
	const struct cdt_pilot p = *(const struct cdt_pilot *)req;
	if (t->nreq == t->cap)
		flush(w);
	/* The same request twice in one batch (a producer re-sent it after
	** a lost confirm, or a pilot asked again, and both copies were
	** queued): deciding both would fail the whole batch on the
	** request's unique key, again and again at every redelivery, until
	** the delivery limit dead-letters them. Only the copy already in the
	** batch is decided. When this one wants its reply where that one's
	** goes (same reply_to and correlation id), it is done; otherwise (a
	** pilot that asked again on a new connection, or with a new
	** correlation id, waits for its reply there) it is kept aside and
	** answered from the recorded decision after the commit, as
	** pilot.match.md promises a pilot that sends its request again. */
	for (size_t i = 0; i < t->nreq; i++) {
		struct wk_match_req *q = &t->req[i];
		if (q->msgid == NULL ||
		    strcmp(q->msgid, d->props.message_id) != 0)
			continue;
		if (q->gen != d->gen) {
			/* The copy in the batch came on a connection that has
			** died since: the broker took that delivery back and
			** this is it again. Answer through the live one. */
			q->gen = d->gen;
			q->tag = d->tag;
			return;
		}
		if (!same_str(q->reply_to, d->props.reply_to) ||
		    !same_str(q->corr_id, d->props.correlation_id)) {
			keep_copy(w, d);
			return;
		}
		w->n_dup++;
		wk_mx_outcome(w, MX_O_DUPLICATE);
		log_info("pilot.match %s is twice in one batch; answering it "
			 "once",
			 d->props.message_id);
		amq_ack(w->amq, d->gen, d->tag);
		return;
	}
	struct wk_match_req *r = &t->req[t->nreq];
	memset(r, 0, sizeof(*r));
	r->gen = d->gen;
	r->tag = d->tag;
	r->t0 = w->mx_t0;
	r->state = d->redelivered ? WK_MR_REDELIVERED : WK_MR_NEW;
	r->msgid = keep(t, d->props.message_id);
	r->reply_to = keep(t, d->props.reply_to);
	r->corr_id = keep(t, d->props.correlation_id);
	int copied = cdt_pilot_copy(&p, &t->batch_arena, &r->p);
	r->mp = scm_md_pilot(&r->p);
	if (r->msgid == NULL || copied != GB_OK ||
	    (d->props.reply_to && r->reply_to == NULL) ||
	    (d->props.correlation_id && r->corr_id == NULL)) {
		/* The batch arena is sized for cap requests of the largest
		** valid size; running out means a bug, not bad input. */
		log_error("pilot.match %s: batch memory exhausted; requeued",
			  d->props.message_id);
		amq_nack(w->amq, d->gen, d->tag, 1);
		return;
	}
	t->nreq++;
	if (t->nreq == t->cap)
		flush(w);
}

/* The idle hook: the broker has nothing more waiting, so decide now. Also
** run at every tick (wk_tick): a batch a read left queued (one that ended
** without a database) is decided within 250 ms, and held replies go. */
static void idle(struct wk_worker *w)
{
	replies_retry(w);
	if (w->tq && w->tq->nreq)
		flush(w);
}

/* ---- replies ----------------------------------------------------------- */

static void fill_match(const struct wk_match_req *r, struct cdt_match *m)
{
	memset(m, 0, sizeof(*m));
	m->decision_id = r->decision_id;
	m->request_id = r->msgid;
	m->pilot_id = r->p.pilot_id;
	m->site = r->p.site;
	m->matched = r->state == WK_MR_MATCHED;
	if (m->matched) {
		m->job_id = r->job_id;
		m->tq_id = r->tq_id;
		m->owner = r->owner;
		m->owner_group = r->owner_group;
		m->tq_cpu_time = r->tq_cpu;
	}
	m->code = r->code;
	m->reason = r->reason;
	m->considered = r->res.in;
	m->matched_tqs = r->res.matched;
	m->empty = r->res.empty;
	memcpy(m->rejected, r->res.rejected, sizeof(m->rejected));
}

/* Publish a reply; its request (gen, tag) is acked on the reply's confirm
** (wk_publish_acked says why). */
static int publish_reply(struct wk_worker *w, uint64_t gen, uint64_t tag,
			 const char *reply_to, const char *corr_id,
			 const char *msgid, const void *body, size_t len)
{
	struct amq_props props = {
		.message_id = msgid,
		.type = "pilot.match.reply",
		.content_type = "application/msgpack",
		.correlation_id = corr_id,
	};
	return wk_publish_acked(w, "", reply_to, &props, body, len, gen, tag);
}

static char *sdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Keep a reply the broker cannot take now; 0, or GB_ENOMEM. */
static int hold_reply(struct wk_worker *w, uint64_t gen, uint64_t tag,
		      const char *reply_to, const char *corr_id,
		      const char *msgid, const msgpack_sbuffer *sb)
{
	struct wk_tq *t = w->tq;
	if (t->nrw == t->caprw) {
		size_t cap = t->caprw ? t->caprw * 2 : 16;
		struct wk_reply_wait *n = realloc(t->rw, cap * sizeof(*n));
		if (n == NULL)
			return GB_ENOMEM;
		t->rw = n;
		t->caprw = cap;
	}
	struct wk_reply_wait *x = &t->rw[t->nrw];
	memset(x, 0, sizeof(*x));
	x->gen = gen;
	x->tag = tag;
	x->reply_to = sdup(reply_to);
	x->corr_id = sdup(corr_id);
	x->msgid = sdup(msgid);
	x->body = malloc(sb->size ? sb->size : 1);
	x->len = sb->size;
	if (x->reply_to == NULL || x->msgid == NULL || x->body == NULL ||
	    (corr_id && x->corr_id == NULL)) {
		rw_free(x);
		return GB_ENOMEM;
	}
	memcpy(x->body, sb->data, sb->size);
	t->nrw++;
	return GB_OK;
}

static void replies_retry(struct wk_worker *w)
{
	struct wk_tq *t = w->tq;
	if (t == NULL || t->nrw == 0 || w->amq == NULL)
		return;
	uint64_t gen = amq_generation(w->amq);
	size_t keep = 0;
	for (size_t i = 0; i < t->nrw; i++) {
		struct wk_reply_wait *x = &t->rw[i];
		int rc = GB_EAMQPGONE;
		if (x->gen == gen)
			rc = publish_reply(w, x->gen, x->tag, x->reply_to,
					   x->corr_id, x->msgid, x->body,
					   x->len);
		if (rc == GB_ETIMEOUT) {
			t->rw[keep++] = *x; /* still blocked: later */
			continue;
		}
		/* Published: its confirm acks the request. Otherwise the
		** connection is gone and the broker requeued the request;
		** its redelivery answers again. */
		rw_free(x);
	}
	t->nrw = keep;
}

/*
** Answer one pilot. Returns 2 when the reply is published (its confirm
** acks the request), 1 when no reply is wanted (ack the request with the
** batch), 0 when the reply is held for later (replies_retry publishes it
** and its confirm acks the request), or a negative error when the request
** must be handed back.
**
** Why hold rather than hand back: the broker refuses publishes for a
** while under an alarm, and a request nacked then is redelivered at once,
** answered again, refused again — a loop that a quorum queue counts
** against the delivery limit until it dead-letters a valid request.
*/
static int send_reply(struct wk_worker *w, uint64_t gen, uint64_t tag,
		      const char *reply_to, const char *corr_id,
		      const struct cdt_match *m)
{
	if (reply_to == NULL || reply_to[0] == '\0')
		return 1; /* a fire-and-forget request: events only */
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	int rc = cdt_encode_reply(m, &sb);
	char msgid[64];
	snprintf(msgid, sizeof(msgid), "gb-pilot-%lld-reply", m->decision_id);
	if (rc == GB_OK)
		rc = publish_reply(w, gen, tag, reply_to, corr_id, msgid,
				   sb.data, sb.size);
	int out = rc == GB_OK ? 2 : rc;
	if (rc == GB_ETIMEOUT)
		out = hold_reply(w, gen, tag, reply_to, corr_id, msgid,
				 &sb) == GB_OK
			      ? 0
			      : GB_ENOMEM;
	msgpack_sbuffer_destroy(&sb);
	if (rc == GB_EINVAL) {
		/* A decision our own encoder refuses is a bug; requeueing it
		** would loop. The decision is recorded; the pilot asks again. */
		log_error("pilot.match reply for decision %lld does not "
			  "encode; the pilot gets no reply",
			  m->decision_id);
		return 1;
	}
	return out;
}

/* A delivery of a request already decided: answer it with decision `m`
** and settle it. */
static void answer_recorded(struct wk_worker *w, uint64_t gen, uint64_t tag,
			    const char *reply_to, const char *corr_id,
			    double t0, const struct cdt_match *m)
{
	w->n_dup++;
	wk_mx_settled(MX_T_PILOT_MATCH, MX_O_DUPLICATE, t0);
	log_info("pilot.match %s already decided (decision %lld); answering "
		 "again", m->request_id, m->decision_id);
	int sent = send_reply(w, gen, tag, reply_to, corr_id, m);
	if (sent == 1)
		amq_ack(w->amq, gen, tag); /* no reply wanted */
	else if (sent < 0)
		amq_nack(w->amq, gen, tag, 1);
}

/* A redelivered request already decided: answer it the same way again. */
static void answer_again(struct wk_worker *w, struct wk_match_req *r,
			 const struct cdt_match *m)
{
	answer_recorded(w, r->gen, r->tag, r->reply_to, r->corr_id, r->t0, m);
	r->state = WK_MR_DONE;
}

/* After the batch committed (ok) or failed: answer the copies kept by
** keep_copy from the decisions now recorded, or hand them back. */
static void answer_copies(struct wk_worker *w, struct arena *a, int ok)
{
	struct wk_tq *t = w->tq;
	for (size_t i = 0; i < t->ncopy; i++) {
		struct wk_match_copy *c = &t->copy[i];
		struct cdt_match m;
		int found = 0;
		int rc = ok ? st_tq_match_get(w->db, c->msgid, a, &m, &found)
			    : GB_EDBRETRY;
		if (rc == GB_OK && found)
			answer_recorded(w, c->gen, c->tag, c->reply_to,
					c->corr_id, c->t0, &m);
		else
			amq_nack(w->amq, c->gen, c->tag, 1);
	}
	t->ncopy = 0;
}

/* Requests the broker marks redelivered: look for their decision first. */
static int answer_redelivered(struct wk_worker *w, struct arena *a)
{
	struct wk_tq *t = w->tq;
	for (size_t i = 0; i < t->nreq; i++) {
		struct wk_match_req *r = &t->req[i];
		if (r->state != WK_MR_REDELIVERED)
			continue;
		struct cdt_match m;
		int found = 0;
		int rc = st_tq_match_get(w->db, r->msgid, a, &m, &found);
		if (rc != GB_OK)
			return rc;
		if (found)
			answer_again(w, r, &m);
		else
			r->state = WK_MR_NEW;
	}
	return GB_OK;
}

/* ---- deciding ---------------------------------------------------------- */

/* Pick a job for every pilot still without one, from the index. Each pick
** draws from a stream of its own (seeded per pilot and round), so one
** pilot's decision is reproducible from its inputs and seed alone. */
static void pick_all(struct wk_worker *w, long long now)
{
	struct wk_tq *t = w->tq;
	for (size_t i = 0; i < t->nreq; i++) {
		struct wk_match_req *r = &t->req[i];
		if (r->state != WK_MR_NEW)
			continue;
		size_t n = tqi_ntqs(t->idx);
		if (n > t->nweights) {
			double *nw = realloc(t->weights, n * sizeof(*nw));
			if (nw == NULL) {
				r->state = WK_MR_NOMATCH;
				r->code = "internal";
				r->reason = "out of memory";
				continue;
			}
			t->weights = nw;
			t->nweights = n;
		}
		struct md_match m;
		r->seed = wk_seed(w, r->msgid, now);
		int rc = md_match_pilot(t->idx, &t->pcfg, &r->mp, r->seed,
					t->weights, NULL, &m);
		r->res = m.result;
		r->job_sharing = m.job_sharing > 0;
		r->reason = arena_strdup(&t->batch_arena, m.reason);
		/* The index as this pick saw it, before the pick leaves it; a
		** claim_conflict has none (another worker's claims decided). */
		json_decref(r->dump);
		r->dump = NULL;
		if (wk_dumping_pilot(w, tqi_njobs(t->idx)) &&
		    !(r->lost && m.result.chosen < 0))
			r->dump = scw_match(now, r->seed, &t->pcfg, t->seg,
					    t->nseg, t->idx, NULL, 0, &r->p);
		if (rc != GB_OK || m.result.chosen < 0) {
			r->state = WK_MR_NOMATCH;
			r->code = r->lost ? "claim_conflict" : m.code;
			continue;
		}
		r->job_id = m.job_id;
		r->tq_id = m.tq_id;
		r->prio = m.user_priority;
		r->tq_cpu = m.tq_cpu;
		r->owner = m.owner;
		r->owner_group = m.owner_group;
		r->state = WK_MR_PICKED;
		/* Out of the index now: the next pilot of this batch must not
		** see it. */
		tqi_job_remove(t->idx, r->tq_id, r->job_id);
	}
}

/* Claim every pick (TQ-09); losers go back to NEW for another pick. */
static int claim_all(struct wk_worker *w, size_t *lost)
{
	struct wk_tq *t = w->tq;
	long long ids[ST_TQ_CLAIM_MAX];
	size_t who[ST_TQ_CLAIM_MAX];
	int claimed[ST_TQ_CLAIM_MAX];
	size_t i = 0;
	*lost = 0;
	while (i < t->nreq) {
		size_t k = 0;
		for (; i < t->nreq && k < ST_TQ_CLAIM_MAX; i++)
			if (t->req[i].state == WK_MR_PICKED) {
				ids[k] = t->req[i].job_id;
				who[k++] = i;
			}
		if (k == 0)
			break;
		int rc = st_tq_claim(w->db, ids, k, claimed);
		if (rc != GB_OK)
			return rc;
		for (size_t j = 0; j < k; j++) {
			struct wk_match_req *r = &t->req[who[j]];
			if (claimed[j]) {
				r->state = WK_MR_MATCHED;
				r->code = "matched";
			} else {
				/* Another worker won it: it stays out of our
				** index, and this pilot picks again. */
				r->state = WK_MR_NEW;
				r->lost++;
				(*lost)++;
				w->n_claim_lost++;
				mx_wk_claim_conflict();
			}
		}
	}
	return GB_OK;
}

/* After a rollback: the claimed and picked jobs are waiting again. */
static void undo(struct wk_txn *x, void *arg)
{
	(void)arg;
	struct wk_tq *t = x->w->tq;
	for (size_t i = 0; i < t->nreq; i++) {
		struct wk_match_req *r = &t->req[i];
		if (r->state == WK_MR_MATCHED || r->state == WK_MR_PICKED)
			tqi_job_add(t->idx, r->tq_id, r->job_id, r->prio);
		if (r->state != WK_MR_DONE) {
			r->state = WK_MR_NEW;
			r->lost = 0;
			r->job_id = r->tq_id = 0;
		}
	}
}

/*
** The decision record (record.h) kept with the decision for `gridbroker
** why`: what `explain` prints for the same pilot and index. Per-TQ
** verdicts are not kept here: matching is the hot path (many pilots a
** second over hundreds of TQs) and the per-filter counts already say which
** criterion failed; `gridbroker explain` on a match scenario lists every
** TQ.
*/
static char *record(struct arena *a, const struct wk_match_req *r)
{
	const struct rec_pilot rp = {
		.pilot_id = r->p.pilot_id,
		.p = r->mp,
		.job_sharing = r->job_sharing,
		.res = &r->res,
		.matched = r->state == WK_MR_MATCHED,
		.code = r->code,
		.reason = r->reason,
		.tq_id = r->tq_id,
		.job_id = r->job_id,
		.user_priority = r->prio,
		.tq_cpu = r->tq_cpu,
		.owner_dn = r->owner,
		.tq_owner_group = r->owner_group,
		.lost = r->lost,
	};
	char *s = rec_match(&rp, NULL);
	char *out = s ? arena_strdup(a, s) : NULL;
	free(s);
	return out;
}

/* Queue one batch event (all matched or all not) in the outbox. */
static int batch_event(struct wk_txn *x, const char *event, int matched)
{
	struct wk_tq *t = x->w->tq;
	struct cdt_match *items = arena_alloc(x->a, t->nreq * sizeof(*items));
	if (items == NULL)
		return GB_ETOOBIG;
	size_t n = 0;
	const char *first_req = NULL;
	for (size_t i = 0; i < t->nreq; i++) {
		const struct wk_match_req *r = &t->req[i];
		int m = r->state == WK_MR_MATCHED;
		if (r->state == WK_MR_DONE || m != matched)
			continue;
		fill_match(r, &items[n++]);
		if (first_req == NULL)
			first_req = r->msgid;
	}
	if (n == 0)
		return GB_OK;
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	int rc = cdt_encode_match_event(event, items, n, &sb);
	if (rc == GB_OK) {
		char msgid[96];
		snprintf(msgid, sizeof(msgid), "gb-pilot-%lld-%s",
			 items[0].decision_id, matched ? "matched" : "nomatch");
		rc = wk_txn_event_id(x, msgid, event, first_req, &sb);
	}
	msgpack_sbuffer_destroy(&sb);
	return rc;
}

/* Task queues that the batch's claims left without a waiting job in this
** worker's index, each counted once. */
static size_t emptied(const struct wk_tq *t)
{
	size_t n = 0;
	for (size_t i = 0; i < t->nreq; i++) {
		const struct wk_match_req *r = &t->req[i];
		if (r->state != WK_MR_MATCHED ||
		    tqi_tq_njobs(t->idx, r->tq_id) != 0)
			continue;
		size_t k = 0;
		while (k < i && !(t->req[k].state == WK_MR_MATCHED &&
				  t->req[k].tq_id == r->tq_id))
			k++;
		n += k == i;
	}
	return n;
}

/* Log the batch's claimed jobs as removed (st_tq_log_removals); t->rm
** keeps them with their seqs for wk_tqs_own_removals after the commit. */
static int log_claims(struct wk_txn *x)
{
	struct wk_tq *t = x->w->tq;
	t->rm = NULL;
	t->nrm = 0;
	size_t n = 0;
	for (size_t i = 0; i < t->nreq; i++)
		n += t->req[i].state == WK_MR_MATCHED;
	if (n == 0)
		return GB_OK;
	struct st_tq_removal *rm = arena_alloc(x->a, n * sizeof(*rm));
	if (rm == NULL)
		return GB_ETOOBIG;
	n = 0;
	for (size_t i = 0; i < t->nreq; i++)
		if (t->req[i].state == WK_MR_MATCHED)
			rm[n++] = (struct st_tq_removal){
				.tq_id = t->req[i].tq_id,
				.job_id = t->req[i].job_id};
	int rc = st_tq_log_removals(x->w->db, rm, n, "matched", x->now);
	if (rc == GB_OK) {
		t->rm = rm;
		t->nrm = n;
	}
	return rc;
}

/*
** The batch's transaction body: pick, claim (re-picking for lost claims),
** record, queue the events. A rollback undoes the index changes (undo).
*/
static int batch_body(struct wk_txn *x, void *arg)
{
	(void)arg;
	struct wk_worker *w = x->w;
	struct wk_tq *t = w->tq;
	int rc = GB_OK;
	for (int round = 0; rc == GB_OK && round < WK_MATCH_ROUNDS; round++) {
		pick_all(w, x->now);
		size_t lost = 0;
		rc = claim_all(w, &lost);
		if (lost == 0)
			break;
	}
	/* Pilots whose every pick was taken by another worker. */
	for (size_t i = 0; rc == GB_OK && i < t->nreq; i++) {
		struct wk_match_req *r = &t->req[i];
		if (r->state != WK_MR_NEW)
			continue;
		r->state = WK_MR_NOMATCH;
		r->code = "claim_conflict";
		r->reason = "every job picked for this pilot was claimed by "
			    "another worker first; ask again";
	}
	struct st_tq_match_rec *recs = NULL;
	size_t nrec = 0;
	if (rc == GB_OK) {
		recs = arena_alloc(x->a, t->nreq * sizeof(*recs));
		if (recs == NULL)
			rc = GB_ETOOBIG;
	}
	for (size_t i = 0; rc == GB_OK && i < t->nreq; i++) {
		struct wk_match_req *r = &t->req[i];
		if (r->state == WK_MR_DONE)
			continue;
		fill_match(r, &recs[nrec].m);
		recs[nrec].detail_json = record(x->a, r);
		nrec++;
	}
	for (size_t off = 0; rc == GB_OK && off < nrec;
	     off += ST_TQ_RECORD_MAX) {
		size_t k = nrec - off < ST_TQ_RECORD_MAX ? nrec - off
							 : ST_TQ_RECORD_MAX;
		rc = st_tq_record(w->db, recs + off, k, x->now);
	}
	if (rc == GB_OK) {
		size_t j = 0;
		for (size_t i = 0; i < t->nreq; i++) {
			struct wk_match_req *r = &t->req[i];
			if (r->state == WK_MR_DONE)
				continue;
			const struct st_tq_match_rec *rec = &recs[j++];
			r->decision_id = rec->m.decision_id;
			if (r->dump && strcmp(r->code, "claim_conflict") != 0)
				rc = wk_txn_dump(x, "pilot", r->decision_id,
						 rec->detail_json,
						 json_incref(r->dump));
			if (rc != GB_OK)
				break;
		}
		if (rc == GB_OK)
			rc = batch_event(x, "pilot.matched", 1);
	}
	if (rc == GB_OK)
		rc = batch_event(x, "pilot.nomatch", 0);
	/* TQ-09: every worker's index learns of the claims from the removal
	** log (tqsync.h); after the records, before the tq_state row. */
	if (rc == GB_OK)
		rc = log_claims(x);
	/* PR-08: a task queue this batch emptied changes the priorities of
	** its entity; the leader recomputes at once rather than at its next
	** period. Last, as st_tq_mark_dirty asks. */
	if (rc == GB_OK)
		rc = st_tq_mark_dirty(w->db, emptied(t));
	return rc;
}

/* After the commit: reply, publish the events, settle the deliveries. */
/* Count a pilot's decision and log one info line with journal fields,
** as for tasks and jobs (wk_decided). */
static void log_pilot(struct wk_worker *w, const struct wk_match_req *r)
{
	int ok = r->state == WK_MR_MATCHED;
	char f_req[220], f_pilot[300], f_out[48], f_job[48], what[400];
	snprintf(f_req, sizeof(f_req), "GB_REQUEST_ID=%s", r->msgid);
	snprintf(f_pilot, sizeof(f_pilot), "GB_PILOT_ID=%s", r->p.pilot_id);
	snprintf(f_out, sizeof(f_out), "GB_OUTCOME=%s",
		 ok ? "matched" : "nomatch");
	snprintf(f_job, sizeof(f_job), "GB_JOB_ID=%lld", ok ? r->job_id : 0);
	const char *fields[] = {f_req, f_pilot, f_out, ok ? f_job : NULL,
				NULL};
	if (ok)
		snprintf(what, sizeof(what), "job %lld of TQ %lld", r->job_id,
			 r->tq_id);
	else
		snprintf(what, sizeof(what), "no job, %s: %s", r->code,
			 r->reason ? r->reason : "");
	*(ok ? &w->n_matched : &w->n_nomatch) += 1;
	wk_mx_settled(MX_T_PILOT_MATCH, ok ? MX_O_MATCHED : MX_O_NOMATCH,
		      r->t0);
	log_fields(LOG_LVL_INFO, fields,
		   "pilot %s at %s: %s (decision %lld, request %s)",
		   r->p.pilot_id, r->p.site, what, r->decision_id, r->msgid);
}

static void answer_batch(struct wk_txn *x)
{
	struct wk_worker *w = x->w;
	struct arena *a = x->a;
	struct wk_tq *t = w->tq;
	uint64_t *tags = arena_alloc(a, t->nreq * sizeof(*tags) + 1);
	size_t ntags = 0;
	uint64_t gen = 0;
	for (size_t i = 0; i < t->nreq; i++) {
		struct wk_match_req *r = &t->req[i];
		if (r->state == WK_MR_DONE)
			continue;
		struct cdt_match m;
		fill_match(r, &m);
		mx_wk_tq_result(&r->res);
		log_pilot(w, r);
		int sent = send_reply(w, r->gen, r->tag, r->reply_to,
				      r->corr_id, &m);
		if (sent == 2) {
			w->n_decided++; /* acked on its reply's confirm */
			continue;
		}
		if (sent == 0)
			continue; /* held: acked once the reply is out */
		if (sent < 0) {
			/* Decided but not told: the redelivery answers. */
			amq_nack(w->amq, r->gen, r->tag, 1);
			continue;
		}
		if (tags && (ntags == 0 || r->gen == gen)) {
			gen = r->gen;
			tags[ntags++] = r->tag;
		} else {
			amq_ack(w->amq, r->gen, r->tag);
		}
	}
	w->n_decided += ntags;
	/* Ack on the confirm of the last event. When it cannot be published
	** now, ack at once: the decisions are committed and the outbox relay
	** publishes the events later. */
	int settled = 0;
	for (size_t j = 0; j < x->nrows; j++) {
		const struct st_outbox_row *row = &x->rows[j];
		if (j + 1 == x->nrows && ntags)
			settled = wk_publish_row_acks(w, row, gen, tags,
						      ntags) == GB_OK;
		else
			wk_publish_row(w, row, NULL);
	}
	if (!settled)
		for (size_t i = 0; i < ntags; i++)
			amq_ack(w->amq, gen, tags[i]);
}

static void nack_all(struct wk_worker *w)
{
	struct wk_tq *t = w->tq;
	for (size_t i = 0; i < t->nreq; i++)
		if (t->req[i].state != WK_MR_DONE)
			amq_nack(w->amq, t->req[i].gen, t->req[i].tag, 1);
}

static void flush(struct wk_worker *w)
{
	struct wk_tq *t = w->tq;
	if (t->nreq == 0)
		return;
	/* No database: keep the batch (unacknowledged) until it is back
	** rather than requeue it, for the reason park.c gives; new
	** deliveries are parked meanwhile, so the batch cannot overflow. */
	if (w->db == NULL || w->db_down)
		return;
	/* Requests of a connection that has died since were taken back by
	** the broker, which delivers them again (here or to another worker);
	** deciding them now would answer a pilot without the delivery that
	** keeps the request safe. */
	uint64_t gen = w->amq ? amq_generation(w->amq) : 0;
	size_t live = 0;
	for (size_t i = 0; i < t->nreq; i++)
		if (t->req[i].gen == gen)
			t->req[live++] = t->req[i];
	if (live < t->nreq)
		log_info("pilot.match: %zu request(s) of a closed connection "
			 "left to their redelivery",
			 t->nreq - live);
	t->nreq = live;
	live = 0;
	for (size_t i = 0; i < t->ncopy; i++)
		if (t->copy[i].gen == gen)
			t->copy[live++] = t->copy[i];
	t->ncopy = live;
	if (t->nreq == 0) {
		reset_batch(t);
		return;
	}
	struct arena a;
	arena_init(&a, t->cap * WK_REQ_BYTES + (1u << 20));
	/* A stale index is refreshed before deciding (the first pilot after a
	** quiet spell must see the jobs submitted meanwhile); under load the
	** refresh after each batch's answers (below) keeps it fresh, so this
	** one seldom runs and pilots seldom wait for it. */
	int rc = wk_tq_config(w);
	if (rc == GB_OK)
		rc = wk_tq_fresh(w, 0);
	if (rc == GB_OK)
		rc = answer_redelivered(w, &a);
	struct wk_txn x;
	wk_txn_init(&x, w, &a, NULL, "pilot.match");
	for (int attempt = 0; rc == GB_OK; attempt++) {
		rc = wk_txn_run(&x, batch_body, NULL, undo);
		if (rc == GB_OK) {
			wk_crash_point("after-commit");
			wk_tqs_own_removals(t->idx, t->rm, t->nrm);
			answer_batch(&x);
			break;
		}
		if (rc != GB_EDUP)
			break;
		/* A request of the batch was decided before without the
		** redelivered flag (published twice, or the flag lost): answer
		** those from their records, decide the rest in the next
		** attempt. */
		for (size_t i = 0; i < t->nreq; i++)
			if (t->req[i].state == WK_MR_NEW)
				t->req[i].state = WK_MR_REDELIVERED;
		rc = answer_redelivered(w, &a);
		if (rc == GB_OK && attempt + 1 >= WK_DB_RETRIES)
			rc = GB_EDUP;
	}
	if (rc != GB_OK) {
		wk_db_failed(w, rc, "pilot.match batch");
		nack_all(w);
	}
	answer_copies(w, &a, rc == GB_OK);
	arena_free(&a);
	reset_batch(t);
	/* The periodic refresh, after the answers: under load this one does
	** nearly every refresh, between batches, so no pilot of this batch
	** waited for it and the next batch finds the index fresh. */
	if (rc == GB_OK) {
		rc = wk_tq_fresh(w, 0);
		if (rc != GB_OK)
			wk_db_failed(w, rc, "task queue index refresh");
	}
}

const struct wk_route wk_route_match = {
	.key = "pilot.match",
	.size = sizeof(struct cdt_pilot),
	.decode = decode,
	.admit = admit,
	.enqueue = enqueue,
	.init = match_init,
	.fini = match_fini,
	.idle = idle,
};
