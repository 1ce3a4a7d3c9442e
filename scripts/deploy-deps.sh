#!/usr/bin/env bash
# Installs the Debian tools the deployment tests use (test/deploy/): systemd-analyze, from the systemd
# package, to verify deploy/systemd/hookd.service; setpriv, from util-linux, to run the container
# image's command as its unprivileged user. Does nothing when both are there (as on Debian machines
# with systemd); without apt-get it says what is missing and leaves the tests to report it.
set -euo pipefail

missing=()
command -v systemd-analyze >/dev/null || missing+=(systemd)
command -v setpriv >/dev/null || missing+=(util-linux)
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "deploy-deps: apt-get not found; install ${missing[*]} by hand for the tests in test/deploy/" >&2
  exit 0
fi
SUDO=()
if [[ "$(id -u)" != 0 ]]; then
  if command -v sudo >/dev/null; then SUDO=(sudo); else
    echo "deploy-deps: run as root (or install sudo) to apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi
echo "deploy-deps: installing ${missing[*]} with apt-get"
"${SUDO[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
