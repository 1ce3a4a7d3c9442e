/**
 * The container image, without Docker (no Docker engine runs where hookd is tested): the Dockerfile's
 * rules, and its runtime stage replayed here, file for file, as the unprivileged user it names. The
 * image runs hookd as npm installs it from the packed tarball; the replay packs this checkout and has
 * npm install the tarball over the install it made before for the same dependencies, Node and npm
 * (test/support/packed.ts, under .cache/package-test/): ~5 s, plus one isolated-vm compile (60-90 s of
 * CPU) when there is none yet.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { readFile, readdir, stat } from 'node:fs/promises'
import { createServer } from 'node:net'
import { join, relative } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseDockerfile } from '../support/deploy/dockerfile.js'
import { dockerfileProblems } from '../support/deploy/dockerfile-rules.js'
import { DockerIgnore } from '../support/deploy/dockerignore.js'
import { INSTALL_TIMEOUT_MS } from '../support/packed.js'
import { ROOT } from '../support/processes.js'
import { type RuntimeImage, replayRuntimeStage } from '../support/runtime-stage.js'

const DOCKERFILE = join(ROOT, 'Dockerfile')
const RM = '{"id":"c1","name":"shell","arguments":{"command":"rm -rf /tmp/x"}}'

describe('the Dockerfile', () => {
  it('keeps the rules: pinned bases, a build and a slim runtime stage, a numeric non-root user, a health check, no secrets', async () => {
    const file = parseDockerfile(await readFile(DOCKERFILE, 'utf8'))
    expect(file.stages.map((s) => [s.name, s.base])).toEqual([
      ['build', `node:${process.version.slice(1)}-bookworm`],
      ['runtime', `node:${process.version.slice(1)}-bookworm-slim`],
    ])
    expect(dockerfileProblems(file, { nodeVersion: process.version })).toEqual([])
  })

  it('the rules catch a Dockerfile that breaks them', () => {
    const bad = parseDockerfile(`FROM node:20 AS build
RUN npm install
FROM node:latest AS runtime
ENV API_TOKEN=hkd_x NODE_ENV=production
ARG TLS_KEY
COPY --from=build /src /opt/hookd
COPY tenants.json /etc/hookd/tenants.json
USER root
ENTRYPOINT node /opt/hookd/bin/hookd.js
HEALTHCHECK CMD curl -f http://localhost/
`)
    const problems = dockerfileProblems(bad, { nodeVersion: 'v20.20.2' })
    expect(problems).toEqual(
      expect.arrayContaining([
        'stage build (line 1): base image node:20 is not pinned to an exact node:X.Y.Z-bookworm[-slim] release',
        'stage runtime (line 3): base image node:latest is not pinned to an exact node:X.Y.Z-bookworm[-slim] release',
        'the build stage does not apt-get install g++ (isolated-vm compiles from source)',
        'the build stage should RUN npm ci, then npm run build, then npm pack, then npm install --omit=dev of the packed tarball',
        "line 6: the runtime stage copies /src, which is not part of what runs (the build stage's install of the packed tarball, and hooks)",
        "the runtime stage's last USER should be numeric uid:gid (Kubernetes' runAsNonRoot checks numbers); it is 'root'",
        'ENTRYPOINT should be the exec form ["node", ".../bin/hookd.js"], so that SIGTERM reaches hookd (no shell in between)',
        'HEALTHCHECK should run ["node", ".../bin/hookd.js", "health", ...] in exec form',
        'line 4: ENV API_TOKEN looks like a secret; pass secrets at run time (Kubernetes Secrets, --tls-key FILE)',
        'line 5: ARG TLS_KEY looks like a secret; pass secrets at run time (Kubernetes Secrets, --tls-key FILE)',
        'line 7: COPY copies a key, certificate, .env or tenants file into the image; mount it at run time',
      ]),
    )
    const rootById = dockerfileProblems(parseDockerfile('FROM node:20.20.2-bookworm AS build\nFROM node:20.20.2-bookworm-slim AS runtime\nUSER 0:0\n'), {
      nodeVersion: 'v20.20.2',
    })
    expect(rootById).toContain("the runtime stage runs as 0:0: root's uid or gid")
  })

  it('.dockerignore keeps the build context to what the Dockerfile copies', async () => {
    const ignore = new DockerIgnore(await readFile(join(ROOT, '.dockerignore'), 'utf8'))
    for (const kept of ['package.json', 'package-lock.json', 'README.md', 'src/cli/main.ts', 'proto/hookd/v1/hookd.proto', 'bin/hookd.js', 'bin/hookd-hook', 'native/hookd-hook.c', 'scripts/build-shim.sh', 'hooks/guard/index.js', 'types/hook.d.ts']) {
      expect(ignore.ignores(kept), kept).toBe(false)
    }
    for (const left of ['node_modules/zod/package.json', 'dist/cli/main.js', 'build/hookd-hook', 'scripts/agent-cli.sh', '.git/config', '.cache/x', 'test/support/sidecar.ts', 'hooks/guard/guard.test.ts', '.hookd/hookd.sock', 'tenants.json']) {
      expect(ignore.ignores(left), left).toBe(true)
    }
  })
})

/** Every file under `dir`, relative to it. */
async function tree(dir: string): Promise<string[]> {
  const out: string[] = []
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isDirectory()) out.push(relative(dir, join(entry.parentPath, entry.name)))
  }
  return out.sort()
}

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/** Runs argv as the image's user, from its WORKDIR, with only the image's environment. */
function asImageUser(image: RuntimeImage, argv: string[]): ChildProcess {
  return spawn('setpriv', [`--reuid=${image.uid}`, `--regid=${image.gid}`, '--clear-groups', '--no-new-privs', '--', ...argv], {
    cwd: image.workdir,
    env: { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', HOME: '/nonexistent', ...image.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

function finish(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()))
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })))
}

