/**
 * The pool's side of a chain run in one worker message: the reports received so far, the step the
 * caller awaits, and the end. See ChainRun (runners/hook-runner.ts) for what the caller does with them.
 */
import type { ChainRun, InvocationReport, InvokeOutcome } from '../../runners/hook-runner.js'

export interface ChainRunState {
  run: ChainRun
  /** Step `step` ran and reported. */
  stepped(step: number, report: InvocationReport): void
  /** No more steps will run: the awaited one, if any, ends with `crash` (its worker died) or undefined. */
  end(crash?: InvokeOutcome): void
}

export function chainRunState(): ChainRunState {
  const reports = new Map<number, InvocationReport>()
  let over = false
  let crash: InvokeOutcome | undefined
  let waiting: { step: number; resolve(report: InvocationReport | undefined): void } | undefined
  let finish: () => void = () => {}
  const done = new Promise<void>((resolve) => {
    finish = resolve
  })
  const crashed = (): InvocationReport | undefined => {
    // The first step asked for after the worker died is the one it was running.
    const outcome = crash
    crash = undefined
    return outcome ? { outcome, wallUs: 0, cpuUs: 0 } : undefined
  }
  return {
    run: {
      report: (step) => {
        const known = reports.get(step)
        if (known) return Promise.resolve(known)
        if (over) return Promise.resolve(crashed())
        return new Promise((resolve) => {
          waiting = { step, resolve }
        })
      },
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
    end: (outcome) => {
      if (over) return
      over = true
      crash = outcome
      finish()
      if (waiting) {
        const { resolve } = waiting
        waiting = undefined
        resolve(crashed())
      }
    },
  }
}
