#!/usr/bin/env bash
# Caps hold while batching (PJ-33, PJ-34, PJ-36 with the group commit):
# three workers decide many small job requests of one gshare at once, each
# worker deciding up to [worker] broker_batch of them in one transaction,
# while every queue of the grid starts empty in that gshare with a cap of
# CAP jobs (NQUEUELIMITSITE, as 2 x running is 0). More jobs are offered
# than the queues can take, so the caps are what stops them. Afterwards no
# queue may hold more than CAP of them: the counts MariaDB keeps, and the
# job rows themselves. The bound stated in the README is that racing
# decisions never pass a cap (job decisions lock one row to their commit,
# 0010_broker_lock.sql); without that lock this test sees queues over it.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

CAP=2
GS="MC Evgen"
NREQ=90
NJOBS=3 # per request

"$GB" -c "$GB_CONFIG" grid load "$GB_SRC/etc/grid-sample.json" >"$T/load.out" || fail "grid load"
sql "UPDATE queue_counts SET running = 0, defined = 0, assigned = 0, activated = 0,
            \`starting\` = 0, transferring = 0 WHERE gshare = '$GS'" || fail "empty the gshare's counts"
old_limit=$(sql "SELECT value FROM params WHERE component = 'jobbroker' AND name = 'NQUEUELIMITSITE'")
[ -n "$old_limit" ] || fail "no NQUEUELIMITSITE row in params"
# Put the limit back whatever happens, then lib.sh's cleanup.
trap 'rc=$?; sql "UPDATE params SET value = '"'$old_limit'"' WHERE component = '"'jobbroker'"' AND name = '"'NQUEUELIMITSITE'"'" >/dev/null 2>&1 || true; set +e; (exit $rc); cleanup' EXIT
sql "UPDATE params SET value = '$CAP' WHERE component = 'jobbroker' AND name = 'NQUEUELIMITSITE'" ||
	fail "set NQUEUELIMITSITE"

# round BATCH N: NREQ requests of NJOBS event-generation jobs (no input:
# every job placed is activated) with ids of this run and round N, at
# BNL-ATLAS in gshare $GS, queued before three workers with [worker]
# broker_batch = BATCH start (so their groups fill), from empty counts.
round() {
	local batch=$1 n=$2 base=$((ID_BASE * 10 + $2)) conf
	sql "UPDATE queue_counts SET running = 0, defined = 0, assigned = 0, activated = 0,
	            \`starting\` = 0, transferring = 0 WHERE gshare = '$GS'" ||
		fail "empty the gshare's counts"
	python3 - "$GB_SRC/etc/jobs-sample.json" "$base" "$NREQ" "$NJOBS" "$GS" >"$T/jobs-$n.json" <<'PY' || fail "requests"
import copy, json, sys
src, base, nreq, njobs, gs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
evgen = [r for r in json.load(open(src)) if r.get("processingType") == "evgen"][0]
out = []
for i in range(nreq):
    r = copy.deepcopy(evgen)
    r.pop("description", None)
    r["taskID"] = base * 1000 + i
    r["nucleus"] = "BNL-ATLAS"
    r["gshare"] = gs
    r["jobs"] = [dict(r["jobs"][0], jobID=(base * 1000 + i) * 100 + k) for k in range(njobs)]
    out.append(r)
json.dump(out, sys.stdout)
PY
	local tasks="task_id between $((base * 1000)) and $((base * 1000 + NREQ - 1))"
	conf=$T/batch-$batch.conf
	{ cat "$GB_CONFIG"; printf '\n[worker]\nbroker_batch = %s\n' "$batch"; } >"$conf"
	subscribe "j$n" "$NREQ" 120 jobs.assigned jobs.pending
	"$GB" -c "$GB_CONFIG" job submit "$T/jobs-$n.json" >"$T/submit.out" || fail "job submit"
	GB_CONFIG=$conf start_worker "w1r$n"
	GB_CONFIG=$conf start_worker "w2r$n"
	GB_CONFIG=$conf start_worker "w3r$n"
	wait "${SUB[j$n]}" || fail "round $n: not every jobs event arrived: $(wc -l <"$T/j$n.events") of $NREQ"
	stop_all

	local placed left nq over full
	placed=$(sql "SELECT count(*) FROM jobs WHERE $tasks AND queue IS NOT NULL")
	left=$(sql "SELECT count(*) FROM jobs WHERE $tasks AND queue IS NULL")
	nq=$(sql "SELECT count(DISTINCT queue) FROM jobs WHERE $tasks AND queue IS NOT NULL")
	log "broker_batch $batch: $placed of $((NREQ * NJOBS)) jobs placed on $nq queues, $left left unplaced by the caps"
	[ "$placed" -gt 0 ] || fail "no job was placed"
	[ "$left" -gt 0 ] || fail "every job was placed: the caps were never reached, the test proves nothing"
	# The job rows: at most CAP of these jobs per queue.
	over=$(sql "SELECT queue, count(*) FROM jobs WHERE $tasks AND queue IS NOT NULL
	            GROUP BY queue HAVING count(*) > $CAP")
	[ -z "$over" ] || fail "broker_batch $batch: queues over the cap of $CAP (queue, jobs): $over"
	# The counts the next decision reads: activated + starting + assigned.
	over=$(sql "SELECT queue, activated + \`starting\` + assigned FROM queue_counts
	            WHERE gshare = '$GS' AND activated + \`starting\` + assigned > $CAP")
	[ -z "$over" ] || fail "broker_batch $batch: queue_counts over the cap of $CAP (queue, count): $over"
	full=$(sql "SELECT count(*) FROM queue_counts WHERE gshare = '$GS' AND activated = $CAP")
	[ "$full" = "$nq" ] || fail "$nq queues took jobs but $full are at the cap: the caps did not stop them"
	log "broker_batch $batch: every queue at most at its cap of $CAP; $full queues filled exactly"
}

# A transaction per request, then the default group commit.
round 1 1
round 32 2
