"""Write a hookd remote hook in Python: a gRPC server of the `hookd.v1.Hook` service
(proto/hookd/v1/hook.proto) that runs plain Python functions as hook handlers.

    from hookd_hook import serve

    def before_tool_execute(ctx, call):
        if "rm -rf" in call["arguments"].get("command", ""):
            if not ctx.confirm("Dangerous command", call["arguments"]["command"]):
                return {"allow": False, "reason": "refused by the user"}

    serve({"guard": {"beforeToolExecute": before_tool_execute}}, "unix:guard.sock")

A handler receives `ctx` and the point's arguments, as a sandboxed JavaScript hook does, and returns
the fields it changes (or None: no opinion). For mutating (zidane) points it changes the event it is
given in place; its return value is ignored. `ctx` offers what the JavaScript ctx offers: data
(`ctx.workdir`, `ctx.session`, `ctx.agent`, `ctx.config`, `ctx.system`, `ctx.env`, `ctx.hook`) and
capabilities (`ctx.log`, `ctx.confirm`, `ctx.notify`, `ctx.file.*`, `ctx.http.fetch`) that hookd checks
against the session's policy and forwards to the host. A refused or failed capability raises
`CapabilityError` (its `code` is "denied", "limit", ...); left uncaught it is reported to the host as a
CAPABILITY_DENIED or LIMIT diagnostic, as for a sandboxed hook. Any other exception is a THROW
diagnostic. Either way hookd skips the hook for that call and the run goes on.

Unlike a sandboxed hook, this process keeps its state between calls and runs with its own privileges.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import sys
import threading
import traceback
from concurrent import futures
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hookd_stubs  # noqa: E402

hookd_stubs.load()

import grpc  # noqa: E402
from hookd.v1 import hook_pb2, hook_pb2_grpc  # noqa: E402

PROTOCOL_VERSION = 1

Handler = Callable[..., Any]


class CapabilityError(Exception):
    """A capability call that hookd or the host refused or could not serve."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class _Stream:
    """One Run stream: sends capability calls and logs, and waits for capability results."""

    def __init__(self, out: "queue.Queue[hook_pb2.HookToSidecar | None]") -> None:
        self.out = out
        self.lock = threading.Lock()
        self.next_id = 1
        self.waiting: dict[int, "queue.Queue[hook_pb2.HookCapabilityResult | None]"] = {}
        self.closed = False

    def call(self, capability: str, args: list[Any]) -> Any:
        box: "queue.Queue[hook_pb2.HookCapabilityResult | None]" = queue.Queue(maxsize=1)
        with self.lock:
            if self.closed:
                raise CapabilityError("cancelled", f"ctx.{capability}: hookd ended this invocation")
            call_id = self.next_id
            self.next_id += 1
            self.waiting[call_id] = box
        self.out.put(
            hook_pb2.HookToSidecar(
                capability_call=hook_pb2.HookCapabilityCall(
                    id=call_id, capability=capability, args=json.dumps(args).encode()
                )
            )
        )
        result = box.get()
        if result is None:
            raise CapabilityError("cancelled", f"ctx.{capability}: hookd ended this invocation")
        if result.WhichOneof("outcome") == "error":
            raise CapabilityError(result.error.code, result.error.message)
        return json.loads(result.value.decode() or "null")

    def answered(self, result: hook_pb2.HookCapabilityResult) -> None:
        with self.lock:
            box = self.waiting.pop(result.id, None)
        if box is not None:
            box.put(result)

    def close(self) -> None:
        with self.lock:
            self.closed = True
            boxes = list(self.waiting.values())
            self.waiting.clear()
        for box in boxes:
            box.put(None)


class _Files:
    def __init__(self, stream: _Stream) -> None:
        self._stream = stream

    def read(self, path: str) -> str:
        return self._stream.call("file.read", [path])

    def write(self, path: str, text: str) -> None:
        self._stream.call("file.write", [path, text])

    def append(self, path: str, text: str) -> None:
        self._stream.call("file.append", [path, text])

    def exists(self, path: str) -> bool:
        return self._stream.call("file.exists", [path])

    def list(self, path: str = ".") -> list[str]:
        return self._stream.call("file.list", [path])


class _Http:
    def __init__(self, stream: _Stream) -> None:
        self._stream = stream

    def fetch(self, url: str, init: dict[str, Any] | None = None) -> dict[str, Any]:
        """Returns {"status", "headers", "body"}, as the JavaScript ctx.http.fetch."""
        return self._stream.call("http.fetch", [url] if init is None else [url, init])


class Ctx:
    """What a handler gets as `ctx`: the invocation's data and the host's capabilities."""

    def __init__(self, data: dict[str, Any], stream: _Stream) -> None:
        self._stream = stream
        self.workdir: str = data.get("workdir", "")
        self.session: dict[str, Any] = data.get("session", {})
        self.agent: dict[str, Any] = data.get("agent", {})
        self.config: Any = data.get("config", {})
        self.system: dict[str, Any] = data.get("system", {})
        self.env: dict[str, str] = data.get("env", {})
        self.hook: dict[str, Any] = data.get("hook", {})
        self.file = _Files(stream)
        self.http = _Http(stream)

    def log(self, *values: Any) -> None:
        """A line for the host, delivered while the hook runs."""
        text = " ".join(v if isinstance(v, str) else json.dumps(v) for v in values)
        self._stream.out.put(hook_pb2.HookToSidecar(log=hook_pb2.HookLog(message=text)))

    def confirm(self, title: str | dict[str, str], body: str | None = None) -> bool:
        """Asks the human; blocks until they answer (or the session's auto-approve answers).
        Takes `title, body` or, as the JavaScript ctx, one `{"title", "body"}` dict."""
        return self._stream.call("confirm", [_message(title, body)]) is True

    def notify(self, title: str | dict[str, str], body: str | None = None) -> None:
        self._stream.call("notify", [_message(title, body)])


