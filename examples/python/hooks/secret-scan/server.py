#!/usr/bin/python3
"""secret-scan: a hookd remote hook in Python.

- beforeToolExecute: refuses a tool call whose arguments carry something that looks like a credential
  (an AWS access key, a GitHub, Slack, Anthropic or OpenAI token, a private key block, a JWT, a
  `password=...` assignment). With `"ask": true` in hook.json's config it asks the human first
  (ctx.confirm; in a non-interactive run the session's auto-approve answers).
- afterToolExecute: redacts credentials from the tool's result text, so the model never reads them.

Through hookd's aliases the same handlers serve zidane hosts' tool:gate and tool:transform.

Run it beside hookd (the address comes from hook.json, here unix:secret-scan.sock in this folder):

    /usr/bin/python3 examples/python/hooks/secret-scan/server.py [--listen ADDRESS]
    npx hookd-sandbox serve --hooks examples/python/hooks
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # examples/python: hookd_hook and the stubs
from hookd_hook import Ctx, address_from_hook_json, serve  # noqa: E402

VERSION = "1.0.0"

# (kind, pattern). Each pattern matches the credential itself, which is what gets redacted.
PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("private key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)")),
    ("AWS access key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("GitHub token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b|\bgithub_pat_[A-Za-z0-9_]{40,}\b")),
    ("Slack token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b")),
    ("Anthropic key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("OpenAI key", re.compile(r"\bsk-(?!ant-)(?:proj-)?[A-Za-z0-9_-]{20,}")),
    ("JWT", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    (
        "password",
        re.compile(r"(?i)(?<![A-Za-z0-9])(?:password|passwd|secret|api[_-]?key|token)\s*[:=]\s*[\"']?(?!\[redacted)(?P<value>[^\s\"']{6,})"),
    ),
]


def find(text: str) -> list[str]:
    """The kinds of credential in `text`, in PATTERNS order, each once."""
    return [kind for kind, pattern in PATTERNS if pattern.search(text)]


def redact(text: str) -> str:
    for kind, pattern in PATTERNS:
        def replace(m: re.Match[str], kind: str = kind) -> str:
            if "value" in pattern.groupindex and m.group("value"):
                start, end = m.span("value")
                whole = m.group(0)
                return whole[: start - m.start()] + f"[redacted {kind}]" + whole[end - m.start():]
            return f"[redacted {kind}]"

        text = pattern.sub(replace, text)
    return text


def strings(value: Any, path: str = "arguments") -> list[tuple[str, str]]:
    """Every string in a JSON value, with where it is."""
    if isinstance(value, str):
        return [(path, value)]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in strings(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [s for i, v in enumerate(value) for s in strings(v, f"{path}[{i}]")]
    return []


def before_tool_execute(ctx: Ctx, call: dict[str, Any]) -> dict[str, Any] | None:
    found = [(where, kind) for where, text in strings(call.get("arguments", {})) for kind in find(text)]
    if not found:
        return None
    what = ", ".join(f"{kind} in {where}" for where, kind in found)
    ctx.log(f"secret-scan: {call.get('name')} call {call.get('id')} carries {what}")
    ask = isinstance(ctx.config, dict) and ctx.config.get("ask") is True
    if ask and ctx.confirm(
        "Send a credential to a tool?",
        f"The {call.get('name')} call carries what looks like a credential ({what}). Run it anyway?",
    ):
        ctx.log("secret-scan: allowed by the user")
        return None
    return {"allow": False, "reason": f"secret-scan: the arguments carry what looks like a credential ({what})"}


def after_tool_execute(ctx: Ctx, call: dict[str, Any], result: dict[str, Any]) -> dict[str, Any] | None:
    text = result.get("text", "")
    clean = redact(text)
    if clean == text:
        return None
    ctx.log(f"secret-scan: redacted {', '.join(find(text))} from the {call.get('name')} result")
    return {"text": clean}


HANDLERS = {"beforeToolExecute": before_tool_execute, "afterToolExecute": after_tool_execute}


def main(argv: list[str]) -> None:
    address = argv[argv.index("--listen") + 1] if "--listen" in argv else address_from_hook_json(HERE)
    serve({HERE.name: HANDLERS}, address, version=VERSION, description="refuses and redacts credentials")


if __name__ == "__main__":
    main(sys.argv[1:])
