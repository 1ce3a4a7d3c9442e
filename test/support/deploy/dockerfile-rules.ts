/**
 * The rules hookd's Dockerfile keeps (docs/operations.md#the-container), as a function that lists every
 * broken one, so that a test can show each rule catching a deliberately bad Dockerfile.
 */
import { posix } from 'node:path'
import { type Dockerfile, type Instruction, type Stage, envPairs, healthcheckCommand } from './dockerfile.js'

/** Names of ENV/ARG variables that look like they hold a secret. */
const SECRET_NAME = /(token|secret|passw(or)?d|private|credential|api_?key|_key$|^key$)/i
/** Files that must never be copied into an image. */
const SECRET_FILE = /(\.pem|\.key|\.env|tenants[^/]*\.json|id_rsa[^/]*)$/i

/** Every rule the Dockerfile breaks, one sentence each; [] when it keeps them all. */
export function dockerfileProblems(file: Dockerfile, options: { nodeVersion: string }): string[] {
  const problems: string[] = []
  const [build, runtime] = [file.stages[0], file.stages.at(-1)] as [Stage, Stage]
  if (file.stages.length < 2) problems.push(`expected a build stage and a runtime stage; found ${file.stages.length} stage(s)`)
  if (runtime.name !== 'runtime') problems.push(`the last stage should be named 'runtime'; it is ${runtime.name ?? 'unnamed'}`)
  const version = options.nodeVersion.replace(/^v/, '')
  for (const stage of file.stages) {
    const base = stage.base
    if (file.stages.some((s) => s.name === base)) continue
    const m = /^node:(\d+\.\d+\.\d+)-(bookworm(?:-slim)?)(@sha256:[0-9a-f]{64})?$/.exec(base)
    if (!m) {
      problems.push(`stage ${stage.name ?? stage.index} (line ${stage.from.line}): base image ${base} is not pinned to an exact node:X.Y.Z-bookworm[-slim] release`)
    } else if (m[1] !== version) {
      problems.push(`stage ${stage.name ?? stage.index}: base image ${base} is Node ${m[1]}, but the tests run on Node ${version}; pin the release they pass on`)
    }
  }
  if (!/-slim(@|$)/.test(runtime.base)) problems.push(`the runtime stage should start from a slim image; it starts from ${runtime.base}`)

  // The build stage: a C++ toolchain for isolated-vm, npm ci, the TypeScript build, npm pack, and the
  // packed tarball installed without dev dependencies: the image runs what npm installs from it.
  const runs = build.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.raw.replace(/\s+/g, ' '))
  const at = (re: RegExp): number => runs.findIndex((r) => re.test(r))
  for (const pkg of ['python3', 'make', 'g++']) {
    if (!runs.some((r) => /apt-get install/.test(r) && r.split(' ').includes(pkg))) problems.push(`the build stage does not apt-get install ${pkg} (isolated-vm compiles from source)`)
  }
  const [ci, compile, packed, install] = [at(/^npm ci\b/), at(/^npm run build$/), at(/^npm pack\b/), at(INSTALL_TARBALL)]
  if (ci < 0 || compile < 0 || packed < 0 || install < 0 || !(ci < compile && compile < packed && packed < install)) {
    problems.push('the build stage should RUN npm ci, then npm run build, then npm pack, then npm install --omit=dev of the packed tarball')
  }

  // The runtime stage: only what runs (that install, and the hooks), as a numeric non-root user.
  const installDir = install < 0 ? undefined : workdirAt(build, INSTALL_TARBALL)
  const runtimeCopies = runtime.instructions.filter((i) => i.keyword === 'COPY' || i.keyword === 'ADD')
  const allowed = new Set([...(installDir ? [installDir] : []), 'hooks'])
  for (const copy of runtimeCopies) {
    if (copy.keyword === 'ADD') problems.push(`line ${copy.line}: use COPY, not ADD (ADD fetches URLs and unpacks archives)`)
    for (const source of copy.args.slice(0, -1)) {
      if (!allowed.has(source)) {
        problems.push(`line ${copy.line}: the runtime stage copies ${source}, which is not part of what runs (the build stage's install of the packed tarball${installDir ? `, ${installDir}` : ''}, and hooks)`)
      }
    }
  }
  const users = runtime.instructions.filter((i) => i.keyword === 'USER')
  const user = users.at(-1)?.args[0] ?? ''
  const ids = /^(\d+):(\d+)$/.exec(user)
  if (!ids) problems.push(`the runtime stage's last USER should be numeric uid:gid (Kubernetes' runAsNonRoot checks numbers); it is '${user || 'unset (root)'}'`)
  else if (ids[1] === '0' || ids[2] === '0') problems.push(`the runtime stage runs as ${user}: root's uid or gid`)
  const entrypoint = last(runtime, 'ENTRYPOINT')
  if (!entrypoint?.exec || entrypoint.args[0] !== 'node' || !entrypoint.args[1]?.endsWith('/bin/hookd.js')) {
    problems.push('ENTRYPOINT should be the exec form ["node", ".../bin/hookd.js"], so that SIGTERM reaches hookd (no shell in between)')
  }
  const cmd = last(runtime, 'CMD')
  const healthListen = cmd?.args[cmd.args.indexOf('--health-listen') + 1]
  if (!cmd?.exec || cmd.args[0] !== 'serve' || !cmd.args.includes('--health-listen') || !healthListen) {
    problems.push('CMD should be the exec form ["serve", ..., "--health-listen", "HOST:PORT"], so the HEALTHCHECK has a port to ask')
  }
  const healthcheck = last(runtime, 'HEALTHCHECK')
  const probe = healthcheck ? healthcheckCommand(healthcheck) : undefined
  if (!probe?.exec || !probe.argv[1]?.endsWith('/bin/hookd.js') || probe.argv[2] !== 'health') {
    problems.push('HEALTHCHECK should run ["node", ".../bin/hookd.js", "health", ...] in exec form')
  } else {
    const addr = probe.argv[probe.argv.indexOf('--addr') + 1] ?? ''
    const port = healthListen?.split(':').at(-1)
    if (!probe.argv.includes('--addr') || addr.split(':').at(-1) !== port) {
      problems.push(`HEALTHCHECK asks ${addr || 'the default address'}, not the --health-listen port ${port ?? '(none)'}`)
    }
  }
  const exposed = runtime.instructions.filter((i) => i.keyword === 'EXPOSE').flatMap((i) => i.args.map((a) => a.split('/')[0]))
  if (healthListen && !exposed.includes(healthListen.split(':').at(-1))) problems.push(`EXPOSE does not list the health port of ${healthListen}`)

  // No secrets anywhere: not in ENV or ARG, not copied in.
  for (const stage of [{ instructions: file.globalArgs }, ...file.stages]) {
    for (const ins of stage.instructions) {
      for (const name of secretNames(ins)) problems.push(`line ${ins.line}: ${ins.keyword} ${name} looks like a secret; pass secrets at run time (Kubernetes Secrets, --tls-key FILE)`)
      if ((ins.keyword === 'COPY' || ins.keyword === 'ADD') && ins.args.slice(0, -1).some((s) => SECRET_FILE.test(s))) {
        problems.push(`line ${ins.line}: ${ins.keyword} copies a key, certificate, .env or tenants file into the image; mount it at run time`)
      }
    }
  }
  return problems
}

/** The build stage's RUN that installs the packed tarball (npm writes the folder's package.json). */
export const INSTALL_TARBALL = /^npm install --omit=dev\b.* (\S+\.tgz)$/

/** The WORKDIR in force at the first RUN of `stage` that matches `re`. */
function workdirAt(stage: Stage, re: RegExp): string | undefined {
  let workdir = '/'
  for (const ins of stage.instructions) {
    if (ins.keyword === 'WORKDIR') workdir = posix.resolve(workdir, ins.args[0] as string)
    else if (ins.keyword === 'RUN' && re.test(ins.raw.replace(/\s+/g, ' '))) return workdir
  }
  return undefined
}

function last(stage: Stage, keyword: string): Instruction | undefined {
  return stage.instructions.filter((i) => i.keyword === keyword).at(-1)
}

function secretNames(ins: Instruction): string[] {
  if (ins.keyword === 'ENV') return Object.keys(envPairs(ins)).filter((k) => SECRET_NAME.test(k))
  if (ins.keyword === 'ARG') return ins.args.map((a) => a.split('=')[0] as string).filter((k) => SECRET_NAME.test(k))
  return []
}
