/*
** cmd_task.c — `gridbroker task submit FILE.json`: task.broker requests
** (the task brokerage: which nucleus runs a task) for a file's tasks.
** Parsing is explain/scenario.c's, the wire format codec.c's; this file
** only wires them to the file, the broker and stdout.
*/
#include <stdio.h>

#include "base/arena.h"
#include "cli/cli.h"
#include "codec/codec.h"
#include "explain/scenario.h"
#include "gb_error.h"

static int submit_one(struct amq_sync *s, json_t *obj, const char *path,
		      size_t idx)
{
	char err[512] = "", field[64];
	snprintf(field, sizeof(field), "%s[%zu]", path, idx);
	struct arena a;
	arena_init(&a, 64u << 20);
	struct tb_task t;
	int rc = scn_parse_task(obj, field, &a, &t, err, sizeof(err));
	if (rc != GB_OK) {
		fprintf(stderr, "gridbroker: %s\n", err);
		arena_free(&a);
		return 1;
	}
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	rc = cod_encode_task(&t, &sb);
	char msgid[128];
	cli_message_id(msgid, sizeof(msgid), "task", t.task_id);
	struct amq_props props = {
		.message_id = msgid,
		.type = "task.broker",
		.content_type = "application/msgpack",
		.persistent = 1,
	};
	if (rc == GB_OK)
		rc = amq_sync_publish(s, AMQ_EX_REQUESTS, "task.broker", &props,
				      sb.data, sb.size, 10000);
	if (rc == GB_OK)
		printf("submitted task %lld (message %s)\n", t.task_id, msgid);
	else
		fprintf(stderr, "gridbroker: submit task %lld: %s\n",
			t.task_id, gb_strerror(rc));
	msgpack_sbuffer_destroy(&sb);
	arena_free(&a);
	return rc == GB_OK ? 0 : 1;
}

static int cmd_task_submit(struct cli *cli, int argc, char **argv)
{
	if (argc != 1)
		return 2;
	char err[1024] = "";
	json_t *root = scn_read_file(argv[0], err, sizeof(err));
	if (root == NULL) {
		fprintf(stderr, "gridbroker: %s\n", err);
		return 1;
	}
	/* A file holds one task object, an array of them, or a scenario
	** with a "task" member. */
	json_t *list = root;
	if (json_is_object(root) && json_object_get(root, "task"))
		list = json_object_get(root, "task");
	struct amq_sync *s = cli_open_amqp(cli);
	int bad = 0;
	if (s == NULL) {
		bad = 1;
	} else if (json_is_array(list)) {
		for (size_t i = 0; i < json_array_size(list); i++)
			bad |= submit_one(s, json_array_get(list, i), "tasks", i);
	} else {
		bad = submit_one(s, list, "task", 0);
	}
	if (s)
		amq_sync_close(s);
	json_decref(root);
	return bad;
}

/* clang-format off */
static const struct cli_cmd_entry task_cmds[] = {
	{"submit", "FILE.json", "publish task.broker requests for a task object, an array of them, or a scenario's task", 1, cmd_task_submit, NULL},
	{NULL, NULL, NULL, 0, NULL, NULL},
};
/* clang-format on */

const struct cli_cmd_entry cli_cmd_task = {.name = "task", .subs = task_cmds};
