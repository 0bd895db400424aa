#!/usr/bin/env bash
# Run one C integration test program against the local servers: make sure
# scripts/services has them up (a no-op when they already run), apply the
# schema with the admin account, then run the program with GB_CONFIG
# pointing at the generated (application) configuration. A sanitizer
# report of the program or of any process it starts (itc_match's workers)
# fails the run, whatever the program's own status (sanitizers.sh): a
# report file, or a report in the logs the program's workers write
# (run/<program>_*.log; UndefinedBehaviorSanitizer writes to stderr
# whatever log_path says). The previous run's logs become *.log.prev first,
# so only this run's are judged.
set -euo pipefail
GB_SRC=${GB_SOURCE_DIR:?GB_SOURCE_DIR must point at the source tree}
"$GB_SRC/scripts/services" start >/dev/null
# GB_CONFIG and GB_ADMIN_CONFIG, as for the shell tests.
# shellcheck source-path=SCRIPTDIR source=configs.sh
. "$GB_SRC/tests/integration/configs.sh"
SAN=$(mktemp -d "${TMPDIR:-/tmp}/gb-itc-san.XXXXXX")
trap 'rm -rf "$SAN"' EXIT
# shellcheck source-path=SCRIPTDIR source=sanitizers.sh
. "$GB_SRC/tests/integration/sanitizers.sh"
san_setup "$SAN"
name=$(basename "$1")
for f in "$GB_SRC/run/${name}"_*.log; do
	if [ -e "$f" ]; then mv -f "$f" "$f.prev"; fi
done
rc=0
# The programs' fixture (itc_raw.h) migrates with GB_CONFIG too; with the
# application account that only works once the admin account has applied
# every migration, so do that first. The CLI is built next to the program.
if [ "$GB_ADMIN_CONFIG" != "$GB_CONFIG" ]; then
	"$(dirname "$1")/gridbroker" -c "$GB_ADMIN_CONFIG" db migrate >/dev/null || rc=$?
fi
[ "$rc" -ne 0 ] || "$@" || rc=$?
san_check "$SAN" "$GB_SRC/run/${name}"_*.log || { [ "$rc" -ne 0 ] || rc=1; }
exit "$rc"
