#!/usr/bin/env bash
# PR-03 and PR-08 through the real worker: two task queues of one owner,
# of 2 and 1 waiting jobs of UserPriority 1, share the owner's 1000 evenly
# (the average UserPriority weighs, not the job count); a pilot that takes
# the single job empties its task queue, and the leader recomputes at once
# (well before [dirac] priority_interval), giving the other task queue the
# whole 1000.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

B=$ID_BASE
# A group no grid file names: the default share, 1000, and no
# JOB_SHARING, so the entity is this owner alone (PR-02 with U = 1).
group="it_prio_$B" owner="/DC=org/CN=it-prio-$B" setup="IT-Prio-$B"
job() { # job ID SITE: one waiting job of the owner at SITE
	printf '{"jobID": %s, "ownerDN": "%s", "ownerGroup": "%s", "setup": "%s", "cpuTime": 3600, "userPriority": 1, "sites": ["%s"]}\n' \
		"$1" "$owner" "$group" "$setup" "$2"
}
{ echo '{"jobs": ['; job $((B * 10 + 1)) LCG.IT-PRIO-A.org; echo ,
  job $((B * 10 + 2)) LCG.IT-PRIO-A.org; echo ,
  job $((B * 10 + 3)) LCG.IT-PRIO-B.org; echo ']}'; } >"$T/jobs.json"

start_worker w1
"$GB" -c "$GB_CONFIG" tq submit "$T/jobs.json" >/dev/null || fail "tq submit"
prio() { sql "select priority from task_queues t join tq_jobs j on j.tq_id = t.tq_id where j.job_id = $1"; }
# TQ A (2 jobs) and TQ B (1 job): 500 each, whatever their sizes.
wait_until 30 "[ \"\$(prio $((B * 10 + 1)))\" = 500 ] && [ \"\$(prio $((B * 10 + 3)))\" = 500 ]" ||
	fail "priorities after submit: A $(prio $((B * 10 + 1))), B $(prio $((B * 10 + 3))) (want 500 and 500)"
log "task queues of 2 and 1 jobs: 500 and 500 (PR-03 weighs averages)"

sleep 1 # the index refresh
"$GB" -c "$GB_CONFIG" pilot match --site LCG.IT-PRIO-B.org --setup "$setup" --cpu-time 86400 \
	--pilot-id "it-prio-pilot-$B" --json >"$T/pm.json" || fail "pilot match"
grep -q "\"jobID\":$((B * 10 + 3))" "$T/pm.json" || fail "the pilot did not get B's job: $(cat "$T/pm.json")"
# B is empty now: the leader recomputes at once (PR-08), A gets it all.
t0=$SECONDS
wait_until 15 "[ \"\$(prio $((B * 10 + 1)))\" = 1000 ]" ||
	fail "A's priority $(prio $((B * 10 + 1))) 15 s after B emptied (want 1000: PR-08 recomputes when a task queue empties)"
log "B emptied by a match: A recomputed to 1000 within $((SECONDS - t0)) s"
