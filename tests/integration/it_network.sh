#!/usr/bin/env bash
# Faults of the network between the workers and their servers, not of any
# process: two workers, each reaching RabbitMQ and MariaDB through links of
# the suite's proxy (gb_faultproxy), under a steady stream of task
# brokerage, large DIRAC submissions and pilots, while
#   1. worker 1's RabbitMQ link goes silent for 12 s (heartbeats find it),
#   2. every link gets 50-200 ms of latency with jitter for 10 s,
#   3. the RabbitMQ links are cut in the middle of a large job.submit,
#   4. worker 2's MariaDB link goes silent for 10 s,
#   5. worker 1's MariaDB link is cut in the middle of a large statement.
# Then, once everything is quiet: every task decided exactly once, every
# submitted job stored, every pilot answered once, every decision's event
# published, nothing dead-lettered.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

PX=$GB_BIN/gb_faultproxy
[ -x "$PX" ] || fail "no $PX"
B=$ID_BASE
group="it_net_$B" owner="/DC=org/CN=it-net-$B" setup="IT-Net-$B" site=LCG.IT-NET.org
J=$((B * 100))

cfg() { sed -n "/^\[$1\]/,/^\[/s/^$2 *= *//p" "$GB_CONFIG" | head -1; }
AMQP_HOST=$(cfg amqp host) AMQP_PORT=$(cfg amqp port)
DB_HOST=$(cfg database host) DB_PORT=$(cfg database port)
if [ -z "$AMQP_PORT" ] || [ -z "$DB_PORT" ]; then fail "no ports in $GB_CONFIG"; fi

# The proxy on free ports: a few tries at random bases.
for _ in 1 2 3 4 5; do
	P=$((20000 + RANDOM % 30000))
	"$PX" --control "$P" --seed "$B" \
		--link "a1=$((P + 1)):$AMQP_HOST:$AMQP_PORT" --link "d1=$((P + 2)):$DB_HOST:$DB_PORT" \
		--link "a2=$((P + 3)):$AMQP_HOST:$AMQP_PORT" --link "d2=$((P + 4)):$DB_HOST:$DB_PORT" \
		>"$T/proxy.log" 2>&1 &
	PXPID=$!
	GB_PIDS+=("$PXPID")
	wait_until 3 "grep -q 'control on' '$T/proxy.log'" && break
	kill "$PXPID" 2>/dev/null || true
done
grep -q 'control on' "$T/proxy.log" || fail "proxy did not start: $(cat "$T/proxy.log")"
# px COMMAND...: one command to the proxy, its answer on stdout.
px() {
	local a
	exec 3<>"/dev/tcp/127.0.0.1/$P" || fail "proxy control"
	echo "$*" >&3
	read -r a <&3
	exec 3<&-
	case $a in ok*) echo "$a" ;; *) fail "proxy: '$*' answered '$a'" ;; esac
}
cuts() { px "$1" status | sed -n 's/.*cuts=\([0-9]*\).*/\1/p'; }
# total_cuts: the cuts of the links in CUT_LINKS so far.
CUT_LINKS=()
total_cuts() {
	local l n=0
	for l in "${CUT_LINKS[@]}"; do n=$((n + $(cuts "$l"))); done
	echo "$n"
}
# cut_under BYTES LINK...: arm the links to cut inside the next burst over
# BYTES, send large submissions until one of them is cut (5 at most), put
# them back to pass; false when none was cut.
cut_under() {
	local bytes=$1 l c0 _ n
	shift
	CUT_LINKS=("$@")
	c0=$(total_cuts)
	for l in "$@"; do px "$l" cut-mid "$bytes" >/dev/null; done
	for _ in 1 2 3 4 5; do
		submit_big
		wait_until 10 "[ \$(total_cuts) -gt $c0 ]" && break
	done
	n=$(total_cuts)
	for l in "$@"; do px "$l" pass >/dev/null; done
	[ "$n" -gt "$c0" ]
}

