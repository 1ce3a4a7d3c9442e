#!/usr/bin/python3
"""The conformance suite's remote hook, in Python (examples/python/hookd_hook.py).

- beforeToolExecute: logs, adds {"remote": "py", "tag": ctx.config.tag} to the arguments and adds 10
  to arguments.n; when arguments.ask is set it asks the human and passes the answer on.
- afterToolExecute: raises when the result text is "fail" (a throw diagnostic), else upper-cases it.
- tool:transform (a mutating zidane point): appends " [py]" to the event's result, in place.

    /usr/bin/python3 server.py [--listen ADDRESS]    (default: the address in hook.json)
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[3] / "examples" / "python"))
from hookd_hook import address_from_hook_json, serve  # noqa: E402


def before_tool_execute(ctx, call):
    ctx.log(f"remote-py saw {call['name']}")
    args = dict(call["arguments"])
    args.update(remote="py", tag=ctx.config.get("tag"), n=args.get("n", 0) + 10)
    if args.pop("ask", False):
        args["answer"] = ctx.confirm("remote asks", call["name"])
    return {"arguments": args}


def after_tool_execute(ctx, call, result):
    if result["text"] == "fail":
        raise ValueError("remote failure")
    return {"text": result["text"].upper()}


def tool_transform(ctx, event):
    event["result"] = f"{event['result']} [py]"


if __name__ == "__main__":
    address = sys.argv[sys.argv.index("--listen") + 1] if "--listen" in sys.argv else address_from_hook_json(HERE)
    serve(
        {HERE.name: {"beforeToolExecute": before_tool_execute, "afterToolExecute": after_tool_execute, "tool:transform": tool_transform}},
        address,
        version="conformance-1",
    )
