/*
** cmd_pilot.c — `gridbroker pilot match`: ask for a job as a pilot would,
** through the pilot.match RPC, and print the matched job or why none
** (TQ-10's per-filter counts). The pilots come from a file or from the
** command line. `pilot grant|revoke|grants`: the table pilot_grants,
** which RabbitMQ accounts may send pilots of which groups and owners
** (store_grants.h; the workers check it, [dirac] owner_check).
**
** Parsing is explain/dirac_json.c's, the wire format codec_tq.c's; this
** file only wires them to files, the broker and stdout.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/arena.h"
#include "cli/cli.h"
#include "codec/codec.h"
#include "codec/codec_tq.h"
#include "explain/dirac_json.h"
#include "gb_error.h"
#include "store/store_grants.h"

#define CLI_ARENA (256u << 20)
#define CLI_RPC_TIMEOUT_MS 10000

static void print_reply(const struct cdt_pilot *p, const struct cdt_match *m)
{
	printf("pilot %s at %s: ", p->pilot_id, p->site);
	if (m->matched) {
		printf("matched job %lld from TQ %lld (owner %s, group %s, "
		       "cpu segment %lld s)",
		       m->job_id, m->tq_id, m->owner ? m->owner : "?",
		       m->owner_group ? m->owner_group : "?", m->tq_cpu_time);
	} else {
		printf("no job (%s)", m->code ? m->code : "?");
	}
	if (m->decision_id > 0)
		printf("  [decision %lld]", m->decision_id);
	printf("\n  %s\n", m->reason ? m->reason : "");
	if (m->matched)
		return;
	/* TQ-10: the per-filter counts, in the filter table's order. */
	printf("  considered %zu, matched %zu, empty %zu", m->considered,
	       m->matched_tqs, m->empty);
	int first = 1;
	for (int f = 0; f < TQ_NFILTERS; f++) {
		if (m->rejected[f] == 0)
			continue;
		const struct tq_filter_desc *d = tq_filter((enum tq_filter_id)f);
		printf("%s%s (%s) %zu", first ? "; rejected: " : ", ", d->name,
		       d->rule, m->rejected[f]);
		first = 0;
	}
	printf("\n");
}

/* Ask for pilot `given` (the idx-th of n); its message id is `id` (with
** "-<idx+1>" when n > 1), or a fresh one when id is NULL. */
static int match_one(struct amq_sync *s, const struct cdt_pilot *given,
		     size_t idx, size_t n, const char *id, int timeout_ms,
		     int as_json)
{
	char msgid[192];
	if (id != NULL && n > 1)
		snprintf(msgid, sizeof(msgid), "%s-%zu", id, idx + 1);
	else if (id != NULL)
		snprintf(msgid, sizeof(msgid), "%s", id);
	else
		cli_message_id(msgid, sizeof(msgid), "pilot",
			       (long long)idx + 1);
	struct cdt_pilot pilot = *given;
	const struct cdt_pilot *p = &pilot;
	if (pilot.pilot_id == NULL)
		pilot.pilot_id = msgid; /* unique, and says where it came from */
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	int rc = cdt_encode_pilot(p, &sb);
	/* A request still queued when we stop waiting must not take a job
	** for a pilot that has gone: it expires with our wait. */
	char ttl[24];
	snprintf(ttl, sizeof(ttl), "%d", timeout_ms);
	struct amq_props props = cli_request_props("pilot.match", msgid);
	props.expiration = ttl;
	struct amq_message reply;
	memset(&reply, 0, sizeof(reply));
	if (rc == GB_OK)
		rc = amq_sync_rpc(s, AMQ_EX_REQUESTS, "pilot.match", &props,
				  sb.data, sb.size, timeout_ms, &reply);
	msgpack_sbuffer_destroy(&sb);
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: pilot %s: %s%s\n", p->pilot_id,
			amq_sync_why(s, rc),
			rc == GB_ETIMEOUT ? " (is a worker running?)" : "");
		return 1;
	}
	if (as_json) {
		json_t *j = cod_to_json(reply.body, reply.len);
		int ok = j != NULL;
		cli_print_json(j, JSON_COMPACT, "null");
		amq_message_free(&reply);
		return ok ? 0 : 1;
	}
	struct arena a;
	arena_init(&a, 1u << 20);
	struct cdt_match m;
	struct cod_error cerr = {"", ""};
	rc = cdt_decode_reply(reply.body, reply.len, &a, &m, &cerr);
	if (rc == GB_OK)
		print_reply(p, &m);
	else
		fprintf(stderr, "gridbroker: pilot %s: bad reply: %s: %s\n",
			p->pilot_id, cerr.field, cerr.problem);
	arena_free(&a);
	amq_message_free(&reply);
	return rc == GB_OK ? 0 : 1;
}

