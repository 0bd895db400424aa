# shellcheck shell=bash
# scripts/lib/servers.sh — helpers shared by scripts/services (one MariaDB and
# one RabbitMQ) and scripts/cluster (three of each): servers run as plain
# processes of the current user with every file under one directory.
#
# Sourced, never run: it defines functions and sets nothing else, so the
# sourcing script keeps its own options (both use set -euo pipefail) and its
# own command line. Before calling anything here the script sets
#   LOG_TAG         the prefix of its messages ("services", "cluster")
#   STOP_TIMEOUT    seconds a clean stop may take before SIGKILL
# Each function says what it reads and what it prints; a failure that leaves
# nothing sensible to do ends the script through die.

# say MESSAGE...: one line on stderr, prefixed with the script's LOG_TAG.
say() { printf '%s: %s\n' "$LOG_TAG" "$*" >&2; }

# die MESSAGE...: say "error: MESSAGE" and exit 1.
die() {
	say "error: $*"
	exit 1
}

# valid_port VALUE: true when VALUE is a TCP port number (1..65535).
valid_port() { [[ $1 =~ ^[0-9]+$ ]] && (($1 >= 1 && $1 <= 65535)); }

# port_open PORT: true when something accepts TCP connections on loopback.
port_open() {
	timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}

# port_owner PORT: who listens there, when ss can tell us (needs iproute2).
port_owner() {
	if command -v ss >/dev/null 2>&1; then
		ss -ltnpH "( sport = :$1 )" 2>/dev/null | awk '{print $4, $6}' | head -n 3
	fi
}

# is_zombie PID: the process has exited but nobody reaped it yet (on hosts
# whose PID 1 is slow to reap, kill -0 still succeeds on it for a while).
is_zombie() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	[[ ${stat:0:1} == Z ]]
}

