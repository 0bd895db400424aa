#!/usr/bin/env bash
# TLS to both servers. With the gridbroker-tls.conf scripts/services writes
# (AMQPS port, MariaDB over TCP, the local CA, a client certificate,
# verification on) a worker decides a task the CLI submitted over TLS, and
# both servers saw TLS connections; a config whose CA did not sign the
# servers' certificates is refused with a certificate error naming
# host:port; --check-config rejects TLS without a usable CA file.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

TLS_CONF=$(dirname "$GB_CONFIG")/gridbroker-tls.conf
[ -s "$TLS_CONF" ] || fail "$TLS_CONF is missing: the servers run without TLS (scripts/services restart gives them their TLS listeners)"
PLAIN_CONF=$GB_CONFIG
key() { sed -n "/^\[$1\]/,/^\[/s/^$2 *= *//p" "$TLS_CONF" | head -1; }
AMQPS_AT="$(key amqp host):$(key amqp port)"
DB_AT="$(key database host):$(key database port)"
{ [ "$(key amqp tls)" = 1 ] && [ "$(key database tls)" = 1 ] && [ "$(key amqp tls_verify)" = 1 ] &&
	[ "$(key database tls_verify)" = 1 ]; } || fail "$TLS_CONF does not turn TLS and verification on"
[ -z "$(key database socket)" ] || fail "$TLS_CONF reaches MariaDB through the socket, not TLS"

# Both servers count their TLS handshakes: before and after.
rmq_tls_conns() {
	"$GB_SRC/scripts/services" rabbitmqctl -q list_connections ssl client_properties 2>/dev/null |
		grep -c "^true.*$1" || true
}
db_tls_accepts() { sql "show global status like 'Ssl_finished_accepts'" | cut -f2; }
accepts0=$(db_tls_accepts)

# ---- 1. the whole path over TLS -------------------------------------------
ds="it.tls.$ID_BASE"
cat >"$T/grid.json" <<EOT
{"nuclei": [
 {"name": "IT-TLS-A", "status": "ACTIVE", "bareNucleus": "", "transferBacklog": 10, "RW": 100,
  "storages": [{"name": "IT-TLS-A_DATADISK", "spaceFree": 900000, "spaceExpired": 1000, "spaceTotal": 2000000, "tape": false, "blacklisted": false}],
  "local": {"$ds": {"size": 2000, "files": 500}}}
]}
EOT
GB_CONFIG=$TLS_CONF # start_worker, subscribe and the CLI below use it
"$GB" -c "$GB_CONFIG" db status >"$T/dbstatus" || fail "db status over TLS: $(cat "$T/dbstatus")"
"$GB" -c "$GB_CONFIG" grid load "$T/grid.json" >/dev/null || fail "grid load over TLS"
start_worker w1
grep -q "AMQP connected to $AMQPS_AT" "$T/w1.log" || fail "worker did not connect to $AMQPS_AT: $(cat "$T/w1.log")"
id=$((ID_BASE + 1))
subscribe a 1 60 task.assigned task.pending
task_json $id "$ds" 2000 500 300 >"$T/task.json"
"$GB" -c "$GB_CONFIG" task submit "$T/task.json" >/dev/null || fail "task submit over TLS"
wait "${SUB[a]}" || fail "no event for task $id over TLS"
grep -q "\"taskID\":$id" "$T/a.events" || fail "event is not for task $id: $(cat "$T/a.events")"
grep -q '"nucleus":"IT-TLS-A"' "$T/a.events" || fail "expected IT-TLS-A: $(cat "$T/a.events")"
[ "$(sql "select status from tasks where task_id=$id")" = assigned ] || fail "task $id not assigned in MariaDB"
# The broker lists the worker's connection as TLS, MariaDB counted TLS
# handshakes (the worker's and the CLI's).
n=$(rmq_tls_conns "gridbroker-worker")
[ "$n" -ge 1 ] || fail "RabbitMQ lists no TLS connection of the worker: $("$GB_SRC/scripts/services" rabbitmqctl -q list_connections ssl peer_port 2>&1)"
accepts1=$(db_tls_accepts)
[ "$accepts1" -gt "$accepts0" ] || fail "MariaDB counted no TLS handshake ($accepts0 -> $accepts1)"
kill "${PID[w1]}"
wait "${PID[w1]}" 2>/dev/null || true
log "task $id decided with the worker and the CLI on TLS ($n TLS broker connection(s), $((accepts1 - accepts0)) TLS database handshakes)"

# ---- 2. a CA that did not sign the servers' certificates -------------------
mkdir "$T/otherca"
openssl req -x509 -new -newkey rsa:2048 -nodes -days 1 -subj "/CN=gridbroker it_tls other CA" \
	-keyout "$T/otherca/ca.key" -out "$T/otherca/ca.pem" >/dev/null 2>&1 || fail "openssl: cannot make a CA"
