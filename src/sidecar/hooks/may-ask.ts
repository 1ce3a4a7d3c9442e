/**
 * Whether a hook may call ctx.confirm, from what the sidecar knows of it without running it: its
 * source. At the front door a confirm at a gate becomes the agent's own ask, and what became of the
 * call comes in later events (a call that ran gets its after-tool event), which setup registers only
 * for hooks that may ask: hooks that never ask cost no extra event per tool call.
 *
 * A text search, so it errs on the side of asking: any mention of `confirm` counts, and a remote
 * hook (whose code is its server's) always may. A hook that reaches ctx.confirm without ever writing
 * the word (`ctx['con' + 'firm']`) still asks; only the record of what became of its call says
 * `unknown` instead of `denied` when the run ends without word of it.
 */
export function mayAsk(hook: { source: string; remote?: string | undefined }): boolean {
  if (hook.remote !== undefined || hook.source === '') return true
  return hook.source.includes('confirm')
}
