/**
 * The points as a person reads them: the six step points by name, the event points by group (help text
 * and errors; docs/points.md lists every one). The catalog (src/protocol/points/points.ts) is what lists
 * points; this only sorts the event points into groups, by the part of the name before its first ':'.
 */
import { type AnyPoint, POINT_NAMES, type PointName, getPoint } from '../../protocol/points/points.js'
import { closestPoint } from '../../sidecar/hooks/hook-files.js'

/** Each group of event points and the name prefixes it gathers. Every event point is in exactly one. */
const GROUPS: ReadonlyArray<{ title: string; prefixes: readonly string[] }> = [
  { title: 'tools', prefixes: ['tool', 'tool-results', 'tool-state', 'tool-batch', 'validation'] },
  { title: 'MCP servers', prefixes: ['mcp'] },
  { title: 'sub-agents', prefixes: ['spawn', 'child'] },
  {
    title: 'model turns',
    prefixes: ['turn', 'system', 'context', 'stream', 'model', 'compact', 'provider', 'cache', 'history', 'pairing', 'replay', 'resume', 'oauth'],
  },
  { title: 'skills, content', prefixes: ['skills', 'content-ref', 'tracing'] },
  { title: 'run and session', prefixes: ['agent', 'session', 'execution', 'steer', 'decision', 'budget', 'tool-budget', 'repeat-guard', 'usage', 'output'] },
  { title: 'background tasks', prefixes: ['background'] },
  { title: "agents' own events", prefixes: ['permission', 'subagent', 'config', 'notification', 'file'] },
]

export interface PointGroup {
  title: string
  /** The name prefixes (before the first ':') it gathers, in the order help text shows them. */
  prefixes: readonly string[]
  /** The points whose handlers may change fields of the event. */
  changing: PointName[]
  /** The points whose handlers only observe. */
  observing: PointName[]
}

const spec = (name: PointName): AnyPoint => getPoint(name) as AnyPoint

/** The six step points, in the order of an agent's run loop. */
export const STEP_POINTS: readonly PointName[] = POINT_NAMES.filter((name) => spec(name).family === 'step')

/** The event points by group, in GROUPS' order; a point no group claims is in a last group 'other'. */
export function eventPointGroups(): PointGroup[] {
  const groups = [...GROUPS, { title: 'other', prefixes: [] as string[] }].map((g) => ({ ...g, changing: [] as PointName[], observing: [] as PointName[] }))
  for (const name of POINT_NAMES) {
    const point = spec(name)
    if (point.family !== 'event') continue
    const prefix = name.split(':')[0] as string
    const group = groups.find((g) => g.prefixes.includes(prefix)) ?? (groups[groups.length - 1] as (typeof groups)[number])
    ;(Object.keys(point.fields).length ? group.changing : group.observing).push(name)
  }
  return groups.filter((g) => g.changing.length + g.observing.length > 0).map(({ title, prefixes, changing, observing }) => ({ title, prefixes, changing, observing }))
}

/**
 * The points for `--help` and errors, `indent` spaces in: the step points by name, then one line per
 * group of event points naming those that may change something and counting those that observe.
 */
export function pointsText(indent: number): string {
  const pad = ' '.repeat(indent)
  const groups = eventPointGroups()
  const count = groups.reduce((n, g) => n + g.changing.length + g.observing.length, 0)
  const width = Math.max(...groups.map((g) => g.title.length)) + 2
  const lines = groups.flatMap((g) => {
    const parts = [
      ...(g.changing.length ? [`change: ${g.changing.join(', ')}`] : []),
      ...(g.observing.length ? [`observe (${g.observing.length}): ${patterns(g.observing, g.prefixes)}`] : []),
    ]
    return parts.flatMap((part, i) => wrap(`${pad}  ${(i === 0 ? g.title : '').padEnd(width)}`, part))
  })
  return [
    `${pad}step points (the handler returns what it changes):`,
    ...wrap(`${pad}  `, STEP_POINTS.join(', ')),
    `${pad}event points of hookable hosts and of the agents' own events (the handler changes the event it is given; ${count}):`,
    ...lines,
    `${pad}docs/points.md explains both kinds and lists every point.`,
  ].join('\n')
}

/** `text` after `lead`, wrapped at 100 columns after commas, continued under its first character. */
export function wrap(lead: string, text: string): string[] {
  const lines: string[] = []
  let line = lead
  for (const word of text.split(' ')) {
    if (line.length + 1 + word.length > 100 && line.trim() !== lead.trim()) {
      lines.push(line)
      line = ' '.repeat(lead.length) + word
    } else {
      line = line.length === lead.length ? line + word : `${line} ${word}`
    }
  }
  return [...lines, line]
}

/** `tool:*, validation:*`: the name patterns of some points in their group's order, for a line that does not list them all. */
function patterns(names: readonly PointName[], prefixes: readonly string[]): string {
  const prefixOf = (n: string): string => n.split(':')[0] as string
  return prefixes
    .filter((p) => names.some((n) => prefixOf(n) === p))
    .map((p) => (names.some((n) => n === p) ? p : `${p}:*`))
    .join(', ')
}

/** The message for a --point (or point name) that is not one: the closest point, or where they are. */
export function unknownPointMessage(flag: string, name: string): string {
  const near = closestPoint(name)
  if (near) return `${flag} '${name}' is not a hook point; did you mean '${near}'?`
  return `${flag} '${name}' is not a hook point. Points:\n${pointsText(2)}`
}
