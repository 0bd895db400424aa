#!/usr/bin/env bash
# Job brokerage through the real worker on the sample grid: the jobs of six
# tasks (etc/jobs-sample.json, given fresh task and job ids and a nucleus)
# are placed by two workers; every request gets one jobs.* event whose
# assignments and unassigned jobs add up; MariaDB's job rows and queue
# counts agree with the events; no job lands on a queue the rules exclude;
# a full-chain request (jobScope nucleus) stays on its nucleus's queues; a
# redelivered message id is decided once; an impossible request goes pending
# with its reasons and is retried by the workers after an hour.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

"$GB" -c "$GB_CONFIG" grid load "$GB_SRC/etc/grid-sample.json" >"$T/load.out" || fail "grid load"
grep -q 'loaded 166 queues' "$T/load.out" || fail "sample grid: $(cat "$T/load.out")"

# The sample requests with ids of this run and the nucleus each was
# designed for (the tasks are not brokered here, so the request names its
# nucleus and gshare). Task 36100005 is a full-chain task: jobScope nucleus.
B=$ID_BASE
sed -e 's/"taskID": 361000\([0-9][0-9]\),/"taskID": '"$B"'\1, NUC_\1,/' \
    -e 's/"jobID": 361000\([0-9][0-9]\)/"jobID": '"$B"'\1/' \
    -e 's/NUC_01,/"nucleus": "CERN-PROD", "gshare": "MC Reco",/' \
    -e 's/NUC_03,/"nucleus": "CERN-PROD", "gshare": "Reprocessing default",/' \
    -e 's/NUC_04,/"nucleus": "RAL-LCG2", "gshare": "Data Derivations",/' \
    -e 's/NUC_05,/"nucleus": "LRZ-LMU", "gshare": "MC Simul", "jobScope": "nucleus",/' \
    -e 's/NUC_08,/"nucleus": "NDGF-T1", "gshare": "Data Derivations",/' \
    -e 's/NUC_10,/"nucleus": "BNL-ATLAS", "gshare": "MC Evgen",/' \
    "$GB_SRC/etc/jobs-sample.json" >"$T/jobs.json"
grep -q NUC_ "$T/jobs.json" && fail "a sample request has no nucleus mapping"
nreq=$(grep -c '"taskID"' "$T/jobs.json")
njobs=$(grep -c '"jobID"' "$T/jobs.json")
[ "$nreq" = 6 ] || fail "expected 6 sample requests, got $nreq"
tasks="${B}01,${B}03,${B}04,${B}05,${B}08,${B}10"

# Queue counts before, over the gshares used (assigned + activated).
counts_sql="select coalesce(sum(assigned + activated), 0) from queue_counts
            where gshare in ('MC Reco', 'Reprocessing default', 'Data Derivations', 'MC Simul', 'MC Evgen')"
before=$(sql "$counts_sql")

start_worker w1
start_worker w2
subscribe j "$nreq" 90 jobs.assigned jobs.pending
"$GB" -c "$GB_CONFIG" job submit "$T/jobs.json" >"$T/submit.out" || fail "job submit"
wait "${SUB[j]}" || fail "not every jobs event arrived: $(cat "$T/j.events")"

# count_ids KEY EVENT: how many job ids the event's KEY arrays hold.
count_ids() { { echo "$2" | grep -o "\"$1\":\[[^]]*\]" | grep -o '[0-9]\{9,\}' || true; } | wc -l; }

