#!/usr/bin/env bash
# `gridbroker replay` and `why --scenario` against decisions real workers
# made (issue 21):
#  1. each decision's inputs are stored with it: `why task ID --scenario`
#     writes a file that `explain` re-decides to the stored digest;
#  2. a replay of the window with no change finds 0 differences and
#     re-decides every decision (the other tests check the same at their
#     exit: lib.sh's check_replay);
#  3. the differential check: tasks decided under the default
#     DISK_THRESHOLD are replayed with --set DISK_THRESHOLD=500000; then
#     the parameter is really set and the same tasks are submitted again
#     (new ids). What the replay predicted must be what the workers did:
#     the same candidates dropped by every rule (TB-04 among them), the
#     same count of tasks assigned and pending. (Which nucleus each
#     assigned task gets is a weighted draw, seeded per request, so only
#     the counts are compared there.)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

B=$ID_BASE
N=12
THRESH=500000
sed -e "s/\"3800000\([0-9]\)\": \"/\"${B}0\1\": \"/g" "$GB_SRC/etc/grid-sample.json" >"$T/grid.json"
"$GB" -c "$GB_CONFIG" grid load "$T/grid.json" >"$T/load.out" || fail "grid load: $(cat "$T/load.out")"
rm -f "$GB_CLOCK_FILE"

old=$(sql "SELECT value FROM params WHERE component = 'taskbrokerage' AND name = 'DISK_THRESHOLD'")
[ -n "$old" ] || fail "no DISK_THRESHOLD row in params"
trap 'rc=$?; sql "UPDATE params SET value = '"'$old'"' WHERE component = '"'taskbrokerage'"' AND name = '"'DISK_THRESHOLD'"'" >/dev/null 2>&1 || true; set +e; (exit $rc); cleanup' EXIT

start_worker w1
start_worker w2

