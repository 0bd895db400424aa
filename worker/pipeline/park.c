/*
** park.c — deliveries held while the database is away.
**
** When MariaDB restarts, every request a worker receives fails until the
** connection is back. Handing each one back with a requeueing nack makes
** the broker redeliver it at once, to this or another worker that fails
** the same way, and a quorum queue counts every such return against the
** queue's delivery limit: a few hundred bounces in a three-second restart
** and valid requests end up dead-lettered. So the worker keeps them
** instead: a copy of each delivery (body and the properties the handlers
** read) is parked unacknowledged, and the runner replays it (wk_unpark)
** when the database answers again. This file only keeps the copies. The broker's prefetch bounds how many
** can arrive unacknowledged, so the park needs no other limit; if the
** outage lasts, the main loop closes the AMQP connection (the broker then
** requeues them, one count each) and the park is dropped.
*/
#include <stdlib.h>
#include <string.h>

#include "gb_error.h"
#include "pipeline/park.h"

struct wk_parked {
	struct amq_delivery *d; /* wk_delivery_copy */
};

static char *put(char **at, const char *s)
{
	if (s == NULL)
		return NULL;
	size_t n = strlen(s) + 1;
	char *p = memcpy(*at, s, n);
	*at += n;
	return p;
}

static size_t slen(const char *s)
{
	return s ? strlen(s) + 1 : 0;
}

struct amq_delivery *wk_delivery_copy(const struct amq_delivery *d)
{
	const struct amq_props *p = &d->props;
	size_t need = sizeof(struct amq_delivery) + d->len +
		      slen(d->exchange) + slen(d->routing_key) +
		      slen(p->message_id) + slen(p->type) +
		      slen(p->content_type) + slen(p->correlation_id) +
		      slen(p->reply_to) + slen(p->expiration) +
		      slen(p->user_id) + 1;
	struct amq_delivery *k = malloc(need);
	if (k == NULL)
		return NULL;
	*k = *d;
	char *mem = (char *)(k + 1);
	if (d->len)
		memcpy(mem, d->body, d->len);
	k->body = mem;
	char *at = mem + d->len;
	k->exchange = put(&at, d->exchange);
	k->routing_key = put(&at, d->routing_key);
	k->props.message_id = put(&at, p->message_id);
	k->props.type = put(&at, p->type);
	k->props.content_type = put(&at, p->content_type);
	k->props.correlation_id = put(&at, p->correlation_id);
	k->props.reply_to = put(&at, p->reply_to);
	k->props.expiration = put(&at, p->expiration);
	/* A parked pilot.match is checked against its account when it is
	** replayed ([dirac] owner_check): the account must come along. */
	k->props.user_id = put(&at, p->user_id);
	k->props.headers = NULL; /* no handler reads request headers */
	return k;
}

int wk_park_put(struct wk_worker *w, const struct amq_delivery *d)
{
	if (w->nparked == w->cap_parked) {
		size_t cap = w->cap_parked ? w->cap_parked * 2 : 16;
		struct wk_parked *np = realloc(w->parked, cap * sizeof(*np));
		if (np == NULL)
			return GB_ENOMEM;
		w->parked = np;
		w->cap_parked = cap;
	}
	struct amq_delivery *k = wk_delivery_copy(d);
	if (k == NULL)
		return GB_ENOMEM;
	w->parked[w->nparked].d = k;
	w->nparked++;
	w->n_parked++;
	return GB_OK;
}

struct wk_parked *wk_park_take(struct wk_worker *w, size_t *n)
{
	struct wk_parked *list = w->parked;
	*n = w->nparked;
	w->parked = NULL;
	w->nparked = w->cap_parked = 0;
	return list;
}

const struct amq_delivery *wk_parked_delivery(const struct wk_parked *list,
					      size_t i)
{
	return list[i].d;
}

void wk_park_release(struct wk_parked *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(list[i].d);
	free(list);
}

void wk_park_drop(struct wk_worker *w)
{
	size_t n = 0;
	struct wk_parked *list = wk_park_take(w, &n);
	wk_park_release(list, n);
}
