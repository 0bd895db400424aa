# shellcheck shell=bash
# configs.sh — the two configurations an integration test runs with, for
# lib.sh (the shell tests) and run-itc.sh (the C programs); sourced, not
# run. GB_SRC must name the source tree. Exports:
#   GB_CONFIG        the application's: GB_IT_CONFIG, which runs a test
#                    against another database and vhost of the same servers
#                    (so two test runs on one machine cannot take each
#                    other's messages), else the config scripts/services
#                    writes
#   GB_ADMIN_CONFIG  the schema's, which belongs to the admin account (the
#                    application account may not change it):
#                    GB_IT_ADMIN_CONFIG, else the <name>-admin.conf
#                    scripts/services writes next to <name>.conf, else
#                    GB_CONFIG itself (a hand-made config whose account may
#                    change the schema, as before the accounts were split)
export GB_CONFIG=${GB_IT_CONFIG:-$GB_SRC/run/gridbroker.conf}
if [ -n "${GB_IT_ADMIN_CONFIG:-}" ]; then
	GB_ADMIN_CONFIG=$GB_IT_ADMIN_CONFIG
elif [ -f "${GB_CONFIG%.conf}-admin.conf" ]; then
	GB_ADMIN_CONFIG=${GB_CONFIG%.conf}-admin.conf
else
	GB_ADMIN_CONFIG=$GB_CONFIG
fi
export GB_ADMIN_CONFIG
# GB_RO_CONFIG: the read-only account's (replay): GB_IT_RO_CONFIG, else the
# <name>-readonly.conf scripts/services writes, else GB_CONFIG.
if [ -n "${GB_IT_RO_CONFIG:-}" ]; then
	GB_RO_CONFIG=$GB_IT_RO_CONFIG
elif [ -f "${GB_CONFIG%.conf}-readonly.conf" ]; then
	GB_RO_CONFIG=${GB_CONFIG%.conf}-readonly.conf
else
	GB_RO_CONFIG=$GB_CONFIG
fi
export GB_RO_CONFIG
