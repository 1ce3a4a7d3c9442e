/**
 * The capability surface: the whole `ctx` that hook code can touch, declared once.
 *
 * - The host capabilities that `ctx` calls, with their argument schemas, are declared in
 *   src/protocol/capabilities.ts (they cross to the host on the wire as CapabilityCall).
 * - `PRELUDE` is the JavaScript that runs inside each fresh isolate, before the hook's own code, and
 *   builds `ctx` from plain data plus one host function reachable only from the prelude's closure.
 *   It also calls the hook and copies its answer out as JSON text, with size checks, inside the
 *   isolate: no hook getter, proxy trap or toJSON ever runs outside it.
 * - `wrapHookSource` turns a CommonJS hook file into a function expression without moving its lines.
 *
 * types/hook.d.ts declares the same surface for hook authors; keep the three in step.
 */
/** The wrapper keeps the hook's own line numbers: it adds nothing before the first line's text. */
const WRAP_HEAD = '(function (module, exports) {'
const WRAP_TAIL = '\n})'

export function wrapHookSource(source: string): { code: string; columnOffset: number } {
  return { code: WRAP_HEAD + source + WRAP_TAIL, columnOffset: -WRAP_HEAD.length }
}

/**
 * Runs inside the isolate. It evaluates to an async function that the worker calls once per invocation
 * with (bridge, ctxJson, factory, point, argsJson, resultLimit) and that resolves to JSON text:
 * {"ok":true,"value":"<json>"} | {"ok":true} | {"ok":false,"kind":...,"message":...,"line":...}.
 *
 * `bridge` is the only host object in the isolate; it never leaves this closure. Built-ins are captured
 * before the hook's code runs, so a hook that replaces JSON, Reflect, Error or prototypes changes only
 * its own view.
 */
