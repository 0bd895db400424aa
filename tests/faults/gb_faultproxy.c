/*
** gb_faultproxy.c — the fault suite's network: TCP links between the
** workers and their servers that can be silenced, slowed or cut on command,
** as a grid site's network does it, without touching a process.
**
**   gb_faultproxy --control PORT --link NAME=LISTEN_PORT:HOST:PORT ...
**                 [--seed N]
**
** Every link listens on 127.0.0.1:LISTEN_PORT and forwards each accepted
** connection to HOST:PORT. The control port takes one command a line and
** answers one line ("ok ..." or "error ..."):
**
**   LINK pass              forward as is (the start state)
**   LINK blackhole         deliver nothing, either way, and close
**                          nothing: a link that went silent (packets lost
**                          on the way); only a peer's own timeout or
**                          heartbeat can find it. What was sent meanwhile
**                          (data, an end of stream) is held and delivered
**                          when the link comes back, as TCP's
**                          retransmissions would: a stream is late, never
**                          corrupted
**   LINK delay MIN MAX     hold each chunk MIN..MAX ms (uniform, per chunk,
**                          order kept), both ways: latency with jitter
**   LINK cut-mid BYTES     pass, and reset both sides of a connection in
**                          the middle of the first burst (bytes arriving
**                          with gaps under 50 ms) that passes BYTES one
**                          way: a link cut while a large message crosses
**                          it; half of the chunk that crossed is sent
**   LINK reset             reset every connection of the link now
**   LINK status            mode, connections, bytes each way, cuts
**   all COMMAND ...        the same command on every link
**
** LINK is a name given with --link. Connections accepted later get the
** link's state at that time. Resets are abortive (SO_LINGER 0: the peer
** reads ECONNRESET, as from a router that dropped the flow), never a clean
** close, because a clean close is what the suite's process faults already
** produce.
**
** Why a proxy of our own: the machine running the suite has no root for
** tc/netem or network namespaces, and a proxy needs none; the links cover
** the workers' connections only, which are what the invariants judge.
*/
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/util.h>

#define FP_MAX_LINKS 32
#define FP_BURST_GAP_MS 50.0
/* Bytes a side may have queued towards a slow peer before reading from the
** other side stops (back-pressure, as a TCP window would give). */
#define FP_HIGH_WATER (4u << 20)

enum fp_mode { FP_PASS, FP_BLACKHOLE, FP_DELAY, FP_CUT_MID };
static const char *const fp_mode_name[] = {"pass", "blackhole", "delay",
					   "cut-mid"};

struct fp_conn;

struct fp_link {
	char name[64];
	int listen_port;
	char host[128];
	int port;
	struct evconnlistener *lis;
	enum fp_mode mode;
	int dmin, dmax;    /* delay, ms */
	size_t cut_bytes;  /* cut-mid threshold */
	struct fp_conn *conns;
	unsigned long long bytes[2]; /* 0: to the server, 1: to the client */
	unsigned long cuts, accepted;
};

/* A chunk held by the delay mode. */
struct fp_chunk {
	struct fp_chunk *next;
	double due_ms;
	struct evbuffer *data;
};

/* One direction of a connection: from `src` to `dst`. */
struct fp_dir {
	struct fp_conn *c;
	int idx;                 /* 0: client -> server, 1: server -> client */
	struct bufferevent *src, *dst;
	struct fp_chunk *head, *tail;
	struct event *timer;     /* the head chunk's due time */
	double last_ms;          /* last read, for bursts */
	size_t burst;            /* bytes of the current burst */
	double last_due_ms;      /* order kept under jitter */
};

struct fp_conn {
	struct fp_link *l;
	struct fp_conn *next, **pprev;
	struct bufferevent *cli, *srv;
	int srv_up;
	struct fp_dir dir[2];
};

static struct event_base *base;
static struct fp_link links[FP_MAX_LINKS];
static int nlinks;
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng_next(void)
{
	/* xorshift64*: reproducible jitter from --seed */
	uint64_t x = rng_state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * 0x2545f4914f6cdd1dull;
}