/* The pilots of a file: one object, an array, or {"pilots": [...]}. */
static int read_pilots(const char *file, struct arena *a,
		       struct cdt_pilot **out, size_t *n)
{
	char err[1024] = "";
	json_t *root = cli_read_json(file);
	if (root == NULL)
		return 1;
	json_t *list = json_is_object(root) && json_object_get(root, "pilots")
			       ? json_object_get(root, "pilots")
			       : root;
	int one = !json_is_array(list);
	size_t cnt = one ? 1 : json_array_size(list);
	int rc = GB_OK;
	if (cnt == 0 || cnt > DJ_MAX_PILOTS) {
		snprintf(err, sizeof(err), "pilots: expected 1 to %d pilots",
			 DJ_MAX_PILOTS);
		rc = GB_ERANGE;
	} else if ((*out = arena_alloc(a, cnt * sizeof(**out))) == NULL) {
		snprintf(err, sizeof(err), "pilots: out of memory");
		rc = GB_ENOMEM;
	}
	for (size_t i = 0; rc == GB_OK && i < cnt; i++) {
		char path[48];
		if (one)
			snprintf(path, sizeof(path), "pilot");
		else
			snprintf(path, sizeof(path), "pilots[%zu]", i);
		rc = dj_parse_pilot(one ? list : json_array_get(list, i), path,
				    a, &(*out)[i], err, sizeof(err));
	}
	if (rc != GB_OK)
		fprintf(stderr, "gridbroker: %s: %s\n", file, err);
	*n = rc == GB_OK ? cnt : 0;
	json_decref(root);
	return rc == GB_OK ? 0 : 1;
}

/* A pilot field from the command line (--site S, ...): not empty. */
static int read_field(const char *word, void *dst)
{
	if (word[0] == '\0')
		return 2;
	*(const char **)dst = word;
	return 0;
}

/* --cpu-time N: 1..CDT_MAX_CPU seconds. */
static int read_cpu_time(const char *word, void *dst)
{
	long long *t = dst;
	char *end = NULL;
	*t = strtoll(word, &end, 10);
	return *end || *t < 1 || *t > CDT_MAX_CPU ? 2 : 0;
}

/* --timeout-ms N: how long to wait for the reply, 1 ms .. 1 h. */
static int read_timeout_ms(const char *word, void *dst)
{
	long *ms = dst;
	char *end = NULL;
	*ms = strtol(word, &end, 10);
	return *end || *ms < 1 || *ms > 3600000 ? 2 : 0;
}

/* One value per command-line option; a file gives lists. */
struct one_pilot {
	const char *pilot_id, *setup, *v[TQ_NPFIELDS], *group, *dn;
	long long cpu_time;
};

