/*
** jsonmsg.h — build msgpack test messages from readable JSON, shared by
** the codec tests: a JSON text (optionally patched at one path) is packed
** as msgpack, with string markers for what JSON cannot say: "#nan",
** "#inf", "#-inf" (doubles), "#bin:N" (N bytes of bin), "#hex:HH.." (raw
** string bytes, e.g. invalid UTF-8) and "#x:N" (a string of N 'x').
** Header-only: static helpers for test programs, one copy per program.
*/
#ifndef GB_TEST_JSONMSG_H
#define GB_TEST_JSONMSG_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <msgpack.h>

#include "gbtest.h"

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c - 'a' + 10;
}

static void pack_string_marker(msgpack_packer *pk, const char *s)
{
	char raw[512];
	size_t n = 0;
	if (strcmp(s, "#nan") == 0) {
		msgpack_pack_double(pk, NAN);
	} else if (strcmp(s, "#inf") == 0 || strcmp(s, "#-inf") == 0) {
		msgpack_pack_double(pk, s[1] == '-' ? -INFINITY : INFINITY);
	} else if (strncmp(s, "#bin:", 5) == 0) {
		n = strtoul(s + 5, NULL, 10);
		msgpack_pack_bin(pk, n);
		msgpack_pack_bin_body(pk, "\x01\x02\x03\x04", n);
	} else if (strncmp(s, "#hex:", 5) == 0) {
		for (const char *p = s + 5; p[0] && p[1]; p += 2)
			raw[n++] = (char)(hexval(p[0]) * 16 + hexval(p[1]));
		msgpack_pack_str_with_body(pk, raw, n);
	} else if (strncmp(s, "#x:", 3) == 0) {
		n = strtoul(s + 3, NULL, 10);
		memset(raw, 'x', n);
		msgpack_pack_str_with_body(pk, raw, n);
	} else {
		msgpack_pack_str_with_body(pk, s, strlen(s));
	}
}

static void pack_json(msgpack_packer *pk, json_t *j)
{
	const char *k;
	json_t *v;
	switch (json_typeof(j)) {
	case JSON_OBJECT:
		msgpack_pack_map(pk, json_object_size(j));
		json_object_foreach(j, k, v) {
			msgpack_pack_str_with_body(pk, k, strlen(k));
			pack_json(pk, v);
		}
		break;
	case JSON_ARRAY:
		msgpack_pack_array(pk, json_array_size(j));
		for (size_t i = 0; i < json_array_size(j); i++)
			pack_json(pk, json_array_get(j, i));
		break;
	case JSON_STRING:
		pack_string_marker(pk, json_string_value(j));
		break;
	case JSON_INTEGER:
		msgpack_pack_long_long(pk, json_integer_value(j));
		break;
	case JSON_REAL:
		msgpack_pack_double(pk, json_real_value(j));
		break;
	case JSON_TRUE:
		msgpack_pack_true(pk);
		break;
	case JSON_FALSE:
		msgpack_pack_false(pk);
		break;
	case JSON_NULL:
		msgpack_pack_nil(pk);
		break;
	}
}

static json_t *parse(const char *text)
{
	json_error_t e;
	json_t *v = json_loads(text, JSON_DECODE_ANY, &e);
	if (v == NULL)
		fail_msg("bad test JSON (%s): %.60s", e.text, text);
	return v;
}

/* Set `path` ("jobs[0].inputFiles[1].size", "items[1].jobID", "taskID")
** in `root` to the JSON `value`, or delete it when `value` is NULL. */
static void apply_patch(json_t *root, const char *path, const char *value)
{
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", path);
	json_t *cur = root;
	char *save = NULL;
	for (char *part = strtok_r(buf, ".", &save); part;) {
		char *next = strtok_r(NULL, ".", &save);
		char *br = strchr(part, '[');
		long idx = br ? strtol(br + 1, NULL, 10) : -1;
		if (br)
			*br = '\0';
		if (next == NULL && idx < 0) {
			if (value == NULL)
				json_object_del(cur, part);
			else
				json_object_set_new(cur, part, parse(value));
			return;
		}
		cur = json_object_get(cur, part);
		assert_non_null(cur);
		if (idx >= 0 && next == NULL) {
			assert_non_null(value);
			json_array_set_new(cur, (size_t)idx, parse(value));
			return;
		}
		if (idx >= 0)
			cur = json_array_get(cur, (size_t)idx);
		assert_non_null(cur);
		part = next;
	}
}

/* Pack `json` (patched when `path` is given) into sb. */
static void make_msg(msgpack_sbuffer *sb, const char *json, const char *path,
		     const char *value)
{
	json_t *root = parse(json);
	if (path)
		apply_patch(root, path, value);
	msgpack_sbuffer_init(sb);
	msgpack_packer pk;
	msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
	pack_json(&pk, root);
	json_decref(root);
}

#endif