static double now_ms(void)
{
	struct timeval tv;
	event_base_gettimeofday_cached(base, &tv);
	return tv.tv_sec * 1e3 + tv.tv_usec / 1e3;
}

static void chunks_free(struct fp_dir *d)
{
	while (d->head) {
		struct fp_chunk *k = d->head;
		d->head = k->next;
		evbuffer_free(k->data);
		free(k);
	}
	d->tail = NULL;
}

/* Abortive close: the peer sees a reset, not an orderly end of stream. */
static void abort_bev(struct bufferevent *b)
{
	if (b == NULL)
		return;
	evutil_socket_t fd = bufferevent_getfd(b);
	if (fd >= 0) {
		struct linger lg = {1, 0};
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	}
	bufferevent_free(b); /* BEV_OPT_CLOSE_ON_FREE closes fd */
}

static void conn_free(struct fp_conn *c, int abortive)
{
	for (int i = 0; i < 2; i++) {
		chunks_free(&c->dir[i]);
		if (c->dir[i].timer)
			event_free(c->dir[i].timer);
	}
	if (abortive) {
		abort_bev(c->cli);
		abort_bev(c->srv);
	} else {
		if (c->cli)
			bufferevent_free(c->cli);
		if (c->srv)
			bufferevent_free(c->srv);
	}
	*c->pprev = c->next;
	if (c->next)
		c->next->pprev = c->pprev;
	free(c);
}

/* Stop reading from a side whose peer has too much queued. */
static void flow_check(struct fp_dir *d)
{
	size_t queued = evbuffer_get_length(bufferevent_get_output(d->dst));
	if (queued > FP_HIGH_WATER)
		bufferevent_disable(d->src, EV_READ);
}

static void deliver(struct fp_dir *d, struct evbuffer *data)
{
	d->c->l->bytes[d->idx] += evbuffer_get_length(data);
	bufferevent_write_buffer(d->dst, data);
	flow_check(d);
}

static void timer_arm(struct fp_dir *d)
{
	if (d->head == NULL)
		return;
	double wait = d->head->due_ms - now_ms();
	if (wait < 0)
		wait = 0;
	struct timeval tv = {(time_t)(wait / 1e3),
			     (suseconds_t)((long)wait % 1000) * 1000};
	evtimer_add(d->timer, &tv);
}

static void on_due(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fp_dir *d = arg;
	event_base_update_cache_time(base);
	double t = now_ms();
	while (d->head && d->head->due_ms <= t + 0.5) {
		/* Silenced while chunks were held: they stay at the head, in
		** order, and the timer is re-armed when the link is back
		** (taking one off first would drop its bytes from the
		** stream, and leak it). */
		if (d->c->l->mode == FP_BLACKHOLE)
			return;
		struct fp_chunk *k = d->head;
		d->head = k->next;
		if (d->head == NULL)
			d->tail = NULL;
		deliver(d, k->data);
		evbuffer_free(k->data);
		free(k);
	}
	timer_arm(d);
}

/* Queue everything in `in` to be delivered at `due` (never before the
** chunk ahead of it: jitter does not reorder). */
static int hold(struct fp_dir *d, struct evbuffer *in, double due)
{
	struct fp_chunk *k = calloc(1, sizeof(*k));
	if (k == NULL || (k->data = evbuffer_new()) == NULL) {
		free(k);
		return -1;
	}
	evbuffer_add_buffer(k->data, in);
	if (due < d->last_due_ms)
		due = d->last_due_ms;
	d->last_due_ms = due;
	k->due_ms = due;
	if (d->tail)
		d->tail->next = k;
	else
		d->head = k;
	d->tail = k;
	if (d->head == k)
		timer_arm(d);
	return 0;
}

