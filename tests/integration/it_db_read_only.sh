#!/usr/bin/env bash
# MariaDB refusing writes (read_only set for maintenance, or a demoted
# primary) for longer than a worker holds requests (20 s): the workers
# hold what they receive, hand it back to the queue after 20 s, and decide
# everything once writes are taken again. Nothing is dead-lettered (before,
# each refused request went back to the queue at once, again and again,
# and the queue's delivery limit dead-lettered it within a second) and
# nothing is decided twice. Task brokerage (the group commit), DIRAC job
# submission and pilots all go through the outage.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

B=$ID_BASE
N=30 # task.broker requests sent while read-only
group="it_ro_$B" owner="/DC=org/CN=it-ro-$B" setup="IT-RO-$B" site=LCG.IT-RO.org
J=$((B * 100))
job() { printf '{"jobID": %s, "ownerDN": "%s", "ownerGroup": "%s", "setup": "%s", "cpuTime": 3600, "userPriority": 1, "sites": ["%s"]}' \
	"$1" "$owner" "$group" "$setup" "$site"; }

# read_only must not outlive the test, whatever ends it.
writable() { sql "SET GLOBAL read_only = 0" || true; }
# The test's status must survive the trap's own commands (cleanup reads $?).
trap 'rc=$?; writable; [ -n "${PID[w1]:-}" ] && kill -CONT "${PID[w1]}" 2>/dev/null; set +e; (exit $rc); cleanup' EXIT

"$GB" -c "$GB_CONFIG" dlq --remove -n 1000 >/dev/null
start_worker w1
start_worker w2
# Four DIRAC jobs waiting before the outage, for a pilot that comes during it.
{ echo '{"jobs": ['; for i in 1 2 3 4; do [ "$i" -gt 1 ] && echo ,; job $((J + i)); done; echo ']}'; } >"$T/jobs.json"
"$GB" -c "$GB_CONFIG" tq submit "$T/jobs.json" >/dev/null || fail "tq submit"
wait_until 30 "[ \"\$(sql \"select count(*) from tq_jobs where job_id between $((J + 1)) and $((J + 4))\")\" = 4 ]" ||
	fail "4 jobs not waiting before the outage"

sql "SET GLOBAL read_only = 1"
t_ro=$SECONDS
log "read_only set"
subscribe tasks "$N" 120 task.assigned task.pending
for i in $(seq 1 "$N"); do
	task_json $((B + i)) "it.ro.$B.$i" 1 100 300 >"$T/t$i.json"
	"$GB" -c "$GB_CONFIG" task submit "$T/t$i.json" >/dev/null || fail "task submit $i"
done
# Four more submitted during it.
{ echo '{"jobs": ['; for i in 5 6 7 8; do [ "$i" -gt 5 ] && echo ,; job $((J + i)); done; echo ']}'; } >"$T/jobs2.json"
"$GB" -c "$GB_CONFIG" tq submit "$T/jobs2.json" >/dev/null || fail "tq submit during the outage"
# A pilot during the outage: held like the rest, answered when it is over
# (its timeout outlasts the outage).
"$GB" -c "$GB_CONFIG" pilot match --site "$site" --setup "$setup" --cpu-time 100000 \
	--pilot-id "it-ro-$B-held" --timeout-ms 90000 --json >"$T/held.json" 2>&1 &
held=$!
GB_PIDS+=("$held")

wait_until 20 "grep -q 'refuses writes' '$T/w1.log' || grep -q 'refuses writes' '$T/w2.log'" ||
	fail "no worker says the database refuses writes"
# Past the 20 s hold: the workers hand the requests back to the queue.
left=$((25 - (SECONDS - t_ro)))
[ "$left" -gt 0 ] && sleep "$left"
tasks_q="kind = 'task' and subject between '$((B + 1))' and '$((B + N))' and length(subject) = length('$((B + 1))')"
decided=$(sql "select count(*) from decisions where $tasks_q")
[ "$decided" = 0 ] || fail "$decided task decisions written while read-only"
dl=$("$GB" -c "$GB_CONFIG" dlq --json | grep -c routingKey || true)
[ "$dl" = 0 ] || fail "$dl request(s) dead-lettered during the outage: $("$GB" -c "$GB_CONFIG" dlq)"
grep -q 'closing the AMQP connection' "$T/w1.log" "$T/w2.log" ||
	fail "no worker handed its held requests back after 20 s"
log "read-only for $((SECONDS - t_ro)) s: nothing decided, nothing dead-lettered, held requests handed back"

