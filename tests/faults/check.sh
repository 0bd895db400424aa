#!/usr/bin/env bash
# tests/faults/check.sh — the invariant checker of the fault suite (run.sh
# calls it after quiescence). It compares what the load generator had
# confirmed (sent-*.tsv), what the workers published (events.tsv, drained
# from a durable queue bound to every event; replies-*.tsv; dead.tsv) and what
# MariaDB holds, prints one table, and exits non-zero unless every invariant
# is zero.
#
# Invariants (each a count that must be 0):
#   requests lost          confirmed requests with no trace: not in
#                          processed_messages, not a pilot_matches request,
#                          not dead-lettered
#   valid requests refused well-formed requests that were dead-lettered
#                          and never decided
#   garbage not refused    malformed requests that were not dead-lettered
#   requests decided twice (kind, subject, request) with two decisions
#   events unsent          outbox rows never confirmed by the broker
#   events missing         outbox rows whose event is not in the stream
#   events unknown         events in the stream that no outbox row explains
#   events duplicated      a decision with two different events (two
#                          message ids or two types for one decision id)
#   jobs matched twice     a job given to two pilots (database, replies or
#                          events)
#   jobs lost              a submitted job with no record, a waiting job
#                          missing from its task queue, a queued job that
#                          is not waiting, a matched job without its match
#   replies missing        pilot.match requests decided but never answered
# Reported, not failed: event copies beyond the first (the same message id
# published again after a worker died between the broker's confirm and its
# own bookkeeping — at-least-once delivery; subscribers drop them by
# message id), reply copies (a pilot asked again gets the same answer) and
# decided requests of which a redelivered copy reached the queue's delivery
# limit and was dead-lettered by the broker (a worker lost its connection
# between the decision and the ack once too often: the request was decided
# once and answered; the dead letter is a stale copy).
set -euo pipefail

: "${OUT:?}" "${DB_NAME:?}" "${SERVICES:?}"
sql() { "$SERVICES" sql -N -B "$DB_NAME" -e "$1"; }
C=$OUT/check
mkdir -p "$C"
cat "$OUT"/sent-*.tsv >"$OUT/sent.tsv"
cat "$OUT"/replies-*.tsv >"$OUT/replies.tsv"

# ---- inputs, one sorted id list per fact ----------------------------------------
cut -f1 "$OUT/sent.tsv" | sort -u >"$C/sent"
awk -F'\t' '$3 == "-" { print $1 }' "$OUT/sent.tsv" | sort -u >"$C/sent.bad"
comm -23 "$C/sent" "$C/sent.bad" >"$C/sent.good"
cut -f1 "$OUT/dead.tsv" 2>/dev/null | sort -u >"$C/dead" || : >"$C/dead"
{ sql "select message_id from processed_messages"; sql "select request_id from pilot_matches"; } | sort -u >"$C/processed"

n_sent=$(wc -l <"$C/sent")
n_bad=$(wc -l <"$C/sent.bad")
lost=$(sort -u "$C/processed" "$C/dead" | comm -23 "$C/sent" - | tee "$C/lost" | wc -l)
comm -12 "$C/sent.good" "$C/dead" >"$C/dead.good"
refused=$(comm -23 "$C/dead.good" "$C/processed" | tee "$C/refused" | wc -l)
dead_after=$(comm -12 "$C/dead.good" "$C/processed" | tee "$C/dead_after_decision" | wc -l)
garbage_kept=$(comm -23 "$C/sent.bad" "$C/dead" | tee "$C/garbage_kept" | wc -l)

twice=$(sql "select count(*) from (select 1 from decisions group by kind, subject, request_id having count(*) > 1) x")

# ---- events ------------------------------------------------------------------------
sql "select message_id, type from outbox" | sort -u >"$C/outbox"
cut -f1 "$C/outbox" | sort -u >"$C/outbox.ids"
unsent=$(sql "select count(*) from outbox where sent_at is null")
cut -f1 "$OUT/events.tsv" | sort >"$C/stream.all"
sort -u "$C/stream.all" >"$C/stream"
missing=$(comm -23 "$C/outbox.ids" "$C/stream" | tee "$C/events_missing" | wc -l)
unknown=$(comm -13 "$C/outbox.ids" "$C/stream" | tee "$C/events_unknown" | wc -l)
copies=$(( $(wc -l <"$C/stream.all") - $(wc -l <"$C/stream") ))
# Two different events for one decision: the same message id with two
# routing keys, or one decision id under two message ids (ids are
# gb-decision-<id>, so the second can only come from two outbox rows).
dup_events=$(awk -F'\t' '{ print $1 "\t" $2 }' "$OUT/events.tsv" | sort -u | cut -f1 | uniq -d | wc -l)
dup_rows=$(sql "select count(*) from (select 1 from outbox group by message_id having count(*) > 1) x")
dup_events=$((dup_events + dup_rows))

