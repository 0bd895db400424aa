#!/usr/bin/env bash
# Least privilege, checked against the servers with the application's own
# credentials (the account and the password file of $GB_CONFIG): its
# MariaDB account reads and writes rows but cannot create, drop, alter or
# truncate a table (error 1142) nor read mysql.user; its RabbitMQ user
# cannot declare a queue outside its permissions (ACCESS_REFUSED, 403) nor
# open vhost / (NOT_ALLOWED, 530). The passwords reach the clients in
# files of $T (mode 0600), never on a command line.
#
# The probes are safe on a server where the grants are too wide: the DROP,
# ALTER and TRUNCATE probes name a table that does not exist (the server
# checks the privilege first, so a narrowed account gets 1142, a wide one
# 1051/1146), and a probe table that gets created is dropped again.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

cfg() { sed -n "/^\[$1\]/,/^\[/s/^$2 *= *//p" "$GB_CONFIG" | head -1; }
umask 077

# ---- MariaDB ----------------------------------------------------------------
db_name=$(cfg database name)
db_user=$(cfg database user)
db_pwfile=$(cfg database password_file)
db_socket=$(cfg database socket)
[ -r "$db_pwfile" ] || fail "cannot read the database password file '$db_pwfile' of $GB_CONFIG"
{
	echo "[client]"
	echo "user=$db_user"
	echo "password=$(cat "$db_pwfile")"
	if [ -n "$db_socket" ]; then
		echo "socket=$db_socket"
	else
		echo "host=$(cfg database host)"
		echo "port=$(cfg database port)"
	fi
} >"$T/app.cnf"
# app_sql SQL: run SQL as the application account; output and errors.
app_sql() { mariadb --defaults-file="$T/app.cnf" -N -B "$db_name" -e "$1" 2>&1; }
# denied SQL CODE: SQL must fail with error CODE.
denied() {
	local out
	if out=$(app_sql "$1"); then
		sql "DROP TABLE IF EXISTS gb_it_priv_probe" || true
		fail "$db_user may run: $1"
	fi
	# The client echoes the failed statement before the error line.
	out=$(grep -m1 '^ERROR' <<<"$out") || fail "$1: no error line in: $out"
	case $out in
	"ERROR $2 "*) log "  $1 -> ${out#* at line 1: }" ;;
	*) fail "$1: expected error $2, got: $out" ;;
	esac
}

# The account works: it reads and writes rows.
n=$(app_sql "SELECT COUNT(*) FROM schema_migrations") || fail "$db_user cannot read: $n"
[ "$n" -ge 1 ] || fail "schema_migrations is empty"
app_sql "UPDATE params SET value = value WHERE 1 = 0" >/dev/null || fail "$db_user cannot UPDATE"
log "MariaDB account $db_user reads and writes rows ($n migrations recorded); denied:"
denied "CREATE TABLE gb_it_priv_probe (x INT)" 1142
denied "DROP TABLE gb_it_priv_absent_$ID_BASE" 1142
denied "ALTER TABLE gb_it_priv_absent_$ID_BASE ADD COLUMN y INT" 1142
denied "TRUNCATE TABLE gb_it_priv_absent_$ID_BASE" 1142
denied "CREATE INDEX gb_it_priv ON gb_it_priv_absent_$ID_BASE (x)" 1142
denied "SELECT COUNT(*) FROM mysql.user" 1142
denied "CREATE DATABASE gb_it_priv_$ID_BASE" 1044
# Nor does the catalogue show it the server's own schemas. (Other
# application databases a developer granted by hand may show; they are not
# scripts/services' doing.)
sys=$(app_sql "SELECT GROUP_CONCAT(schema_name) FROM information_schema.schemata WHERE schema_name IN ('mysql', 'sys', 'performance_schema')")
[ "$sys" = NULL ] || fail "$db_user sees the server's schemas: $sys"

# ---- RabbitMQ -----------------------------------------------------------------
amqp_host=$(cfg amqp host)
amqp_port=$(cfg amqp port)
amqp_vhost=$(cfg amqp vhost)
amqp_pwfile=$(cfg amqp password_file)
[ -r "$amqp_pwfile" ] || fail "cannot read the AMQP password file '$amqp_pwfile' of $GB_CONFIG"
[ "$amqp_vhost" != / ] || fail "$GB_CONFIG uses vhost /; the application has its own vhost"
printf 'username:%s\npassword:%s\n' "$(cfg amqp user)" "$(cat "$amqp_pwfile")" >"$T/amqp.auth"
# amqp QUEUE [VHOST]: declare QUEUE as the application user.
amqp_declare() {
	amqp-declare-queue --server "$amqp_host" --port "$amqp_port" \
		--vhost "${2:-$amqp_vhost}" --authfile "$T/amqp.auth" -q "$1" 2>&1
}
# Inside its permissions: a gridbroker.* queue (declared, then deleted).
q="gridbroker.it-priv-$ID_BASE"
out=$(amqp_declare "$q") || fail "declaring $q was refused: $out"
amqp-delete-queue --server "$amqp_host" --port "$amqp_port" --vhost "$amqp_vhost" \
	--authfile "$T/amqp.auth" -q "$q" >/dev/null 2>&1 || fail "deleting $q"
# Outside them.
if out=$(amqp_declare other.queue); then fail "the application user declared other.queue"; fi
case $out in
*"403, message: ACCESS_REFUSED - access to queue 'other.queue' in vhost '$amqp_vhost' refused"*) ;;
*) fail "other.queue: expected ACCESS_REFUSED (403), got: $out" ;;
esac
log "RabbitMQ user $(cfg amqp user) declares $q; other.queue -> ${out#*message: }"
# Another vhost, through the CLI's own connect path.
sed "/^\[amqp\]/,/^\[/s|^vhost *=.*|vhost=/|" "$GB_CONFIG" >"$T/slash.conf"
if out=$("$GB" -c "$T/slash.conf" dlq 2>&1); then fail "the application user opened vhost /"; fi
case $out in
*"vhost / as"*"530"*"NOT_ALLOWED - access to vhost '/' refused"*) ;;
*) fail "vhost /: expected NOT_ALLOWED (530), got: $out" ;;
esac
log "vhost / -> ${out#gridbroker: AMQP: }"
echo "1 passed, 0 failed"
