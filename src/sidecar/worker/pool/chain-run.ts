/**
 * The pool's side of a chain run in one worker message: the reports received so far, the step the
 * caller awaits, and the end. See ChainRun (runners/hook-runner.ts) for what the caller does with them.
 */
import type { ChainRun, InvocationReport, InvokeOutcome } from '../../runners/hook-runner.js'

export interface ChainRunState {
  run: ChainRun
  /** Step `step` ran and reported. */
  stepped(step: number, report: InvocationReport): void
  /**
   * No more steps will run: the awaited one, if any, ends with `crash` (its worker died) or undefined.
   * `retryable(step)` says whether the step that was running may run again (it made no capability
   * call): then it gets undefined too, and `lost(step)` is true.
   */
  end(crash?: InvokeOutcome, retryable?: (step: number) => boolean): void
}

export function chainRunState(): ChainRunState {
  const reports = new Map<number, InvocationReport>()
  let over = false
  let crash: InvokeOutcome | undefined
  let canRetry: ((step: number) => boolean) | undefined
  let lostStep: number | undefined
  let waiting: { step: number; resolve(report: InvocationReport | undefined): void } | undefined
  let finish: () => void = () => {}
  const done = new Promise<void>((resolve) => {
    finish = resolve
  })
  const crashed = (step: number): InvocationReport | undefined => {
    // The first step asked for after the worker died is the one it was running.
    const outcome = crash
    crash = undefined
    if (!outcome) return undefined
    if (canRetry?.(step)) {
      lostStep = step
      return undefined
    }
    return { outcome, wallUs: 0, cpuUs: 0 }
  }
  return {
    run: {
      report: (step) => {
        const known = reports.get(step)
        if (known) return Promise.resolve(known)
        if (over) return Promise.resolve(crashed(step))
        return new Promise((resolve) => {
          waiting = { step, resolve }
        })
      },
      lost: (step) => lostStep === step,
      done,
    },
    stepped: (step, report) => {
      if (over) return
      reports.set(step, report)
      if (waiting?.step === step) {
        const { resolve } = waiting
        waiting = undefined
        resolve(report)
      }
    },
    end: (outcome, retryable) => {
      if (over) return
      over = true
      crash = outcome
      canRetry = retryable
      finish()
      if (waiting) {
        const { resolve, step } = waiting
        waiting = undefined
        resolve(crashed(step))
      }
    },
  }
}