# ---- jobs ----------------------------------------------------------------------------
db_twice=$(sql "select count(*) from (select job_id from pilot_matches where job_id is not null group by job_id having count(*) > 1) x")
# (job, request) pairs from the events and the replies; a job with two
# requests was handed to two pilots.
{
	awk -F'\t' '$2 == "pilot.matched" { n = split($3, it, ","); for (i = 1; i <= n; i++) { split(it[i], p, "/"); print p[1] "\t" p[2] } }' "$OUT/events.tsv"
	awk -F'\t' '$2 == "1" { print $3 "\t" $1 }' "$OUT/replies.tsv"
} | sort -u >"$C/job_request"
wire_twice=$(cut -f1 "$C/job_request" | uniq -d | tee "$C/jobs_twice" | wc -l)
matched_twice=$((db_twice + wire_twice))

awk -F'\t' '$2 == "job.submit" && $3 != "-" { n = split($3, j, ","); for (i = 1; i <= n; i++) print j[i] }' "$OUT/sent.tsv" | sort -u >"$C/dirac_jobs"
sql "select job_id from wms_jobs" | sort -u >"$C/wms_jobs"
no_record=$(comm -23 "$C/dirac_jobs" "$C/wms_jobs" | wc -l)
awk -F'\t' '$2 == "job.broker" && $3 != "-" { split($3, a, ":"); n = split(a[2], j, ","); for (i = 1; i <= n; i++) print j[i] }' "$OUT/sent.tsv" | sort -u >"$C/panda_jobs"
sql "select job_id from jobs" | sort -u >"$C/jobs"
no_record_panda=$(comm -23 "$C/panda_jobs" "$C/jobs" | wc -l)
waiting_lost=$(sql "select count(*) from wms_jobs w left join tq_jobs q on q.job_id = w.job_id where w.status = 'waiting' and q.job_id is null")
queued_not_waiting=$(sql "select count(*) from tq_jobs q join wms_jobs w on w.job_id = q.job_id where w.status <> 'waiting'")
matched_unrecorded=$(sql "select count(*) from wms_jobs w left join pilot_matches m on m.job_id = w.job_id where w.status in ('matched','running') and m.job_id is null")
jobs_lost=$((no_record + no_record_panda + waiting_lost + queued_not_waiting + matched_unrecorded))

# ---- replies --------------------------------------------------------------------------
awk -F'\t' '$2 == "pilot.match" { print $1 }' "$OUT/sent.tsv" | sort -u >"$C/pilots"
cut -f1 "$OUT/replies.tsv" | sort >"$C/replies.all"
sort -u "$C/replies.all" >"$C/replies"
comm -12 "$C/pilots" "$C/processed" >"$C/pilots.decided"
replies_missing=$(comm -23 "$C/pilots.decided" "$C/replies" | tee "$C/replies_missing" | wc -l)
reply_copies=$(( $(wc -l <"$C/replies.all") - $(wc -l <"$C/replies") ))

# ---- report ----------------------------------------------------------------------------
n_events=$(wc -l <"$C/stream")
n_matched=$(sql "select count(*) from pilot_matches where outcome = 'matched'")
n_decisions=$(sql "select count(*) from decisions")
row() { printf '  %-34s %10s\n' "$1" "$2"; }
bad=0
inv() { row "$1" "$2"; [ "$2" = 0 ] || bad=1; }
echo
echo "fault suite report"
row "requests confirmed by the broker" "$n_sent"
row "  of them malformed (must be DLX'd)" "$n_bad"
for kv in ${FAULTS_DONE:-}; do row "faults injected: ${kv%%=*}" "${kv#*=}"; done
row "decisions recorded" "$n_decisions"
row "pilots matched" "$n_matched"
row "events in the stream (distinct)" "$n_events"
row "event copies (at-least-once)" "$copies"
row "reply copies (re-asked pilots)" "$reply_copies"
row "decided, then a copy dead-lettered" "$dead_after"
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
inv "jobs lost" "$jobs_lost"
if (( jobs_lost )); then
	row "  DIRAC jobs without a record" "$no_record"
	row "  PanDA jobs without a record" "$no_record_panda"
	row "  waiting, not in a task queue" "$waiting_lost"
	row "  in a task queue, not waiting" "$queued_not_waiting"
	row "  matched, no match recorded" "$matched_unrecorded"
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
