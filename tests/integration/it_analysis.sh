#!/usr/bin/env bash
# The analysis brokerage through the real worker on the sample grid: the
# three analysis tasks of etc/analysis-sample.json (given ids of this run,
# with the sample grid's task classes moved to them). alice's class A task
# is brokered: one jobs.assigned event, its jobs on queues whose storage
# holds the input (AJ-08), at most 10 queues (AJ-28), all analysis or
# unified (AJ-05). bob's class C task is throttled by the User Analysis
# share at 93 % > 90 % (AJ-04) and carol's by her disk quota (AJ-03): one
# task.throttled each with those numbers, their jobs wait as throttled
# without a queue, and the workers try them again after 20 minutes
# (moved through the clock seam): throttled again, a second event each.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

B=$ID_BASE
sed -e "s/\"3800000\([0-9]\)\": \"/\"${B}0\1\": \"/g" "$GB_SRC/etc/grid-sample.json" >"$T/grid.json"
sed -e "s/\"taskID\": 3800000\([0-9]\)/\"taskID\": ${B}0\1/" \
    -e "s/\"jobID\": 3800000\([0-9]\)/\"jobID\": ${B}0\1/" \
    "$GB_SRC/etc/analysis-sample.json" >"$T/anal.json"
grep -q "\"${B}02\": \"C\"" "$T/grid.json" || fail "task classes not moved"
"$GB" -c "$GB_CONFIG" grid load "$T/grid.json" >"$T/load.out" || fail "grid load: $(cat "$T/load.out")"
rm -f "$GB_CLOCK_FILE"

start_worker w1
# Events of this run's tasks only: the worker may also retry pending
# requests that earlier tests (or runs) left in the database.
own() { grep "\"taskID\":${B}0[123][,}]" "$T/a.events"; }
subscribe a 1000 120 task.throttled jobs.assigned jobs.pending
"$GB" -c "$GB_CONFIG" job submit "$T/anal.json" >"$T/submit.out" || fail "job submit"
wait_until 60 "[ \$(own | wc -l) -ge 3 ]" || fail "events: $(cat "$T/a.events")"

ev=$(grep "\"taskID\":${B}01[,}]" "$T/a.events") || fail "no event for alice's task"
echo "$ev" | grep -q '"routingKey":"jobs.assigned"' || fail "alice's task not assigned: $ev"
placed=$(sql "select count(*) from jobs where task_id = ${B}01 and queue is not null")
[ "$placed" = 6 ] || fail "alice: $placed of 6 jobs placed"
bad=$(sql "select count(*) from jobs j join queues q on q.name = j.queue
           where j.task_id = ${B}01 and (q.queue_type not in ('analysis', 'unified')
             or q.storage not in ('BNL-ATLAS_DATADISK', 'DESY-HH_DATADISK', 'LRZ-LMU_DATADISK', 'MWT2_DATADISK'))")
[ "$bad" = 0 ] || fail "alice: $bad job(s) on a queue AJ-05/AJ-08 exclude"
nq=$(sql "select count(distinct queue) from jobs where task_id = ${B}01")
[ "$nq" -le 10 ] || fail "alice: $nq queues > 10 (AJ-28)"
[ "$(sql "select count(*) from jobs where task_id = ${B}01 and user_name = 'alice' and gshare = 'User Analysis'")" = 6 ] ||
	fail "alice: owner and gshare not recorded on the jobs"
log "alice (class A): 6 jobs on $nq queue(s) holding the input"

ev=$(grep "\"taskID\":${B}02[,}]" "$T/a.events") || fail "no event for bob's task"
echo "$ev" | grep -q '"routingKey":"task.throttled"' || fail "bob not throttled: $ev"
for kv in '"rule":"AJ-04"' '"code":"share_class_c"' '"value":93' '"limit":90' '"taskClass":"C"' '"userName":"bob"'; do
	echo "$ev" | grep -q "$kv" || fail "bob's task.throttled lacks $kv: $ev"
done
ev=$(grep "\"taskID\":${B}03[,}]" "$T/a.events") || fail "no event for carol's task"
echo "$ev" | grep -q '"rule":"AJ-03"' || fail "carol not throttled by her quota: $ev"
echo "$ev" | grep -q '"quotaExceeded":true' || fail "carol: quotaExceeded not said: $ev"
[ "$(sql "select count(*) from jobs where task_id in (${B}02, ${B}03) and status = 'throttled' and queue is null")" = 5 ] ||
	fail "throttled tasks' jobs are not waiting as throttled"
log "bob (class C, share at 93 % > 90 %): AJ-04; carol (5200 GB > 5000 GB): AJ-03; their 5 jobs wait as throttled"

# 20 minutes later the workers try again: throttled again, one more event
# each, and still no queue.
advance_clock 1260
wait_until 60 "[ \$(own | grep -c '\"routingKey\":\"task.throttled\"') -ge 4 ]" ||
	fail "throttled tasks were not retried after 20 min: $(cat "$T/a.events")"
[ "$(grep -c "\"taskID\":${B}01[,}]" "$T/a.events")" = 1 ] || fail "alice's task decided twice"
[ "$(sql "select count(*) from decisions where kind = 'jobs' and subject in ('${B}02', '${B}03')")" = 4 ] ||
	fail "throttled tasks: expected 4 decisions"
log "after 20 min: both throttled tasks re-checked and still throttled; alice's not decided again"
log "PASS"
