#!/bin/sh
# Compiles the command shim's fast form, native/hookd-hook.c, into build/hookd-hook. Run by
# `npm install` and by `make`. It never fails the install: without a C compiler (isolated-vm needs
# one too), `hookd setup` writes bin/hookd-hook instead, which does the same with bash or curl.
cd "$(dirname "$0")/.." || exit 0
cc=${CC:-cc}
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "hookd: no C compiler ($cc): agents' command hooks will run bin/hookd-hook (bash or curl) instead of build/hookd-hook" >&2
  exit 0
fi
mkdir -p build
if "$cc" -O2 -Wall -o build/hookd-hook.tmp native/hookd-hook.c && mv build/hookd-hook.tmp build/hookd-hook; then
  exit 0
fi
rm -f build/hookd-hook.tmp
echo "hookd: could not compile native/hookd-hook.c: agents' command hooks will run bin/hookd-hook (bash or curl) instead" >&2
exit 0
