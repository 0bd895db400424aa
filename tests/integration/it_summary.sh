#!/usr/bin/env bash
# `gridbroker summary`: two tasks decided after a window start are counted
# by nucleus, the OFFLINE nucleus's TB-01 rejection among the reasons,
# nothing from before the window; text and --json agree; a bad --since is
# refused. The nuclei are named after the run: the workers' pending scans
# may decide other rows of the shared database inside the window too.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

ds="it.summary.$ID_BASE"
cat >"$T/grid.json" <<EOT
{"nuclei": [
 {"name": "IT-SUM-$ID_BASE", "status": "ACTIVE", "bareNucleus": "", "transferBacklog": 10, "RW": 100,
  "storages": [{"name": "IT-SUM-${ID_BASE}_DATADISK", "spaceFree": 900000, "spaceExpired": 1000, "spaceTotal": 2000000, "tape": false, "blacklisted": false}],
  "local": {"$ds": {"size": 2000, "files": 500}}},
 {"name": "IT-SUMOFF-$ID_BASE", "status": "OFFLINE", "bareNucleus": "", "transferBacklog": 0, "RW": 0,
  "storages": [{"name": "IT-SUMOFF-${ID_BASE}_DATADISK", "spaceFree": 900000, "spaceExpired": 0, "spaceTotal": 2000000, "tape": false, "blacklisted": false}],
  "local": {"$ds": {"size": 2000, "files": 500}}}
]}
EOT
"$GB" -c "$GB_CONFIG" grid load "$T/grid.json" >/dev/null || fail "grid load"
start_worker w1

# The window starts now in the workers' clock (the test seam's offset
# included). Earlier tests move that clock too and leave records stamped
# ahead of it, so the checks look at this run's own nucleus only.
off=0
[ -f "$GB_CLOCK_FILE" ] && off=$(cat "$GB_CLOCK_FILE")
since=$(( $(date +%s) + off - 5 ))

subscribe a 2 60 task.assigned
for k in 1 2; do
	task_json $((ID_BASE + k)) "$ds" 2000 500 300 >"$T/task$k.json"
	"$GB" -c "$GB_CONFIG" task submit "$T/task$k.json" >/dev/null || fail "submit $k"
done
wait "${SUB[a]}" || fail "not both task.assigned events arrived"

"$GB" -c "$GB_CONFIG" summary --since "$since" --top 1000 >"$T/summary.txt" || fail "summary"
"$GB" -c "$GB_CONFIG" summary --since "$since" --json >"$T/summary.json" || fail "summary --json"
cat "$T/summary.txt"

# text: the nucleus line (assigned 2, pending 0, other 0, total 2) and
# TB-01 status among the reasons
grep -Eq "^  IT-SUM-$ID_BASE +2 +0 +0 +2\$" "$T/summary.txt" || fail "no 'IT-SUM-$ID_BASE 2 0 0 2' line"
grep -Eq '^  TB-01 +status +[0-9]+ ' "$T/summary.txt" || fail "TB-01 status is not among the reasons"
# json: the same figures
python3 - "$T/summary.json" "$since" "IT-SUM-$ID_BASE" <<'PY' || fail "summary --json: $(cat "$T/summary.json")"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["since"] == int(sys.argv[2]), s["since"]
mine = [t for t in s["tasks"] if t["nucleus"] == sys.argv[3]]
assert mine == [{"nucleus": sys.argv[3], "status": "assigned", "n": 2}], s["tasks"]
tb01 = [r for r in s["reasons"] if r["rule"] == "TB-01" and r["code"] == "status"]
assert len(tb01) == 1 and tb01[0]["n"] >= 2, tb01
assert s["decisionsRead"] >= 2, s["decisionsRead"]
PY

# a window that starts after the decisions does not hold them
"$GB" -c "$GB_CONFIG" summary --since $((since + 3600)) --json >"$T/later.json" || fail "summary (later window)"
grep -q '"tasks"' "$T/later.json" || fail "no tasks in: $(cat "$T/later.json")"
! grep -q "IT-SUM-$ID_BASE" "$T/later.json" || fail "a later window holds this run's tasks: $(cat "$T/later.json")"
# durations and RFC 3339 are accepted, nonsense is not
"$GB" -c "$GB_CONFIG" summary --since 30m >/dev/null || fail "--since 30m"
"$GB" -c "$GB_CONFIG" summary --since 2026-01-01T00:00:00Z >/dev/null || fail "--since RFC 3339"
rc=0; "$GB" -c "$GB_CONFIG" summary --since yesterday 2>"$T/bad.err" || rc=$?
[ "$rc" = 2 ] || fail "--since yesterday: exit $rc, want 2"
grep -q "expected unix seconds, RFC 3339 or a duration" "$T/bad.err" || fail "--since error: $(cat "$T/bad.err")"
log "summary counted 2 tasks on IT-SUM-$ID_BASE and the TB-01 rejections, not in a later window; bad --since refused"
echo "1 passed, 0 failed"
