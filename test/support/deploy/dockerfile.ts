/**
 * A small Dockerfile parser, enough to check hookd's Dockerfile and to replay its runtime stage without
 * Docker (no Docker engine runs on the machines that test hookd). It follows the Dockerfile reference
 * for what our file uses: parser directives and comments, backslash continuations, instructions in any
 * case, exec (JSON) and shell forms, `FROM image [AS name]`, flags such as `COPY --from=build`,
 * `ENV k=v`, `ARG`, and `HEALTHCHECK [options] CMD ...`. Heredocs and `ONBUILD` are not supported and
 * are reported as errors rather than misread.
 */

export interface Instruction {
  /** Upper case: FROM, RUN, COPY, ... */
  keyword: string
  /** The text after the keyword, continuations joined, as written. */
  raw: string
  /** `--name=value` flags before the arguments (`--link` gives 'true'). */
  flags: Record<string, string>
  /** The arguments after the flags: the JSON array's items in exec form, else words split on spaces. */
  args: string[]
  /** True when the arguments were a JSON array (exec form). */
  exec: boolean
  /** The 1-based line the instruction starts on. */
  line: number
}

export interface Stage {
  index: number
  /** The `AS` name, if any. */
  name: string | undefined
  /** The base image as written: `node:20.20.2-bookworm`, or the name of an earlier stage. */
  base: string
  from: Instruction
  /** Every instruction after FROM, in order. */
  instructions: Instruction[]
}

export interface Dockerfile {
  /** `# syntax=...` and other parser directives at the top. */
  directives: Record<string, string>
  /** ARGs declared before the first FROM. */
  globalArgs: Instruction[]
  stages: Stage[]
}

const KEYWORDS = new Set([
  'FROM', 'RUN', 'CMD', 'LABEL', 'EXPOSE', 'ENV', 'ADD', 'COPY', 'ENTRYPOINT', 'VOLUME', 'USER', 'WORKDIR', 'ARG', 'STOPSIGNAL',
  'HEALTHCHECK', 'SHELL', 'MAINTAINER',
])

export class DockerfileError extends Error {}

export function parseDockerfile(text: string): Dockerfile {
  const lines = text.split(/\r?\n/)
  const directives: Record<string, string> = {}
  let i = 0
  // Parser directives: `# key=value` lines at the very top, before any comment, blank line or instruction.
  for (; i < lines.length; i++) {
    const m = /^#\s*([a-zA-Z][\w-]*)\s*=\s*(\S.*?)\s*$/.exec(lines[i] as string)
    if (!m) break
    directives[(m[1] as string).toLowerCase()] = m[2] as string
  }
  const instructions: Instruction[] = []
  while (i < lines.length) {
    const start = i
    let line = lines[i++] as string
    if (/^\s*(#|$)/.test(line)) continue
    let raw = line
    // A trailing backslash continues the instruction; comment lines inside it are dropped.
    while (/\\\s*$/.test(raw)) {
      raw = raw.replace(/\\\s*$/, '')
      if (i >= lines.length) break
      line = lines[i++] as string
      while (/^\s*#/.test(line) && i < lines.length) line = lines[i++] as string
      raw += ` ${line.trim()}`
    }
    instructions.push(instruction(raw.trim(), start + 1))
  }
  const file: Dockerfile = { directives, globalArgs: [], stages: [] }
  for (const ins of instructions) {
    if (ins.keyword === 'FROM') {
      const [base, as, name, ...extra] = ins.args
      if (!base || (as !== undefined && (as.toUpperCase() !== 'AS' || !name)) || extra.length > 0) {
        throw new DockerfileError(`line ${ins.line}: FROM takes an image and an optional 'AS name'; got '${ins.raw}'`)
      }
      file.stages.push({ index: file.stages.length, name, base, from: ins, instructions: [] })
    } else if (file.stages.length === 0) {
      if (ins.keyword !== 'ARG') throw new DockerfileError(`line ${ins.line}: only ARG may come before the first FROM; got ${ins.keyword}`)
      file.globalArgs.push(ins)
    } else {
      ;(file.stages.at(-1) as Stage).instructions.push(ins)
    }
  }
  if (file.stages.length === 0) throw new DockerfileError('no FROM instruction: a Dockerfile needs at least one stage')
  return file
}

function instruction(text: string, line: number): Instruction {
  const m = /^(\S+)\s*(.*)$/s.exec(text) as RegExpExecArray
  const keyword = (m[1] as string).toUpperCase()
  if (!KEYWORDS.has(keyword)) throw new DockerfileError(`line ${line}: unknown or unsupported instruction '${m[1]}'`)
  if (/<<-?\w/.test(m[2] as string) && (keyword === 'RUN' || keyword === 'COPY')) {
    throw new DockerfileError(`line ${line}: heredocs are not supported by this parser`)
  }
  let rest = m[2] as string
  const flags: Record<string, string> = {}
  // Flags come first: `COPY --from=build --chown=1000:1000 a b`, `HEALTHCHECK --interval=5s CMD ...`.
  for (;;) {
    const f = /^--([a-z-]+)(?:=(\S*))?\s*/.exec(rest)
    if (!f) break
    flags[f[1] as string] = f[2] ?? 'true'
    rest = rest.slice(f[0].length)
  }
  const exec = execForm(rest)
  return { keyword, raw: m[2] as string, flags, args: exec ?? rest.split(/\s+/).filter(Boolean), exec: exec !== undefined, line }
}

/** The items of a JSON array of strings, or undefined when `text` is shell form. */
function execForm(text: string): string[] | undefined {
  if (!text.startsWith('[')) return undefined
  try {
    const value: unknown = JSON.parse(text)
    if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value as string[]
  } catch {
    // Docker treats an unparsable array as shell form; so do we.
  }
  return undefined
}

/** `ENV a=1 b="x y"` (or the legacy `ENV a 1`) as pairs. */
export function envPairs(ins: Instruction): Record<string, string> {
  const out: Record<string, string> = {}
  if (!ins.raw.includes('=')) {
    const [key, ...value] = ins.raw.split(/\s+/)
    if (key) out[key] = value.join(' ')
    return out
  }
  for (const m of ins.raw.matchAll(/([A-Za-z_][\w.-]*)=("(?:[^"\\]|\\.)*"|'[^']*'|\S*)/g)) {
    const value = m[2] as string
    out[m[1] as string] = /^["']/.test(value) ? value.slice(1, -1).replace(/\\(.)/g, '$1') : value
  }
  return out
}

/** The command of `HEALTHCHECK [options] CMD ...`: exec-form items, or ['/bin/sh', '-c', text]; undefined for NONE. */
export function healthcheckCommand(ins: Instruction): { exec: boolean; argv: string[] } | undefined {
  const m = /^(?:--[a-z-]+=\S+\s+)*(CMD|NONE)\b\s*(.*)$/is.exec(ins.raw)
  if (!m) throw new DockerfileError(`line ${ins.line}: HEALTHCHECK needs CMD or NONE; got '${ins.raw}'`)
  if ((m[1] as string).toUpperCase() === 'NONE') return undefined
  const exec = execForm(m[2] as string)
  return exec ? { exec: true, argv: exec } : { exec: false, argv: ['/bin/sh', '-c', m[2] as string] }
}
