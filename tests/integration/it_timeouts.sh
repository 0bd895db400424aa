#!/usr/bin/env bash
# Job timeouts through the real workers (TO-01..TO-14), moved by the clock
# seam instead of waiting hours: one job per rule is put in the state the
# rule watches, the workers' clock is advanced step by step, and at each
# step exactly the jobs whose limit has passed get their job.timeout event
# (rule, age, limit, action) and, for a reassignment, job.rebrokered; their
# MariaDB rows show the action (pending without a queue, failed, cancelled).
# Jobs at a paused and at a disableReassign queue never time out (TO-12).
# Heartbeats sent as job.status keep a running job alive. Then two workers
# scan 1000 due jobs at once: each gets exactly one event. Last, fast
# rebrokerage (TO-13) moves exactly the excess of an overloaded queue.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

"$GB" -c "$GB_CONFIG" grid load "$GB_SRC/etc/grid-sample.json" >"$T/load.out" || fail "grid load"

# The local servers' configuration (scripts/services) has the workers scan
# for timeouts every second and pass fast rebrokerage every 2 s.
grep -q '^timeout_interval=1' "$GB_CONFIG" || fail "run/gridbroker.conf lacks [panda] timeout_interval=1"
rm -f "$GB_CLOCK_FILE"

now() { local off=0; [ -f "$GB_CLOCK_FILE" ] && off=$(cat "$GB_CLOCK_FILE"); echo $(($(date +%s) + off)); }

B=$((ID_BASE * 100))  # job ids of this run: B+1 .. B+99, then B+1000..
TASK=$ID_BASE
Q=CERN-PROD_UCORE             # an ordinary online queue
QSTALE=BNL-ATLAS_UCORE        # its last job start is old (TO-06)
QPAUSED=AGLT2_UCORE           # status paused (TO-12)
QNOREASSIGN=MWT2_UCORE        # disableReassign (TO-12)
sql "update queues set last_start = $(($(now) - 3 * 3600)) where name = '$QSTALE';
     update queues set status = 'paused' where name = '$QPAUSED';
     update queues set disable_reassign = 1 where name = '$QNOREASSIGN'"

# job N STATUS QUEUE PRIO [CREATED_AGO]: a job due for a look now.
job() {
	local n=$1 st=$2 q=$3 prio=$4 ago=${5:-0} t; t=$(now)
	local qv="'$q'"; [ "$q" = - ] && qv=NULL
	sql "insert into jobs (job_id, task_id, request_id, queue, status, nevents, input_mb,
	       decision_id, updated_at, gshare, current_priority, created_at, status_since,
	       status_time, brokered_at, check_at)
	     values ($((B + n)), $TASK, 'it-timeouts-$B', $qv, '$st', 100, 1, 0, $t, 'MC Simul',
	       $prio, $((t - ago)), $t, $t, $t, $t)"
}
job 1 pending - 500            # TO-01 1 h, reassign
job 2 defined $Q 500           # TO-02 4 h, reassign
job 3 assigned $Q 500          # TO-03 12 h, reassign
job 4 throttled - 500          # TO-04 7 days, kill
job 5 activated $Q 500         # TO-05 2 days, reassign
job 6 activated $QSTALE 900    # TO-06 4 h at a queue without recent starts
job 7 sent $Q 500              # TO-07 30 min, fail
job 8 running $Q 500 $((21 * 86400 - 600))  # TO-08 21 days since creation
job 9 running $Q 500           # TO-09 2 h without heartbeat, fail
job 10 holding $Q 900          # TO-10 3 h at priority >= 800, fail
job 11 transferring $Q 900     # TO-11 2 days at priority >= 800, fail
job 12 activated $QPAUSED 500  # TO-12: never
job 13 assigned $QNOREASSIGN 500  # TO-12: never
job 14 running $Q 500          # kept alive by heartbeats

start_worker w1
start_worker w2
subscribe ev 100000 600 job.timeout job.rebrokered

