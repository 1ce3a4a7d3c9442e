#!/bin/sh
# Installs one pinned agent CLI into .cache/agents/NAME@VERSION/ under the repo root and prints the
# path of its executable. Idempotent (a marker file says the install finished) and safe when two run
# at once: each installs into its own temp folder, then renames it into place; the loser drops its copy.
#
#   scripts/agent-cli-others.sh codex|gemini|copilot
set -eu

name=${1:-}
case $name in
  codex)   pkg=@openai/codex;      version=0.169.0; bin=node_modules/.bin/codex ;;
  gemini)  pkg=@google/gemini-cli; version=0.61.0;  bin=node_modules/.bin/gemini ;;
  copilot) pkg=@github/copilot;    version=1.0.102; bin=node_modules/.bin/copilot ;;
  *) echo "usage: $0 codex|gemini|copilot" >&2; exit 2 ;;
esac

root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
cache=$root/.cache/agents
dest=$cache/$name@$version
marker=$dest/.installed

if [ ! -f "$marker" ]; then
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/.$name@$version.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT INT TERM
  printf '{"name":"agent-cli-%s","private":true}\n' "$name" > "$tmp/package.json"
  # npm's own output goes to stderr: stdout carries only the path.
  npm install --prefix "$tmp" --no-audit --no-fund --no-save --loglevel=error "$pkg@$version" >&2
  [ -x "$tmp/$bin" ] || { echo "$0: $pkg@$version installed no $bin" >&2; exit 1; }
  printf '%s@%s\n' "$pkg" "$version" > "$tmp/.installed"
  # mv onto a missing path is one rename(2); if another run got there first, keep theirs.
  if ! mv -T "$tmp" "$dest" 2>/dev/null; then
    [ -f "$marker" ] || { echo "$0: $dest exists but holds no finished install" >&2; exit 1; }
  fi
  rm -rf "$tmp"
  trap - EXIT INT TERM
fi

printf '%s\n' "$dest/$bin"
