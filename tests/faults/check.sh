#!/usr/bin/env bash
# tests/faults/check.sh — the invariant checker of the fault suite (run.sh
# calls it after quiescence). It compares what the load generator had
# confirmed (sent-*.tsv), what the workers published (events.tsv, drained
# from a durable queue bound to every event; replies-*.tsv; dead.tsv) and what
# MariaDB holds, prints one table, and exits non-zero unless every invariant
# is zero.
#
# Usage: OUT=DIR DB_NAME=NAME SERVICES=scripts/services check.sh
#            dump the database into DIR/db/*.tsv, then judge
#        OUT=DIR check.sh --no-db
#            judge DIR as it is (DIR/db/*.tsv already there): no server is
#            needed, which is how check-selftest.sh feeds it made-up records
#
# The two steps are apart on purpose: the database is only read into flat
# files (one row per table row, nothing grouped or joined, so a key the
# schema promises is never assumed), and every count below is computed from
# those files and the load generator's own ledgers. That is what lets the
# self-test make each invariant fail without a server, and what keeps the
# checks independent of the schema's UNIQUE keys (pilot_matches.job_id,
# pilot_matches.request_id, outbox.message_id, processed_messages' primary
# key): those keys are a second guard, and a check they make impossible
# could not tell us the claim code went wrong.
#
# Records (tab-separated):
#   sent-*.tsv     message_id  type  detail  (job.submit: "jobID,...";
#                  job.broker: "taskID:jobID,..."; pilot.match: pilot id;
#                  job.status: "jobID:status"; malformed: "-")
#   replies-*.tsv  request_id  matched(0/1/bad)  job_id  decision_id
#   events.tsv     message_id  routing_key  items (pilot.matched and
#                  pilot.nomatch: "jobID/request_id/decision,...", jobID 0
#                  when nothing was given; "-" for other events)
#   dead.tsv       message_id  routing_key  reason
#   db/processed.tsv      message_id             (processed_messages)
#   db/pilot_matches.tsv  id  request_id  job_id (0 for a nomatch)
#   db/decisions.tsv      id  kind  subject  request_id
#   db/outbox.tsv         message_id  type  request_id  sent(0/1)
#   db/wms_jobs.tsv       job_id  status  match_request ("-" when NULL)
#   db/tq_jobs.tsv        job_id
#   db/panda_jobs.tsv     job_id                 (jobs)
#
# A request's decision row is its processed_messages row, or for a
# pilot.match (decided in batches that use no processed_messages row) its
# pilot_matches row.
#
# Invariants (each a count that must be 0):
#   requests lost          confirmed requests with no decision row that
#                          were not dead-lettered either
#   valid requests refused well-formed requests that were dead-lettered
#                          and never decided
#   garbage not refused    malformed requests that were not dead-lettered
#   requests decided twice requests with more than one decision row; a
#                          (kind, subject, request) or a task.broker or
#                          job.broker request with two decisions rows; a
#                          pilot.match with two decision ids among its
#                          pilot_matches row, its replies and the events
#                          (so a reply of a decision that was rolled back
#                          and taken again counts)
#   events unsent          outbox rows never confirmed by the broker
#   events missing         outbox rows whose event is not in the stream
#   events unknown         events in the stream that no outbox row explains
#   events duplicated      one decision with two different events: a
#                          message id with two routing keys in the stream,
#                          a message id with two outbox rows, a pilot's
#                          decision in two events (two message ids), or a
#                          request of the load with two events of one type
#   jobs matched twice     a job given to two pilots (two pilot.match
#                          requests: database, replies or events)
#   pilots given two answers
#                          a pilot.match request given two different jobs,
#                          or a job in one record and nothing in another
#                          (database, replies or events)
#   killed job matched     a job the load ended while it waited, given to
#                          a pilot after that (the rule is below)
#   jobs lost              a submitted job with no record, a waiting job
#                          missing from its task queue, a matched job
#                          without its match
#   queued, not waiting    a job still in a task queue whose status says it
#                          left the waiting state (a claim deletes the row;
#                          a final status for a waiting job must too)
#   replies missing        pilot.match requests decided but never answered
#
# "killed job matched", the rule. The load generator ends (killed, failed,
# done or deleted) jobs it submitted and has seen no reply match. Ended jobs are
# those of its confirmed job.status lines with a final status. Nothing
# else sends a final status in the suite, so an ended job whose wms_jobs
# status is final had the load's status applied; one whose status is not
# final had it ignored (the job was not known yet when the status arrived:
# the two requests travel through different queues), and a match of it is
# no violation. For an applied end, which came first, the status or a match?
# Clocks cannot say: the load's confirm and reply times are its own
# (a reply may wait in the queue), status_at is the producer's clock,
# decided_at and updated_at are whole seconds and updated_at is overwritten
# by later changes. The database's own order can: a match's transaction
# stamps wms_jobs (status, match_request, matched_at) only where the job's
# rank is still below "matched" (store_tq_match.c, SQL_MATCHED_UPDATE), and
# a status transaction updates the same row, so the row lock puts the two in
# one order. If the match committed first, the row carries its
# match_request and the later final status keeps it (a status update never
# touches match_request); if the status committed first, the match finds
# rank 4 and leaves the row alone, so match_request stays NULL (or names
# another request). Hence: a (job, request) pair from pilot_matches, a
# reply or a pilot.matched event is a violation when the job's end was
# applied (final wms_jobs status) and wms_jobs.match_request is not that
# request. This relies on a status update never clearing match_request;
# the worker must keep it that way, or this check must learn the new order.
#
# Reported, not failed: event copies beyond the first (the same message id
# published again after a worker died between the broker's confirm and its
# own bookkeeping — at-least-once delivery; subscribers drop them by
# message id), reply copies (a pilot asked again gets the same answer),
# decided requests of which a redelivered copy reached the queue's delivery
# limit and was dead-lettered by the broker (a worker lost its connection
# between the decision and the ack once too often: the request was decided
# once and answered; the dead letter is a stale copy), and what became of
# the load's ends (applied while waiting, applied after a match, ignored).
set -euo pipefail
# comm, join and uniq need one collation for sort and for them.
export LC_ALL=C

