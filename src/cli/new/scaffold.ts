/**
 * What `hookd new` writes: a hook folder with typed handlers for the chosen points, its hook.json, and
 * one test case per behaviour, which pass as written. Pure: the files as text, by path.
 *
 * Each point gets a small, real handler (never an empty function), so that its case has something to check and
 * the author sees the shape of an answer: beforeToolExecute refuses blocked shell commands, afterRun
 * appends to a log, and so on.
 */
import type { StepPointName } from '../../protocol/points/point-spec.js'
import { getPoint, isGate } from '../../protocol/points/points.js'

/** The points `hookd new` writes handlers for: the step points, which hookd-sandbox/hook types. */
export const SCAFFOLD_POINTS: readonly StepPointName[] = ['beforeRun', 'afterRun', 'beforeModelRequest', 'afterModelResponse', 'beforeToolExecute', 'afterToolExecute']

interface PointTemplate {
  /** Config fields: name, TypeScript type, default value. */
  config: Array<[string, string, unknown]>
  /** What its handler touches and decides, for hook.json "permissions" (merged over the chosen points). */
  permissions: TemplatePermissions
  /** The handler's parameters after ctx. */
  params: string
  /** The handler's body lines (two-space indented inside the method). */
  body: (name: string) => string[]
  /** Test cases: file name (without .json) -> the case. */
  cases: (name: string) => Record<string, unknown>
}

/** A template's share of hook.json "permissions" (src/protocol/hook-permissions.ts). */
interface TemplatePermissions {
  files?: 'read-write'
  paths?: string[]
  decide?: { refuse?: true; rewriteResults?: true; rewriteModelText?: true; addContext?: true }
}

const TEMPLATES: Record<StepPointName, PointTemplate> = {
  beforeRun: {
    config: [],
    permissions: {},
    params: 'event',
    body: () => ["ctx.log('run', event.sessionId, 'starts with', event.modelId)"],
    cases: () => ({
      beforeRun: {
        name: 'logs the start of a run',
        point: 'beforeRun',
        payload: { sessionId: 'run-1', agentId: 'careful', modelId: 'claude' },
        expect: { result: {}, logs: ['run run-1 starts with claude'] },
      },
    }),
  },
  afterRun: {
    config: [['runLog', 'string', 'logs/runs.log']],
    permissions: { files: 'read-write', paths: ['logs/**'] },
    params: 'event',
    body: () => ["ctx.file.append(ctx.config.runLog, ctx.session.id + ' ended: ' + event.reason + '\\n')"],
    cases: () => ({
      afterRun: {
        name: 'appends the end of the run to the log',
        point: 'afterRun',
        payload: { reason: 'end_turn' },
        ctx: { session: { id: 'run-1' }, files: { 'logs/runs.log': 'run-0 ended: error\n' } },
        expect: { files: { 'logs/runs.log': 'run-0 ended: error\nrun-1 ended: end_turn\n' } },
      },
    }),
  },
  beforeModelRequest: {
    config: [['note', 'string', 'Answer in plain English.']],
    permissions: { decide: { addContext: true } },
    params: 'request',
    body: () => ["return { system: request.system + '\\n\\n' + ctx.config.note }"],
    cases: () => ({
      beforeModelRequest: {
        name: "adds the note to this turn's system prompt",
        point: 'beforeModelRequest',
        payload: { system: 'You are careful.', model: 'claude', messages: [] },
        expect: { result: { system: 'You are careful.\n\nAnswer in plain English.' } },
      },
    }),
  },
  afterModelResponse: {
    config: [],
    permissions: { decide: { rewriteModelText: true } },
    params: 'response',
    body: () => [
      "const text = response.text.replace(/\\bsk-[A-Za-z0-9_-]{16,}/g, '[redacted]')",
      'if (text !== response.text) return { text }',
    ],
    cases: () => ({
      afterModelResponse: {
        name: 'redacts an API key in the answer',
        point: 'afterModelResponse',
        payload: { text: 'Use the key sk-abcdefghijklmnop1234 here.', thinking: '', toolCalls: [] },
        expect: { result: { text: 'Use the key [redacted] here.', thinking: '' } },
      },
    }),
  },
  beforeToolExecute: {
    config: [['blocked', 'string[]', ['rm -rf', 'git push --force']]],
    permissions: { decide: { refuse: true } },
    params: 'call',
    body: (name) => [
      "if (call.name !== 'shell') return",
      "const command = String(call.arguments.command ?? '')",
      'const blocked = ctx.config.blocked.find((pattern) => command.includes(pattern))',
      `if (blocked) return { allow: false, reason: "'" + blocked + "' is blocked by the ${name} hook" }`,
    ],
    cases: (name) => ({
      'beforeToolExecute-refuses': {
        name: 'refuses a blocked shell command',
        point: 'beforeToolExecute',
        payload: { id: 'c1', name: 'shell', arguments: { command: 'rm -rf build' } },
        expect: {
          result: { allow: false, reason: `'rm -rf' is blocked by the ${name} hook`, refusedBy: name, arguments: { command: 'rm -rf build' } },
        },
      },
      'beforeToolExecute-allows': {
        name: 'lets other commands through, and follows its config',
        point: 'beforeToolExecute',
        payload: { id: 'c2', name: 'shell', arguments: { command: 'rm -rf build' } },
        ctx: { config: { blocked: ['git push --force'] } },
        expect: { result: { allow: true }, match: 'partial' },
      },
    }),
  },
  afterToolExecute: {
    config: [['maxChars', 'number', 20000]],
    permissions: { decide: { rewriteResults: true } },
    params: 'call, result',
    body: () => [
      'if (result.text.length <= ctx.config.maxChars) return',
      "ctx.log(call.name, 'returned', result.text.length, 'characters; the model reads', ctx.config.maxChars)",
      "return { text: result.text.slice(0, ctx.config.maxChars) + '\\n[truncated]' }",
    ],
    cases: () => ({
      afterToolExecute: {
        name: 'truncates a long tool result',
        point: 'afterToolExecute',
        payload: { call: { id: 'c1', name: 'read_file', arguments: { path: 'big.txt' } }, result: { text: 'abcdefghijklmnop', isError: false } },
        ctx: { config: { maxChars: 5 } },
        expect: { result: { text: 'abcde\n[truncated]', isError: false }, logs: ['read_file returned 16 characters; the model reads 5'] },
      },
    }),
  },
}

