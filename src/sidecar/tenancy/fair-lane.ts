/**
 * A tenant's lane of the fair queue as a `HookRunner`: its sandboxed hooks wait for a slot here, then run
 * on the runner behind it. A hook waiting on its host (a capability call) frees its slot meanwhile.
 */
import {
  type ChainRequest,
  type ChainRun,
  type HookRunner,
  type InvocationHost,
  type InvocationReport,
  type InvocationRequest,
  failedReport,
} from '../runners/hook-runner.js'
import { FAILURE_TEXT } from '../runners/failure-text.js'
import type { FairQueue, Slot } from './fair-queue.js'

/** The same host, with the slot freed while each capability call waits on it. */
function freeingSlot<H extends InvocationHost>(host: H, slot: Slot): H {
  return {
    ...host,
    onCapability: async (capability: string, args: unknown) => {
      slot.pause()
      try {
        return await host.onCapability(capability, args)
      } finally {
        slot.resume()
      }
    },
  }
}

export class FairLane implements HookRunner {
  constructor(
    private readonly queue: FairQueue,
    private readonly lane: string,
    private readonly inner: HookRunner & Required<Pick<HookRunner, 'invokeChain'>>,
  ) {}

  invoke(request: InvocationRequest): Promise<InvocationReport> {
    return this.queue.run<InvocationReport>(
      this.lane,
      (slot) => this.inner.invoke(freeingSlot(request, slot)),
      request.signal,
      () => failedReport('cancelled', FAILURE_TEXT.cancelledBeforeStart()),
    )
  }

  /**
   * One slot for the whole chain: a chain of n hooks runs them back to back in one worker, as n
   * sequential invocations of one lane would (a lane's calls never run in parallel within a point
   * call), so fairness between lanes is kept at the granularity of a point call.
   */
  invokeChain(request: ChainRequest): ChainRun {
    let started: (run: ChainRun | undefined) => void = () => {}
    const ready = new Promise<ChainRun | undefined>((resolve) => {
      started = resolve
    })
    const done = this.queue.run<void>(
      this.lane,
      (slot) => {
        const run = this.inner.invokeChain({ ...request, steps: request.steps.map((step) => freeingSlot(step, slot)) })
        started(run)
        return run.done
      },
      request.signal,
      () => started(undefined),
    )
    let inner: ChainRun | undefined
    void ready.then((run) => {
      inner = run
    })
    return {
      report: async (step) => {
        const run = await ready
        return run ? run.report(step) : failedReport('cancelled', FAILURE_TEXT.cancelledBeforeStart())
      },
      lost: (step) => inner?.lost(step) ?? false,
      done,
    }
  }
}
