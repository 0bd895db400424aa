#!/usr/bin/python3
"""dirac_pilot.py — ask gridbroker for a job, as a DIRAC pilot's JobAgent does.

Sends one pilot.match request (schemas/messages/pilot.match.md) describing
the slot this pilot holds and waits for the pilot.match.reply over
RabbitMQ's direct reply-to: it consumes the pseudo-queue
amq.rabbitmq.reply-to (no-ack) and publishes the request on the SAME
channel with reply_to = amq.rabbitmq.reply-to, so no reply queue is
declared and nothing is left behind when the pilot goes.

Properties of the request:
  message_id    pilot-<pilotID>-<unix ns>: the idempotency key. It stays the
                same for every retry, so a request the worker already
                decided is answered from its record (the same job) instead
                of claiming a second one.
  expiration    the wait per attempt in ms: a request still queued when the
                pilot stops waiting is dropped by the broker instead of
                taking a job for a pilot that has gone.
  user_id       the account name (RabbitMQ validates it); with pilot grants
                in use, the worker checks the ownerGroup against it.
  correlation_id  new per attempt (<message_id>/<attempt>): the worker answers
                a copy with the same reply address AND correlation id only
                once, so a retry uses a fresh one. A late reply to an earlier
                attempt is as good (same decision) and is taken too.
  content_type application/msgpack, delivery_mode 1 (the pilot retries).

On a timeout it sends the request again (same message_id) up to
--attempts times, reconnecting if the connection was lost. A request the
worker refuses (bad description, a group the account may not claim) is
dead-lettered and gets no reply: the pilot then times out on every
attempt (`gridbroker dlq` names the reason).

Prints the matched job, or the no-match code and reason (TQ-10); with
--json the reply itself as one JSON line.

Account: the pilot account (run/gridbroker-pilot.conf): it may publish
pilot.match only.

Exit codes: 0 matched; 1 no match (the reply says why); 2 usage or config
error; 3 AMQP error, or no reply after every attempt.

Example:
  scripts/examples/dirac_pilot.py -c run/gridbroker-pilot.conf \\
      --pilot-id p-1 --setup LHCb-Production --cpu-time 86400 \\
      --site LCG.CERN.cern --timeout-ms 5000 --attempts 3
"""

import json
import sys
import time

import msgpack
import pika
import pika.exceptions

import gbconn

EXCHANGE = "gridbroker.requests"
REPLY_TO = "amq.rabbitmq.reply-to"
# Fields that take a string or a list of strings (pilot.match.md), by flag.
LIST_FIELDS = {"site": "--site", "gridCE": "--grid-ce", "platform": "--platform",
               "pilotType": "--pilot-type", "jobType": "--job-type", "tags": "--tag",
               "requiredTags": "--required-tag", "ownerGroup": "--owner-group",
               "ownerDN": "--owner-dn"}


def build_request(args):
    """The pilot.match body: only what was given (absent means no constraint)."""
    body = {"pilotID": args.pilot_id, "setup": args.setup, "cpuTime": args.cpu_time}
    for field in LIST_FIELDS:
        values = getattr(args, field)
        if values:
            body[field] = values[0] if len(values) == 1 else values
    return body


class Attempt:
    """One connection with its direct reply-to consumer; collects replies."""

    def __init__(self, params):
        self.conn = pika.BlockingConnection(params)
        self.ch = self.conn.channel()
        self.ch.confirm_delivery()  # a refused publish raises, not vanishes
        self.replies = []
        self.ch.basic_consume(REPLY_TO, self._on_reply, auto_ack=True)

    def _on_reply(self, _ch, _method, props, body):
        self.replies.append((props, body))

    def close(self):
        if self.conn.is_open:
            try:
                self.conn.close()
            except pika.exceptions.AMQPError:
                pass


