#!/usr/bin/env bash
# GET /metrics and /healthz of a real worker: metrics on an ephemeral port
# (found from the worker's "metrics: listening on" line), every gridbroker_*
# family present, and after traffic of every request type (an assignable and
# an impossible task, job.broker requests on the sample grid, DIRAC jobs, a
# pilot without a job, a job.status, one bad message) the counters it should
# move have moved by what was sent, and the backlog gauges equal MariaDB's
# counts. /healthz is 200 with both servers up and
# 503 naming RabbitMQ for a worker that cannot reach it; other paths are
# 404; --check-config refuses a non-loopback address; a numeric --instance
# moves a fixed port.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

B=$ID_BASE
# A config with [worker] metrics_listen = $1 (any earlier value dropped).
metrics_conf() {
	local out=$1 listen=$2 src=${3:-$GB_CONFIG}
	sed '/^metrics_listen *=/d' "$src" >"$out"
	if grep -q '^\[worker\]' "$out"; then
		sed -i "/^\[worker\]/a metrics_listen=$listen" "$out"
	else
		printf '[worker]\nmetrics_listen=%s\n' "$listen" >>"$out"
	fi
}
# run_worker NAME CONF [INSTANCE]: start it; wait for its metrics line.
run_worker() {
	"$GB_WORKER" -c "$(worker_conf "$2" "$1")" --instance "${3:-$1}" >"$T/$1.log" 2>&1 &
	GB_PIDS+=($!)
	PID[$1]=$!
	wait_until 30 "grep -q 'metrics: listening on' '$T/$1.log'" || fail "worker $1 did not listen"
}
port_of() { grep -o 'metrics: listening on 127.0.0.1:[0-9]*' "$T/$1.log" | head -1 | sed 's/.*://'; }
scrape() { curl -sS --max-time 5 "http://127.0.0.1:$1/metrics" >"$T/$2" || fail "scrape $2"; }
# val FILE SERIES: the value of one series (exact name and labels), else "".
val() { awk -v s="$2" '$1 == s { print $2 }' "$T/$1"; }
# total FILE PREFIX: the sum of every series whose name+labels start so.
total() { awk -v p="$2" 'index($1, p) == 1 { t += $2 } END { printf "%d\n", t }' "$T/$1"; }
# moved NAME BEFORE AFTER MIN: AFTER - BEFORE >= MIN.
moved() { awk -v b="$2" -v a="$3" -v m="$4" 'BEGIN { exit !(a - b >= m) }' || fail "$1 moved from $2 to $3, expected at least +$4"; }

# --check-config: loopback only unless allowed.
metrics_conf "$T/remote.conf" 0.0.0.0:0
if out=$("$GB_WORKER" --check-config -c "$T/remote.conf" 2>&1); then fail "a non-loopback metrics_listen passed --check-config"; fi
grep -q 'worker.metrics_listen: not a loopback address' <<<"$out" || fail "check-config said: $out"
sed -i '/^metrics_allow_remote/d; /^metrics_listen=/a metrics_allow_remote=1' "$T/remote.conf"
"$GB_WORKER" --check-config -c "$T/remote.conf" >/dev/null || fail "metrics_allow_remote = 1 did not allow 0.0.0.0"

"$GB" -c "$GB_CONFIG" grid load "$GB_SRC/etc/grid-sample.json" >/dev/null || fail "grid load"
metrics_conf "$T/m.conf" 127.0.0.1:0
# the backlog gauges counted every second instead of every 30
sed -i '/^backlog_interval *=/d; /^\[worker\]/a backlog_interval=1' "$T/m.conf"
run_worker m1 "$T/m.conf"
wait_until 30 "grep -q 'AMQP connected' '$T/m1.log'" || fail "worker m1 did not connect"
P=$(port_of m1)
{ [ -n "$P" ] && [ "$P" -gt 0 ]; } || fail "no port in: $(grep metrics: "$T/m1.log")"
log "metrics on 127.0.0.1:$P"

