/** JSON values as hookd compares them: the same when equal or when they serialize alike. */
export function sameJson(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b)
}
