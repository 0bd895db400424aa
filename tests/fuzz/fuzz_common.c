/*
** fuzz_common.c — the round trip every fuzz target runs (fuzz.h).
**
** Linked into each target, with libFuzzer and with replay.c alike, so the
** properties a decoder must keep are written once: a refusal is a
** documented code with printable text, and what is accepted survives
** encode → decode → encode unchanged.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

/* FZ_CHECK with the codec's name in front of the property. */
static void fz_expect(const struct fz_codec *c, int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "%s: ", c->what);
		fz_fail(__FILE__, __LINE__, what);
	}
}

int fz_round_trip(const struct fz_codec *c, const uint8_t *data, size_t size,
		  struct arena *a)
{
	struct cod_error err;
	/* both values live in the arena: freed with it, sized by the codec */
	void *v1 = arena_alloc(a, c->obj_size);
	void *v2 = arena_alloc(a, c->obj_size);
	fz_expect(c, v1 != NULL && v2 != NULL, "the arena holds two values");
	int rc = c->decode(data, size, a, v1, &err);
	if (rc != GB_OK) {
		fz_check_refusal(rc, &err);
		return 0;
	}
	if (c->check_decoded)
		c->check_decoded(v1, data, size);
	fz_check_json(data, size);
	msgpack_sbuffer e1, e2;
	msgpack_sbuffer_init(&e1);
	msgpack_sbuffer_init(&e2);
	fz_expect(c, c->encode(v1, &e1) == GB_OK, "a decoded value encodes");
	rc = c->decode((const uint8_t *)e1.data, e1.size, a, v2, &err);
	if (rc != GB_OK)
		fprintf(stderr, "%s: %s: %s\n", c->what, err.field,
			err.problem);
	fz_expect(c, rc == GB_OK, "an encoded value decodes");
	fz_expect(c, c->same(v1, v2), "decode(encode(value)) is the same");
	fz_expect(c, c->encode(v2, &e2) == GB_OK,
		  "a re-decoded value encodes");
	fz_expect(c, fz_same_bytes(&e1, &e2), "the encoding is stable");
	if (c->check_encoded)
		c->check_encoded(&e1, v1, a);
	msgpack_sbuffer_destroy(&e1);
	msgpack_sbuffer_destroy(&e2);
	return 1;
}

int fz_run(const struct fz_codec *c, const uint8_t *data, size_t size,
	   size_t arena_bytes)
{
	if (size > FZ_MAX_MESSAGE)
		return 0;
	struct arena a;
	arena_init(&a, arena_bytes);
	fz_round_trip(c, data, size, &a);
	arena_free(&a);
	return 0;
}

json_t *fz_encoding_json(const msgpack_sbuffer *e)
{
	json_t *j = cod_to_json(e->data, e->size);
	FZ_CHECK(j != NULL, "an encoding converts to JSON");
	return j;
}

void fz_check_parsed(int rc, const char *parser, const char *err)
{
	if (rc != GB_OK)
		fprintf(stderr, "%s: %s\n", parser, err);
	FZ_CHECK(rc == GB_OK,
		 "the CLI's JSON parser accepts what the decoder accepts");
}
