/**
 * The user service `hookd up` installs, as text: a systemd user unit (Linux) and a launchd agent
 * (macOS), each starting `hookd serve --projects`: the user's own hookd, serving every project set up
 * with `hookd init` on the socket in the user's state folder. deploy/systemd/hookd.service and
 * deploy/launchd/dev.hookd.plist are these texts for an npm install under ~/.local (checked by
 * test/deploy/service-files.test.ts), for reading or for setting it up by hand.
 */

export interface ServiceSpec {
  /** The command that runs hookd: [node, bin/hookd.js], or one program on PATH. */
  program: readonly string[]
  /** The user's state folder, as the service manager spells it (systemd: %h/...). */
  stateDir: string
  /** PATH for the service (launchd starts jobs with a bare one). */
  path?: string
  /** The folder the log goes to (launchd; systemd has its journal). */
  logFile?: string
}

/** systemd quotes a word of ExecStart= with double quotes when it holds a space. */
function systemdWord(word: string): string {
  return /[\s"\\]/.test(word) ? `"${word.replace(/(["\\])/g, '\\$1')}"` : word
}

export function systemdUnit(spec: ServiceSpec): string {
  return `# hookd as a systemd user service: this user's own hookd, guarding every project set up with
# 'hookd init'. 'hookd up' writes this file to ~/.config/systemd/user/hookd.service and starts it;
# this copy is what it writes for an npm install under ~/.local (npm install --global --prefix
# ~/.local hookd-sandbox), to read, or to set up by hand:
#
#   mkdir -m 700 -p ~/.local/state/hookd ~/.config/systemd/user
#   cp hookd.service ~/.config/systemd/user/
#   systemctl --user daemon-reload && systemctl --user enable --now hookd
#
# It serves the agents' front door on ~/.local/state/hookd/front.sock (a folder only you can enter),
# where hookd's shim posts each event. Logs: journalctl --user -u hookd. See docs/operations.md#systemd.
#
# In a user service, the sandboxing below runs inside a user namespace that systemd sets up
# (PrivateUsers= is implied), which needs unprivileged user namespaces (Debian, Ubuntu and Fedora
# allow them). test/deploy/service-files.test.ts checks this file with \`systemd-analyze verify --user\`.

[Unit]
Description=hookd: runs this user's AI-agent hooks in fresh sandboxed isolates, for every project set up with hookd init
Documentation=man:systemd.exec(5)

[Service]
Type=exec
ExecStart=${spec.program.map(systemdWord).join(' ')} serve --projects --grace-ms 10000
Environment=HOOKD_STATE_DIR=${spec.stateDir}
# SIGTERM drains: calls in flight get --grace-ms (10 s) to finish, then the workers stop. Allow that
# and a margin before systemd sends SIGKILL.
KillSignal=SIGTERM
KillMode=mixed
TimeoutStopSec=20
Restart=on-failure
RestartSec=2
UMask=0077
Environment=NODE_ENV=production

# --- Sandboxing ---------------------------------------------------------------------------------
NoNewPrivileges=yes
# The whole file system is read-only to hookd, except its state folder (its socket and token).
ProtectSystem=strict
# Projects and their hooks are under your home, and hookd itself too: read-only is enough, the state
# folder aside. A profile that lets hooks write files ("policy": {"file": "read-write"}) needs the
# project in ReadWritePaths= as well.
ProtectHome=read-only
ReadWritePaths=${spec.stateDir}
PrivateTmp=yes
PrivateDevices=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectClock=yes
ProtectHostname=yes
# Unix sockets for the front door; IPv4 and IPv6 for remote hooks and a --http port.
RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6
RestrictRealtime=yes
RestrictSUIDSGID=yes
LockPersonality=yes
SystemCallArchitectures=native
# @system-service keeps unshare, setns and the setuid calls that hookd's worker walls use; adding
# ~@privileged would remove setresuid and capset.
SystemCallFilter=@system-service
SystemCallErrorNumber=EPERM
# hookd's sandbox workers wall themselves off in user and network namespaces of their own
# (unshare --user --net, see docs/containment.md): RestrictNamespaces must allow those two. A bare
# RestrictNamespaces=yes forbids them, and the workers could not put up those walls.
RestrictNamespaces=user net
# Not set, on purpose:
# - MemoryDenyWriteExecute=yes: V8 compiles JavaScript to machine code at run time (JIT) and needs
#   memory that is writable and then executable. Under the same rule (the kernel's PR_SET_MDWE) node
#   aborts before running any JavaScript: "Check failed" in V8's SetPermissions, SIGTRAP.
# - ProcSubset=pid: hides /proc/cpuinfo, from which Node counts cores (hookd starts one worker per core).
# - PrivateNetwork=yes: hookd would have no network for remote hooks or a TCP --http; its workers
#   already have none.

[Install]
WantedBy=default.target
`
}

function xml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

/** The launchd agent: launchd expands neither ~ nor $HOME, so every path is written out. */
export function launchdPlist(spec: ServiceSpec): string {
  const args = [...spec.program, 'serve', '--projects', '--grace-ms', '10000'].map((a) => `    <string>${xml(a)}</string>`).join('\n')
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!--
  hookd as a launchd agent on a Mac: this user's own hookd, guarding every project set up with
  hookd init; started at login, restarted if it crashes, stopped (drained) at logout. hookd up writes
  it to ~/Library/LaunchAgents/dev.hookd.plist and bootstraps it; this copy is what it writes for a
  global npm install with Homebrew's node, with /Users/YOU for your home folder (launchd expands
  neither ~ nor $HOME). The commands to do it by hand are in docs/operations.md#launchd.
  test/deploy/service-files.test.ts parses this file.
  (XML comments may not contain two hyphens in a row: keep command lines out of them.)
-->
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>dev.hookd</string>
  <key>ProgramArguments</key>
  <array>
${args}
  </array>
  <key>EnvironmentVariables</key>
  <dict>
    <key>PATH</key>
    <string>${xml(spec.path ?? '/opt/homebrew/bin:/usr/local/bin:/usr/bin:/bin')}</string>
    <key>HOOKD_STATE_DIR</key>
    <string>${xml(spec.stateDir)}</string>
    <key>NODE_ENV</key>
    <string>production</string>
  </dict>
  <key>RunAtLoad</key>
  <true/>
  <!-- Restart after a crash, not after a clean exit (SIGTERM drains, then exits 0). -->
  <key>KeepAlive</key>
  <dict>
    <key>SuccessfulExit</key>
    <false/>
  </dict>
  <key>ThrottleInterval</key>
  <integer>5</integer>
  <!-- Seconds between SIGTERM and SIGKILL: more than the 10 s of grace-ms. -->
  <key>ExitTimeOut</key>
  <integer>20</integer>
  <!-- Hooks run on the agent's critical path: not Background, which throttles CPU and I/O. -->
  <key>ProcessType</key>
  <string>Standard</string>
  <!-- 077: everything hookd creates stays private. -->
  <key>Umask</key>
  <integer>63</integer>
  <key>StandardOutPath</key>
  <string>${xml(spec.logFile ?? `${spec.stateDir}/hookd.log`)}</string>
  <key>StandardErrorPath</key>
  <string>${xml(spec.logFile ?? `${spec.stateDir}/hookd.log`)}</string>
</dict>
</plist>
`
}
