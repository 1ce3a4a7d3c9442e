#!/usr/bin/env bash
# Installs a pinned AI-agent CLI (or SDK) from the npm registry into the repo's cache, once, and
# prints the absolute path of what to run (for an SDK: its package folder) on stdout. The one place
# the agents hookd is tested against are pinned (tests call it through test/agents/support/cli.ts).
#
#   scripts/agent-cli.sh NAME        e.g. scripts/agent-cli.sh claude, scripts/agent-cli.sh codex
#   scripts/agent-cli.sh --list      the pinned names
#
# Where: .cache/agents/NAME@VERSION/ under the repo root (or $HOOKD_AGENT_CACHE/NAME@VERSION/).
# Idempotent: a marker file is written after a successful install, and a second call only prints.
# Concurrent calls are safe: each installs into its own temporary folder beside the final one and
# renames it into place; a call that loses the race throws its copy away and uses the winner's.
# npm's own output goes to stderr, so stdout carries the path alone.
set -euo pipefail

# The pins, one agent a line: name, npm package, exact version, what to print (a path inside the
# package's folder, or "." for the folder itself), and whether to check the install by running it
# with --version ("version") or not ("-": Copilot unpacks ~235 MB into $XDG_CACHE_HOME on its first
# run, which its tests point into the cache). Add an agent by adding a line.
pins() {
  cat <<'EOF'
claude            @anthropic-ai/claude-code        2.1.328  bin/claude.exe     version
claude-agent-sdk  @anthropic-ai/claude-agent-sdk   0.3.332  .                  -
codex             @openai/codex                    0.169.0  bin/codex.js       version
gemini            @google/gemini-cli               0.61.0   bundle/gemini.js   version
copilot           @github/copilot                  1.0.102  npm-loader.js      -
opencode          opencode-ai                      1.18.33  bin/opencode.exe   version
cline             cline                            3.0.65   bin/cline          version
cursor-sdk        @cursor/sdk                      1.0.32   .                  -
EOF
}

die() {
  echo "agent-cli: $*" >&2
  exit 1
}

[ $# -eq 1 ] || die "usage: $0 NAME | --list"
if [ "$1" = "--list" ]; then
  pins | awk '{ print $1 "\t" $2 "@" $3 }'
  exit 0
fi

name=$1
line=$(pins | awk -v n="$name" '$1 == n')
[ -n "$line" ] || die "no pin for '$name' (pinned: $(pins | awk '{ printf "%s ", $1 }'))"
read -r _ package version entry check <<<"$line"

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${HOOKD_AGENT_CACHE:-$root/.cache/agents}
final=$cache/$name@$version
marker=$final/.installed
target=$final/node_modules/$package
[ "$entry" = "." ] || target=$target/$entry

if [ -f "$marker" ]; then
  [ -e "$target" ] || die "$final is marked installed but $target is missing: remove $final and retry"
  echo "$target"
  exit 0
fi

command -v npm >/dev/null || die "npm is not on PATH"
mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.$name@$version.XXXXXX")
chmod 755 "$tmp"
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT

echo "agent-cli: installing $package@$version into $final" >&2
# A pinned package.json, so the folder says what it holds.
printf '{ "name": "hookd-agent-%s", "private": true }\n' "$name" >"$tmp/package.json"
if ! npm install --prefix "$tmp" --no-audit --no-fund --save-exact "$package@$version" 1>&2; then
  die "npm install $package@$version failed (see npm's output above)"
fi
tmptarget=$tmp/node_modules/$package
[ "$entry" = "." ] || tmptarget=$tmptarget/$entry
[ -e "$tmptarget" ] || die "npm installed $package@$version but $tmptarget is missing"
# A CLI must answer --version: a wrapper whose install script did not put its native binary in place
# would be left as a stub.
if [ "$check" = "version" ] && ! timeout 120 "$tmptarget" --version >&2; then
  die "$tmptarget --version failed after installing $package@$version"
fi
printf '%s@%s\n' "$package" "$version" >"$tmp/.installed"

# mv -T renames the folder itself; it fails if another call put a complete folder there first.
if ! mv -T "$tmp" "$final" 2>/dev/null; then
  [ -f "$marker" ] || die "could not move $tmp to $final, and $final holds no complete install"
  echo "agent-cli: another call installed $final first; using it" >&2
fi
echo "$target"
