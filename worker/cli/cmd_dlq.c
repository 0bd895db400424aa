/*
** cmd_dlq.c — `gridbroker dlq`: the dead-lettered requests, each with the
** field and problem that rejected it (the x-gridbroker-error header the
** worker sets) or the broker's reason, listed and, with --remove, taken
** off the queue.
*/
#include <stdint.h>
#include <stdio.h>

#include "cli/cli.h"
#include "gb_error.h"

static int cmd_dlq(struct cli *cli, int argc, char **argv)
{
	int remove = 0, as_json = 0;
	long max = 100;
	const struct cli_opt opts[] = {
		CLI_READ("-n", NULL, cli_opt_long, &max),
		CLI_FLAG("--remove", NULL, &remove),
		CLI_FLAG("--json", NULL, &as_json),
		CLI_OPT_END,
	};
	int nw = cli_parse_opts(argc, argv, opts, NULL, 0, 0);
	if (nw < 0)
		return -nw;
	struct amq_sync *s = cli_open_amqp(cli);
	if (s == NULL)
		return 1;
	long n = 0;
	uint64_t tags[1024];
	size_t ntags = 0;
	while (n < max) {
		struct amq_message m;
		int rc = amq_sync_get(s, AMQ_Q_DEAD, &m);
		if (rc != GB_OK)
			break;
		if (as_json) {
			json_t *o = json_pack("{s:s, s:s, s:s, s:i}", "routingKey",
					      m.routing_key ? m.routing_key : "",
					      "messageId",
					      m.message_id ? m.message_id : "",
					      "error",
					      m.error_header ? m.error_header
					      : m.death_reason ? m.death_reason : "",
					      "bytes", (json_int_t)m.len);
			cli_print_json(o, JSON_COMPACT, "{}");
		} else {
			char why[300];
			if (m.error_header)
				snprintf(why, sizeof(why), "%s", m.error_header);
			else if (m.death_reason)
				snprintf(why, sizeof(why),
					 "dead-lettered by the broker: %s",
					 m.death_reason);
			else
				snprintf(why, sizeof(why),
					 "(no x-gridbroker-error header)");
			printf("%-14s %-40s %s\n",
			       m.routing_key ? m.routing_key : "?",
			       m.message_id ? m.message_id : "(no id)", why);
		}
		/* Hold every message until the end so basic.get walks the
		** queue instead of seeing the same requeued head again. */
		if (ntags < sizeof(tags) / sizeof(tags[0]))
			tags[ntags++] = m.tag;
		amq_message_free(&m);
		n++;
	}
	for (size_t i = 0; i < ntags; i++)
		amq_sync_settle(s, tags[i], remove);
	if (n == 0)
		printf("dead-letter queue %s is empty\n", AMQ_Q_DEAD);
	amq_sync_close(s);
	return 0;
}

/* clang-format off */
const struct cli_cmd_entry cli_cmd_dlq = {"dlq", "[-n COUNT] [--remove] [--json]", "list dead-lettered requests with the field and problem that rejected them", 1, cmd_dlq, NULL};
/* clang-format on */
