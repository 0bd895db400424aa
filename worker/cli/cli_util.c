/*
** cli_util.c — what several commands of `gridbroker` need: the configured
** database and AMQP connections, request message ids. Here so that no
** command file calls into cli_main.c or into another command file.
*/
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "amqp/amqp.h"
#include "cli/cli.h"
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
