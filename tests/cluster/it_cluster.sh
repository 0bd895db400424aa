#!/usr/bin/env bash
# it_cluster.sh — scale-out on a 3-node RabbitMQ cluster and a 3-node Galera
# cluster (scripts/cluster), with one node of each stopped under load.
#
# Usage: it_cluster.sh BINDIR [CLU_LOAD]   (ctest passes both)
#
#  1. scripts/cluster start; reset (empty database and vhost); migrate with
#     the admin config; load the sample grid (etc/grid-sample.json, which
#     also holds the DIRAC groups).
#  2. Three workers start with the cluster config (host lists of all
#     nodes); a durable quorum queue bound to gridbroker.events with "#"
#     collects every event.
#  3. clu_load publishes GB_CLU_MESSAGES requests (default 3200) at
#     GB_CLU_RATE per second (default 40): task.broker, job.submit (2 DIRAC
#     jobs each, from etc/dirac-sample.json), pilot.match ×2, repeated;
#     every message id unique, each counted as sent once confirmed.
#  4. A third of the way in, the RabbitMQ node the workers are connected to
#     and the Galera node they write to are stopped (scripts/cluster
#     stop-node); the load goes on; GB_CLU_DOWN seconds later (default 20)
#     both are started again.
#  5. When every request is decided and every event sent, the workers stop,
#     the events are drained, and MariaDB and the events are checked:
#       lost      a sent request with no dedup row (processed_messages, or
#                 pilot_matches for pilot.match)
#       twice     a request with two dedup rows or two decisions
#       unsent    an outbox row not marked sent
#       missing   a decision whose event is not in the collected stream
#       conflict  one message id with two different bodies, or a pilot
#                 decision in two different events
#       job twice a job in two pilot_matches rows
#       job lost  a submitted job neither waiting (tq_jobs) nor matched
#       dead      a request dead-lettered without ever being decided
#     Duplicated deliveries of the same event, and dead-lettered copies of
#     requests that were decided, are counted and reported, not failed (at
#     least once is the contract). A worker that exits fails the test.
#
# Environment: GB_CLU_MESSAGES, GB_CLU_RATE, GB_CLU_DOWN, GB_CLU_KEEP=1
# (leave the clusters running even if this test started them),
# GB_CLU_KEEP_LOGS=1 (keep the temporary directory with every log),
# GB_CLU_DELIVERY_LIMIT=N (run with another [amqp] delivery_limit),
# GB_CLU_SPREAD_DB=1 (each worker writes through another Galera node).
set -euo pipefail

GB_SRC=${GB_SOURCE_DIR:?GB_SOURCE_DIR must point at the source tree}
BIN=${1:?usage: $0 BINDIR [CLU_LOAD]}
CLU_LOAD=${2:-$BIN/tests/cluster/clu_load}
GB=$BIN/gridbroker
WORKER=$BIN/gridbroker-worker
CLUSTER=$GB_SRC/scripts/cluster
export GB_CLUSTER_DIR=${GB_CLUSTER_DIR:-$GB_SRC/run/cluster}
CLU_CONF=$GB_CLUSTER_DIR/gridbroker.conf
ADMIN_CONF=$GB_CLUSTER_DIR/gridbroker-admin.conf
NMSG=${GB_CLU_MESSAGES:-3200}
RATE=${GB_CLU_RATE:-40}
DOWN=${GB_CLU_DOWN:-20}
NWORKERS=3
RUN=clu$(date +%s)
QUEUE=gridbroker.test.events-$RUN
T=$(mktemp -d "${TMPDIR:-/tmp}/gb-cluster.XXXXXX")
PIDS=()
T0=$SECONDS

