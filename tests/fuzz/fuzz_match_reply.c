/*
** fuzz_match_reply.c — fuzz target for what the CLI and the tests read
** back from the workers: the pilot.match reply (cdt_decode_reply, in the
** CLI's 1 MiB arena), the pilot.matched / pilot.nomatch event
** (cdt_decode_match_event) and the msgpack-to-JSON conversion that
** `gridbroker events`, `dlq` and `pilot match --json` print any body with
** (cod_to_json). Every input goes through all three.
**
** Properties: refusals are documented codes with printable text; an
** accepted reply or event encodes, decodes to the same matches and
** encodes to the same bytes; cod_to_json of anything gives NULL or JSON
** that json_dumps writes and json_loads reads back equal, never NULL for
** a body the workers' scanner accepts (so `gridbroker dlq` can show every
** dead letter refused for its fields), and for an accepted reply that
** JSON carries the same requestID and decision.
*/
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/arena.h"
#include "codec/codec.h"
#include "codec/codec_tq.h"
#include "fuzz.h"
#include "gb_error.h"

static int match_eq(const struct cdt_match *a, const struct cdt_match *b)
{
	if (a->decision_id != b->decision_id ||
	    !fz_str_eq(a->request_id, b->request_id) ||
	    !fz_str_eq(a->pilot_id, b->pilot_id) ||
	    !fz_str_eq(a->site, b->site) || a->matched != b->matched ||
	    a->job_id != b->job_id || a->tq_id != b->tq_id ||
	    !fz_str_eq(a->owner, b->owner) ||
	    !fz_str_eq(a->owner_group, b->owner_group) ||
	    a->tq_cpu_time != b->tq_cpu_time || !fz_str_eq(a->code, b->code) ||
	    !fz_str_eq(a->reason, b->reason) ||
	    a->considered != b->considered ||
	    a->matched_tqs != b->matched_tqs || a->empty != b->empty)
		return 0;
	for (int f = 0; f < TQ_NFILTERS; f++)
		if (a->rejected[f] != b->rejected[f])
			return 0;
	return 1;
}

/* The JSON the CLI prints of an accepted reply shows what was decoded. */
static void reply_checked(const void *obj, const uint8_t *buf, size_t len)
{
	const struct cdt_match *m = obj;
	json_t *j = cod_to_json(buf, len);
	FZ_CHECK(j != NULL, "an accepted reply converts to JSON");
	json_t *rid = json_object_get(j, "requestID");
	json_t *dec = json_object_get(j, "decision");
	FZ_CHECK(json_is_string(rid) &&
			 fz_str_eq(json_string_value(rid), m->request_id),
		 "the JSON shows the decoded requestID");
	FZ_CHECK(json_is_integer(dec) &&
			 json_integer_value(dec) == m->decision_id,
		 "the JSON shows the decoded decision");
	json_decref(j);
}

static int reply_decode(const uint8_t *buf, size_t len, struct arena *a,
			void *m, struct cod_error *err)
{
	return cdt_decode_reply(buf, len, a, m, err);
}

static int reply_encode(const void *m, msgpack_sbuffer *out)
{
	return cdt_encode_reply(m, out);
}

static int reply_same(const void *x, const void *y)
{
	return match_eq(x, y);
}

static const struct fz_codec reply_codec = {
	.what = "pilot.match reply",
	.obj_size = sizeof(struct cdt_match),
	.decode = reply_decode,
	.encode = reply_encode,
	.same = reply_same,
	.check_decoded = reply_checked,
};

/* A pilot.matched / pilot.nomatch event: its items. */
struct fz_event {
	struct cdt_match *items;
	size_t n;
};

static void event_checked(const void *obj, const uint8_t *buf, size_t len)
{
	const struct fz_event *v = obj;
	(void)buf;
	(void)len;
	FZ_CHECK(v->n >= 1 && v->n <= CDT_MAX_ITEMS && v->items != NULL,
		 "1..CDT_MAX_ITEMS items");
}

static int event_decode(const uint8_t *buf, size_t len, struct arena *a,
			void *obj, struct cod_error *err)
{
	struct fz_event *v = obj;
	return cdt_decode_match_event(buf, len, a, &v->items, &v->n, err);
}

/* The event's name follows its first item, as the worker names it. */
static int event_encode(const void *obj, msgpack_sbuffer *out)
{
	const struct fz_event *v = obj;
	const char *name =
		v->items[0].matched ? "pilot.matched" : "pilot.nomatch";
	return cdt_encode_match_event(name, v->items, v->n, out);
}

static int event_same(const void *x, const void *y)
{
	const struct fz_event *a = x, *b = y;
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (!match_eq(&a->items[i], &b->items[i]))
			return 0;
	return 1;
}

static const struct fz_codec event_codec = {
	.what = "pilot.matched/nomatch event",
	.obj_size = sizeof(struct fz_event),
	.decode = event_decode,
	.encode = event_encode,
	.same = event_same,
	.check_decoded = event_checked,
};

/* The request decoders' scan limits (COD_MAX_DEPTH, and the smallest
** value cap, pilot.match's and job.status's). */
#define FZ_SCAN_VALUES 65536

/* Whatever cod_to_json makes of the bytes, the CLI prints it as JSON
** text that reads back as the same value. */
static void json_round_trip(const uint8_t *data, size_t size)
{
	json_t *j = cod_to_json(data, size);
	msgpack_unpacked up;
	msgpack_unpacked_init(&up);
	struct cod_error err;
	int scanned = cod_unpack(data, size, COD_MAX_DEPTH, FZ_SCAN_VALUES, 0,
				 &up, &err) == GB_OK;
	msgpack_unpacked_destroy(&up);
	FZ_CHECK(j != NULL || !scanned,
		 "what the request scanner accepts converts to JSON");
	if (j == NULL)
		return;
	char *txt = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
	FZ_CHECK(txt != NULL, "the JSON of a message can be written");
	json_error_t jerr;
	json_t *back = json_loads(txt, JSON_DECODE_ANY, &jerr);
	FZ_CHECK(back != NULL && json_equal(j, back),
		 "the JSON written reads back as the same value");
	json_decref(back);
	free(txt);
	json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FZ_MAX_MESSAGE)
		return 0;
	/* the reply in the CLI's 1 MiB arena, the event in the worker's */
	fz_run(&reply_codec, data, size, FZ_REPLY_ARENA_BYTES);
	fz_run(&event_codec, data, size, FZ_ARENA_BYTES);
	json_round_trip(data, size);
	return 0;
}