: "${OUT:?}"
C=$OUT/check
D=$OUT/db
mkdir -p "$C" "$D"

# ---- the database, read into flat files ---------------------------------------
dump_db() {
	: "${DB_NAME:?}" "${SERVICES:?}"
	local name query
	while IFS='|' read -r name query; do
		"$SERVICES" sql -N -B "$DB_NAME" -e "$query" >"$D/$name.tmp"
		mv "$D/$name.tmp" "$D/$name.tsv"
	done <<-'EOF'
		processed|select message_id from processed_messages
		pilot_matches|select id, request_id, coalesce(job_id, 0) from pilot_matches
		decisions|select id, kind, subject, request_id from decisions
		outbox|select message_id, type, request_id, sent_at is not null from outbox
		wms_jobs|select job_id, status, coalesce(match_request, '-') from wms_jobs
		tq_jobs|select job_id from tq_jobs
		panda_jobs|select job_id from jobs
	EOF
}
case ${1:-} in
--no-db) ;;
'') dump_db ;;
*) echo "usage: check.sh [--no-db]" >&2; exit 2 ;;
esac
for f in processed pilot_matches decisions outbox wms_jobs tq_jobs panda_jobs; do
	[ -f "$D/$f.tsv" ] || { echo "check.sh: $D/$f.tsv is missing" >&2; exit 2; }
done
[ -f "$OUT/events.tsv" ] || { echo "check.sh: $OUT/events.tsv is missing" >&2; exit 2; }

# ---- the records ---------------------------------------------------------------
cat "$OUT"/sent-*.tsv >"$C/sent.tsv"
cat "$OUT"/replies-*.tsv >"$C/replies.tsv"
cat "$OUT/dead.tsv" >"$C/dead.tsv" 2>/dev/null || : >"$C/dead.tsv"
cut -f1 "$C/sent.tsv" | sort -u >"$C/sent"
awk -F'\t' '$3 == "-" { print $1 }' "$C/sent.tsv" | sort -u >"$C/sent.bad"
comm -23 "$C/sent" "$C/sent.bad" >"$C/sent.good"
cut -f1 "$C/dead.tsv" | sort -u >"$C/dead"
# Pilot items of the events, one per line: job request decision message_id
# (job 0: the pilot got nothing).
awk -F'\t' '($2 == "pilot.matched" || $2 == "pilot.nomatch") && $3 != "-" {
	n = split($3, it, ",")
	for (i = 1; i <= n; i++) { split(it[i], p, "/"); print p[1] "\t" p[2] "\t" p[3] "\t" $1 }
}' "$OUT/events.tsv" >"$C/event_items"
# Pilot replies that decoded: request matched job decision.
awk -F'\t' '$2 == "0" || $2 == "1"' "$C/replies.tsv" >"$C/replies.ok"