def _message(title: str | dict[str, str], body: str | None) -> dict[str, str]:
    if isinstance(title, dict):
        return dict(title)
    return {"title": title} if body is None else {"title": title, "body": body}


def _failure(err: BaseException) -> hook_pb2.HookFailure:
    frames = traceback.extract_tb(err.__traceback__)
    last = frames[-1] if frames else None
    return hook_pb2.HookFailure(
        message=f"{type(err).__name__}: {err}",
        code=err.code if isinstance(err, CapabilityError) else "",
        file=os.path.basename(last.filename) if last else "",
        line=(last.lineno or 0) if last else 0,
    )


class _Servicer(hook_pb2_grpc.HookServicer):
    def __init__(self, hooks: dict[str, dict[str, Handler]], version: str, description: str) -> None:
        self.hooks = hooks
        self.version = version
        self.description = description

    def Describe(self, request: hook_pb2.DescribeRequest, context: grpc.ServicerContext) -> hook_pb2.DescribeResponse:
        handlers = self.hooks.get(request.hook)
        if handlers is None:
            context.abort(grpc.StatusCode.NOT_FOUND, f"this server serves {', '.join(sorted(self.hooks))}, not {request.hook!r}")
        return hook_pb2.DescribeResponse(
            protocol_version=PROTOCOL_VERSION,
            points=list(handlers),
            version=self.version,
            description=self.description,
        )

    def Run(self, request_iterator, context: grpc.ServicerContext):
        first = next(request_iterator, None)
        if first is None or first.WhichOneof("kind") != "invocation":
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first message of a Run stream must be an invocation")
        inv = first.invocation
        handler = self.hooks.get(inv.hook, {}).get(inv.handler)
        out: "queue.Queue[hook_pb2.HookToSidecar | None]" = queue.Queue()
        stream = _Stream(out)
        context.add_callback(stream.close)

        def read() -> None:
            try:
                for message in request_iterator:
                    if message.WhichOneof("kind") == "capability_result":
                        stream.answered(message.capability_result)
            except grpc.RpcError:
                pass
            finally:
                stream.close()

        def work() -> None:
            try:
                if handler is None:
                    raise LookupError(f"hook {inv.hook!r} has no handler for {inv.handler!r}")
                args = json.loads(inv.args.decode())
                ctx = Ctx(json.loads(inv.ctx.decode()), stream)
                value = handler(ctx, *args)
                if inv.mutate:
                    value = args[inv.mutate_arg]
                data = b"" if value is None else json.dumps(value).encode()
                out.put(hook_pb2.HookToSidecar(answer=hook_pb2.HookAnswer(value=data)))
            except Exception as err:  # noqa: BLE001 - every failure is the hook's, reported to hookd
                out.put(hook_pb2.HookToSidecar(answer=hook_pb2.HookAnswer(error=_failure(err))))
            finally:
                out.put(None)

        threading.Thread(target=read, daemon=True).start()
        threading.Thread(target=work, daemon=True).start()
        while True:
            try:
                item = out.get(timeout=1.0)
            except queue.Empty:
                if not context.is_active():
                    return
                continue
            if item is None:
                return
            yield item


def resolve_address(text: str, base: Path) -> str:
    """hook.json's "remote" as gRPC dials it: a relative unix: path is relative to the hook folder."""
    if text.startswith("unix:"):
        path = text[len("unix:"):]
        return f"unix:{(base / path).resolve() if not path.startswith('/') else path}"
    return text


def address_from_hook_json(hook_dir: Path) -> str:
    """The address a hook folder's hook.json names, for a server that lives beside it."""
    data = json.loads((hook_dir / "hook.json").read_text())
    return resolve_address(data["remote"], hook_dir)


def serve(
    hooks: dict[str, dict[str, Handler]],
    address: str,
    *,
    version: str = "",
    description: str = "",
    workers: int = 16,
    wait: bool = True,
) -> grpc.Server:
    """Serves `hooks` ({hook name: {point: handler}}) on `address` (unix:PATH or HOST:PORT).

    Prints "listening on ADDRESS" when ready. With `wait`, blocks until SIGINT or SIGTERM.
    """
    if address.startswith("unix:"):
        path = Path(address[len("unix:"):])
        if path.exists():
            path.unlink()  # a stale socket from an earlier run
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=workers))
    hook_pb2_grpc.add_HookServicer_to_server(_Servicer(hooks, version, description), server)
    if server.add_insecure_port(address) == 0 and not address.startswith("unix:"):
        raise SystemExit(f"hookd hook: cannot listen on {address}")
    server.start()
    print(f"listening on {address}", flush=True)
    if wait:
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        signal.signal(signal.SIGINT, lambda *_: stop.set())
        stop.wait()
        server.stop(grace=1).wait()
    return server