DS="mc23_13p6TeV:mc23_13p6TeV.601229.PhPy8EG_A14_ttbar_hdamp258p75_SingleLep.simul.HITS.e8514_s4162_tid36000001_00"
# submit_tasks FIRST: N tasks FIRST.. on the sample dataset; waits for
# their N events.
submit_tasks() {
	local i
	subscribe "s$1" "$N" 60 task.assigned task.pending
	for ((i = 0; i < N; i++)); do
		task_json $(($1 + i)) "$DS" 1 10 300 >"$T/task.json"
		"$GB" -c "$GB_CONFIG" task submit "$T/task.json" >/dev/null || fail "task submit"
	done
	wait "${SUB[s$1]}" || fail "task events: $(cat "$T/s$1.events")"
}
replay() { "$GB" -c "$GB_RO_CONFIG" replay "$@" 2>"$T/replay.err"; }
# subjects FIRST: --subject for each of the N tasks from FIRST (other
# tests' pending tasks are retried meanwhile, and their decisions fall in
# the same windows)
subjects() { local i; for ((i = 0; i < N; i++)); do printf -- '--subject\n%s\n' $(($1 + i)); done; }
# jq-free JSON reads
jget() { python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d=d.get(k, {}) if isinstance(d, dict) else {}
print(d if d != {} else 0)' "$@"; }

# ---- phase 1: the default threshold --------------------------------------
t1=$(date +%s)
P1=$((B * 100))
submit_tasks $P1
t1e=$(($(date +%s) + 1))

# 1. why --scenario, explain: the stored digest
why_digest=$("$GB" -c "$GB_CONFIG" why task $P1 --json | sed -n 's/.*"digest": "\([0-9a-f]*\)".*/\1/p' | head -1)
"$GB" -c "$GB_CONFIG" why task $P1 --scenario "$T/p1.json" 2>/dev/null || fail "why --scenario"
ex_digest=$("$GB" explain "$T/p1.json" --json | sed -n 's/.*"digest": "\([0-9a-f]*\)".*/\1/p' | head -1)
if [ -z "$why_digest" ] || [ "$why_digest" != "$ex_digest" ]; then
	fail "explain of the stored inputs gives digest '$ex_digest', the stored record '$why_digest'"
fi
log "why --scenario: explain re-decides task $P1 to its stored digest $why_digest"
# --decision N: that decision of the task's, or an error naming it.
d1=$(sql "select id from decisions where kind = 'task' and subject = '$P1' order by id desc limit 1")
[ -n "$d1" ] || fail "no decision row for task $P1"
"$GB" -c "$GB_CONFIG" why task $P1 --decision "$d1" | head -1 | grep -q "decision $d1\$" ||
	fail "why task $P1 --decision $d1 does not show decision $d1: $("$GB" -c "$GB_CONFIG" why task $P1 --decision "$d1" 2>&1 | head -1)"
if "$GB" -c "$GB_CONFIG" why task $P1 --decision $((d1 + 1000000000)) >/dev/null 2>"$T/why.err"; then
	fail "why --decision of another decision's id succeeded"
fi
grep -q "is not one of its" "$T/why.err" || fail "why --decision of a wrong id says: $(cat "$T/why.err")"

# 2. no change: 0 differences
mapfile -t S1 < <(subjects $P1)
replay --since "$t1" --until "$t1e" --kind task "${S1[@]}" --json >"$T/r0.json" || fail "replay: $(cat "$T/replay.err")"
[ "$(jget "$T/r0.json" replayed)" = "$N" ] || fail "replayed $(jget "$T/r0.json" replayed) of $N: $(cat "$T/r0.json")"
[ "$(jget "$T/r0.json" digestDiffers)" = 0 ] || fail "a replay with no change differs: $(cat "$T/r0.json")"
[ "$(jget "$T/r0.json" skipped)" = 0 ] || fail "replay skipped decisions: $(cat "$T/r0.json")"
log "replay, no change: $N decisions, 0 differences"

# 2b. the digest kept beside each decision's inputs is its record's (the
# workers wrote it); a replay with no change reads a record only when the
# new one is not the one that digest names: a wrong or missing digest
# makes it read the record, and the report is the same
bad=$(sql "SELECT COUNT(*) FROM decision_inputs i JOIN decisions d ON d.id = i.decision_id AND i.src = 'd'
	WHERE i.decided_at BETWEEN $t1 AND $t1e AND d.kind = 'task' AND d.subject BETWEEN $P1 AND $((P1 + N - 1))
	AND (i.digest IS NULL OR i.digest <> JSON_VALUE(d.detail, '$.record.digest'))")
[ "$bad" = 0 ] || fail "$bad decisions of phase 1 have no digest, or another one, beside their inputs"
ids=$(sql "SELECT d.id FROM decision_inputs i JOIN decisions d ON d.id = i.decision_id AND i.src = 'd'
	WHERE i.decided_at BETWEEN $t1 AND $t1e AND d.kind = 'task' AND d.subject BETWEEN $P1 AND $((P1 + N - 1))
	ORDER BY d.id LIMIT 2" | tr '\n' ' ')
read -r id_wrong id_none <<<"$ids"
[ -n "$id_none" ] || fail "fewer than two decisions of phase 1: '$ids'"
sql "UPDATE decision_inputs SET digest = REPEAT('0', 64) WHERE src = 'd' AND decision_id = $id_wrong;
	UPDATE decision_inputs SET digest = NULL WHERE src = 'd' AND decision_id = $id_none" || fail "spoil two digests"
replay --since "$t1" --until "$t1e" --kind task "${S1[@]}" --json >"$T/r0b.json" || fail "replay: $(cat "$T/replay.err")"
sql "UPDATE decision_inputs i JOIN decisions d ON d.id = i.decision_id SET i.digest = JSON_VALUE(d.detail, '$.record.digest')
	WHERE i.src = 'd' AND i.decision_id IN ($id_wrong, $id_none)" || fail "restore two digests"
python3 - "$T/r0.json" "$T/r0b.json" <<'EOF' || fail "with two digests spoilt, the replay reports otherwise (above)"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for r in (a, b):
    for k in ("seconds", "perSecond", "inputBytesReused"):
        r.pop(k, None)
if a != b:
    print({k: (a.get(k), b.get(k)) for k in set(a) | set(b) if a.get(k) != b.get(k)})
    sys.exit(1)
EOF
log "a wrong and a missing digest beside the inputs: the records are read, the same report"

# 3. the prediction
replay --since "$t1" --until "$t1e" --kind task "${S1[@]}" --set "DISK_THRESHOLD=$THRESH" --all-tables --json >"$T/r1.json" ||
	fail "replay --set: $(cat "$T/replay.err")"
pred_tb04=$(jget "$T/r1.json" drops.TB-04.after)
[ "$pred_tb04" -gt "$(jget "$T/r1.json" drops.TB-04.before)" ] ||
	fail "--set DISK_THRESHOLD=$THRESH drops no more nuclei by TB-04: $(cat "$T/r1.json")"
log "prediction: TB-04 drops $(jget "$T/r1.json" drops.TB-04.before) -> $pred_tb04, outcome changed $(jget "$T/r1.json" outcomeChanged)"
# Each largest change's why line runs as printed (its config, its
# decision) and shows that decision.
python3 -c 'import json, sys
for c in json.load(open(sys.argv[1]))["largestChanges"]:
    print(c["decision"], c["why"])' "$T/r1.json" >"$T/why.lines"
[ -s "$T/why.lines" ] || fail "the --set replay lists no change: $(cat "$T/r1.json")"
while read -r dec cmd; do
	[[ $cmd == "gridbroker -c $GB_RO_CONFIG why task "*" --decision $dec" ]] || fail "why line '$cmd' for decision $dec"
	# shellcheck disable=SC2086 # the line is words, as a user pastes it
	"$GB" ${cmd#gridbroker } | head -1 | grep -q "decision $dec\$" || fail "'$cmd' does not show decision $dec"
done <"$T/why.lines"
log "the largest changes' why lines run as printed ($(wc -l <"$T/why.lines"))"
# The same replay on one thread (the one above ran on every CPU): the same
# report, the timing aside, whatever thread took which decision.
replay --since "$t1" --until "$t1e" --kind task "${S1[@]}" --set "DISK_THRESHOLD=$THRESH" --all-tables --json --threads 1 >"$T/r1t1.json" ||
	fail "replay --threads 1: $(cat "$T/replay.err")"
python3 - "$T/r1.json" "$T/r1t1.json" <<'EOF' || fail "replay's report depends on its thread count (above)"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for r in (a, b):
    for k in ("seconds", "perSecond"):
        r.pop(k, None)
diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
for k in diff:
    print(f"{k}: every CPU {json.dumps(a.get(k))[:400]}\n   one thread {json.dumps(b.get(k))[:400]}")
sys.exit(1 if diff else 0)
EOF
log "the same report on one thread"

# ---- phase 2: the threshold really set ------------------------------------
sql "UPDATE params SET value = '$THRESH' WHERE component = 'taskbrokerage' AND name = 'DISK_THRESHOLD'" ||
	fail "set DISK_THRESHOLD"
t2=$(date +%s)
P2=$((B * 100 + 50))
submit_tasks $P2
t2e=$(($(date +%s) + 1))
mapfile -t S2 < <(subjects $P2)
replay --since "$t2" --until "$t2e" --kind task "${S2[@]}" --all-tables --json >"$T/r2.json" || fail "replay phase 2: $(cat "$T/replay.err")"
[ "$(jget "$T/r2.json" digestDiffers)" = 0 ] || fail "phase 2 replay differs: $(cat "$T/r2.json")"
[ "$(jget "$T/r2.json" replayed)" = "$N" ] || fail "phase 2: replayed $(jget "$T/r2.json" replayed) of $N"

# The workers' decisions (phase 2 as stored) against the prediction: every
# rule's drops, then the outcomes.
python3 - "$T/r1.json" "$T/r2.json" <<'EOF' || fail "the replay's prediction and the workers' decisions differ (above)"
import json, sys
pred = json.load(open(sys.argv[1]))
real = json.load(open(sys.argv[2]))
bad = 0
rules = set(pred["drops"]) | set(real["drops"])
for r in sorted(rules):
    p = pred["drops"].get(r, {}).get("after", 0)
    w = real["drops"].get(r, {}).get("before", 0)
    if p != w:
        print(f"rule {r}: replay predicted {p} drops, the workers dropped {w}")
        bad = 1
def assigned(tbl, side):
    return sum(v[side] for k, v in tbl["assignments"].items() if k.startswith("task nucleus "))
p, w = assigned(pred, "after"), assigned(real, "before")
if p != w:
    print(f"replay predicted {p} tasks assigned, the workers assigned {w}")
    bad = 1
print(f"compared {len(rules)} rules' drops and {p} assigned of {pred['replayed']}")
sys.exit(bad)
EOF
log "the workers with DISK_THRESHOLD=$THRESH did what the replay predicted"
echo "1 passed, 0 failed"
