# shellcheck shell=bash
# lib.sh — shared helpers of the integration tests (sourced, not run).
#
# Every test runs the real gridbroker and gridbroker-worker binaries against
# the real MariaDB and RabbitMQ started by scripts/services, and checks what
# it sees only through RabbitMQ (events, dead letters) and MariaDB (rows).
set -euo pipefail

GB_SRC=${GB_SOURCE_DIR:?GB_SOURCE_DIR must point at the source tree}
GB_BIN=${1:?usage: $0 BINDIR}
GB=$GB_BIN/gridbroker
GB_WORKER=$GB_BIN/gridbroker-worker
# With GB_IT_CONFIG the servers are someone else's (shared, already up):
# the test uses them and never starts them (GB_RUN_DIR names their run/
# directory for the `sql` helper).
[ -n "${GB_IT_CONFIG:-}" ] || "$GB_SRC/scripts/services" start >/dev/null
# GB_CONFIG and GB_ADMIN_CONFIG.
# shellcheck source-path=SCRIPTDIR source=configs.sh
. "$GB_SRC/tests/integration/configs.sh"
GB_DB_NAME=$(sed -n 's/^name *= *//p' "$GB_CONFIG" | head -1)
GB_CLOCK_FILE=$(sed -n 's/^clock_offset_file *= *//p' "$GB_CONFIG")
T=$(mktemp -d "${TMPDIR:-/tmp}/gb-it.XXXXXX")
# Sanitizer reports of every process this test starts go to $T/san and fail
# the test at its exit (a sanitized build's; sanitizers.sh says why).
# shellcheck source-path=SCRIPTDIR source=sanitizers.sh
. "$GB_SRC/tests/integration/sanitizers.sh"
san_setup "$T/san"
GB_PIDS=()
# The pid of each worker and subscriber by the NAME start_worker and
# subscribe were given: "${PID[w1]}" is worker w1, "${SUB[ok]}" subscriber
# ok (which exits once it has its COUNT events: tests wait for it).
declare -A PID=() SUB=()
# A task-id range of its own per run, so reruns never collide: from the
# clock (a rerun another day), and at least 100 past the range the test
# before it on this machine took (two tests started in the same second
# drew overlapping ranges, and one found the other's decision about its
# task: CI saw it_task_pending fail so). The last base is kept in
# $TMPDIR/gb-it-id-base, under flock.
ID_BASE=$(( ($(date +%s) % 1000000) * 100 + RANDOM % 100 ))
IT_ID_FILE=${TMPDIR:-/tmp}/gb-it-id-base
{
	flock 9
	last=$(cat "$IT_ID_FILE" 2>/dev/null || true)
	if [[ $last =~ ^[0-9]+$ ]] && ((ID_BASE < last + 100)); then
		ID_BASE=$((last + 100))
	fi
	echo "$ID_BASE" >"$IT_ID_FILE"
} 9>>"$IT_ID_FILE.lock"

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"; }
fail() { printf 'FAIL: %s\n' "$*" >&2; for f in "$T"/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -30 "$f"; }; done >&2; exit 1; }

# stop_all: end every worker and subscriber this test started, and wait. A
# worker still running must exit with status 0 on SIGTERM (a sanitized one
# that finds a leak at exit does not); one that did not is named in
# $T/stop-status and fails the test at its exit.
stop_all() {
	local pid name rc
	local -A live=()
	for name in "${!PID[@]}"; do
		kill -0 "${PID[$name]}" 2>/dev/null && live[${PID[$name]}]=$name
	done
	for pid in "${GB_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${GB_PIDS[@]}"; do
		rc=0
		wait "$pid" 2>/dev/null || rc=$?
		if [ -n "${live[$pid]:-}" ] && [ "$rc" -ne 0 ]; then
			printf 'worker %s (pid %s) exited with status %s on SIGTERM\n' \
				"${live[$pid]}" "$pid" "$rc" >>"$T/stop-status"
		fi
	done
	GB_PIDS=()
}

