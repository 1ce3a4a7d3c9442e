/**
 * `npm run test:unit`, the inner loop: the tests that run in memory (test/unit: the session, the
 * Session stream through an in-memory call, the chain, the policy, the registry and the pool's choices
 * with fakes). No build, no sidecar, no worker, no agent CLI: test/support/no-processes.ts makes any
 * process start fail. `make test` (vitest.config.ts) runs these and everything else.
 */
import { defineConfig } from 'vitest/config'

/**
 * test/unit files that start a process, where the process is what they test: they run in the whole
 * suite only. (author-hints' check against a running sidecar is test/integration/cli/author-hints.test.ts.)
 */
const STARTS_PROCESSES = [
  // bundling through esbuild's own process, which the tests kill and see replaced; mkfifo
  'test/unit/hooks/bundle.test.ts',
  // the peer's user of a TCP connection, from a process started as another user (setpriv)
  'test/unit/peer-user.test.ts',
  // both shims (the compiled one and the script) run for every agent, to check each refusal they print
  'test/unit/shim-forms.test.ts',
]

export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts'],
    // The whole suite's temp and per-user state folders (global-setup.ts), without its build.
    globalSetup: ['test/support/unit-setup.ts'],
    exclude: STARTS_PROCESSES,
    setupFiles: ['test/support/per-file.ts', 'test/support/no-processes.ts'],
    // As vitest.config.ts: two test processes, file after file (per-file.ts resets each file's state).
    pool: 'forks',
    maxWorkers: 2,
    isolate: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