# Each worker's config: its own two links, and 4 s heartbeats so a silent
# link is found within the test.
for w in 1 2; do
	awk -v ap=$((P + 2 * w - 1)) -v dp=$((P + 2 * w)) '
		/^\[/ { sec = $0 }
		sec == "[amqp]" && /^(port|heartbeat) *=/ { next }
		sec == "[database]" && /^(port|socket) *=/ { next }
		{ print }
		$0 == "[amqp]" { print "port=" ap; print "heartbeat=4" }
		$0 == "[database]" { print "port=" dp }
	' "$GB_CONFIG" >"$T/net$w.conf"
done
"$GB" -c "$GB_CONFIG" dlq --remove -n 1000 >/dev/null
GB_CONFIG=$T/net1.conf start_worker w1
GB_CONFIG=$T/net2.conf start_worker w2

# ---- the load: producers talk to RabbitMQ directly ----------------------
job() { printf '{"jobID": %s, "ownerDN": "%s", "ownerGroup": "%s", "setup": "%s", "cpuTime": 3600, "userPriority": 1, "sites": ["%s"], "platforms": ["x86_64-el9-%s"]}' \
	"$1" "$owner" "$group" "$setup" "$site" "$(($1 % 7))"; }
# big FILE FIRST: 1,500 jobs from FIRST, about 250 kB as msgpack.
big() {
	{
		echo '{"jobs": ['
		for ((k = 0; k < 1500; k++)); do
			[ "$k" -gt 0 ] && echo ,
			job $(($2 + k))
		done
		echo ']}'
	} >"$1"
}
NEXTJOB=$((J + 1))
submit_big() {
	big "$T/big.json" "$NEXTJOB"
	"$GB" -c "$GB_CONFIG" tq submit "$T/big.json" >/dev/null || fail "tq submit"
	NEXTJOB=$((NEXTJOB + 1500))
}
STOPLOAD=$T/stopload
load() { # tasks every 0.2 s, a pilot every 0.5 s
	local i=0
	while [ ! -e "$STOPLOAD" ]; do
		i=$((i + 1))
		task_json $((B + i)) "it.net.$B.$i" 1 100 300 >"$T/task.json"
		"$GB" -c "$GB_CONFIG" task submit "$T/task.json" >/dev/null && echo $((B + i)) >>"$T/tasks.sent"
		if ((i % 3 == 0)); then
			"$GB" -c "$GB_CONFIG" pilot match --site "$site" --setup "$setup" --cpu-time 100000 \
				--pilot-id "it-net-$B-$i" --timeout-ms 120000 --json >>"$T/pilots.json" 2>>"$T/pilots.err" &
		fi
		sleep 0.2
	done
	wait
}
submit_big
load &
LOADPID=$!
GB_PIDS+=("$LOADPID")
sleep 3

px a1 blackhole >/dev/null
log "1. worker 1's RabbitMQ link silent"
wait_until 15 "grep -q 'heartbeat timeout' '$T/w1.log'" || fail "worker 1 did not find the silent link within 15 s"
sleep $((12 - 9))
px a1 pass >/dev/null
log "   found by heartbeat; link back after 12 s"

px all delay 50 200 >/dev/null
log "2. every link 50-200 ms with jitter"
submit_big
sleep 10
px all pass >/dev/null

log "3. RabbitMQ links armed to cut inside a burst over 64 kB"
cut_under 65536 a1 a2 || fail "no RabbitMQ link was cut under a large message"
log "   cut under a large job.submit ($(px a1 status | grep -o 'cuts=[0-9]*') $(px a2 status | grep -o 'cuts=[0-9]*'))"

px d2 blackhole >/dev/null
log "4. worker 2's MariaDB link silent"
submit_big
sleep 10
px d2 pass >/dev/null
log "   back after 10 s"

log "5. worker 1's MariaDB link armed to cut inside a burst over 16 kB"
cut_under 16384 d1 || fail "worker 1's MariaDB link was never cut under a large statement"
log "   cut under a statement"

touch "$STOPLOAD"
wait "$LOADPID" || true
ntasks=$(sort -u "$T/tasks.sent" | wc -l)
njobs=$((NEXTJOB - J - 1))
log "load stopped: $ntasks tasks, $njobs DIRAC jobs, $(grep -c . "$T/pilots.json" 2>/dev/null || echo 0) pilot answer lines"

# ---- quiescence and the invariants ------------------------------------------
settled() {
	[ "$(sql "select count(*) from outbox where sent_at is null")" = 0 ] &&
		[ "$(sql "select count(*) from wms_jobs where job_id between $((J + 1)) and $((NEXTJOB - 1))")" = "$njobs" ] &&
		[ "$(sql "select count(distinct subject) from decisions where kind = 'task' and subject in ($(sort -u "$T/tasks.sent" | paste -sd,))")" = "$ntasks" ]
}
wait_until 120 settled || fail "not settled after 120 s: unsent $(sql "select count(*) from outbox where sent_at is null"), jobs $(sql "select count(*) from wms_jobs where job_id between $((J + 1)) and $((NEXTJOB - 1))") of $njobs, tasks decided $(sql "select count(distinct subject) from decisions where kind = 'task' and subject in ($(sort -u "$T/tasks.sent" | paste -sd,))") of $ntasks"
in_tasks=$(sort -u "$T/tasks.sent" | paste -sd,)
twice=$(sql "select count(*) from (select subject from decisions where kind = 'task' and subject in ($in_tasks) group by subject having count(*) > 1) d")
[ "$twice" = 0 ] || fail "$twice task(s) decided more than once"
pilots=$(grep -c '"pilot' "$T/pilots.json" 2>/dev/null || echo 0)
answered=$(sql "select count(*) from pilot_matches where pilot_id like 'it-net-$B-%'")
per=$(sql "select count(*) from (select pilot_id from pilot_matches where pilot_id like 'it-net-$B-%' group by pilot_id having count(*) > 1) d")
[ "$per" = 0 ] || fail "$per pilot(s) decided more than once"
twicejob=$(sql "select count(*) from (select job_id from pilot_matches where job_id between $((J + 1)) and $((NEXTJOB - 1)) group by job_id having count(*) > 1) d")
[ "$twicejob" = 0 ] || fail "$twicejob job(s) given to two pilots"
if grep -q . "$T/pilots.err" 2>/dev/null; then
	fail "pilot(s) without an answer: $(sort "$T/pilots.err" | uniq -c | head -5)"
fi
dl=$("$GB" -c "$GB_CONFIG" dlq --json | grep -c routingKey || true)
[ "$dl" = 0 ] || fail "$dl request(s) dead-lettered: $("$GB" -c "$GB_CONFIG" dlq | head -5)"
log "settled: $ntasks tasks decided once each, $njobs jobs stored, $answered pilots decided once each ($pilots answers), every event sent, no dead letter"
echo "1 passed, 0 failed"
