#!/usr/bin/env bash
# Generates the Python gRPC stubs of proto/hookd/v1/*.proto into examples/python/gen/ (gitignored).
# The Python modules also generate them on first import when they are missing or older than the
# protos; this script is what `make test` runs, so a proto edit shows up as a failure right away.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${HOOKD_PYTHON:-/usr/bin/python3}"
exec "$PYTHON" examples/python/hookd_stubs.py --force
