#!/usr/bin/python3
"""event_subscriber.py — follow gridbroker's events, each printed once.

gridbroker publishes its events (task.assigned, jobs.assigned,
pilot.matched, job.timeout, ...) to the topic exchange gridbroker.events
at least once: a worker that dies between its commit and the publisher
confirm has the event re-published by the outbox relay with the SAME AMQP
message_id (gb-decision-<decisionId>). A subscriber therefore drops
duplicates by message_id. This one keeps the ids it has seen in a bounded
LRU (--remember ids, oldest forgotten first), so memory stays flat however
long it runs; size it for the number of events that can arrive while a
worker fleet restarts.

It binds its own server-named, exclusive queue (amq.gen-..., deleted when
it disconnects) to gridbroker.events with the routing keys given (default
'#': every event), acks each message after printing it, and prints one
JSON line per new event on stdout:

  {"routingKey": "task.assigned", "messageId": "gb-decision-17", "body": {...}}

Log lines (subscribed, duplicate dropped) go to stderr. A message without
a message_id (gridbroker sends none) cannot be deduplicated and is printed.

Account: the events account (run/gridbroker-events.conf): it may declare
amq.gen-* queues and read gridbroker.events, and publish nothing.

Exit codes: 0 stopped by -n/--count, SIGINT or SIGTERM; 1 --timeout
reached before --count events; 2 usage or config error; 3 AMQP error.

Example:
  scripts/examples/event_subscriber.py -c run/gridbroker-events.conf \\
      -n 10 -t 60 task.assigned jobs.assigned
"""

import collections
import json
import signal
import sys
import time

import msgpack
import pika
import pika.exceptions

import gbconn

EXCHANGE = "gridbroker.events"


class SeenIds:
    """A bounded LRU set of message ids: add() says whether an id is new."""

    def __init__(self, capacity):
        self.capacity = capacity
        self._ids = collections.OrderedDict()

    def add(self, message_id):
        """True when message_id was not among the last `capacity` ids seen."""
        if message_id in self._ids:
            self._ids.move_to_end(message_id)
            return False
        self._ids[message_id] = None
        if len(self._ids) > self.capacity:
            self._ids.popitem(last=False)
        return True


class Stop(Exception):
    """Raised by the signal handlers to leave the consume loop."""


def _stop(signum, _frame):
    raise Stop(signal.Signals(signum).name)


def to_json(value):
    """msgpack's bin values (none in gridbroker's events) as hex strings."""
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def main():
    p = gbconn.argument_parser(__doc__)
    gbconn.add_arguments(p)
    p.add_argument("keys", nargs="*", default=["#"],
                   help="routing keys to bind (topic patterns; default '#')")
    p.add_argument("-n", "--count", type=int, default=0,
                   help="exit after this many distinct events (default: run until stopped)")
    p.add_argument("-t", "--timeout", type=float, default=0,
                   help="give up (exit 1) after this many seconds (default: none)")
    p.add_argument("--remember", type=int, default=100000,
                   help="how many message ids the duplicate filter keeps (default 100000)")
    args = p.parse_args()
    if args.count < 0 or args.timeout < 0 or args.remember < 1:
        p.error("--count, --timeout must be >= 0 and --remember >= 1")
    try:
        params, _user = gbconn.parameters(args, "gridbroker event_subscriber.py")
    except gbconn.ConfigError as e:
        print(f"event_subscriber: {e}", file=sys.stderr)
        return gbconn.EXIT_USAGE

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    seen = SeenIds(args.remember)
    printed = 0
    deadline = time.monotonic() + args.timeout if args.timeout else None
    conn = None
    try:
        conn = pika.BlockingConnection(params)
        ch = conn.channel()
        ch.basic_qos(prefetch_count=100)
        q = ch.queue_declare(queue="", exclusive=True, auto_delete=True).method.queue
        for key in args.keys:
            ch.queue_bind(queue=q, exchange=EXCHANGE, routing_key=key)
        print(f"event_subscriber: subscribed to {EXCHANGE} {' '.join(args.keys)} (queue {q})",
              file=sys.stderr, flush=True)
        while not args.count or printed < args.count:
            # Block until a message arrives or the deadline passes: the
            # generator yields (None, None, None) after inactivity_timeout.
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            method, props, body = next(ch.consume(q, inactivity_timeout=wait))
            if method is None:
                print(f"event_subscriber: timeout after {args.timeout:g} s "
                      f"({printed} of {args.count} events)", file=sys.stderr)
                return 1
            mid = props.message_id
            if mid is not None and not seen.add(mid):
                print(f"event_subscriber: duplicate {mid} ({method.routing_key}) dropped",
                      file=sys.stderr, flush=True)
                ch.basic_ack(method.delivery_tag)
                continue
            try:
                event = msgpack.unpackb(body, raw=False)
            except (ValueError, msgpack.UnpackException) as e:
                event = {"undecodable": str(e), "bytes": len(body)}
            print(json.dumps({"routingKey": method.routing_key, "messageId": mid,
                              "body": event}, default=to_json, separators=(",", ":")),
                  flush=True)
            ch.basic_ack(method.delivery_tag)
            printed += 1
        return gbconn.EXIT_OK
    except Stop as s:
        print(f"event_subscriber: {s}, stopping after {printed} events", file=sys.stderr)
        return gbconn.EXIT_OK
    except pika.exceptions.AMQPError as e:
        print(f"event_subscriber: AMQP: {e!r}", file=sys.stderr)
        return gbconn.EXIT_AMQP
    finally:
        if conn is not None and conn.is_open:
            try:
                conn.close()
            except pika.exceptions.AMQPError:
                pass


if __name__ == "__main__":
    sys.exit(main())