# /healthz, 404, 405, the content type.
[ "$(curl -s -o "$T/h.txt" -w '%{http_code}' "http://127.0.0.1:$P/healthz")" = 200 ] || fail "healthz: $(cat "$T/h.txt")"
grep -qx 'ok: amqp up, db up' "$T/h.txt" || fail "healthz body: $(cat "$T/h.txt")"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P/nope")" = 404 ] || fail "/nope is not 404"
[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$P/metrics")" = 405 ] || fail "POST /metrics is not 405"
ctype=$(curl -s -o /dev/null -w '%{content_type}' "http://127.0.0.1:$P/metrics")
[ "$ctype" = "text/plain; version=0.0.4; charset=utf-8" ] || fail "content type: $ctype"

# the first backlog count comes with the worker's first ticks
wait_until 30 "curl -s http://127.0.0.1:$P/metrics | grep -q '^gridbroker_backlog_time_seconds [1-9]'" ||
	fail "the backlog was never counted"
scrape "$P" before.prom
[ "$(val before.prom gridbroker_up)" = 1 ] || fail "gridbroker_up: $(grep up "$T/before.prom")"
grep -q '^gridbroker_build_info{version="[0-9.]*"} 1$' "$T/before.prom" || fail "no build info"
start=$(val before.prom gridbroker_start_time_seconds)
now=$(date +%s)
{ [ -n "$start" ] && [ "$start" -le "$now" ] && [ "$start" -gt $((now - 120)) ]; } || fail "start time $start (now $now)"
for fam in gridbroker_requests_total gridbroker_decision_duration_seconds gridbroker_db_roundtrip_seconds \
	gridbroker_amqp_confirm_seconds gridbroker_rejections_total gridbroker_reconnects_total \
	gridbroker_dead_letters_total gridbroker_amqp_connected gridbroker_db_connected \
	gridbroker_parked_requests gridbroker_unconfirmed_publishes gridbroker_backlog \
	gridbroker_backlog_time_seconds gridbroker_outbox_oldest_seconds gridbroker_claim_conflicts_total; do
	grep -q "^# TYPE $fam " "$T/before.prom" || fail "family $fam missing"
done
for s in 'gridbroker_reconnects_total{target="amqp"}' 'gridbroker_reconnects_total{target="db"}' \
	'gridbroker_requests_total{type="task.broker",outcome="pending"}' \
	'gridbroker_requests_total{type="job.broker",outcome="throttled"}' \
	gridbroker_amqp_connected gridbroker_db_connected gridbroker_outbox_oldest_seconds \
	gridbroker_claim_conflicts_total; do
	[ -n "$(val before.prom "$s")" ] || fail "series $s missing"
done
{ [ "$(val before.prom gridbroker_amqp_connected)" = 1 ] && [ "$(val before.prom gridbroker_db_connected)" = 1 ]; } ||
	fail "connected gauges are not 1"

# Traffic of every kind. Each subscriber waits for the events it expects,
# so the scrape afterwards sees every decision.
task_json $((B * 10 + 1)) "it.metrics.$B" 1 100 300 >"$T/t1.json"
task_json $((B * 10 + 2)) "it.metrics.$B.big" 50000 5000 300 >"$T/t2.json"
sed -e 's/"taskID": 361000\([0-9][0-9]\),/"taskID": '"$B"'\1, "nucleus": "CERN-PROD", "gshare": "MC Reco",/' \
    -e 's/"jobID": 361000\([0-9][0-9]\)/"jobID": '"$B"'\1/' "$GB_SRC/etc/jobs-sample.json" >"$T/jobs.json"
njobreq=$(grep -c '"taskID"' "$T/jobs.json")
sed -E 's/"jobID": 71000([0-9][0-9])/"jobID": '"$B"'\1/' "$GB_SRC/etc/dirac-sample.json" >"$T/dirac.json"
# the sample's two throttled analysis tasks (bob over his class's share,
# AJ-04; carol over her disk quota, AJ-03) with fresh job ids: job.broker
# counts throttled outcomes. Alice's task is left out: it would be
# assigned and add running load that later tests' throttles would see.
python3 - "$GB_SRC/etc/analysis-sample.json" "$B" >"$T/anal.json" <<'PY'
import json, sys
reqs = [r for r in json.load(open(sys.argv[1])) if r["userName"] in ("bob", "carol")]
for r in reqs:
    for j in r["jobs"]:
        j["jobID"] = int("38" + sys.argv[2] + str(j["jobID"])[-4:])
