/*
** contract_decode.c — run the worker's own decoders over message bodies
** given as JSON, for the AsyncAPI contract check (scripts/check-asyncapi).
**
** Why: schemas/asyncapi.yaml is only a contract if what it calls valid is
** what the workers accept. The checker writes each example of a decoded
** message (and each copy with one field made invalid) as JSON; this
** program packs each as msgpack exactly as a producer would (integers as
** integers, other numbers as float64, null as nil) and hands it to the
** decoder the worker's route uses, then prints one line per case:
**   ok
**   err <code> <field>\t<problem>
** Input: one JSON array of {"decoder": name, "payload": value} on stdin
** or in the file argv[1]. Decoders: task.broker, job.broker, job.submit,
** pilot.match, job.status.dirac and job.status.panda (the two forms of
** job.status, which the route tells apart by "system"), pilot.match.reply,
** pilot.matched, pilot.nomatch.
** Exit 0 when every case was run, 2 on bad input.
*/
#include <stdio.h>
#include <string.h>

#include <jansson.h>
#include <msgpack.h>

#include "base/arena.h"
#include "codec/codec.h"
#include "codec/codec_jobs.h"
#include "codec/codec_panda.h"
#include "codec/codec_tq.h"
#include "gb_error.h"

#define ARENA_CAP (64u << 20)

static int pack(msgpack_packer *pk, const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *k;
		json_t *x;
		if (msgpack_pack_map(pk, json_object_size(v)))
			return -1;
		json_object_foreach((json_t *)v, k, x) {
			if (msgpack_pack_str_with_body(pk, k, strlen(k)) ||
			    pack(pk, x))
				return -1;
		}
		return 0;
	}
	case JSON_ARRAY: {
		size_t i;
		json_t *x;
		if (msgpack_pack_array(pk, json_array_size(v)))
			return -1;
		json_array_foreach(v, i, x) {
			if (pack(pk, x))
				return -1;
		}
		return 0;
	}
	case JSON_STRING:
		return msgpack_pack_str_with_body(pk, json_string_value(v),
						  json_string_length(v));
	case JSON_INTEGER:
		return msgpack_pack_int64(pk, json_integer_value(v));
	case JSON_REAL:
		return msgpack_pack_double(pk, json_real_value(v));
	case JSON_TRUE:
		return msgpack_pack_true(pk);
	case JSON_FALSE:
		return msgpack_pack_false(pk);
	case JSON_NULL:
		return msgpack_pack_nil(pk);
	}
	return -1;
}

/* Decode `buf` with the decoder `name` uses in the worker; 0 or its error,
** GB_EINVAL with err->problem set for an unknown name. */
static int decode(const char *name, const void *buf, size_t len,
		  struct arena *a, struct cod_error *err)
{
	if (strcmp(name, "task.broker") == 0) {
		struct tb_task t;
		return cod_decode_task(buf, len, a, &t, err);
	}
	if (strcmp(name, "job.broker") == 0) {
		struct gm_request r;
		struct cdj_extra x;
		return cdj_decode_request(buf, len, a, &r, &x, err);
	}
	if (strcmp(name, "job.submit") == 0) {
		struct cdt_submit s;
		return cdt_decode_submit(buf, len, a, &s, err);
	}
	if (strcmp(name, "pilot.match") == 0) {
		struct cdt_pilot p;
		return cdt_decode_pilot(buf, len, a, &p, err);
	}
	if (strcmp(name, "job.status.dirac") == 0) {
		struct cdt_status s;
		return cdt_decode_status(buf, len, a, &s, err);
	}
	if (strcmp(name, "job.status.panda") == 0) {
		struct cdp_status s;
		return cdp_decode_status(buf, len, a, &s, err);
	}
	if (strcmp(name, "pilot.match.reply") == 0) {
		struct cdt_match m;
		return cdt_decode_reply(buf, len, a, &m, err);
	}
	if (strcmp(name, "pilot.matched") == 0 ||
	    strcmp(name, "pilot.nomatch") == 0) {
		struct cdt_match *items;
		size_t n;
		return cdt_decode_match_event(buf, len, a, &items, &n, err);
	}
	snprintf(err->problem, sizeof(err->problem), "no decoder '%s'", name);
	return GB_EINVAL;
}

int main(int argc, char **argv)
{
	json_error_t je;
	json_t *cases = argc > 1 ? json_load_file(argv[1], 0, &je)
				 : json_loadf(stdin, 0, &je);
	if (!cases || !json_is_array(cases)) {
		fprintf(stderr, "contract_decode: not a JSON array: %s\n",
			cases ? "" : je.text);
		return 2;
	}
	size_t i;
	json_t *c;
	json_array_foreach(cases, i, c) {
		const char *name = json_string_value(json_object_get(c, "decoder"));
		const json_t *payload = json_object_get(c, "payload");
		if (!name || !payload) {
			fprintf(stderr, "contract_decode: case %zu lacks decoder "
				"or payload\n", i);
			json_decref(cases);
			return 2;
		}
		msgpack_sbuffer sb;
		msgpack_packer pk;
		msgpack_sbuffer_init(&sb);
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		struct cod_error err = {{0}, {0}};
		int rc = pack(&pk, payload);
		if (rc == 0) {
			struct arena a;
			arena_init(&a, ARENA_CAP);
			rc = decode(name, sb.data, sb.size, &a, &err);
			arena_free(&a);
		} else {
			snprintf(err.problem, sizeof(err.problem), "cannot pack");
		}
		msgpack_sbuffer_destroy(&sb);
		if (rc == 0)
			printf("ok\n");
		else
			printf("err %d %s\t%s\n", rc, err.field, err.problem);
	}
	json_decref(cases);
	return 0;
}
