/*
** codec.h — msgpack encoding and validating decoding of gridbroker messages.
**
** Decoding never trusts the input: every field's type and range is checked
** before use, unknown enum words are rejected, arrays and strings have hard
** upper bounds, nesting is limited, and all memory comes from a capped arena.
** A failure names the field and the problem (cod_error), which the worker puts
** in the x-gridbroker-error header of the dead-lettered copy.
**
** Field names are the seeds' (taskID, taskPriority, ioIntensity, ...); see
** schemas/messages/ for one document per message type.
*/
#ifndef GB_CODEC_H
#define GB_CODEC_H

#include <stddef.h>

#include <jansson.h>
#include <msgpack.h>

#include "arena.h"
#include "decision.h"
#include "taskbroker.h"

#define COD_MAX_DATASETS 1000
#define COD_MAX_STRING 256
#define COD_MAX_DEPTH 8

struct cod_error {
	char field[96];   /* e.g. "inputDatasets[2].size" */
	char problem[160]; /* e.g. "expected a number >= 0, got -3" */
};

/*
** Decode a task.broker request into `out`; strings and arrays live in `a`.
** Returns 0, or GB_EDECODE (not msgpack / trailing bytes), GB_ETYPE,
** GB_EMISSING, GB_ERANGE, GB_ETOOBIG, GB_EDUP (a key given twice),
** GB_ENOMEM with `err` filled, or GB_EINVAL when `a` or `out` is NULL.
** `err->field` is "" when the problem is the whole message (not a map,
** trailing bytes). Fields are checked in the order of the message
** contract (taskID, gshare, ...); the first problem found is reported.
*/
int cod_decode_task(const void *buf, size_t len, struct arena *a,
		    struct tb_task *out, struct cod_error *err);

/* Encode a task.broker request (what `gridbroker task submit` sends). */
int cod_encode_task(const struct tb_task *t, msgpack_sbuffer *out);

/* What a task.assigned / task.pending event says. */
struct cod_task_event {
	const char *event;        /* "task.assigned" or "task.pending" */
	long long decision_id;
	const char *request_id;   /* the request's message id */
	const struct tb_task *task;
	const struct tb_nucleus *nuclei; /* the candidates, as decided */
	const struct dec_decision *dec;
	long long decided_at;     /* unix s */
	long long retry_at;       /* unix s when pending, else 0 */
};

/*
** Encode an event: event, decisionId, requestId, taskID, gshare, decidedAt,
** and for assigned: nucleus, weight, jobScope; for pending: retryAfter,
** retryAt; always stages [{name,rule,in,out}], reasons: the histogram
** [{rule, code, count}] (most frequent first) and rejected: up to 50
** [{name, rule, code, detail}].
*/
int cod_encode_task_event(const struct cod_task_event *ev,
			  msgpack_sbuffer *out);

/*
** Convert any msgpack document to JSON (for printing events and dead
** letters). Binary becomes a base64-free "<N bytes>" string; depth and size
** are bounded. NULL when `buf` is not one complete msgpack object.
*/
json_t *cod_to_json(const void *buf, size_t len);

#endif
