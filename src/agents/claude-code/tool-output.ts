/**
 * Claude Code's `tool_response` (PostToolUse) as the text hooks read in afterToolExecute, and a
 * rewritten text back in the tool's own shape for `updatedToolOutput`.
 *
 * Claude Code 2.1.328 accepts `updatedToolOutput` only in the shape of the tool's own `tool_response`
 * (measured: a plain string for Read is rejected and the ORIGINAL output is kept, silently), so a text
 * goes back only into shapes measured or read to carry one: Bash's stdout, Read's file content, Glob's
 * and Grep's lists, WebFetch's result, and a plain string. Elsewhere (Write, Edit, images, notebooks,
 * MCP content blocks) `withOutputText` answers undefined and the adapter tells the model through
 * `additionalContext` instead.
 */
import { stringifyJson } from '../../protocol/bounded-json.js'

type Obj = Record<string, unknown>

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v)
const str = (v: unknown): string => (typeof v === 'string' ? v : '')
const lines = (text: string): string[] => text.split('\n').filter((l) => l !== '')

/** How many lines Read reports for `content` (a final newline ends a line, it does not start one). */
function lineCount(content: string): number {
  if (content === '') return 0
  const n = content.split('\n').length
  return content.endsWith('\n') ? n - 1 : n
}

/** The text hooks see for a tool's response. */
export function outputText(tool: string, response: unknown): string {
  if (typeof response === 'string') return response
  if (isObj(response)) {
    switch (tool) {
      case 'Bash': {
        const stdout = str(response.stdout)
        const stderr = str(response.stderr)
        return stderr ? (stdout ? `${stdout}\n${stderr}` : stderr) : stdout
      }
      case 'Read':
        if (isObj(response.file) && typeof response.file.content === 'string') return response.file.content
        break
      case 'Glob':
        if (Array.isArray(response.filenames)) return response.filenames.map(String).join('\n')
        break
      case 'Grep':
        if (typeof response.content === 'string') return response.content
        if (Array.isArray(response.filenames)) return response.filenames.map(String).join('\n')
        break
      case 'WebFetch':
        if (typeof response.result === 'string') return response.result
        break
      case 'Write':
        if (typeof response.filePath === 'string') {
          return response.type === 'create' ? `File created successfully at: ${response.filePath}` : `The file ${response.filePath} has been updated successfully.`
        }
        break
      case 'Edit':
        if (typeof response.filePath === 'string') return `The file ${response.filePath} has been updated successfully.`
        break
    }
  }
  if (Array.isArray(response)) {
    const texts = response.flatMap((b) => (isObj(b) && b.type === 'text' && typeof b.text === 'string' ? [b.text] : []))
    if (texts.length === response.length) return texts.join('\n')
  }
  return stringifyJson(response) ?? ''
}

/** `response` with its text replaced, in the tool's own shape; undefined when the shape carries no text. */
export function withOutputText(tool: string, response: unknown, text: string): unknown {
  if (typeof response === 'string') return text
  if (!isObj(response)) return undefined
  switch (tool) {
    case 'Bash':
      if (response.isImage === true) return undefined
      return { ...response, stdout: text, stderr: '' }
    case 'Read': {
      const file = response.file
      if (response.type !== 'text' || !isObj(file) || typeof file.content !== 'string') return undefined
      const numLines = lineCount(text)
      const startLine = typeof file.startLine === 'number' ? file.startLine : 1
      const totalLines = Math.max(typeof file.totalLines === 'number' ? file.totalLines : 0, startLine - 1 + numLines)
      return { ...response, file: { ...file, content: text, numLines, totalLines } }
    }
    case 'Glob': {
      if (!Array.isArray(response.filenames)) return undefined
      const filenames = lines(text)
      return { ...response, filenames, numFiles: filenames.length }
    }
    case 'Grep': {
      if (typeof response.content === 'string') return { ...response, content: text, numLines: lineCount(text) }
      if (!Array.isArray(response.filenames)) return undefined
      const filenames = lines(text)
      return { ...response, filenames, numFiles: filenames.length }
    }
    case 'WebFetch':
      return typeof response.result === 'string' ? { ...response, result: text } : undefined
    default:
      return undefined
  }
}
