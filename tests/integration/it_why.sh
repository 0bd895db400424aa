#!/usr/bin/env bash
# `gridbroker why` answers for every decision kind the workers record: a
# task assigned and a task pending, a production job brokerage, an analysis
# task throttled, a pilot matched and one not matched, and a job timeout
# (the clock seam moves the worker 31 minutes on instead of sleeping).
# For each, the text names the chosen nucleus/queue/job, prints a stage
# summary line with its numbers and a rule ID among the reasons, and
# --json carries the record with its digest. An unknown id exits 1.
# The first worker dumps each decision's inputs as a scenario ([worker]
# decision_inputs_dir): `gridbroker explain` on the dump of a task
# decision, a job decision and a pilot decision prints what `why` prints
# for them, but for the head line (the renderer's rule, report/render.h)
# and what only an offline run shows, which explain adds after a blank
# line (a match scenario's every task queue).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

B=$ID_BASE
sed -e "s/\"3800000\([0-9]\)\": \"/\"${B}0\1\": \"/g" "$GB_SRC/etc/grid-sample.json" >"$T/grid.json"
"$GB" -c "$GB_CONFIG" grid load "$T/grid.json" >"$T/load.out" || fail "grid load: $(cat "$T/load.out")"
rm -f "$GB_CLOCK_FILE"
# start_worker's config dumps the decisions' inputs into $INPUTS (lib.sh)
start_worker w1

