/*
** httpd.c — GET /metrics and GET /healthz over libevent's evhttp. See
** httpd.h. No I/O besides the listening socket and its connections; what
** the answers say comes from the worker's callbacks.
*/
#include "daemon/httpd.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "base/hostlist.h"
#include "gb_error.h"

#define HD_TIMEOUT_S 5       /* a client that stalls is dropped */
#define HD_MAX_HEADERS 8192  /* a scrape sends a few hundred bytes */
#define HD_FIRST_BUF 32768   /* the metrics text is ~20 KiB */

struct hd_server {
	struct evhttp *http;
	struct evhttp_bound_socket *sock;
	const struct hd_callbacks *cb;
	void *ud;
	int port;
	char *buf; /* kept between scrapes: bounded by the registry's size */
	size_t cap;
};

static void reply(struct evhttp_request *req, int code, const char *reason,
		  const char *type, const char *body, size_t len)
{
	struct evbuffer *b = evbuffer_new();
	evhttp_add_header(evhttp_request_get_output_headers(req),
			  "Content-Type", type);
	if (b && evhttp_request_get_command(req) != EVHTTP_REQ_HEAD)
		evbuffer_add(b, body, len);
	evhttp_send_reply(req, code, reason, b);
	if (b)
		evbuffer_free(b);
}

static void serve_metrics(struct hd_server *s, struct evhttp_request *req)
{
	size_t need = 0;
	if (s->buf == NULL ||
	    s->cb->metrics(s->ud, s->buf, s->cap, &need) != GB_OK) {
		char *nb = realloc(s->buf, need + 1 > HD_FIRST_BUF
						   ? need + 1
						   : HD_FIRST_BUF);
		if (nb == NULL) {
			reply(req, 500, "Internal Server Error", "text/plain",
			      "out of memory\n", 14);
			return;
		}
		s->buf = nb;
		s->cap = need + 1 > HD_FIRST_BUF ? need + 1 : HD_FIRST_BUF;
		if (s->cb->metrics(s->ud, s->buf, s->cap, &need) != GB_OK) {
			reply(req, 500, "Internal Server Error", "text/plain",
			      "metrics do not render\n", 22);
			return;
		}
	}
	reply(req, 200, "OK", "text/plain; version=0.0.4; charset=utf-8",
	      s->buf, need);
}

static void serve_health(struct hd_server *s, struct evhttp_request *req)
{
	char why[200] = "", body[256];
	int ok = s->cb->health(s->ud, why, sizeof(why));
	int n = snprintf(body, sizeof(body), "%s: %s\n", ok ? "ok" : "unhealthy",
			 why);
	reply(req, ok ? 200 : 503, ok ? "OK" : "Service Unavailable",
	      "text/plain; charset=utf-8", body,
	      n > 0 && (size_t)n < sizeof(body) ? (size_t)n : strlen(body));
}

static void on_request(struct evhttp_request *req, void *arg)
{
	struct hd_server *s = arg;
	const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(req);
	const char *path = u ? evhttp_uri_get_path(u) : NULL;
	int known = path && (strcmp(path, "/metrics") == 0 ||
			     strcmp(path, "/healthz") == 0);
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	if (!known) {
		reply(req, 404, "Not Found", "text/plain", "not found\n", 10);
	} else if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD) {
		reply(req, 405, "Method Not Allowed", "text/plain",
		      "method not allowed\n", 19);
	} else if (path[1] == 'm') {
		serve_metrics(s, req);
	} else {
		serve_health(s, req);
	}
}

struct hd_server *hd_start(struct event_base *base, const char *spec,
			   const struct hd_callbacks *cb, void *ud, char *err,
			   size_t errlen)
{
	char host[256];
	int port = 0, loop = 0;
	if (hl_parse_listen(spec, host, sizeof(host), &port, &loop, err,
			    errlen) != GB_OK)
		return NULL;
	struct hd_server *s = calloc(1, sizeof(*s));
	if (s == NULL || (s->http = evhttp_new(base)) == NULL) {
		snprintf(err, errlen, "out of memory");
		free(s);
		return NULL;
	}
	s->cb = cb;
	s->ud = ud;
	evhttp_set_timeout(s->http, HD_TIMEOUT_S);
	evhttp_set_max_headers_size(s->http, HD_MAX_HEADERS);
	evhttp_set_max_body_size(s->http, 0);
	evhttp_set_gencb(s->http, on_request, s);
	s->sock = evhttp_bind_socket_with_handle(s->http, host,
						 (unsigned short)port);
	if (s->sock == NULL) {
		snprintf(err, errlen, "cannot listen on %s (address in use or "
			 "not local)", spec);
		hd_free(s);
		return NULL;
	}
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	evutil_socket_t fd = evhttp_bound_socket_get_fd(s->sock);
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		s->port = ntohs(ss.ss_family == AF_INET6
					? ((struct sockaddr_in6 *)&ss)->sin6_port
					: ((struct sockaddr_in *)&ss)->sin_port);
	return s;
}

int hd_port(const struct hd_server *s)
{
	return s ? s->port : 0;
}

void hd_free(struct hd_server *s)
{
	if (s == NULL)
		return;
	if (s->http)
		evhttp_free(s->http);
	free(s->buf);
	free(s);
}
