#!/usr/bin/python3
"""An agent host in Python: opens a session on a running hookd sidecar, runs the hook points of one
small scripted agent turn, answers the hooks' ctx.confirm, and prints what came back.

    npx hookd-sandbox serve --hooks examples/python/hooks &                 # the sidecar
    /usr/bin/python3 examples/python/hooks/secret-scan/server.py &  # the remote hook
    /usr/bin/python3 examples/python/host.py                        # this host

Options:
    --addr ADDRESS     the sidecar (default unix:.hookd/hookd.sock)
    --hooks A,B        the hooks the run declares, in order (default secret-scan)
    --answer yes|no    answer every confirm with this; without it a terminal asks you, and with no
                       terminal the run is non-interactive (confirm answered "no" by auto-approve off)
    --json             print one JSON object per point call instead of text
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hookd_host import Handlers, HookdError, PointResult, connect  # noqa: E402

SYSTEM = "You are a careful deployment assistant."
MODEL = "scripted-model"
AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"  # the example key from AWS's documentation, split for scanners

# The agent turn, as a model might have produced it: two tool calls, one carrying a credential.
TOOL_CALLS = [
    {"id": "call-1", "name": "shell", "arguments": {"command": "cat deploy/config.env"}},
    {"id": "call-2", "name": "shell", "arguments": {"command": f"AWS_ACCESS_KEY_ID={AWS_KEY} ./deploy.sh"}},
]
# What the tools print when they run.
TOOL_OUTPUT = {
    "call-1": "REGION=eu-west-1\nDB_PASSWORD=correct-horse-battery\nREPLICAS=3\n",
    "call-2": "deployed 3 replicas",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--addr", default="unix:.hookd/hookd.sock")
    parser.add_argument("--hooks", default="secret-scan")
    parser.add_argument("--answer", choices=["yes", "no"])
    parser.add_argument("--json", action="store_true")
    opts = parser.parse_args()

    lock = threading.Lock()

    def say(text: str) -> None:
        if not opts.json:
            with lock:
                print(text, flush=True)

    def confirm(message: dict[str, Any], origin: dict[str, Any]) -> bool:
        say(f"  ? [{origin['hook']}] {message['title']}\n    {message.get('body', '')}")
        if opts.answer:
            say(f"    answered {opts.answer} (--answer)")
            return opts.answer == "yes"
        with lock:
            reply = input("    allow? [y/N] ").strip().lower()
        return reply in ("y", "yes")

    handlers = Handlers(
        confirm=confirm,
        notify=lambda m, origin: say(f"  ! [{origin['hook']}] {m['title']}: {m.get('body', '')}"),
        log=lambda line: say(f"  | [{line['hook']}] {line['message']}"),
        diagnostic=lambda d: say(f"  ~ {d['kind']} [{d['hook']}] {d['message']}"),
    )
    interactive = opts.answer is not None or sys.stdin.isatty()
    run_id = f"py-{uuid.uuid4().hex[:8]}"
    try:
        client = connect(opts.addr)
    except HookdError as err:
        print(f"host.py: cannot reach hookd at {opts.addr}: {err.message}", file=sys.stderr)
        return 1
    with client:
        try:
            session = client.open_session(
                run_id, [h for h in opts.hooks.split(",") if h], agent_id="deployer", model_id=MODEL,
                interactive=interactive, handlers=handlers,
            )
        except HookdError as err:
            print(f"host.py: hookd refused the session ({err.code}): {err.message}", file=sys.stderr)
            return 1
        say(f"session {session.id}: hooks " + ", ".join(f"{h['name']} ({h['status']}: {', '.join(h['points'])})" for h in session.hooks))

        def point(name: str, payload: Any) -> PointResult:
            say(f"\n{name}")
            out = session.call(name, payload)
            if opts.json:
                print(json.dumps({"point": name, "result": out.result, "diagnostics": out.diagnostics,
                                  "trace": [{"hook": t["hook"], "outcome": t["outcome"]} for t in out.trace]}), flush=True)
            else:
                say(f"  = {json.dumps(out.result)}")
                for t in out.trace:
                    say(f"    {t['hook']}: {t['outcome']} in {t['duration_us'] / 1000:.1f} ms")
                for d in out.diagnostics:
                    say(f"  ~ {d['kind']} [{d['hook']}] {d['message']}")
            return out

        point("beforeRun", {"sessionId": run_id, "agentId": "deployer", "modelId": MODEL})
        point("beforeModelRequest", {"system": SYSTEM, "model": MODEL, "messages": [{"role": "user", "text": "Deploy the app."}]})
        point("afterModelResponse", {"text": "I'll read the config, then deploy.", "thinking": "", "toolCalls": TOOL_CALLS})
        for call in TOOL_CALLS:
            gate = point("beforeToolExecute", call).result
            if not gate["allow"]:
                say(f"  -> {call['id']} refused: {gate.get('reason')}")
                continue
            say(f"  -> running {call['id']}: {gate['arguments']}")
            point("afterToolExecute", {"call": {**call, "arguments": gate["arguments"]},
                                       "result": {"text": TOOL_OUTPUT[call["id"]], "isError": False}})
        say("\nclose (afterRun)")
        closed = session.close("end_turn")
        say(f"  = {json.dumps(closed.result)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
