#!/usr/bin/python3
"""panda_producer.py — a PanDA-side producer: broker tasks, then their jobs.

Publishes task.broker requests (schemas/messages/task.broker.md) and
job.broker requests (job.broker.md) to the topic exchange
gridbroker.requests, and follows the decisions on gridbroker.events until
every request it sent has its event, printing one line per decision:

  task.broker  ->  task.assigned (a nucleus) or task.pending (none now)
  job.broker   ->  jobs.assigned (queues)    or jobs.pending (none now)

The order is JEDI's: tasks first; once a task is assigned, its job
requests may leave "nucleus" out (the worker takes it from the task
record). A job request without a nucleus whose task went pending is not
sent (it would be dead-lettered: the task has no nucleus yet).

Each request is published with
  message_id    task-<taskID>-<unix ns>-<pid> / jobs-<taskID>-<unix ns>-<pid>,
                the idempotency key: a request re-sent with the same id is
                decided once, and its event carries it as "requestId", which
                is how this program pairs events with requests;
  content_type  application/msgpack, delivery_mode 2 (persistent),
  type          the routing key,
with publisher confirms and mandatory set, so a request the broker did not
take (no queue bound, a permission refused) is an error, not a silent loss.

The event subscription is made BEFORE the first publish (an exclusive,
server-named queue bound to gridbroker.events), so no decision can be
missed. Events are deduplicated by message_id (delivery is at least once).

Two accounts, as gridbroker's least-privilege setup has them: the panda
account publishes (-c, run/gridbroker-panda.conf) and may read nothing;
the events account reads (--events-config, run/gridbroker-events.conf;
default: the -c file's name with "-panda" replaced by "-events").

Input files are JSON, one request object or an array of them, in the
shape of etc/tasks-sample.json and etc/jobs-sample.json ("description"
keys are dropped, as `gridbroker task submit` does). JSON integers are sent
as msgpack integers and JSON numbers with a fraction as floats.

Exit codes: 0 every request decided; 1 --timeout reached first; 2 usage,
config or input error; 3 AMQP error (connection, refused publish).

Example:
  scripts/examples/panda_producer.py -c run/gridbroker-panda.conf \\
      --tasks etc/tasks-sample.json --jobs my-jobs.json --timeout 120
"""

import json
import os
import sys
import time

import msgpack
import pika
import pika.exceptions

import gbconn

REQUESTS = "gridbroker.requests"
EVENTS = "gridbroker.events"
EVENT_KEYS = ("task.assigned", "task.pending", "jobs.assigned", "jobs.pending")


class InputError(Exception):
    """An input file is not a request or an array of requests."""