# ---- requests --------------------------------------------------------------------
# Decision rows per request, counted row by row.
{ cat "$D/processed.tsv"; cut -f2 "$D/pilot_matches.tsv"; } | sort | uniq -c |
	awk '{ print $2 "\t" $1 }' >"$C/decision_rows"
cut -f1 "$C/decision_rows" >"$C/processed"

n_sent=$(wc -l <"$C/sent")
n_bad=$(wc -l <"$C/sent.bad")
lost=$(sort -u "$C/processed" "$C/dead" | comm -23 "$C/sent" - | tee "$C/lost" | wc -l)
comm -12 "$C/sent.good" "$C/dead" >"$C/dead.good"
refused=$(comm -23 "$C/dead.good" "$C/processed" | tee "$C/refused" | wc -l)
dead_after=$(comm -12 "$C/dead.good" "$C/processed" | tee "$C/dead_after_decision" | wc -l)
garbage_kept=$(comm -23 "$C/sent.bad" "$C/dead" | tee "$C/garbage_kept" | wc -l)

{
	awk -F'\t' '$2 > 1 { print $1 }' "$C/decision_rows"
	# Two decisions of one subject for one request.
	awk -F'\t' '{ print $2 "\t" $3 "\t" $4 }' "$D/decisions.tsv" | sort | uniq -d | cut -f3
	# A brokerage request of the load with two decisions rows, whatever
	# their subjects.
	awk -F'\t' 'NR == FNR { if ($2 == "task.broker" || $2 == "job.broker") want[$1] = 1; next }
		($4 in want) && n[$4]++ == 1 { print $4 }' "$C/sent.tsv" "$D/decisions.tsv"
	# A pilot with two decision ids between the database and the wire.
	{
		awk -F'\t' '{ print $2 "\t" $1 }' "$D/pilot_matches.tsv"
		awk -F'\t' '{ print $1 "\t" $4 }' "$C/replies.ok"
		awk -F'\t' '$3 != "" { print $2 "\t" $3 }' "$C/event_items"
	} | sort -u | cut -f1 | uniq -d
} | sort -u >"$C/decided_twice"
twice=$(wc -l <"$C/decided_twice")

# ---- events ------------------------------------------------------------------------
cut -f1 "$D/outbox.tsv" | sort -u >"$C/outbox.ids"
unsent=$(awk -F'\t' '$4 != 1' "$D/outbox.tsv" | tee "$C/events_unsent" | wc -l)
cut -f1 "$OUT/events.tsv" | sort >"$C/stream.all"
sort -u "$C/stream.all" >"$C/stream"
missing=$(comm -23 "$C/outbox.ids" "$C/stream" | tee "$C/events_missing" | wc -l)
unknown=$(comm -13 "$C/outbox.ids" "$C/stream" | tee "$C/events_unknown" | wc -l)
copies=$(( $(wc -l <"$C/stream.all") - $(wc -l <"$C/stream") ))
{
	# One message id, two routing keys.
	cut -f1,2 "$OUT/events.tsv" | sort -u | cut -f1 | uniq -d
	# One message id, two outbox rows.
	cut -f1 "$D/outbox.tsv" | sort | uniq -d
	# One pilot decision in two events.
	awk -F'\t' '$3 != "" { print "decision " $3 "\t" $4 }' "$C/event_items" | sort -u | cut -f1 | uniq -d
	# A request of the load with two events of one type (its pilots'
	# events are batched under the first request, so pilots are judged by
	# their items above).
	awk -F'\t' 'NR == FNR { want[$1] = 1; next }
		($3 in want) && $2 !~ /^pilot\./ { print $3 " " $2 "\t" $1 }' "$C/sent" "$D/outbox.tsv" |
		sort -u | cut -f1 | uniq -d
} | sort -u >"$C/events_duplicated"
dup_events=$(wc -l <"$C/events_duplicated")

