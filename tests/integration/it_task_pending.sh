#!/usr/bin/env bash
# An impossible task goes pending with reasons; the worker retries it by
# itself after 30 minutes (moved through the clock seam, no sleeping); once
# the data appears, the retry assigns it.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

ds="it.pending.$ID_BASE"
grid() { # grid REPLICA-JSON
	cat >"$T/grid.json" <<EOT
{"nuclei": [
 {"name": "IT-NUC-A", "status": "ACTIVE", "bareNucleus": "", "transferBacklog": 10, "RW": 100,
  "storages": [{"name": "IT-NUC-A_DATADISK", "spaceFree": 900000, "spaceExpired": 1000, "spaceTotal": 2000000, "tape": false, "blacklisted": false}],
  "local": {$1}}
]}
EOT
	"$GB" -c "$GB_CONFIG" grid load "$T/grid.json" >/dev/null || fail "grid load"
}
grid ""
start_worker w1
id=$((ID_BASE + 2))
subscribe p1 1 60 task.pending
# 50 TB of input held nowhere, IO-heavy, priority 300: no TB-09 relaxation.
task_json $id "$ds" 50000 5000 300 >"$T/task.json"
"$GB" -c "$GB_CONFIG" task submit "$T/task.json" || fail "submit"
wait "${SUB[p1]}" || fail "no task.pending event"
grep -q "\"taskID\":$id" "$T/p1.events" || fail "pending event is for another task"
grep -q '"retryAfter":1800' "$T/p1.events" || fail "no retryAfter 1800: $(cat "$T/p1.events")"
grep -q '"rule":"TB-07"' "$T/p1.events" || fail "pending event lacks the TB-07 reason"
[ "$(sql "select status from tasks where task_id=$id")" = pending ] || fail "task not pending"
gap=$(sql "select pending_until - updated_at from tasks where task_id=$id")
[ "$gap" = 1800 ] || fail "pending_until is $gap s after the decision, expected 1800"

# 29 minutes later nothing happens.
advance_clock 1740
sleep 5
[ "$(sql "select count(*) from decisions where subject='$id'")" = 1 ] || fail "retried before 30 minutes"

# Past 30 minutes the worker retries: still impossible, pending again.
# The database may hold other tests' pending tasks, which fall due at the
# same clock jumps and are retried too: wait for this task's own decisions
# and events, not for the first event of the kind.
decisions() { sql "select count(*) from decisions where subject='$id'"; }
subscribe p2 10000 60 task.pending
advance_clock 61
wait_until 60 "[ \"\$(decisions)\" = 2 ]" || fail "expected 2 decisions after 30 minutes, found $(decisions)"
wait_until 30 "grep -q '\"taskID\":$id' '$T/p2.events'" || fail "no task.pending event of the retry"

# The data arrives; the next retry assigns the task.
grid "\"$ds\": {\"size\": 50000, \"files\": 500}"
subscribe a 10000 60 task.assigned
advance_clock 1801
wait_until 60 "grep -q '\"taskID\":$id' '$T/a.events'" || fail "no assignment after the data arrived"
[ "$(sql "select status, nucleus from tasks where task_id=$id")" = "$(printf 'assigned\tIT-NUC-A')" ] || fail "task not assigned"
log "task $id: pending, retried after 30 min, assigned when the data appeared"
echo "1 passed, 0 failed"