log() { printf '[%s +%3ds] %s\n' "$(date +%H:%M:%S)" $((SECONDS - T0)) "$*"; }
fail() {
	printf 'FAIL: %s\n' "$*" >&2
	local f
	for f in "$T"/*.log; do [[ -f $f ]] && { echo "--- $f"; tail -n 20 "$f"; }; done >&2
	exit 1
}
sql() { "$CLUSTER" sql -N -B gridbroker "$@"; }

[[ -x $GB && -x $WORKER ]] || fail "no gridbroker binaries in $BIN"
[[ -x $CLU_LOAD ]] || fail "no clu_load at $CLU_LOAD (build the clu_load target)"

STARTED_CLUSTER=0
NODES_DOWN=0
cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
	# Failed while a node was stopped: bring the clusters back whole.
	if (( NODES_DOWN )); then "$CLUSTER" start >/dev/null 2>&1 || true; fi
	if [[ -s $CONF ]]; then "$CLU_LOAD" delete "$CONF" "$QUEUE" >/dev/null 2>&1 || true; fi
	if [[ -n ${PUB:-} ]]; then wait "$PUB" 2>/dev/null || true; fi
	if (( STARTED_CLUSTER )) && [[ ${GB_CLU_KEEP:-0} != 1 ]]; then
		log "stopping the clusters this test started"
		"$CLUSTER" stop >/dev/null 2>&1 || true
	fi
	if [[ ${GB_CLU_KEEP_LOGS:-0} == 1 ]]; then echo "logs kept in $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT

# The programs read the cluster config, or a copy of it with another
# [amqp] delivery_limit when GB_CLU_DELIVERY_LIMIT is set (an experiment:
# how much margin a failover needs).
CONF=$CLU_CONF
if [[ -n ${GB_CLU_DELIVERY_LIMIT:-} ]]; then CONF=$T/gridbroker.conf; fi

# ---- 1. clusters, schema, grid --------------------------------------------
"$CLUSTER" status >/dev/null 2>&1 || STARTED_CLUSTER=1
t=$SECONDS
"$CLUSTER" start 2>"$T/cluster-start.log" || fail "scripts/cluster start (see $T/cluster-start.log)"
log "clusters up in $((SECONDS - t))s"
"$CLUSTER" reset 2>>"$T/cluster-start.log" || fail "scripts/cluster reset"
if [[ $CONF != "$CLU_CONF" ]]; then
	sed "/^\[amqp\]/a delivery_limit=$GB_CLU_DELIVERY_LIMIT" "$CLU_CONF" >"$CONF"
	log "workers use [amqp] delivery_limit=$GB_CLU_DELIVERY_LIMIT"
fi
"$GB" -c "$ADMIN_CONF" db migrate >"$T/migrate.log" 2>&1 || fail "db migrate"
"$GB" -c "$CONF" grid load "$GB_SRC/etc/grid-sample.json" >"$T/grid.log" 2>&1 || fail "grid load"
log "schema migrated, sample grid loaded"

# ---- 2. workers -------------------------------------------------------------
# GB_CLU_SPREAD_DB=1 (an experiment, not the recommended setup): worker i
# gets the [database] host list rotated by i-1, so the three workers write
# through three different Galera nodes and conflict at certification.
worker_conf() {
	local i=$1 hosts rot
	if [[ ${GB_CLU_SPREAD_DB:-0} != 1 ]]; then echo "$CONF"; return; fi
	hosts=$(awk -F= '/^\[database\]/ {d = 1} d && $1 == "host" {print $2; exit}' "$CONF")
	IFS=, read -r -a h <<<"$hosts"
	rot=("${h[@]:$((i - 1))}" "${h[@]:0:$((i - 1))}")
	awk -v d="$(IFS=,; echo "${rot[*]}")" '/^\[database\]/ {db = 1} /^\[/ && !/^\[database\]/ {db = 0}
		db && /^host=/ {print "host=" d; next} {print}' "$CONF" >"$T/worker-c$i.conf"
	echo "$T/worker-c$i.conf"
}
WPIDS=()
for i in $(seq $NWORKERS); do
	"$WORKER" -c "$(worker_conf "$i")" --instance "c$i" >"$T/worker-c$i.log" 2>&1 &
	PIDS+=($!)
	WPIDS+=($!)
done
# A worker that exits by itself is a failure of its own (its log says why).
workers_alive() {
	local i
	for i in $(seq $NWORKERS); do
		kill -0 "${WPIDS[$((i - 1))]}" 2>/dev/null ||
			fail "worker c$i exited: $(grep -E 'ERROR|stopping' "$T/worker-c$i.log" | tail -n 2 | cut -c1-220)"
	done
}
for i in $(seq $NWORKERS); do
	for _ in $(seq 300); do grep -qs 'AMQP connected, consuming' "$T/worker-c$i.log" && break; sleep 0.1; done
	grep -q 'AMQP connected, consuming' "$T/worker-c$i.log" || fail "worker c$i did not start"
done
log "$NWORKERS workers consuming"
# After the workers: they declare the exchanges.
"$CLU_LOAD" declare "$CONF" "$QUEUE" 2>"$T/declare.log" || fail "declare $QUEUE"
log "events collected in $QUEUE"

# The node of each cluster the workers use: most AMQP connections of user
# gridbroker (by server port; node N listens on the Nth port of the
# config's [amqp] host list), most MariaDB connections of user gridbroker.
rmq_victim() {
	local hosts
	hosts=$(awk -F= '/^\[amqp\]/ {a = 1} a && $1 == "host" {print $2; exit}' "$CONF")
	"$CLUSTER" rabbitmqctl -q list_connections -p gridbroker port 2>/dev/null |
		awk -v hosts="$hosts" '
			BEGIN {m = split(hosts, h, ","); for (i = 1; i <= m; i++) {sub(/.*:/, "", h[i]); node[h[i]] = i}}
			$1 in node {n[node[$1]]++}
			END {b = 1; for (k in n) if (n[k] > n[b]) b = k; print b}'
}
db_victim() {
	local n c best=1 bc=-1
	for n in 1 2 3; do
		c=$("$CLUSTER" sql --node "$n" -N -B -e \
			"SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = 'gridbroker'" 2>/dev/null || echo 0)
		if (( c > bc )); then best=$n; bc=$c; fi
	done
	echo "$best"
}
log "quorum queue leaders: $("$CLUSTER" rabbitmqctl -q list_queues -p gridbroker name leader 2>/dev/null |
	awk '$1 ~ /^gridbroker\.(task|job|pilot)/ {n[$2]++} END {for (k in n) printf "%s=%d ", k, n[k]}')"

# ---- 3. load, 4. faults ------------------------------------------------------
ID_BASE=$(( ($(date +%s) % 100000) * 100000 + 1000000000 ))
"$CLU_LOAD" publish "$CONF" "$RUN" "$T/sent.txt" --tasks "$GB_SRC/etc/tasks-sample.json" \
	--dirac "$GB_SRC/etc/dirac-sample.json" --count "$NMSG" --rate "$RATE" \
	--jobs-per-msg 2 --id-base "$ID_BASE" >"$T/publish.out" 2>"$T/publish.log" &
PUB=$!
PIDS+=("$PUB")
load_s=$(( NMSG / RATE ))
sleep $(( load_s / 3 ))
RMQ_DOWN=$(rmq_victim)
DB_DOWN=$(db_victim)
log "stopping RabbitMQ node $RMQ_DOWN (the workers' node) and Galera node $DB_DOWN (the workers' writer)"
FAULT_AT=$(date +%s)
NODES_DOWN=1
t=$SECONDS
"$CLUSTER" stop-node mariadb "$DB_DOWN" 2>>"$T/faults.log" || fail "stop-node mariadb $DB_DOWN"
"$CLUSTER" stop-node rabbitmq "$RMQ_DOWN" 2>>"$T/faults.log" || fail "stop-node rabbitmq $RMQ_DOWN"
log "both stopped in $((SECONDS - t))s; load goes on for ${DOWN}s with 2+2 nodes"
sleep "$DOWN"
workers_alive
"$CLUSTER" status >"$T/status-degraded.txt" 2>&1 || true
t=$SECONDS
"$CLUSTER" start-node mariadb "$DB_DOWN" 2>>"$T/faults.log" || fail "start-node mariadb $DB_DOWN"
log "Galera node $DB_DOWN back and synced in $((SECONDS - t))s"
t=$SECONDS
"$CLUSTER" start-node rabbitmq "$RMQ_DOWN" 2>>"$T/faults.log" || fail "start-node rabbitmq $RMQ_DOWN"
log "RabbitMQ node $RMQ_DOWN back in the cluster in $((SECONDS - t))s"
NODES_DOWN=0

while kill -0 "$PUB" 2>/dev/null; do workers_alive; sleep 2; done
wait "$PUB" || fail "the publisher failed (see $T/publish.log)"
log "publisher: $(cat "$T/publish.out")"
SENT=$(wc -l <"$T/sent.txt")
(( SENT == NMSG )) || fail "only $SENT of $NMSG requests confirmed"

# ---- 5. drain, then check ----------------------------------------------------
decided() {
	sql -e "SELECT (SELECT COUNT(*) FROM processed_messages WHERE message_id LIKE '$RUN-%')
	             + (SELECT COUNT(*) FROM pilot_matches WHERE request_id LIKE '$RUN-%'),
	               (SELECT COUNT(*) FROM outbox WHERE sent_at IS NULL)" 2>/dev/null || echo "? ?"
}
# Requests still queued (ready or unacked) and requests dead-lettered: a
# dead letter is never decided, so it ends the wait (and fails "lost").
queued() {
	"$CLUSTER" rabbitmqctl -q list_queues -p gridbroker name messages 2>/dev/null |
		awk '$1 ~ /^gridbroker\.(task|job|pilot)/ {s += $2} $1 == "gridbroker.dead" {d = $2}
		     END {print s + 0, d + 0}'
}
deadline=$((SECONDS + 600))
while :; do
	read -r ndecided unsent < <(decided)
	read -r q dead < <(queued)
	[[ $ndecided =~ ^[0-9]+$ ]] && (( ndecided + dead >= SENT )) && [[ $unsent == 0 && $q == 0 ]] && break
	(( SECONDS < deadline )) || fail "not drained after 600s: $ndecided of $SENT decided, $dead dead-lettered, $unsent events unsent, $q requests queued"
	log "draining: $ndecided of $SENT decided, $dead dead-lettered, $unsent events unsent, $q requests queued"
	workers_alive
	sleep 5
done
log "every request decided or dead-lettered ($dead), every event sent"
for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
PIDS=()
"$CLU_LOAD" drain "$CONF" "$QUEUE" "$T/events.txt" --idle-ms 3000 >"$T/drain.out" 2>"$T/drain.log" ||
	fail "draining $QUEUE"
log "events: $(cat "$T/drain.out")"
read -r _ DEAD < <(queued)
if (( DEAD > 0 )); then
	"$GB" -c "$CONF" dlq -n "$DEAD" --json >"$T/dead.jsonl" 2>/dev/null || true
fi

# Sent ids, jobs and the collected events into temporary tables of one
# session; every invariant is one query.
{
	echo "CREATE TEMPORARY TABLE t_sent (id VARCHAR(191) PRIMARY KEY, kind VARCHAR(16) NOT NULL);"
	echo "CREATE TEMPORARY TABLE t_job (job_id BIGINT PRIMARY KEY);"
	echo "CREATE TEMPORARY TABLE t_ev (n INT AUTO_INCREMENT PRIMARY KEY, msgid VARCHAR(191), rk VARCHAR(64), h CHAR(16), INDEX (msgid));"
	echo "CREATE TEMPORARY TABLE t_item (n INT AUTO_INCREMENT PRIMARY KEY, msgid VARCHAR(191), decision BIGINT, req VARCHAR(191), job BIGINT, INDEX (decision), INDEX (msgid));"
	echo "CREATE TEMPORARY TABLE t_dead (n INT AUTO_INCREMENT PRIMARY KEY, id VARCHAR(191));"
	if [[ -s $T/dead.jsonl ]]; then
		sed -n 's/.*"messageId":"\([^"]*\)".*/\1/p' "$T/dead.jsonl" |
			awk -v q="'" '{printf "INSERT INTO t_dead (id) VALUES (%s%s%s);\n", q, $1, q}'
	fi
	awk -v q="'" '{printf "INSERT INTO t_sent VALUES (%s%s%s,%s%s%s);\n", q, $2, q, q, $1, q}' "$T/sent.txt"
	awk '$1 == "submit" {for (i = 3; i <= NF; i++) printf "INSERT INTO t_job VALUES (%s);\n", $i}' "$T/sent.txt"
	awk -v q="'" '$1 == "event" {printf "INSERT INTO t_ev (msgid, rk, h) VALUES (%s%s%s,%s%s%s,%s%s%s);\n", q, $2, q, q, $3, q, q, $4, q}' "$T/events.txt"
	awk -v q="'" '$1 == "item" {printf "INSERT INTO t_item (msgid, decision, req, job) VALUES (%s%s%s,%s,%s%s%s,%s);\n", q, $2, q, $3, q, $4, q, $5}' "$T/events.txt"
	cat <<-'SQL'
	SELECT 'lost', COUNT(*) FROM t_sent s WHERE
	  (s.kind <> 'pilot' AND NOT EXISTS (SELECT 1 FROM processed_messages p WHERE p.message_id = s.id))
	  OR (s.kind = 'pilot' AND NOT EXISTS (SELECT 1 FROM pilot_matches m WHERE m.request_id = s.id));
	SELECT 'twice_processed', COUNT(*) FROM (SELECT s.id FROM t_sent s JOIN processed_messages p ON p.message_id = s.id GROUP BY s.id HAVING COUNT(*) > 1) x;
	SELECT 'twice_decided', COUNT(*) FROM (SELECT d.request_id FROM decisions d JOIN t_sent s ON s.id = d.request_id GROUP BY d.request_id HAVING COUNT(*) > 1) x;
	SELECT 'twice_matched', COUNT(*) FROM (SELECT m.request_id FROM pilot_matches m JOIN t_sent s ON s.id = m.request_id GROUP BY m.request_id HAVING COUNT(*) > 1) x;
	SELECT 'decisions', COUNT(*) FROM decisions d JOIN t_sent s ON s.id = d.request_id;
	SELECT 'pilot_decisions', COUNT(*) FROM pilot_matches m JOIN t_sent s ON s.id = m.request_id;
	SELECT 'outbox_rows', COUNT(*) FROM outbox;
	SELECT 'unsent', COUNT(*) FROM outbox WHERE sent_at IS NULL;
	SELECT 'no_outbox_row', COUNT(*) FROM decisions d JOIN t_sent s ON s.id = d.request_id
	  WHERE NOT EXISTS (SELECT 1 FROM outbox o WHERE o.message_id = CONCAT('gb-decision-', d.id));
	SELECT 'missing_event', COUNT(*) FROM decisions d JOIN t_sent s ON s.id = d.request_id
	  WHERE NOT EXISTS (SELECT 1 FROM t_ev e WHERE e.msgid = CONCAT('gb-decision-', d.id));
	SELECT 'missing_pilot_event', COUNT(*) FROM pilot_matches m JOIN t_sent s ON s.id = m.request_id
	  WHERE NOT EXISTS (SELECT 1 FROM t_item i WHERE i.decision = m.id);
	SELECT 'outbox_not_in_stream', COUNT(*) FROM outbox o WHERE NOT EXISTS (SELECT 1 FROM t_ev e WHERE e.msgid = o.message_id);
	SELECT 'events', COUNT(*) FROM t_ev;
	SELECT 'event_duplicates', COUNT(*) - COUNT(DISTINCT msgid) FROM t_ev;
	SELECT 'event_conflicts', COUNT(*) FROM (SELECT msgid FROM t_ev GROUP BY msgid HAVING COUNT(DISTINCT h) > 1) x;
	SELECT 'decision_in_two_events', COUNT(*) FROM (SELECT decision FROM t_item GROUP BY decision HAVING COUNT(DISTINCT msgid) > 1) x;
	SELECT 'job_matched_twice', COUNT(*) FROM (SELECT job_id FROM pilot_matches WHERE job_id IS NOT NULL GROUP BY job_id HAVING COUNT(*) > 1) x;
	SELECT 'job_given_twice_in_events', COUNT(*) FROM (SELECT job FROM t_item WHERE job > 0 GROUP BY job HAVING COUNT(DISTINCT decision) > 1) x;
	SELECT 'jobs_sent', COUNT(*) FROM t_job;
	SELECT 'jobs_matched', COUNT(*) FROM t_job j WHERE EXISTS (SELECT 1 FROM pilot_matches m WHERE m.job_id = j.job_id);
	SELECT 'jobs_waiting', COUNT(*) FROM t_job j WHERE EXISTS (SELECT 1 FROM tq_jobs q WHERE q.job_id = j.job_id);
	SELECT 'job_lost', COUNT(*) FROM t_job j WHERE NOT EXISTS (SELECT 1 FROM tq_jobs q WHERE q.job_id = j.job_id)
	  AND NOT EXISTS (SELECT 1 FROM pilot_matches m WHERE m.job_id = j.job_id);
	SELECT 'job_waiting_and_matched', COUNT(*) FROM t_job j WHERE EXISTS (SELECT 1 FROM tq_jobs q WHERE q.job_id = j.job_id)
	  AND EXISTS (SELECT 1 FROM pilot_matches m WHERE m.job_id = j.job_id);
	SELECT 'job_not_recorded', COUNT(*) FROM t_job j WHERE NOT EXISTS (SELECT 1 FROM wms_jobs w WHERE w.job_id = j.job_id);
	SELECT 'job_status_disagrees', COUNT(*) FROM t_job j JOIN wms_jobs w ON w.job_id = j.job_id
	  WHERE (w.status = 'matched') <> EXISTS (SELECT 1 FROM pilot_matches m WHERE m.job_id = j.job_id);
	SELECT 'dead_undecided', COUNT(*) FROM t_dead d WHERE NOT EXISTS (SELECT 1 FROM processed_messages p WHERE p.message_id = d.id)
	  AND NOT EXISTS (SELECT 1 FROM pilot_matches m WHERE m.request_id = d.id);
	SELECT 'dead_decided', COUNT(*) FROM t_dead d WHERE EXISTS (SELECT 1 FROM processed_messages p WHERE p.message_id = d.id)
	  OR EXISTS (SELECT 1 FROM pilot_matches m WHERE m.request_id = d.id);
	SELECT 'longest_pause_s', COALESCE(MAX(gap), 0) FROM (
	  SELECT t - LAG(t) OVER (ORDER BY t) AS gap FROM (
	    SELECT processed_at AS t FROM processed_messages WHERE message_id LIKE 'clu%'
	    UNION SELECT decided_at FROM pilot_matches) x) y;
	SQL
} >"$T/check.sql"
sql <"$T/check.sql" >"$T/check.out" 2>"$T/check.log" || fail "the invariant queries failed (see $T/check.log)"
declare -A R
while read -r k v; do R[$k]=$v; done <"$T/check.out"

