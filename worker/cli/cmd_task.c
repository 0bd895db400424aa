/*
** cmd_task.c — `gridbroker task submit FILE.json`: task.broker requests
** (the task brokerage: which nucleus runs a task) for a file's tasks.
** Parsing is explain/scenario.c's, the wire format codec.c's, the walk
** over the file cli_submit_file's; this file only says how one task
** becomes a request.
*/
#include <stdio.h>

#include "base/arena.h"
#include "cli/cli.h"
#include "codec/codec.h"
#include "explain/scenario.h"
#include "gb_error.h"

/* A file holds one task object, an array of them, or a scenario with a
** "task" member. */
static json_t *pick_tasks(json_t *root)
{
	if (json_is_object(root) && json_object_get(root, "task"))
		return json_object_get(root, "task");
	return root;
}

static int encode_task(json_t *obj, const char *path, struct arena *a,
		       msgpack_sbuffer *sb, struct cli_subject *subj,
		       char *err, size_t errlen)
{
	struct tb_task t;
	int rc = scn_parse_task(obj, path, a, &t, err, errlen);
	if (rc != GB_OK)
		return rc;
	subj->id = t.task_id;
	snprintf(subj->what, sizeof(subj->what), "task %lld", t.task_id);
	snprintf(subj->sent, sizeof(subj->sent), "task %lld", t.task_id);
	return cod_encode_task(&t, sb);
}

static const struct cli_submit task_submit = {
	.type = "task.broker",
	.kind = "task",
	.many = "tasks",
	.one = "task[0]",
	.pick = pick_tasks,
	.encode = encode_task,
};

static int cmd_task_submit(struct cli *cli, int argc, char **argv)
{
	return cli_submit_file(cli, argc, argv, &task_submit);
}

/* clang-format off */
static const struct cli_cmd_entry task_cmds[] = {
	{"submit", "FILE.json [--repeat N]", "publish task.broker requests for a task object, an array of them, or a scenario's task; --repeat sends each N times with the same message id (a producer's retries)", 1, cmd_task_submit, NULL},
	{NULL, NULL, NULL, 0, NULL, NULL},
};
/* clang-format on */

const struct cli_cmd_entry cli_cmd_task = {.name = "task", .subs = task_cmds};