json.dump(reqs, sys.stdout)
PY
nanal=$(grep -o '"taskID"' "$T/anal.json" | wc -l)
[ "$nanal" = 2 ] || fail "expected bob's and carol's analysis tasks, got $nanal"
subscribe ev $((2 + njobreq + nanal)) 90 task.assigned task.pending jobs.assigned jobs.pending task.throttled
"$GB" -c "$GB_CONFIG" task submit "$T/t1.json" >/dev/null || fail "task submit"
"$GB" -c "$GB_CONFIG" task submit "$T/t2.json" >/dev/null || fail "task submit (impossible)"
"$GB" -c "$GB_CONFIG" job submit "$T/jobs.json" >/dev/null || fail "job submit"
"$GB" -c "$GB_CONFIG" job submit "$T/anal.json" >/dev/null || fail "job submit (analysis)"
"$GB" -c "$GB_CONFIG" tq submit "$T/dirac.json" >/dev/null || fail "tq submit"
wait "${SUB[ev]}" || fail "events missing: $(cat "$T/ev.events")"
wait_until 30 "grep -q 'job.submit .*job(s) into' '$T/m1.log'" || fail "job.submit not taken"
"$GB" -c "$GB_CONFIG" pilot match --site LCG.IT-METRICS.org --setup IT-Metrics --cpu-time 3600 \
	--pilot-id "it-metrics-pilot-$B" --json >"$T/reply.json" || fail "no pilot reply"
grep -q '"outcome":"nomatch"' "$T/reply.json" || fail "pilot reply: $(cat "$T/reply.json")"
"$GB" -c "$GB_CONFIG" job status "${B}01" running >/dev/null || fail "job status"
"$GB" -c "$GB_CONFIG" publish task.broker "$GB_SRC/tests/fuzz/corpus/fuzz_task_broker/bad-wrong-type-taskID-string.msgpack" \
	--message-id "it-metrics-bad-$B" >/dev/null || fail "publish a bad message"
wait_until 30 "grep -q 'dead-lettered task.broker message it-metrics-bad-$B' '$T/m1.log'" || fail "bad message not dead-lettered"
# job.status is acked after its commit; give the counters that moment.
wait_until 30 "curl -s http://127.0.0.1:$P/metrics | grep -q '^gridbroker_requests_total{type=\"job.status\",outcome=\"\(updated\|ignored\)\"} [1-9]'" ||
	fail "job.status not counted"
scrape "$P" after.prom

