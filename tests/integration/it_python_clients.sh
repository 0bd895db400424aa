#!/usr/bin/env bash
# The Python example clients of scripts/examples (issue 22, point 3) against
# the real workers, each with its own RabbitMQ account:
#   panda_producer.py   two tasks of the sample grid and one job request:
#                       every request's decision event arrives and is
#                       printed, and MariaDB agrees (task rows decided, the
#                       jobs the event placed have their queue)
#   event_subscriber.py sees each of those events once, and prints an event
#                       published twice with one message id only once: a
#                       real event re-published (as the outbox relay does)
#                       and a made-up one sent twice in a row
#   dirac_pilot.py      gets a job submitted with `gridbroker tq submit`; a
#                       second run with the same message id is answered with
#                       the same decision (from the record), and with no
#                       worker running it retries with the same message id
#                       until a worker answers
# The examples need Debian's python3-pika and python3-msgpack: without them
# the test is skipped (77), except under CI (CI=true), which installs them
# (scripts/setup) and so fails instead.
set -euo pipefail
# Debian's interpreter, where python3-pika lives (another python3 may come
# first on PATH); GB_PYTHON overrides it.
PY=${GB_PYTHON:-/usr/bin/python3}
if ! "$PY" -c 'import pika, msgpack' 2>/dev/null; then
	if [[ ${CI:-} == true ]]; then
		echo "FAIL: python3-pika or python3-msgpack is not installed (scripts/setup installs them)" >&2
		exit 1
	fi
	echo "SKIPPED: python3-pika or python3-msgpack is not installed (scripts/setup installs them)" >&2
	exit 77
fi
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

EX=$GB_SRC/scripts/examples
conf() { # conf KIND: the client account's config next to GB_CONFIG
	local c=${GB_CONFIG%.conf}-$1.conf
	[ -f "$c" ] || fail "no $1 account config $c (scripts/services writes it)"
	printf '%s\n' "$c"
}
PANDA=$(conf panda) EVENTS=$(conf events) PILOT=$(conf pilot)

"$GB" -c "$GB_CONFIG" grid load "$GB_SRC/etc/grid-sample.json" >/dev/null || fail "grid load"
"$GB" -c "$GB_CONFIG" dlq --remove -n 1000 >/dev/null

# Two sample tasks and the first sample job request, with this run's ids;
# the job request names no nucleus: the worker takes the task's.
B=$ID_BASE
t1=$((B * 100 + 1)) t2=$((B * 100 + 2))
"$PY" - "$GB_SRC/etc" "$T" "$t1" "$t2" <<'PYEOF'
import json, sys
etc, out, t1, t2 = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
tasks = json.load(open(f"{etc}/tasks-sample.json"))[:2]
tasks[0]["taskID"], tasks[1]["taskID"] = t1, t2
json.dump(tasks, open(f"{out}/tasks.json", "w"))
req = json.load(open(f"{etc}/jobs-sample.json"))[0]
req["taskID"] = t1
for i, job in enumerate(req["jobs"]):
    job["jobID"] = t1 * 1000 + i + 1
json.dump([req], open(f"{out}/jobs.json", "w"))
PYEOF

start_worker w1

# The subscriber first (3 decisions, the made-up event, the sentinel).
"$PY" "$EX/event_subscriber.py" -c "$EVENTS" -n 5 -t 90 'task.*' 'jobs.*' 'it.python.#' \
	>"$T/sub.events" 2>"$T/sub.log" &
GB_PIDS+=($!)
sub=$!
wait_until 20 "grep -q subscribed '$T/sub.log'" || fail "event_subscriber.py did not bind: $(cat "$T/sub.log")"

"$PY" "$EX/panda_producer.py" -c "$PANDA" --tasks "$T/tasks.json" --jobs "$T/jobs.json" -t 60 \
	>"$T/producer.out" 2>"$T/producer.log" || fail "panda_producer.py: $(cat "$T/producer.out" "$T/producer.log")"