kinds=$(awk '{n[$1]++} END {printf "%d task.broker, %d job.submit, %d pilot.match", n["task"], n["submit"], n["pilot"]}' "$T/sent.txt")
resume=""
for i in $(seq $NWORKERS); do
	resume+=" c$i: $(grep -c 'WARN\|ERROR' "$T/worker-c$i.log" || true) warn/error lines;"
done
n1047=$(cat "$T"/worker-c*.log | grep -c '(1047)' || true)
n1213=$(cat "$T"/worker-c*.log | grep -c '(1213)' || true)
n541=$(cat "$T"/worker-c*.log | grep -c '541 INTERNAL_ERROR' || true)
printf '\n'
printf '%-44s %s\n' "cluster run $RUN" ""
printf '%-44s %s\n' "messages sent (confirmed)" "$SENT ($kinds)"
printf '%-44s %s\n' "publisher" "$(cat "$T/publish.out")"
printf '%-44s %s\n' "nodes stopped" "rabbitmq $RMQ_DOWN, mariadb $DB_DOWN for ${DOWN}s from $(date -d "@$FAULT_AT" +%T)"
printf '%-44s %s\n' "longest pause in deciding (s)" "${R[longest_pause_s]}"
printf '%-44s %s\n' "decisions / pilot decisions / outbox rows" "${R[decisions]} / ${R[pilot_decisions]} / ${R[outbox_rows]}"
printf '%-44s %s\n' "events collected / duplicated deliveries" "${R[events]} / ${R[event_duplicates]}"
printf '%-44s %s\n' "jobs submitted / matched / waiting" "${R[jobs_sent]} / ${R[jobs_matched]} / ${R[jobs_waiting]}"
printf '%-44s %s\n' "dead-lettered requests (gridbroker.dead)" "${DEAD:-?}"
printf '%-44s %s\n' "worker logs" "${resume% ;}"
printf '%-44s %s\n' "  errors 1047 / 1213 / AMQP 541" "$n1047 / $n1213 / $n541"
printf -- '--------------------------------------------  -----\n'
bad=0
check() { # NAME LABEL
	local v=${R[$1]:-?}
	printf '%-44s %s%s\n' "$2" "$v" "$([[ $v == 0 ]] || echo '   <-- FAIL')"
	[[ $v == 0 ]] || bad=1
}
check lost "requests lost (no dedup row)"
check twice_processed "requests processed twice"
check twice_decided "requests decided twice (decisions)"
check twice_matched "pilot requests decided twice"
check unsent "outbox rows not sent"
check no_outbox_row "decisions without an outbox row"
check missing_event "decision events missing from the stream"
check missing_pilot_event "pilot decisions missing from the stream"
check outbox_not_in_stream "outbox rows missing from the stream"
check event_conflicts "message ids with two different bodies"
check decision_in_two_events "pilot decisions in two different events"
check job_matched_twice "jobs in two pilot_matches rows"
check job_given_twice_in_events "jobs given to two pilots (events)"
check job_lost "jobs lost (neither waiting nor matched)"
check job_waiting_and_matched "jobs both waiting and matched"
check job_not_recorded "jobs submitted but not recorded"
check job_status_disagrees "jobs whose status disagrees with matches"
check dead_undecided "requests dead-lettered, never decided"
# A copy of a request that was decided can still reach the dead-letter
# queue: redelivered again and again until the delivery limit (seen when a
# pilot.match reply goes to a requester on the stopped RabbitMQ node: 3.10.8
# closes the replying worker's connection each time). Nothing is lost, but
# an operator sees it in `gridbroker dlq`: reported, not failed.
printf '%-44s %s\n' "decided requests also dead-lettered (report)" "${R[dead_decided]:-?}"
if [[ ${DEAD:-0} != 0 ]]; then sed 's/^/    /' "$T/dead.jsonl"; fi
(( bad == 0 )) || fail "an invariant does not hold (logs above)"
log "PASS"
