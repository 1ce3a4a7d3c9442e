/**
 * Gemini CLI 0.61.0's model events, read into hookd's points and answered (gemini-dialect.ts dispatches
 * them). Gemini CLI hands its hooks a stable, text-only view of each model call (its
 * HookTranslatorGenAIv1, in the shipped bundle) and takes back the parts it lets a hook change:
 *
 *   BeforeModel          model:request {model, messages: [{role, text}], config}: rewritten messages,
 *                        model and config -> hookSpecificOutput.llm_request (Gemini CLI puts each
 *                        message's text back into the call's contents in order, keeping their non-text
 *                        parts, and adds the rest at the end); block -> decision "deny" with the reason
 *                        (the call is not made and the turn ends)
 *   AfterModel           model:response {text, finishReason}, once per streamed chunk: rewritten text ->
 *                        hookSpecificOutput.llm_response, which replaces the chunk (only a chunk that had
 *                        text: Gemini CLI rebuilds the chunk from text parts, so a rewrite of a chunk
 *                        holding only a tool call would drop the call)
 *   BeforeToolSelection  tools:select {tools}: the tools Gemini CLI 0.61.0 declares (its events do not
 *                        list them), under the names hooks see calls by; a narrowed list ->
 *                        toolConfig.allowedFunctionNames (mode AUTO; NONE when no tool is left), which
 *                        the model API receives
 */
import * as z from 'zod'
import type { AgentPointName } from '../../protocol/points/points.js'
import type { DialectAnswer, HookEvent, PointChanges } from '../hook-event.js'
import { parseEvent, shortField } from '../event-fields.js'
import { GEMINI_TOOLS } from './tools.js'

const role = z.enum(['user', 'model', 'system'])
const config = z.looseObject({ temperature: z.number().optional(), maxOutputTokens: z.number().optional(), topP: z.number().optional(), topK: z.number().optional() })
const llmRequest = z.looseObject({
  model: shortField,
  messages: z.array(z.looseObject({ role, content: z.string() })),
  config: config.optional(),
})
const withRequest = z.looseObject({ llm_request: llmRequest })
const afterModel = z.looseObject({
  llm_response: z.looseObject({
    text: z.string().optional(),
    candidates: z.array(z.looseObject({ finishReason: shortField.optional(), index: z.number().optional() })).optional(),
  }),
})

/** The function names Gemini CLI 0.61.0 declares to the model (measured: test/agents/real-clis/codex-gemini-events.test.ts). */
export const GEMINI_DECLARED_TOOLS = [
  'update_topic', 'list_directory', 'read_file', 'grep_search', 'glob', 'replace', 'write_file', 'web_fetch', 'run_shell_command',
  'list_background_processes', 'read_background_output', 'google_web_search', 'write_todos', 'enter_plan_mode', 'invoke_agent', 'activate_skill',
] as const

/** A declared tool under the name hooks see its calls by: the canonical one where the table maps it. */
function hookName(native: string): string {
  const mapping = GEMINI_TOOLS.mapping(native)
  return mapping !== undefined && 'canonical' in mapping && typeof mapping.canonical === 'string' ? mapping.canonical : native
}

const BY_HOOK_NAME = new Map<string, string>(GEMINI_DECLARED_TOOLS.map((native) => [hookName(native), native]))

/** The point event for one of Gemini CLI's model events, or undefined for another event. */
export function readModelEvent(name: string, body: unknown): Extract<HookEvent, { kind: 'point' }> | undefined {
  const of = <T>(schema: z.ZodType<T>): T => parseEvent(schema, body, `the ${name} event`, 'Gemini CLI')
  switch (name) {
    case 'BeforeModel': {
      const { llm_request: r } = of(withRequest)
      return { kind: 'point', point: 'model:request', payload: { model: r.model, messages: r.messages.map((m) => ({ role: m.role, text: m.content })), config: definedConfig(r.config) } }
    }
    case 'AfterModel': {
      const { llm_response: r } = of(afterModel)
      return { kind: 'point', point: 'model:response', payload: { text: r.text ?? '', finishReason: r.candidates?.[0]?.finishReason ?? '' } }
    }
    case 'BeforeToolSelection':
      of(withRequest)
      return { kind: 'point', point: 'tools:select', payload: { tools: [...BY_HOOK_NAME.keys()] } }
    default:
      return undefined
  }
}

function definedConfig(c: z.infer<typeof config> | undefined): Record<string, number> {
  const out: Record<string, number> = {}
  for (const key of ['temperature', 'maxOutputTokens', 'topP', 'topK'] as const) if (typeof c?.[key] === 'number') out[key] = c[key]
  return out
}

/** The answer at a model event, from the changed fields; undefined when `point` is not one of them. */
export function answerModelEvent(body: unknown, point: AgentPointName, changes: PointChanges): { answer: DialectAnswer; dropped?: string[] } | undefined {
  const f = changes.fields
  switch (point) {
    case 'model:request': {
      if (f.block === true) return { answer: { decision: 'deny', reason: typeof f.reason === 'string' && f.reason.trim() !== '' ? f.reason : 'a hook blocked this model call' } }
      const request: Record<string, unknown> = {}
      if (Array.isArray(f.messages)) request.messages = (f.messages as Array<{ role: string; text: string }>).map((m) => ({ role: m.role, content: m.text }))
      if (typeof f.model === 'string') request.model = f.model
      if (f.config !== undefined) {
        // Gemini CLI sets all four from the answer: the ones no hook changed go back as they were.
        const before = withRequest.safeParse(body)
        request.config = { ...definedConfig(before.success ? before.data.llm_request.config : undefined), ...(f.config as Record<string, number>) }
      }
      if (!Object.keys(request).length) return { answer: undefined }
      return { answer: { hookSpecificOutput: { hookEventName: 'BeforeModel', llm_request: request } } }
    }
    case 'model:response': {
      if (typeof f.text !== 'string') return { answer: undefined }
      const before = afterModel.safeParse(body)
      const old = before.success ? before.data.llm_response : undefined
      if (!old?.text) return { answer: undefined, dropped: ['text (the chunk had no text of its own: a rewrite would drop its tool call)'] }
      const candidate = old.candidates?.[0]
      return {
        answer: {
          hookSpecificOutput: {
            hookEventName: 'AfterModel',
            llm_response: { text: f.text, candidates: [{ content: { role: 'model', parts: [f.text] }, index: candidate?.index ?? 0, ...(candidate?.finishReason ? { finishReason: candidate.finishReason } : {}) }] },
          },
        },
      }
    }
    case 'tools:select': {
      if (!Array.isArray(f.tools)) return { answer: undefined }
      // Only names Gemini CLI declared, as the point already keeps them; never one it did not offer.
      const kept = (f.tools as string[]).flatMap((name) => BY_HOOK_NAME.get(name) ?? [])
      return { answer: { hookSpecificOutput: { hookEventName: 'BeforeToolSelection', toolConfig: kept.length ? { mode: 'AUTO', allowedFunctionNames: kept } : { mode: 'NONE' } } } }
    }
    default:
      return undefined
  }
}
