/**
 * The shim's table of agents, written from the registry (registry.ts, each definition's `shim`): how it
 * refuses a call for each agent when hookd cannot answer, and where it finds the agent's project. Both
 * forms of the shim run without Node, so each keeps the table as code of its own between two marker
 * lines: native/hookd-hook.c in C, bin/hookd-hook in sh. `npm run shim-forms` (scripts/shim-forms.ts)
 * writes the blocks; test/unit/shim-forms.test.ts fails when a shim's block is not what this writes.
 * An agent whose shim form is the default (the reason on stderr, exit 2, no project variable or
 * marker) adds nothing to either block.
 */
import { type AgentDefinition, REASON } from './agent-definition.js'

export const BEGIN = 'hookd:agents begin'
export const END = 'hookd:agents end'

const NOTE = "written from src/agents/registry.ts by 'npm run shim-forms'; test/unit/shim-forms.test.ts checks it"

/** The default refusal: the reason on stderr, exit 2 (Claude Code, Codex and Gemini CLI read it so). */
export const DEFAULT_EXIT = 2

/** Text that goes into both shims' code as it is: printable ASCII, none of the characters either quotes specially. */
export const SAFE_TEXT = /^[\x20-\x7e]*$/
const UNSAFE = /['%\\]|\*\//

/** Why `agent`'s shim form cannot be written into the shims' code, or undefined when it can. */
export function shimFormProblem(agent: AgentDefinition): string | undefined {
  const { refusal, projectVariable, projectMarker, docs } = agent.shim
  if (!/^[a-z][a-z0-9-]*$/.test(agent.id)) return `the id '${agent.id}' is not lower-case letters, digits and '-'`
  if (!Number.isInteger(refusal.exit) || refusal.exit < 0 || refusal.exit > 255) return `the refusal's exit code ${refusal.exit} is not 0-255`
  if (refusal.stdout !== undefined && (!SAFE_TEXT.test(refusal.stdout) || UNSAFE.test(refusal.stdout) || !refusal.stdout.includes(`"${REASON}"`))) {
    return `the refusal's stdout must be printable ASCII without ', %, \\ or */, holding "${REASON}" where the reason goes`
  }
  if (projectVariable !== undefined && !/^[A-Z_][A-Z0-9_]*$/.test(projectVariable)) return `'${projectVariable}' is not an environment variable name`
  if (projectMarker !== undefined && !/^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/.test(projectMarker)) return `the project marker '${projectMarker}' is not a relative path of plain names`
  if (!SAFE_TEXT.test(docs.why) || UNSAFE.test(docs.why)) return 'the why of its refusal must be printable ASCII without \', %, \\ or */'
  return undefined
}

const isDefault = (a: AgentDefinition): boolean => a.shim.refusal.stdout === undefined && a.shim.refusal.exit === DEFAULT_EXIT

/** A C string literal of plain ASCII text (shimFormProblem has checked it). */
const cString = (text: string): string => JSON.stringify(text)

/** The C block: project_variable(), project_marker(), agent_refusal(reason). */
export function cBlock(agents: readonly AgentDefinition[]): string {
  const is = (a: AgentDefinition): string => `strcmp(agent, ${cString(a.id)}) == 0`
  const lines = [
    `/* ${BEGIN}: ${NOTE}. */`,
    '',
    '/* The agent\'s own variable naming the project it runs in, where it sets one for its hooks. */',
    'static const char *project_variable(void) {',
    ...agents.filter((a) => a.shim.projectVariable !== undefined).map((a) => `  if (${is(a)}) return ${cString(a.shim.projectVariable as string)};`),
    '  return NULL;',
    '}',
    '',
    '/* For an agent that names no project: the file whose nearest folder up from the working one is the project\'s. */',
    'static const char *project_marker(void) {',
    ...agents.filter((a) => a.shim.projectMarker !== undefined).map((a) => `  if (${is(a)}) return ${cString(a.shim.projectMarker as string)};`),
    '  return NULL;',
    '}',
    '',
    '/* Says `reason` the way the agent reads a refusal, and returns the exit code that goes with it. */',
    'static int agent_refusal(const char *reason) {',
  ]
  for (const a of agents.filter((x) => !isDefault(x))) {
    const { exit, stdout } = a.shim.refusal
    lines.push(`  /* ${a.shim.docs.why}. */`, `  if (${is(a)}) {`)
    if (stdout === undefined) {
      lines.push('    fprintf(stderr, "%s\\n", reason);')
    } else {
      const parts = stdout.split(`"${REASON}"`)
      parts.forEach((part, i) => {
        const text = `${i > 0 ? '"' : ''}${part}${i < parts.length - 1 ? '"' : '\n'}`
        lines.push(`    fputs(${cString(text)}, stdout);`)
        if (i < parts.length - 1) lines.push('    json_string(stdout, reason);')
      })
    }
    lines.push(`    return ${exit};`, '  }')
  }
  lines.push('  fprintf(stderr, "%s\\n", reason);', `  return ${DEFAULT_EXIT};`, '}', `/* ${END} */`)
  return lines.join('\n')
}

/** The sh block: agent_project (sets $project), agent_marker (sets $marker), agent_refusal REASON (exits). */
export function shBlock(agents: readonly AgentDefinition[]): string {
  const lines = [
    `# ${BEGIN}: ${NOTE}.`,
    '',
    "# The agent's own variable naming the project it runs in, where it sets one for its hooks.",
    'agent_project() {',
    '  case $agent in',
    ...agents.filter((a) => a.shim.projectVariable !== undefined).map((a) => `    ${a.id}) project=\${${a.shim.projectVariable as string}:-} ;;`),
    '  esac',
    '}',
    '',
    "# For an agent that names no project: the file whose nearest folder up from the working one is the project's.",
    'agent_marker() {',
    '  case $agent in',
    ...agents.filter((a) => a.shim.projectMarker !== undefined).map((a) => `    ${a.id}) marker='${a.shim.projectMarker as string}' ;;`),
    "    *) marker='' ;;",
    '  esac',
    '}',
    '',
    '# Says the reason $1 the way the agent reads a refusal, and exits with the code that goes with it.',
    'agent_refusal() {',
    '  case $agent in',
  ]
  for (const a of agents.filter((x) => !isDefault(x))) {
    const { exit, stdout } = a.shim.refusal
    lines.push(`    ${a.id})`, `      # ${a.shim.docs.why}.`)
    if (stdout === undefined) {
      lines.push('      echo "$1" >&2')
    } else {
      const parts = stdout.split(REASON)
      lines.push('      r=$(json_string "$1")', `      printf '${parts.join('%s')}\\n'${' "$r"'.repeat(parts.length - 1)}`)
    }
    lines.push(`      exit ${exit}`, '      ;;')
  }
  lines.push('  esac', '  echo "$1" >&2', `  exit ${DEFAULT_EXIT}`, '}', `# ${END}`)
  return lines.join('\n')
}

/**
 * `text` (a shim's source) with its block between the marker lines replaced by `block`; undefined when
 * it has not exactly one pair of them.
 */
export function withBlock(text: string, block: string): string | undefined {
  const lines = text.split('\n')
  const begin = lines.flatMap((l, i) => (l.includes(BEGIN) ? [i] : []))
  const end = lines.flatMap((l, i) => (l.includes(END) ? [i] : []))
  if (begin.length !== 1 || end.length !== 1 || (end[0] as number) < (begin[0] as number)) return undefined
  return [...lines.slice(0, begin[0]), block, ...lines.slice((end[0] as number) + 1)].join('\n')
}
