/*
** jsonpatch.h — scenario tests start from a valid JSON document and change
** one member to see one error: load_text parses test JSON (duplicate keys
** refused, so a typo in a test cannot hide), apply_patch sets or deletes
** the member at a path. Header-only static helpers for test programs.
*/
#ifndef GB_TEST_JSONPATCH_H
#define GB_TEST_JSONPATCH_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gbtest.h"

static json_t *load_text(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES,
			       &e);
	if (j == NULL)
		fail_msg("bad test JSON: %s", e.text);
	return j;
}

/*
** Set (or, with value NULL, delete) the member at `path` ("queues[0].x", "groups[1].share");
** an index equal to the array's size appends.
*/
static void apply_patch(json_t *root, const char *path, const char *value)
{
	char buf[200];
	snprintf(buf, sizeof(buf), "%s", path);
	json_t *v = value ? load_text(value) : NULL;
	json_t *cur = root;
	char *save = NULL;
	for (char *part = strtok_r(buf, ".", &save); part;) {
		char *next = strtok_r(NULL, ".", &save);
		char *br = strchr(part, '[');
		long idx = -1;
		if (br) {
			idx = strtol(br + 1, NULL, 10);
			*br = '\0';
		}
		if (next == NULL && idx < 0) {
			if (v)
				json_object_set_new(cur, part, v);
			else
				json_object_del(cur, part);
			return;
		}
		cur = json_object_get(cur, part);
		assert_non_null(cur);
		if (idx >= 0 && next == NULL) {
			assert_non_null(v);
			if ((size_t)idx == json_array_size(cur))
				json_array_append_new(cur, v);
			else
				json_array_set_new(cur, (size_t)idx, v);
			return;
		}
		if (idx >= 0)
			cur = json_array_get(cur, (size_t)idx);
		assert_non_null(cur);
		part = next;
	}
}

#endif