// Switching to the image's uid takes root (as in CI and on the project's machines); elsewhere the rules
// above still run.
const canSwitchUser = process.getuid?.() === 0 && spawnSync('setpriv', ['--version']).status === 0

describe.skipIf(!canSwitchUser)("the image's runtime stage, replayed here as its user", () => {
  let image: RuntimeImage
  let server: ChildProcess
  let stderr = ''
  let before: string[]
  let assembledMs: number

  beforeAll(async () => {
    const started = performance.now()
    const port = await freePort()
    image = await replayRuntimeStage(parseDockerfile(await readFile(DOCKERFILE, 'utf8')), { context: ROOT, ports: { 8081: port } })
    assembledMs = Math.round(performance.now() - started)
    console.info(`runtime stage assembled in ${assembledMs} ms (${image.reused ? 'npm installed the tarball over its earlier install' : 'installed fresh, isolated-vm compiled, kept for next time'})`)
    before = await tree(image.root)
    server = asImageUser(image, image.command)
    server.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the image's command was not ready within 60 s: ${stderr}`)), 60_000)
      server.stderr?.on('data', () => {
        if (/^hookd: health on /m.test(stderr)) {
          clearTimeout(timer)
          resolve()
        }
      })
      server.once('exit', (code) => {
        clearTimeout(timer)
        reject(new Error(`the image's command exited (${code}): ${stderr}`))
      })
    })
  }, INSTALL_TIMEOUT_MS)

  afterAll(async () => {
    if (server && server.exitCode === null && server.signalCode === null) server.kill('SIGKILL')
    await image?.remove()
  })

  it('holds only what runs: hookd-sandbox as npm installed it from the packed tarball, no dev dependencies, no tests, no sources', async () => {
    const app = image.workdir
    expect((await readdir(app)).sort()).toEqual(['hooks', 'node_modules', 'package-lock.json', 'package.json'])
    // npm wrote the folder's package.json: the one dependency, from the tarball npm pack made.
    expect(JSON.parse(await readFile(join(app, 'package.json'), 'utf8'))).toEqual({ dependencies: { 'hookd-sandbox': expect.stringMatching(/^file:.*hookd-sandbox-\d+\.\d+\.\d+\.tgz$/) } })
    const hookd = join(app, 'node_modules', 'hookd-sandbox')
    expect((await readdir(hookd)).sort()).toEqual(['README.md', 'bin', 'build', 'dist', 'native', 'package.json', 'proto', 'rules', 'scripts', 'types'])
    expect(await readFile(join(hookd, 'dist', 'cli', 'main.js'), 'utf8')).toBe(await readFile(join(ROOT, 'dist', 'cli', 'main.js'), 'utf8'))
    for (const dev of ['typescript', 'vitest', 'tsx', 'vite']) {
      await expect(stat(join(app, 'node_modules', dev)), dev).rejects.toThrow()
    }
    // npm's default layout: isolated-vm hoisted beside hookd-sandbox, and built.
    await stat(join(app, 'node_modules', 'isolated-vm', 'out', 'isolated_vm.node'))
    const hooks = await tree(join(app, 'hooks'))
    expect(hooks.some((f) => f.endsWith('.test.ts'))).toBe(false)
    expect(hooks).toContain('guard/index.js')
  })

  it('serves a hook call on the socket, to a caller running as the same user', async () => {
    expect(stderr).toMatch(new RegExp(`^hookd: listening on unix:${image.root}/run/hookd/hookd\\.sock$`, 'm'))
    const modules = join(image.workdir, 'node_modules')
    expect(stderr).toContain(`; permission model: reads only ${join(modules, 'hookd-sandbox')} and ${join(modules, 'isolated-vm')}; no writes, no child processes, no threads; `)
    const bin = join(image.workdir, 'node_modules', 'hookd-sandbox', 'bin', 'hookd.js')
    const ran = await finish(
      asImageUser(image, ['node', bin, 'invoke', '--addr', `unix:${image.root}/run/hookd/hookd.sock`, '--hook', 'guard,https-only', '--point', 'beforeToolExecute', '--payload', RM]),
    )
    expect(ran.code, ran.stderr).toBe(0)
    expect(JSON.parse(ran.stdout).result).toEqual({ allow: false, reason: 'refused by the user', refusedBy: 'guard', arguments: { command: 'rm -rf /tmp/x' } })
    expect((await stat(join(image.root, 'run', 'hookd', 'hookd.sock'))).uid).toBe(image.uid)
  })

  it("reports healthy through the image's HEALTHCHECK command", async () => {
    const ran = await finish(asImageUser(image, image.healthcheck))
    expect(ran).toEqual({ code: 0, stdout: 'SERVING\n', stderr: '' })
  })

  it('writes nothing but its socket, and stops cleanly on SIGTERM', async () => {
    const during = await tree(image.root)
    expect(during.filter((f) => !before.includes(f))).toEqual(['run/hookd/hookd.sock'])
    const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)))
    server.kill('SIGTERM')
    expect(await exited).toBe(0)
    expect(await tree(image.root)).toEqual(before)
    const unhealthy = await finish(asImageUser(image, image.healthcheck))
    expect(unhealthy.code).toBe(1)
  })
})
