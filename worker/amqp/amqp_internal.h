/*
** amqp_internal.h — what amqp.c (event-loop client), amqp_sync.c (blocking
** client) and amqp_topology.c (what both share) say to each other.
**
** Not part of the module's interface for the rooms above: those three
** files, the unit test, and test programs that talk AMQP below the
** module's interface (the fault suite's recorder, the pilot driver of the
** match integration test and the cluster load) include it. The pure
** pieces (property and header table conversion,
** the confirm window, the backoff) take no connection so that
** tests/unit/amqp/test_amqp.c can check them without a broker.
*/
#ifndef GB_AMQP_INTERNAL_H
#define GB_AMQP_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/*
** rabbitmq-c 0.11 installs its header as <amqp.h>; ours is "amqp/amqp.h"
** (worker/ is on the include path, worker/amqp/ is not), so the two
** names cannot meet.
*/
#include <amqp.h>
#include <amqp_framing.h>
#include <amqp_tcp_socket.h>

#include "amqp/amqp.h"
#include "base/config.h"

/* The channel both clients use for topology, publishing and basic.get;
** the worker consumes on AMQ_CH_CONSUME and publishes on AMQ_CH_PUBLISH. */
#define AMQ_CH_CONSUME 1
#define AMQ_CH_PUBLISH 2

/* A frame is at most this big (our cap; the broker may lower it). It also
** bounds every header frame, hence every property table we decode. */
#define AMQ_FRAME_MAX 131072

/* Most headers we put on one outgoing message. */
#define AMQ_MAX_HEADERS 16

/* Longest queue name we build: "gridbroker." + a request type. */
#define AMQ_NAME_MAX 256

/* Seconds a single library call may block on the socket before the guard
** shuts the socket down; the connection sequence gets the longer bound. */
#define AMQ_IO_LIMIT_S 5
#define AMQ_SETUP_LIMIT_S 15

/* ---- pure helpers (amqp_topology.c) ------------------------------------ */

/*
** Reconnect delay in milliseconds after `attempt` consecutive failures
** (0 for the first retry): 500 ms doubled per attempt, capped at max_s
** seconds, then scaled by a jitter factor in [0.8, 1.2) taken from `rnd`
** (any 64-bit random value). Never returns less than 1.
*/
long amq_backoff_ms(unsigned attempt, int max_s, uint64_t rnd);

/* xorshift64* step: advance *state (which must not be 0) and return the
** next value. Used for the backoff jitter only. */
uint64_t amq_xorshift64(uint64_t *state);

/*
** The confirm window of a publishing channel. Delivery tags are assigned
** 1, 2, 3, ... per channel; the window remembers which of the tags in
** [low, next) the broker has already confirmed (confirms may arrive out of
** order and may cover many tags with `multiple`).
*/
struct amq_window {
	unsigned char *done; /* ring of cap flags, indexed by tag % cap */
	size_t cap;
	uint64_t low;        /* oldest tag not yet retired */
	uint64_t next;       /* tag of the next publish */
	size_t pending;      /* tags in [low, next) not yet confirmed */
};

/* Allocate a window for `cap` tags in flight. 0 or GB_ENOMEM. */
int amq_win_init(struct amq_window *w, size_t cap);
void amq_win_free(struct amq_window *w);
/* Forget everything; the next tag is 1 again (a new channel). */
void amq_win_reset(struct amq_window *w);
/* 1 if one more publish fits in the ring. */
int amq_win_has_room(const struct amq_window *w);
/* Record a publish; returns its tag, or 0 when the ring is full. */
uint64_t amq_win_push(struct amq_window *w);

typedef void (*amq_win_fn)(void *arg, uint64_t tag);

/*
** Apply a broker ack/nack for `tag` (and, with `multiple`, every earlier
** unconfirmed tag): fn is called once per newly confirmed tag, in tag
** order, after the tag is retired, so fn may push new publishes. Tags
** outside [low, next) and tags already confirmed are ignored. Returns the
** number of tags confirmed.
*/
size_t amq_win_confirm(struct amq_window *w, uint64_t tag, int multiple,
		       amq_win_fn fn, void *arg);

/* Call fn for every unconfirmed tag (in order), then reset the window. */
size_t amq_win_drain(struct amq_window *w, amq_win_fn fn, void *arg);