# Whichever server the worker reaches first refuses it: the database (the
# worker opens it first) with the foreign CA for both, the broker with the
# foreign CA for AMQP only.
sed "s|^tls_ca_file=.*|tls_ca_file=$T/otherca/ca.pem|" "$TLS_CONF" >"$T/otherca.conf"
sed "/^\[amqp\]/,/^\[/s|^tls_ca_file=.*|tls_ca_file=$T/otherca/ca.pem|" "$TLS_CONF" >"$T/otherca-amqp.conf"
want_db="TLS handshake with $DB_AT failed: .*certificate"
want_amqp="TLS handshake with $AMQPS_AT failed: certificate verify failed"
for run in "otherca:$want_db" "otherca-amqp:$want_amqp"; do
	name=${run%%:*} want=${run#*:}
	"$GB_WORKER" -c "$T/$name.conf" --instance "$name" >"$T/$name.log" 2>&1 &
	GB_PIDS+=($!)
	pid=$!
	wait_until 30 "grep -q '$want' '$T/$name.log'" || fail "$name: no certificate error in the worker's log"
	! grep -q "AMQP connected" "$T/$name.log" || fail "$name: the worker connected with the wrong CA"
	kill "$pid" 2>/dev/null || true
	log "worker, $name: $(grep -o "$want.*" "$T/$name.log" | head -1)"
done
# The CLI says the same about both servers, and fails.
if "$GB" -c "$T/otherca.conf" db status >"$T/badca.db" 2>&1; then fail "db status succeeded with the wrong CA"; fi
grep -q "$want_db" "$T/badca.db" || fail "database error does not name the certificate problem: $(cat "$T/badca.db")"
if "$GB" -c "$T/otherca.conf" dlq >"$T/badca.mq" 2>&1; then fail "dlq succeeded with the wrong CA"; fi
grep -q "$want_amqp" "$T/badca.mq" || fail "AMQP error: $(cat "$T/badca.mq")"

# ---- 3. TLS without plain-text fallback ------------------------------------
# TLS to the plain AMQP port: a handshake failure, never a plain connection.
plain_port=$(sed -n '/^\[amqp\]/,/^\[/s/^port *= *//p' "$PLAIN_CONF" | head -1)
sed "/^\[amqp\]/,/^\[/s/^port=.*/port=$plain_port/" "$TLS_CONF" >"$T/plainport.conf"
if "$GB" -c "$T/plainport.conf" dlq >"$T/plainport.out" 2>&1; then fail "TLS to the plain AMQP port succeeded"; fi
grep -q "TLS handshake with $(key amqp host):$plain_port failed" "$T/plainport.out" || fail "TLS to the plain port: $(cat "$T/plainport.out")"

# ---- 4. host lists: a dead first node is skipped -----------------------------
# What a cluster deployment does when its first node is down: both clients
# try the next entry within the same connect and say which one they used.
sed -e "/^\[amqp\]/,/^\[/s|^host=.*|host=127.0.0.1:1,$(key amqp host)|" \
	-e "/^\[database\]/,/^\[/s|^host=.*|host=127.0.0.1:1,$(key database host)|" \
	"$TLS_CONF" >"$T/failover.conf"
GB_CONFIG=$T/failover.conf start_worker fo
grep -q "MariaDB: connected to $DB_AT (entry 2 of 2) after: connect to 127.0.0.1:1: " "$T/fo.log" ||
	fail "no database failover line: $(cat "$T/fo.log")"
grep -q "AMQP: connected to $AMQPS_AT (entry 2 of 2) after: connect to 127.0.0.1:1: " "$T/fo.log" ||
	fail "no AMQP failover line: $(cat "$T/fo.log")"
kill "${PID[fo]}"
log "host lists: $(grep -o 'AMQP: connected to .*' "$T/fo.log" | head -1)"

# ---- 5. --check-config ------------------------------------------------------
sed "s|^tls_ca_file=.*|tls_ca_file=$T/no-such-ca.pem|" "$TLS_CONF" >"$T/noca.conf"
if "$GB_WORKER" --check-config -c "$T/noca.conf" >"$T/noca.out" 2>&1; then fail "--check-config accepted a missing CA file"; fi
grep -q "amqp.tls_ca_file: cannot open $T/no-such-ca.pem: No such file or directory" "$T/noca.out" || fail "--check-config: $(cat "$T/noca.out")"
grep -q "database.tls_ca_file: cannot open $T/no-such-ca.pem" "$T/noca.out" || fail "--check-config: $(cat "$T/noca.out")"
sed "/^tls_ca_file=/d" "$TLS_CONF" >"$T/unset.conf"
if "$GB_WORKER" --check-config -c "$T/unset.conf" >"$T/unset.out" 2>&1; then fail "--check-config accepted tls=1 without a CA file"; fi
grep -q "amqp.tls_ca_file: needed when amqp.tls = 1 and amqp.tls_verify = 1" "$T/unset.out" || fail "--check-config: $(cat "$T/unset.out")"
"$GB_WORKER" --check-config -c "$TLS_CONF" >/dev/null 2>&1 || fail "--check-config rejects $TLS_CONF"
log "--check-config: $(grep -m1 "amqp.tls_ca_file" "$T/noca.out")"
echo "1 passed, 0 failed"
