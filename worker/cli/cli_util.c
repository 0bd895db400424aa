/*
** cli_util.c — what several commands of `gridbroker` need: the configured
** database and AMQP connections, request message ids and properties,
** reading and printing JSON, and the submit commands' walk over a file.
** Here so that no command file calls into cli_main.c or into another
** command file.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <msgpack.h>

#include "amqp/amqp.h"
#include "base/arena.h"
#include "cli/cli.h"
#include "explain/scenario.h"
#include "gb_error.h"
#include "store/store.h"

struct st_db *cli_open_db(struct cli *cli)
{
	struct st_db *db = NULL;
	char err[512] = "";
	if (st_open(&cli->cfg, &db, err, sizeof(err)) != GB_OK) {
		fprintf(stderr, "gridbroker: database: %s\n", err);
		return NULL;
	}
	return db;
}

struct amq_sync *cli_open_amqp(struct cli *cli)
{
	char err[512] = "";
	struct amq_sync *s = amq_sync_open(&cli->cfg, err, sizeof(err));
	if (s == NULL)
		fprintf(stderr, "gridbroker: AMQP: %s\n", err);
	return s;
}

void cli_message_id(char *buf, size_t n, const char *kind, long long id)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(buf, n, "%s-%lld-%lld%09ld-%ld", kind, id,
		 (long long)ts.tv_sec, ts.tv_nsec, (long)getpid());
}

json_t *cli_read_json(const char *path)
{
	char err[1024] = "";
	json_t *root = scn_read_file(path, err, sizeof(err));
	if (root == NULL)
		fprintf(stderr, "gridbroker: %s\n", err);
	return root;
}

json_t *cli_read_json_arg(int argc, char **argv, int *status)
{
	*status = 2;
	if (argc != 1)
		return NULL;
	*status = 1;
	return cli_read_json(argv[0]);
}

void cli_print_json(json_t *j, size_t flags, const char *none)
{
	char *txt = j ? json_dumps(j, flags) : NULL;
	printf("%s\n", txt ? txt : none);
	free(txt);
	json_decref(j);
}

struct amq_props cli_request_props(const char *key, const char *msgid)
{
	struct amq_props props = {
		.message_id = msgid,
		.type = key,
		.content_type = "application/msgpack",
		.persistent = 1,
	};
	return props;
}

int cli_publish(struct amq_sync *s, const char *key, const char *msgid,
		const void *body, size_t len)
{
	struct amq_props props = cli_request_props(key, msgid);
	return amq_sync_publish(s, AMQ_EX_REQUESTS, key, &props, body, len,
				10000);
}

static const struct cli_opt *find_opt(const struct cli_opt *o,
				     const char *word)
{
	for (; o->name; o++)
		if (strcmp(word, o->name) == 0 ||
		    (o->alias && strcmp(word, o->alias) == 0))
			return o;
	return NULL;
}

int cli_parse_opts(int argc, char **argv, const struct cli_opt *opts,
		   const char **words, int max, int dash_words)
{
	int n = 0;
	for (int i = 0; i < argc; i++) {
		const struct cli_opt *o = find_opt(opts, argv[i]);
		if (o && o->flag) {
			*o->flag = 1;
		} else if (o && i + 1 < argc) {
			const char *v = argv[++i];
			int status = 0;
			if (o->word)
				*o->word = v;
			else
				status = o->read(v, o->dst);
			if (status != 0)
				return -status;
		} else if ((dash_words || argv[i][0] != '-') && n < max) {
			words[n++] = argv[i];
		} else {
			return -2;
		}
	}
	return n;
}

int cli_opt_long(const char *word, void *dst)
{
	*(long *)dst = strtol(word, NULL, 10);
	return 0;
}

#define CLI_REPEAT_MAX 100 /* copies of one request `--repeat` sends */

/* One object of a submitted file: parsed, encoded, published `repeat`
** times (the same bytes and message id, back to back), and the outcome
** printed. Returns 0 or 1. */
static int submit_one(struct amq_sync *s, json_t *obj, const char *path,
		      const struct cli_submit *how, long repeat)
{
	char err[512] = "";
	struct arena a;
	arena_init(&a, 64u << 20);
	struct cli_subject subj = {0, "", ""};
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	int rc = how->encode(obj, path, &a, &sb, &subj, err, sizeof(err));
	if (rc != GB_OK && subj.what[0] == '\0') {
		fprintf(stderr, "gridbroker: %s\n", err);
	} else {
		char msgid[128];
		cli_message_id(msgid, sizeof(msgid), how->kind, subj.id);
		/* Copies after the first are a producer's retries: one that
		** is unsure whether a request arrived sends it again with the
		** same message id (the message documents invite it). */
		for (long k = 0; rc == GB_OK && k < repeat; k++)
			rc = cli_publish(s, how->type, msgid, sb.data, sb.size);
		if (rc == GB_OK && repeat > 1)
			printf("submitted %s (message %s, %ld times)\n",
			       subj.sent, msgid, repeat);
		else if (rc == GB_OK)
			printf("submitted %s (message %s)\n", subj.sent, msgid);
		else
			fprintf(stderr, "gridbroker: submit %s: %s\n",
				subj.what, amq_sync_why(s, rc));
	}
	msgpack_sbuffer_destroy(&sb);
	arena_free(&a);
	return rc == GB_OK ? 0 : 1;
}

int cli_submit_file(struct cli *cli, int argc, char **argv,
		    const struct cli_submit *how)
{
	long repeat = 1;
	const char *file = NULL;
	const struct cli_opt opts[] = {
		CLI_READ("--repeat", NULL, cli_opt_long, &repeat),
		CLI_OPT_END,
	};
	if (cli_parse_opts(argc, argv, opts, &file, 1, 0) != 1)
		return 2;
	if (repeat < 1 || repeat > CLI_REPEAT_MAX) {
		fprintf(stderr, "gridbroker: --repeat: 1..%d\n",
			CLI_REPEAT_MAX);
		return 2;
	}
	json_t *root = cli_read_json(file);
	if (root == NULL)
		return 1;
	json_t *list = how->pick(root);
	struct amq_sync *s = cli_open_amqp(cli);
	int bad = 0;
	if (s == NULL) {
		bad = 1;
	} else if (json_is_array(list)) {
		for (size_t i = 0; i < json_array_size(list); i++) {
			char path[64];
			snprintf(path, sizeof(path), "%s[%zu]", how->many, i);
			bad |= submit_one(s, json_array_get(list, i), path, how,
					  repeat);
		}
	} else {
		bad = submit_one(s, list, how->one, how, repeat);
	}
	if (s)
		amq_sync_close(s);
	json_decref(root);
	return bad;
}
