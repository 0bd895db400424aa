/*
** routes.c — the request types a worker consumes, one row each (the
** tmux cmd_table[] shape): task.broker, job.broker, job.submit,
** pilot.match, job.status. Each route file exports its row; this table is
** the only place that names them, and the daemon hands it to wk_init.
** The queues consumed are amqp_topology.c's amq_request_types[]; a
** routing key without a row here is dead-lettered.
**
** To add a request type: a codec for its message, a route file with its
** decode and decide functions and its row, a line here, and the queue in
** amq_request_types[].
*/
#include <stddef.h>

#include "pipeline/pipeline_internal.h"

static const struct wk_route *const table[] = {
	&wk_route_task,
	&wk_route_jobs,
	/* job.submit before pilot.match: its init sets up the index and
	** configuration the match route's batch rests on */
	&wk_route_submit,
	&wk_route_match,
	&wk_route_status,
	NULL,
};

const struct wk_route *const *wk_route_table(void)
{
	return table;
}
