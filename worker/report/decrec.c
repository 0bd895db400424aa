/*
** decrec.c — the stored decision record: digest, stage cut reasons and the
** size bound (see decrec.h for the format).
**
** Why a bound: a job brokerage over a few thousand queues explains each
** dropped queue with up to DEC_MAX_REASONS reasons; unbounded, one decision
** per task retry every hour would grow the table by megabytes a day and
** make every `why` slow. PanDA keeps the last 500 log lines and drops the
** rest; we keep the numbers that matter (stage counts, the reasons per
** rule and how many candidates each cut, the survivors' weights) and say
** what was left out, so a truncated record still answers the operator.
*/
#include "report/decrec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "gb_error.h"
#include "base/jsonutil.h"
#include "base/jsonw.h"

/* Canonical form: sorted keys so the digest does not depend on insertion
** order; 17 digits so distinct doubles never print alike. */
#define DR_CANON_FLAGS (JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17))

/* The hash of the canonical text, fed as jw_dump_sink writes it. */
static int digest_part(const char *buf, size_t n, void *arg)
{
	EVP_MD_CTX *ctx = arg;
	if (buf == NULL) /* the text starts again */
		return EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) ? 0 : -1;
	return EVP_DigestUpdate(ctx, buf, n) ? 0 : -1;
}

int dr_digest(const json_t *detail, char out[65])
{
	if (detail == NULL || out == NULL)
		return GB_EINVAL;
	out[0] = '\0';
	/* Hashed as it is written, 16 kB at a time: the canonical text is
	** never held whole (it is as long as the record). */
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	int ok = ctx != NULL && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) &&
		 jw_dump_sink(detail, DR_CANON_FLAGS, digest_part, ctx) == 0 &&
		 EVP_DigestFinal_ex(ctx, md, &mdlen);
	EVP_MD_CTX_free(ctx);
	if (!ok || mdlen != 32)
		return GB_ENOMEM;
	for (unsigned i = 0; i < mdlen; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	return GB_OK;
}

int dr_text_digest(const char *text, char out[65])
{
	static const char key[] = "\"digest\":\"";
	const size_t kl = sizeof(key) - 1;
	out[0] = '\0';
	if (text == NULL)
		return GB_ENOTFOUND;
	/* the record block comes last: the last such key is its digest,
	** found from the end (a record is tens of kB, its block 200 bytes) */
	size_t len = strlen(text);
	const char *hit = NULL;
	for (size_t i = len >= kl ? len - kl + 1 : 0; i-- > 0;)
		if (text[i] == '"' && memcmp(text + i, key, kl) == 0) {
			hit = text + i;
			break;
		}
	if (hit == NULL)
		return GB_ENOTFOUND;
	hit += kl;
	size_t n = strspn(hit, "0123456789abcdef");
	if (n != 64 || hit[64] != '"')
		return GB_ENOTFOUND;
	memcpy(out, hit, 64);
	out[64] = '\0';
	return GB_OK;
}

