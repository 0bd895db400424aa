#!/usr/bin/env bash
# Every class of bad input, across the five request types, against one real
# worker: each message lands in gridbroker.dead, unchanged, with the
# x-gridbroker-error header naming the field and the problem; the worker
# logs a "dead-lettered" line for each, counts them (the dead-lettered
# figure of its stopping line) and keeps serving task.broker, pilot.match
# and job.status afterwards. The bodies are the fuzz corpus's seeds
# (tests/fuzz/corpus, written by tests/fuzz/gen_corpus.c), so what this
# test sends is what the decoders are fuzzed from.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

CORPUS=$GB_SRC/tests/fuzz/corpus
MAX=$(sed -n 's/^max_message_bytes *= *//p' "$GB_CONFIG" | head -1)
MAX=${MAX:-1048576}

"$GB" -c "$GB_CONFIG" dlq --remove -n 1000 >/dev/null
start_worker w1

# One message longer than worker.max_message_bytes: refused before decoding.
# {"padding": <str 32 of BIG bytes>}
BIG=$((MAX + 4096))
byte() { printf '%b' "\\x$(printf %02x $(($1 & 255)))"; }
{ printf '\x81\xa7padding\xdb'; byte $((BIG >> 24)); byte $((BIG >> 16))
  byte $((BIG >> 8)); byte "$BIG"; head -c "$BIG" /dev/zero | tr '\0' x; } >"$T/oversized"
BIG_LEN=$(stat -c %s "$T/oversized")
[ "$BIG_LEN" -eq $((BIG + 14)) ] || fail "oversized body is $BIG_LEN bytes"

# class | routing key | body (corpus file, or a path under $T) | header
CASES=(
"oversized|task.broker|$T/oversized|body: message of $BIG_LEN bytes exceeds max_message_bytes $MAX"
"text|pilot.match|fuzz_pilot_match/bad-not-msgpack|body: not msgpack: 12 bytes of text ('pilot please')"
"wrong-type|task.broker|fuzz_task_broker/bad-wrong-type-taskID-string|taskID: expected integer, got string"
"wrong-type-nested|job.broker|fuzz_job_broker/bad-wrong-type-file-size-string|jobs[0].inputFiles[0].size: expected a number, got string"
"missing|job.broker|fuzz_job_broker/bad-missing-jobs|jobs: missing"
"missing-rule|pilot.match|fuzz_pilot_match/bad-ownerDN-without-ownerGroup|ownerGroup: required when ownerDN is given"
"negative|job.submit|fuzz_job_submit/bad-negative-cpuTime|jobs[0].cpuTime: expected an integer in [1, 1000000000000], got -250000"
"nan|task.broker|fuzz_task_broker/bad-nan-ioIntensity|ioIntensity: expected a number >= 0, got NaN"
"inf|job.broker|fuzz_job_broker/bad-inf-diskIO|diskIO: expected a number >= 0, got Inf"
"u64max|task.broker|fuzz_task_broker/bad-u64max-taskID|taskID: expected a positive integer, got 18446744073709551615"
"enum|job.status|fuzz_job_status/bad-panda-unknown-status|status: unknown value 'exploded'; expected a PanDA job status (see job.status.md), started or heartbeat"
"enum-system|job.status|fuzz_job_status/bad-unknown-system|system: unknown value 'condor'; expected dirac or panda"
"deep|pilot.match|fuzz_pilot_match/bad-deep-nesting|tags[0][0][0][0][0][0][0]: nesting deeper than 8"
"huge-array|job.broker|fuzz_job_broker/bad-jobs-too-many|jobs: array of 10001 exceeds the limit of 10000"
"huge-length|task.broker|fuzz_task_broker/bad-huge-array32|body: array claims 4294967295 elements but only 0 bytes follow"
"too-many-values|pilot.match|fuzz_pilot_match/bad-too-many-values|padding: more than 65536 values in the message"
"duplicate-key|job.submit|fuzz_job_submit/bad-duplicate-key|jobs[0].cpuTime: duplicate key"
"duplicate-id|job.broker|fuzz_job_broker/bad-duplicate-jobID|jobs[1].jobID: duplicate jobID (also jobs[0])"
"utf8|task.broker|fuzz_task_broker/bad-utf8-gshare|gshare: string is not valid UTF-8"
"long-string|job.status|fuzz_job_status/bad-panda-substatus-too-long|jobSubStatus: string of 64 bytes exceeds the limit of 63"
"truncated|job.status|fuzz_job_status/bad-truncated-dirac|body: truncated: the message ends inside this value"
"trailing|job.broker|fuzz_job_broker/bad-trailing-nil|body: trailing data after the message (1 bytes)"
)