# ---- jobs given to pilots -------------------------------------------------------------
# (job, request) pairs from the database, the replies and the events.
{
	awk -F'\t' '$3 != 0 { print $3 "\t" $2 }' "$D/pilot_matches.tsv"
	awk -F'\t' '$2 == "1" { print $3 "\t" $1 }' "$C/replies.ok"
	awk -F'\t' '$1 != 0 { print $1 "\t" $2 }' "$C/event_items"
} | sort -u >"$C/job_request"
matched_twice=$(cut -f1 "$C/job_request" | uniq -d | tee "$C/jobs_twice" | wc -l)
# (request, job or 0) from the same three: one answer per pilot.
{
	awk -F'\t' '{ print $2 "\t" $3 }' "$D/pilot_matches.tsv"
	awk -F'\t' '{ print $1 "\t" ($2 == "1" ? $3 : 0) }' "$C/replies.ok"
	awk -F'\t' '{ print $2 "\t" $1 }' "$C/event_items"
} | sort -u >"$C/pilot_answer"
pilots_twice=$(cut -f1 "$C/pilot_answer" | uniq -d | tee "$C/pilots_twice" | wc -l)

# ---- the load's ends ---------------------------------------------------------------------
# The final statuses the load sends (a status the load does not send can
# only come from elsewhere, and the rule above needs the load's alone).
FINAL='^(killed|failed|done|deleted)$'
# Ended jobs: job status (a final status of a confirmed job.status), then
# what wms_jobs says of each: job wms_status match_request.
awk -F'\t' -v fin="$FINAL" '$2 == "job.status" { split($3, a, ":"); if (a[2] ~ fin) print a[1] "\t" a[2] }' \
	"$C/sent.tsv" | sort -u >"$C/ended"
join -t "$(printf '\t')" -a1 -e - -o 1.1,2.2,2.3 "$C/ended" <(sort "$D/wms_jobs.tsv") >"$C/ended_state"
n_ended=$(wc -l <"$C/ended")
ended_waiting=$(awk -F'\t' -v fin="$FINAL" '$2 ~ fin && $3 == "-"' "$C/ended_state" | wc -l)
ended_after_match=$(awk -F'\t' -v fin="$FINAL" '$2 ~ fin && $3 != "-"' "$C/ended_state" | wc -l)
ended_ignored=$(awk -F'\t' -v fin="$FINAL" '$2 !~ fin' "$C/ended_state" | wc -l)
# Violations, one line each: job request wms_status match_request.
awk -F'\t' -v fin="$FINAL" 'NR == FNR { if ($2 ~ fin) { st[$1] = $2; mr[$1] = $3 }; next }
	($1 in st) && mr[$1] != $2 { print $1 "\t" $2 "\t" st[$1] "\t" mr[$1] }' \
	"$C/ended_state" "$C/job_request" >"$C/killed_matched"
killed_matched=$(cut -f1 "$C/killed_matched" | sort -u | wc -l)

# ---- jobs lost ------------------------------------------------------------------------------
awk -F'\t' '$2 == "job.submit" && $3 != "-" { n = split($3, j, ","); for (i = 1; i <= n; i++) print j[i] }' "$C/sent.tsv" | sort -u >"$C/dirac_jobs"
cut -f1 "$D/wms_jobs.tsv" | sort -u >"$C/wms_jobs"
no_record=$(comm -23 "$C/dirac_jobs" "$C/wms_jobs" | tee "$C/dirac_no_record" | wc -l)
awk -F'\t' '$2 == "job.broker" && $3 != "-" { split($3, a, ":"); n = split(a[2], j, ","); for (i = 1; i <= n; i++) print j[i] }' "$C/sent.tsv" | sort -u >"$C/panda_jobs"
sort -u "$D/panda_jobs.tsv" >"$C/panda_db"
no_record_panda=$(comm -23 "$C/panda_jobs" "$C/panda_db" | tee "$C/panda_no_record" | wc -l)
sort -u "$D/tq_jobs.tsv" >"$C/queued"
awk -F'\t' '$2 == "waiting" { print $1 }' "$D/wms_jobs.tsv" | sort -u >"$C/waiting"
waiting_lost=$(comm -23 "$C/waiting" "$C/queued" | tee "$C/waiting_not_queued" | wc -l)
awk -F'\t' '$2 != "waiting" { print $1 }' "$D/wms_jobs.tsv" | sort -u | comm -12 - "$C/queued" >"$C/queued_not_waiting"
queued_not_waiting=$(wc -l <"$C/queued_not_waiting")
queued_ended=$(cut -f1 "$C/ended" | sort -u | comm -12 - "$C/queued_not_waiting" | wc -l)
awk -F'\t' '$3 != 0 { print $3 }' "$D/pilot_matches.tsv" | sort -u >"$C/match_jobs"
matched_unrecorded=$(awk -F'\t' '$2 == "matched" || $2 == "running" { print $1 }' "$D/wms_jobs.tsv" | sort -u |
	comm -23 - "$C/match_jobs" | tee "$C/matched_unrecorded" | wc -l)