static int cmd_pilot_match(struct cli *cli, int argc, char **argv)
{
	struct one_pilot o;
	memset(&o, 0, sizeof(o));
	const char *file = NULL, *msgid = NULL;
	int as_json = 0;
	long timeout_ms = CLI_RPC_TIMEOUT_MS;
	const struct cli_opt opts[] = {
		CLI_READ("--site", NULL, read_field, &o.v[TQ_P_SITE]),
		CLI_READ("--setup", NULL, read_field, &o.setup),
		CLI_READ("--cpu-time", NULL, read_cpu_time, &o.cpu_time),
		CLI_READ("--platform", NULL, read_field, &o.v[TQ_P_PLATFORM]),
		CLI_READ("--grid-ce", NULL, read_field, &o.v[TQ_P_GRID_CE]),
		CLI_READ("--pilot-type", NULL, read_field,
			 &o.v[TQ_P_PILOT_TYPE]),
		CLI_READ("--job-type", NULL, read_field, &o.v[TQ_P_JOB_TYPE]),
		CLI_READ("--tag", NULL, read_field, &o.v[TQ_P_TAG]),
		CLI_READ("--owner-group", NULL, read_field, &o.group),
		CLI_READ("--owner-dn", NULL, read_field, &o.dn),
		CLI_READ("--pilot-id", NULL, read_field, &o.pilot_id),
		CLI_READ("--timeout-ms", NULL, read_timeout_ms, &timeout_ms),
		CLI_WORD("--message-id", NULL, &msgid),
		CLI_FLAG("--json", NULL, &as_json),
		CLI_OPT_END,
	};
	int nw = cli_parse_opts(argc, argv, opts, &file, 1, 0);
	if (nw < 0)
		return -nw;
	/* How many of the pilot's fields the command line gave. */
	int flags = (o.cpu_time != 0) + (o.setup != NULL) + (o.group != NULL) +
		    (o.dn != NULL) + (o.pilot_id != NULL);
	for (int f = 0; f < TQ_NPFIELDS; f++)
		flags += o.v[f] != NULL;
	/* A file, or a description on the command line; not both. */
	if ((file != NULL) == (flags > 0))
		return 2;
	if (!file && (!o.setup || !o.cpu_time || (o.dn && !o.group)))
		return 2;
	/* A message id of at most 190 characters, with room for "-<n>". */
	if (msgid != NULL && (msgid[0] == '\0' || strlen(msgid) > 180))
		return 2;
	struct cdt_pilot one;
	memset(&one, 0, sizeof(one));
	one.pilot_id = o.pilot_id;
	one.d.setup = o.setup;
	one.d.cpu_time = o.cpu_time;
	for (int f = 0; f < TQ_NPFIELDS; f++)
		if (o.v[f] != NULL)
			one.d.want[f] = (struct tq_strset){&o.v[f], 1};
	if (o.group)
		one.d.groups = (struct tq_strset){&o.group, 1};
	if (o.dn)
		one.d.owners = (struct tq_strset){&o.dn, 1};
	if (!file && cdt_pilot_settle(&one, NULL) != GB_OK)
		return 2;
	struct arena a;
	arena_init(&a, CLI_ARENA);
	struct cdt_pilot *pilots = &one;
	size_t n = 1;
	if (file && read_pilots(file, &a, &pilots, &n) != 0) {
		arena_free(&a);
		return 1;
	}
	struct amq_sync *s = cli_open_amqp(cli);
	int bad = s == NULL;
	for (size_t i = 0; s && i < n; i++)
		bad |= match_one(s, &pilots[i], i, n, msgid, (int)timeout_ms,
				 as_json);
	if (s)
		amq_sync_close(s);
	arena_free(&a);
	return bad;
}

/* ---- pilot grants: which accounts may claim which groups ---------------- */

/*
** `pilot grant ACCOUNT GROUP [DN]`: ACCOUNT (a RabbitMQ user) may send
** pilots of GROUP ('*': any group, and generic pilots) for owner DN
** ('*', the default: any owner). The workers read pilot_grants every
** [dirac] owner_check_refresh seconds (store_grants.h).
*/
static int cmd_pilot_grant(struct cli *cli, int argc, char **argv)
{
	const char *w[3] = {NULL, NULL, NULL};
	const struct cli_opt none[] = {CLI_OPT_END};
	int nw = cli_parse_opts(argc, argv, none, w, 3, 0);
	if (nw < 0)
		return -nw;
	if (nw < 2)
		return 2;
	struct st_db *db = cli_open_db(cli);
	if (db == NULL)
		return 1;
	int added = 0;
	int rc = st_grant_add(db, w[0], w[1], w[2], (long long)time(NULL),
			      &added);
	if (rc != GB_OK)
		fprintf(stderr, "gridbroker: pilot grant: %s\n", st_error(db));
	else
		printf("%s %s claim group %s, owner %s\n", w[0],
		       added ? "may now" : "already may", w[1], w[2] ? w[2] : "*");
	st_close(db);
	return rc == GB_OK ? 0 : 1;
}

