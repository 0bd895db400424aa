#!/usr/bin/env bash
# Run one C integration test program against the local servers: make sure
# scripts/services has them up (a no-op when they already run), apply the
# schema with the admin account, then run the program with GB_CONFIG
# pointing at the generated (application) configuration.
set -euo pipefail
GB_SRC=${GB_SOURCE_DIR:?GB_SOURCE_DIR must point at the source tree}
"$GB_SRC/scripts/services" start >/dev/null
# GB_CONFIG and GB_ADMIN_CONFIG, as for the shell tests.
# shellcheck source-path=SCRIPTDIR source=configs.sh
. "$GB_SRC/tests/integration/configs.sh"
# The programs' fixture (itc_raw.h) migrates with GB_CONFIG too; with the
# application account that only works once the admin account has applied
# every migration, so do that first. The CLI is built next to the program.
if [ "$GB_ADMIN_CONFIG" != "$GB_CONFIG" ]; then
	"$(dirname "$1")/gridbroker" -c "$GB_ADMIN_CONFIG" db migrate >/dev/null
fi
exec "$@"
