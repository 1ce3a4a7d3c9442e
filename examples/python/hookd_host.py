"""A small hookd host library for Python: open a session on a hookd sidecar, call hook points, and
serve the capabilities hooks ask for (proto/hookd/v1/hookd.proto, docs/protocol.md).

    from hookd_host import Handlers, connect

    with connect("unix:.hookd/hookd.sock") as client:
        session = client.open_session("run-1", ["guard"], interactive=True,
                                      handlers=Handlers(confirm=lambda m, origin: input(m["title"]) == "y"))
        gate = session.call("beforeToolExecute", {"id": "c1", "name": "shell", "arguments": {"command": "ls"}})
        if gate.result["allow"]: ...
        session.close("end_turn")   # runs afterRun

Point results carry `result` (the chained value), `diagnostics` and `trace`, with kinds and outcomes
as lower-case names ("invalid-result", "no-opinion"), as the TypeScript host library has them.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hookd_stubs  # noqa: E402

hookd_stubs.load()

import grpc  # noqa: E402
from hookd.v1 import hookd_pb2, hookd_pb2_grpc  # noqa: E402

PROTOCOL_VERSION = 1
FILE_ACCESS = {
    "read-write": hookd_pb2.FILE_ACCESS_READ_WRITE,
    "read": hookd_pb2.FILE_ACCESS_READ,
    "none": hookd_pb2.FILE_ACCESS_NONE,
}


class HookdError(Exception):
    """hookd refused what the host sent, or the session ended. `code` is the gRPC status name in
    lower case with dashes ("not-found", "invalid-argument", ...), as the TypeScript library has it."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class CapabilityError(Exception):
    """Raise from a handler to fail a capability call with a code the hook sees ("denied", ...)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def kind_name(enum_name: str, prefix: str = "") -> str:
    """INVALID_RESULT -> invalid-result; HOOK_OUTCOME_NO_OPINION (prefix HOOK_OUTCOME_) -> no-opinion."""
    return enum_name[len(prefix):].lower().replace("_", "-") if enum_name.startswith(prefix) else enum_name.lower()


def diagnostic(d: hookd_pb2.Diagnostic) -> dict[str, Any]:
    out: dict[str, Any] = {
        "hook": d.hook,
        "point": d.point,
        "kind": kind_name(hookd_pb2.DiagnosticKind.Name(d.kind)),
        "message": d.message,
    }
    if d.file:
        out["file"] = d.file
    if d.line:
        out["line"] = d.line
    if d.version:
        out["version"] = d.version
    return out


@dataclass
class PointResult:
    point: str
    result: Any
    diagnostics: list[dict[str, Any]]
    trace: list[dict[str, Any]]
    duration_us: int

    @staticmethod
    def from_wire(r: hookd_pb2.PointResult) -> "PointResult":
        return PointResult(
            point=r.point,
            result=json.loads(r.result.decode() or "null"),
            diagnostics=[diagnostic(d) for d in r.diagnostics],
            trace=[
                {
                    "hook": t.hook,
                    "version": t.version,
                    "outcome": kind_name(hookd_pb2.HookOutcome.Name(t.outcome), "HOOK_OUTCOME_"),
                    "duration_us": t.duration_us,
                    "cpu_us": t.cpu_us,
                }
                for t in r.trace
            ],
            duration_us=r.duration_us,
        )


Origin = dict[str, Any]  # {"hook", "point", "seq"}: who made a capability call


def _no_confirm(message: dict[str, Any], origin: Origin) -> bool:
    raise CapabilityError("unavailable", "this host has no one to answer ctx.confirm")


@dataclass
class Handlers:
    """How the host serves hooks' capabilities. Files default to the workdir, confined (real paths);
    http.fetch is not served unless `fetch` is given."""

    confirm: Callable[[dict[str, Any], Origin], bool] = _no_confirm
    notify: Callable[[dict[str, Any], Origin], None] = lambda message, origin: None
    log: Callable[[dict[str, Any]], None] = lambda line: None
    diagnostic: Callable[[dict[str, Any]], None] = lambda d: None
    fetch: Callable[[str, dict[str, Any], Origin], dict[str, Any]] | None = None
    files: dict[str, Callable[..., Any]] = field(default_factory=dict)


def _confined(workdir: str, path: str) -> Path:
    root = Path(workdir).resolve()
    target = (root / path).resolve()  # follows symbolic links
    if os.path.isabs(path) or (target != root and root not in target.parents):
        raise CapabilityError("denied", f"{path!r} leads outside the workdir")
    return target


def _file_op(workdir: str, name: str, args: list[Any]) -> Any:
    try:
        if name == "file.read":
            return _confined(workdir, args[0]).read_text()
        if name == "file.write":
            target = _confined(workdir, args[0])
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(args[1])
            return None
        if name == "file.append":
            target = _confined(workdir, args[0])
            target.parent.mkdir(parents=True, exist_ok=True)
            with target.open("a") as out:
                out.write(args[1])
            return None
        if name == "file.exists":
            return _confined(workdir, args[0]).exists()
        if name == "file.list":
            return sorted(os.listdir(_confined(workdir, args[0] if args else ".")))
    except OSError as err:
        code = {2: "ENOENT", 13: "EACCES", 20: "ENOTDIR", 21: "EISDIR"}.get(err.errno or 0, "failed")
        raise CapabilityError(code, f"ctx.{name}({args[0]!r}) failed: {err.strerror}") from None
    raise CapabilityError("invalid", f"this host does not serve {name!r}")


class Session:
    """One agent run on a Session stream. Thread-safe; point calls may overlap."""

    def __init__(self, stub: hookd_pb2_grpc.HookExecutorStub, handlers: Handlers, workdir: str, metadata: list[tuple[str, str]]) -> None:
        self.handlers = handlers
        self.workdir = workdir
        self.id = ""
        self.hooks: list[dict[str, Any]] = []
        self._out: "queue.Queue[hookd_pb2.HostMessage | None]" = queue.Queue()
        self._lock = threading.Lock()
        self._next_seq = 1
        self._pending: dict[int, Future[PointResult]] = {}
        self._opened: Future[None] = Future()
        self._closed: Future[PointResult] | None = None
        self._ended: HookdError | None = None
        self._responses = stub.Session(self._requests(), metadata=metadata)
        threading.Thread(target=self._read, daemon=True).start()

    def _requests(self) -> Iterator[hookd_pb2.HostMessage]:
        while True:
            message = self._out.get()
            if message is None:
                return
            yield message

    def _send(self, message: hookd_pb2.HostMessage) -> None:
        self._out.put(message)

    def open(self, open_message: hookd_pb2.OpenSession, timeout: float) -> None:
        self._send(hookd_pb2.HostMessage(open=open_message))
        self._opened.result(timeout=timeout)

    def call(self, point: str, payload: Any, timeout: float | None = 60) -> PointResult:
        """Runs one point through the session's hooks; returns the chained result."""
        with self._lock:
            if self._ended:
                raise self._ended
            seq = self._next_seq
            self._next_seq += 1
            done: Future[PointResult] = Future()
            self._pending[seq] = done
        self._send(hookd_pb2.HostMessage(call=hookd_pb2.PointCall(seq=seq, point=point, payload=json.dumps(payload).encode())))
        return done.result(timeout=timeout)

    def close(self, reason: str = "end_turn", timeout: float | None = 60) -> PointResult:
        """Ends the run: hookd runs afterRun with the reason, answers, and ends the stream."""
        with self._lock:
            if self._ended:
                raise self._ended
            self._closed = Future()
            closed = self._closed
        self._send(hookd_pb2.HostMessage(close=hookd_pb2.CloseSession(reason=reason)))
        result = closed.result(timeout=timeout)
        self._out.put(None)
        return result

    def abandon(self) -> None:
        """Drops the stream without running afterRun."""
        self._out.put(None)
        self._responses.cancel()

    def _fail(self, err: HookdError) -> None:
        with self._lock:
            if self._ended:
                return
            self._ended = err
            pending = list(self._pending.values())
            self._pending.clear()
            closed = self._closed
        for f in [*pending, self._opened, *([closed] if closed else [])]:
            if not f.done():
                f.set_exception(err)

    def _read(self) -> None:
        try:
            for message in self._responses:
                self._on_message(message)
            self._fail(HookdError("unavailable", "the sidecar ended the session"))
        except grpc.RpcError as err:
            code = err.code() if hasattr(err, "code") else grpc.StatusCode.UNKNOWN
            details = err.details() if hasattr(err, "details") else str(err)
            self._fail(HookdError(code.name.lower().replace("_", "-"), details or code.name))

    def _on_message(self, message: hookd_pb2.SidecarMessage) -> None:
        kind = message.WhichOneof("kind")
        if kind == "opened":
            self.id = message.opened.session_id
            self.hooks = [
                {"name": h.name, "version": h.version, "points": list(h.points), "status": kind_name(hookd_pb2.HookStatus.Name(h.status), "HOOK_STATUS_")}
                for h in message.opened.hooks
            ]
            self._opened.set_result(None)
        elif kind == "result":
            with self._lock:
                done = self._pending.pop(message.result.seq, None)
            if done:
                done.set_result(PointResult.from_wire(message.result))
        elif kind == "closed":
            if self._closed and not self._closed.done():
                self._closed.set_result(PointResult.from_wire(message.closed.result))
        elif kind == "log":
            line = message.log
            self.handlers.log({"seq": line.seq, "hook": line.hook, "point": line.point, "message": line.message, "time_ms": line.time_ms})
        elif kind == "diagnostic":
            self.handlers.diagnostic(diagnostic(message.diagnostic))
        elif kind == "capability_call":
            # Served on its own thread: a confirm may wait on a human while other calls go on.
            threading.Thread(target=self._serve, args=(message.capability_call,), daemon=True).start()

    def _serve(self, call: hookd_pb2.CapabilityCall) -> None:
        origin: Origin = {"hook": call.hook, "point": call.point, "seq": call.seq}
        try:
            args = json.loads(call.args.decode())
            if call.capability == "confirm":
                value: Any = self.handlers.confirm(args[0], origin) is True
            elif call.capability == "notify":
                self.handlers.notify(args[0], origin)
                value = None
            elif call.capability == "http.fetch":
                if self.handlers.fetch is None:
                    raise CapabilityError("unavailable", "this host does not serve ctx.http.fetch")
                value = self.handlers.fetch(args[0], args[1] if len(args) > 1 else {}, origin)
            elif call.capability in self.handlers.files:
                value = self.handlers.files[call.capability](*args)
            else:
                value = _file_op(self.workdir, call.capability, args)
            reply = hookd_pb2.CapabilityResult(id=call.id, value=json.dumps(value).encode())
        except CapabilityError as err:
            reply = hookd_pb2.CapabilityResult(id=call.id, error=hookd_pb2.CapabilityError(code=err.code, message=str(err)))
        except Exception as err:  # noqa: BLE001 - a handler's failure is the hook's capability error
            reply = hookd_pb2.CapabilityResult(id=call.id, error=hookd_pb2.CapabilityError(code="failed", message=f"{type(err).__name__}: {err}"))
        self._send(hookd_pb2.HostMessage(capability_result=reply))