N=0
for c in "${CASES[@]}"; do
	IFS='|' read -r class key body want <<<"$c"
	[[ $body == /* ]] || body=$CORPUS/$body.msgpack
	[ -f "$body" ] || fail "no body $body (run tests/fuzz/gen_corpus write)"
	"$GB" -c "$GB_CONFIG" publish "$key" "$body" --message-id "it-bad-$class-$ID_BASE" \
		>/dev/null || fail "publish $class"
	N=$((N + 1))
done

wait_until 60 "[ \$(\"$GB\" -c \"$GB_CONFIG\" dlq --json -n 1000 | grep -c '\"messageId\":\"it-bad-') -ge $N ]" ||
	fail "dead letters missing: $("$GB" -c "$GB_CONFIG" dlq -n 1000)"
"$GB" -c "$GB_CONFIG" dlq --json -n 1000 >"$T/dlq.json"
kill -0 "${PID[w1]}" || fail "worker died on bad input"

for c in "${CASES[@]}"; do
	IFS='|' read -r class key body want <<<"$c"
	[[ $body == /* ]] || body=$CORPUS/$body.msgpack
	id=it-bad-$class-$ID_BASE
	line=$(grep -F "\"messageId\":\"$id\"" "$T/dlq.json") || fail "$class: no dead letter"
	[ "$(grep -c . <<<"$line")" -eq 1 ] || fail "$class: dead-lettered more than once: $line"
	# the header exactly (dlq --json writes it as a JSON string; none of
	# these texts has a character JSON would escape)
	grep -qF "\"error\":\"$want\"" <<<"$line" || fail "$class: header is not '$want': $line"
	grep -qF "\"routingKey\":\"$key\"" <<<"$line" || fail "$class: routing key: $line"
	# the original body, unchanged in size
	grep -qF "\"bytes\":$(stat -c %s "$body")" <<<"$line" || fail "$class: body size changed: $line"
	grep -qF "dead-lettered $key message $id: $want" "$T/w1.log" ||
		fail "$class: no log line 'dead-lettered $key message $id: $want'"
	log "$class ($key): $want"
done

# Still serving every path that just refused bad input.
task_json $((ID_BASE + 7)) "it.bad.$ID_BASE" 1 100 300 >"$T/t.json"
subscribe ok 1 60 task.assigned task.pending
"$GB" -c "$GB_CONFIG" task submit "$T/t.json" >/dev/null || fail "submit a valid task"
wait "${SUB[ok]}" || fail "worker stopped deciding tasks after bad input"
grep -q "\"taskID\":$((ID_BASE + 7))" "$T/ok.events" || fail "wrong event: $(cat "$T/ok.events")"
"$GB" -c "$GB_CONFIG" pilot match --site LCG.IT-BAD.org --setup IT-Bad-Input --cpu-time 3600 \
	--pilot-id "it-bad-pilot-$ID_BASE" --json >"$T/reply.json" || fail "no reply to a valid pilot"
grep -q '"outcome":"nomatch"' "$T/reply.json" || fail "pilot reply: $(cat "$T/reply.json")"
"$GB" -c "$GB_CONFIG" job status $((ID_BASE * 10 + 9)) running >/dev/null || fail "publish job.status"
wait_until 30 "grep -q 'job $((ID_BASE * 10 + 9)) is unknown; ignored' '$T/w1.log'" ||
	fail "worker stopped taking job.status after bad input"
kill -0 "${PID[w1]}" || fail "worker died"

# The worker's count of dead letters (its stopping line) says $N.
kill -TERM "${PID[w1]}"
wait "${PID[w1]}" || true
grep -q "stopping: .* $N dead-lettered" "$T/w1.log" ||
	fail "dead-letter count: $(grep stopping: "$T/w1.log")"

"$GB" -c "$GB_CONFIG" dlq --remove -n 1000 >/dev/null
log "$N bad messages of every class dead-lettered with field and problem; worker still serving"
echo "1 passed, 0 failed"
