#!/usr/bin/env bash
# A producer's retry does not duplicate the event. A producer unsure
# whether a request arrived sends it again with the same message id; here
# every request is sent twice back to back (`--repeat 2`: the same bytes
# and message id on one connection, the second right after the first's
# confirm), 100 task.broker and then 100 job.broker requests, to two
# workers. The copies are first deliveries (not flagged redelivered), so
# the copy that finds the request decided must leave the events to the
# deciding worker, which holds their lease: exactly one task.assigned/
# task.pending event per task request and one jobs.* event per job
# request, each with its own decisionId. Before the fix (such a copy
# claimed the rows "at once, whatever the lease") this test counted
# nearly twice as many events. Then pilots ask twice (see below).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

N=100
B=$ID_BASE
"$GB" -c "$GB_CONFIG" grid load "$GB_SRC/etc/grid-sample.json" >"$T/load.out" || fail "grid load"

# N tasks (ids B*1000 + 0..N-1) and N job requests of one evgen job each
# (tasks B*1000 + 200 + 0..N-1, at BNL-ATLAS in MC Evgen).
python3 - "$GB_SRC/etc/jobs-sample.json" "$B" "$N" "$T" <<'PY' || fail "requests"
import copy, json, sys
src, b, n, t = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
tasks = [{"taskID": b * 1000 + i, "gshare": "MC 16 simul", "taskPriority": 300,
          "ioIntensity": 500, "t1Weight": 0, "inputPreStaging": False,
          "taskBrokerOnMaster": False, "fullChain": None, "parentNucleus": None,
          "normalizedExpOutSize": 0.25,
          "inputDatasets": [{"name": "it.retry.%d.%d" % (b, i), "primary": True,
                             "size": 2000, "files": 500, "onTape": False}]}
         for i in range(n)]
json.dump(tasks, open(t + "/tasks.json", "w"))
evgen = [r for r in json.load(open(src)) if r.get("processingType") == "evgen"][0]
reqs = []
for i in range(n):
    r = copy.deepcopy(evgen)
    r.pop("description", None)
    r["taskID"] = b * 1000 + 200 + i
    r["nucleus"] = "BNL-ATLAS"
    r["gshare"] = "MC Evgen"
    r["jobs"] = [dict(r["jobs"][0], jobID=r["taskID"] * 100)]
    reqs.append(r)
json.dump(reqs, open(t + "/jobs.json", "w"))
PY

start_worker w1
start_worker w2

# dups: how many copies the workers found decided already ("request ...
# already decided" once per such copy, whichever copy came second).
dups() { cat "$T/w1.log" "$T/w2.log" | grep -c 'already decided' || true; }

# round NAME SUBMIT-CMD LO HI KEYS...: submit every request twice, wait
# until every copy is handled and every event of the range is marked sent,
# then count the events of tasks LO..HI.
round() {
	local name=$1 cmd=$2 lo=$3 hi=$4 want_dups; shift 4
	want_dups=$(($(dups) + N))
	# No count: the subscriber runs until stopped, so extra events show.
	subscribe "$name" 0 600 "$@"
	"$GB" -c "$GB_CONFIG" "$cmd" submit "$T/$name.json" --repeat 2 >"$T/$name.submit" ||
		fail "$cmd submit"
	[ "$(grep -c '2 times' "$T/$name.submit")" = "$N" ] || fail "$cmd submit: $(head -3 "$T/$name.submit")"
	local decided="select count(*) from decisions where subject between $lo and $hi"
	local unsent="select count(*) from outbox o join decisions d on o.message_id = concat('gb-decision-', d.id)
	              where d.subject between $lo and $hi and o.sent_at is null"
	wait_until 60 "[ \"\$(sql \"$decided\")\" = $N ]" ||
		fail "$name: $(sql "$decided") of $N requests decided"
	wait_until 30 "[ \"\$(dups)\" -ge $want_dups ]" ||
		fail "$name: $(( $(dups) - want_dups + N )) of $N second copies seen by the workers"
	wait_until 30 "[ \"\$(sql \"$unsent\")\" = 0 ]" || fail "$name: events left unsent"
	# A copy's publish, if any, went out before its delivery was done;
	# give its confirm and the subscriber a moment.
	sleep 2
	kill "${SUB[$name]}" 2>/dev/null || true
	wait "${SUB[$name]}" 2>/dev/null || true

	# The events of this range: taskID LO..HI.
	local ev=$T/$name.mine
	grep -o '"taskID":[0-9]*' "$T/$name.events" | cut -d: -f2 |
		awk -v lo="$lo" -v hi="$hi" '$1 >= lo && $1 <= hi' >"$ev.tasks" || true
	local total tasks dec
	total=$(wc -l <"$ev.tasks")
	tasks=$(sort -u "$ev.tasks" | wc -l)
	dec=$(grep -E "\"taskID\":($(seq -s '|' "$lo" "$hi"))[,}]" "$T/$name.events" |
		grep -o '"decisionId":[0-9]*' | sort -u | wc -l)
	log "$name: $N requests sent twice: $total events, $tasks tasks, $dec distinct decisionIds"
	[ "$total" = "$N" ] || fail "$name: $total events for $N requests sent twice (want $N)"
	[ "$tasks" = "$N" ] || fail "$name: events for $tasks tasks, want $N"
	[ "$dec" = "$N" ] || fail "$name: $dec distinct decisionIds, want $N"
	[ "$(sql "$decided")" = "$N" ] || fail "$name: $(sql "$decided") decisions, want $N"
}

