/**
 * Replays the Dockerfile's runtime stage on this machine, without Docker: lays out the image's files in
 * a temp folder exactly as its COPY lines say (the build context filtered by .dockerignore, and what the
 * build stage's steps produce), runs its RUN lines there, and reports its USER, ENV, WORKDIR,
 * ENTRYPOINT, CMD and HEALTHCHECK with image paths mapped into that folder.
 *
 * The build stage is not run; each of its steps is mapped to what it leaves behind:
 *   COPY from the context      the same files here;
 *   npm ci                     this checkout's node_modules (`make` installs it with npm ci);
 *   npm run build              this checkout's dist/ (kept current by test/support/global-setup.ts);
 *   npm pack                   this checkout packed (test/support/packed.ts), without the prepack build;
 *   npm install --omit=dev T   npm's own install of that tarball into the WORKDIR, with no package.json
 *                              there first: over a copy of the install npm made before for the same
 *                              dependencies (packed.ts keeps it under .cache/package-test/), so that
 *                              isolated-vm compiles once per lockfile, Node and npm, not every run;
 *   apt-get                    nothing that reaches the runtime stage.
 * A step it does not know fails with a message saying so, rather than being skipped: the replay must
 * not drift from the Dockerfile.
 */
import { execFile } from 'node:child_process'
import { chmod, cp, mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, dirname, join, posix, relative } from 'node:path'
import { promisify } from 'node:util'
import { type Dockerfile, type Instruction, type Stage, envPairs, healthcheckCommand } from './deploy/dockerfile.js'
import { INSTALL_TARBALL } from './deploy/dockerfile-rules.js'
import { DockerIgnore } from './deploy/dockerignore.js'
import { openTempDir, pack, reinstall } from './packed.js'

const run = promisify(execFile)

export interface RuntimeImage {
  /** The image's filesystem root, a temp folder. */
  root: string
  /** WORKDIR, mapped into root. */
  workdir: string
  uid: number
  gid: number
  /** The ENV lines, in order. */
  env: Record<string, string>
  /** ENTRYPOINT + CMD, with image paths and published ports mapped. */
  command: string[]
  /** The HEALTHCHECK command, mapped likewise. */
  healthcheck: string[]
  /** Whether npm installed the tarball over an install it made before (false: fresh, isolated-vm compiled). */
  reused: boolean
  remove(): Promise<void>
}

export interface ReplayOptions {
  /** The build context: this checkout. */
  context: string
  /** Container ports and the loopback ports that stand in for them (as `docker run -p` would). */
  ports: Record<number, number>
}

/** What one build-stage step leaves at an image path, and where that is on this machine. */
type Produced = { kind: 'context' | 'dist' | 'node_modules' | 'tarball' | 'installed'; path: string }

export class ReplayError extends Error {}

/** Maps image paths (`/opt/x`, `unix:/run/x`) into `root`, and `HOST:PORT` of a published port to loopback. */
export function mapArgument(arg: string, root: string, ports: Record<number, number>): string {
  if (arg.startsWith('/')) return join(root, arg)
  if (arg.startsWith('unix:/')) return `unix:${join(root, arg.slice('unix:'.length))}`
  const port = /^(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:]+\]|localhost):(\d+)$/i.exec(arg)
  if (port && ports[Number(port[1])] !== undefined) return `127.0.0.1:${ports[Number(port[1])]}`
  return arg
}

