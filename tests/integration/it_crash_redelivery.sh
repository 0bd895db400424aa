#!/usr/bin/env bash
# A worker SIGKILLed between the commit of its decision and the ack: the
# request is redelivered to another worker, which finds the decision (no
# second one), publishes the event still in the outbox, and acks. Exactly
# one decision and one event.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

ds="it.crash.$ID_BASE"
cat >"$T/grid.json" <<EOT
{"nuclei": [
 {"name": "IT-NUC-A", "status": "ACTIVE", "bareNucleus": "", "transferBacklog": 10, "RW": 100,
  "storages": [{"name": "IT-NUC-A_DATADISK", "spaceFree": 900000, "spaceExpired": 1000, "spaceTotal": 2000000, "tape": false, "blacklisted": false}],
  "local": {"$ds": {"size": 100, "files": 500}}}
]}
EOT
"$GB" -c "$GB_CONFIG" grid load "$T/grid.json" >/dev/null || fail "grid load"
id=$((ID_BASE + 4))
subscribe ev 2 20 task.assigned task.pending

start_worker crashy GB_TEST_CRASH_AT=after-commit
task_json $id "$ds" 100 500 300 >"$T/task.json"
"$GB" -c "$GB_CONFIG" task submit "$T/task.json" >/dev/null || fail "submit"
set +e; wait "${PID[crashy]}"; status=$?; set -e
[ "$status" = 137 ] || fail "worker exited with $status, expected SIGKILL (137)"
[ "$(sql "select count(*) from decisions where subject='$id'")" = 1 ] || fail "decision not committed before the crash"
[ "$(sql "select count(*) from outbox where request_id=(select request_id from tasks where task_id=$id) and sent_at is null")" = 1 ] || fail "event should be waiting in the outbox"

start_worker good
# The subscriber waits 20 s for a second event; exactly 1 must come.
set +e; wait "${SUB[ev]}"; set -e
n=$(grep -c "\"taskID\":$id" "$T/ev.events" || true)
[ "$n" = 1 ] || fail "expected exactly 1 event for task $id, got $n"
[ "$(sql "select count(*) from decisions where subject='$id'")" = 1 ] || fail "decided twice"
# Confirmed rows are marked sent in batches, at the latest on the worker's
# next tick (250 ms): the event can arrive first.
marked() { [ "$(sql "select count(*) from outbox where request_id=(select request_id from tasks where task_id=$id) and sent_at is not null")" = 1 ]; }
wait_until 5 marked || fail "outbox row not marked sent"
grep -q 'already decided' "$T/good.log" || fail "the redelivery was not recognised"
log "crash between commit and ack: 1 decision, 1 event after redelivery"
echo "1 passed, 0 failed"
