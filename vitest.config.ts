import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'hooks/**/*.test.ts'],
    // Builds dist/ when it is older than the sources: tests run the built command (test/support/processes.ts).
    globalSetup: ['test/support/global-setup.ts'],
    // Sidecars started from source run the built workers (worker-process.ts): fast, and behind every wall.
    env: { HOOKD_BUILT_WORKERS: '1' },
    // Each file starts its own sidecar with real worker processes: keep it to two at a time on 2 cores.
    pool: 'forks',
    maxWorkers: 2,
    // The two test processes run file after file (a fresh process and module graph per file cost
    // ~1.5 s each, a third of the suite); test/support/per-file.ts resets the folder and environment.
    isolate: false,
    setupFiles: ['test/support/per-file.ts'],
    // Headroom for a machine busy with other work (issue 15.20): a test that hangs still fails, a slow one does not.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
