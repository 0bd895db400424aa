/*
** cmd_publish.c — `gridbroker publish ROUTING-KEY FILE|-`: a file's bytes
** unchanged as a request: for replaying a message taken from the
** dead-letter queue, and for testing what the worker does with bytes no
** encoder of ours would produce.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "gb_error.h"

static int cmd_publish(struct cli *cli, int argc, char **argv)
{
	const char *msgid = NULL, *words[2];
	int no_user_id = 0;
	const struct cli_opt opts[] = {
		CLI_WORD("--message-id", NULL, &msgid),
		CLI_FLAG("--no-user-id", NULL, &no_user_id),
		CLI_OPT_END,
	};
	/* "-" is a FILE (stdin), and so is any word that is no option */
	int nw = cli_parse_opts(argc, argv, opts, words, 2, 1);
	if (nw < 0)
		return -nw;
	if (nw != 2)
		return 2;
	const char *key = words[0], *file = words[1];
	FILE *f = strcmp(file, "-") == 0 ? stdin : fopen(file, "rb");
	if (f == NULL) {
		fprintf(stderr, "gridbroker: %s: %s\n", file, strerror(errno));
		return 1;
	}
	size_t cap = (size_t)cli->cfg.max_message_bytes * 2, len = 0;
	unsigned char *buf = malloc(cap + 1);
	if (buf)
		len = fread(buf, 1, cap + 1, f);
	if (f != stdin)
		fclose(f);
	if (buf == NULL || len > cap) {
		fprintf(stderr, "gridbroker: %s: larger than %zu bytes\n", file,
			cap);
		free(buf);
		return 1;
	}
	struct amq_sync *s = cli_open_amqp(cli);
	int rc = GB_EAMQPGONE;
	if (s) {
		/* Without user_id: what a client that does not set it
		** sends (the workers refuse a pilot.match without it when
		** they check pilot accounts, [dirac] owner_check). */
		struct amq_props props = cli_request_props(key, msgid);
		props.user_id = no_user_id ? "" : NULL;
		rc = amq_sync_publish(s, AMQ_EX_REQUESTS, key, &props, buf,
				      len, 10000);
		if (rc == GB_OK)
			printf("published %zu bytes to %s\n", len, key);
		else
			fprintf(stderr, "gridbroker: publish: %s\n",
				amq_sync_why(s, rc));
		amq_sync_close(s);
	}
	free(buf);
	return rc == GB_OK ? 0 : 1;
}

/* clang-format off */
const struct cli_cmd_entry cli_cmd_publish = {"publish", "ROUTING-KEY FILE|- [--message-id ID] [--no-user-id]", "publish a file's bytes unchanged as a request (replay a dead letter, test bad input); with the AMQP user_id of the configured user, or none with --no-user-id", 1, cmd_publish, NULL};
/* clang-format on */
