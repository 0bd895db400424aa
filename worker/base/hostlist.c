/*
** hostlist.c — parse "host[:port],..." server lists and the failover order.
**
** See hostlist.h for the format and the rule. Parsing is strict where a
** mistake would otherwise surface much later as a puzzling connect error:
** a stray comma, a port typo or an unbracketed IPv6 address is rejected at
** --check-config time with the entry's position and text.
*/
#include "base/hostlist.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "gb_error.h"

/* How much of an entry's text a message quotes. */
#define HL_QUOTE 64

static int hl_fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int hl_fail(char *err, size_t errlen, const char *fmt, ...)
{
	if (err != NULL && errlen > 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return GB_ECONFIG;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_alnum(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* The entry's text for a message, cut with "..." when long. */
static void quote(const char *s, size_t len, char *buf, size_t buflen)
{
	if (len > HL_QUOTE)
		snprintf(buf, buflen, "%.*s...", HL_QUOTE, s);
	else
		snprintf(buf, buflen, "%.*s", (int)len, s);
}

/* A port is 1..5 digits with a value in 1..65535; -1 otherwise. */
static int parse_port(const char *s, size_t len)
{
	if (len == 0 || len > 5)
		return -1;
	long v = 0;
	for (size_t i = 0; i < len; i++) {
		if (!is_digit(s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v >= 1 && v <= 65535 ? (int)v : -1;
}

/*
** One entry, s[0..len) already trimmed and non-empty, into e. `pos` is its
** 1-based position, for messages.
*/
static int parse_entry(const char *s, size_t len, size_t pos, int default_port,
		       struct hl_entry *e, char *err, size_t errlen)
{
	char q[HL_QUOTE + 4];
	quote(s, len, q, sizeof(q));
	const char *host = s, *port = NULL;
	size_t hlen = 0, plen = 0;
	int v6 = 0;

	if (s[0] == '[') {
		const char *close = memchr(s, ']', len);
		if (close == NULL)
			return hl_fail(err, errlen, "entry %zu (\"%s\"): missing ']'",
				       pos, q);
		host = s + 1;
		hlen = (size_t)(close - host);
		size_t rest = len - (size_t)(close + 1 - s);
		if (rest > 0) {
			if (close[1] != ':')
				return hl_fail(err, errlen,
					       "entry %zu (\"%s\"): expected ':' "
					       "and a port after ']'",
					       pos, q);
			port = close + 2;
			plen = rest - 1;
		}
		if (hlen == 0)
			return hl_fail(err, errlen,
				       "entry %zu (\"%s\"): empty address in "
				       "brackets",
				       pos, q);
		if (memchr(host, ':', hlen) == NULL)
			return hl_fail(err, errlen,
				       "entry %zu (\"%s\"): brackets hold IPv6 "
				       "addresses only",
				       pos, q);
		/* Hex digits, colons, an embedded IPv4 tail and a zone
		** ("%eth0") are what an IPv6 literal may contain. */
		int zone = 0;
		for (size_t i = 0; i < hlen; i++) {
			char c = host[i];
			if (c == '%')
				zone = 1;
			else if (!(is_hex(c) || c == ':' || c == '.' ||
				   (zone && (is_alnum(c) || c == '_' ||
					     c == '-'))))
				return hl_fail(err, errlen,
					       "entry %zu (\"%s\"): '%c' is not "
					       "allowed in an IPv6 address",
					       pos, q, c);
		}
		v6 = 1;
	} else {
		const char *colon = memchr(s, ':', len);
		if (colon != NULL &&
		    memchr(colon + 1, ':', len - (size_t)(colon + 1 - s)) != NULL)
			return hl_fail(err, errlen,
				       "entry %zu (\"%s\"): an IPv6 address "
				       "needs brackets: [address]:port",
				       pos, q);
		hlen = colon ? (size_t)(colon - s) : len;
		if (colon != NULL) {
			port = colon + 1;
			plen = len - hlen - 1;
		}
		if (hlen == 0)
			return hl_fail(err, errlen,
				       "entry %zu (\"%s\"): no host before ':'",
				       pos, q);
		for (size_t i = 0; i < hlen; i++) {
			char c = host[i];
			if (is_alnum(c) || c == '-' || c == '.' || c == '_')
				continue;
			if ((unsigned char)c >= 0x20 && (unsigned char)c < 0x7f)
				return hl_fail(err, errlen,
					       "entry %zu (\"%s\"): '%c' is not "
					       "allowed in a host name",
					       pos, q, c);
			return hl_fail(err, errlen,
				       "entry %zu (\"%s\"): byte 0x%02x is not "
				       "allowed in a host name",
				       pos, q, (unsigned)(unsigned char)c);
		}
	}
	if (hlen > HL_HOST_MAX)
		return hl_fail(err, errlen,
			       "entry %zu: host is %zu characters, longer than "
			       "%d",
			       pos, hlen, HL_HOST_MAX);

	int p = default_port;
	if (port != NULL) {
		p = parse_port(port, plen);
		if (p < 0) {
			char pq[HL_QUOTE + 4];
			quote(port, plen, pq, sizeof(pq));
			return hl_fail(err, errlen,
				       "entry %zu (\"%s\"): bad port \"%s\" "
				       "(1..65535)",
				       pos, q, pq);
		}
	}
	memcpy(e->host, host, hlen);
	e->host[hlen] = '\0';
	e->port = p;
	e->ipv6 = v6;
	return GB_OK;
}

int hl_parse(const char *text, int default_port, struct hl_list *out,
	     char *err, size_t errlen)
{
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (out == NULL || text == NULL || default_port < 1 ||
	    default_port > 65535) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "invalid argument");
		return GB_EINVAL;
	}
	memset(out, 0, sizeof(*out));

	/* Count first: "too many" is the problem to report for a long list,
	** not whatever is wrong with its ninth entry. */
	size_t count = 1;
	for (const char *p = text; *p; p++)
		count += *p == ',';
	const char *t = text;
	while (is_blank(*t))
		t++;
	if (*t == '\0')
		return hl_fail(err, errlen, "no host given");
	if (count > HL_MAX)
		return hl_fail(err, errlen, "%zu entries, at most %d", count,
			       HL_MAX);

	const char *p = text;
	for (size_t pos = 1; pos <= count; pos++) {
		const char *comma = strchr(p, ',');
		const char *end = comma ? comma : p + strlen(p);
		const char *s = p;
		while (s < end && is_blank(*s))
			s++;
		const char *e = end;
		while (e > s && is_blank(e[-1]))
			e--;
		int rc = s == e ? hl_fail(err, errlen, "entry %zu is empty",
					  pos)
				: parse_entry(s, (size_t)(e - s), pos,
					      default_port, &out->e[out->n],
					      err, errlen);
		if (rc != GB_OK) {
			memset(out, 0, sizeof(*out));
			return rc;
		}
		out->n++;
		p = comma ? comma + 1 : end;
	}
	return GB_OK;
}

size_t hl_try(size_t n, size_t cur, size_t k)
{
	if (n == 0)
		return 0;
	return (cur % n + k % n) % n;
}

const char *hl_format(const struct hl_entry *e, char *buf, size_t len)
{
	if (len == 0)
		return buf;
	if (e->ipv6)
		snprintf(buf, len, "[%s]:%d", e->host, e->port);
	else
		snprintf(buf, len, "%s:%d", e->host, e->port);
	return buf;
}

int hl_parse_listen(const char *spec, char *host, size_t hostlen, int *port,
		    int *loopback, char *err, size_t errlen)
{
	const char *colon, *h = spec;
	size_t hl;
	if (spec == NULL || spec[0] == '\0') {
		snprintf(err, errlen, "empty address");
		return GB_ECONFIG;
	}
	if (spec[0] == '[') {
		const char *end = strchr(spec, ']');
		if (end == NULL || end[1] != ':') {
			snprintf(err, errlen,
				 "\"%s\": expected [IPv6 address]:port", spec);
			return GB_ECONFIG;
		}
		h = spec + 1;
		hl = (size_t)(end - h);
		colon = end + 1;
	} else {
		colon = strrchr(spec, ':');
		if (colon == NULL || memchr(spec, ':', (size_t)(colon - spec))) {
			snprintf(err, errlen,
				 "\"%s\": expected host:port (an IPv6 address "
				 "in brackets)",
				 spec);
			return GB_ECONFIG;
		}
		hl = (size_t)(colon - spec);
	}
	char *end = NULL;
	long p = strtol(colon + 1, &end, 10);
	if (colon[1] < '0' || colon[1] > '9' || *end != '\0' || p < 0 ||
	    p > 65535) {
		snprintf(err, errlen, "\"%s\": bad port (0..65535, 0 = any)",
			 spec);
		return GB_ECONFIG;
	}
	if (hl == 0 || hl >= hostlen) {
		snprintf(err, errlen, "\"%s\": bad host", spec);
		return GB_ECONFIG;
	}
	memcpy(host, h, hl);
	host[hl] = '\0';
	*port = (int)p;
	struct in_addr a4;
	struct in6_addr a6;
	if (inet_pton(AF_INET, host, &a4) == 1)
		*loopback = (ntohl(a4.s_addr) >> 24) == 127;
	else if (inet_pton(AF_INET6, host, &a6) == 1)
		*loopback = IN6_IS_ADDR_LOOPBACK(&a6);
	else
		*loopback = strcmp(host, "localhost") == 0;
	return GB_OK;
}
