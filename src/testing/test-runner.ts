/**
 * Runs test cases through an embedded sidecar: the real registry, worker pool and isolates, on a
 * temporary Unix socket, driven by the host library as an agent host would drive it. One runner can run
 * many times (`hookd test --watch`): each run finds the cases again and restages their hooks.
 */
import { join } from 'node:path'
import { HookdClient } from '../host/client.js'
import { Sidecar } from '../sidecar/sidecar.js'
import { loadCaseFolder } from './case-folder.js'
import { type CaseProblem, type Suite, isAgentCase, loadSuite } from './load-cases.js'
import { runAgentCase } from './run-agent-case.js'
import { type CaseOutcome, runCase } from './run-case.js'
import { Stage } from './stage.js'
import { shownPath } from './shown-path.js'

export interface RunReport {
  /** The hooks folder, as shown. */
  hooksShown: string
  outcomes: CaseOutcome[]
  /** Case files that could not be run. */
  problems: CaseProblem[]
  passed: number
  failed: number
}

export interface RunnerOptions {
  /** The author's hooks folder. */
  root: string
  /** How the hooks folder is shown in messages. */
  hooksShown: string
  /** Called after each case, for output as it happens. */
  onCase?: ((outcome: CaseOutcome) => void) | undefined
}

export class TestRunner {
  private constructor(
    private readonly options: RunnerOptions,
    private readonly stage: Stage,
    private readonly sidecar: Sidecar,
    private readonly client: HookdClient,
  ) {}

  static async start(options: RunnerOptions): Promise<TestRunner> {
    const stage = await Stage.create()
    let sidecar: Sidecar | undefined
    try {
      sidecar = await Sidecar.create({ hooks: stage.root, workers: 1, watch: false })
      const address = await sidecar.listen(`unix:${join(stage.root, '..', 'hookd.sock')}`)
      const client = await HookdClient.connect(address)
      return new TestRunner(options, stage, sidecar, client)
    } catch (err) {
      await sidecar?.stop()
      await stage.close()
      throw err
    }
  }

  /** Finds and runs the cases of the hooks `selected`, one after the other. */
  async run(selected: readonly string[]): Promise<RunReport> {
    const { root, hooksShown } = this.options
    return this.runSuite(await loadSuite(root, selected, (path) => shownPath(hooksShown, path)))
  }

  /** Finds and runs the cases in `folder` (`hookd test --cases`), shown under `shown`, against the hooks folder. */
  async runFolder(folder: string, shown: string): Promise<RunReport> {
    return this.runSuite(await loadCaseFolder(folder, this.options.root, (path) => shownPath(shown, path)))
  }

  private async runSuite(suite: Suite): Promise<RunReport> {
    const { root, hooksShown } = this.options
    const involved = [...new Set(suite.cases.flatMap((c) => c.hooks))].sort()
    for (const hook of involved) await this.stage.stage(root, hook)
    const outcomes: CaseOutcome[] = []
    for (const testCase of suite.cases) {
      const env = { client: this.client, registry: this.sidecar.registry, stage: this.stage, hooksShown, root }
      const outcome = isAgentCase(testCase) ? await runAgentCase(env, testCase) : await runCase(env, testCase)
      outcomes.push(outcome)
      this.options.onCase?.(outcome)
    }
    const passed = outcomes.filter((o) => o.ok).length
    return { hooksShown, outcomes, problems: suite.problems, passed, failed: outcomes.length - passed + suite.problems.length }
  }

  async close(): Promise<void> {
    this.client.close()
    await this.sidecar.stop()
    await this.stage.close()
  }
}