/* The delivery tag and `multiple` flag of a publisher confirm `m` (a
** basic.ack or basic.nack method). Returns 1 for an ack, 0 for a nack. */
int amq_confirm_read(const amqp_method_t *m, uint64_t *tag, int *multiple);

/*
** Fill a basic.properties from `p` for publishing. The strings are
** referenced, not copied: `p` must outlive the publish. Headers go into
** `ents` (room for nents entries) as UTF-8 strings. Adds app_id
** "gridbroker" and `timestamp` (seconds). Returns 0, GB_EINVAL (a header
** key without a value or longer than 255 bytes) or GB_ETOOBIG (more
** headers than nents).
*/
int amq_props_export(const struct amq_props *p, long long timestamp,
		     amqp_basic_properties_t *bp, amqp_table_entry_t *ents,
		     size_t nents);

/* What a received message says, as NUL-terminated strings. */
struct amq_imported {
	struct amq_props props;  /* headers: every string-valued header */
	const char *exchange;
	const char *routing_key;
	const char *error_header; /* AMQ_ERROR_HEADER's value, or NULL */
	long delivery_count;      /* x-delivery-count, 0 if absent */
	void *block;              /* owns everything above */
};

/*
** Decode received properties plus the exchange and routing key of the
** delivery into `out`. One allocation, sized from the (already received
** and bounded) frame contents; release with amq_imported_free.
** Returns 0 or GB_ENOMEM.
*/
int amq_import(const amqp_basic_properties_t *bp, amqp_bytes_t exchange,
	       amqp_bytes_t routing_key, struct amq_imported *out);
void amq_imported_free(struct amq_imported *im);

/* Find a header. String values (UTF-8 or bytes) set *out and return 1;
** integers of any width set *n and return 2; absent or other kinds: 0.
** Either output pointer may be NULL. */
int amq_table_get(const amqp_table_t *t, const char *key, amqp_bytes_t *out,
		  long *n);

/* "gridbroker." + type into buf; GB_ERANGE if it does not fit. */
int amq_queue_name(const char *type, char *buf, size_t len);

/*
** Describe a failed RPC for a log line or an error buffer: library
** errors by amqp_error_string2, broker closes by code and reply text.
*/
void amq_reply_text(amqp_rpc_reply_t r, char *buf, size_t len);

/*
** From a PRECONDITION_FAILED reply text ("... inequivalent arg
** 'x-queue-type' for queue ...") copy the argument name into `arg`.
** Returns 1 if one was found, else 0 (arg is then "").
*/
int amq_mismatch_arg(const char *reply_text, char *arg, size_t len);

/* ---- connection helpers (amqp_topology.c) -------------------------------- */

/*
** A watchdog for the library's blocking writes. rabbitmq-c 0.11 keeps the
** socket non-blocking and, when a send would block, polls for writability
** without a deadline (amqp_basic_publish uses amqp_time_infinite), so a
** broker that stops reading hangs the caller; SO_SNDTIMEO cannot help with
** a non-blocking socket. Before each call that may write, the caller arms
** the guard with the fd and a limit; a helper thread that sees the limit
** pass calls shutdown(fd, SHUT_RDWR), which makes the library's poll and
** send fail, so the call returns an error and the caller tears down. The
** thread never touches the library's state; shutdown() does not close
** the fd, so it cannot hit a reused descriptor while the guard is armed.
*/
struct amq_guard {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int running; /* the thread exists */
	int stop;
	int armed;
	int fired;   /* the last armed call ran out of time */
	int idle;    /* the thread waits without a deadline */
	int fd;
	struct timespec deadline;   /* CLOCK_MONOTONIC */
	struct timespec wait_until; /* when the thread wakes next, if timed */
};

/* Start the helper thread. 0 or GB_ENOMEM. */
int amq_guard_start(struct amq_guard *g);
/* Stop and join it; safe on a guard that never started. */
void amq_guard_stop(struct amq_guard *g);
/* Watch `fd` for `seconds` from now. */
void amq_guard_arm(struct amq_guard *g, int fd, int seconds);
/* Stop watching; returns 1 if the guard shut the socket down meanwhile. */
int amq_guard_disarm(struct amq_guard *g);