# Every request: one event, assignments + unassigned = its jobs.
placed=0
for t in ${tasks//,/ }; do
	ev=$(grep "\"taskID\":${t}[,}]" "$T/j.events") || fail "no event for task $t"
	[ "$(echo "$ev" | wc -l)" = 1 ] || fail "task $t: more than one event"
	want=$(grep -c "\"jobID\": $t" "$T/jobs.json")
	got=$(count_ids jobIDs "$ev")
	un=$(count_ids unassigned "$ev")
	[ $((got + un)) = "$want" ] || fail "task $t: $got assigned + $un unassigned != $want jobs"
	placed=$((placed + got))
	[ "$(sql "select count(*) from jobs where task_id=$t and queue is not null")" = "$got" ] ||
		fail "task $t: job rows disagree with the event ($got placed)"
	[ "$(sql "select count(*) from decisions where kind='jobs' and subject='$t'")" = 1 ] ||
		fail "task $t: expected one decision"
done
[ "$placed" -gt 0 ] || fail "no job was placed"
log "$placed of $njobs jobs placed by two workers, one decision and one event per request"

# The queue counts moved by exactly the jobs placed, in the same commits.
after=$(sql "$counts_sql")
[ $((after - before)) = "$placed" ] || fail "queue counts moved by $((after - before)), jobs placed $placed"

# No job on a queue the filters exclude (PJ-01, PJ-04), and the full-chain
# task stays at its nucleus (FC-06).
bad=$(sql "select count(*) from jobs j join queues q on q.name = j.queue
           where j.task_id in ($tasks) and (q.status <> 'online' or lower(q.name) like '%test%')")
[ "$bad" = 0 ] || fail "$bad job(s) on offline or test queues"
off=$(sql "select count(*) from jobs j join queues q on q.name = j.queue
           where j.task_id = ${B}05 and q.nucleus <> 'LRZ-LMU'")
[ "$off" = 0 ] || fail "full-chain task ${B}05 has $off job(s) off its nucleus"
# Every event's stage counts start at the whole grid.
grep -c '"stages":\[{"name":"candidates","rule":"PJ-01","in":166' "$T/j.events" | grep -qx "$nreq" ||
	fail "events lack the stage counts"

# A redelivery: the stored request body sent again under its original
# message id is recognised and decided once; nothing moves.
t1=${B}01
mid=$(sql "select request_id from job_requests where task_id=$t1")
sql "select hex(body) from job_requests where task_id=$t1" | sed 's/../\\x&/g' | { read -r esc; printf '%b' "$esc"; } >"$T/again.bin"
[ -s "$T/again.bin" ] || fail "no stored body for task $t1"
"$GB" -c "$GB_CONFIG" publish job.broker "$T/again.bin" --message-id "$mid" >/dev/null || fail "republish"
wait_until 20 "grep -q 'request $mid already decided' '$T/w1.log' '$T/w2.log'" || fail "the redelivery was not recognised"
[ "$(sql "select count(*) from decisions where kind='jobs' and subject='$t1'")" = 1 ] ||
	fail "redelivered jobs of task $t1 were decided again"
[ "$(sql "$counts_sql")" = "$after" ] || fail "the redelivery moved the queue counts"
log "a redelivered request changed nothing"

# An impossible request: 100 GB of memory per core. Pending with reasons,
# retried by the workers after an hour (clock seam).
tp=$((B * 100 + 99))
cat >"$T/pending.json" <<EOT
{"taskID": $tp, "nucleus": "CERN-PROD", "gshare": "MC Simul", "currentPriority": 300,
 "processingType": "simul", "coreCount": 1, "ramCount": 100000, "cpuTime": 10, "cpuEfficiency": 90,
 "architecture": "", "swVersion": "", "jobs": [{"jobID": ${tp}001, "nEvents": 100, "inputFiles": []}]}
EOT
subscribe p 1 60 jobs.pending
"$GB" -c "$GB_CONFIG" job submit "$T/pending.json" >/dev/null || fail "submit impossible request"
wait "${SUB[p]}" || fail "no jobs.pending event"
grep -q "\"taskID\":$tp" "$T/p.events" || fail "pending event is for another task"
grep -q '"retryAfter":3600' "$T/p.events" || fail "pending event lacks retryAfter 3600"
grep -q '"rule":"PJ-15","code":"highmemory"' "$T/p.events" || fail "pending event lacks the PJ-15 reason"
[ "$(sql "select status from job_requests where task_id=$tp")" = pending ] || fail "request row not pending"
# Other tests' pending requests fall due at the same clock jump and are
# retried too: wait for this request's own event and decision.
subscribe r 10000 60 jobs.pending
advance_clock 3601
wait_until 60 "grep -q '\"taskID\":$tp' '$T/r.events'" || fail "the pending request was not retried after an hour"
jdecisions() { sql "select count(*) from decisions where kind='jobs' and subject='$tp'"; }
wait_until 10 "[ \"\$(jdecisions)\" = 2 ]" || fail "expected two decisions after the retry, found $(jdecisions)"
[ "$(sql "select status from jobs where job_id=${tp}001")" = pending ] || fail "the impossible job is not pending"
log "impossible request pending with PJ-15 and retried after 3601 s"
echo "1 passed, 0 failed"