/* `pilot revoke ACCOUNT [GROUP [DN]]`: the row, the group's rows, or
** every row of the account. */
static int cmd_pilot_revoke(struct cli *cli, int argc, char **argv)
{
	const char *w[3] = {NULL, NULL, NULL};
	const struct cli_opt none[] = {CLI_OPT_END};
	int nw = cli_parse_opts(argc, argv, none, w, 3, 0);
	if (nw < 0)
		return -nw;
	if (nw < 1)
		return 2;
	struct st_db *db = cli_open_db(cli);
	if (db == NULL)
		return 1;
	long long removed = 0;
	int rc = st_grant_remove(db, w[0], w[1], w[2], &removed);
	if (rc != GB_OK)
		fprintf(stderr, "gridbroker: pilot revoke: %s\n", st_error(db));
	else
		printf("%lld grant%s of %s revoked\n", removed,
		       removed == 1 ? "" : "s", w[0]);
	st_close(db);
	return rc == GB_OK ? 0 : 1;
}

/* `pilot grants [ACCOUNT] [--json]`: the rows, by account. */
static int cmd_pilot_grants(struct cli *cli, int argc, char **argv)
{
	int as_json = 0;
	const char *w[1] = {NULL};
	const struct cli_opt opts[] = {
		CLI_FLAG("--json", NULL, &as_json),
		CLI_OPT_END,
	};
	int nw = cli_parse_opts(argc, argv, opts, w, 1, 0);
	if (nw < 0)
		return -nw;
	struct st_db *db = cli_open_db(cli);
	if (db == NULL)
		return 1;
	struct arena a;
	arena_init(&a, CLI_ARENA);
	struct st_grants g;
	int rc = st_grants_load(db, &a, &g);
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: pilot grants: %s\n", st_error(db));
	} else if (as_json) {
		json_t *arr = json_array();
		for (size_t i = 0; arr && i < g.n; i++) {
			const struct st_grant *r = &g.v[i];
			if (w[0] && strcmp(w[0], r->account) != 0)
				continue;
			json_array_append_new(
				arr, json_pack("{s:s, s:s, s:s, s:I}", "account",
					       r->account, "ownerGroup",
					       r->owner_group, "ownerDN",
					       r->owner_dn, "grantedAt",
					       (json_int_t)r->granted_at));
		}
		cli_print_json(arr, JSON_INDENT(2), "[]");
	} else {
		size_t shown = 0;
		printf("%-24s %-20s %s\n", "ACCOUNT", "GROUP", "OWNER DN");
		for (size_t i = 0; i < g.n; i++) {
			const struct st_grant *r = &g.v[i];
			if (w[0] && strcmp(w[0], r->account) != 0)
				continue;
			printf("%-24s %-20s %s\n", r->account, r->owner_group,
			       r->owner_dn);
			shown++;
		}
		printf("%zu grant%s\n", shown, shown == 1 ? "" : "s");
	}
	arena_free(&a);
	st_close(db);
	return rc == GB_OK ? 0 : 1;
}

/* clang-format off */
static const struct cli_cmd_entry pilot_cmds[] = {
	{"match", "FILE.json | --setup X --cpu-time N [--site S] [--platform P] [--grid-ce C] [--pilot-type T] [--job-type J] [--tag T] [--owner-group G [--owner-dn D]] [--pilot-id ID] [--timeout-ms N] [--message-id ID] [--json]", "ask for a job as a pilot (pilot.match RPC) and print the matched job or why none (TQ-10); a file holds a pilot, an array, or {\"pilots\": [...]}, each sent in turn, with lists, ANY, tags, requiredTags and bans as pilot.match takes them; --message-id sends the request under that id (ID-1, ID-2, ... for a file of several), as a pilot asking again does", 1, cmd_pilot_match, NULL},
	{"grant", "ACCOUNT GROUP [DN]", "let RabbitMQ user ACCOUNT send pilots of GROUP (* for any group and generic pilots) for owner DN (default *: any owner); checked by the workers when [dirac] owner_check is on, or auto and any grant exists", 1, cmd_pilot_grant, NULL},
	{"revoke", "ACCOUNT [GROUP [DN]]", "take back one grant, every grant of ACCOUNT for GROUP, or every grant of ACCOUNT", 1, cmd_pilot_revoke, NULL},
	{"grants", "[ACCOUNT] [--json]", "list the pilot grants (table pilot_grants), of one account or all", 1, cmd_pilot_grants, NULL},
	{NULL, NULL, NULL, 0, NULL, NULL},
};
/* clang-format on */

const struct cli_cmd_entry cli_cmd_pilot = {.name = "pilot", .subs = pilot_cmds};