cat "$T/producer.out"
for t in "$t1" "$t2"; do
	grep -Eq "^task\.(assigned|pending) +task $t decision" "$T/producer.out" || fail "no task decision printed for $t"
	st=$(sql "select status from tasks where task_id = $t")
	[ "$st" = assigned ] || [ "$st" = pending ] || fail "task $t is '$st' in MariaDB"
done
grep -Eq "^jobs\.(assigned|pending) +task $t1 decision" "$T/producer.out" || fail "no jobs decision printed for $t1"
placed=$(sql "select count(*) from jobs where task_id = $t1 and queue is not null")
printed=$(sed -n "s/^jobs\.assigned .*task $t1 decision [0-9]*: nucleus [^:]*: //p" "$T/producer.out" |
	tr ',' '\n' | awk '{n += $NF} END {print n + 0}')
[ "$placed" = "$printed" ] || fail "jobs of $t1: $placed placed in MariaDB, $printed printed"
log "panda_producer.py: 2 tasks and 1 job request decided, $placed jobs placed"

# Duplicates, published with the application account (the events account
# may not publish): the first real event again with its own message id,
# then a made-up event twice with one id, then a sentinel. One queue is
# FIFO: the sentinel arrives after both copies.
wait_until 20 "[ \$(wc -l <'$T/sub.events') -ge 3 ]" || fail "the subscriber did not print the 3 decisions: $(cat "$T/sub.events")"
first=$(sed -n '1s/.*"messageId":"\([^"]*\)".*/\1/p' "$T/sub.events")
[ -n "$first" ] || fail "no message id in the first event: $(head -1 "$T/sub.events")"
decision=${first#gb-decision-}
"$PY" - "$EX" "$GB_CONFIG" "$decision" "$B" <<'PYEOF' || fail "publishing the duplicates"
import sys
sys.path.insert(0, sys.argv[1])
import gbconn, msgpack, pika
config, decision, base = sys.argv[2], int(sys.argv[3]), sys.argv[4]
params, _ = gbconn.parameters(gbconn.from_file(config), "it_python_clients")
conn = pika.BlockingConnection(params)
ch = conn.channel()
ch.confirm_delivery()
def pub(key, mid, body):
    ch.basic_publish("gridbroker.events", key, msgpack.packb(body), mandatory=True,
                     properties=pika.BasicProperties(message_id=mid, delivery_mode=2,
                                                     content_type="application/msgpack"))
# the real event's message id again (the body marked, so that a copy
# printed would show)
pub("task.assigned", f"gb-decision-{decision}", {"event": "task.assigned", "decisionId": decision, "copy": True})
pub("it.python.dup", f"it-python-dup-{base}", {"event": "it.python.dup", "n": 1})
pub("it.python.dup", f"it-python-dup-{base}", {"event": "it.python.dup", "n": 2})
pub("it.python.end", f"it-python-end-{base}", {"event": "it.python.end"})
conn.close()
PYEOF
wait "$sub" || fail "event_subscriber.py: $(cat "$T/sub.log")"
n=$(wc -l <"$T/sub.events")
ids=$(sed 's/.*"messageId":"\([^"]*\)".*/\1/' "$T/sub.events" | sort | uniq -d)
[ "$n" = 5 ] || fail "event_subscriber.py printed $n events, not 5: $(cat "$T/sub.events")"
[ -z "$ids" ] || fail "event_subscriber.py printed an id twice: $ids"
grep -q "\"messageId\":\"it-python-dup-$B\".*\"n\":1" "$T/sub.events" || fail "the made-up event's first copy is not printed"
grep -q '"copy":true' "$T/sub.events" && fail "the re-published real event was printed again"
[ "$(grep -c 'duplicate .* dropped' "$T/sub.log")" = 2 ] || fail "not 2 duplicates dropped: $(cat "$T/sub.log")"
log "event_subscriber.py: 5 distinct events printed once each, 2 duplicates dropped"

# The pilot: a DIRAC job of its own setup and site.
setup="IT-Python-$B" site="LCG.IT-PYTHON-$B.org"
job() { printf '{"jobID": %s, "ownerDN": "/DC=org/CN=it-python", "ownerGroup": "it_python_%s", "setup": "%s", "cpuTime": 3600, "userPriority": 1, "sites": ["%s"]}' "$1" "$B" "$setup" "$site"; }
j1=$((B * 10 + 1)) j2=$((B * 10 + 2))
printf '{"jobs": [%s, %s]}\n' "$(job "$j1")" "$(job "$j2")" >"$T/tq.json"
"$GB" -c "$GB_CONFIG" tq submit "$T/tq.json" >/dev/null || fail "tq submit"
waiting() { sql "select count(*) from tq_jobs where job_id in ($j1, $j2)"; }
wait_until 30 "[ \"\$(waiting)\" = 2 ]" || fail "jobs not in their task queues: $(waiting)"
sleep 1 # the index refresh
pilot() { # pilot ID MESSAGE-ID [flags...]
	local id=$1 mid=$2; shift 2
	"$PY" "$EX/dirac_pilot.py" -c "$PILOT" --pilot-id "$id" --setup "$setup" --cpu-time 86400 \
		--site "$site" --message-id "$mid" "$@" >"$T/$id.out" 2>"$T/$id.log"
}
pilot p1 "it-python-p1-$B" --timeout-ms 5000 || fail "dirac_pilot.py p1: $(cat "$T/p1.out" "$T/p1.log")"
cat "$T/p1.out"
# TQ-08 draws among the lowest job ids: either job may come first.
got=$(sed -n 's/^matched job \([0-9]*\) .*/\1/p' "$T/p1.out")
case $got in
"$j1") other=$j2 ;;
"$j2") other=$j1 ;;
*) fail "p1 did not get job $j1 or $j2" ;;
esac
d1=$(sed -n 's/.*decision \([0-9]*\),.*/\1/p' "$T/p1.out")
pilot p1again "it-python-p1-$B" --timeout-ms 5000 || fail "dirac_pilot.py p1 again: $(cat "$T/p1again.out" "$T/p1again.log")"
grep -q "^matched job $got .*decision $d1," "$T/p1again.out" || fail "the same message id was not answered with decision $d1: $(cat "$T/p1again.out")"
[ "$(waiting)" = 1 ] || fail "the repeated request took another job: $(waiting) waiting"
log "dirac_pilot.py: job $got matched (decision $d1); the same message id again: the same decision"

# No worker: the first attempts time out (and expire in the queue); the
# pilot sends the same message id again until the worker, started late,
# answers.
stop_all
pilot p2 "it-python-p2-$B" --timeout-ms 1500 --attempts 6 &
p2=$!
sleep 3.5
start_worker w2
wait "$p2" || fail "dirac_pilot.py p2: $(cat "$T/p2.out" "$T/p2.log")"
cat "$T/p2.log" "$T/p2.out"
grep -q "^matched job $other .*request it-python-p2-$B\$" "$T/p2.out" || fail "p2 did not get job $other"
tries=$(grep -c "no reply within 1500 ms (message_id it-python-p2-$B)" "$T/p2.log" || true)
[ "$tries" -ge 2 ] || fail "p2 did not retry: $(cat "$T/p2.log")"
[ "$(sql "select count(*) from pilot_matches where request_id = 'it-python-p2-$B'")" = 1 ] ||
	fail "not one decision for it-python-p2-$B"
log "dirac_pilot.py: $tries attempts timed out, then job $other with the same message id"

"$GB" -c "$GB_CONFIG" dlq --remove -n 1000 >/dev/null
echo "1 passed, 0 failed"
