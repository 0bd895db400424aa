#!/usr/bin/env bash
# Malformed requests land in gridbroker.dead with an x-gridbroker-error
# header naming the field and the problem, and the worker keeps serving.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

"$GB" -c "$GB_CONFIG" dlq --remove -n 1000 >/dev/null
start_worker w1
p() { "$GB" -c "$GB_CONFIG" publish task.broker "$@" >/dev/null || fail "publish $*"; }

printf 'this is not msgpack' >"$T/garbage"
p "$T/garbage" --message-id "it-dlx-garbage-$ID_BASE"
# {"taskID": "abc"}: a string where an integer belongs
printf '\x81\xa6taskID\xa3abc' >"$T/wrongtype"
p "$T/wrongtype" --message-id "it-dlx-type-$ID_BASE"
# {"taskID": 5}: gshare missing
printf '\x81\xa6taskID\x05' >"$T/missing"
p "$T/missing" --message-id "it-dlx-missing-$ID_BASE"
# a valid body without a message id
task_json $((ID_BASE + 3)) "it.dlx.$ID_BASE" 1 100 300 >"$T/t.json"
p "$T/garbage"   # no --message-id

wait_until 30 "[ \$(\"$GB\" -c \"$GB_CONFIG\" dlq --json | grep -c routingKey) -ge 4 ]" || fail "dead letters missing: $("$GB" -c "$GB_CONFIG" dlq)"
"$GB" -c "$GB_CONFIG" dlq --json >"$T/dlq.json"
cat "$T/dlq.json"
grep "it-dlx-type-$ID_BASE" "$T/dlq.json" | grep -q '"error":"taskID: expected' || fail "type error not named"
grep "it-dlx-missing-$ID_BASE" "$T/dlq.json" | grep -q '"error":"gshare: missing' || fail "missing field not named"
grep "it-dlx-garbage-$ID_BASE" "$T/dlq.json" | grep -q '"error":"' || fail "garbage has no error header"
grep -q '"error":"message_id: missing' "$T/dlq.json" || fail "missing message id not named"
kill -0 "${PID[w1]}" || fail "worker died on bad input"

# Still serving: a valid task is decided.
subscribe ok 1 60 task.assigned task.pending
"$GB" -c "$GB_CONFIG" task submit "$T/t.json" >/dev/null || fail "submit"
wait "${SUB[ok]}" || fail "worker stopped serving after bad input"
grep -q "\"taskID\":$((ID_BASE + 3))" "$T/ok.events" || fail "wrong event"
grep -q 'dead-lettered' "$T/w1.log" || fail "no log line for dead letters"
"$GB" -c "$GB_CONFIG" dlq --remove -n 1000 >/dev/null
log "4 malformed requests dead-lettered with reasons; worker still serving"
echo "1 passed, 0 failed"
