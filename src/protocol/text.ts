/**
 * Text that came from a hook, a host or a file, made safe to show: clipped to a bounded length, quoted
 * with its control characters escaped, and made inert before it reaches a terminal or a log line (no
 * escape sequence a terminal would act on, no newline that forges a second line). Every message hookd
 * shows about hook-controlled data goes through these.
 */

/** The longest diagnostic or trace message hookd keeps, in characters; longer ones are clipped. */
export const MESSAGE_CHARS = 2000

/** `text`, cut to `max` characters with a note of how much was cut. */
export function clip(text: string, max = MESSAGE_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max)}... (${text.length - max} more characters)`
}

// C0 and C1 control characters, DEL, and the Unicode marks that reorder or hide text on a terminal
// (bidirectional overrides and isolates, line and paragraph separators).
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

function escape(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`
}

/**
 * A hook-supplied string as it appears inside a message: single-quoted, control characters escaped,
 * and cut short when long, so that a refusal stays one readable line.
 */
export function quoted(value: string, max = 200): string {
  const cut = value.length > max ? `${value.slice(0, max)}...` : value
  return `'${cut.replace(/[\\']/g, (c) => `\\${c}`).replace(CONTROL, escape)}'`
}

/**
 * Text to write to a terminal or a line-oriented log: every control character escaped (a newline as
 * `\n`, ESC as `\u001b`), so that a hook can neither move the cursor, recolour, retitle or clear the
 * terminal, nor make one event look like two lines. Clipped to `max` characters.
 */
export function inert(text: string, max = MESSAGE_CHARS * 4): string {
  return clip(text, max).replace(CONTROL, (c) => (c === '\n' ? '\\n' : c === '\t' ? '\\t' : c === '\r' ? '\\r' : escape(c)))
}

/**
 * Text meant to be shown as it is, lines and all (a model's streamed answer): every control character
 * escaped except newlines and tabs.
 */
export function inertLines(text: string): string {
  return text.replace(CONTROL, (c) => (c === '\n' || c === '\t' ? c : escape(c)))
}

// What JSON.stringify leaves as it is, and a terminal may act on: C1 controls, DEL, separators, bidi.
const JSON_UNSAFE = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

/**
 * JSON text (JSON.stringify's) made safe to print: the characters it leaves raw and a terminal may
 * act on become \u escapes, which is the same JSON.
 */
export function inertJson(json: string): string {
  return json.replace(JSON_UNSAFE, escape)
}
