/*
** park.h — the copies of deliveries held while the database is away
** (park.c says why); the runner parks, replays and drops them.
*/
#ifndef GB_PARK_H
#define GB_PARK_H

#include <stddef.h>

#include "amqp/amqp.h"
#include "pipeline/pipeline.h"

struct wk_parked;

/* A copy of `d` — body, strings and the properties the handlers read, no
** headers — in one block that free() releases; NULL when out of memory.
** The park keeps these, and so does a group commit (runner.c). */
struct amq_delivery *wk_delivery_copy(const struct amq_delivery *d);

/* Keep a copy of `d` (unacknowledged) in w's park. Returns 0 or
** GB_ENOMEM (nothing kept). */
int wk_park_put(struct wk_worker *w, const struct amq_delivery *d);

/* Take the whole park out of `w` (*n entries; NULL when empty), so a
** replay that parks again does not append to the list being walked. */
struct wk_parked *wk_park_take(struct wk_worker *w, size_t *n);

/* The i-th parked delivery of a taken list (valid until released). */
const struct amq_delivery *wk_parked_delivery(const struct wk_parked *list,
					      size_t i);

/* Free a taken list. */
void wk_park_release(struct wk_parked *list, size_t n);

#endif
