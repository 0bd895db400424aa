#!/usr/bin/env bash
# tests/faults/check-selftest.sh — the fault suite's checker must be able to
# fail (ctest: unit.faults_check_selftest; no server needed).
#
# Usage: check-selftest.sh [WORKDIR]   (default: a temporary directory)
#
# Writes a small, consistent set of made-up records (the load's ledgers,
# the drained events, replies and dead letters, and the database as
# check.sh --no-db reads it), checks that check.sh passes it, then breaks it
# one way at a time — a job given to two pilots (in the database and on the
# wire only), a pilot given two jobs or two answers, a lost request, a
# decision published as two events, a request decided twice, a job the load
# had ended matched afterwards, and a few more — and checks that check.sh fails with exactly
# the invariants each fault must raise, every other one staying 0. A
# checker that always fails, or that reads the wrong column, fails here.
set -euo pipefail
export LC_ALL=C

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
CHECK=$HERE/check.sh
if [ $# -gt 0 ]; then
	W=$1
	rm -rf "$W"
	mkdir -p "$W"
else
	W=$(mktemp -d)
	trap 'rm -rf "$W"' EXIT
fi

# tsv FILE LINE... : append lines, fields separated by single spaces in the
# arguments (no field of these records holds a space).
tsv() {
	local f=$1 line
	shift
	for line in "$@"; do printf '%s\n' "${line// /$'\t'}" >>"$f"; done
}

# The clean records. Besides the plain cases they hold the three ends of a
# job the checker must accept: job 11 was matched (r-pm-3) and then killed,
# job 12 was killed while waiting and never matched, and the "done" of job
# 13 reached the worker before its submission (ignored), so a later match
# of 13 is fine.
base() {
	local d=$1
	mkdir -p "$d/db"
	tsv "$d/sent-1.tsv" \
		"r-task-1 task.broker 1" \
		"r-jobs-2 job.broker 2:2001,2002" \
		"r-tq-10 job.submit 10,11,12,13" \
		"r-tq-14 job.submit 14,15" \
		"r-pm-1 pilot.match pilot-1" \
		"r-pm-2 pilot.match pilot-2" \
		"r-pm-3 pilot.match pilot-3" \
		"r-st-1 job.status 10:running" \
		"r-st-2 job.status 11:killed" \
		"r-st-3 job.status 12:killed"
	tsv "$d/sent-2.tsv" \
		"r-st-4 job.status 13:done" \
		"r-pm-4 pilot.match pilot-4" \
		"r-st-5 job.status 2001:heartbeat" \
		"r-bad-1 job.submit -"
	tsv "$d/dead.tsv" "r-bad-1 job.submit body:not-msgpack"
	# r-pm-1 answered twice (a re-asked pilot): a reply copy, allowed.
	tsv "$d/replies-1.tsv" "r-pm-1 1 10 1" "r-pm-2 0 0 2" "r-pm-1 1 10 1"
	tsv "$d/replies-2.tsv" "r-pm-3 1 11 3" "r-pm-4 1 13 4"
	# gb-pilot-1-matched twice: an event copy (at-least-once), allowed.
	tsv "$d/events.tsv" \
		"gb-decision-1 task.assigned -" \
		"gb-decision-2 jobs.assigned -" \
		"gb-pilot-1-matched pilot.matched 10/r-pm-1/1,11/r-pm-3/3" \
		"gb-pilot-2-nomatch pilot.nomatch 0/r-pm-2/2" \
		"gb-pilot-1-matched pilot.matched 10/r-pm-1/1,11/r-pm-3/3" \
		"gb-pilot-4-matched pilot.matched 13/r-pm-4/4"
	tsv "$d/db/processed.tsv" r-task-1 r-jobs-2 r-tq-10 r-tq-14 \
		r-st-1 r-st-2 r-st-3 r-st-4 r-st-5
	tsv "$d/db/pilot_matches.tsv" "1 r-pm-1 10" "2 r-pm-2 0" "3 r-pm-3 11" \
		"4 r-pm-4 13"
	tsv "$d/db/decisions.tsv" "1 task 1 r-task-1" "2 jobs 2 r-jobs-2"
	tsv "$d/db/outbox.tsv" \
		"gb-decision-1 task.assigned r-task-1 1" \
		"gb-decision-2 jobs.assigned r-jobs-2 1" \
		"gb-pilot-1-matched pilot.matched r-pm-1 1" \
		"gb-pilot-2-nomatch pilot.nomatch r-pm-2 1" \
		"gb-pilot-4-matched pilot.matched r-pm-4 1"
	tsv "$d/db/wms_jobs.tsv" "10 running r-pm-1" "11 killed r-pm-3" \
		"12 killed -" "13 matched r-pm-4" "14 waiting -" "15 waiting -"
	tsv "$d/db/tq_jobs.tsv" 14 15
	tsv "$d/db/panda_jobs.tsv" 2001 2002
}

# A new pilot request of the load with its decision row, reply and event:
# pilot R, decision N, job J (0: nothing).
pilot() {
	local d=$1 r=$2 n=$3 j=$4 ev=pilot.matched m=1
	[ "$j" != 0 ] || { ev=pilot.nomatch; m=0; }
	tsv "$d/sent-2.tsv" "$r pilot.match pilot-$r"
	tsv "$d/db/pilot_matches.tsv" "$n $r $j"
	tsv "$d/replies-2.tsv" "$r $m $j $n"
	tsv "$d/events.tsv" "gb-pilot-$n-${ev#pilot.} $ev $j/$r/$n"
	tsv "$d/db/outbox.tsv" "gb-pilot-$n-${ev#pilot.} $ev $r 1"
}

# The rows of a report, "name=value" per line: all of them (rows), or the
# invariants only (invariants; their sub-rows are indented further).
rows() {
	awk '/^  / { v = $NF; sub(/^ +/, ""); sub(/ +[^ ]+$/, ""); print $0 "=" v }'
}
invariants() {
	awk '/---- invariants/ { on = 1; next }
		on && /^  [^ ]/ { v = $NF; sub(/^  /, ""); sub(/ +[^ ]+$/, ""); print $0 "=" v }'
}

failures=0
# expect CASE EXIT NAME=VALUE... : run the checker on $W/CASE; every
# invariant not named must be 0.
expect() {
	local case=$1 want_rc=$2 rc=0 out got line name
	shift 2
	out=$(OUT=$W/$case bash "$CHECK" --no-db 2>&1) || rc=$?
	got=$(invariants <<<"$out")
	local problems=()
	[ "$rc" = "$want_rc" ] || problems+=("exit status $rc, wanted $want_rc")
	[ -n "$got" ] || problems+=("no invariant table")
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		name=${line%=*}
		local want=0 kv
		for kv in "$@"; do [ "${kv%=*}" != "$name" ] || want=${kv#*=}; done
		[ "${line#*=}" = "$want" ] || problems+=("$name is ${line#*=}, wanted $want")
	done <<<"$got"
	for kv in "$@"; do
		grep -qxF "${kv%=*}=${kv#*=}" <<<"$got" || problems+=("no row '${kv%=*}' = ${kv#*=}")
	done
	if [ ${#problems[@]} -eq 0 ]; then
		echo "ok   $case"
	else
		echo "FAIL $case: ${problems[*]}"
		printf '%s\n' "$out" | sed 's/^/     | /'
		failures=$((failures + 1))
	fi
}

# new CASE : a fresh copy of the clean records.
new() { base "$W/$1"; }

new clean
expect clean 0
# The three ends are told apart as the header of check.sh says.
out=$(OUT=$W/clean bash "$CHECK" --no-db | rows) || true
for kv in "jobs ended by the load=3" "applied while waiting=1" \
	"applied after a match=1" "ignored (job not known yet)=1" \
	"event copies (at-least-once)=1" "reply copies (re-asked pilots)=1"; do
	if ! grep -qxF "$kv" <<<"$out"; then
		echo "FAIL clean: no row '${kv%=*}' = ${kv#*=}"
		failures=$((failures + 1))
	fi
done

# Job 14 given to two pilots, in the database too (as if
# pilot_matches.job_id were not UNIQUE).
new double_match
pilot "$W/double_match" r-pm-5 5 14
pilot "$W/double_match" r-pm-6 6 14
sed -i '/^14$/d' "$W/double_match/db/tq_jobs.tsv"
sed -i 's/^14\twaiting\t-$/14\tmatched\tr-pm-5/' "$W/double_match/db/wms_jobs.tsv"
expect double_match 1 "jobs matched twice=1"

# The same seen only on the wire: the database says r-pm-6 got nothing,
# its reply says it got job 14 (so r-pm-6 also got two answers).
new double_match_wire
pilot "$W/double_match_wire" r-pm-5 5 14
pilot "$W/double_match_wire" r-pm-6 6 0
sed -i 's/^r-pm-6\t0\t0\t6$/r-pm-6\t1\t14\t6/' "$W/double_match_wire/replies-2.tsv"
sed -i '/^14$/d' "$W/double_match_wire/db/tq_jobs.tsv"
sed -i 's/^14\twaiting\t-$/14\tmatched\tr-pm-5/' "$W/double_match_wire/db/wms_jobs.tsv"
expect double_match_wire 1 "jobs matched twice=1" "pilots given two answers=1"

# One pilot, two jobs: its reply says 14, its event says 15.
new pilot_two_jobs
pilot "$W/pilot_two_jobs" r-pm-5 5 14
sed -i 's|14/r-pm-5/5|15/r-pm-5/5|' "$W/pilot_two_jobs/events.tsv"
sed -i '/^14$/d' "$W/pilot_two_jobs/db/tq_jobs.tsv"
sed -i 's/^14\twaiting\t-$/14\tmatched\tr-pm-5/' "$W/pilot_two_jobs/db/wms_jobs.tsv"
expect pilot_two_jobs 1 "pilots given two answers=1"

# The database gives r-pm-2 job 14; its reply and its event say nothing.
new pilot_answers_disagree
sed -i 's/^2\tr-pm-2\t0$/2\tr-pm-2\t14/' "$W/pilot_answers_disagree/db/pilot_matches.tsv"
sed -i '/^14$/d' "$W/pilot_answers_disagree/db/tq_jobs.tsv"
sed -i 's/^14\twaiting\t-$/14\tmatched\tr-pm-2/' "$W/pilot_answers_disagree/db/wms_jobs.tsv"
expect pilot_answers_disagree 1 "pilots given two answers=1"

# A confirmed pilot.match with no decision row, no reply, no dead letter.
new lost_request
tsv "$W/lost_request/sent-2.tsv" "r-pm-7 pilot.match pilot-7"
expect lost_request 1 "requests lost=1"

# Decision 4 published a second time under another message id.
new duplicate_event
tsv "$W/duplicate_event/events.tsv" "gb-pilot-9-matched pilot.matched 13/r-pm-4/4"
tsv "$W/duplicate_event/db/outbox.tsv" "gb-pilot-9-matched pilot.matched r-pm-4 1"
expect duplicate_event 1 "events duplicated=1"

# Two outbox rows with one message id (as if outbox.message_id were not
# UNIQUE).
new duplicate_outbox_row
tsv "$W/duplicate_outbox_row/db/outbox.tsv" "gb-decision-1 task.assigned r-task-1 1"
expect duplicate_outbox_row 1 "events duplicated=1"

# A task.broker decided twice: two decisions rows, two events.
new task_decided_twice
tsv "$W/task_decided_twice/db/decisions.tsv" "3 task 1 r-task-1"
tsv "$W/task_decided_twice/db/outbox.tsv" "gb-decision-3 task.assigned r-task-1 1"
tsv "$W/task_decided_twice/events.tsv" "gb-decision-3 task.assigned -"
expect task_decided_twice 1 "requests decided twice=1" "events duplicated=1"

# A pilot.match with two decision rows (as if pilot_matches.request_id
# were not UNIQUE); its pilot saw only the first.
new pilot_decided_twice
tsv "$W/pilot_decided_twice/db/pilot_matches.tsv" "8 r-pm-2 0"
expect pilot_decided_twice 1 "requests decided twice=1"

# A reply from a decision the database does not hold (a rolled-back
# transaction answered): two decision ids for one pilot.
new reply_of_rollback
tsv "$W/reply_of_rollback/replies-1.tsv" "r-pm-2 0 0 7"
expect reply_of_rollback 1 "requests decided twice=1"

# An event that names another decision for a pilot than its row and reply
# (an item filled from the wrong request).
new event_other_decision
tsv "$W/event_other_decision/events.tsv" "gb-pilot-7-nomatch pilot.nomatch 0/r-pm-2/7"
tsv "$W/event_other_decision/db/outbox.tsv" "gb-pilot-7-nomatch pilot.nomatch r-pm-1 1"
expect event_other_decision 1 "requests decided twice=1"

# Job 12 was killed while waiting (match_request NULL) and given to a
# pilot afterwards.
new killed_matched
pilot "$W/killed_matched" r-pm-5 5 12
expect killed_matched 1 "killed job matched=1"

# Job 11 was matched by r-pm-3 and then killed; a second pilot getting it
# is a double match and a killed job matched, not a match that came first.
new killed_matched_after_match
pilot "$W/killed_matched_after_match" r-pm-5 5 11
expect killed_matched_after_match 1 "jobs matched twice=1" "killed job matched=1"

# Job 12 ended while waiting but still in its task queue (issue 17 point 2's
# symptom without a match).
new ended_still_queued
tsv "$W/ended_still_queued/db/tq_jobs.tsv" 12
expect ended_still_queued 1 "queued, not waiting=1"

# A decided pilot never answered.
new reply_missing
sed -i '/^r-pm-2\t/d' "$W/reply_missing/replies-1.tsv"
expect reply_missing 1 "replies missing=1"

# A waiting job missing from its task queue.
new job_lost
sed -i '/^15$/d' "$W/job_lost/db/tq_jobs.tsv"
expect job_lost 1 "jobs lost=1"

# An event never confirmed, and one no outbox row explains.
new events_unsent_unknown
sed -i 's/^\(gb-decision-2\tjobs.assigned\tr-jobs-2\t\)1$/\10/' "$W/events_unsent_unknown/db/outbox.tsv"
tsv "$W/events_unsent_unknown/events.tsv" "gb-decision-99 task.assigned -"
expect events_unsent_unknown 1 "events unsent=1" "events unknown=1"

# Garbage that was decided instead of refused, and a valid request refused.
new refusals
sed -i '/^r-bad-1\t/d' "$W/refusals/dead.tsv"
tsv "$W/refusals/db/processed.tsv" r-bad-1
tsv "$W/refusals/dead.tsv" "r-st-6 job.status delivery_limit"
tsv "$W/refusals/sent-2.tsv" "r-st-6 job.status 14:running"
expect refusals 1 "garbage not refused=1" "valid requests refused=1"

if (( failures )); then
	echo "check-selftest: $failures case(s) failed (records in $W)"
	exit 1
fi
echo "check-selftest: every case ok"