writable
log "read_only cleared"
wait "${SUB[tasks]}" || fail "not every task decided after the outage: $(wc -l <"$T/tasks.events") of $N events"
ids=$(grep -o '"taskID":[0-9]*' "$T/tasks.events" | sort -u | wc -l)
[ "$ids" = "$N" ] || fail "$ids distinct tasks in $N events"
stored() { sql "select count(*) from wms_jobs where job_id between $((J + 5)) and $((J + 8))"; }
wait_until 30 "[ \"\$(stored)\" = 4 ]" || fail "DIRAC jobs submitted during the outage not stored: $(stored) of 4"
wait "$held" || fail "the pilot held through the outage got no answer: $(cat "$T/held.json")"
grep -q '"jobID"' "$T/held.json" || fail "the held pilot got no job: $(cat "$T/held.json")"
twice=$(sql "select count(*) from (select request_id from decisions where $tasks_q group by request_id having count(*) > 1) d")
[ "$(sql "select count(*) from decisions where $tasks_q")" = "$N" ] || fail "not $N task decisions"
[ "$twice" = 0 ] || fail "$twice request(s) decided twice"
dl=$("$GB" -c "$GB_CONFIG" dlq --json | grep -c routingKey || true)
[ "$dl" = 0 ] || fail "$dl request(s) dead-lettered"
log "after the outage: $N tasks decided once each, 4 DIRAC jobs submitted during it stored, the held pilot matched, no dead letter"

# pilot_during NAME: a pilot (id it-ro-B-NAME) asking in the background,
# its answer in $T/NAME.json; its pid in $bp.
pilot_during() {
	"$GB" -c "$GB_CONFIG" pilot match --site "$site" --setup "$setup" --cpu-time 100000 \
		--pilot-id "it-ro-$B-$1" --timeout-ms 30000 --json >"$T/$1.json" 2>&1 &
	bp=$!
	GB_PIDS+=("$bp")
}
# after_refusal NAME TASKID WHAT: once writes are taken again, pilot NAME
# (pid $bp) got a job and task TASKID was decided once.
after_refusal() {
	wait "$bp" || fail "the pilot $3 through a 3 s refusal got no answer: $(cat "$T/$1.json")"
	grep -q '"jobID"' "$T/$1.json" || fail "the pilot $3 got no job: $(cat "$T/$1.json")"
	[ "$(sql "select count(*) from decisions where kind = 'task' and subject = '$2'")" = 1 ] ||
		fail "the task of the refusal with a pilot $3 not decided once"
	log "a 3 s refusal with a pilot $3: the pilot matched and the task decided once, when writes came back"
}

# A short refusal (3 s, well under the 20 s hold) that catches a pilot in
# the match batch: one worker, stopped while a task and a pilot are
# published, so that both arrive in one read. The task's group commit is
# refused at the end of that read, before the pilot batch is decided; the
# batch is kept (unacknowledged, on a live connection) and must be decided
# when writes come back, with nothing else arriving to wake it. Before, it
# waited for the next delivery: the pilot got no answer (CI's it_network
# lost a pilot so, to a MariaDB link cut in the same read).
kill "${PID[w2]}"
wait "${PID[w2]}" || fail "worker w2 did not stop cleanly"
kill -STOP "${PID[w1]}"
task_json $((B + N + 1)) "it.ro.$B.short" 1 100 300 >"$T/short.json"
"$GB" -c "$GB_CONFIG" task submit "$T/short.json" >/dev/null || fail "task submit (short refusal)"
pilot_during batch
sleep 2 # the pilot's request is in the queue
sql "SET GLOBAL read_only = 1"
kill -CONT "${PID[w1]}"
sleep 3
writable
after_refusal batch $((B + N + 1)) "in the match batch"

# The other way a short refusal held a pilot: it arrives once the worker
# knows (a task's commit was refused), is parked, and is replayed into
# the match batch when writes come back; no read ends after the replay to
# decide that batch.
nheld=$(grep -c 'holding requests until it is back' "$T/w1.log")
sql "SET GLOBAL read_only = 1"
task_json $((B + N + 2)) "it.ro.$B.short2" 1 100 300 >"$T/short2.json"
"$GB" -c "$GB_CONFIG" task submit "$T/short2.json" >/dev/null || fail "task submit (second short refusal)"
wait_until 10 "[ \$(grep -c 'holding requests until it is back' '$T/w1.log') -gt $nheld ]" ||
	fail "worker w1 did not find the refusal"
pilot_during parked
sleep 3
writable
after_refusal parked $((B + N + 2)) parked
echo "1 passed, 0 failed"