export interface ScaffoldOptions {
  name: string
  points: readonly StepPointName[]
  typescript: boolean
}

/**
 * Whether a hook of these points guards a gate (beforeToolExecute, and the event gates it serves as
 * tool:gate): then its hook.json says `"onError": "refuse"`, so that a guard with a bug refuses the
 * call instead of being skipped and letting it through.
 */
export function failsClosed(points: readonly StepPointName[]): boolean {
  return points.some((p) => {
    const point = getPoint(p)
    return point !== undefined && isGate(point)
  })
}

/** The files of a new hook folder, by path relative to it. */
export function scaffold({ name, points, typescript }: ScaffoldOptions): Record<string, string> {
  const chosen = SCAFFOLD_POINTS.filter((p) => points.includes(p))
  const config = chosen.flatMap((p) => TEMPLATES[p].config)
  const files: Record<string, string> = {}
  files[typescript ? 'index.ts' : 'index.js'] = typescript ? tsSource(name, chosen, config) : jsSource(name, chosen, config)
  files['hook.json'] = json({
    description: `${name}: what this hook does`,
    ...(failsClosed(chosen) ? { onError: 'refuse' } : {}),
    permissions: permissionsOf(chosen),
    config: Object.fromEntries(config.map(([key, , value]) => [key, value])),
  })
  for (const point of chosen) {
    for (const [file, testCase] of Object.entries(TEMPLATES[point].cases(name))) files[`tests/${file}.json`] = json(testCase)
  }
  if (typescript) {
    // For editors and `tsc -p`: hookd bundles with esbuild and reads no tsconfig.json.
    files['tsconfig.json'] = json({
      compilerOptions: { strict: true, target: 'es2022', module: 'preserve', moduleResolution: 'bundler', noEmit: true, types: [], skipLibCheck: true },
      include: ['*.ts', 'lib/**/*.ts'],
    })
  }
  return files
}

/**
 * The hook.json "permissions" of a hook of these points: what each template's handler touches and
 * decides, together, and nothing more (a new hook starts with least privilege; its author widens it).
 */
export function permissionsOf(points: readonly StepPointName[]): TemplatePermissions {
  const out: TemplatePermissions = {}
  for (const point of points) {
    const p = TEMPLATES[point].permissions
    if (p.files) out.files = p.files
    if (p.paths) out.paths = [...(out.paths ?? []), ...p.paths]
    if (p.decide) out.decide = { ...out.decide, ...p.decide }
  }
  return out
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`
}

function handlers(name: string, points: readonly StepPointName[]): string[] {
  const lines: string[] = []
  for (const point of points) {
    const t = TEMPLATES[point]
    lines.push(`  ${point}(ctx, ${t.params}) {`, ...t.body(name).map((l) => `    ${l}`), '  },')
  }
  return lines
}

function configType(config: Array<[string, string, unknown]>): string {
  return config.length === 0 ? 'Record<string, never>' : `{ ${config.map(([key, type]) => `${key}: ${type}`).join('; ')} }`
}

function jsSource(name: string, points: readonly StepPointName[], config: Array<[string, string, unknown]>): string {
  return [
    '// @ts-check',
    `// The ${name} hook. Its config is in hook.json; its test cases are in tests/ (run them: hookd test ${name}).`,
    '// hookd runs this file as a CommonJS script in a fresh sandbox per call: ctx is its only way out.',
    '',
    `/** @typedef {${configType(config)}} Config */`,
    '',
    // On a const, not on `module.exports =`: TypeScript checks a typed const (a misspelt point, a wrong
    // answer), while it only uses a type on `module.exports` to infer the parameters.
    "/** @type {import('hookd-sandbox/hook').Hook<Config>} */",
    'const hook = {',
    ...handlers(name, points),
    '}',
    '',
    'module.exports = hook',
    '',
  ].join('\n')
}

function tsSource(name: string, points: readonly StepPointName[], config: Array<[string, string, unknown]>): string {
  return [
    `// The ${name} hook. Its config is in hook.json; its test cases are in tests/ (run them: hookd test ${name}).`,
    '// hookd bundles this file (and what it imports) and runs it in a fresh sandbox per call: ctx is its only way out.',
    "import type { Hook } from 'hookd-sandbox/hook'",
    '',
    `type Config = ${configType(config)}`,
    '',
    'const hook: Hook<Config> = {',
    ...handlers(name, points),
    '}',
    '',
    'export default hook',
    '',
  ].join('\n')
}
