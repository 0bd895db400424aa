#!/usr/bin/env bash
# Run one C integration test program against the local servers: make sure
# scripts/services has them up (a no-op when they already run), then run the
# program with GB_CONFIG pointing at the generated configuration.
set -euo pipefail
src=${GB_SOURCE_DIR:?GB_SOURCE_DIR must point at the source tree}
"$src/scripts/services" start >/dev/null
export GB_CONFIG="${GB_IT_CONFIG:-$src/run/gridbroker.conf}"
exec "$@"