why() { "$GB" -c "$GB_CONFIG" why "$@"; }
# has NAME PATTERN: the saved output NAME matches the extended regex.
has() { grep -Eq -- "$2" "$T/$1" || fail "why $1 lacks /$2/:
$(cat "$T/$1")"; }
# like_explain NAME KIND: `explain` on the dump of the decision the saved
# `why` output NAME shows (its head names the decision id) prints the same
# lines after the first, up to its offline part.
like_explain() {
	local id dump
	id=$(sed -n '1s/.*, decision \([0-9][0-9]*\).*/\1/p' "$T/$1")
	dump=$INPUTS/$2-$id.json
	if [ -z "$id" ] || ! wait_until 10 "[ -f '$dump' ]"; then
		fail "no dump of $2 decision '$id' in $INPUTS: $(ls "$INPUTS")"
	fi
	"$GB" explain "$dump" >"$T/$1.explain" || fail "explain $dump"
	diff <(tail -n +2 "$T/$1") <(tail -n +2 "$T/$1.explain" | sed '/^$/,$d') >"$T/$1.diff" ||
		fail "why $1 and explain of its dump differ after the head line:
$(cat "$T/$1.diff")"
	grep -q "offline run\$" "$T/$1.explain" || fail "explain head: $(head -1 "$T/$1.explain")"
}

# ---- task assigned, task pending ---------------------------------------
ta=$((B * 10 + 1)); tp=$((B * 10 + 2))
task_json $ta "mc23_13p6TeV:mc23_13p6TeV.601229.PhPy8EG_A14_ttbar_hdamp258p75_SingleLep.simul.HITS.e8514_s4162_tid36000001_00" 1 10 300 >"$T/ta.json"
task_json $tp "it.why.nowhere.$B" 50000 5000 300 >"$T/tp.json"
subscribe t 2 60 task.assigned task.pending
"$GB" -c "$GB_CONFIG" task submit "$T/ta.json" >/dev/null || fail "submit task"
"$GB" -c "$GB_CONFIG" task submit "$T/tp.json" >/dev/null || fail "submit task"
wait "${SUB[t]}" || fail "task events: $(cat "$T/t.events")"
nuc=$(sql "select nucleus from tasks where task_id = $ta")
{ [ -n "$nuc" ] && [ "$nuc" != NULL ]; } || fail "task $ta has no nucleus"
why task $ta >"$T/task_a" || fail "why task $ta"
has task_a "^task $ta: assigned, chosen $nuc, at [0-9T:-]+Z, request [^ ]+, digest [0-9a-f]{16}"
has task_a '^ +[0-9]+ -> +[0-9]+ candidates, +[0-9]+% cut : '
has task_a "^\* +$nuc +[0-9.e-]+ "
why task $tp >"$T/task_p" || fail "why task $tp"
has task_p "^task $tp: pending, chosen -"
has task_p 'cut : [a-z_ ]+ \[TB-0[0-9] '
has task_p '^    [A-Za-z0-9_-]+ +- +TB-07 '
has task_p '^decision: pending, retry after 1800 s$'
why task $tp --json >"$T/task_p.json" || fail "why task --json"
has task_p.json '"digest": "[0-9a-f]{64}"'
has task_p.json '"outcome": "pending"'
like_explain task_a task
like_explain task_p task
log "task: assigned to $nuc, pending with TB-07 reasons; explain of the dumps agrees"

# ---- production job brokerage -------------------------------------------
jt=$((B * 10 + 3))
# The sample's first job request, renumbered, with the nucleus it would
# get from the task brokerage given outright.
python3 - "$GB_SRC/etc/jobs-sample.json" "$jt" >"$T/job.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))[0]
t = int(sys.argv[2])
d.update(taskID=t, nucleus="CERN-PROD", gshare="MC 16 simul")
for i, j in enumerate(d["jobs"]):
    j["jobID"] = t * 1000 + i + 1
print(json.dumps(d))
PY
jid=$((jt * 1000 + 1))
subscribe j 1 60 jobs.assigned jobs.pending
"$GB" -c "$GB_CONFIG" job submit "$T/job.json" >/dev/null || fail "job submit"
wait "${SUB[j]}" || fail "jobs event: $(cat "$T/j.events")"
q=$(sql "select coalesce(queue, '-') from jobs where job_id = $jid")
why job $jid >"$T/job" || fail "why job $jid"
has job "^jobs $jt: assigned, chosen [^ ]+,"
has job "; job $jid: $q (activated|assigned)\$"
has job 'cut : [a-z_ ]+ \[PJ-[0-9]+ '
has job '^    [A-Za-z0-9_-]+ +- +PJ-[0-9]+ '
has job "^\*1 +[A-Za-z0-9_-]+ +[0-9.e-]+ "
like_explain job jobs
why job $jid --json >"$T/job.json.out" || fail "why job --json"
has job.json.out '"kind": "jobs"'
log "job: $jid at $q; explain of the dump agrees"

# ---- analysis task throttled -------------------------------------------
sed -e "s/\"taskID\": 3800000\([0-9]\)/\"taskID\": ${B}0\1/" \
    -e "s/\"jobID\": 3800000\([0-9]\)/\"jobID\": ${B}0\1/" \
    "$GB_SRC/etc/analysis-sample.json" >"$T/anal.json"
subscribe a 3 120 task.throttled jobs.assigned jobs.pending
"$GB" -c "$GB_CONFIG" job submit "$T/anal.json" >/dev/null || fail "job submit analysis"
wait "${SUB[a]}" || fail "analysis events: $(cat "$T/a.events")"
bj=$(sql "select min(job_id) from jobs where task_id = ${B}02")
why job "$bj" >"$T/anal" || fail "why job $bj (throttled)"
has anal "^jobs ${B}02: pending, chosen -"
has anal '^-- throttle \(AJ-01..AJ-04\), counts of user bob --$'
has anal '^  THROTTLED by AJ-04 \(share_class_c\): 93 > limit 90$'
log "analysis: job $bj throttled by AJ-04"

# ---- pilots: matched and not -------------------------------------------
setup="IT-Why-$B"; dj=$((B * 10 + 7))
cat >"$T/dirac.json" <<EOT
{"jobID": $dj, "ownerDN": "/DC=ch/DC=cern/OU=Organic Units/OU=Users/CN=lbprods", "ownerGroup": "lhcb_mc",
 "setup": "$setup", "cpuTime": 250000, "userPriority": 1, "sites": ["LCG.CERN.cern"], "platforms": ["x86_64-el9"]}
EOT
"$GB" -c "$GB_CONFIG" tq submit "$T/dirac.json" >/dev/null || fail "tq submit"
wait_until 30 "[ \"\$(sql \"select count(*) from tq_jobs where job_id = $dj\")\" = 1 ]" || fail "DIRAC job not queued"
sleep 1 # the index refresh
"$GB" -c "$GB_CONFIG" pilot match --site LCG.CERN.cern --setup "$setup" --cpu-time 345600 --platform x86_64-el9 \
	--pilot-id "it-why-pilot-$B" --json >"$T/pm.json" || fail "pilot match"
grep -q "\"jobID\":$dj" "$T/pm.json" || fail "pilot did not get job $dj: $(cat "$T/pm.json")"
why pilot "it-why-pilot-$B" >"$T/pilot_m" || fail "why pilot (matched)"
has pilot_m "^pilot it-why-pilot-$B: matched, chosen job $dj \(TQ [0-9]+\)"
has pilot_m "^decision: matched job $dj from task queue [0-9]+: "
has pilot_m '^task queues: [0-9]+ considered, [1-9][0-9]* matched'
like_explain pilot_m pilot
# the DIRAC job asked about by its id: the pilot decision that matched it
why job $dj >"$T/dirac_job" || fail "why job $dj (DIRAC)"
has dirac_job "^pilot it-why-pilot-$B: matched, chosen job $dj \(TQ [0-9]+\)"
"$GB" -c "$GB_CONFIG" pilot match --site LCG.CERN.cern --setup "IT-Why-none-$B" --cpu-time 345600 \
	--pilot-id "it-why-nopilot-$B" --json >"$T/pn.json" || fail "pilot match (none)"
why pilot "it-why-nopilot-$B" >"$T/pilot_n" || fail "why pilot (nomatch)"
has pilot_n "^pilot it-why-nopilot-$B: nomatch, chosen -"
has pilot_n '^TQ-10 no_tq_matched: no task queue matched'
has pilot_n '% cut : setup \[TQ-05 setup x[0-9]+\]'
why pilot "it-why-nopilot-$B" --json >"$T/pilot_n.json" || fail "why pilot --json"
has pilot_n.json '"code": "no_tq_matched"'
log "pilots: matched job $dj (explain of the dump agrees), no match with TQ-05"

# ---- a timeout (TO-07: sent for 30 min -> failed) ---------------------------
kill "${PID[w1]}"; wait "${PID[w1]}" 2>/dev/null || true
tj=$((B * 1000 + 900)); t=$(date +%s)
sql "insert into jobs (job_id, task_id, request_id, queue, status, nevents, input_mb,
       decision_id, updated_at, gshare, current_priority, created_at, status_since,
       status_time, brokered_at, check_at)
     values ($tj, $jt, 'it-why-$B', 'CERN-PROD_UCORE', 'sent', 100, 1, 0, $t, 'MC Simul',
       500, $t, $t, $t, $t, $t)"
advance_clock 1860
start_worker w2
wait_until 60 "[ \"\$(sql \"select status from jobs where job_id = $tj\")\" = failed ]" || fail "job $tj did not time out"
why job $tj >"$T/timeout" || fail "why job $tj (timeout)"
has timeout "^timeout $tj: fail, chosen failed,"
has timeout '^rule: TO-07: .* [0-9]+ s \([0-9.]+ min\) > limit 1800 s \(30 min\)$'
has timeout '^decision: fail$'
log "timeout: job $tj TO-07"

# ---- unknown ids -------------------------------------------------------------
if why task 1 >"$T/none" 2>&1; then fail "why task 1 succeeded"; fi
grep -q '^no decision recorded for task 1$' "$T/none" || fail "unknown task: $(cat "$T/none")"
if why pilot "it-why-never-$B" >"$T/none" 2>&1; then fail "why pilot unknown succeeded"; fi
grep -q "^no decision recorded for pilot it-why-never-$B\$" "$T/none" || fail "unknown pilot: $(cat "$T/none")"
log "why answers for task, jobs, throttle, pilot, timeout"