export async function replayRuntimeStage(file: Dockerfile, options: ReplayOptions): Promise<RuntimeImage> {
  const stage = file.stages.at(-1) as Stage
  const ignore = new DockerIgnore(await readFile(join(options.context, '.dockerignore'), 'utf8').catch(() => ''))
  const built = new Map<string, Produced>()
  // In the temp folder, where the build stage's install is made too: the COPY --from steps hard-link it
  // (one filesystem; the suite keeps TMPDIR on a tmpfs, test/support/global-setup.ts).
  const root = await mkdtemp(join(tmpdir(), 'hookd-image-'))
  await chmod(root, 0o755)
  const made: string[] = []
  const image: RuntimeImage = {
    root,
    workdir: root,
    uid: 0,
    gid: 0,
    env: {},
    command: [],
    healthcheck: [],
    reused: true,
    remove: async () => {
      for (const dir of [root, ...made]) await rm(dir, { recursive: true, force: true })
    },
  }
  try {
    let workdir = '/'
    let entrypoint: string[] = []
    let cmd: string[] = []
    let healthcheck: string[] = []
    const map = (arg: string): string => mapArgument(arg, root, options.ports)
    for (const ins of stage.instructions) {
      switch (ins.keyword) {
        case 'ENV':
          Object.assign(image.env, envPairs(ins))
          break
        case 'WORKDIR':
          workdir = posix.resolve(workdir, ins.args[0] as string)
          await mkdir(join(root, workdir), { recursive: true, mode: 0o755 })
          break
        case 'COPY': {
          const [sources, dest] = [ins.args.slice(0, -1), ins.args.at(-1) as string]
          const target = posix.resolve(workdir, dest)
          for (const source of sources) {
            const into = sources.length > 1 || dest.endsWith('/') ? posix.join(target, posix.basename(source)) : target
            if (ins.flags.from !== undefined) {
              await fromBuildStage(file, ins, source, built, options, image, made)
            } else {
              if (ignore.ignores(source)) throw new ReplayError(`line ${ins.line}: COPY ${source}: .dockerignore leaves it out of the build context`)
              await copyContext(options.context, source, join(root, into), ignore)
              continue
            }
            const produced = built.get(posix.resolve(buildWorkdir(file, ins), source)) as Produced
            // Hard links on one filesystem: the install costs no copy. Either way the files stay root's
            // (cp runs as root), so the image's user cannot change them. A folder's contents land in the
            // destination, as Docker copies them.
            const link = (await stat(produced.path)).dev === (await stat(root)).dev
            if ((await stat(produced.path)).isDirectory()) {
              await mkdir(join(root, into), { recursive: true, mode: 0o755 })
              await run('cp', [link ? '-al' : '-a', `${produced.path}/.`, join(root, into)])
            } else {
              await mkdir(dirname(join(root, into)), { recursive: true, mode: 0o755 })
              await run('cp', [link ? '-al' : '-a', produced.path, join(root, into)])
            }
          }
          break
        }
        case 'RUN': {
          // Runs as root (RUN comes before USER), with the image's absolute paths mapped into root.
          const text = ins.exec ? ins.args.join(' ') : ins.raw
          const mapped = text.replace(/(^|\s)(\/[^\s;&|]*)/g, (_, pre: string, p: string) => pre + join(root, p))
          await run('sh', ['-c', mapped])
          break
        }
        case 'USER': {
          const m = /^(\d+)(?::(\d+))?$/.exec(ins.args[0] ?? '')
          if (!m) throw new ReplayError(`line ${ins.line}: USER ${ins.args[0]} is not numeric; the replay runs numeric uids only`)
          image.uid = Number(m[1])
          image.gid = Number(m[2] ?? m[1])
          break
        }
        case 'ENTRYPOINT':
          entrypoint = ins.exec ? ins.args : ['/bin/sh', '-c', ins.raw]
          cmd = []
          break
        case 'CMD':
          cmd = ins.exec ? ins.args : ['/bin/sh', '-c', ins.raw]
          break
        case 'HEALTHCHECK':
          healthcheck = healthcheckCommand(ins)?.argv ?? []
          break
        case 'EXPOSE':
        case 'LABEL':
        case 'STOPSIGNAL':
          break
        default:
          throw new ReplayError(`line ${ins.line}: the runtime-stage replay does not know ${ins.keyword}; teach test/support/runtime-stage.ts`)
      }
    }
    image.workdir = join(root, workdir)
    image.command = [...entrypoint, ...cmd].map(map)
    image.healthcheck = healthcheck.map(map)
    return image
  } catch (err) {
    await image.remove()
    throw err
  }
}

function buildWorkdir(file: Dockerfile, copy: Instruction): string {
  const stage = buildStage(file, copy)
  let workdir = '/'
  for (const ins of stage.instructions) if (ins.keyword === 'WORKDIR') workdir = posix.resolve(workdir, ins.args[0] as string)
  return workdir
}

