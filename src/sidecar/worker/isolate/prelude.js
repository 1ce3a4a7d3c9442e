// @ts-check
// The hookd prelude: the JavaScript that runs inside each fresh isolate before any of the hook's code.
// surface.ts reads this file and evaluates `(hookdPrelude)(MESSAGE_CHARS, ENTRY)` in every isolate.
// It is checked by `make typecheck` (tsconfig.prelude.json: strict, with unused code reported).
//
/**
 * Runs inside the isolate, in three steps, so that no hook code at all (not even code that escapes the
 * CommonJS wrapper) runs before `ctx` is built and the bridge's methods are captured:
 *
 * 1. The prelude script evaluates to `hookdSetup(bridge)`, which the worker calls when it warms the
 *    isolate, before there is an invocation: it makes ctx's functions and returns `hookdArm`.
 * 2. For the invocation, the worker calls `hookdArm(ctxJson, limitsJson, point, argsJson, resultArg)`
 *    synchronously, before it runs the hook's script. It builds `ctx`, defines the one-shot global
 *    entry (ENTRY) and returns `hookdEntered`. An isolate is armed once.
 * 3. The worker runs the hook's wrapped script, `__hookdEnter(function (module, exports) {...})`. The
 *    entry deletes itself from the global, loads the module and calls the export `point` (`point ===
 *    null`: reports the exports). Loading and calling the hook take one trip to the isolate's thread
 *    instead of two.
 *
 * The wrapper's call is evaluated first, so the entry is always called unless the script throws while
 * evaluating its arguments; `hookdEntered()` tells the worker, when a script failed, whether that was
 * before the module was entered. Code that escapes the wrapper early can at most call the entry itself
 * first, with a module function of its own: that is being the hook, which it is. The entry works once.
 *
 * The answer goes back through the bridge as `$done` with JSON text
 * {"ok":true,"value":"<json>"} | {"ok":true} | {"ok":false,"kind":...,"message":...,"line":...}.
 * The worker never awaits a promise of the isolate's, so a hook that replaces Promise.prototype.then,
 * the promise `constructor` or `Symbol.species` cannot touch the worker's side of the answer.
 *
 * `bridge` is the only host object in the isolate; it never leaves the setup closure and is never passed
 * to, or made the receiver of, anything a hook can replace. Every prelude function is strict, so stack
 * frames (structured call sites) and `Function.prototype.caller` do not reveal them. Built-ins are
 * captured before the hook's code runs, so a hook that replaces JSON, Reflect, Error or prototypes
 * changes only its own view.
 *
 * Before any hook code runs the prelude also removes three globals (docs/containment.md):
 * `WebAssembly` (a WebAssembly.Memory is not counted against the isolate's memory limit: measured, a
 * hook grew one to 2 GB under a 16 MB limit), `Atomics.waitAsync` (with a timeout it aborts the whole
 * worker process in isolated-vm 5.0.4) and `console` (a silent no-op here; hooks log with ctx.log).
 */
/**
 * The isolated-vm Reference to the worker's bridge function: the one host object in the isolate.
 * @typedef {{ applySyncPromise: Function, applyIgnored: Function }} Bridge
 */
/**
 * Arms the isolate for its one invocation; returns `hookdEntered`.
 * @typedef {(ctxJson: string, limitsJson: string, point: string | null, argsJson: string, resultArg: number) => () => boolean} HookdArm
 */
/**
 * @param {number} MESSAGE_CHARS the longest diagnostic message, in characters (surface.ts)
 * @param {string} ENTRY the one-shot global through which the hook's script enters (surface.ts)
 * @returns {(bridge: Bridge) => HookdArm} hookdSetup
 */
