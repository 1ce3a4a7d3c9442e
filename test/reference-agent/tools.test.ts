/** The agent's tools, confined to the workdir, and what the model reads back from each. */
import { readFile, symlink } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { listFilesTool, readFileTool, shellTool, writeFileTool } from '../../src/host/reference-agent/tools.js'
import type { AgentTool } from '../../src/host/reference-agent/index.js'
import { workdir } from './support.js'

const live = new AbortController().signal

async function use(tool: AgentTool, dir: string, input: unknown): Promise<{ text: string; isError: boolean }> {
  const parsed = tool.parse(input)
  if (!parsed.ok) return { text: parsed.message, isError: true }
  try {
    return await tool.run(parsed.input, { workdir: dir, signal: live })
  } catch (err) {
    return { text: (err as Error).message, isError: true }
  }
}

describe('file tools', () => {
  it('read, write and list inside the workdir', async () => {
    const dir = await workdir({ 'a.txt': 'alpha', 'sub/b.txt': 'beta' })
    expect(await use(readFileTool, dir, { path: 'sub/b.txt' })).toEqual({ text: 'beta', isError: false })
    expect(await use(writeFileTool, dir, { path: 'new/c.txt', content: 'gamma' })).toEqual({ text: 'wrote 5 bytes to new/c.txt', isError: false })
    expect(await readFile(join(dir, 'new', 'c.txt'), 'utf8')).toBe('gamma')
    expect(await use(listFilesTool, dir, {})).toEqual({ text: 'a.txt\nnew/\nsub/', isError: false })
  })

  it('refuse paths that leave the workdir, by .. or through a symbolic link', async () => {
    const dir = await workdir({ 'a.txt': 'alpha' })
    const outside = await workdir({ 'secret.txt': 'secret' })
    await symlink(outside, join(dir, 'escape'))
    expect(await use(readFileTool, dir, { path: '../secret.txt' })).toEqual({ text: "read_file('../secret.txt') refused: the path leads outside the workdir", isError: true })
    expect(await use(readFileTool, dir, { path: 'escape/secret.txt' })).toEqual({
      text: "read_file('escape/secret.txt') refused: the path leads outside the workdir through a symbolic link",
      isError: true,
    })
    expect(await use(writeFileTool, dir, { path: '/tmp/x', content: '' })).toMatchObject({ text: expect.stringContaining('absolute paths are refused'), isError: true })
    expect(await use(listFilesTool, dir, { path: '..' })).toMatchObject({ text: expect.stringContaining('refused'), isError: true })
  })

  it('say what is wrong with the input the model sent', async () => {
    const dir = await workdir()
    expect(await use(readFileTool, dir, { file: 'a.txt' })).toEqual({ text: expect.stringMatching(/^invalid input for read_file: path: /), isError: true })
    expect(await use(readFileTool, dir, { path: 'missing.txt' })).toEqual({ text: "read_file('missing.txt') failed: no such file or directory", isError: true })
  })
})

describe('shell', () => {
  it('runs in the workdir and reports a failing exit status as an error', async () => {
    const dir = await workdir({ 'a.txt': 'alpha' })
    expect(await use(shellTool, dir, { command: 'cat a.txt' })).toEqual({ text: 'alpha', isError: false })
    expect(await use(shellTool, dir, { command: 'echo oops >&2; exit 3' })).toEqual({ text: 'oops\n[exit status 3]', isError: true })
  })

  it('stops the command when the run is interrupted', async () => {
    const dir = await workdir()
    const controller = new AbortController()
    const running = shellTool.run({ command: 'echo started; sleep 30' }, { workdir: dir, signal: controller.signal })
    controller.abort()
    await expect(running).rejects.toThrow('shell: stopped because the run was interrupted')
  })
})