# Every request type counted, by what was sent.
for t in task.broker:3 job.broker:$njobreq job.submit:1 pilot.match:1 job.status:1; do
	moved "requests of ${t%%:*}" "$(total before.prom "gridbroker_requests_total{type=\"${t%%:*}\"")" \
		"$(total after.prom "gridbroker_requests_total{type=\"${t%%:*}\"")" "${t##*:}"
done
for s in 'type="task.broker",outcome="assigned"' 'type="task.broker",outcome="pending"' \
	'type="task.broker",outcome="dead_lettered"' 'type="job.submit",outcome="accepted"' \
	'type="pilot.match",outcome="nomatch"' 'type="job.broker",outcome="throttled"'; do
	moved "requests{$s}" "$(val before.prom "gridbroker_requests_total{$s}")" "$(val after.prom "gridbroker_requests_total{$s}")" 1
done
moved "job.broker decisions" "$(( $(val before.prom 'gridbroker_requests_total{type="job.broker",outcome="assigned"}') + $(val before.prom 'gridbroker_requests_total{type="job.broker",outcome="pending"}') ))" \
	"$(( $(val after.prom 'gridbroker_requests_total{type="job.broker",outcome="assigned"}') + $(val after.prom 'gridbroker_requests_total{type="job.broker",outcome="pending"}') ))" "$njobreq"
# Latency of each decided type: count moved, and +Inf equals the count.
for t in task.broker:2 job.broker:$njobreq job.submit:1 pilot.match:1 job.status:1; do
	c="gridbroker_decision_duration_seconds_count{type=\"${t%%:*}\"}"
	moved "$c" "$(val before.prom "$c")" "$(val after.prom "$c")" "${t##*:}"
	[ "$(val after.prom "gridbroker_decision_duration_seconds_bucket{type=\"${t%%:*}\",le=\"+Inf\"}")" = "$(val after.prom "$c")" ] ||
		fail "+Inf bucket of ${t%%:*} is not the count"
done
moved "DB round trips" "$(val before.prom gridbroker_db_roundtrip_seconds_count)" "$(val after.prom gridbroker_db_roundtrip_seconds_count)" 20
moved "AMQP confirms" "$(val before.prom gridbroker_amqp_confirm_seconds_count)" "$(val after.prom gridbroker_amqp_confirm_seconds_count)" $((2 + njobreq))
# The impossible task is dropped by TB-07 on every nucleus; the pilot's
# setup matches no task queue (TQ-05); the job requests reject queues.
moved 'rejections{rule="TB-07"}' "$(val before.prom 'gridbroker_rejections_total{rule="TB-07"}' | sed 's/^$/0/')" \
	"$(val after.prom 'gridbroker_rejections_total{rule="TB-07"}')" 1
moved 'rejections{rule="TQ-05"}' "$(val before.prom 'gridbroker_rejections_total{rule="TQ-05"}' | sed 's/^$/0/')" \
	"$(val after.prom 'gridbroker_rejections_total{rule="TQ-05"}')" 1
moved 'rejections of PJ rules' "$(total before.prom 'gridbroker_rejections_total{rule="PJ-')" \
	"$(total after.prom 'gridbroker_rejections_total{rule="PJ-')" 1
moved 'dead letters of task.broker' "$(val before.prom 'gridbroker_dead_letters_total{type="task.broker"}')" \
	"$(val after.prom 'gridbroker_dead_letters_total{type="task.broker"}')" 1
[ "$(( $(val after.prom 'gridbroker_dead_letters_total{type="task.broker"}') - $(val before.prom 'gridbroker_dead_letters_total{type="task.broker"}') ))" = 1 ] ||
	fail "more than one task.broker dead letter counted"
log "requests, latencies, round trips, rejections and dead letters moved"

# The backlog gauges: each equals what MariaDB (or, for DIRAC, the task
# queue table the worker's index follows) holds now, once the worker has
# counted after the traffic; the impossible task is pending, bob's and
# carol's jobs are throttled and the DIRAC jobs wait (the pilot took none).
# now_val SERIES: the series' value in a fresh scrape
now_val() { curl -s "http://127.0.0.1:$P/metrics" | awk -v s="$1" '$1 == s { print $2 }'; }
bl() { now_val "gridbroker_backlog{what=\"$1\"}"; }
for w in "tasks_pending:select count(*) from tasks where status = 'pending'" \
	"job_requests_pending:select count(*) from job_requests where status = 'pending'" \
	"jobs_pending:select count(*) from jobs where status = 'pending'" \
	"tasks_throttled:select count(distinct task_id) from jobs where status = 'throttled'" \
	"jobs_throttled:select count(*) from jobs where status = 'throttled'" \
	"dirac_jobs_waiting:select count(*) from tq_jobs"; do
	name=${w%%:*} q=${w#*:}
	wait_until 30 "[ \"\$(bl $name)\" = \"\$(sql \"$q\")\" ]" ||
		fail "backlog $name: gauge $(bl "$name"), MariaDB $(sql "$q")"
done
[ "$(sql "select status from tasks where task_id = $((B * 10 + 2))")" = pending ] || fail "the impossible task is not pending"
nthr=$(sql "select count(*) from jobs where status = 'throttled' and job_id between 38${B}0000 and 38${B}9999")
[ "$nthr" -ge 1 ] || fail "no throttled job of bob's and carol's tasks"
scrape "$P" backlog.prom
moved 'backlog{what="tasks_pending"}' "$(val before.prom 'gridbroker_backlog{what="tasks_pending"}')" \
	"$(val backlog.prom 'gridbroker_backlog{what="tasks_pending"}')" 1
moved 'backlog{what="jobs_throttled"}' "$(val before.prom 'gridbroker_backlog{what="jobs_throttled"}')" \
	"$(val backlog.prom 'gridbroker_backlog{what="jobs_throttled"}')" 1
moved 'backlog{what="dirac_jobs_waiting"}' "$(val before.prom 'gridbroker_backlog{what="dirac_jobs_waiting"}')" \
	"$(val backlog.prom 'gridbroker_backlog{what="dirac_jobs_waiting"}')" 1
moved 'backlog_time_seconds' "$(val before.prom gridbroker_backlog_time_seconds)" \
	"$(val backlog.prom gridbroker_backlog_time_seconds)" 1
log "backlog gauges equal MariaDB's counts and moved ($nthr throttled jobs of this test)"

# Reconnects: the database drops the worker's connection (KILL from the
# server side), then RabbitMQ closes it; both counters move, and /healthz
# is 200 again once the worker is back.
user=$(sed -n '/^\[database\]/,/^\[/s/^user *= *//p' "$GB_CONFIG" | head -1)
vhost=$(sed -n '/^\[amqp\]/,/^\[/s/^vhost *= *//p' "$GB_CONFIG" | head -1)
ids=$(sql "select id from information_schema.processlist where user = '$user' and db = '${GB_DB_NAME:-gridbroker}'")
[ -n "$ids" ] || fail "no database connection of the worker to kill"
for id in $ids; do sql "kill $id" || true; done
rdb=$(val after.prom 'gridbroker_reconnects_total{target="db"}')
ramqp=$(val after.prom 'gridbroker_reconnects_total{target="amqp"}')
wait_until 30 "[ \"\$(now_val 'gridbroker_reconnects_total{target=\"db\"}')\" -gt $rdb ]" ||
	fail "db reconnects did not move: $(curl -s "http://127.0.0.1:$P/metrics" | grep reconnects)"
"$GB_SRC/scripts/services" rabbitmqctl close_all_connections -p "${vhost:-/}" "it_metrics: reconnect test" >/dev/null ||
	fail "rabbitmqctl close_all_connections"
wait_until 30 "[ \"\$(now_val 'gridbroker_reconnects_total{target=\"amqp\"}')\" -gt $ramqp ]" ||
	fail "amqp reconnects did not move: $(curl -s "http://127.0.0.1:$P/metrics" | grep reconnects)"
wait_until 30 "[ \"\$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$P/healthz)\" = 200 ]" ||
	fail "healthz not 200 after the reconnects"
log "reconnects of the database and RabbitMQ counted; healthy again"

# A worker that cannot reach RabbitMQ: /healthz 503 naming it.
sed '/^\[amqp\]/,/^\[/s/^port *=.*/port=1/' "$T/m.conf" >"$T/noamqp.conf"
grep -q '^port=1$' "$T/noamqp.conf" || fail "could not point [amqp] port at 1"
run_worker m2 "$T/noamqp.conf"
P2=$(port_of m2)
wait_until 20 "[ \"\$(curl -s -o '$T/h2.txt' -w '%{http_code}' http://127.0.0.1:$P2/healthz)\" = 503 ]" ||
	fail "healthz of a worker without RabbitMQ: $(cat "$T/h2.txt")"
grep -qx 'unhealthy: amqp down, db up' "$T/h2.txt" || fail "503 body: $(cat "$T/h2.txt")"
kill "${PID[m2]}"

# A fixed port moves up by N - 1 for --instance N.
base=$(( 20000 + RANDOM % 20000 ))
metrics_conf "$T/fixed.conf" "127.0.0.1:$base" "$T/noamqp.conf"
run_worker m3 "$T/fixed.conf" 3
[ "$(port_of m3)" = $((base + 2)) ] || fail "--instance 3 on port $base listens on $(port_of m3)"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$((base + 2))/metrics")" = 200 ] || fail "no metrics on $((base + 2))"
kill "${PID[m3]}"

log "metrics and health endpoints serve what the worker does"
echo "1 passed, 0 failed"
