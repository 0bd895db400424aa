#!/usr/bin/env bash
# The worker as systemd runs it, without systemd: the unit file passes
# `systemd-analyze verify` (with the binary path pointed at this build) and
# scores a low exposure in `systemd-analyze security`; a worker given a
# NOTIFY_SOCKET and a watchdog (as the service manager would) reports
# READY=1 once it consumes, pings WATCHDOG=1 from its loop, answers SIGHUP
# with RELOADING=1 then READY=1, refuses a broken config on reload and keeps
# serving, and on SIGTERM sends STOPPING=1, drains and exits 0.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

UNIT_SRC=$GB_SRC/systemd/gridbroker-worker@.service
command -v systemd-analyze >/dev/null || fail "systemd-analyze not found (scripts/setup installs systemd)"

# ---- the unit file ----------------------------------------------------------------
mkdir -p "$T/unit"
sed "s|/usr/bin/gridbroker-worker|$GB_WORKER|g" "$UNIT_SRC" >"$T/unit/gridbroker-worker@.service"
# verify reads an instance of a template through a file of that name
cp "$T/unit/gridbroker-worker@.service" "$T/unit/gridbroker-worker@1.service"
(cd "$T/unit" && systemd-analyze verify --man=no ./gridbroker-worker@1.service) >"$T/verify.out" 2>&1 ||
	fail "systemd-analyze verify: $(cat "$T/verify.out")"
[ ! -s "$T/verify.out" ] || fail "systemd-analyze verify complains: $(cat "$T/verify.out")"
# a unit with a mistake is caught (the check above can fail)
sed 's/^Restart=on-failure/Restart=sometimes/' "$T/unit/gridbroker-worker@1.service" >"$T/unit/gridbroker-worker@2.service"
(cd "$T/unit" && systemd-analyze verify --man=no ./gridbroker-worker@2.service) >"$T/verify2.out" 2>&1 || true
grep -q "restart specifier" "$T/verify2.out" || fail "verify did not catch a bad Restart=: $(cat "$T/verify2.out")"

systemd-analyze security --offline=true "$UNIT_SRC" >"$T/security.out" 2>&1 || true
score=$(sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) .*/\1/p' "$T/security.out")
[ -n "$score" ] || fail "no exposure level: $(tail -3 "$T/security.out")"
awk -v s="$score" 'BEGIN { exit !(s <= 1.5) }' || fail "exposure $score > 1.5"
log "unit verified; exposure $score"

# ---- the notify protocol ----------------------------------------------------------
# A datagram socket standing in for the service manager's: every message,
# one line each ("\n" inside a message becomes " | "), into notify.log.
python3 - "$T/notify.sock" "$T/notify.log" <<'PY' &
import os, socket, sys
path, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
with open(out, "a", buffering=1) as f:
    f.write("listening\n")
    while True:
        msg = s.recv(4096).decode("utf-8", "replace")
        f.write(msg.replace("\n", " | ") + "\n")
PY
GB_PIDS+=($!)
wait_until 10 "grep -q listening '$T/notify.log' 2>/dev/null" || fail "notify listener did not start"

cp "$GB_CONFIG" "$T/worker.conf"
# WATCHDOG_PID must be the worker's own pid: set it in the shell that execs it
NOTIFY_SOCKET=$T/notify.sock bash -c 'export WATCHDOG_PID=$$ WATCHDOG_USEC=2000000
	exec "$0" -c "$1" --instance sd1' "$GB_WORKER" "$T/worker.conf" >"$T/sd1.log" 2>&1 &
W=$!
GB_PIDS+=("$W")
wait_until 30 "grep -q '^READY=1' '$T/notify.log'" || fail "no READY=1: $(cat "$T/notify.log")"
grep -q 'AMQP connected' "$T/sd1.log" || fail "READY=1 before the worker consumes"
wait_until 10 "[ \$(grep -c '^WATCHDOG=1' '$T/notify.log') -ge 3 ]" || fail "fewer than 3 WATCHDOG=1: $(cat "$T/notify.log")"
log "READY=1 after consuming; WATCHDOG=1 pings"

# reload: a good config, then a broken one (the old config stays)
before=$(grep -c '^READY=1' "$T/notify.log")
kill -HUP "$W"
wait_until 10 "[ \$(grep -c '^READY=1' '$T/notify.log') -gt $before ]" || fail "no READY=1 after SIGHUP"
grep -q '^RELOADING=1' "$T/notify.log" || fail "no RELOADING=1: $(cat "$T/notify.log")"
wait_until 10 "grep -q 'configuration reloaded' '$T/sd1.log'" || fail "no reload line"
printf '[worker]\nlog_level = loud\n' >>"$T/worker.conf"
"$GB_WORKER" --check-config -c "$T/worker.conf" >"$T/check.out" 2>&1 && fail "--check-config accepted log_level = loud"
grep -q "log_level" "$T/check.out" || fail "--check-config does not name the key: $(cat "$T/check.out")"
kill -HUP "$W"
wait_until 10 "grep -q 'reload failed, keeping the old config' '$T/sd1.log'" || fail "a broken reload was not refused"
kill -0 "$W" || fail "the worker died on a broken reload"
log "SIGHUP: RELOADING=1, READY=1; a broken config refused, old one kept"

# still serving after the reloads
ds="it.sd.$ID_BASE"
cat >"$T/grid.json" <<EOT
{"nuclei": [{"name": "IT-SD-A", "status": "ACTIVE", "bareNucleus": "", "transferBacklog": 10, "RW": 100,
  "storages": [{"name": "IT-SD-A_DATADISK", "spaceFree": 900000, "spaceExpired": 1000, "spaceTotal": 2000000, "tape": false, "blacklisted": false}],
  "local": {"$ds": {"size": 2000, "files": 500}}}]}
EOT
"$GB" -c "$GB_CONFIG" grid load "$T/grid.json" >/dev/null || fail "grid load"
subscribe a 1 60 task.assigned
task_json $((ID_BASE + 1)) "$ds" 2000 500 300 >"$T/task.json"
"$GB" -c "$GB_CONFIG" task submit "$T/task.json" >/dev/null || fail "submit"
wait "${SUB[a]}" || fail "no decision after the reloads"

# graceful stop
kill -TERM "$W"
rc=0
wait_until 30 "! kill -0 $W 2>/dev/null" || fail "worker still running 30 s after SIGTERM"
wait "$W" || rc=$?
[ "$rc" = 0 ] || fail "exit status $rc after SIGTERM"
grep -q '^STOPPING=1' "$T/notify.log" || fail "no STOPPING=1: $(cat "$T/notify.log")"
grep -q 'stop requested: draining' "$T/sd1.log" || fail "no drain line"
grep -q 'stopping: 1 decided' "$T/sd1.log" || fail "stopping line: $(grep stopping: "$T/sd1.log")"
log "SIGTERM: STOPPING=1, drained, exit 0"
echo "1 passed, 0 failed"
