/**
 * What a PreToolUse hook costs the real Claude Code per tool call (test/agents/support/claude-bench.ts):
 * a Node command hook, an http hook on a trivial loopback server, and an http hook on `hookd serve
 * --http` running a guard in its sandbox. Part of `make bench`; `BENCH_AGENTS=0` skips it, and the smoke
 * run (`BENCH_SMOKE=1`) skips it unless `BENCH_AGENTS=1` (then with 2 tool calls, one round).
 *
 *   agents.claude_code.{command_hook_ms, trivial_http_ms, hookd_http_ms}
 *       (run - no-hook run) / N: what a run of N tool calls pays per call, medians of the rounds
 *   agents.claude_code.hook_median_ms.{command, trivial_http, hookd_http}
 *       each hook's own time as Claude Code's debug log shows it, median of all calls: the steadiest
 *   agents.claude_code.step_median_ms.{none, command, trivial_http, hookd_http}
 *       from the model's tool request to the next request (hook + tool + Claude Code), median
 */
import { type VariantResult, benchClaude } from '../test/agents/support/claude-bench.js'

export function agentsWanted(smoke: boolean): boolean {
  const flag = process.env.BENCH_AGENTS
  return flag === undefined ? !smoke : flag === '1'
}

export async function agentsBench(smoke: boolean): Promise<Record<string, unknown>> {
  const n = Number(process.env.BENCH_AGENTS_N ?? (smoke ? 2 : 20))
  const runs = Number(process.env.BENCH_AGENTS_RUNS ?? (smoke ? 1 : 3))
  const result = await benchClaude({ n, runs, variants: ['none', 'command', 'http', 'hookd'], log: (line) => process.stderr.write(`bench agents: ${line}\n`) })
  const of = (v: string): VariantResult | undefined => result.variants.find((x) => x.variant === v)
  const names: Record<string, string> = { command: 'command', http: 'trivial_http', hookd: 'hookd_http' }
  const pick = (field: 'hookMedianMs' | 'stepMedianMs', variants: string[]): Record<string, number | undefined> =>
    Object.fromEntries(variants.map((v) => [names[v] ?? v, of(v)?.[field]]))
  return {
    claude_code: {
      n,
      runs,
      command_hook_ms: of('command')?.perCallMs,
      trivial_http_ms: of('http')?.perCallMs,
      hookd_http_ms: of('hookd')?.perCallMs,
      hook_median_ms: pick('hookMedianMs', ['command', 'http', 'hookd']),
      step_median_ms: pick('stepMedianMs', ['none', 'command', 'http', 'hookd']),
      runs_ms: Object.fromEntries(result.variants.map((v) => [names[v.variant] ?? v.variant, v.runsMs])),
    },
  }
}

/** The table rows for bench/run.ts's summary. */
export function agentRows(agents: Record<string, unknown> | undefined): Array<[string, string]> {
  const cc = agents?.claude_code as Record<string, unknown> | undefined
  if (!cc) return []
  const hook = cc.hook_median_ms as Record<string, number | undefined>
  return [
    [`Claude Code, per tool call, (run - none) / ${cc.n}: command / trivial http / hookd http (ms)`, `${cc.command_hook_ms} / ${cc.trivial_http_ms} / ${cc.hookd_http_ms}`],
    ["Claude Code, hook time in its debug log, median: command / trivial http / hookd http (ms)", `${hook.command} / ${hook.trivial_http} / ${hook.hookd_http}`],
  ]
}
