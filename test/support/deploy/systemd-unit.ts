/**
 * A systemd unit file read as systemd.syntax(7) describes it: `[Section]` headers, `Key=value` lines,
 * `#` and `;` comments, backslash continuations, and keys that may repeat (each value kept in order).
 * For asserting what a unit sets; `systemd-analyze verify` judges whether systemd accepts it.
 */

export type Unit = Record<string, Record<string, string[]>>

export function parseUnit(text: string): Unit {
  const unit: Unit = {}
  let section: Record<string, string[]> | undefined
  const lines = text.split(/\r?\n/)
  for (let i = 0; i < lines.length; i++) {
    let line = (lines[i] as string).trim()
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue
    while (line.endsWith('\\') && i + 1 < lines.length) {
      const next = (lines[++i] as string).trim()
      if (next.startsWith('#') || next.startsWith(';')) continue
      line = `${line.slice(0, -1)} ${next}`
    }
    const header = /^\[([^\]]+)\]$/.exec(line)
    if (header) {
      section = unit[header[1] as string] ??= {}
      continue
    }
    const eq = line.indexOf('=')
    if (!section || eq <= 0) throw new Error(`line ${i + 1}: expected [Section] or Key=value; got '${line}'`)
    const key = line.slice(0, eq).trim()
    ;(section[key] ??= []).push(line.slice(eq + 1).trim())
  }
  return unit
}
