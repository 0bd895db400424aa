/*
** amqp_topology.c — what the event-loop client (amqp.c) and the blocking
** client (amqp_sync.c) share: connecting and logging in, declaring the
** topology, the write watchdog, and the pure conversions between our
** property structs and rabbitmq-c's tables.
**
** The pure half (backoff, confirm window, property and header tables, reply
** texts) neither logs nor touches a connection, so tests/unit/amqp/test_amqp.c
** checks it without a broker. The connection half reports problems into a
** caller's buffer rather than the log: the worker logs them, the CLI prints
** them. One exception: amq_connect logs the node of a multi-node
** [amqp] host list it connected to, and a failover (a warning), because
** its callers only know the list.
*/
#include "amqp/amqp_internal.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include <amqp_ssl_socket.h>
/* The OpenSSL that librabbitmq's TLS socket runs on: for the few things
** rabbitmq-c 0.11 does not wrap (the reason of a failed handshake, an IP
** address as the expected peer). */
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include "gb_error.h"
#include "base/hostlist.h"
#include "base/log.h"

const char *const amq_request_types[] = {"task.broker", "job.broker",
					 "job.submit", "pilot.match",
					 "job.status", NULL};

/* ---- backoff ------------------------------------------------------------ */

long amq_backoff_ms(unsigned attempt, int max_s, uint64_t rnd)
{
	long cap = max_s > 0 ? (long)max_s * 1000L : 1000L;
	long base = 500;
	for (unsigned i = 0; i < attempt && base < cap; i++)
		base *= 2;
	if (base > cap)
		base = cap;
	/* 53 random bits give a uniform u in [0, 1): factor in [0.8, 1.2). */
	double u = (double)(rnd >> 11) / 9007199254740992.0;
	long ms = (long)((double)base * (0.8 + 0.4 * u));
	return ms < 1 ? 1 : ms;
}