jobs_lost=$((no_record + no_record_panda + waiting_lost + matched_unrecorded))

# ---- replies --------------------------------------------------------------------------------
awk -F'\t' '$2 == "pilot.match" { print $1 }' "$C/sent.tsv" | sort -u >"$C/pilots"
cut -f1 "$C/replies.tsv" | sort >"$C/replies.all"
sort -u "$C/replies.all" >"$C/replies"
cut -f2 "$D/pilot_matches.tsv" | sort -u | comm -12 "$C/pilots" - >"$C/pilots.decided"
replies_missing=$(comm -23 "$C/pilots.decided" "$C/replies" | tee "$C/replies_missing" | wc -l)
reply_copies=$(( $(wc -l <"$C/replies.all") - $(wc -l <"$C/replies") ))

# ---- report ---------------------------------------------------------------------------------
n_events=$(wc -l <"$C/stream")
n_matched=$(awk -F'\t' '$3 != 0' "$D/pilot_matches.tsv" | wc -l)
n_decisions=$(wc -l <"$D/decisions.tsv")
row() { printf '  %-34s %10s\n' "$1" "$2"; }
bad=0
inv() { row "$1" "$2"; [ "$2" = 0 ] || bad=1; }
echo
echo "fault suite report"
for kv in ${FAULTS_INFO:-}; do row "${kv%%=*}" "${kv#*=}"; done
row "requests confirmed by the broker" "$n_sent"
row "  of them malformed (must be DLX'd)" "$n_bad"
for kv in ${FAULTS_DONE:-}; do row "faults injected: ${kv%%=*}" "${kv#*=}"; done
row "decisions recorded" "$n_decisions"
row "pilots matched" "$n_matched"
row "events in the stream (distinct)" "$n_events"
row "event copies (at-least-once)" "$copies"
row "reply copies (re-asked pilots)" "$reply_copies"
row "decided, then a copy dead-lettered" "$dead_after"
row "jobs ended by the load" "$n_ended"
row "  applied while waiting" "$ended_waiting"
row "  applied after a match" "$ended_after_match"
row "  ignored (job not known yet)" "$ended_ignored"
echo "  ---- invariants (all must be 0) ----"
inv "requests lost" "$lost"
inv "valid requests refused" "$refused"
inv "garbage not refused" "$garbage_kept"
inv "requests decided twice" "$twice"
inv "events unsent" "$unsent"
inv "events missing" "$missing"
inv "events unknown" "$unknown"
inv "events duplicated" "$dup_events"
inv "jobs matched twice" "$matched_twice"
inv "pilots given two answers" "$pilots_twice"
inv "killed job matched" "$killed_matched"
inv "jobs lost" "$jobs_lost"
if (( jobs_lost )); then
	row "  DIRAC jobs without a record" "$no_record"
	row "  PanDA jobs without a record" "$no_record_panda"
	row "  waiting, not in a task queue" "$waiting_lost"
	row "  matched, no match recorded" "$matched_unrecorded"
fi
inv "queued, not waiting" "$queued_not_waiting"
if (( queued_not_waiting )); then
	row "  of them ended by the load" "$queued_ended"
fi
inv "replies missing" "$replies_missing"

# The run's size and fault counts are part of what the suite promises.
if (( n_sent < ${MESSAGES:-0} )); then echo "only $n_sent requests (wanted ${MESSAGES})"; bad=1; fi
for kv in ${FAULTS_DONE:-}; do
	if (( ${kv#*=} < ${PER_KIND:-0} )); then echo "only ${kv#*=} faults of kind ${kv%%=*}"; bad=1; fi
done
if (( bad )); then
	echo "RESULT: FAILED (lists of the offending ids are in $C/)"
	exit 1
fi
echo "RESULT: ok"
