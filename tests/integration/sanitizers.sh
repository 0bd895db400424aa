# shellcheck shell=bash
# sanitizers.sh — how an integration test notices an AddressSanitizer,
# LeakSanitizer or UndefinedBehaviorSanitizer report in any process it
# started; sourced by lib.sh (the shell tests), run-itc.sh (the C programs)
# and the fault suite, not run.
#
# Why: the workers a test starts run in the background with their stderr
# in a log, and a worker that finds a leak at its SIGTERM exit ends with
# status 1 that nobody waits for, so a report would pass unseen. Every
# sanitized process of the test (workers, the CLI, a C test program)
# writes its reports to files of its own instead (log_path, one file per
# process id), and the test fails if any such file exists or a log it
# kept has a report's first line. With a build without sanitizers the
# options are read by nobody and the check finds nothing. Seen here:
# AddressSanitizer and LeakSanitizer write to the file, while
# UndefinedBehaviorSanitizer (in the same runtime) still writes to stderr,
# which is why the logs are read too.
#
#   san_setup DIR   reports go to DIR/report.<pid> from now on (exported
#                   ASAN_OPTIONS, UBSAN_OPTIONS, LSAN_OPTIONS; options the
#                   caller set are kept, log_path is ours)
#   san_check DIR [LOG...]   print every report of DIR and every report
#                   line of the LOGs (each a worker's or tool's output);
#                   false if there was one
GB_SAN_SRC=${GB_SRC:-${GB_SOURCE_DIR:?GB_SOURCE_DIR must point at the source tree}}

san_setup() {
	mkdir -p "$1"
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$1/report"
	export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$1/report"
	# Library false positives, each with its reason (tests/sanitizers/).
	export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$GB_SAN_SRC/tests/sanitizers/lsan.supp"
}

san_check() {
	local dir=$1 f found=0
	shift
	for f in "$dir"/report.*; do
		[ -e "$f" ] || continue
		found=1
		printf 'FAIL: sanitizer report %s:\n' "${f##*/}" >&2
		cat "$f" >&2
	done
	for f in "$@"; do
		[ -f "$f" ] || continue
		if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$f"; then
			found=1
			printf 'FAIL: sanitizer report in %s:\n' "${f##*/}" >&2
			grep -E -A40 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$f" >&2
		fi
	done
	[ "$found" -eq 0 ]
}