uint64_t amq_xorshift64(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* ---- confirm window ------------------------------------------------------ */

int amq_win_init(struct amq_window *w, size_t cap)
{
	memset(w, 0, sizeof(*w));
	if (cap == 0)
		cap = 1;
	w->done = calloc(cap, 1);
	if (w->done == NULL)
		return GB_ENOMEM;
	w->cap = cap;
	amq_win_reset(w);
	return GB_OK;
}

void amq_win_free(struct amq_window *w)
{
	free(w->done);
	memset(w, 0, sizeof(*w));
}

void amq_win_reset(struct amq_window *w)
{
	if (w->done)
		memset(w->done, 0, w->cap);
	w->low = 1;
	w->next = 1;
	w->pending = 0;
}

int amq_win_has_room(const struct amq_window *w)
{
	return w->cap > 0 && w->next - w->low < w->cap;
}

uint64_t amq_win_push(struct amq_window *w)
{
	if (!amq_win_has_room(w))
		return 0;
	w->done[w->next % w->cap] = 0;
	w->pending++;
	return w->next++;
}

/* Advance `low` over the confirmed prefix so its ring slots can be reused. */
static void win_retire(struct amq_window *w)
{
	while (w->low < w->next && w->done[w->low % w->cap]) {
		w->done[w->low % w->cap] = 0;
		w->low++;
	}
}

size_t amq_win_confirm(struct amq_window *w, uint64_t tag, int multiple,
		       amq_win_fn fn, void *arg)
{
	if (w->cap == 0 || tag < w->low || tag >= w->next)
		return 0;
	size_t n = 0;
	for (uint64_t t = multiple ? w->low : tag; t <= tag; t++) {
		/* fn may have reset the window (the connection was freed). */
		if (t >= w->next)
			break;
		/* Retired while we walked (the prefix moved past it). */
		if (t < w->low || w->done[t % w->cap])
			continue;
		w->done[t % w->cap] = 1;
		w->pending--;
		win_retire(w);
		n++;
		if (fn)
			fn(arg, t);
	}
	return n;
}

size_t amq_win_drain(struct amq_window *w, amq_win_fn fn, void *arg)
{
	uint64_t lo = w->low, hi = w->next;
	size_t n = 0;
	for (uint64_t t = lo; t < hi && w->cap > 0; t++) {
		if (t >= w->next) /* fn drained the window itself */
			break;
		if (w->done[t % w->cap])
			continue;
		w->done[t % w->cap] = 1;
		n++;
		if (fn)
			fn(arg, t);
	}
	amq_win_reset(w);
	return n;
}

int amq_confirm_read(const amqp_method_t *m, uint64_t *tag, int *multiple)
{
	if (m->id == AMQP_BASIC_ACK_METHOD) {
		const amqp_basic_ack_t *a = m->decoded;
		*tag = a->delivery_tag;
		*multiple = a->multiple;
		return 1;
	}
	const amqp_basic_nack_t *n = m->decoded;
	*tag = n->delivery_tag;
	*multiple = n->multiple;
	return 0;
}

/* ---- properties and header tables ---------------------------------------- */

static amqp_bytes_t cbytes(const char *s)
{
	return amqp_cstring_bytes(s);
}

int amq_props_export(const struct amq_props *p, long long timestamp,
		     amqp_basic_properties_t *bp, amqp_table_entry_t *ents,
		     size_t nents)
{
	memset(bp, 0, sizeof(*bp));
	bp->_flags = AMQP_BASIC_DELIVERY_MODE_FLAG | AMQP_BASIC_APP_ID_FLAG;
	bp->delivery_mode = p->persistent ? 2 : 1;
	bp->app_id = cbytes("gridbroker");
	if (timestamp > 0) {
		bp->_flags |= AMQP_BASIC_TIMESTAMP_FLAG;
		bp->timestamp = (uint64_t)timestamp;
	}
	if (p->content_type) {
		bp->_flags |= AMQP_BASIC_CONTENT_TYPE_FLAG;
		bp->content_type = cbytes(p->content_type);
	}
	if (p->message_id) {
		bp->_flags |= AMQP_BASIC_MESSAGE_ID_FLAG;
		bp->message_id = cbytes(p->message_id);
	}
	if (p->type) {
		bp->_flags |= AMQP_BASIC_TYPE_FLAG;
		bp->type = cbytes(p->type);
	}
	if (p->correlation_id) {
		bp->_flags |= AMQP_BASIC_CORRELATION_ID_FLAG;
		bp->correlation_id = cbytes(p->correlation_id);
	}
	if (p->reply_to) {
		bp->_flags |= AMQP_BASIC_REPLY_TO_FLAG;
		bp->reply_to = cbytes(p->reply_to);
	}
	if (p->expiration) {
		bp->_flags |= AMQP_BASIC_EXPIRATION_FLAG;
		bp->expiration = cbytes(p->expiration);
	}
	if (p->user_id && p->user_id[0]) {
		bp->_flags |= AMQP_BASIC_USER_ID_FLAG;
		bp->user_id = cbytes(p->user_id);
	}
	if (p->headers == NULL || p->headers[0] == NULL)
		return GB_OK;
	size_t n = 0;
	for (const char *const *h = p->headers; *h; h += 2) {
		if (h[1] == NULL || strlen(h[0]) > 255)
			return GB_EINVAL;
		if (n == nents)
			return GB_ETOOBIG;
		ents[n].key = cbytes(h[0]);
		ents[n].value.kind = AMQP_FIELD_KIND_UTF8;
		ents[n].value.value.bytes = cbytes(h[1]);
		n++;
	}
	bp->_flags |= AMQP_BASIC_HEADERS_FLAG;
	bp->headers.num_entries = (int)n;
	bp->headers.entries = ents;
	return GB_OK;
}

static int key_is(amqp_bytes_t k, const char *key)
{
	size_t n = strlen(key);
	return k.len == n && memcmp(k.bytes, key, n) == 0;
}

static int is_string(const amqp_field_value_t *v)
{
	return v->kind == AMQP_FIELD_KIND_UTF8 ||
	       v->kind == AMQP_FIELD_KIND_BYTES;
}

int amq_table_get(const amqp_table_t *t, const char *key, amqp_bytes_t *out,
		  long *n)
{
	if (t == NULL)
		return 0;
	for (int i = 0; i < t->num_entries; i++) {
		const amqp_table_entry_t *e = &t->entries[i];
		if (!key_is(e->key, key))
			continue;
		const amqp_field_value_t *v = &e->value;
		if (is_string(v)) {
			if (out)
				*out = v->value.bytes;
			return 1;
		}
		long x;
		switch (v->kind) {
		case AMQP_FIELD_KIND_I8: x = v->value.i8; break;
		case AMQP_FIELD_KIND_U8: x = v->value.u8; break;
		case AMQP_FIELD_KIND_I16: x = v->value.i16; break;
		case AMQP_FIELD_KIND_U16: x = v->value.u16; break;
		case AMQP_FIELD_KIND_I32: x = v->value.i32; break;
		case AMQP_FIELD_KIND_U32: x = (long)v->value.u32; break;
		case AMQP_FIELD_KIND_I64: x = (long)v->value.i64; break;
		case AMQP_FIELD_KIND_U64:
			x = v->value.u64 > (uint64_t)LONG_MAX
				    ? LONG_MAX
				    : (long)v->value.u64;
			break;
		default:
			return 0;
		}
		if (n)
			*n = x;
		return 2;
	}
	return 0;
}

/* Bump copier into the single block amq_import allocates. */
struct strcopy {
	char *p;
};

static const char *copy_bytes(struct strcopy *sc, amqp_bytes_t b)
{
	char *s = sc->p;
	if (b.len)
		memcpy(s, b.bytes, b.len);
	s[b.len] = '\0';
	sc->p += b.len + 1;
	return s;
}

/* The property strings we decode, with their presence flags. */
#define AMQ_IMPORT_FIELDS(X)                                  \
	X(content_type, AMQP_BASIC_CONTENT_TYPE_FLAG)         \
	X(message_id, AMQP_BASIC_MESSAGE_ID_FLAG)             \
	X(type, AMQP_BASIC_TYPE_FLAG)                         \
	X(correlation_id, AMQP_BASIC_CORRELATION_ID_FLAG)     \
	X(reply_to, AMQP_BASIC_REPLY_TO_FLAG)                 \
	X(expiration, AMQP_BASIC_EXPIRATION_FLAG)             \
	X(user_id, AMQP_BASIC_USER_ID_FLAG)

int amq_import(const amqp_basic_properties_t *bp, amqp_bytes_t exchange,
	       amqp_bytes_t routing_key, struct amq_imported *out)
{
	memset(out, 0, sizeof(*out));
	const amqp_table_t *hdr =
		(bp->_flags & AMQP_BASIC_HEADERS_FLAG) ? &bp->headers : NULL;
	/* Everything is already in memory (one header frame, itself bounded
	** by frame_max), so summing the lengths cannot overflow. */
	size_t nstr = 0, bytes = exchange.len + routing_key.len + 2;
#define AMQ_SIZE(name, flag)                         \
	if (bp->_flags & (flag))                     \
		bytes += bp->name.len + 1;
	AMQ_IMPORT_FIELDS(AMQ_SIZE)
#undef AMQ_SIZE
	for (int i = 0; hdr && i < hdr->num_entries; i++) {
		const amqp_table_entry_t *e = &hdr->entries[i];
		if (!is_string(&e->value))
			continue;
		nstr++;
		bytes += e->key.len + 1 + e->value.value.bytes.len + 1;
	}
	size_t ptrs = (2 * nstr + 1) * sizeof(const char *);
	char *block = malloc(ptrs + bytes);
	if (block == NULL)
		return GB_ENOMEM;
	const char **pairs = (const char **)(void *)block;
	struct strcopy sc = {block + ptrs};
	out->block = block;
	out->exchange = copy_bytes(&sc, exchange);
	out->routing_key = copy_bytes(&sc, routing_key);
#define AMQ_COPY(name, flag)                                     \
	if (bp->_flags & (flag))                                 \
		out->props.name = copy_bytes(&sc, bp->name);
	AMQ_IMPORT_FIELDS(AMQ_COPY)
#undef AMQ_COPY
	out->props.persistent = (bp->_flags & AMQP_BASIC_DELIVERY_MODE_FLAG) &&
				bp->delivery_mode == 2;
	size_t k = 0;
	for (int i = 0; hdr && i < hdr->num_entries; i++) {
		const amqp_table_entry_t *e = &hdr->entries[i];
		if (!is_string(&e->value))
			continue;
		pairs[k] = copy_bytes(&sc, e->key);
		pairs[k + 1] = copy_bytes(&sc, e->value.value.bytes);
		if (strcmp(pairs[k], AMQ_ERROR_HEADER) == 0)
			out->error_header = pairs[k + 1];
		k += 2;
	}
	pairs[k] = NULL;
	out->props.headers = pairs;
	long dc = 0;
	if (amq_table_get(hdr, "x-delivery-count", NULL, &dc) == 2 && dc > 0)
		out->delivery_count = dc;
	return GB_OK;
}

void amq_imported_free(struct amq_imported *im)
{
	free(im->block);
	memset(im, 0, sizeof(*im));
}

int amq_queue_name(const char *type, char *buf, size_t len)
{
	int n = snprintf(buf, len, "gridbroker.%s", type);
	return n < 0 || (size_t)n >= len ? GB_ERANGE : GB_OK;
}

void amq_reply_text(amqp_rpc_reply_t r, char *buf, size_t len)
{
	switch (r.reply_type) {
	case AMQP_RESPONSE_NORMAL:
		snprintf(buf, len, "ok");
		return;
	case AMQP_RESPONSE_NONE:
		snprintf(buf, len, "no reply from the library");
		return;
	case AMQP_RESPONSE_LIBRARY_EXCEPTION:
		snprintf(buf, len, "%s", amqp_error_string2(r.library_error));
		return;
	case AMQP_RESPONSE_SERVER_EXCEPTION:
		break;
	}
	if (r.reply.id == AMQP_CONNECTION_CLOSE_METHOD && r.reply.decoded) {
		const amqp_connection_close_t *m = r.reply.decoded;
		snprintf(buf, len, "broker closed the connection: %u %.*s",
			 (unsigned)m->reply_code, (int)m->reply_text.len,
			 (const char *)m->reply_text.bytes);
	} else if (r.reply.id == AMQP_CHANNEL_CLOSE_METHOD && r.reply.decoded) {
		const amqp_channel_close_t *m = r.reply.decoded;
		snprintf(buf, len, "broker closed the channel: %u %.*s",
			 (unsigned)m->reply_code, (int)m->reply_text.len,
			 (const char *)m->reply_text.bytes);
	} else {
		snprintf(buf, len, "unexpected broker reply %s",
			 amqp_method_name(r.reply.id));
	}
}

int amq_mismatch_arg(const char *reply_text, char *arg, size_t len)
{
	static const char mark[] = "inequivalent arg '";
	if (len == 0)
		return 0;
	arg[0] = '\0';
	const char *p = reply_text ? strstr(reply_text, mark) : NULL;
	if (p == NULL)
		return 0;
	p += sizeof(mark) - 1;
	const char *q = strchr(p, '\'');
	if (q == NULL || q == p)
		return 0;
	size_t n = (size_t)(q - p);
	if (n >= len)
		n = len - 1;
	memcpy(arg, p, n);
	arg[n] = '\0';
	return 1;
}

/* ---- write watchdog ------------------------------------------------------ */

static int ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec ||
	       (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static void *guard_main(void *arg)
{
	struct amq_guard *g = arg;
	pthread_mutex_lock(&g->mu);
	while (!g->stop) {
		if (!g->armed) {
			/* Only an idle thread, or one sleeping past a new
			** earlier deadline, needs a signal; otherwise it
			** re-reads the deadline when it wakes, so arming once
			** per library call costs no wake-up. */
			g->idle = 1;
			pthread_cond_wait(&g->cv, &g->mu);
			g->idle = 0;
			continue;
		}
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!ts_before(&now, &g->deadline)) {
			shutdown(g->fd, SHUT_RDWR);
			g->fired = 1;
			g->armed = 0;
			continue;
		}
		g->wait_until = g->deadline;
		pthread_cond_timedwait(&g->cv, &g->mu, &g->wait_until);
	}
	pthread_mutex_unlock(&g->mu);
	return NULL;
}

int amq_guard_start(struct amq_guard *g)
{
	memset(g, 0, sizeof(*g));
	g->fd = -1;
	pthread_condattr_t ca;
	if (pthread_condattr_init(&ca) != 0)
		return GB_ENOMEM;
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	int rc = pthread_cond_init(&g->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (rc != 0)
		return GB_ENOMEM;
	if (pthread_mutex_init(&g->mu, NULL) != 0) {
		pthread_cond_destroy(&g->cv);
		return GB_ENOMEM;
	}
	/* The helper must never take the process's signals (the worker
	** handles them in its event loop): block them all while creating it,
	** so it inherits the full mask. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	g->running = 1;
	rc = pthread_create(&g->thread, NULL, guard_main, g);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		g->running = 0;
		pthread_mutex_destroy(&g->mu);
		pthread_cond_destroy(&g->cv);
		return GB_ENOMEM;
	}
	return GB_OK;
}

void amq_guard_stop(struct amq_guard *g)
{
	if (!g->running)
		return;
	pthread_mutex_lock(&g->mu);
	g->stop = 1;
	pthread_cond_signal(&g->cv);
	pthread_mutex_unlock(&g->mu);
	pthread_join(g->thread, NULL);
	pthread_mutex_destroy(&g->mu);
	pthread_cond_destroy(&g->cv);
	g->running = 0;
}

void amq_guard_arm(struct amq_guard *g, int fd, int seconds)
{
	if (!g->running || fd < 0)
		return;
	struct timespec d;
	clock_gettime(CLOCK_MONOTONIC, &d);
	d.tv_sec += seconds;
	pthread_mutex_lock(&g->mu);
	g->fd = fd;
	g->deadline = d;
	g->armed = 1;
	g->fired = 0;
	if (g->idle || ts_before(&d, &g->wait_until))
		pthread_cond_signal(&g->cv);
	pthread_mutex_unlock(&g->mu);
}

int amq_guard_disarm(struct amq_guard *g)
{
	if (!g->running)
		return 0;
	pthread_mutex_lock(&g->mu);
	int fired = g->fired;
	g->armed = 0;
	g->fired = 0;
	g->fd = -1;
	pthread_mutex_unlock(&g->mu);
	return fired;
}

int amq_publish_guarded(amqp_connection_state_t conn, amqp_channel_t ch,
			struct amq_guard *g, int fd, const char *exchange,
			const char *rkey, const struct amq_props *props,
			const void *body, size_t len, int *status, int *fired)
{
	static const struct amq_props none;
	amqp_basic_properties_t bp;
	amqp_table_entry_t ents[AMQ_MAX_HEADERS];
	int rc = amq_props_export(props ? props : &none, (long long)time(NULL),
				  &bp, ents, AMQ_MAX_HEADERS);
	if (rc != GB_OK)
		return rc;
	amq_guard_arm(g, fd, AMQ_IO_LIMIT_S);
	int st = amqp_basic_publish(conn, ch, amqp_cstring_bytes(exchange),
				    amqp_cstring_bytes(rkey), 1, 0, &bp,
				    (amqp_bytes_t){len, (void *)body});
	int cut = amq_guard_disarm(g);
	if (status)
		*status = st;
	if (fired)
		*fired = cut;
	return st == AMQP_STATUS_OK ? GB_OK : GB_EAMQP;
}

/* ---- connecting ----------------------------------------------------------- */

static amqp_table_entry_t bool_entry(const char *key)
{
	amqp_table_entry_t e;
	memset(&e, 0, sizeof(e));
	e.key = cbytes(key);
	e.value.kind = AMQP_FIELD_KIND_BOOLEAN;
	e.value.value.boolean = 1;
	return e;
}

static amqp_table_entry_t str_entry(const char *key, const char *val)
{
	amqp_table_entry_t e;
	memset(&e, 0, sizeof(e));
	e.key = cbytes(key);
	e.value.kind = AMQP_FIELD_KIND_UTF8;
	e.value.value.bytes = cbytes(val);
	return e;
}

#ifndef GB_VERSION
#define GB_VERSION "unknown"
#endif

/*
** The entry of [amqp] host that last worked, shared by every connection of
** the process (the worker's, the CLI's, a test driver's). It lives here
** rather than in the caller because amq_connect's callers include code
** outside this module that only ever passes a config; and one value per
** process is what the rule wants anyway: every connection of a worker
** sticks to the same node until that node fails. hl_try() reduces it
** modulo the list length, so a process that sees a shorter list (another
** config) can never index past its end.
*/
static atomic_size_t amq_host_cur;

/*
** OpenSSL's reason for the last TLS failure on this thread ("wrong version
** number", "no such file"), or NULL. rabbitmq-c 0.11 only says "SSL
** connection failed", but the reason stays on OpenSSL's (thread-local)
** error queue.
*/
static const char *tls_reason(void)
{
	unsigned long e = ERR_peek_last_error();
	return e ? ERR_reason_error_string(e) : NULL;
}

/* Forget older failures, so tls_reason() reports the next one only. */
static void tls_clear(void)
{
	ERR_clear_error();
}

/* Is `host` an IPv4 or IPv6 address (not a name)? */
static int is_ip_literal(const struct hl_entry *e)
{
	unsigned char buf[sizeof(struct in6_addr)];
	return e->ipv6 || inet_pton(AF_INET, e->host, buf) == 1 ||
	       inet_pton(AF_INET6, e->host, buf) == 1;
}

/*
** With verification on, make the TLS socket check that the certificate is
** the one of entry `e`. rabbitmq-c 0.11 matches the host against the DNS
** names of the certificate only (and its common name), so an address such
** as 127.0.0.1 never matches, not even an IP subjectAltName of 127.0.0.1.
** For an address, its own check is turned off and OpenSSL is told the
** address instead: the chain verification then also requires an IP
** subjectAltName equal to it (RFC 6125), and a mismatch fails like a bad
** chain. Names keep rabbitmq-c's check.
*/
static int tls_expect_host(const struct gb_config *cfg, amqp_socket_t *sock,
			   const struct hl_entry *e, char *err, size_t errlen)
{
	if (!cfg->amqp_tls || !cfg->amqp_tls_verify || !is_ip_literal(e))
		return GB_OK;
	SSL_CTX *ctx = amqp_ssl_socket_get_context(sock);
	X509_VERIFY_PARAM *param = ctx ? SSL_CTX_get0_param(ctx) : NULL;
	if (param == NULL || X509_VERIFY_PARAM_set1_ip_asc(param, e->host) != 1) {
		snprintf(err, errlen,
			 "cannot check the broker's certificate for the address "
			 "%s; name the broker by a DNS name of its certificate",
			 e->host);
		return GB_EAMQP;
	}
	amqp_ssl_socket_set_verify_hostname(sock, 0);
	return GB_OK;
}

static int is_tls_status(int st)
{
	return st <= AMQP_STATUS_SSL_ERROR && st > _AMQP_STATUS_SSL_NEXT_VALUE;
}

/* The socket for one connection: plain TCP, or TLS set up from cfg. */
static int make_socket(const struct gb_config *cfg,
		       amqp_connection_state_t conn, amqp_socket_t **out,
		       char *err, size_t errlen)
{
	*out = NULL;
	if (!cfg->amqp_tls) {
		*out = amqp_tcp_socket_new(conn);
		if (*out == NULL) {
			snprintf(err, errlen, "out of memory");
			return GB_ENOMEM;
		}
		return GB_OK;
	}
	tls_clear();
	amqp_socket_t *sock = amqp_ssl_socket_new(conn);
	if (sock == NULL) {
		const char *r = tls_reason();
		snprintf(err, errlen, "cannot set up TLS: %s",
			 r ? r : "out of memory");
		return GB_EAMQP;
	}
	/* Both checks or neither: a verified chain that may name any host
	** would accept every certificate the CA ever signed. */
	amqp_ssl_socket_set_verify_peer(sock, cfg->amqp_tls_verify != 0);
	amqp_ssl_socket_set_verify_hostname(sock, cfg->amqp_tls_verify != 0);
	/* TLS 1.0 and 1.1 are deprecated (RFC 8996). */
	if (amqp_ssl_socket_set_ssl_versions(sock, AMQP_TLSv1_2,
					     AMQP_TLSvLATEST) != AMQP_STATUS_OK) {
		snprintf(err, errlen, "cannot require TLS 1.2 or later");
		return GB_EAMQP;
	}
	if (cfg->amqp_tls_ca_file[0] &&
	    amqp_ssl_socket_set_cacert(sock, cfg->amqp_tls_ca_file) !=
		    AMQP_STATUS_OK) {
		const char *r = tls_reason();
		snprintf(err, errlen, "TLS CA file %.200s: cannot load it: %s",
			 cfg->amqp_tls_ca_file, r ? r : "not a PEM file?");
		return GB_EAMQP;
	}
	/* cfg_load resolved a cred:NAME key; a hand-made config names the
	** file itself. */
	const char *key = cfg->amqp_tls_key[0] ? cfg->amqp_tls_key
					       : cfg->amqp_tls_key_file;
	if (cfg->amqp_tls_cert_file[0] &&
	    amqp_ssl_socket_set_key(sock, cfg->amqp_tls_cert_file, key) !=
		    AMQP_STATUS_OK) {
		const char *r = tls_reason();
		snprintf(err, errlen,
			 "TLS client certificate %.200s with key %.200s: cannot "
			 "load them: %s",
			 cfg->amqp_tls_cert_file, key,
			 r ? r : "not PEM files, or the key does not match");
		return GB_EAMQP;
	}
	*out = sock;
	return GB_OK;
}

/* One connection to entry `e` (`at` is its "host:port"); see amq_connect. */
static int connect_entry(const struct gb_config *cfg, int heartbeat,
			 const char *connection_name, const struct hl_entry *e,
			 const char *at, amqp_connection_state_t *out,
			 char *err, size_t errlen)
{
	*out = NULL;
	amqp_connection_state_t conn = amqp_new_connection();
	if (conn == NULL) {
		snprintf(err, errlen, "out of memory");
		return GB_ENOMEM;
	}
	amqp_socket_t *sock = NULL;
	int rc = make_socket(cfg, conn, &sock, err, errlen);
	if (rc != GB_OK) {
		amqp_destroy_connection(conn);
		return rc;
	}
	rc = tls_expect_host(cfg, sock, e, err, errlen);
	if (rc != GB_OK) {
		amqp_destroy_connection(conn);
		return rc;
	}
	struct timeval connect_tv = {5, 0};
	int st = amqp_socket_open_noblock(sock, e->host, e->port, &connect_tv);
	if (st == AMQP_STATUS_SSL_PEER_VERIFY_FAILED) {
		/* rabbitmq-c checks the chain after the handshake and keeps
		** OpenSSL's verdict to itself; say what was checked. */
		if (is_ip_literal(e))
			snprintf(err, errlen,
				 "TLS handshake with %s failed: certificate "
				 "verify failed (not signed by a CA of %.200s, "
				 "expired, or not issued for IP address %s)",
				 at, cfg->amqp_tls_ca_file, e->host);
		else
			snprintf(err, errlen,
				 "TLS handshake with %s failed: certificate "
				 "verify failed (not signed by a CA of %.200s, "
				 "or expired)",
				 at, cfg->amqp_tls_ca_file);
	} else if (st == AMQP_STATUS_SSL_HOSTNAME_VERIFY_FAILED) {
		snprintf(err, errlen,
			 "TLS handshake with %s failed: certificate verify "
			 "failed (the certificate does not name %s)",
			 at, e->host);
	} else if (is_tls_status(st)) {
		const char *r = tls_reason();
		snprintf(err, errlen, "TLS handshake with %s failed: %s", at,
			 r ? r : amqp_error_string2(st));
	} else if (st != AMQP_STATUS_OK) {
		snprintf(err, errlen, "connect to %s: %s", at,
			 amqp_error_string2(st));
	}
	if (st != AMQP_STATUS_OK) {
		amqp_destroy_connection(conn);
		return GB_EAMQP;
	}
	/* Bound the handshake and every RPC (declare, consume, cancel): a
	** broker that accepts the connection but never answers (a stopped
	** process still completes TCP handshakes from its backlog) must not
	** hold the caller, and the worker's event loop, for long. */
	struct timeval hs_tv = {5, 0}, rpc_tv = {10, 0};
	amqp_set_handshake_timeout(conn, &hs_tv);
	amqp_set_rpc_timeout(conn, &rpc_tv);

	/* Without these capabilities RabbitMQ would neither tell us it blocks
	** publishers nor that it cancelled a consumer (queue deleted). */
	amqp_table_entry_t caps[] = {
		bool_entry("connection.blocked"),
		bool_entry("consumer_cancel_notify"),
		bool_entry("publisher_confirms"),
		bool_entry("basic.nack"),
		bool_entry("authentication_failure_close"),
	};
	amqp_table_entry_t props[4] = {
		str_entry("product", "gridbroker"),
		str_entry("version", GB_VERSION),
		str_entry("connection_name", connection_name),
	};
	memset(&props[3], 0, sizeof(props[3]));
	props[3].key = cbytes("capabilities");
	props[3].value.kind = AMQP_FIELD_KIND_TABLE;
	props[3].value.value.table.num_entries =
		(int)(sizeof(caps) / sizeof(caps[0]));
	props[3].value.value.table.entries = caps;
	amqp_table_t ptable = {(int)(sizeof(props) / sizeof(props[0])), props};

	amqp_rpc_reply_t r = amqp_login_with_properties(
		conn, cfg->amqp_vhost, 8, AMQ_FRAME_MAX, heartbeat, &ptable,
		AMQP_SASL_METHOD_PLAIN, cfg->amqp_user, cfg->amqp_password);
	if (r.reply_type != AMQP_RESPONSE_NORMAL) {
		char why[300];
		amq_reply_text(r, why, sizeof(why));
		snprintf(err, errlen, "log in to %s vhost %.100s as %.100s: %s", at,
			 cfg->amqp_vhost, cfg->amqp_user, why);
		amqp_destroy_connection(conn);
		return GB_EAMQP;
	}
	*out = conn;
	return GB_OK;
}

int amq_connect(const struct gb_config *cfg, int heartbeat,
		const char *connection_name, amqp_connection_state_t *out,
		char *err, size_t errlen)
{
	*out = NULL;
	if (errlen)
		err[0] = '\0';
	struct hl_list hosts;
	char why[512];
	/* cfg_load checked the list; a config built by hand may not be. */
	if (hl_parse(cfg->amqp_host, cfg->amqp_port, &hosts, why,
		     sizeof(why)) != GB_OK) {
		snprintf(err, errlen, "amqp.host: %s", why);
		return GB_ECONFIG;
	}
	size_t cur = atomic_load(&amq_host_cur);
	size_t used = 0;
	for (size_t k = 0; k < hosts.n; k++) {
		size_t i = hl_try(hosts.n, cur, k);
		char at[HL_TEXT_MAX], one[1024];
		hl_format(&hosts.e[i], at, sizeof(at));
		int rc = connect_entry(cfg, heartbeat, connection_name,
				       &hosts.e[i], at, out, one, sizeof(one));
		if (rc == GB_OK) {
			atomic_store(&amq_host_cur, i);
			/* The caller's own log line names the configured
			** list; this one names the node, and what failed on
			** the way to it. */
			if (k > 0)
				log_warn("AMQP: connected to %s (entry %zu of "
					 "%zu) after: %s",
					 at, i + 1, hosts.n, err);
			else if (hosts.n > 1)
				log_info("AMQP: connected to %s (entry %zu of "
					 "%zu)",
					 at, i + 1, hosts.n);
			if (errlen)
				err[0] = '\0';
			return GB_OK;
		}
		if (rc == GB_ENOMEM) {
			snprintf(err, errlen, "%s", one);
			return rc;
		}
		/* Every entry's reason, in the order tried. */
		if (used + 1 < errlen) {
			int n = snprintf(err + used, errlen - used, "%s%s",
					 used ? "; " : "", one);
			if (n > 0)
				used += (size_t)n < errlen - used
						? (size_t)n
						: errlen - used - 1;
		}
	}
	return GB_EAMQP;
}

int amq_rpc_check(amqp_connection_state_t conn, amqp_channel_t ch,
		  const char *what, char *err, size_t errlen, int *code)
{
	return amq_reply_check(conn, ch, amqp_get_rpc_reply(conn), what, err,
			       errlen, code);
}

int amq_reply_check(amqp_connection_state_t conn, amqp_channel_t ch,
		    amqp_rpc_reply_t r, const char *what, char *err,
		    size_t errlen, int *code)
{
	if (code)
		*code = 0;
	if (r.reply_type == AMQP_RESPONSE_NORMAL)
		return GB_OK;
	char why[400];
	amq_reply_text(r, why, sizeof(why));
	snprintf(err, errlen, "%s: %s", what, why);
	if (r.reply_type != AMQP_RESPONSE_SERVER_EXCEPTION)
		return GB_EAMQPGONE;
	if (r.reply.id == AMQP_CHANNEL_CLOSE_METHOD && r.reply.decoded) {
		const amqp_channel_close_t *m = r.reply.decoded;
		if (code)
			*code = m->reply_code;
		amqp_channel_close_ok_t ok = {0};
		if (amqp_send_method(conn, ch, AMQP_CHANNEL_CLOSE_OK_METHOD,
				     &ok) != AMQP_STATUS_OK)
			return GB_EAMQPGONE;
		return GB_EAMQP;
	}
	if (r.reply.id == AMQP_CONNECTION_CLOSE_METHOD && r.reply.decoded) {
		const amqp_connection_close_t *m = r.reply.decoded;
		if (code)
			*code = m->reply_code;
		amqp_connection_close_ok_t ok = {0};
		amqp_send_method(conn, 0, AMQP_CONNECTION_CLOSE_OK_METHOD, &ok);
	}
	return GB_EAMQPGONE;
}

int amq_channel_setup(amqp_connection_state_t conn, amqp_channel_t ch,
		      int confirm, char *err, size_t errlen)
{
	char what[64];
	amqp_channel_open(conn, ch);
	snprintf(what, sizeof(what), "open channel %u", (unsigned)ch);
	int rc = amq_rpc_check(conn, ch, what, err, errlen, NULL);
	if (rc != GB_OK || !confirm)
		return rc;
	amqp_confirm_select(conn, ch);
	snprintf(what, sizeof(what), "confirm.select on channel %u",
		 (unsigned)ch);
	return amq_rpc_check(conn, ch, what, err, errlen, NULL);
}

/* ---- topology ------------------------------------------------------------- */

static int declare_exchange(amqp_connection_state_t conn, amqp_channel_t ch,
			    const char *name, char *err, size_t errlen)
{
	char what[128];
	snprintf(what, sizeof(what), "declare exchange %s", name);
	amqp_exchange_declare(conn, ch, cbytes(name), cbytes("topic"), 0, 1, 0,
			      0, amqp_empty_table);
	return amq_rpc_check(conn, ch, what, err, errlen, NULL);
}

static int declare_queue(amqp_connection_state_t conn, amqp_channel_t ch,
			 const char *name, amqp_table_t args, char *err,
			 size_t errlen)
{
	char what[AMQ_NAME_MAX + 32];
	snprintf(what, sizeof(what), "declare queue %s", name);
	amqp_queue_declare(conn, ch, cbytes(name), 0, 1, 0, 0, args);
	int code = 0;
	int rc = amq_rpc_check(conn, ch, what, err, errlen, &code);
	if (rc == GB_OK || code != AMQP_PRECONDITION_FAILED)
		return rc;
	/* Redeclaring with other arguments never succeeds, so retrying is
	** pointless: say which queue and which argument, and let an operator
	** delete the queue or change the configuration. The reply is still
	** the library's most recent one. */
	char why[300], arg[64];
	amq_reply_text(amqp_get_rpc_reply(conn), why, sizeof(why));
	if (amq_mismatch_arg(why, arg, sizeof(arg)))
		snprintf(err, errlen,
			 "queue %s exists with a different %s than this "
			 "worker declares (another configuration, or an "
			 "earlier gridbroker version); drain and delete the "
			 "queue, or change amqp.queue_type / "
			 "amqp.delivery_limit (%s)",
			 name, arg, why);
	else
		snprintf(err, errlen,
			 "queue %s exists with other arguments than configured "
			 "(%s)", name, why);
	return GB_ECONFIG;
}

static int bind_queue(amqp_connection_state_t conn, amqp_channel_t ch,
		      const char *queue, const char *exchange, const char *key,
		      char *err, size_t errlen)
{
	char what[AMQ_NAME_MAX * 2 + 64];
	snprintf(what, sizeof(what), "bind queue %s to %s with %s", queue,
		 exchange, key);
	amqp_queue_bind(conn, ch, cbytes(queue), cbytes(exchange), cbytes(key),
			amqp_empty_table);
	return amq_rpc_check(conn, ch, what, err, errlen, NULL);
}

int amq_declare_topology(amqp_connection_state_t conn, amqp_channel_t ch,
			 const struct gb_config *cfg, char *err,
			 size_t errlen)
{
	static const char *const exchanges[] = {AMQ_EX_REQUESTS, AMQ_EX_EVENTS,
						AMQ_EX_DLX};
	for (size_t i = 0; i < sizeof(exchanges) / sizeof(exchanges[0]); i++) {
		int rc = declare_exchange(conn, ch, exchanges[i], err, errlen);
		if (rc != GB_OK)
			return rc;
	}
	int quorum = strcmp(cfg->amqp_queue_type, "quorum") == 0;
	amqp_table_entry_t args[5];
	memset(args, 0, sizeof(args));
	args[0] = str_entry("x-queue-type", cfg->amqp_queue_type);
	args[1] = str_entry("x-dead-letter-exchange", AMQ_EX_DLX);
	args[2].key = cbytes("x-delivery-limit");
	args[2].value.kind = AMQP_FIELD_KIND_I64;
	args[2].value.value.i64 = cfg->amqp_delivery_limit;
	/* At-least-once dead-lettering (amqp.h): the quorum queue keeps a
	** dead-lettered message until gridbroker.dead has confirmed it. */
	args[3] = str_entry("x-dead-letter-strategy", "at-least-once");
	args[4] = str_entry("x-overflow", "reject-publish");

	/* The dead-letter queue keeps the type but has no dead-lettering of
	** its own: a message that ends there stays until someone looks. */
	amqp_table_t dead_args = {1, args};
	int rc = declare_queue(conn, ch, AMQ_Q_DEAD, dead_args, err, errlen);
	if (rc == GB_OK)
		rc = bind_queue(conn, ch, AMQ_Q_DEAD, AMQ_EX_DLX, "#", err,
				errlen);
	amqp_table_t req_args = {quorum ? 5 : 2, args};
	for (size_t i = 0; rc == GB_OK && amq_request_types[i]; i++) {
		char q[AMQ_NAME_MAX];
		if (amq_queue_name(amq_request_types[i], q, sizeof(q)) != GB_OK) {
			snprintf(err, errlen, "request type %s: name too long",
				 amq_request_types[i]);
			return GB_ERANGE;
		}
		rc = declare_queue(conn, ch, q, req_args, err, errlen);
		if (rc == GB_OK)
			rc = bind_queue(conn, ch, q, AMQ_EX_REQUESTS,
					amq_request_types[i], err, errlen);
	}
	return rc;
}