/* A string member, "" when absent or not a string. */
static const char *sget(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

/* A dropped candidate: has a stage (survivors have stage null). */
static int dropped(const json_t *c)
{
	return json_is_string(json_object_get(c, "stage"));
}

/* The first reason of candidate c (NULL when it has none). */
static const json_t *first_reason(const json_t *c)
{
	return json_array_get(json_object_get(c, "reasons"), 0);
}

/*
** Per (stage, rule, code) of the dropped candidates' first reasons: counts
** and the first one's text. Linear search: a decision has a few dozen
** distinct keys at most, and this runs only on dropped candidates.
*/
struct agg {
	const char *stage, *rule, *code;
	const json_t *example; /* the first candidate with this key */
	size_t count;
};

static size_t aggregate(const json_t *cands, struct agg *g, size_t max,
			const char *only_stage)
{
	size_t ng = 0, i;
	json_t *c;
	json_array_foreach(cands, i, c)
	{
		if (!dropped(c))
			continue;
		const char *st = sget(c, "stage");
		if (only_stage && strcmp(st, only_stage) != 0)
			continue;
		const json_t *r = first_reason(c);
		const char *rule = sget(r, "rule"), *code = sget(r, "code");
		size_t k = 0;
		while (k < ng && !(strcmp(g[k].stage, st) == 0 &&
				   strcmp(g[k].rule, rule) == 0 &&
				   strcmp(g[k].code, code) == 0))
			k++;
		if (k == ng) {
			if (ng == max)
				continue; /* counted nowhere: see the caller */
			g[ng++] = (struct agg){st, rule, code, c, 0};
		}
		g[k].count++;
	}
	return ng;
}

#define DR_MAX_KEYS 256

/* Keys counted at once for every stage's cut (add_cuts): room for as many
** as the stages together could have had one by one. */
#define DR_MAX_CUT_KEYS 4096

/*
** stages[i].cut = the most common (rule, code) among that stage's drops,
** ties to the first seen. One pass over the candidates for all stages:
** counting them again for every stage was an eighth of a job decision's
** CPU (a profile); the groups keep the order of their first candidate,
** which is the order the per-stage count saw them in, so every cut is
** the one it was.
*/
static int add_cuts(json_t *detail)
{
	json_t *stages = json_object_get(detail, "stages");
	json_t *cands = json_object_get(detail, "candidates");
	if (!json_is_array(stages) || !json_is_array(cands))
		return 0;
	struct agg *g = malloc(DR_MAX_CUT_KEYS * sizeof(*g));
	if (g == NULL)
		return 1;
	size_t ng = aggregate(cands, g, DR_MAX_CUT_KEYS, NULL);
	size_t i;
	json_t *s;
	int bad = 0;
	json_array_foreach(stages, i, s)
	{
		if (bad || json_object_get(s, "cut") != NULL)
			continue;
		const char *name = sget(s, "name");
		size_t best = ng;
		for (size_t k = 0; k < ng; k++)
			if (strcmp(g[k].stage, name) == 0 &&
			    (best == ng || g[k].count > g[best].count))
				best = k;
		if (best == ng)
			continue;
		json_t *cut = json_object();
		bad |= cut == NULL;
		bad |= !bad && ju_set(cut, "rule", ju_str(g[best].rule));
		bad |= !bad && ju_set(cut, "code", ju_str(g[best].code));
		bad |= !bad && ju_set(cut, "count",
				      json_integer((json_int_t)g[best].count));
		bad |= !bad && json_object_set_new(s, "cut", cut) != 0;
	}
	free(g);
	return bad;
}

/* Replace the dropped candidates by "rejected" aggregates; returns how
** many candidates left the list, or -1 when out of memory. */
static long shrink_dropped(json_t *detail)
{
	json_t *cands = json_object_get(detail, "candidates");
	if (!json_is_array(cands))
		return 0;
	struct agg *g = malloc(DR_MAX_KEYS * sizeof(*g));
	json_t *rej = json_array(), *keep = json_array();
	if (g == NULL || rej == NULL || keep == NULL) {
		free(g);
		json_decref(rej);
		json_decref(keep);
		return -1;
	}
	size_t ng = aggregate(cands, g, DR_MAX_KEYS, NULL);
	int bad = 0;
	size_t agg_total = 0;
	for (size_t k = 0; !bad && k < ng; k++) {
		json_t *o = json_object();
		const json_t *r = first_reason(g[k].example);
		char ex[600];
		snprintf(ex, sizeof(ex), "%s: %s", sget(g[k].example, "name"),
			 sget(r, "detail"));
		bad |= o == NULL || ju_set(o, "stage", ju_str(g[k].stage)) ||
		       ju_set(o, "rule", ju_str(g[k].rule)) ||
		       ju_set(o, "code", ju_str(g[k].code)) ||
		       ju_set(o, "count", json_integer((json_int_t)g[k].count)) ||
		       ju_set(o, "example", ju_str(ex)) || ju_push(rej, o);
		agg_total += g[k].count;
	}
	long omitted = 0;
	size_t i;
	json_t *c;
	json_array_foreach(cands, i, c)
	{
		if (dropped(c))
			omitted++;
		else if (!bad)
			bad |= json_array_append(keep, c) != 0;
	}
	/* Keys beyond DR_MAX_KEYS (never seen in practice) still count. */
	if (!bad && agg_total < (size_t)omitted) {
		json_t *o = json_object();
		bad |= o == NULL || ju_set(o, "stage", ju_str("")) ||
		       ju_set(o, "rule", ju_str("")) ||
		       ju_set(o, "code", ju_str("other")) ||
		       ju_set(o, "count",
			      json_integer((json_int_t)omitted -
					   (json_int_t)agg_total)) ||
		       ju_set(o, "example", ju_str("")) || ju_push(rej, o);
	}
	free(g);
	if (bad) {
		json_decref(rej);
		json_decref(keep);
		return -1;
	}
	if (json_object_set_new(detail, "rejected", rej) != 0 ||
	    json_object_set_new(detail, "candidates", keep) != 0)
		return -1;
	return omitted;
}

/* Cut array `a` to `n` entries; returns how many went. */
static size_t cut_array(json_t *a, size_t n)
{
	size_t gone = 0;
	while (json_is_array(a) && json_array_size(a) > n) {
		json_array_remove(a, json_array_size(a) - 1);
		gone++;
	}
	return gone;
}

/* Second step: few survivors, short job-id lists. */
static long shrink_lists(json_t *detail)
{
	long omitted = (long)cut_array(json_object_get(detail, "candidates"),
				       DR_KEEP_SURVIVORS);
	size_t ids = cut_array(json_object_get(detail, "unassigned"),
			       DR_KEEP_IDS);
	size_t i;
	json_t *as;
	json_array_foreach(json_object_get(detail, "assignments"), i, as)
		ids += cut_array(json_object_get(as, "jobIDs"), DR_KEEP_IDS);
	if (ids)
		json_object_set_new(detail, "jobIDsOmitted",
				    json_integer((json_int_t)ids));
	return omitted;
}

/* Last resort: keep only what the summary line and header need. */
static json_t *skeleton(json_t *detail)
{
	static const char *const keep[] = {"decision", "nucleus", "retryAfter",
					   "stages", "rejected", "rule",
					   "action", "code", "reason"};
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	for (size_t k = 0; k < sizeof(keep) / sizeof(keep[0]); k++) {
		json_t *v = json_object_get(detail, keep[k]);
		if (v != NULL && json_object_set(o, keep[k], v) != 0) {
			json_decref(o);
			return NULL;
		}
	}
	/* Stages and aggregates are bounded by the engine's tables, but a
	** pathological "rejected" list must not break the bound either. */
	cut_array(json_object_get(o, "rejected"), 64);
	return o;
}

/* Set the record block and serialise; NULL when out of memory. */
static char *dump(json_t *detail, const char *digest, size_t cap,
		  int truncated, long omitted)
{
	json_t *r = json_object();
	if (r == NULL || ju_set(r, "format", json_integer(1)) ||
	    ju_set(r, "digest", ju_str(digest)) ||
	    ju_set(r, "cap", json_integer((json_int_t)cap)) ||
	    ju_set(r, "truncated", json_boolean(truncated)) ||
	    ju_set(r, "omitted", json_integer(omitted)) ||
	    json_object_set_new(detail, "record", r) != 0) {
		json_decref(r);
		return NULL;
	}
	size_t len = 0;
	char *s = jw_dumps(detail, JSON_COMPACT | JSON_REAL_PRECISION(12), &len);
	if (s == NULL)
		return NULL;
	/* "bytes" is the size of what is stored, its own digits included.
	** Jansson writes members in insertion order, so when "record" is
	** detail's last member the text ends with the record's last member
	** and "}}": the member goes in before them, and the size is solved
	** for its digits instead of dumping everything a second time (the
	** dumps were a third of a job decision's CPU). Otherwise (a detail
	** that had "record" already), add it and dump again. */
	void *last = NULL;
	for (void *it = json_object_iter(detail); it;
	     it = json_object_iter_next(detail, it))
		last = it;
	if (last && strcmp(json_object_iter_key(last), "record") == 0 &&
	    len >= 2 && strcmp(s + len - 2, "}}") == 0) {
		static const char key[] = ",\"bytes\":";
		size_t total = 0;
		for (size_t d = 1; d < 21 && total == 0; d++) {
			size_t t = len + (sizeof(key) - 1) + d;
			char digits[24];
			if ((size_t)snprintf(digits, sizeof(digits), "%zu", t) == d)
				total = t;
		}
		char *out = total ? malloc(total + 1) : NULL;
		if (out == NULL ||
		    json_object_set_new(r, "bytes",
					json_integer((json_int_t)total)) != 0) {
			free(out);
			free(s);
			return NULL;
		}
		memcpy(out, s, len - 2);
		snprintf(out + len - 2, total + 1 - (len - 2), "%s%zu}}", key,
			 total);
		free(s);
		return out;
	}
	/* Dump until the size written is the size stored: its digits settle
	** by the second or third time. */
	for (int i = 0; i < 4; i++) {
		free(s);
		if (json_object_set_new(r, "bytes",
					json_integer((json_int_t)len)) != 0)
			return NULL;
		size_t was = len;
		s = jw_dumps(detail, JSON_COMPACT | JSON_REAL_PRECISION(12),
			     &len);
		if (s == NULL || len == was)
			return s;
	}
	return s;
}

/* Room for the "bytes" member added after measuring. */
#define DR_SLACK 32

char *dr_finish(json_t *detail, size_t cap)
{
	return dr_finish_with(detail, NULL, cap);
}

char *dr_finish_with(json_t *detail, json_t *extra, size_t cap)
{
	return dr_finish_keep(detail, extra, cap, NULL);
}

char *dr_finish_keep(json_t *detail, json_t *extra, size_t cap,
		     json_t **kept)
{
	json_t *dumped = detail; /* what `out` is the dump of */
	if (kept)
		*kept = NULL;
	if (detail == NULL) {
		json_decref(extra);
		return NULL;
	}
	char digest[65];
	char *out = NULL;
	long omitted = 0;
	if (cap < 1024 || !json_is_object(detail) ||
	    dr_digest(detail, digest) != GB_OK || add_cuts(detail) ||
	    (extra && json_object_update(detail, extra) != 0))
		goto done;
	out = dump(detail, digest, cap, 0, 0);
	if (out == NULL || strlen(out) + DR_SLACK <= cap)
		goto done;
	free(out);
	out = NULL;
	omitted = shrink_dropped(detail);
	if (omitted < 0)
		goto done;
	out = dump(detail, digest, cap, 1, omitted);
	if (out == NULL || strlen(out) + DR_SLACK <= cap)
		goto done;
	free(out);
	omitted += shrink_lists(detail);
	out = dump(detail, digest, cap, 1, omitted);
	if (out == NULL || strlen(out) + DR_SLACK <= cap)
		goto done;
	free(out);
	out = NULL;
	json_t *sk = skeleton(detail);
	if (sk == NULL)
		goto done;
	json_t *c = json_object_get(detail, "candidates");
	omitted += (long)json_array_size(c);
	out = dump(sk, digest, cap, 1, omitted);
	dumped = sk;
	if (out && strlen(out) > cap) {
		free(out);
		out = NULL;
	}
done:
	if (kept && out)
		*kept = json_incref(dumped);
	if (dumped != detail)
		json_decref(dumped);
	json_decref(extra);
	json_decref(detail);
	return out;
}