static void on_read(struct bufferevent *b, void *arg)
{
	struct fp_dir *d = arg;
	struct fp_conn *c = d->c;
	struct fp_link *l = c->l;
	struct evbuffer *in = bufferevent_get_input(b);
	size_t n = evbuffer_get_length(in);
	double t = now_ms();
	if (t - d->last_ms > FP_BURST_GAP_MS)
		d->burst = 0;
	d->last_ms = t;
	if (l->mode == FP_BLACKHOLE) {
		/* leave it where it is; reading stops (link_silence) */
		bufferevent_disable(b, EV_READ);
		return;
	}
	if (l->mode == FP_DELAY || d->head) {
		/* Delayed; or, after a delay ended, behind what is still
		** held, so that the stream is never reordered. */
		double due = t;
		if (l->mode == FP_DELAY)
			due += l->dmin +
			       (l->dmax > l->dmin
					? (double)(rng_next() %
						   (uint64_t)(l->dmax - l->dmin +
							      1))
					: 0.0);
		if (hold(d, in, due) != 0)
			conn_free(c, 1);
		return;
	}
	switch (l->mode) {
	case FP_BLACKHOLE:
	case FP_DELAY:
		return; /* handled above */
	case FP_CUT_MID:
		if (d->burst + n > l->cut_bytes) {
			/* Cross the threshold with half the chunk, then the
			** link is cut under the message. */
			size_t half = n / 2 ? n / 2 : 1;
			struct evbuffer *part = evbuffer_new();
			if (part) {
				evbuffer_remove_buffer(in, part, half);
				d->c->l->bytes[d->idx] += half;
				bufferevent_write_buffer(d->dst, part);
				evbuffer_free(part);
			}
			/* Flush what is queued, best effort, then reset. */
			struct evbuffer *out = bufferevent_get_output(d->dst);
			evbuffer_write(out, bufferevent_getfd(d->dst));
			l->cuts++;
			l->mode = FP_PASS; /* one cut per command */
			conn_free(c, 1);
			return;
		}
		d->burst += n;
		deliver(d, in);
		return;
	case FP_PASS:
		d->burst += n;
		deliver(d, in);
		return;
	}
}

/* b (the side dir `arg` reads from) drained what was written to it: the
** other direction, which writes to b, may read again. */
static void on_write(struct bufferevent *b, void *arg)
{
	struct fp_dir *self = arg;
	struct fp_dir *d = &self->c->dir[1 - self->idx];
	(void)b;
	if (self->c->l->mode != FP_BLACKHOLE &&
	    evbuffer_get_length(bufferevent_get_output(d->dst)) <=
		    FP_HIGH_WATER / 2)
		bufferevent_enable(d->src, EV_READ);
}

static void on_event(struct bufferevent *b, short what, void *arg)
{
	struct fp_dir *self = arg;
	struct fp_conn *c = self->c;
	if (what & BEV_EVENT_CONNECTED) {
		c->srv_up = 1;
		bufferevent_enable(c->srv, EV_WRITE);
		bufferevent_enable(c->cli, EV_WRITE);
		if (c->l->mode != FP_BLACKHOLE) {
			bufferevent_enable(c->srv, EV_READ);
			bufferevent_enable(c->cli, EV_READ);
		}
		return;
	}
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
		/* One side ended: pass what is already queued to the other
		** (best effort) and end that side the same way. */
		struct bufferevent *other = b == c->cli ? c->srv : c->cli;
		if ((what & BEV_EVENT_EOF) && c->srv_up) {
			evbuffer_write(bufferevent_get_output(other),
				       bufferevent_getfd(other));
			conn_free(c, 0);
		} else {
			conn_free(c, 1);
		}
	}
}

