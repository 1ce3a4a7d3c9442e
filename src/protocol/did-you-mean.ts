/**
 * The closest of some names to a misspelt one (case-insensitive edit distance), when it is close enough
 * to be a plausible typo: "beforeToolExecut" -> "beforeToolExecute", "gaurd" -> "guard", "--listn" ->
 * "--listen". The one edit-distance helper of hookd: points, options, hooks and case names all use it.
 */

/**
 * No point, option or hook name worth suggesting is longer than this. A longer name is not compared at
 * all, so the cost stays bounded (at most this many squared steps per candidate) whatever a hook, a
 * remote hook's Describe or a command line sends.
 */
export const LONGEST_TYPO = 64

export function didYouMean<T extends string>(name: string, candidates: readonly T[]): T | undefined {
  if (name.length > LONGEST_TYPO) return undefined
  let best: T | undefined
  let bestDistance = Infinity
  for (const candidate of candidates) {
    if (candidate.length > LONGEST_TYPO) continue
    const d = editDistance(name.toLowerCase(), candidate.toLowerCase())
    if (d < bestDistance) {
      best = candidate
      bestDistance = d
    }
  }
  return bestDistance <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined
}

function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const next = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      next[j] = Math.min((row[j] ?? 0) + 1, (next[j - 1] ?? 0) + 1, (row[j - 1] ?? 0) + cost)
    }
    row = next
  }
  return row[b.length] ?? 0
}
