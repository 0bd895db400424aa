/*
** httpd.h — the worker's HTTP endpoint for monitoring: GET /metrics
** (Prometheus text, metrics.h) and GET /healthz (200 when both RabbitMQ
** and MariaDB are usable, else 503 naming what is down); anything else
** is 404 (405 for another method on those paths).
**
** It is libevent's evhttp on the worker's own loop: a scrape renders the
** in-memory registry and answers, so no request ever waits on a server or
** blocks the loop. The endpoint is meant for a local agent (Prometheus
** node-side, systemd, a load balancer's check on the host): by default
** only a loopback address may be configured (config.c checks
** [worker] metrics_listen against metrics_allow_remote).
*/
#ifndef GB_HTTPD_H
#define GB_HTTPD_H

#include <stddef.h>

struct event_base;
struct hd_server;

/* What the endpoint asks the worker for, on every request. */
struct hd_callbacks {
	/* Fill `buf` (cap bytes) with the metrics text; *need gets its full
	** length. Returns 0, or GB_ETOOBIG when cap was too small (it is
	** called again with a buffer of *need + 1 bytes). */
	int (*metrics)(void *ud, char *buf, size_t cap, size_t *need);
	/* 1 when healthy; `why` gets a one-line state ("amqp up, db down"). */
	int (*health)(void *ud, char *why, size_t cap);
};

/*
** Listen on `spec` (as hl_parse_listen of base/hostlist.h) on `base`. `cb` and `ud` must
** outlive the server. Returns the server, or NULL with the reason in err
** (a bad address, the port taken).
*/
struct hd_server *hd_start(struct event_base *base, const char *spec,
			   const struct hd_callbacks *cb, void *ud, char *err,
			   size_t errlen);

/* The port actually bound (the ephemeral one when the spec said 0). */
int hd_port(const struct hd_server *s);

/* Close the listener and free everything (NULL is fine). */
void hd_free(struct hd_server *s);

#endif