# pid_from FILE COMM: the live pid in FILE if its process is COMM. A pid file
# left by a server killed with SIGKILL names a dead process, or after pid
# reuse someone else's; both read as "not running".
pid_from() {
	local file=$1 comm=$2 pid
	[[ -s $file ]] || return 1
	pid=$(tr -dc '0-9' <"$file" | head -c 10)
	[[ -n $pid ]] || return 1
	kill -0 "$pid" 2>/dev/null || return 1
	[[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$comm" ]] || return 1
	is_zombie "$pid" && return 1
	printf '%s\n' "$pid"
}

# wait_gone PID SECONDS: wait for a process to exit; false on timeout.
wait_gone() {
	local pid=$1 deadline=$((SECONDS + $2))
	while kill -0 "$pid" 2>/dev/null; do
		is_zombie "$pid" && return 0
		((SECONDS < deadline)) || return 1
		sleep 0.2
	done
}

# random_chars SET N: N characters of the tr(1) class SET from the kernel's
# CSPRNG (base64 output filtered, so every kept character is uniform).
random_chars() {
	local s=""
	while ((${#s} < $2)); do
		s+=$(head -c 48 /dev/urandom | base64 -w0 | LC_ALL=C tr -dc "$1")
	done
	printf '%s' "${s:0:$2}"
}

# random_secret: 24 alphanumerics, about 143 bits. Alphanumerics need no
# quoting in SQL, in AMQP URLs or on a command line.
random_secret() { random_chars 'A-Za-z0-9' 24; }

# ensure_secret FILE: create FILE (0600, in a 0700 directory) with a random
# password unless it already holds one; prints the password.
ensure_secret() {
	local file=$1 tmp
	if [[ ! -s $file ]]; then
		mkdir -p "${file%/*}"
		chmod 0700 "${file%/*}"
		tmp=$(mktemp "$file.XXXXXX")
		chmod 0600 "$tmp"
		random_secret >"$tmp"
		mv -f "$tmp" "$file"
	fi
	chmod 0600 "$file"
	tr -d '\n' <"$file"
}

# tail_log FILE...: the last lines of each non-empty FILE on stderr.
tail_log() {
	local f
	for f in "$@"; do
		[[ -s $f ]] || continue
		say "---- last lines of $f ----"
		tail -n 25 "$f" >&2
	done
}

# write_file FILE: FILE from stdin, atomically (a reader sees the old file
# or the new one, never half of one), mode 0644. For generated configs:
# secrets are not in them, only the names of the files that hold them.
write_file() {
	local tmp
	tmp=$(mktemp "$1.XXXXXX")
	cat >"$tmp"
	chmod 0644 "$tmp"
	mv -f "$tmp" "$1"
}

# take_lock FILE SECONDS: hold an exclusive lock on FILE (on fd 9, for the
# rest of the script) so that one start or stop runs at a time; tests call
# the scripts concurrently. Dies when another run holds it SECONDS long.
# Servers launched afterwards must not inherit fd 9 (launches close it).
take_lock() {
	mkdir -p "${1%/*}"
	exec 9>"$1"
	flock -w "$2" 9 || die "timed out waiting for another scripts/$LOG_TAG run"
}

# stop_server NAME PIDFILE COMM HINT COMMAND...: stop the server whose pid
# PIDFILE holds (a process named COMM). COMMAND asks it for a clean
# shutdown; if COMMAND fails the server gets SIGTERM, which does the same;
# after STOP_TIMEOUT seconds, SIGKILL. NAME starts every message, HINT
# (may be empty) ends the SIGKILL one. Returns 0 when it is gone (or was
# not running) and PIDFILE is removed.
stop_server() {
	local name=$1 pidfile=$2 comm=$3 hint=$4 pid
	shift 4
	if ! pid=$(pid_from "$pidfile" "$comm"); then
		rm -f "$pidfile"
		say "$name: not running"
		return 0
	fi
	say "$name: stopping (pid $pid)"
	if ! "$@" </dev/null >/dev/null 2>&1; then
		kill -TERM "$pid" 2>/dev/null || true
	fi
	if ! wait_gone "$pid" "$STOP_TIMEOUT"; then
		say "$name: pid $pid still alive after ${STOP_TIMEOUT}s; sending SIGKILL$hint"
		kill -KILL "$pid" 2>/dev/null || true
		wait_gone "$pid" 10 || die "$name: pid $pid does not go away"
	fi
	rm -f "$pidfile"
}

# ---------------------------------------------------------------------------
# MariaDB
# ---------------------------------------------------------------------------
# db_root SOCKET ARGS...: the mariadb client as root on the server's unix
# socket (root authenticates by password-less socket login, set up by
# db_install_data), no option files read.
db_root() {
	local sock=$1
	shift
	mariadb --no-defaults -S "$sock" -uroot --connect-timeout=5 "$@"
}

# db_shutdown SOCKET: a clean shutdown through the server (stop_server's
# COMMAND for a MariaDB server).
db_shutdown() {
	mariadb-admin --no-defaults -S "$1" -uroot --connect-timeout=5 shutdown
}

# db_install_data DATADIR LOG: a fresh system database in DATADIR (which
# must exist and be empty), root logging in on the socket without a
# password, no test database; mariadb-install-db's output goes to LOG.
# Dies, with LOG's tail, when it fails. As root the server runs as root.
db_install_data() {
	local data=$1 log=$2 user_opt=()
	((EUID == 0)) && user_opt=(--user=root)
	if ! mariadb-install-db --no-defaults --datadir="$data" "${user_opt[@]}" \
		--auth-root-authentication-method=normal --skip-test-db \
		>"$log" 2>&1 </dev/null 9>&-; then
		tail_log "$log"
		die "mariadb-install-db failed (log $log)"
	fi
}

# ---------------------------------------------------------------------------
# RabbitMQ: the package's own scripts from its lib directory (the Debian
# wrapper in /usr/sbin switches to the rabbitmq user, which cannot write a
# directory owned by us). Every base directory and file is ours, and the
# system's /etc/rabbitmq is not read.
# ---------------------------------------------------------------------------
# rmq_sbin: set RMQ_SBIN to the newest installed server's sbin directory.
rmq_sbin() {
	local d
	for d in /usr/lib/rabbitmq/lib/rabbitmq_server-*/sbin; do
		[[ -x $d/rabbitmq-server ]] && RMQ_SBIN=$d
	done
	[[ -n ${RMQ_SBIN:-} ]] || die "RabbitMQ server scripts not found (run scripts/setup)"
}

# rmq_export NODE AMQP_PORT DIST_PORT NODE_DIR SHARED_DIR: export the
# environment rabbitmq-server and rabbitmqctl read for one node: its name,
# its loopback ports, its own state under NODE_DIR (mnesia, log, pid file,
# feature flags), and the files it shares with its cluster peers, if any,
# under SHARED_DIR, which is also HOME, where the Erlang cookie lives.
# Sets RMQ_SBIN as rmq_sbin does.
rmq_export() {
	rmq_sbin
	export HOME=$5
	export RABBITMQ_NODENAME=$1
	export RABBITMQ_NODE_IP_ADDRESS=127.0.0.1
	export RABBITMQ_NODE_PORT=$2
	export RABBITMQ_DIST_PORT=$3
	export RABBITMQ_MNESIA_BASE=$4/mnesia
	export RABBITMQ_LOG_BASE=$4/log
	export RABBITMQ_PID_FILE=$4/rabbitmq.pid
	export RABBITMQ_FEATURE_FLAGS_FILE=$4/feature_flags
	export RABBITMQ_ENABLED_PLUGINS_FILE=$5/enabled_plugins
	export RABBITMQ_CONFIG_FILE=$5/rabbitmq.conf
	export RABBITMQ_ADVANCED_CONFIG_FILE=$5/advanced.config
	export RABBITMQ_CONF_ENV_FILE=$5/rabbitmq-env.conf
	unset RABBITMQ_ENABLED_PLUGINS
}

# rmq_write_base DIR: the files of SHARED_DIR (see rmq_export) that do not
# depend on the setup: no plugins, an empty rabbitmq-env.conf (so that the
# system's is not read), and the Erlang cookie. The cookie is written
# before the first start so that the server and rabbitmqctl can never race
# to create two different ones; an existing one is kept.
rmq_write_base() {
	local dir=$1 tmp
	mkdir -p "$dir"
	chmod 0700 "$dir"
	printf '[].\n' >"$dir/enabled_plugins"
	printf '# Generated by scripts/%s; the system rabbitmq-env.conf is not read.\n' \
		"$LOG_TAG" >"$dir/rabbitmq-env.conf"
	if [[ ! -s $dir/.erlang.cookie ]]; then
		tmp=$(mktemp "$dir/.erlang.cookie.XXXXXX")
		random_chars 'A-Z' 20 >"$tmp"
		chmod 0400 "$tmp"
		mv -f "$tmp" "$dir/.erlang.cookie"
	fi
}

# rmq_epmd_has NODE: true when epmd knows an Erlang node of NODE's name (a
# node runs under that name whatever our pid file says).
rmq_epmd_has() {
	local names
	command -v epmd >/dev/null 2>&1 || return 1
	names=$(epmd -names 2>/dev/null || true)
	grep -q "^name ${1%@*} at port" <<<"$names"
}
