/**
 * A line diff for `--dry-run` output: `-` for lines removed, `+` for lines added, `  ` for lines kept,
 * with at most `context` kept lines around each change (longest common subsequence; settings files
 * are small, so the quadratic table is fine).
 */
export function lineDiff(before: string, after: string, context = 3): string {
  const a = before === '' ? [] : before.split('\n')
  const b = after === '' ? [] : after.split('\n')
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0))
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      const row = lcs[i] as number[]
      row[j] = a[i] === b[j] ? (lcs[i + 1] as number[])[j + 1] as number + 1 : Math.max((lcs[i + 1] as number[])[j] as number, row[j + 1] as number)
    }
  }
  const lines: Array<{ mark: ' ' | '-' | '+'; text: string }> = []
  let i = 0
  let j = 0
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) lines.push({ mark: ' ', text: a[i++] as string }), j++
    else if (j < b.length && (i >= a.length || ((lcs[i] as number[])[j + 1] as number) >= ((lcs[i + 1] as number[])[j] as number))) lines.push({ mark: '+', text: b[j++] as string })
    else lines.push({ mark: '-', text: a[i++] as string })
  }
  const near = (k: number): boolean => lines.slice(Math.max(0, k - context), k + context + 1).some((l) => l.mark !== ' ')
  const out: string[] = []
  let skipped = false
  lines.forEach((line, k) => {
    if (line.mark === ' ' && !near(k)) {
      if (!skipped) out.push('  ...')
      skipped = true
      return
    }
    skipped = false
    out.push(`${line.mark === ' ' ? ' ' : line.mark} ${line.text}`)
  })
  return out.join('\n')
}