function hookdPrelude(MESSAGE_CHARS, ENTRY) {
  'use strict';
  /** @type {Record<string, unknown> & { Atomics: Record<string, unknown> }} */
  const global = /** @type {any} */ (globalThis);
  delete global.WebAssembly;
  delete global.console;
  delete global.Atomics.waitAsync;

  const ReflectApply = Reflect.apply;
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const freeze = Object.freeze;
  const keys = Object.keys;
  const getPrototypeOf = Object.getPrototypeOf;
  const defineProperty = Object.defineProperty;
  const deleteProperty = Reflect.deleteProperty;
  const ErrorCtor = Error;
  const RangeErrorPrototype = RangeError.prototype;
  const StringCtor = String;
  const WeakSetCtor = WeakSet;
  const wsAdd = WeakSet.prototype.add;
  const wsHas = WeakSet.prototype.has;
  const regexpExec = RegExp.prototype.exec;
  const stringSlice = String.prototype.slice;
  const charCodeAt = String.prototype.charCodeAt;
  const objectToString = Object.prototype.toString;
  // A frame in the hook's file, with a line and a positive column: the wrapper's own call of the entry
  // (line 1, a negative column) is the outermost frame of every invocation and never the place to blame.
  const LINE = /hookd-hook:[^:\n]*:(\d{1,7}):\d/;
  const ASCII = /^[\x00-\x7f]*$/;

  /** @param {any} value */
  function deepFreeze(value) {
    if (value !== null && typeof value === 'object') {
      const names = keys(value);
      for (let i = 0; i < names.length; i++) deepFreeze(value[/** @type {string} */ (names[i])]);
      freeze(value);
    }
    return value;
  }

  /** @param {string} text */
  function clip(text) {
    if (text.length <= MESSAGE_CHARS) return text;
    return ReflectApply(stringSlice, text, [0, MESSAGE_CHARS]) + '... (' + (text.length - MESSAGE_CHARS) + ' more characters)';
  }

  // UTF-8 length of well-formed text (JSON.stringify escapes lone surrogates).
  /** @param {string} text */
  function utf8Length(text) {
    if (ReflectApply(regexpExec, ASCII, [text]) !== null) return text.length;
    let n = 0;
    for (let i = 0; i < text.length; i++) {
      const c = ReflectApply(charCodeAt, text, [i]);
      if (c < 0x80) n += 1;
      else if (c < 0x800) n += 2;
      else if (c >= 0xd800 && c < 0xdc00) { n += 4; i++; }
      else n += 3;
    }
    return n;
  }

  /**
   * @param {unknown} value
   * @returns {string}
   */
  function show(value) {
    if (typeof value === 'string') return value;
    try {
      const text = stringify(value);
      if (typeof text === 'string') return text;
    } catch (_) {}
    try { return StringCtor(value); } catch (_) {}
    try { return ReflectApply(objectToString, value, []); } catch (_) { return '[value]'; }
  }

  /**
   * @param {any} err
   * @returns {string}
   */
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

  /**
   * @param {any} err
   * @param {string} message
   */
  function isRangeError(err, message) {
    try {
      return err !== null && typeof err === 'object' && getPrototypeOf(err) === RangeErrorPrototype && err.message === message;
    } catch (_) { return false; }
  }

  /**
   * @param {any} err
   * @returns {number | undefined}
   */
  function lineOf(err) {
    try {
      const stack = err !== null && typeof err === 'object' ? err.stack : undefined;
      if (typeof stack !== 'string') return undefined;
      const m = ReflectApply(regexpExec, LINE, [stack]);
      return m !== null ? +(/** @type {string} */ (m[1])) : undefined;
    } catch (_) { return undefined; }
  }

  // Replies are assembled from primitives only, so a hook that adds toJSON or getters to
  // Object.prototype cannot change what the worker reads. The message is clipped here, once.
  /**
   * @param {string} kind
   * @param {unknown} message
   * @param {number} [line]
   */
  function fail(kind, message, line) {
    let out = '{"ok":false,"kind":' + stringify(kind) + ',"message":' + stringify(clip(StringCtor(message)));
    if (typeof line === 'number' && line >= 1) out += ',"line":' + line;
    return out + '}';
  }

  /** @param {Bridge} bridge */
  return function hookdSetup(bridge) {
    const applySync = bridge.applySyncPromise;
    const applyIgnored = bridge.applyIgnored;
    const denied = new WeakSetCtor();
    const limited = new WeakSetCtor();
    const hostTimeout = new WeakSetCtor();
    // The invocation's, set once by hookdArm.
    let resultLimit = 0, logLimit = 0, logLineLimit = 0, memoryMb = 0, argsJson = '[]', resultArg = -1;
    /** @type {string | null} */
    let point = null;
    /** @type {object | undefined} */
    let ctx;
    let armed = false;
    let answered = false;
    let logChars = 0;
    let logLines = 0;
    let logClosed = false;

    // The answer is posted, not waited for: the isolate's thread does not stop for a round trip to the
    // worker. The worker takes the first answer and disposes the isolate after it.
    /** @param {string} text */
    function answer(text) {
      if (answered) return;
      answered = true;
      ReflectApply(applyIgnored, bridge, [undefined, ['$done', text]]);
    }

    /**
     * @param {string} capability
     * @param {unknown[]} args
     * @returns {unknown}
     */
    function call(capability, args) {
      if (answered) throw new ErrorCtor('ctx.' + capability + ': the hook has already answered; nothing more reaches the host');
      const reply = parse(ReflectApply(applySync, bridge, [undefined, [capability, stringify(args)]]));
      if (reply.ok === true) return reply.value;
      throw capabilityError(reply.code, reply.message);
    }

    /**
     * @param {unknown} code
     * @param {unknown} message
     */
    function capabilityError(code, message) {
      const err = new ErrorCtor(/** @type {string} */ (message));
      // Defined, not assigned: a setter the hook put on a prototype must not swallow it.
      defineProperty(err, 'code', /** @type {PropertyDescriptor} */ ({ __proto__: null, value: code, writable: true, enumerable: true, configurable: true }));
      if (code === 'denied') ReflectApply(wsAdd, denied, [err]);
      else if (code === 'limit') ReflectApply(wsAdd, limited, [err]);
      else if (code === 'timeout') ReflectApply(wsAdd, hostTimeout, [err]);
      return err;
    }

    /**
     * ctx.env: the values, frozen, and for a hook that declares its permissions, each name the session
     * would show but the hook did not declare as a getter that throws the refusal (code 'denied'):
     * not enumerable, so spreading or serialising ctx.env never reads it.
     * @param {Record<string, unknown>} values
     * @param {Record<string, unknown> | undefined} refusals
     */
    function envOf(values, refusals) {
      const env = deepFreeze(values);
      if (refusals === undefined || refusals === null) return env;
      /** @type {Record<string, unknown>} */
      const out = {};
      const names = keys(env);
      for (let i = 0; i < names.length; i++) {
        const name = /** @type {string} */ (names[i]);
        defineProperty(out, name, /** @type {PropertyDescriptor} */ ({ __proto__: null, value: env[name], enumerable: true, writable: false, configurable: false }));
      }
      const withheld = keys(refusals);
      for (let i = 0; i < withheld.length; i++) {
        const name = /** @type {string} */ (withheld[i]);
        const message = refusals[name];
        const get = freeze(function env() { throw capabilityError('denied', message); });
        defineProperty(out, name, /** @type {PropertyDescriptor} */ ({ __proto__: null, get, enumerable: false, configurable: false }));
      }
      return freeze(out);
    }

    // The worker counts exact UTF-8 bytes and sends the truncation marker; counting characters here
    // (never more than bytes) only keeps a flood from crossing the boundary at all once it is over.
    /** @param {...unknown} values */
    function log(...values) {
      if (logClosed || answered) return;
      let line = '';
      for (let i = 0; i < values.length; i++) line = (i ? line + ' ' : line) + show(values[i]);
      logChars += line.length + 1;
      logLines += 1;
      if (logLines > logLineLimit) logClosed = true;
      if (logChars > logLimit) {
        logClosed = true;
        if (line.length > logLimit) line = ReflectApply(stringSlice, line, [0, logLimit + 1]);
      }
      ReflectApply(applyIgnored, bridge, [undefined, ['log', line]]);
    }

    // ctx's functions, made ahead of the invocation; hookdArm adds the invocation's data. One per
    // capability record (src/protocol/capabilities.ts), at its path, sending its name: the records are
    // the list, and test/integration/capabilities/capability-dispatch.test.ts walks this tree against them.
    const ctxLog = freeze(log);
    const ctxNotify = freeze(/** @param {unknown} message */ function notify(message) { call('notify', [message]); });
    const ctxConfirm = freeze(/** @param {unknown} message */ function confirm(message) { return call('confirm', [message]) === true; });
    const ctxFile = freeze({
      read: freeze(/** @param {unknown} path */ function read(path) { return call('file.read', [path]); }),
      write: freeze(/** @param {unknown} path @param {unknown} text */ function write(path, text) { call('file.write', [path, text]); }),
      append: freeze(/** @param {unknown} path @param {unknown} text */ function append(path, text) { call('file.append', [path, text]); }),
      exists: freeze(/** @param {unknown} path */ function exists(path) { return call('file.exists', [path]); }),
      list: freeze(/** @param {unknown} dir */ function list(dir) { return call('file.list', [dir === undefined ? '.' : dir]); }),
    });
    const ctxHttp = freeze({
      fetch: freeze(/** @param {unknown} url @param {unknown} init */ function fetch(url, init) { return call('http.fetch', init === undefined ? [url] : [url, init]); }),
    });

    /**
     * @param {string} kind
     * @param {unknown} err
     */
    function failure(kind, err) {
      return fail(kind, describe(err), lineOf(err));
    }

    // What a value thrown out of the hook (or a rejection) becomes.
    /** @param {unknown} err */
    function thrown(err) {
      if (ReflectApply(wsHas, denied, [err])) return failure('capability-denied', err);
      if (ReflectApply(wsHas, limited, [err])) return failure('limit', err);
      if (ReflectApply(wsHas, hostTimeout, [err])) return failure('timeout', err);
      if (isRangeError(err, 'Array buffer allocation failed')) {
        return fail('memory', 'ran out of its memory limit of ' + memoryMb + ' MB (' + describe(err) + ')', lineOf(err));
      }
      return failure('throw', err);
    }

    /** @param {unknown} value */
    function serialize(value) {
      if (value === undefined) return '{"ok":true}';
      let json;
      try {
        json = stringify(value);
      } catch (err) {
        if (isRangeError(err, 'Invalid string length')) {
          return fail('result-too-large', 'the returned value is longer as JSON than the engine can hold; the limit is ' + resultLimit + ' bytes');
        }
        return fail('invalid-result', 'the returned value is not JSON-serializable (' + describe(err) + ')');
      }
      if (typeof json !== 'string') {
        return fail('invalid-result', 'the returned value (a ' + typeof value + ') is not JSON-serializable');
      }
      if (json.length > resultLimit) {
        return fail('result-too-large', 'the returned value is ' + json.length + ' characters of JSON, over the limit of ' + resultLimit + ' bytes');
      }
      // At most resultLimit characters here, so counting bytes costs little.
      const bytes = utf8Length(json);
      if (bytes > resultLimit) {
        return fail('result-too-large', 'the returned value is ' + bytes + ' bytes of JSON, over the limit of ' + resultLimit + ' bytes');
      }
      return '{"ok":true,"value":' + stringify(json) + '}';
    }

    // A hook exports one function per point it handles (the catalog has fewer than 200): more is not a
    // hook, and every name reported costs the sidecar work. Long names are reported cut short.
    const MAX_EXPORTS = 1000;
    const MAX_EXPORT_NAME = 128;

    /** @param {any} exportsValue */
    function exportNames(exportsValue) {
      let json = '[';
      let count = 0;
      if (exportsValue !== null && (typeof exportsValue === 'object' || typeof exportsValue === 'function')) {
        const own = keys(exportsValue);
        for (let i = 0; i < own.length; i++) {
          const name = /** @type {string} */ (own[i]);
          if (typeof exportsValue[name] !== 'function') continue;
          if (++count > MAX_EXPORTS) {
            return fail('load', 'the hook exports more than ' + MAX_EXPORTS + ' functions; a hook exports one function per point it handles');
          }
          const shown = name.length > MAX_EXPORT_NAME ? ReflectApply(stringSlice, name, [0, MAX_EXPORT_NAME]) + '...' : name;
          json += (count > 1 ? ',' : '') + stringify(shown);
        }
      }
      return '{"ok":true,"value":' + stringify(json + ']') + '}';
    }

    /**
     * @param {unknown} value
     * @param {(settled: unknown) => unknown} resultOf
     */
    async function settle(value, resultOf) {
      let settled;
      try {
        settled = await value;
      } catch (err) {
        return answer(thrown(err));
      }
      answer(serialize(resultOf(settled)));
    }

    /** @param {Function} factory */
    function invoke(factory) {
      try {
        const args = parse(argsJson);
        /** @type {any} */
        let exportsValue;
        try {
          /** @type {{ exports: unknown }} */
          const module = { exports: {} };
          ReflectApply(factory, undefined, [module, module.exports]);
          exportsValue = module.exports;
        } catch (err) {
          return answer(failure('load', err));
        }
        if (point === null) return answer(exportNames(exportsValue));

        let value;
        let thenable = false;
        try {
          const handler = exportsValue === null || exportsValue === undefined ? undefined : exportsValue[point];
          if (typeof handler !== 'function') return answer(fail('load', 'the hook exports no function named "' + point + '"'));
          // Array literals only: assigning indexes would run setters the hook's top-level code put on
          // Array.prototype. No point takes more than three arguments.
          const n = args.length;
          const callArgs = n === 0 ? [ctx] : n === 1 ? [ctx, args[0]] : n === 2 ? [ctx, args[0], args[1]] : [ctx, args[0], args[1], args[2]];
          value = ReflectApply(handler, exportsValue, callArgs);
          if (value !== null && (typeof value === 'object' || typeof value === 'function')) thenable = typeof value.then === 'function';
        } catch (err) {
          return answer(thrown(err));
        }
        // Mutating points (event point) answer with the event the handler was given, as it left it.
        const resultOf = (/** @type {unknown} */ settled) => (resultArg >= 0 ? args[resultArg] : settled);
        if (!thenable) return answer(serialize(resultOf(value)));
        settle(value, resultOf);
      } catch (err) {
        answer(fail('throw', 'the hook broke the call itself (' + describe(err) + ')'));
      }
    }

    let entered = false;
    /** @param {Function} factory */
    function enter(factory) {
      if (entered) return;
      entered = true;
      deleteProperty(global, ENTRY);
      invoke(factory);
    }
    function hookdEntered() { return entered; }

    /** @type {HookdArm} */
    return function hookdArm(ctxJson, limitsJson, callPoint, callArgsJson, callResultArg) {
      if (armed) throw new ErrorCtor('hookd: an isolate serves one invocation');
      armed = true;
      const limits = parse(limitsJson);
      resultLimit = limits.resultBytes;
      logLimit = limits.logBytes;
      logLineLimit = limits.logLines;
      memoryMb = limits.memoryMb;
      point = callPoint;
      argsJson = callArgsJson;
      resultArg = callResultArg;
      const data = parse(ctxJson);
      ctx = freeze({
        workdir: data.workdir,
        session: deepFreeze(data.session),
        agent: deepFreeze(data.agent),
        config: deepFreeze(data.config),
        system: deepFreeze(data.system),
        env: envOf(data.env, data.envRefusals),
        log: ctxLog,
        notify: ctxNotify,
        confirm: ctxConfirm,
        file: ctxFile,
        http: ctxHttp,
      });
      defineProperty(global, ENTRY, /** @type {PropertyDescriptor} */ ({ __proto__: null, configurable: true, enumerable: false, writable: false, value: enter }));
      return hookdEntered;
    };
  };
}
