/*
** gridmodel_sw.c — a queue's published software (the RC-01 dictionaries:
** cmtconfigs, containers, cvmfs, architectures, tags) from JSON, as a grid
** or scenario file gives it and as MariaDB keeps it (queues.sw_json).
**
** Here rather than with the scenario parsers because both the store
** (reading sw_json back for the brokerage) and the scenario files need it,
** and the store must not depend on the explain layer. Strict like every
** reader of files people write: unknown keys are errors, lists and strings
** are bounded (GM_MAX_* in gridmodel.h).
*/
#include "model/gridmodel.h"

#include <string.h>

#include <jansson.h>

#include "base/jsonutil.h"
#include "gb_error.h"

/* ---- published software (RC-01) --------------------------------------- */

#define H struct rc_hw
static const struct ju_fld cpu_flds[] = {
	JU_LIST("arch", H, arch, narch, 0, GM_MAX_SW_LIST),
	JU_LIST("vendor", H, vendor, nvendor, 0, GM_MAX_SW_LIST),
	JU_LIST("instr", H, instr, ninstr, 0, GM_MAX_SW_LIST),
	JU_FLD_END,
};
static const struct ju_fld gpu_flds[] = {
	JU_LIST("vendor", H, vendor, nvendor, 0, GM_MAX_SW_LIST),
	JU_LIST("model", H, model, nmodel, 0, GM_MAX_SW_LIST),
	JU_FLD_END,
};
#undef H
static const char *const hw_types[] = {"cpu", "gpu", NULL};
static const struct ju_fld hw_type = {
	.key = "type", .kind = JU_K_ENUM, .flags = JU_F_REQ, .words = hw_types};
static const char *const hw_extra[] = {"type", NULL};

/* "architectures": at most one cpu and one gpu dictionary (RC-03). */
static int parse_arches(const struct ju_ctx *c, json_t *arr, const char *path,
			struct rc_sw *sw)
{
	if (arr == NULL || json_is_null(arr))
		return GB_OK;
	int rc = ju_want_array(c, arr, path, 8);
	for (size_t i = 0; rc == GB_OK && i < json_array_size(arr); i++) {
		char p[JU_PATH];
		ju_path_idx(p, sizeof(p), path, i);
		json_t *o = json_array_get(arr, i);
		int gpu = 0;
		rc = ju_want_object(c, o, p);
		if (rc == GB_OK)
			rc = ju_fld_parse(c, o, p, &hw_type, &gpu);
		if (rc == GB_OK && (gpu ? sw->gpu : sw->cpu) != NULL)
			return ju_fail(c, GB_EDUP, p,
				       "a second \"%s\" dictionary",
				       hw_types[gpu]);
		struct rc_hw *hw =
			rc == GB_OK ? ju_alloc_n(c, 1, sizeof(*hw)) : NULL;
		if (rc == GB_OK && hw == NULL)
			return ju_fail(c, GB_ENOMEM, p, "out of memory");
		if (rc == GB_OK)
			rc = ju_parse_record(c, o, p, gpu ? gpu_flds : cpu_flds,
					     hw_extra, hw);
		*(gpu ? &sw->gpu : &sw->cpu) = hw;
	}
	return rc;
}

#define T struct rc_tag
static const struct ju_fld tag_flds[] = {
	JU_STR("cmtconfig", T, cmtconfig, 0, ""),
	JU_STR("container_name", T, container_name, 0, ""),
	JU_STR("project", T, project, 0, ""),
	JU_STR("release", T, release, 0, ""),
	JU_LIST("sources", T, sources, nsources, 0, GM_MAX_SOURCES),
	JU_TEXT("tag"),
	JU_FLD_END,
};
#undef T

static int tag_item(const struct ju_ctx *c, json_t *v, const char *path,
		    const char *key, void *elem)
{
	(void)key;
	return ju_parse_record(c, v, path, tag_flds, NULL, elem);
}

#define S struct rc_sw
static const struct ju_fld sw_flds[] = {
	JU_LIST("cmtconfigs", S, cmtconfigs, ncmtconfigs, 0, GM_MAX_SW_LIST),
	JU_LIST("containers", S, containers, ncontainers, 0, GM_MAX_SW_LIST),
	JU_LIST("cvmfs", S, cvmfs, ncvmfs, 0, GM_MAX_SW_LIST),
	JU_FLD_END,
};
#undef S
static const char *const sw_extra[] = {"architectures", "tags", NULL};

int gm_parse_sw(json_t *obj, const char *path, struct arena *a,
		 struct rc_sw *out, char *err, size_t errlen)
{
	struct ju_ctx c = {a, err, errlen, 0, 0};
	if (out == NULL || a == NULL || path == NULL)
		return ju_fail(&c, GB_EINVAL, "", "invalid arguments");
	memset(out, 0, sizeof(*out));
	char f[JU_PATH], g[JU_PATH];
	ju_path_key(f, sizeof(f), path, "architectures");
	ju_path_key(g, sizeof(g), path, "tags");
	void *tags = NULL;
	int rc = ju_parse_record(&c, obj, path, sw_flds, sw_extra, out);
	if (rc == GB_OK)
		rc = parse_arches(&c, json_object_get(obj, "architectures"), f,
				  out);
	if (rc == GB_OK)
		rc = ju_parse_items(&c, json_object_get(obj, "tags"), g, 0,
				    GM_MAX_TAGS, sizeof(struct rc_tag),
				    tag_item, &tags, &out->ntags);
	out->tags = tags;
	return rc;
}

int gm_parse_sw_text(const char *json, const char *path, struct arena *a,
		      struct rc_sw *out, char *err, size_t errlen)
{
	struct ju_ctx c = {a, err, errlen, 0, 0};
	if (json == NULL || path == NULL || a == NULL || out == NULL)
		return ju_fail(&c, GB_EINVAL, path ? path : "",
			       "invalid arguments");
	memset(out, 0, sizeof(*out));
	json_error_t je;
	json_t *root = json_loads(json, JSON_REJECT_DUPLICATES, &je);
	if (root == NULL)
		return ju_fail(&c, GB_EDECODE, path,
			       "invalid JSON at %d:%d: %s", je.line, je.column,
			       je.text);
	int rc = gm_parse_sw(root, path, a, out, err, errlen);
	json_decref(root);
	return rc;
}