/*
** Publish `len` bytes of `body` to `exchange` with routing key `rkey` on
** channel `ch` of `conn`, mandatory (an unroutable message comes back as
** basic.return), with `props` (NULL: none) as amq_props_export() fills
** them at the wall clock's time, under `g` armed on `fd` for
** AMQ_IO_LIMIT_S. Returns 0 when the library took the message,
** amq_props_export's GB_EINVAL or GB_ETOOBIG when nothing was sent, or
** GB_EAMQP when the library failed (the connection is then unusable) with
** its status in *status and amq_guard_disarm's answer in *fired (either
** may be NULL). Both clients publish through this, so a message looks the
** same whichever sent it.
*/
int amq_publish_guarded(amqp_connection_state_t conn, amqp_channel_t ch,
			struct amq_guard *g, int fd, const char *exchange,
			const char *rkey, const struct amq_props *props,
			const void *body, size_t len, int *status, int *fired);

/*
** Open a connection to cfg's broker: TCP, or TLS when amqp.tls is 1 (TLS
** 1.2 or later; with amqp.tls_verify the certificate must chain to
** amqp.tls_ca_file and name the host, a DNS name or an IP address; the
** client certificate when one is configured). Connect and TLS handshake
** are bounded by 5 s, then the AMQP handshake (5 s) and RPC (10 s)
** timeouts are set and it logs in with `heartbeat`, frame_max
** AMQ_FRAME_MAX and client properties naming `connection_name` and
** advertising the connection.blocked, consumer_cancel_notify,
** publisher_confirms and basic.nack capabilities.
**
** amqp.host may list several nodes (hostlist.h): the entries are tried in
** hostlist.h's order within this one call, starting with the entry that
** last worked in this process (kept here, shared by all callers; the first
** entry initially). With more than one entry the node used is logged
** (info), and a failover (warning) with what failed before it.
**
** On success *out owns the connection (amqp_destroy_connection) and err is
** "". On failure returns GB_EAMQP (GB_ENOMEM, or GB_ECONFIG for a host list
** that does not parse) with the reason of every entry tried in err, each
** naming its host:port ("TLS handshake with 127.0.0.1:5671 failed:
** certificate verify failed (...)"; "connect to mq2:5672: ...").
*/
int amq_connect(const struct gb_config *cfg, int heartbeat,
		const char *connection_name, amqp_connection_state_t *out,
		char *err, size_t errlen);

/* Open channel `ch`; with `confirm`, put it in confirm mode. 0 or
** GB_EAMQP with the reason in err. */
int amq_channel_setup(amqp_connection_state_t conn, amqp_channel_t ch,
		      int confirm, char *err, size_t errlen);

/*
** Check the reply of the RPC just made on channel `ch`. On a broker close
** answer it (channel.close-ok or connection.close-ok) so the connection
** stays in step, write "what: reason" into err and set *code to the AMQP
** reply code (404, 406, ...; 0 for library errors; code may be NULL).
** Returns 0, GB_EAMQP (the channel was closed; the connection is usable
** once the channel is reopened) or GB_EAMQPGONE (the connection is not).
*/
int amq_rpc_check(amqp_connection_state_t conn, amqp_channel_t ch,
		  const char *what, char *err, size_t errlen, int *code);
/* The same for a reply the caller holds (amqp_basic_get returns one). */
int amq_reply_check(amqp_connection_state_t conn, amqp_channel_t ch,
		    amqp_rpc_reply_t r, const char *what, char *err,
		    size_t errlen, int *code);

/*
** Declare the exchanges and queues of amqp.h's header comment on channel
** `ch`. A queue that exists with other arguments (PRECONDITION_FAILED) is
** reported naming the queue and the argument; the broker then has closed
** the channel (this function answers with close-ok) and the caller must
** reopen it before using it again. Returns 0, GB_ECONFIG (argument
** mismatch) or GB_EAMQP.
*/
int amq_declare_topology(amqp_connection_state_t conn, amqp_channel_t ch,
			 const struct gb_config *cfg, char *err,
			 size_t errlen);

/* Test seam for tests/integration/itc_amqp.c: the socket of the event-loop
** connection (to force a failure with shutdown()), or -1 while down. */
int amq_sockfd(const struct amq_conn *c);

#endif
