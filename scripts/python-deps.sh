#!/usr/bin/env bash
# Installs what the Python host, the Python remote hook and the Python conformance runner need:
# Debian's python3-grpcio and python3-grpc-tools, for Debian's own Python. `python3` on PATH may be
# another Python (pyenv, a venv) that does not see Debian's packages, so this uses /usr/bin/python3
# unless HOOKD_PYTHON names another interpreter. Does nothing when they are already importable.
set -euo pipefail
PYTHON="${HOOKD_PYTHON:-/usr/bin/python3}"

if "$PYTHON" -c 'import grpc, grpc_tools' 2>/dev/null; then
  exit 0
fi
if [[ "$PYTHON" != /usr/bin/python3 ]]; then
  echo "python-deps: $PYTHON cannot import grpc and grpc_tools; install grpcio and grpcio-tools for it, or unset HOOKD_PYTHON to use Debian's /usr/bin/python3" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null; then
  echo "python-deps: apt-get not found; install python3-grpcio and python3-grpc-tools (or grpcio and grpcio-tools) for $PYTHON by hand" >&2
  exit 1
fi
SUDO=()
if [[ "$(id -u)" != 0 ]]; then
  if command -v sudo >/dev/null; then SUDO=(sudo); else
    echo "python-deps: run as root (or install sudo) to apt-get install python3-grpcio python3-grpc-tools" >&2
    exit 1
  fi
fi
echo "python-deps: installing python3-grpcio and python3-grpc-tools with apt-get"
"${SUDO[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq python3-grpcio python3-grpc-tools >/dev/null
"$PYTHON" -c 'import grpc, grpc_tools' || {
  echo "python-deps: installed, but $PYTHON still cannot import grpc and grpc_tools" >&2
  exit 1
}
