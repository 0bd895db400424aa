#!/usr/bin/env bash
# Who may claim which group (issue 20, point 5), through the real worker:
# a pilot of the pilot account (the AMQP user_id RabbitMQ validated) that
# claims a group the account was granted in pilot_grants is matched; one
# that claims another group, a generic pilot from that account (no '*'
# grant), and a pilot.match without user_id are dead-lettered with the
# reason, while the worker checks ([dirac] owner_check auto: on, since the
# table has a row). With owner_check off, the forged group is matched:
# the check is what refuses it. RabbitMQ's own refusals (topic
# permissions, a forged user_id) are itc_acl's.
#
# The grants are this test's own account's and are revoked at exit: with
# any row left, every other test's pilots would be checked too.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

PILOT_CONFIG=${GB_CONFIG%.conf}-pilot.conf
[ -f "$PILOT_CONFIG" ] || fail "no pilot account config $PILOT_CONFIG (scripts/services writes it)"
acct=$(sed -n 's/^user *= *//p' "$PILOT_CONFIG" | head -1)
[ -n "$acct" ] || fail "no user in $PILOT_CONFIG"
app=$(sed -n '/^\[amqp\]/,/^\[/s/^user *= *//p' "$GB_CONFIG" | head -1)

revoke_all() {
	"$GB" -c "$GB_CONFIG" pilot revoke "$acct" >/dev/null 2>&1 || true
	"$GB" -c "$GB_CONFIG" pilot revoke "$app" >/dev/null 2>&1 || true
}
# lib.sh's cleanup reads the exit status first: hand it on.
my_cleanup() {
	local rc=$?
	revoke_all
	(exit "$rc")
	cleanup
}
trap my_cleanup EXIT

B=$ID_BASE
gA="it_grant_a_$B" gB="it_grant_b_$B" setup="IT-Grant-$B" site="LCG.IT-GRANT-$B.org"
job() { # job ID GROUP
	printf '{"jobID": %s, "ownerDN": "/DC=org/CN=it-grant-%s", "ownerGroup": "%s", "setup": "%s", "cpuTime": 3600, "userPriority": 1, "sites": ["%s"]}\n' \
		"$1" "$2" "$2" "$setup" "$site"
}
{ echo '{"jobs": ['; job $((B * 10 + 1)) "$gA"; echo ,
  job $((B * 10 + 2)) "$gB"; echo ,
  job $((B * 10 + 3)) "$gB"; echo ']}'; } >"$T/jobs.json"

revoke_all
"$GB" -c "$GB_CONFIG" pilot grant "$acct" "$gA" >/dev/null || fail "pilot grant"
"$GB" -c "$GB_CONFIG" dlq --remove -n 1000 >/dev/null

start_worker w1
"$GB" -c "$GB_CONFIG" tq submit "$T/jobs.json" >/dev/null || fail "tq submit"
waiting() { sql "select count(*) from tq_jobs where job_id between $((B * 10 + 1)) and $((B * 10 + 3))"; }
wait_until 30 "[ \"\$(waiting)\" = 3 ]" || fail "jobs not in their task queues: $(waiting)"
sleep 1 # the index refresh

# pilot CONF GROUP ID [--owner-group-less]: one pilot.match; the reply
# (JSON) in $T/ID.json, 0 when it came.
pilot() {
	local conf=$1 group=$2 id=$3 g=()
	[ -n "$group" ] && g=(--owner-group "$group")
	"$GB" -c "$conf" pilot match --site "$site" --setup "$setup" --cpu-time 86400 \
		"${g[@]}" --pilot-id "$id" --timeout-ms 4000 --json >"$T/$id.json" 2>"$T/$id.err"
}
# dead ERROR-TEXT: a dead letter whose x-gridbroker-error holds the text.
dead() { "$GB" -c "$GB_CONFIG" dlq --json | grep -F -- "$1" >/dev/null; }

# The granted group: matched.
pilot "$PILOT_CONFIG" "$gA" "it-grant-ok-$B" || fail "a pilot of $gA from $acct got no reply: $(cat "$T/it-grant-ok-$B.err")"
grep -q "\"jobID\":$((B * 10 + 1))" "$T/it-grant-ok-$B.json" || fail "the $gA pilot did not get $gA's job: $(cat "$T/it-grant-ok-$B.json")"
log "$acct claiming $gA (granted): matched job $((B * 10 + 1))"

# Another group: no reply, dead-lettered with the reason; the jobs stay.
if pilot "$PILOT_CONFIG" "$gB" "it-grant-forged-$B"; then
	fail "a pilot of $gB from $acct (not granted) was answered: $(cat "$T/it-grant-forged-$B.json")"
fi
why="ownerGroup: account '$acct' may not claim group '$gB'"
wait_until 10 "dead \"\$why\"" || fail "no dead letter with \"$why\": $("$GB" -c "$GB_CONFIG" dlq)"
[ "$(waiting)" = 2 ] || fail "a job of $gB was taken: $(waiting) waiting"
log "$acct claiming $gB (not granted): dead-lettered: $why"

# A generic pilot from the same account: it has no '*' grant.
if pilot "$PILOT_CONFIG" "" "it-grant-generic-$B"; then
	fail "a generic pilot from $acct was answered: $(cat "$T/it-grant-generic-$B.json")"
fi
why="ownerGroup: missing: account '$acct' may only send private pilots"
wait_until 10 "dead \"\$why\"" || fail "no dead letter with \"$why\": $("$GB" -c "$GB_CONFIG" dlq)"
log "generic pilot from $acct: dead-lettered"

# No user_id at all (the application account, which could set any group):
# a msgpack map {pilotID, setup, cpuTime 86400, ownerGroup} by hand.
mpstr() { printf "\\x$(printf %02x $((0xa0 + ${#1})))%s" "$1"; }
{ printf '\x84'; mpstr pilotID; mpstr "it-grant-nouid-$B"; mpstr setup; mpstr "$setup"
  mpstr cpuTime; printf '\xce\x00\x01\x51\x80'; mpstr ownerGroup; mpstr "$gB"; } >"$T/nouid.msgpack"
"$GB" -c "$GB_CONFIG" publish pilot.match "$T/nouid.msgpack" --message-id "it-grant-nouid-$B" --no-user-id >/dev/null ||
	fail "publish without user_id"
why="user_id: missing: pilot accounts are checked"
wait_until 10 "dead \"\$why\"" || fail "no dead letter with \"$why\": $("$GB" -c "$GB_CONFIG" dlq)"
[ "$(waiting)" = 2 ] || fail "a job of $gB was taken: $(waiting) waiting"
log "pilot.match without user_id: dead-lettered"

# The same forged pilot with the check off: matched. So the check, not
# something else, is what refused it above.
stop_all
{ cat "$GB_CONFIG"; printf '\n[dirac]\nowner_check = off\n'; } >"$T/off.conf"
GB_CONFIG=$T/off.conf start_worker w2
sleep 1
pilot "$PILOT_CONFIG" "$gB" "it-grant-off-$B" || fail "with owner_check off, the $gB pilot got no reply: $(cat "$T/it-grant-off-$B.err")"
grep -q "\"ownerGroup\":\"$gB\"" "$T/it-grant-off-$B.json" || fail "with owner_check off, no $gB job: $(cat "$T/it-grant-off-$B.json")"
log "owner_check off: the same claim of $gB is matched"

"$GB" -c "$GB_CONFIG" dlq --remove -n 1000 >/dev/null
echo "1 passed, 0 failed"
