/*
** hostlist.h — the server lists of `[amqp] host` and `[database] host`.
**
** A deployment with a RabbitMQ cluster or a Galera cluster names every node
** it may use: "mq1,mq2:5673,[2001:db8::7]:5672". This module parses such a
** list (pure: no I/O, no allocation, no globals) and states the rule a
** client follows to pick the node it connects to:
**
**   - a client starts with the entry that last worked (the first entry
**     before anything has worked);
**   - when a connect to it fails, the client tries the next entries in
**     order, wrapping around, each once, within the same connect attempt;
**   - the entry that answered becomes the one that "last worked".
**
** The rule is the same for both servers on purpose. For RabbitMQ any node
** serves any queue (quorum queues), so staying put only avoids needless
** moves. For MariaDB Galera it matters: writers spread over several nodes
** conflict at certification time (a transaction that loses is rolled back
** with a deadlock error), so all workers should write through one node and
** move only when it fails, not round-robin.
*/
#ifndef GB_HOSTLIST_H
#define GB_HOSTLIST_H

#include <stddef.h>

/* Most entries in one list. */
#define HL_MAX 8
/* Longest host of one entry: a DNS name is at most 253 characters. */
#define HL_HOST_MAX 253
/* "[" host "]:" 5-digit port and the NUL: what hl_format() may need. */
#define HL_TEXT_MAX (HL_HOST_MAX + 10)

struct hl_entry {
	char host[HL_HOST_MAX + 1]; /* name or address, IPv6 without [] */
	int port;                   /* 1..65535 */
	int ipv6;                   /* written in brackets in the list */
};

struct hl_list {
	size_t n; /* 1..HL_MAX after a successful hl_parse */
	struct hl_entry e[HL_MAX];
};

/*
** Parse `text`, a comma-separated list of "host", "host:port", "[v6]" or
** "[v6]:port" entries (blanks around entries are ignored), into `out`. An
** entry without a port gets `default_port`. Returns 0, or GB_ECONFIG with
** the first problem in err, naming the entry by its 1-based position and
** its text, e.g. `entry 2 ("mq2:70000"): bad port "70000" (1..65535)`.
** Problems: an empty entry (also an empty list or a stray comma), more
** than HL_MAX entries, a host longer than HL_HOST_MAX, a bad port, an
** IPv6 address without brackets, a malformed bracket, a character that no
** host name or address contains. `default_port` must be in 1..65535
** (else GB_EINVAL). err may be NULL when errlen is 0.
*/
int hl_parse(const char *text, int default_port, struct hl_list *out,
	     char *err, size_t errlen);

/*
** The entry the k-th try (k = 0, 1, ..., n-1) of one connect attempt uses,
** when `cur` is the entry that last worked: cur, cur+1, ..., wrapping
** around. n must be at least 1; cur and k are reduced modulo n, so a stale
** `cur` from a longer list is harmless.
*/
size_t hl_try(size_t n, size_t cur, size_t k);

/*
** Write entry `e` as it is written in a list, with its port: "mq1:5672",
** "[::1]:5672", into buf (HL_TEXT_MAX is always enough). Returns buf.
*/
const char *hl_format(const struct hl_entry *e, char *buf, size_t len);

/*
** A listen address (the worker's metrics_listen). Split "host:port" or "[v6]:port" (port 0..65535, 0 = any free port)
** into host and port, and tell whether host is a loopback address
** (127.0.0.0/8, ::1, "localhost"). Pure. Returns 0, or GB_ECONFIG with
** the problem in err.
*/
int hl_parse_listen(const char *spec, char *host, size_t hostlen, int *port,
		    int *loopback, char *err, size_t errlen);

#endif