export const PRELUDE = String.raw`(function () {
'use strict';
const ReflectApply = Reflect.apply;
const stringify = JSON.stringify;
const parse = JSON.parse;
const freeze = Object.freeze;
const keys = Object.keys;
const isArray = Array.isArray;
const ErrorCtor = Error;
const StringCtor = String;
const WeakSetCtor = WeakSet;
const wsAdd = WeakSet.prototype.add;
const wsHas = WeakSet.prototype.has;
const regexpExec = RegExp.prototype.exec;
const arrayJoin = Array.prototype.join;
const arrayPush = Array.prototype.push;
const objectToString = Object.prototype.toString;

function deepFreeze(value) {
  if (value !== null && typeof value === 'object') {
    const names = keys(value);
    for (let i = 0; i < names.length; i++) deepFreeze(value[names[i]]);
    freeze(value);
  }
  return value;
}

return async function hookdInvoke(bridge, ctxJson, factory, point, argsJson, resultLimit) {
  const applySync = bridge.applySyncPromise;
  const applyIgnored = bridge.applyIgnored;
  const denied = new WeakSetCtor();
  const limited = new WeakSetCtor();
  const data = parse(ctxJson);

  function call(capability, args) {
    const reply = parse(ReflectApply(applySync, bridge, [undefined, [capability, stringify(args)]]));
    if (reply.ok) return reply.value;
    const err = new ErrorCtor(reply.message);
    err.code = reply.code;
    if (reply.code === 'denied') ReflectApply(wsAdd, denied, [err]);
    if (reply.code === 'limit') ReflectApply(wsAdd, limited, [err]);
    throw err;
  }

  function show(value) {
    if (typeof value === 'string') return value;
    try {
      const text = stringify(value);
      if (typeof text === 'string') return text;
    } catch (_) {}
    try { return StringCtor(value); } catch (_) { return ReflectApply(objectToString, value, []); }
  }

  const ctx = freeze({
    workdir: data.workdir,
    session: deepFreeze(data.session),
    agent: deepFreeze(data.agent),
    config: deepFreeze(data.config),
    system: deepFreeze(data.system),
    env: deepFreeze(data.env),
    log: freeze(function log(...values) {
      const parts = [];
      for (let i = 0; i < values.length; i++) ReflectApply(arrayPush, parts, [show(values[i])]);
      ReflectApply(applyIgnored, bridge, [undefined, ['log', ReflectApply(arrayJoin, parts, [' '])]]);
    }),
    notify: freeze(function notify(message) { call('notify', [message]); }),
    confirm: freeze(function confirm(message) { return call('confirm', [message]) === true; }),
    file: freeze({
      read: freeze(function read(path) { return call('file.read', [path]); }),
      write: freeze(function write(path, text) { call('file.write', [path, text]); }),
      exists: freeze(function exists(path) { return call('file.exists', [path]); }),
      list: freeze(function list(dir) { return call('file.list', [dir === undefined ? '.' : dir]); }),
    }),
    http: freeze({
      fetch: freeze(function fetch(url, init) { return call('http.fetch', init === undefined ? [url] : [url, init]); }),
    }),
  });

  function lineOf(err) {
    try {
      const stack = err && err.stack;
      if (typeof stack !== 'string') return undefined;
      const m = ReflectApply(regexpExec, /hookd-hook:[^:\n]*:(\d+)/, [stack]);
      return m ? +m[1] : undefined;
    } catch (_) { return undefined; }
  }

  function describe(err) {
    try {
      if (err !== null && typeof err === 'object') {
        const name = err.name, msg = err.message;
        if (typeof msg === 'string') return (typeof name === 'string' && name ? name : 'Error') + ': ' + msg;
      }
      return 'threw ' + show(err);
    } catch (_) {
      return 'threw a value that could not be described';
    }
  }

  // Replies are assembled from primitives only, so a hook that adds toJSON or getters to
  // Object.prototype cannot change what the worker reads.
  function fail(kind, message, line) {
    let out = '{"ok":false,"kind":' + stringify(kind) + ',"message":' + stringify(StringCtor(message));
    if (typeof line === 'number') out += ',"line":' + line;
    return out + '}';
  }

  function failure(kind, err) {
    return fail(kind, describe(err), lineOf(err));
  }

  let exportsValue;
  try {
    const module = { exports: {} };
    ReflectApply(factory, undefined, [module, module.exports]);
    exportsValue = module.exports;
  } catch (err) {
    return failure('load', err);
  }
  if (point === null) {
    const names = [];
    if (exportsValue !== null && (typeof exportsValue === 'object' || typeof exportsValue === 'function')) {
      const own = keys(exportsValue);
      for (let i = 0; i < own.length; i++) {
        if (typeof exportsValue[own[i]] === 'function') ReflectApply(arrayPush, names, [own[i]]);
      }
    }
    return '{"ok":true,"value":' + stringify(stringify(names)) + '}';
  }
  const handler = exportsValue == null ? undefined : exportsValue[point];
  if (typeof handler !== 'function') {
    return fail('load', 'the hook exports no function named "' + point + '"');
  }

  let value;
  try {
    const args = parse(argsJson);
    value = ReflectApply(handler, exportsValue, [ctx, ...args]);
    if (value !== null && (typeof value === 'object' || typeof value === 'function')) {
      const then = value.then;
      if (typeof then === 'function') value = await value;
    }
  } catch (err) {
    if (ReflectApply(wsHas, denied, [err])) return failure('capability-denied', err);
    if (ReflectApply(wsHas, limited, [err])) return failure('limit', err);
    return failure('throw', err);
  }

  if (value === undefined) return '{"ok":true}';
  let json;
  try {
    json = stringify(value);
  } catch (err) {
    return fail('invalid-result', 'the returned value is not JSON-serializable (' + describe(err) + ')');
  }
  if (typeof json !== 'string') {
    return fail('invalid-result', 'the returned value (a ' + typeof value + ') is not JSON-serializable');
  }
  if (json.length > resultLimit) {
    return fail('result-too-large', 'the returned value is ' + json.length + ' characters of JSON, over the limit of ' + resultLimit);
  }
  return '{"ok":true,"value":' + stringify(json) + '}';
};
})()`

/**
 * The script name hook code is compiled under, e.g. "hookd-hook:guard/index.js". The prelude reads line
 * numbers from stack frames by this prefix.
 */
export function hookScriptName(filename: string): string {
  return 'hookd-hook:' + filename
}

/** The 1-based line in a compile error's text such as "... [hookd-hook:guard/index.js:3:5]". */
export function lineFromMessage(message: string): number | undefined {
  const m = /hookd-hook:[^:\n]*:(\d+)/.exec(message)
  return m ? Number(m[1]) : undefined
}
