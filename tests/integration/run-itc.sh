#!/usr/bin/env bash
# Run one C integration test program against the local servers: make sure
# scripts/services has them up (a no-op when they already run), apply the
# schema with the admin account, then run the program with GB_CONFIG
# pointing at the generated (application) configuration.
set -euo pipefail
src=${GB_SOURCE_DIR:?GB_SOURCE_DIR must point at the source tree}
"$src/scripts/services" start >/dev/null
export GB_CONFIG="${GB_IT_CONFIG:-$src/run/gridbroker.conf}"
# As in lib.sh: GB_IT_ADMIN_CONFIG, else <name>-admin.conf next to
# <name>.conf, else GB_CONFIG itself.
if [ -n "${GB_IT_ADMIN_CONFIG:-}" ]; then
	GB_ADMIN_CONFIG=$GB_IT_ADMIN_CONFIG
elif [ -f "${GB_CONFIG%.conf}-admin.conf" ]; then
	GB_ADMIN_CONFIG=${GB_CONFIG%.conf}-admin.conf
else
	GB_ADMIN_CONFIG=$GB_CONFIG
fi
export GB_ADMIN_CONFIG
# The programs' fixture (itc_raw.h) migrates with GB_CONFIG too; with the
# application account that only works once the admin account has applied
# every migration, so do that first. The CLI is built next to the program.
if [ "$GB_ADMIN_CONFIG" != "$GB_CONFIG" ]; then
	"$(dirname "$1")/gridbroker" -c "$GB_ADMIN_CONFIG" db migrate >/dev/null
fi
exec "$@"
