/*
** fuzz.h — what the fuzz targets of tests/fuzz share.
**
** Each target (fuzz_<request>.c) defines LLVMFuzzerTestOneInput and is
** linked either with libFuzzer (scripts/fuzz, clang -fsanitize=fuzzer) or
** with replay.c, whose main() feeds it every file of the corpus, so ctest
** replays the corpus under gcc and under the ASan/UBSan build without
** libFuzzer. The prototype lives here because the project builds with
** -Wmissing-prototypes.
**
** A target does not only check "no crash": every input the decoder
** accepts is encoded again and decoded again, and the two decoded values
** must be equal field by field (and the two encodings byte for byte), so
** a decoder that misreads what the encoder writes, or accepts something
** the encoder refuses, aborts the run. FZ_CHECK names the property that
** broke so a crash report says what went wrong, not only where.
*/
#ifndef GB_FUZZ_H
#define GB_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#include "base/arena.h"
#include "codec/codec.h"
#include "gb_error.h"
#include "taskqueue.h"

/* What the worker gives one request: worker.max_decode_bytes (default
** 8 MiB; wk_on_delivery's arena), so the fuzzers see the production cap. */
#define FZ_ARENA_BYTES 8388608u
/* worker.max_message_bytes (default 1 MiB): the worker dead-letters a
** longer body before any decoder sees it, so the targets skip such inputs. */
#define FZ_MAX_MESSAGE 1048576u
/* The CLI's arena for a pilot.match reply (cmd_pilot.c). */
#define FZ_REPLY_ARENA_BYTES 1048576u

/* libFuzzer's entry point: 0 always (a broken property aborts). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Abort with the file, line and the property that does not hold. */
static inline void fz_fail(const char *file, int line, const char *what)
{
	fprintf(stderr, "%s:%d: fuzz property broken: %s\n", file, line, what);
	fflush(stderr);
	abort();
}

#define FZ_CHECK(cond, what)                                              \
	do {                                                              \
		if (!(cond))                                              \
			fz_fail(__FILE__, __LINE__, (what));              \
	} while (0)

/*
** What a refusal must look like, since the worker puts it in the
** x-gridbroker-error header and a log line: one of the codes the decoders
** document for bad input, a problem that is not empty, and a field and
** problem of printable ASCII only (input bytes reach them through
** cod_sanitize or not at all).
*/
static inline void fz_check_refusal(int rc, const struct cod_error *err)
{
	FZ_CHECK(rc == GB_EDECODE || rc == GB_ETYPE || rc == GB_EMISSING ||
			 rc == GB_ERANGE || rc == GB_ETOOBIG || rc == GB_EDUP ||
			 rc == GB_ENOMEM,
		 "a refusal returns a documented code");
	FZ_CHECK(err->problem[0] != '\0', "a refusal names its problem");
	const char *parts[] = {err->field, err->problem};
	size_t lens[] = {sizeof(err->field), sizeof(err->problem)};
	for (int p = 0; p < 2; p++) {
		const char *s = parts[p];
		FZ_CHECK(memchr(s, '\0', lens[p]) != NULL,
			 "field and problem are NUL-terminated");
		for (; *s; s++)
			FZ_CHECK(*s >= 0x20 && *s < 0x7f,
				 "field and problem are printable ASCII");
	}
}

/* What a decoder accepted, `gridbroker dlq` / `events` can show: the CLI's
** msgpack-to-JSON (cod_to_json) reads it as a JSON object. */
static inline void fz_check_json(const uint8_t *data, size_t size)
{
	json_t *j = cod_to_json(data, size);
	FZ_CHECK(j != NULL && json_is_object(j),
		 "an accepted message converts to a JSON object");
	json_decref(j);
}

/*
** One message kind's decoder and encoder, seen through void pointers so
** that fz_round_trip (fuzz_common.c) runs the same properties on each:
**   decode         the decoder under test; fills *obj (obj_size bytes)
**   encode         the encoder that must take whatever decode accepted
**   same           1 when two decoded values are equal field by field
**   check_decoded  optional: the decoder's own promises about a value it
**                  accepted (ranges, sorted sets), given the input bytes
**   check_encoded  optional: what else must hold of an encoding, e.g.
**                  the CLI's JSON parser reads it as the same value
** `what` names the kind in a broken property's message.
*/
struct fz_codec {
	const char *what;
	size_t obj_size;
	int (*decode)(const uint8_t *buf, size_t len, struct arena *a,
		      void *obj, struct cod_error *err);
	int (*encode)(const void *obj, msgpack_sbuffer *out);
	int (*same)(const void *x, const void *y);
	void (*check_decoded)(const void *obj, const uint8_t *buf, size_t len);
	void (*check_encoded)(const msgpack_sbuffer *e, const void *obj,
			      struct arena *a);
};

/*
** Run codec `c` on one input, decoding into arena `a`. A refusal must pass
** fz_check_refusal; an accepted value must pass check_decoded, convert to
** a JSON object (fz_check_json), encode, decode again to the same value,
** encode again to the same bytes, and pass check_encoded on the first
** encoding. Return 1 if the decoder accepted the input, 0 if it refused.
** Aborts (through FZ_CHECK) when a property breaks.
*/
int fz_round_trip(const struct fz_codec *c, const uint8_t *data, size_t size,
		  struct arena *a);

/* fz_round_trip in a fresh arena of `arena_bytes`, for an input of at
** most FZ_MAX_MESSAGE bytes (the worker dead-letters longer bodies before
** decoding, so they are skipped). Returns 0, libFuzzer's "keep going". */
int fz_run(const struct fz_codec *c, const uint8_t *data, size_t size,
	   size_t arena_bytes);

/* The encoding `e` as a JSON value, for a check_encoded that hands it to
** the CLI's parser: never NULL (aborts instead). */
json_t *fz_encoding_json(const msgpack_sbuffer *e);

/* Abort unless a CLI JSON parser accepted what the decoder accepted
** (rc == GB_OK); print its message `err` from `parser` first. */
void fz_check_parsed(int rc, const char *parser, const char *err);

/* Two decoded strings are equal: both NULL or the same text. */
static inline int fz_str_eq(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

/* Two decoded string lists are equal: same length, same strings in the
** same order. */
static inline int fz_strset_eq(const struct tq_strset *a,
			       const struct tq_strset *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (!fz_str_eq(a->v[i], b->v[i]))
			return 0;
	return 1;
}

/* Two decoded numbers are the same double, bit for bit (-0.0 is not 0.0:
** a float64 round trip keeps the sign, so a change means a misread). */
static inline int fz_dbl_eq(double a, double b)
{
	return memcmp(&a, &b, sizeof(a)) == 0;
}

/* Two encodings are the same bytes. */
static inline int fz_same_bytes(const msgpack_sbuffer *a,
				const msgpack_sbuffer *b)
{
	return a->size == b->size &&
	       (a->size == 0 || memcmp(a->data, b->data, a->size) == 0);
}

#endif