# expect STEP RULE JOB ACTION NEWSTATUS: one job.timeout for the job with
# that rule, and the row in that state.
expect() {
	local step=$1 rule=$2 n=$3 action=$4 st=$5 id=$((B + $3))
	wait_until 30 "grep -q '\"routingKey\":\"job.timeout\".*\"jobID\":$id,.*\"rule\":\"$rule\"' '$T/ev.events'" ||
		fail "$step: no job.timeout $rule for job $n"
	local ev; ev=$(grep "\"routingKey\":\"job.timeout\".*\"jobID\":$id,.*\"rule\":\"$rule\"" "$T/ev.events")
	# One decision, one event: copies of the same event (same message id,
	# at-least-once) are allowed. They happen here when the clock seam
	# jumps an hour between a worker's publish and its sent mark (marks are
	# batched for up to 250 ms): the row's 30 s lease has run out at once
	# and the other worker's relay publishes it again.
	[ "$(echo "$ev" | grep -o '"messageId":"[^"]*"' | sort -u | wc -l)" = 1 ] ||
		fail "$step: job $n got $rule twice: $ev"
	echo "$ev" | grep -q "\"action\":\"$action\"" || fail "$step: job $n: not $action: $ev"
	echo "$ev" | grep -q "\"newStatus\":\"$st\"" || fail "$step: job $n: not $st: $ev"
	[ "$(sql "select status from jobs where job_id = $id")" = "$st" ] || fail "$step: job $n row is not $st"
	if [ "$action" = reassign ]; then
		wait_until 10 "grep -q '\"routingKey\":\"job.rebrokered\".*\"jobID\":$id,.*\"rule\":\"$rule\"' '$T/ev.events'" ||
			fail "$step: no job.rebrokered for job $n"
		[ "$(sql "select coalesce(queue, '-') from jobs where job_id = $id")" = - ] ||
			fail "$step: reassigned job $n kept its queue"
	fi
}
# quiet STEP N...: none of these jobs has had any event yet.
quiet() {
	local step=$1 n; shift
	for n in "$@"; do
		! grep -q "\"jobID\":$((B + n))," "$T/ev.events" || fail "$step: job $n timed out too early"
	done
}

sleep 3
quiet "start" 1 2 3 4 5 6 7 8 9 10 11 12 13 14
advance_clock $((31 * 60))
expect "+31 min" TO-07 7 fail failed
expect "+31 min" TO-08 8 kill cancelled
quiet "+31 min" 1 2 3 4 5 6 9 10 11 14
log "+31 min: TO-07 failed the sent job, TO-08 killed the 21-day job"

advance_clock $((30 * 60))
expect "+1 h 01" TO-01 1 reassign pending
quiet "+1 h 01" 2 3 4 5 6 9 10 11 14
[ "$(sql "select attempt from jobs where job_id = $((B + 1))")" = 1 ] || fail "TO-01: attempt not counted"
"$GB" -c "$GB_CONFIG" job status --panda $((B + 14)) heartbeat >/dev/null || fail "heartbeat"
log "+1 h 01: TO-01 sent the pending job back to the brokerage; job 14 sent a heartbeat"

advance_clock $((60 * 60))
expect "+2 h 01" TO-09 9 fail failed
quiet "+2 h 01" 2 3 4 5 6 10 11 14
log "+2 h 01: TO-09 failed the silent running job; the one with a heartbeat lives on"

advance_clock $((60 * 60))
expect "+3 h 01" TO-10 10 fail failed
quiet "+3 h 01" 2 3 4 5 6 11
log "+3 h 01: TO-10 failed the high-priority holding job"

advance_clock $((60 * 60))
expect "+4 h 01" TO-02 2 reassign pending
expect "+4 h 01" TO-06 6 reassign pending
expect "+4 h 01" TO-09 14 fail failed
quiet "+4 h 01" 3 4 5 11
log "+4 h 01: TO-02 (defined 4 h), TO-06 (priority 900 at a queue without starts for 2 h), TO-09 for job 14 (its heartbeat is 3 h old)"

advance_clock $((8 * 3600))
expect "+12 h 01" TO-03 3 reassign pending
quiet "+12 h 01" 4 5 11
advance_clock $((36 * 3600))
expect "+2 d" TO-05 5 reassign pending
expect "+2 d" TO-11 11 fail failed
quiet "+2 d" 4
advance_clock $((5 * 86400))
expect "+7 d" TO-04 4 kill cancelled
quiet "+7 d" 12 13
[ "$(sql "select status from jobs where job_id in ($((B + 12)), $((B + 13))) order by job_id" | tr '\n' ' ')" = "activated assigned " ] ||
	fail "TO-12: jobs at the paused / disableReassign queues changed"
log "+7 d: TO-03, TO-05, TO-11, TO-04 fired; the paused and disableReassign queues' jobs never did (TO-12)"

# Exactly once (TO-14): no two job.timeout decisions for one job, action
# and attempt (a reassigned job is pending again and TO-01 may fire for it
# hourly, each time a new attempt; a fail or kill is final). Counted over
# distinct message ids: a copy of one event (same message id) is the
# at-least-once delivery subscribers drop by id. Copies happen here because
# outbox leases follow the clock seam: a jump of hours between a worker's
# publish and its batched sent mark (up to 250 ms) ends the row's 30 s
# lease at once, and the other worker's relay publishes it again.
dups=$(grep '"routingKey":"job.timeout"' "$T/ev.events" | grep "\"jobID\":$ID_BASE" |
	sed -E 's/.*"messageId":"([^"]*)".*/\1 &/' | sort -u -k1,1 | cut -d' ' -f2- |
	sed -E 's/.*"jobID":([0-9]+),.*"action":"([a-z]+)".*"attempt":([0-9]+).*/\1 \2 \3/' | sort | uniq -d | wc -l)
[ "$dups" = 0 ] || fail "$dups job/attempt pairs with two job.timeout decisions"
copies=$(grep -o '"messageId":"[^"]*"' "$T/ev.events" | sort | uniq -d | wc -l)
log "event copies (same message id, at-least-once): $copies"

# Two workers, 1000 jobs due at the same instant: one event each.
t=$(now)
vals=$(seq 1000 1999 | awk -v b="$B" -v t="$t" -v task="$TASK" -v q="$Q" \
	'{printf "%s(%d,%d,\"it-timeouts\",\"%s\",\"running\",1,1,0,%d,\"MC Simul\",100,%d,%d,%d,%d,%d,%d)", (NR>1?",":""), b+$1, task, q, t, t, t, t, t, t, t+7201}')
echo "insert into jobs (job_id, task_id, request_id, queue, status, nevents, input_mb, decision_id,
       updated_at, gshare, current_priority, created_at, status_since, status_time, brokered_at,
       last_heartbeat, check_at) values $vals" >"$T/bulk.sql"
"$GB_SRC/scripts/services" sql "$GB_DB_NAME" <"$T/bulk.sql" || fail "bulk insert"
advance_clock 7300
wait_until 60 "[ \$(grep -c '\"rule\":\"TO-09\"' '$T/ev.events') -ge 1002 ]" ||
	fail "not every bulk job timed out: $(grep -c '"rule":"TO-09"' "$T/ev.events")"
sleep 2
# ids IN LO HI: the job ids of FILE's lines (one per line) within [LO, HI].
ids_in() { grep -o '"jobID":[0-9]*' | cut -d: -f2 | awk -v lo="$1" -v hi="$2" '$1 >= lo && $1 <= hi' | sort -n; }
bulk=$(grep '"routingKey":"job.timeout"' "$T/ev.events" | ids_in $((B + 1000)) $((B + 1999)))
[ "$(echo "$bulk" | wc -l)" = 1000 ] || fail "bulk: $(echo "$bulk" | wc -l) events for 1000 jobs"
[ "$(echo "$bulk" | uniq | wc -l)" = 1000 ] || fail "bulk: a job got two events"
[ "$(sql "select count(*) from jobs where job_id between $((B + 1000)) and $((B + 1999)) and status = 'failed'")" = 1000 ] ||
	fail "bulk: not every job failed"
[ "$(sql "select count(*) from decisions where kind = 'timeout' and subject between '$((B + 1000))' and '$((B + 1999))'")" = 1000 ] ||
	fail "bulk: decisions"
w1n=$(grep -c 'TO-09' "$T/w1.log" || true)
w2n=$(grep -c 'TO-09' "$T/w2.log" || true)
log "two workers scanned 1000 due jobs at once: 1000 events, one each (w1 logged $w1n, w2 $w2n)"

# TO-13: a queue holding 50 queued jobs of a gshare of its own, 5 running:
# nQueue 50 > 3 x 5, > 0.3 x 50 and > the gshare's limit 20, so
# ceil(min(50 - 15, 50 - 20, 50 - 15)) = 30 jobs, the oldest, are rebrokered.
G="IT Rebro $ID_BASE"
t=$(now)
vals=$(seq 2000 2049 | awk -v b="$B" -v t="$t" -v task="$TASK" -v q="$Q" -v g="$G" \
	'{printf "%s(%d,%d,\"it-timeouts\",\"%s\",\"activated\",1,1,0,%d,\"%s\",100,%d,%d,%d,%d,%d)", (NR>1?",":""), b+$1, task, q, t, g, t, t, t, t, t+86400}')
sql "insert into jobs (job_id, task_id, request_id, queue, status, nevents, input_mb, decision_id,
       updated_at, gshare, current_priority, created_at, status_since, status_time, brokered_at,
       check_at) values $vals;
     insert into queue_counts (queue, gshare, running, activated) values ('$Q', '$G', 5, 50);
     insert into params (component, name, value) values ('rebroker', 'FAST_REBRO_THRESHOLD_NQUEUE_$G', 20)"
