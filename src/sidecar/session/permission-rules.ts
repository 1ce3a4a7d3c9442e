/**
 * What a hook that declares its permissions (hook.json "permissions", src/protocol/hook-permissions.ts)
 * may call through ctx. Every capability record (src/protocol/capabilities.ts) names the permission it
 * needs, and each permission has one rule here, so a new capability cannot be made without saying what a
 * hook must declare for it. The session's policy is judged first (policy.ts): what the session refuses
 * is refused in its words; what it allows is then refused here when the hook did not declare it, in
 * words that name the hook, the call, what its hook.json lacks and what to add. A hook without the
 * block is not judged here at all: it gets what the session allows, as before.
 *
 * ctx.env is data, not a call: `envRefusals` gives, for each name the session would show but the hook
 * did not declare, the message the prelude throws when the hook reads it.
 */
import * as z from 'zod'
import { type CapabilityArgs, type CapabilityName, type PermissionNeed, type PermissionNeeds, capabilityRecord, originOf, quoted } from '../../protocol/capabilities.js'
import type { HookPermissions } from '../../protocol/hook-permissions.js'
import { confinedPath } from './policy.js'

/** The words every refusal here ends with: where the grant is written. */
const IN_JSON = 'in its hook.json "permissions"'

/** One permission's rule: what it reads of the arguments (checked again here), and why it refuses, if it does. */
interface Rule<P extends PermissionNeed> {
  reads: z.ZodType<PermissionNeeds[P]>
  judge(granted: HookPermissions, hook: string, call: string, args: PermissionNeeds[P]): string | undefined
}

const first = <T extends z.ZodType>(schema: T) => z.tuple([schema]).rest(z.unknown())

/** The rules, one per permission: a permission missing here is a compile error. */
const RULES: { readonly [P in PermissionNeed]: Rule<P> } = {
  'files-read': { reads: first(z.string()), judge: (granted, hook, call, [path]) => fileRefusal(granted, hook, call, path, 'read') },
  'files-write': { reads: first(z.string()), judge: (granted, hook, call, [path]) => fileRefusal(granted, hook, call, path, 'write') },
  origin: {
    reads: first(z.string()),
    judge: (granted, hook, call, [url]) => {
      const origin = originOf(url)
      // The session's rule has refused what is not an http(s) URL already.
      if (origin === undefined || granted.origins.includes(origin)) return undefined
      return `${call}(${quoted(url)}) refused: hook '${hook}' does not declare origin ${origin} ${IN_JSON}; add "${origin}" to "origins" there if it needs it`
    },
  },
  confirm: {
    reads: z.array(z.unknown()).readonly(),
    judge: (granted, hook, call) => (granted.confirm ? undefined : `${call} refused: hook '${hook}' does not declare "confirm": true ${IN_JSON}; add it there if the hook asks the person`),
  },
  notify: {
    reads: z.array(z.unknown()).readonly(),
    judge: (granted, hook, call) => (granted.notify ? undefined : `${call} refused: hook '${hook}' does not declare "notify": true ${IN_JSON}; add it there if the hook notifies the person`),
  },
}

function fileRefusal(granted: HookPermissions, hook: string, call: string, path: string, need: 'read' | 'write'): string | undefined {
  const asked = `${call}(${quoted(path)}) refused: hook '${hook}'`
  if (granted.files === 'none') return `${asked} declares no file access ${IN_JSON}; add "files": "${need === 'write' ? 'read-write' : 'read'}" there if it needs it`
  if (need === 'write' && granted.files === 'read') return `${asked} declares "files": "read" ${IN_JSON}, which does not write; make it "read-write" there if the hook writes files`
  if (granted.paths === undefined) return undefined
  const confined = confinedPath(path)
  // The session's rule has refused what leads outside the workdir already.
  if (!confined.ok) return undefined
  const normal = confined.path.split('\\').join('/')
  if (granted.paths.some((glob) => globMatches(glob, normal))) return undefined
  return `${asked} declares no path that matches ${quoted(normal)} ${IN_JSON} (its "paths": ${granted.paths.join(', ')}); add a glob for it to "paths" there if it needs it`
}

/**
 * Why a hook's permissions refuse this call, or undefined when they allow it (or it declares none).
 * The call's arguments were validated against its record already.
 */
export function permissionRefusal<N extends CapabilityName>(granted: HookPermissions | undefined, hook: string, name: N, args: CapabilityArgs<N>): string | undefined {
  if (granted === undefined) return undefined
  return judged(capabilityRecord(name).permission, granted, hook, `ctx.${name}`, args)
}

function judged<P extends PermissionNeed>(need: P, granted: HookPermissions, hook: string, call: string, args: unknown): string | undefined {
  const rule: Rule<P> | undefined = Object.hasOwn(RULES, need) ? RULES[need] : undefined
  if (!rule) return `${call} refused: hookd has no permission rule for '${need}', and allows nothing it does not judge`
  const read = rule.reads.safeParse(args)
  if (!read.success) return `${call} refused: its arguments are not what the '${need}' permission judges`
  return rule.judge(granted, hook, call, read.data)
}