def wait_reply(att, corr_ids, timeout_s):
    """The first reply whose correlation_id is ours, or None after timeout_s.

    Blocks in process_data_events (no polling); replies to other ids (none
    expected on a private reply-to) are skipped.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        while att.replies:
            props, body = att.replies.pop(0)
            if props.correlation_id in corr_ids:
                return msgpack.unpackb(body, raw=False)
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        att.conn.process_data_events(time_limit=left)


def main():
    p = gbconn.argument_parser(__doc__)
    gbconn.add_arguments(p)
    d = p.add_argument_group("the slot (pilot.match body)")
    d.add_argument("--pilot-id", required=True, help="pilotID (1..255 bytes)")
    d.add_argument("--setup", required=True, help="DIRAC setup, e.g. LHCb-Production")
    d.add_argument("--cpu-time", type=int, required=True,
                   help="CPU time the slot still offers, seconds")
    for field, flag in LIST_FIELDS.items():
        d.add_argument(flag, dest=field, action="append", metavar="VALUE",
                       help=f"{field} (repeat for a list)")
    r = p.add_argument_group("waiting")
    r.add_argument("--timeout-ms", type=int, default=5000,
                   help="wait per attempt, also the request's expiration (default 5000)")
    r.add_argument("--attempts", type=int, default=3,
                   help="how many times to send the request (default 3)")
    r.add_argument("--message-id", help="the request's message_id (default: generated)")
    p.add_argument("--json", action="store_true", help="print the reply as one JSON line")
    args = p.parse_args()
    if args.cpu_time < 1 or args.timeout_ms < 1 or args.attempts < 1:
        p.error("--cpu-time, --timeout-ms and --attempts must be >= 1")
    try:
        params, account = gbconn.parameters(args, f"gridbroker dirac_pilot.py {args.pilot_id}")
    except gbconn.ConfigError as e:
        print(f"dirac_pilot: {e}", file=sys.stderr)
        return gbconn.EXIT_USAGE

    body = msgpack.packb(build_request(args), use_bin_type=True)
    message_id = args.message_id or f"pilot-{args.pilot_id}-{time.time_ns()}"
    corr_ids = set()
    reply = None
    att = None
    try:
        for n in range(1, args.attempts + 1):
            try:
                if att is None or not att.conn.is_open:
                    att = Attempt(params)
                corr = f"{message_id}/{n}"
                corr_ids.add(corr)
                att.ch.basic_publish(
                    EXCHANGE, "pilot.match", body, mandatory=True,
                    properties=pika.BasicProperties(
                        message_id=message_id, correlation_id=corr,
                        reply_to=REPLY_TO, expiration=str(args.timeout_ms),
                        user_id=account, content_type="application/msgpack",
                        delivery_mode=1, type="pilot.match"))
                reply = wait_reply(att, corr_ids, args.timeout_ms / 1000.0)
            except (pika.exceptions.AMQPConnectionError,
                    pika.exceptions.ConnectionClosed,
                    pika.exceptions.StreamLostError) as e:
                # Lost link: the next attempt reconnects. The request (same
                # message_id) may have been decided meanwhile: the retry is
                # then answered from the record.
                print(f"dirac_pilot: attempt {n}: connection lost ({e!r})", file=sys.stderr)
                if att is not None:
                    att.close()
                att = None
                time.sleep(min(1.0, args.timeout_ms / 1000.0))
                continue
            if reply is not None:
                break
            print(f"dirac_pilot: attempt {n}: no reply within {args.timeout_ms} ms "
                  f"(message_id {message_id})", file=sys.stderr, flush=True)
    except (pika.exceptions.UnroutableError, pika.exceptions.NackError) as e:
        print(f"dirac_pilot: pilot.match not accepted by the broker: {e!r}", file=sys.stderr)
        return gbconn.EXIT_AMQP
    except pika.exceptions.AMQPError as e:
        print(f"dirac_pilot: AMQP: {e!r}", file=sys.stderr)
        return gbconn.EXIT_AMQP
    finally:
        if att is not None:
            att.close()

    if reply is None:
        print(f"dirac_pilot: no reply after {args.attempts} attempts (message_id {message_id}); "
              "a refused request is dead-lettered: see `gridbroker dlq`", file=sys.stderr)
        return gbconn.EXIT_AMQP
    if args.json:
        print(json.dumps(reply, separators=(",", ":")))
    elif reply.get("outcome") == "matched":
        print(f"matched job {reply['jobID']} (task queue {reply['tqID']}, owner "
              f"{reply['ownerDN']} / {reply['ownerGroup']}, cpuTime {reply['cpuTime']} s), "
              f"decision {reply['decision']}, request {reply['requestID']}")
    else:
        print(f"no match ({reply.get('code')}): {reply.get('reason')}, "
              f"decision {reply.get('decision')}, request {reply.get('requestID')}")
    return gbconn.EXIT_OK if reply.get("outcome") == "matched" else 1


if __name__ == "__main__":
    sys.exit(main())