static void on_accept(struct evconnlistener *lis, evutil_socket_t fd,
		      struct sockaddr *sa, int salen, void *arg)
{
	(void)lis;
	(void)sa;
	(void)salen;
	struct fp_link *l = arg;
	struct fp_conn *c = calloc(1, sizeof(*c));
	if (c == NULL) {
		evutil_closesocket(fd);
		return;
	}
	c->l = l;
	c->next = l->conns;
	if (l->conns)
		l->conns->pprev = &c->next;
	c->pprev = &l->conns;
	l->conns = c;
	l->accepted++;
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->cli = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
	c->srv = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (c->cli == NULL || c->srv == NULL) {
		conn_free(c, 1);
		return;
	}
	for (int i = 0; i < 2; i++) {
		struct fp_dir *d = &c->dir[i];
		d->c = c;
		d->idx = i;
		d->src = i == 0 ? c->cli : c->srv;
		d->dst = i == 0 ? c->srv : c->cli;
		d->timer = evtimer_new(base, on_due, d);
		if (d->timer == NULL) {
			conn_free(c, 1);
			return;
		}
	}
	/* Each side's callbacks get the direction that reads from it. The
	** client side waits (no reads) until the server side is connected. */
	bufferevent_setcb(c->cli, on_read, on_write, on_event, &c->dir[0]);
	bufferevent_setcb(c->srv, on_read, on_write, on_event, &c->dir[1]);
	bufferevent_disable(c->cli, EV_READ);
	struct sockaddr_in to = {0};
	to.sin_family = AF_INET;
	to.sin_port = htons((uint16_t)l->port);
	if (inet_pton(AF_INET, l->host, &to.sin_addr) != 1 ||
	    bufferevent_socket_connect(c->srv, (struct sockaddr *)&to,
				       sizeof(to)) != 0) {
		conn_free(c, 1);
		return;
	}
	evutil_socket_t sfd = bufferevent_getfd(c->srv);
	if (sfd >= 0)
		setsockopt(sfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* ---- control ---------------------------------------------------------- */

/* Into blackhole: nothing is read any more (what arrives stays in the
** kernel's buffers, and the senders' fill up as on a dead link). */
static void link_silence(struct fp_link *l)
{
	for (struct fp_conn *c = l->conns; c; c = c->next) {
		bufferevent_disable(c->cli, EV_READ);
		bufferevent_disable(c->srv, EV_READ);
	}
}

/* Out of blackhole: read again, pass on what was already read, deliver
** the held delayed chunks that fell due. */
static void link_revive(struct fp_link *l)
{
	struct fp_conn *next;
	for (struct fp_conn *c = l->conns; c; c = next) {
		next = c->next;
		if (!c->srv_up)
			continue;
		for (int i = 0; i < 2; i++)
			timer_arm(&c->dir[i]);
		bufferevent_enable(c->cli, EV_READ);
		bufferevent_enable(c->srv, EV_READ);
	}
	/* data read before the silence began is still in the input
	** buffers: no new read would call on_read for it */
	for (struct fp_conn *c = l->conns; c; c = next) {
		next = c->next;
		for (int i = 0; i < 2 && c; i++) {
			struct bufferevent *src = c->dir[i].src;
			if (c->srv_up &&
			    evbuffer_get_length(bufferevent_get_input(src))) {
				struct fp_conn *self = c;
				on_read(src, &c->dir[i]);
				/* on_read may have freed c (cut-mid) */
				int alive = 0;
				for (struct fp_conn *x = l->conns; x; x = x->next)
					alive |= x == self;
				if (!alive)
					c = NULL;
			}
		}
	}
}

static void link_reset(struct fp_link *l)
{
	while (l->conns) {
		l->cuts++;
		conn_free(l->conns, 1);
	}
}

static void link_status(const struct fp_link *l, char *out, size_t n)
{
	size_t nc = 0;
	for (const struct fp_conn *c = l->conns; c; c = c->next)
		nc++;
	snprintf(out, n,
		 "%.63s %s connections=%zu accepted=%lu to_server=%llu "
		 "to_client=%llu cuts=%lu",
		 l->name, fp_mode_name[l->mode], nc, l->accepted, l->bytes[0],
		 l->bytes[1], l->cuts);
}

/* Apply one command (argv[0] the verb) to one link; "" or an error text. */
static const char *link_apply(struct fp_link *l, int argc, char **argv,
			      char *out, size_t n)
{
	const char *v = argv[0];
	enum fp_mode was = l->mode;
	out[0] = '\0';
	if (strcmp(v, "pass") == 0 && argc == 1) {
		l->mode = FP_PASS;
	} else if (strcmp(v, "blackhole") == 0 && argc == 1) {
		l->mode = FP_BLACKHOLE;
		link_silence(l);
	} else if (strcmp(v, "delay") == 0 && argc == 3) {
		char *e1, *e2;
		long a = strtol(argv[1], &e1, 10), b = strtol(argv[2], &e2, 10);
		if (*e1 || *e2 || a < 0 || b < a || b > 600000)
			return "delay MIN MAX: milliseconds, 0 <= MIN <= MAX";
		l->dmin = (int)a;
		l->dmax = (int)b;
		l->mode = FP_DELAY;
	} else if (strcmp(v, "cut-mid") == 0 && argc == 2) {
		char *e;
		long long b = strtoll(argv[1], &e, 10);
		if (*e || b < 1)
			return "cut-mid BYTES: a positive byte count";
		l->cut_bytes = (size_t)b;
		l->mode = FP_CUT_MID;
		/* a burst under way counts from now */
		for (struct fp_conn *c = l->conns; c; c = c->next)
			c->dir[0].burst = c->dir[1].burst = 0;
	} else if (strcmp(v, "reset") == 0 && argc == 1) {
		link_reset(l);
	} else if (strcmp(v, "status") == 0 && argc == 1) {
		link_status(l, out, n);
	} else {
		return "unknown command (pass, blackhole, delay MIN MAX, "
		       "cut-mid BYTES, reset, status)";
	}
	if (was == FP_BLACKHOLE && l->mode != FP_BLACKHOLE)
		link_revive(l);
	return "";
}

static void on_control_read(struct bufferevent *b, void *arg)
{
	(void)arg;
	struct evbuffer *in = bufferevent_get_input(b);
	char *line;
	size_t len;
	while ((line = evbuffer_readln(in, &len, EVBUFFER_EOL_CRLF)) != NULL) {
		char *argv[8];
		int argc = 0;
		for (char *tok = strtok(line, " \t"); tok && argc < 8;
		     tok = strtok(NULL, " \t"))
			argv[argc++] = tok;
		char reply[4096] = "";
		const char *err = NULL;
		if (argc < 2) {
			err = "usage: LINK|all COMMAND [ARGS]";
		} else {
			int all = strcmp(argv[0], "all") == 0, hit = 0;
			size_t used = 0;
			for (int i = 0; i < nlinks && !err; i++) {
				if (!all && strcmp(argv[0], links[i].name))
					continue;
				hit = 1;
				char one[512];
				const char *e = link_apply(&links[i], argc - 1,
							   argv + 1, one,
							   sizeof(one));
				if (*e)
					err = e;
				else if (one[0] && used < sizeof(reply))
					used += (size_t)snprintf(
						reply + used,
						sizeof(reply) - used, "%s%s",
						used ? "; " : "", one);
			}
			if (!hit && !err)
				err = "no such link";
		}
		if (err)
			evbuffer_add_printf(bufferevent_get_output(b),
					    "error %s\n", err);
		else
			evbuffer_add_printf(bufferevent_get_output(b),
					    "ok%s%s\n", reply[0] ? " " : "",
					    reply);
		free(line);
	}
}

static void on_control_event(struct bufferevent *b, short what, void *arg)
{
	(void)arg;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		bufferevent_free(b);
}

static void on_control_accept(struct evconnlistener *lis, evutil_socket_t fd,
			      struct sockaddr *sa, int salen, void *arg)
{
	(void)lis;
	(void)sa;
	(void)salen;
	(void)arg;
	struct bufferevent *b =
		bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (b == NULL) {
		evutil_closesocket(fd);
		return;
	}
	bufferevent_setcb(b, on_control_read, NULL, on_control_event, NULL);
	bufferevent_enable(b, EV_READ | EV_WRITE);
}

static struct evconnlistener *listen_on(int port, evconnlistener_cb cb,
					void *arg)
{
	struct sockaddr_in sin = {0};
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return evconnlistener_new_bind(
		base, cb, arg, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 128,
		(struct sockaddr *)&sin, sizeof(sin));
}

/* NAME=LISTEN_PORT:HOST:PORT */
static int parse_link(const char *spec, struct fp_link *l)
{
	const char *eq = strchr(spec, '=');
	if (eq == NULL || eq == spec || (size_t)(eq - spec) >= sizeof(l->name))
		return -1;
	memcpy(l->name, spec, (size_t)(eq - spec));
	l->name[eq - spec] = '\0';
	if (strcmp(l->name, "all") == 0)
		return -1;
	char host[128];
	if (sscanf(eq + 1, "%d:%127[^:]:%d", &l->listen_port, host,
		   &l->port) != 3 ||
	    l->listen_port < 1 || l->listen_port > 65535 || l->port < 1 ||
	    l->port > 65535)
		return -1;
	snprintf(l->host, sizeof(l->host), "%s", host);
	return 0;
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)sig;
	(void)what;
	(void)arg;
	event_base_loopexit(base, NULL);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: gb_faultproxy --control PORT "
		   "--link NAME=LISTEN_PORT:HOST:PORT ... [--seed N]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"control", required_argument, NULL, 'c'},
		{"link", required_argument, NULL, 'l'},
		{"seed", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	int control = 0, o;
	while ((o = getopt_long(argc, argv, "c:l:s:h", opts, NULL)) != -1) {
		switch (o) {
		case 'c':
			control = atoi(optarg);
			break;
		case 'l':
			if (nlinks == FP_MAX_LINKS ||
			    parse_link(optarg, &links[nlinks]) != 0) {
				fprintf(stderr,
					"gb_faultproxy: bad --link '%s' "
					"(NAME=LISTEN_PORT:HOST:PORT, at most "
					"%d)\n",
					optarg, FP_MAX_LINKS);
				return 2;
			}
			nlinks++;
			break;
		case 's':
			rng_state = strtoull(optarg, NULL, 10) * 2654435761u + 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (control < 1 || control > 65535 || nlinks == 0 || optind != argc) {
		usage(stderr);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	base = event_base_new();
	if (base == NULL)
		return 1;
	for (int i = 0; i < nlinks; i++) {
		links[i].lis =
			listen_on(links[i].listen_port, on_accept, &links[i]);
		if (links[i].lis == NULL) {
			fprintf(stderr, "gb_faultproxy: cannot listen on %d: %s\n",
				links[i].listen_port, strerror(errno));
			return 1;
		}
	}
	struct evconnlistener *ctl = listen_on(control, on_control_accept, NULL);
	if (ctl == NULL) {
		fprintf(stderr, "gb_faultproxy: cannot listen on %d: %s\n",
			control, strerror(errno));
		return 1;
	}
	struct event *sigs[2] = {evsignal_new(base, SIGTERM, on_signal, NULL),
				 evsignal_new(base, SIGINT, on_signal, NULL)};
	for (int i = 0; i < 2; i++)
		if (sigs[i])
			event_add(sigs[i], NULL);
	printf("gb_faultproxy: %d link(s), control on 127.0.0.1:%d\n", nlinks,
	       control);
	fflush(stdout);
	event_base_dispatch(base);
	for (int i = 0; i < nlinks; i++) {
		while (links[i].conns)
			conn_free(links[i].conns, 0);
		evconnlistener_free(links[i].lis);
	}
	evconnlistener_free(ctl);
	for (int i = 0; i < 2; i++)
		if (sigs[i])
			event_free(sigs[i]);
	event_base_free(base);
	return 0;
}