/**
 * For a hook that declares its permissions: each env name the session would show it (`names`: the
 * session's allowlist and the values it has) that it did not declare, with the message reading it
 * throws. Undefined for a hook without the block, which sees the session's whole env.
 */
export function envRefusals(granted: HookPermissions | undefined, hook: string, names: Iterable<string>): Record<string, string> | undefined {
  if (granted === undefined) return undefined
  const out: Record<string, string> = {}
  for (const name of names) {
    if (granted.env.includes(name) || Object.hasOwn(out, name)) continue
    out[name] = `ctx.env.${name} refused: hook '${hook}' does not declare env name ${name} ${IN_JSON}; add "${name}" to "env" there if it needs it`
  }
  return out
}

/** The session's env values a hook sees: the declared names only, for a hook that declares its permissions. */
export function grantedEnv(granted: HookPermissions | undefined, env: Readonly<Record<string, string>>): Record<string, string> {
  if (granted === undefined) return { ...env }
  const out: Record<string, string> = {}
  for (const name of granted.env) if (Object.hasOwn(env, name)) out[name] = env[name] as string
  return out
}

/** One step of a glob: a character, `?`, `*` (within a segment), `**` (anything); `skip`: where an epsilon edge leads. */
type GlobStep = { kind: 'char'; c: string; skip?: number } | { kind: 'one' | 'star' | 'any'; skip?: number }

const compiled = new Map<string, GlobStep[]>()

/**
 * True when `path` (normalised, '/'-separated, relative to the workdir) matches `glob`: `*` and `?`
 * within one segment, `**` across any number of them (`**\/x` also matches `x`), and `dir/**` also
 * matches `dir` itself, so a hook may list the folder it may read. Matched by a set of states, never
 * by backtracking: the time is the path's length times the glob's, whatever either holds.
 */
export function globMatches(glob: string, path: string): boolean {
  let steps = compiled.get(glob)
  if (!steps) {
    steps = globSteps(glob)
    if (compiled.size > 1024) compiled.clear()
    compiled.set(glob, steps)
  }
  // The states alive after each character, without allocating per character: `seen` stamps the
  // states added for the current character (`gen`), `stack` walks the edges that read nothing.
  const n = steps.length
  const seen = new Uint32Array(n + 1)
  const stack: number[] = []
  let gen = 1
  let cur: number[] = []
  let next: number[] = []
  const add = (list: number[], from: number): void => {
    stack.push(from)
    while (stack.length) {
      const i = stack.pop() as number
      if (seen[i] === gen) continue
      seen[i] = gen
      list.push(i)
      const step = steps[i]
      if (!step) continue
      // Past a star (it may match nothing), across a skip.
      if (step.kind === 'star' || step.kind === 'any') stack.push(i + 1)
      if (step.skip !== undefined) stack.push(step.skip)
    }
  }
  add(cur, 0)
  for (const ch of path) {
    gen += 1
    next.length = 0
    for (const i of cur) {
      const step = steps[i]
      if (!step) continue
      if (step.kind === 'char') {
        if (step.c === ch) add(next, i + 1)
      } else if (step.kind === 'one') {
        if (ch !== '/') add(next, i + 1)
      } else if (step.kind === 'star') {
        if (ch !== '/') add(next, i)
      } else add(next, i)
    }
    if (next.length === 0) return false
    ;[cur, next] = [next, cur]
  }
  return cur.includes(n)
}

function globSteps(glob: string): GlobStep[] {
  const g = glob.split('\\').join('/').replace(/^(?:\.\/)+/, '').replace(/\/+$/, '')
  const steps: GlobStep[] = []
  for (let i = 0; i < g.length; i++) {
    const c = g[i] as string
    const atSegmentStart = i === 0 || g[i - 1] === '/'
    if (c === '*' && g[i + 1] === '*' && atSegmentStart && g[i + 2] === '/') {
      // "**/": any folders, or none.
      const at = steps.length
      steps.push({ kind: 'any', skip: at + 2 }, { kind: 'char', c: '/' })
      i += 2
    } else if (c === '/' && g[i + 1] === '*' && g[i + 2] === '*' && i + 3 === g.length) {
      // A trailing "/**": everything inside, or the folder itself.
      const at = steps.length
      steps.push({ kind: 'char', c: '/', skip: at + 2 }, { kind: 'any' })
      i += 2
    } else if (c === '*' && g[i + 1] === '*') {
      steps.push({ kind: 'any' })
      i += 1
    } else if (c === '*') steps.push({ kind: 'star' })
    else if (c === '?') steps.push({ kind: 'one' })
    else steps.push({ kind: 'char', c })
  }
  return steps
}