def load_requests(path, what):
    """The request objects of a JSON file, without "description" keys."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: {e}") from e
    items = data if isinstance(data, list) else [data]
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("taskID"), int):
            raise InputError(f"{path}: {what} {i}: not an object with an integer taskID")
        item.pop("description", None)
    return items


class Follower:
    """The events side: a private queue on gridbroker.events, read on demand."""

    def __init__(self, params):
        self.conn = pika.BlockingConnection(params)
        self.ch = self.conn.channel()
        self.queue = self.ch.queue_declare(queue="", exclusive=True,
                                           auto_delete=True).method.queue
        for key in EVENT_KEYS:
            self.ch.queue_bind(queue=self.queue, exchange=EVENTS, routing_key=key)
        self.seen = set()  # message ids: this run's events only, so a set suffices

    def wait_for(self, waiting, deadline):
        """Read events until every request id in `waiting` has one or the deadline.

        `waiting` maps request message_id -> taskID and loses each entry
        whose event arrives. Returns the events for them, in arrival order,
        as (routing_key, body). Other producers' events are acked and skipped.
        """
        got = []
        while waiting:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            method, props, body = next(self.ch.consume(self.queue, inactivity_timeout=left))
            if method is None:
                break
            self.ch.basic_ack(method.delivery_tag)
            if props.message_id in self.seen:
                continue
            self.seen.add(props.message_id)
            try:
                event = msgpack.unpackb(body, raw=False)
            except (ValueError, msgpack.UnpackException):
                continue  # not one of gridbroker's events: not ours either
            if isinstance(event, dict) and event.get("requestId") in waiting:
                del waiting[event["requestId"]]
                got.append((method.routing_key, event))
        return got

    def close(self):
        if self.conn.is_open:
            self.conn.close()


def describe(key, ev):
    """One line for a decision event."""
    head = f"{key:<13} task {ev['taskID']} decision {ev['decisionId']}"
    if key == "task.assigned":
        return (f"{head}: nucleus {ev['nucleus']} (weight {ev['weight']:.4g}, "
                f"jobScope {ev['jobScope']})")
    if key == "jobs.assigned":
        parts = [f"{a['queue']} {a['status']} {len(a['jobIDs'])}" for a in ev["assignments"]]
        line = f"{head}: nucleus {ev['nucleus']}: " + ", ".join(parts)
        if ev.get("unassigned"):
            line += f"; {len(ev['unassigned'])} unassigned until {ev['retryAt']}"
        return line
    reasons = ", ".join(f"{r['rule']} {r['code']} x{r['count']}" for r in ev.get("reasons", [])[:3])
    return f"{head}: pending until {ev['retryAt']} ({reasons or 'no candidates'})"


def publish_all(ch, key, requests, prefix):
    """Publish each request with confirms; returns {message_id: taskID}."""
    sent = {}
    for req in requests:
        mid = f"{prefix}-{req['taskID']}-{time.time_ns()}-{os.getpid()}"
        ch.basic_publish(REQUESTS, key, msgpack.packb(req, use_bin_type=True),
                         mandatory=True,
                         properties=pika.BasicProperties(
                             message_id=mid, content_type="application/msgpack",
                             delivery_mode=2, type=key))
        sent[mid] = req["taskID"]
        print(f"sent {key:<11} task {req['taskID']} message_id {mid}", flush=True)
    return sent


def main():
    p = gbconn.argument_parser(__doc__)
    gbconn.add_arguments(p)
    p.add_argument("--events-config",
                   help="config of the account that reads gridbroker.events")
    p.add_argument("--tasks", help="JSON file of task.broker requests")
    p.add_argument("--jobs", help="JSON file of job.broker requests")
    p.add_argument("-t", "--timeout", type=float, default=120,
                   help="seconds to wait for all decisions (default 120)")
    args = p.parse_args()
    if not args.tasks and not args.jobs:
        p.error("nothing to send: give --tasks and/or --jobs")
    if args.timeout <= 0:
        p.error("--timeout must be > 0")
    events_config = args.events_config
    if not events_config and args.config and "-panda" in os.path.basename(args.config):
        d, b = os.path.split(args.config)
        events_config = os.path.join(d, b.replace("-panda", "-events"))
    if not events_config:
        p.error("--events-config is required (the account that may read events)")
    try:
        tasks = load_requests(args.tasks, "task") if args.tasks else []
        jobs = load_requests(args.jobs, "job request") if args.jobs else []
        params, _ = gbconn.parameters(args, "gridbroker panda_producer.py")
        ev_params, _ = gbconn.parameters(gbconn.from_file(events_config),
                                         "gridbroker panda_producer.py events")
    except (InputError, gbconn.ConfigError) as e:
        print(f"panda_producer: {e}", file=sys.stderr)
        return gbconn.EXIT_USAGE

    deadline = time.monotonic() + args.timeout
    follower = conn = None
    missing = {}
    try:
        follower = Follower(ev_params)
        conn = pika.BlockingConnection(params)
        ch = conn.channel()
        ch.confirm_delivery()

        pending_tasks = set()
        if tasks:
            waiting = publish_all(ch, "task.broker", tasks, "task")
            for key, ev in follower.wait_for(waiting, deadline):
                print(describe(key, ev), flush=True)
                if key == "task.pending":
                    pending_tasks.add(ev["taskID"])
            missing.update(waiting)
        send = []
        for req in jobs:
            if req["taskID"] in pending_tasks and not req.get("nucleus"):
                print(f"skip job.broker  task {req['taskID']}: the task is pending "
                      "(no nucleus to place its jobs near)", flush=True)
            elif req["taskID"] in missing.values() and not req.get("nucleus"):
                print(f"skip job.broker  task {req['taskID']}: the task is not decided yet",
                      flush=True)
            else:
                send.append(req)
        if send:
            waiting = publish_all(ch, "job.broker", send, "jobs")
            for key, ev in follower.wait_for(waiting, deadline):
                print(describe(key, ev), flush=True)
            missing.update(waiting)
    except (pika.exceptions.UnroutableError, pika.exceptions.NackError) as e:
        print(f"panda_producer: a request was not accepted by the broker: {e!r}",
              file=sys.stderr)
        return gbconn.EXIT_AMQP
    except pika.exceptions.AMQPError as e:
        print(f"panda_producer: AMQP: {e!r}", file=sys.stderr)
        return gbconn.EXIT_AMQP
    finally:
        for c in (conn, follower):
            try:
                if c is not None:
                    c.close()
            except pika.exceptions.AMQPError:
                pass

    if missing:
        for mid, task in missing.items():
            print(f"panda_producer: no decision for task {task} (message_id {mid}) "
                  f"within {args.timeout:g} s", file=sys.stderr)
        return 1
    return gbconn.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