function buildStage(file: Dockerfile, copy: Instruction): Stage {
  const from = copy.flags.from as string
  const stage = file.stages.find((s) => s.name === from || String(s.index) === from)
  if (!stage) throw new ReplayError(`line ${copy.line}: COPY --from=${from} names no earlier stage`)
  return stage
}

/**
 * Records, for the build stage of `copy`, where each of its outputs is on this machine, making the
 * tarball and its install the first time; sets `image.reused` to whether npm installed over a kept copy.
 */
async function fromBuildStage(
  file: Dockerfile,
  copy: Instruction,
  source: string,
  built: Map<string, Produced>,
  options: ReplayOptions,
  image: RuntimeImage,
  made: string[],
): Promise<void> {
  const stage = buildStage(file, copy)
  if (built.size === 0) {
    let workdir = '/'
    for (const ins of stage.instructions) {
      if (ins.keyword === 'WORKDIR') workdir = posix.resolve(workdir, ins.args[0] as string)
      else if (ins.keyword === 'COPY') {
        const sources = ins.args.slice(0, -1)
        const dest = posix.resolve(workdir, ins.args.at(-1) as string)
        for (const s of sources) {
          const at = sources.length > 1 || (ins.args.at(-1) as string).endsWith('/') ? posix.join(dest, posix.basename(s)) : dest
          built.set(at, { kind: 'context', path: join(options.context, s) })
        }
      } else if (ins.keyword === 'RUN') {
        const text = ins.raw.replace(/\s+/g, ' ')
        const installs = INSTALL_TARBALL.exec(text)
        if (/^apt-get update && apt-get install /.test(text)) continue
        if (/^npm ci\b/.test(text)) built.set(posix.join(workdir, 'node_modules'), { kind: 'node_modules', path: join(options.context, 'node_modules') })
        else if (/^npm run build$/.test(text)) built.set(posix.join(workdir, 'dist'), { kind: 'dist', path: join(options.context, 'dist') })
        else if (/^npm pack --ignore-scripts --pack-destination \S+$/.test(text)) {
          const into = await openTempDir('hookd-image-pack-')
          made.push(into)
          const tarball = await pack(into)
          built.set(posix.join(posix.resolve(workdir, text.split(' ').at(-1) as string), basename(tarball)), { kind: 'tarball', path: tarball })
        } else if (installs) {
          const pattern = posix.resolve(workdir, installs[1] as string)
          const glob = new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*')}$`)
          const tarball = [...built.entries()].find(([at, p]) => p.kind === 'tarball' && glob.test(at))?.[1].path
          if (!tarball) throw new ReplayError(`line ${ins.line}: no earlier step of the build stage makes ${pattern}`)
          const install = await reinstall(tarball, 'hoisted', { extra: ['--omit=dev'], manifest: null })
          made.push(install.project)
          image.reused = install.reused
          built.set(workdir, { kind: 'installed', path: install.project })
        } else throw new ReplayError(`line ${ins.line}: the replay does not know what 'RUN ${text}' leaves behind; teach test/support/runtime-stage.ts`)
      } else if (!['ENV', 'ARG', 'LABEL', 'USER'].includes(ins.keyword)) {
        throw new ReplayError(`line ${ins.line}: the replay does not know build-stage ${ins.keyword}; teach test/support/runtime-stage.ts`)
      }
    }
  }
  const at = posix.resolve(buildWorkdir(file, copy), source)
  if (!built.has(at)) throw new ReplayError(`line ${copy.line}: COPY --from=${copy.flags.from} ${source}: the build stage makes no ${at}`)
}

/** Copies a context path into the image, leaving out what .dockerignore leaves out. */
async function copyContext(context: string, source: string, to: string, ignore: DockerIgnore): Promise<void> {
  const from = join(context, source)
  if (!(await stat(from).catch(() => undefined))) throw new ReplayError(`COPY ${source}: not in the build context ${context}`)
  await mkdir(dirname(to), { recursive: true, mode: 0o755 })
  await cp(from, to, { recursive: true, filter: (src) => !ignore.ignores(relative(context, src).split('\\').join('/')) })
}