round tasks task $((B * 1000)) $((B * 1000 + N - 1)) task.assigned task.pending
round jobs job $((B * 1000 + 200)) $((B * 1000 + 200 + N - 1)) jobs.assigned jobs.pending

# Pilots that ask again (pilot.match.md: a pilot that sends its request
# again with the same message id gets the recorded decision). NP pilots
# each ask twice with one message id, from two connections (two reply
# addresses), while one worker is stopped, so both copies of each wait in
# the worker's prefetch and land in one batch. Both copies must get the
# same answer, one decision each, and its event once. Before the copies
# with another reply address were kept aside, the second was acked
# without a reply and its pilot timed out.
NP=20
stop_all
start_worker p1
setup="IT-Retry-$B" site=LCG.IT-RETRY.org
{
	echo '{"jobs": ['
	for i in $(seq 1 $((NP / 2))); do
		[ "$i" -gt 1 ] && echo ,
		printf '{"jobID": %s, "ownerDN": "/DC=org/CN=it-retry-%s", "ownerGroup": "it_retry_%s", "setup": "%s", "cpuTime": 3600, "userPriority": 1, "sites": ["%s"]}' \
			$((B * 100 + i)) "$B" "$B" "$setup" "$site"
	done
	echo ']}'
} >"$T/dirac.json"
"$GB" -c "$GB_CONFIG" tq submit "$T/dirac.json" >/dev/null || fail "tq submit"
waiting="select count(*) from tq_jobs where job_id between $((B * 100 + 1)) and $((B * 100 + NP / 2))"
wait_until 30 "[ \"\$(sql \"$waiting\")\" = $((NP / 2)) ]" || fail "$(sql "$waiting") of $((NP / 2)) DIRAC jobs waiting"
sleep 0.5 # an index refresh or two
subscribe pm 0 600 pilot.matched pilot.nomatch
kill -STOP "${PID[p1]}"
pids=()
for i in $(seq 1 $NP); do
	for c in a b; do
		"$GB" -c "$GB_CONFIG" pilot match --site "$site" --setup "$setup" --cpu-time 3000000 \
			--message-id "it-retry-$B-pilot-$i" --timeout-ms 30000 --json >"$T/pm-$i-$c.json" 2>&1 &
		pids+=($!)
	done
done
held() { "$GB_SRC/scripts/services" rabbitmqctl list_queues -q -p gridbroker name messages 2>/dev/null |
	awk '$1 == "gridbroker.pilot.match" { print $2 }'; }
wait_until 30 "[ \"\$(held)\" = $((2 * NP)) ]" || { kill -CONT "${PID[p1]}"; fail "$(held) of $((2 * NP)) pilot requests queued"; }
kill -CONT "${PID[p1]}"
bad=0
for pid in "${pids[@]}"; do wait "$pid" || bad=$((bad + 1)); done
[ "$bad" = 0 ] || fail "$bad of $((2 * NP)) pilot requests got no reply: $(cat "$T"/pm-*.json | grep -v decision | head -3)"
for i in $(seq 1 $NP); do
	da=$(grep -o '"decision":[0-9]*' "$T/pm-$i-a.json") || fail "pilot $i: no decision in $(cat "$T/pm-$i-a.json")"
	db=$(grep -o '"decision":[0-9]*' "$T/pm-$i-b.json") || fail "pilot $i: no decision in $(cat "$T/pm-$i-b.json")"
	[ "$da" = "$db" ] || fail "pilot $i asked twice, answered $da and $db"
done
copies=$(grep -c 'twice in one batch, with another reply address' "$T/p1.log" || true)
recorded="select count(*) from pilot_matches where request_id like 'it-retry-$B-pilot-%'"
[ "$(sql "$recorded")" = $NP ] || fail "$(sql "$recorded") pilot decisions recorded, want $NP"
wait_until 10 "[ \"\$(grep -o '\"requestID\":\"it-retry-$B-pilot-[0-9]*\"' '$T/pm.events' | wc -l)\" -ge $NP ]" ||
	fail "pilot events: $(grep -o "\"requestID\":\"it-retry-$B-pilot-" "$T/pm.events" | wc -l) items of $NP"
sleep 1
kill "${SUB[pm]}" 2>/dev/null || true
wait "${SUB[pm]}" 2>/dev/null || true
items=$(grep -o "\"requestID\":\"it-retry-$B-pilot-[0-9]*\"" "$T/pm.events" | wc -l)
log "pilots: $NP asked twice ($copies pair(s) in one batch): $((2 * NP)) replies, same decision per pair, $NP decisions, $items event items"
[ "$items" = $NP ] || fail "$items pilot event items for $NP pilots asking twice (want $NP)"
echo "3 passed, 0 failed"