wait_until 60 "[ \$(grep -c '\"rule\":\"TO-13\"' '$T/ev.events') -ge 30 ]" || fail "TO-13: no rebrokerage"
sleep 3
moved=$(grep '"routingKey":"job.rebrokered"' "$T/ev.events" | grep '"rule":"TO-13"' | ids_in $((B + 2000)) $((B + 2049)) | uniq)
[ "$(echo "$moved" | wc -l)" = 30 ] || fail "TO-13 moved $(echo "$moved" | wc -l) jobs, want 30"
[ "$(echo "$moved" | tail -1)" = "$((B + 2029))" ] || fail "TO-13 did not take the oldest 30"
[ "$(sql "select activated from queue_counts where queue = '$Q' and gshare = '$G'")" = 20 ] ||
	fail "TO-13: counts not moved"
sql "delete from params where component = 'rebroker' and name = 'FAST_REBRO_THRESHOLD_NQUEUE_$G'"
log "TO-13: 30 of 50 queued jobs rebrokered, the oldest first; the queue's count is 20"

# `grid load` counts the file's ages back from the workers' clock, test
# offset included: after the jumps above, a reloaded queue whose last pilot
# was 30 s ago (the sample's CERN-PROD_UCORE) must not look 12 h stale to
# PJ-26. Stop the workers first: the load replaces the queue rows.
stop_all
off=$(cat "$GB_CLOCK_FILE")
[ "$off" -ge 43200 ] || fail "the clock moved only $off s"
t0=$(now)
"$GB" -c "$GB_CONFIG" grid load "$GB_SRC/etc/grid-sample.json" >"$T/reload.out" || fail "grid load with the clock moved"
t1=$(now)
lp=$(sql "select last_pilot from queues where name = 'CERN-PROD_UCORE'")
{ [ "$lp" -ge $((t0 - 30)) ] && [ "$lp" -le $((t1 - 30)) ]; } ||
	fail "grid load with the clock $off s ahead: last_pilot $lp, want $((t0 - 30))..$((t1 - 30))"
log "grid load stamps ages on the workers' clock ($off s ahead): last pilot 30 s before its now"
log "PASS"
