#!/usr/bin/env bash
# A task whose input only one nucleus holds is assigned there; the
# task.assigned event arrives; the task row, the decision and the outbox
# agree.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

ds="it.assign.$ID_BASE"
cat >"$T/grid.json" <<EOT
{"nuclei": [
 {"name": "IT-NUC-A", "status": "ACTIVE", "bareNucleus": "", "transferBacklog": 10, "RW": 100,
  "storages": [{"name": "IT-NUC-A_DATADISK", "spaceFree": 900000, "spaceExpired": 1000, "spaceTotal": 2000000, "tape": false, "blacklisted": false}],
  "local": {"$ds": {"size": 2000, "files": 500}}},
 {"name": "IT-NUC-B", "status": "ACTIVE", "bareNucleus": "", "transferBacklog": 10, "RW": 100,
  "storages": [{"name": "IT-NUC-B_DATADISK", "spaceFree": 900000, "spaceExpired": 1000, "spaceTotal": 2000000, "tape": false, "blacklisted": false}],
  "local": {}},
 {"name": "IT-NUC-OFF", "status": "OFFLINE", "bareNucleus": "", "transferBacklog": 0, "RW": 0,
  "storages": [{"name": "IT-NUC-OFF_DATADISK", "spaceFree": 900000, "spaceExpired": 0, "spaceTotal": 2000000, "tape": false, "blacklisted": false}],
  "local": {"$ds": {"size": 2000, "files": 500}}}
]}
EOT
"$GB" -c "$GB_CONFIG" grid load "$T/grid.json" >/dev/null || fail "grid load"

start_worker w1
id=$((ID_BASE + 1))
subscribe a 1 60 task.assigned
task_json $id "$ds" 2000 500 300 >"$T/task.json"
"$GB" -c "$GB_CONFIG" task submit "$T/task.json" || fail "submit"
wait "${SUB[a]}" || fail "no task.assigned event"
grep -q "\"taskID\":$id" "$T/a.events" || fail "event is not for task $id: $(cat "$T/a.events")"
grep -q '"nucleus":"IT-NUC-A"' "$T/a.events" || fail "expected IT-NUC-A: $(cat "$T/a.events")"
grep -q '"jobScope":"satellites"' "$T/a.events" || fail "no jobScope in the event"

row=$(sql "select status, nucleus from tasks where task_id=$id")
[ "$row" = "$(printf 'assigned\tIT-NUC-A')" ] || fail "task row: $row"
[ "$(sql "select count(*) from decisions where kind='task' and subject='$id'")" = 1 ] || fail "decision count"
# The worker marks confirmed rows sent in batches, when its pump goes idle
# or on its next tick (250 ms): the event can arrive first.
marked() { [ "$(sql "select count(*) from outbox o join decisions d on o.message_id=concat('gb-decision-', d.id) where d.subject='$id' and o.sent_at is not null")" = 1 ]; }
wait_until 5 marked || fail "outbox row not marked sent"
detail=$(sql "select detail from decisions where subject='$id'")
echo "$detail" | grep -q '"rule":"TB-01"' || fail "decision detail lacks the OFFLINE nucleus's TB-01 reason"
log "task $id assigned to IT-NUC-A with one decision and one sent event"
echo "1 passed, 0 failed"