# Every worker a test starts writes each decision's inputs as a scenario
# file here ([worker] decision_inputs_dir); cleanup re-decides each one
# with `gridbroker explain` and compares the record digest with the one
# the worker stored (check_decision_inputs).
INPUTS=$T/decision-inputs
mkdir -p "$INPUTS"

# worker_conf CONF NAME: a copy of CONF for worker NAME that also dumps the
# decisions' inputs into $INPUTS; prints the copy's path.
worker_conf() {
	local conf=$T/$2.worker.conf
	{ cat "$1"; printf '\n[worker]\ndecision_inputs_dir = %s\n' "$INPUTS"; } >"$conf"
	printf '%s\n' "$conf"
}

# check_replay: `gridbroker replay` with no change, over every decision
# this test's workers made, re-decides each from the inputs stored with it
# to the digest stored with it: 0 differences, none skipped. Run with the
# read-only account, as an operator would. The window: from this test's
# start to now on the workers' clock (the clock seam may have moved it
# ahead; an earlier test that moved it further stored decisions later
# still, which are not this test's).
IT_T0=$(($(date +%s) - 1))
check_replay() {
	local out off=0
	[ -n "$GB_CLOCK_FILE" ] && [ -f "$GB_CLOCK_FILE" ] && off=$(cat "$GB_CLOCK_FILE")
	out=$("$GB" -c "$GB_RO_CONFIG" replay --since "$IT_T0" --until $(($(date +%s) + off + 2)) --json 2>"$T/replay-check.err") || {
		echo "FAIL: replay: $(cat "$T/replay-check.err")" >&2
		return 1
	}
	python3 -c 'import json,sys
d = json.loads(sys.argv[1])
if d["digestDiffers"] or d["skipped"]:
    print("FAIL: replay with no change: %d of %d decisions differ, %d skipped %s; largest: %s" % (d["digestDiffers"], d["replayed"], d["skipped"], d["skipReasons"], d["largestChanges"][:3]), file=sys.stderr)
    sys.exit(1)
print("replay, no change: %d decisions, 0 differ" % d["replayed"])' "$out"
}

# check_decision_inputs: for every decision a worker of this test made and
# dumped, the digest `gridbroker explain` gives its inputs must be the
# digest of the record the worker stored: one decision path for both. A
# decision whose row is gone (the retention test deletes some) is skipped.
check_decision_inputs() {
	local f base kind id table stored explained n=0 gone=0 bad=0
	for f in "$INPUTS"/*.json; do
		[ -e "$f" ] || continue
		base=${f##*/}
		base=${base%.json}
		kind=${base%-*}
		id=${base##*-}
		table=decisions
		[ "$kind" = pilot ] && table=pilot_matches
		stored=$(sql "SELECT JSON_VALUE(detail, '$.record.digest') FROM $table WHERE id = $id")
		if [ -z "$stored" ] || [ "$stored" = NULL ]; then
			gone=$((gone + 1))
			continue
		fi
		explained=$("$GB" explain "$f" --json 2>"$T/explain.err" |
			sed -n 's/.*"digest": *"\([0-9a-f]*\)".*/\1/p' | head -1)
		n=$((n + 1))
		if [ "$explained" != "$stored" ]; then
			bad=$((bad + 1))
			printf 'FAIL: %s decision %s: worker digest %s, explain %s (%s)\n' \
				"$kind" "$id" "$stored" "${explained:-none}" "$f" >&2
			cat "$T/explain.err" >&2
		fi
	done
	log "decision inputs: $n re-decided by explain, $bad different, $gone without a stored record"
	[ "$bad" -eq 0 ]
}

