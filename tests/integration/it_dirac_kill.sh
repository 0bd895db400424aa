#!/usr/bin/env bash
# TQ-09 through two real workers: a waiting DIRAC job that job.status ends
# (killed, deleted, failed or done) leaves its task queue with its status,
# and no pilot gets it afterwards, whichever worker the pilot asks. Both
# workers hold every job in their index when the statuses arrive; the
# pilots that follow are told "nothing matched" or "all empty", never
# "claim_conflict": each index dropped the ended jobs (the removal log)
# before its next match instead of picking them and losing the claim.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

B=$ID_BASE
group="it_kill_$B" owner="/DC=org/CN=it-kill-$B" setup="IT-Kill-$B"
site=LCG.IT-KILL.org
J=$((B * 100)) # job ids J+1 .. J+24
job() { # job ID CPU: one waiting job of the owner at $site
	printf '{"jobID": %s, "ownerDN": "%s", "ownerGroup": "%s", "setup": "%s", "cpuTime": %s, "userPriority": 1, "sites": ["%s"]}' \
		"$1" "$owner" "$group" "$setup" "$2" "$site"
}
# Two task queues: jobs 1..16 (one hour) and 17..24 (two days).
{
	echo '{"jobs": ['
	for i in $(seq 1 24); do
		[ "$i" -gt 1 ] && echo ,
		if [ "$i" -le 16 ]; then job $((J + i)) 3600; else job $((J + i)) 172800; fi
	done
	echo ']}'
} >"$T/jobs.json"

start_worker w1
start_worker w2
"$GB" -c "$GB_CONFIG" tq submit "$T/jobs.json" >/dev/null || fail "tq submit"
waiting() { sql "select count(*) from tq_jobs where job_id between $((J + 1)) and $((J + 24))"; }
wait_until 30 "[ \"\$(waiting)\" = 24 ]" || fail "24 jobs not waiting: $(waiting)"
sleep 1 # both indexes hold the 24 jobs before the statuses come

# End 14 of the 16 short jobs and 6 of the 8 long ones, with every status
# that ends a wait; 4 stay waiting: J+15, J+16, J+23, J+24.
statuses=(killed deleted failed 'done')
ended=()
for i in $(seq 1 14) $(seq 17 22); do
	s=${statuses[$((i % 4))]}
	"$GB" -c "$GB_CONFIG" job status $((J + i)) "$s" >/dev/null || fail "job status $((J + i)) $s"
	ended+=($((J + i)))
done
in_list=$(IFS=,; echo "${ended[*]}")
gone() { sql "select count(*) from wms_jobs w where w.job_id in ($in_list) and w.status in ('killed','deleted','failed','done') and not exists (select 1 from tq_jobs j where j.job_id = w.job_id)"; }
wait_until 30 "[ \"\$(gone)\" = ${#ended[@]} ]" || fail "ended jobs still waiting: $(gone) of ${#ended[@]} out of their task queue"
log "${#ended[@]} waiting jobs ended by job.status: out of tq_jobs with their status"
removed=$(sql "select count(*) from tq_removed where job_id in ($in_list) and cause in ('killed','deleted','failed','done')")
[ "$removed" = "${#ended[@]}" ] || fail "removal log holds $removed of the ${#ended[@]} ended jobs"
sleep 0.5 # a few index refreshes ([dirac] index_refresh_ms 100)

# 12 pilots one at a time, so RabbitMQ hands them to both workers in turn,
# each after a few index refreshes: a claim_conflict can then only come
# from an index that still holds an ended job (another worker's claim of
# the last 100 ms would cause one too, which is not what is tested here).
for p in $(seq 1 12); do
	"$GB" -c "$GB_CONFIG" pilot match --site "$site" --setup "$setup" --cpu-time 3000000 \
		--pilot-id "it-kill-$B-$p" --json >>"$T/pm.json" || fail "pilot match $p"
	sleep 0.3
done
matched=$(sql "select group_concat(job_id order by job_id) from pilot_matches where pilot_id like 'it-kill-$B-%' and outcome = 'matched'")
want="$((J + 15)),$((J + 16)),$((J + 23)),$((J + 24))"
[ "$matched" = "$want" ] || fail "pilots got jobs $matched (want exactly the 4 still waiting: $want)"
bad=$(sql "select count(*) from pilot_matches where job_id in ($in_list)")
[ "$bad" = 0 ] || fail "$bad ended job(s) handed to a pilot"
conflicts=$(sql "select count(*) from pilot_matches where pilot_id like 'it-kill-$B-%' and code = 'claim_conflict'")
[ "$conflicts" = 0 ] || fail "$conflicts pilot(s) got claim_conflict: an index still held ended jobs"
codes=$(sql "select group_concat(distinct code order by code) from pilot_matches where pilot_id like 'it-kill-$B-%' and outcome = 'nomatch'")
[ "$codes" = all_empty ] || fail "the pilots after the last waiting job got '$codes' (want all_empty)"
st=$(sql "select group_concat(distinct status order by concat(status)) from wms_jobs where job_id in ($in_list)")
[ "$st" = "deleted,done,failed,killed" ] || fail "ended jobs' records say $st"
for w in w1 w2; do
	n=$(grep -c "pilot it-kill-$B-" "$T/$w.log" || true)
	[ "$n" -gt 0 ] || fail "worker $w decided no pilot (both must)"
done
log "12 pilots on two workers: the 4 waiting jobs matched, no ended job, no claim_conflict"