class Client:
    def __init__(self, address: str, token: str | None = None) -> None:
        target = address
        self.channel = grpc.insecure_channel(target, options=[("grpc.max_receive_message_length", 8 * 1024 * 1024)])
        self.stub = hookd_pb2_grpc.HookExecutorStub(self.channel)
        self.metadata = [("authorization", f"Bearer {token}")] if token else []

    def wait_ready(self, timeout: float = 5) -> None:
        try:
            grpc.channel_ready_future(self.channel).result(timeout=timeout)
        except grpc.FutureTimeoutError:
            raise HookdError("unavailable", "cannot reach hookd; is 'hookd serve' running there?") from None

    def open_session(
        self,
        session_id: str,
        hooks: list[str],
        *,
        agent_id: str = "",
        model_id: str = "",
        workdir: str | None = None,
        interactive: bool = False,
        auto_approve: bool = False,
        file_access: str = "read-write",
        http_origins: list[str] | None = None,
        env_names: list[str] | None = None,
        allow_confirm: bool = True,
        env: dict[str, str] | None = None,
        handlers: Handlers | None = None,
        timeout: float = 30,
    ) -> Session:
        """Opens a session (one agent run); raises HookdError when hookd refuses it."""
        workdir = workdir or os.getcwd()
        names = env_names or []
        values = env if env is not None else dict(os.environ)
        open_message = hookd_pb2.OpenSession(
            protocol_version=PROTOCOL_VERSION,
            session_id=session_id,
            agent_id=agent_id,
            model_id=model_id,
            hooks=hooks,
            workdir=workdir,
            interactive=interactive,
            auto_approve=auto_approve,
            policy=hookd_pb2.CapabilityPolicy(
                file=FILE_ACCESS[file_access], http_origins=http_origins or [], env=names, deny_confirm=not allow_confirm
            ),
            env={n: values[n] for n in names if n in values},
        )
        session = Session(self.stub, handlers or Handlers(), workdir, self.metadata)
        session.open(open_message, timeout)
        return session

    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect(address: str, token: str | None = None, timeout: float = 5) -> Client:
    """Connects to hookd at `address` (unix:PATH or HOST:PORT) and waits until it answers."""
    client = Client(address, token)
    client.wait_ready(timeout)
    return client
