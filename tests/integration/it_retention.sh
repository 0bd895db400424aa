#!/usr/bin/env bash
# Decision retention: with decision_retention_days = 1, a task decided now
# keeps its record; once the workers' clock is three days on, the retention
# pass deletes it (`gridbroker why` says there is none; the worker logs the
# deletion) while a task decided after the jump keeps its record. With
# retention 0 nothing is deleted.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

ds="it.retention.$ID_BASE"
cat >"$T/grid.json" <<EOT
{"nuclei": [{"name": "IT-RET-$ID_BASE", "status": "ACTIVE", "bareNucleus": "", "transferBacklog": 10, "RW": 100,
  "storages": [{"name": "IT-RET-${ID_BASE}_DATADISK", "spaceFree": 900000, "spaceExpired": 1000, "spaceTotal": 2000000, "tape": false, "blacklisted": false}],
  "local": {"$ds": {"size": 2000, "files": 500}}}]}
EOT
"$GB" -c "$GB_CONFIG" grid load "$T/grid.json" >/dev/null || fail "grid load"

# retention_conf FILE DAYS: the test config with a retention of DAYS, a pass
# every second
retention_conf() {
	awk -v d="$2" '
		/^\[/ { sec = $0 }
		sec == "[worker]" && /^decision_retention_(days|interval) *=/ { next }
		{ print }
		$0 == "[worker]" { print "decision_retention_days=" d; print "decision_retention_interval=1" }
	' "$GB_CONFIG" >"$1"
	grep -q "^decision_retention_days=$2\$" "$1" || fail "no [worker] section in $GB_CONFIG"
}
# decide K: submit task ID_BASE+K and wait for its decision
decide() {
	subscribe "d$1" 1 60 task.assigned
	task_json $((ID_BASE + $1)) "$ds" 2000 500 300 >"$T/task$1.json"
	"$GB" -c "$GB_CONFIG" task submit "$T/task$1.json" >/dev/null || fail "submit $1"
	wait "${SUB[d$1]}" || fail "task $1 not decided"
}
records() { sql "select count(*) from decisions where kind = 'task' and subject = '$((ID_BASE + $1))'"; }

# retention 0 first: a clock three days on deletes nothing
retention_conf "$T/keep.conf" 0
GB_CONFIG_SAVED=$GB_CONFIG
GB_CONFIG=$T/keep.conf start_worker keep
GB_CONFIG=$GB_CONFIG_SAVED
decide 1
[ "$(records 1)" = 1 ] || fail "task 1 has $(records 1) records"
advance_clock $((3 * 86400))
sleep 3
[ "$(records 1)" = 1 ] || fail "retention 0 deleted task 1's record"
kill "${PID[keep]}"; wait "${PID[keep]}" 2>/dev/null || true

# retention 1 day: the record from three days ago goes, a new one stays
retention_conf "$T/ret.conf" 1
"$GB_WORKER" --check-config -c "$T/ret.conf" >/dev/null || fail "retention config refused"
GB_CONFIG=$T/ret.conf start_worker ret
GB_CONFIG=$GB_CONFIG_SAVED
wait_until 30 "[ \"\$(records 1)\" = 0 ]" || fail "task 1's record was not deleted"
wait_until 10 "grep -q 'decision retention: deleted [0-9]* record(s) older than 1 day$' '$T/ret.log'" ||
	fail "no retention log line: $(grep -i retention "$T/ret.log")"
rc=0; "$GB" -c "$GB_CONFIG" why task $((ID_BASE + 1)) >"$T/why1.out" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "why task 1 after retention: exit $rc: $(cat "$T/why1.out")"
grep -q "no decision recorded for task $((ID_BASE + 1))" "$T/why1.out" || fail "why said: $(cat "$T/why1.out")"
decide 2
sleep 3
[ "$(records 2)" = 1 ] || fail "task 2's fresh record is gone"
"$GB" -c "$GB_CONFIG" why task $((ID_BASE + 2)) | grep -q "assigned, chosen IT-RET-$ID_BASE" || fail "why task 2"
log "retention 0 kept a 3-day-old record; retention 1 day deleted it and kept a fresh one"
echo "1 passed, 0 failed"
