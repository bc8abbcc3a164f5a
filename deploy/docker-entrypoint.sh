#!/bin/sh
# Apply the ledger's migrations, then run the given command (default: the receiver).
# MIGRATE_ON_START=0 skips the upgrade (use it when a separate job already migrated,
# e.g. the compose `migrate` service or the Kubernetes initContainer).
set -eu

if [ "$#" -eq 0 ]; then
    set -- payrecon serve --host 0.0.0.0 --port 8000
fi

case "$*" in
    "payrecon db upgrade"* | "payrecon sandbox"* | "payrecon --help"* | "payrecon --version"*)
        # Nothing to migrate first: the command is the migration, or needs no ledger.
        ;;
    payrecon\ *)
        if [ "${MIGRATE_ON_START:-1}" = "1" ]; then
            payrecon db upgrade
        fi
        ;;
esac

exec "$@"
