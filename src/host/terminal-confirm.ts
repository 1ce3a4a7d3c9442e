/** The default `ctx.confirm`: a yes/no question on the terminal, one at a time. */
import { createInterface } from 'node:readline'
import { inert } from '../protocol/text.js'
import type { CallOrigin, Message } from './capability-handlers.js'

/** Where terminalConfirm asks: the process's stdin and stderr unless a command runs with others. */
export interface ConfirmTerminal {
  input: NodeJS.ReadableStream & { readableEnded?: boolean; destroyed?: boolean }
  output: NodeJS.WritableStream
}

/**
 * Asks on the terminal (question on stderr, answer on stdin), one question at a time. Only "y" or
 * "yes" allows; anything else, end of input or Ctrl-C answers no, so a closed stdin never leaves a
 * hook waiting.
 */
let terminalQueue: Promise<unknown> = Promise.resolve()
export function terminalConfirm(message: Message, origin: CallOrigin, terminal?: ConfirmTerminal): Promise<boolean> {
  const ask = (): Promise<boolean> =>
    new Promise<boolean>((resolveAnswer) => {
      const { input, output } = terminal ?? { input: process.stdin, output: process.stderr }
      if (input.readableEnded || input.destroyed) {
        output.write(`${inert(`[${origin.hook}] ${message.title}: no answer possible (stdin is closed); answering no`)}\n`)
        resolveAnswer(false)
        return
      }
      const rl = createInterface({ input, output })
      let answered = false
      const answer = (yes: boolean): void => {
        if (answered) return
        answered = true
        rl.close()
        resolveAnswer(yes)
      }
      rl.once('close', () => answer(false))
      rl.once('SIGINT', () => {
        output.write('\n')
        answer(false)
      })
      const body = message.body ? `\n  ${inert(message.body)}` : ''
      rl.question(`${inert(`[${origin.hook}] ${message.title}`)}${body}\n  Allow? [y/N] `, (text) => answer(/^y(es)?$/i.test(text.trim())))
    })
  const next = terminalQueue.then(ask, ask)
  terminalQueue = next.catch(() => {})
  return next
}