cleanup() {
	local rc=$?
	stop_all
	if [ -s "$T/stop-status" ]; then
		sed 's/^/FAIL: /' "$T/stop-status" >&2
		rc=1
	fi
	san_check "$T/san" "$T"/*.log || rc=1
	if [ "$rc" -eq 0 ] && ! check_replay; then
		rc=1
	fi
	# every decision's inputs as the workers wrote them, against the
	# scenario schemas
	if [ "$rc" -eq 0 ] && compgen -G "$INPUTS/*.json" >/dev/null &&
		! python3 "$GB_SRC/scripts/check-scenarios" "$INPUTS" >"$T/schemas.out" 2>&1; then
		sed 's/^/FAIL: /' "$T/schemas.out" >&2
		rc=1
	fi
	if [ "$rc" -eq 0 ] && ! check_decision_inputs; then
		rc=1
		# keep the inputs that differ for a look
		cp -r "$INPUTS" "${TMPDIR:-/tmp}/gb-it-inputs.$$" 2>/dev/null &&
			log "inputs kept in ${TMPDIR:-/tmp}/gb-it-inputs.$$"
	fi
	[ -n "$GB_CLOCK_FILE" ] && rm -f "$GB_CLOCK_FILE"
	rm -rf "$T"
	exit "$rc"
}
trap cleanup EXIT

sql() { "$GB_SRC/scripts/services" sql -N -B "${GB_DB_NAME:-gridbroker}" -e "$1"; }

# start_worker NAME [VAR=value ...]: start a worker in the background.
start_worker() {
	local name=$1 conf; shift
	conf=$(worker_conf "$GB_CONFIG" "$name")
	env "$@" "$GB_WORKER" -c "$conf" --instance "$name" >"$T/$name.log" 2>&1 &
	GB_PIDS+=($!)
	# shellcheck disable=SC2034 # read by the tests that source this file
	PID[$name]=$!
	wait_until 30 "grep -q 'AMQP connected' '$T/$name.log'" || fail "worker $name did not connect"
}

# wait_until SECONDS 'shell condition': true as soon as the condition holds,
# false when it still does not after SECONDS. The condition is shell code,
# evaluated afresh every tenth of a second: what must be read at each try
# (a file's content, a count) is escaped in it, what is fixed is not.
wait_until() {
	local limit=$1 cond=$2 i
	for ((i = 0; i < limit * 10; i++)); do
		eval "$cond" && return 0
		sleep 0.1
	done
	return 1
}

# subscribe NAME COUNT TIMEOUT KEY...: collect events as JSON lines.
subscribe() {
	local name=$1 count=$2 timeout=$3; shift 3
	"$GB" -c "$GB_CONFIG" events -n "$count" -t "$timeout" --json "$@" >"$T/$name.events" 2>"$T/$name.sub.log" &
	GB_PIDS+=($!)
	# shellcheck disable=SC2034 # read by the tests that source this file
	SUB[$name]=$!
	wait_until 20 "grep -q subscribed '$T/$name.sub.log'" || fail "subscriber $name did not bind"
}

# advance_clock SECONDS: move every worker's clock (the clock seam).
advance_clock() {
	local cur=0
	[ -f "$GB_CLOCK_FILE" ] && cur=$(cat "$GB_CLOCK_FILE")
	echo $((cur + $1)) >"$GB_CLOCK_FILE.tmp" && mv "$GB_CLOCK_FILE.tmp" "$GB_CLOCK_FILE"
}

# task_json ID DATASET SIZE IO PRIO: one task object.
task_json() {
	cat <<EOT
{"taskID": $1, "gshare": "MC 16 simul", "taskPriority": $5, "ioIntensity": $4,
 "t1Weight": 0, "inputPreStaging": false, "taskBrokerOnMaster": false,
 "fullChain": null, "parentNucleus": null, "normalizedExpOutSize": 0.25,
 "inputDatasets": [{"name": "$2", "primary": true, "size": $3, "files": 500, "onTape": false}]}
EOT
}

"$GB" -c "$GB_ADMIN_CONFIG" db migrate >/dev/null || fail "db migrate ($GB_ADMIN_CONFIG)"
