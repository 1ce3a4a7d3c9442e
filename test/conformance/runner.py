#!/usr/bin/python3
"""The Python conformance runner: runs every case in test/conformance/cases/*.json through the Python
host library (examples/python/hookd_host.py) against a running sidecar that serves the cases' hooks
folder, and judges what it saw as test/conformance/case.ts does (the format's reference; see
docs/languages.md).

    /usr/bin/python3 test/conformance/runner.py --addr unix:PATH [--case NAME ...]

The sidecar and the remote fixture hooks are started by the harness (test/conformance/harness.ts,
which conformance.test.ts runs under `make test`). Prints one line per case and ends with
"N passed, N failed"; exits 1 when any case failed.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "examples" / "python"))
from hookd_host import CapabilityError, Handlers, HookdError, connect  # noqa: E402


def message(hook: str, m: dict[str, Any]) -> dict[str, Any]:
    out = {"hook": hook, "title": m["title"]}
    if m.get("body") is not None:
        out["body"] = m["body"]
    return out


def judge(expected: dict[str, Any], seen: dict[str, Any]) -> list[str]:
    """Every way `seen` differs from `expected` (see case.ts `judge`)."""
    problems: list[str] = []
    show = json.dumps
    if "result" in expected and seen["result"] != expected["result"]:
        problems.append(f"result: expected {show(expected['result'])}, got {show(seen['result'])}")
    want = expected.get("diagnostics", [])
    got = seen["diagnostics"]
    ok = len(want) == len(got) and all(
        g["hook"] == w["hook"]
        and g["kind"] == w["kind"]
        and ("point" not in w or g["point"] == w["point"])
        and ("messageContains" not in w or w["messageContains"] in g["message"])
        for w, g in zip(want, got)
    )
    if not ok:
        problems.append(f"diagnostics: expected {show(want)}, got {show(got)}")
    for key in ("trace", "logs", "confirms", "notifications"):
        if key in expected and seen[key] != expected[key]:
            problems.append(f"{key}: expected {show(expected[key])}, got {show(seen[key])}")
    return problems


def run_case(client: Any, case: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    answers = list(case.get("answers", {}).get("confirm", []))
    pushed: list[dict[str, str]] = []
    seen: dict[str, list[Any]] = {"logs": [], "confirms": [], "notifications": []}
    lock = threading.Lock()
    opened = case["open"]

    def confirm(m: dict[str, Any], origin: dict[str, Any]) -> bool:
        with lock:
            seen["confirms"].append(message(origin["hook"], m))
            if not answers:
                problems.append(f"hook '{origin['hook']}' asked to confirm '{m['title']}' after the case's scripted answers ran out")
                raise CapabilityError("failed", "the conformance case has no answer left")
            return answers.pop(0)

    def notify(m: dict[str, Any], origin: dict[str, Any]) -> None:
        with lock:
            seen["notifications"].append(message(origin["hook"], m))

    def log(line: dict[str, Any]) -> None:
        with lock:
            seen["logs"].append({"hook": line["hook"], "message": line["message"]})

    handlers = Handlers(confirm=confirm, notify=notify, log=log, diagnostic=lambda d: pushed.append({"hook": d["hook"], "kind": d["kind"]}))
    try:
        session = client.open_session(
            opened.get("sessionId", f"conformance-py-{case['name']}"),
            opened["hooks"],
            agent_id=opened.get("agentId", "conformance"),
            model_id=opened.get("modelId", "conformance-model"),
            interactive=opened.get("interactive", False),
            auto_approve=opened.get("autoApprove", False),
            handlers=handlers,
        )
    except HookdError as err:
        want = case.get("expectOpen")
        if not want:
            return [f"open failed: {err.code}: {err.message}"]
        if err.code != want["error"]:
            problems.append(f"open: expected error {want['error']}, got {err.code}: {err.message}")
        if want["messageContains"] not in err.message:
            problems.append(f"open: expected a message containing {json.dumps(want['messageContains'])}, got {json.dumps(err.message)}")
        return problems
    if "expectOpen" in case:
        session.abandon()
        return [f"open: expected error {case['expectOpen']['error']}, but the session opened"]

    closed = False
    for i, step in enumerate(case.get("steps", []), start=1):
        with lock:
            for key in seen:
                seen[key] = []
        what = f"step {i} ({step['call']})" if "call" in step else f"step {i} (close {step['close']})"
        try:
            if "close" in step:
                out = session.close(step["close"])
                closed = True
            else:
                out = session.call(step["call"], step["payload"])
        except Exception as err:  # noqa: BLE001 - reported as the case's failure
            problems.append(f"{what}: {type(err).__name__}: {err}")
            break
        with lock:
            result = {
                **{k: list(v) for k, v in seen.items()},
                "result": out.result,
                "diagnostics": [{k: d[k] for k in ("hook", "point", "kind", "message")} for d in out.diagnostics],
                "trace": [[t["hook"], t["outcome"]] for t in out.trace],
            }
        problems += [f"{what}: {p}" for p in judge(step["expect"], result)]
    if not closed:
        session.abandon()
    want_pushed = sorted({f"{d['hook']}:{d['kind']}" for d in case.get("pushed", [])})
    got_pushed = sorted({f"{d['hook']}:{d['kind']}" for d in pushed})
    if want_pushed != got_pushed:
        problems.append(f"pushed diagnostics: expected {json.dumps(want_pushed)}, got {json.dumps(got_pushed)}")
    if answers:
        problems.append(f"{len(answers)} scripted confirm answer(s) were never asked for")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description="Runs the hookd conformance cases through the Python host.")
    parser.add_argument("--addr", required=True, help="the sidecar serving test/conformance/hooks (unix:PATH or HOST:PORT)")
    parser.add_argument("--cases", default=str(HERE / "cases"), help="the folder of case files")
    parser.add_argument("--case", action="append", default=[], help="run only this case (repeatable)")
    opts = parser.parse_args()

    files = sorted(Path(opts.cases).glob("*.json"))
    cases = [json.loads(f.read_text()) for f in files]
    if opts.case:
        cases = [c for c in cases if c["name"] in opts.case]
    passed = failed = 0
    with connect(opts.addr) as client:
        for case in cases:
            if case.get("hooks") != "hooks":
                problems = [f"needs a sidecar serving test/conformance/{case.get('hooks')}, and this runner was given one for 'hooks'"]
            else:
                problems = run_case(client, case)
            if problems:
                failed += 1
                print(f"FAIL {case['name']}: {case['rule']}")
                for p in problems:
                    print(f"     {p}")
            else:
                passed += 1
                print(f"ok   {case['name']}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not cases else 0


if __name__ == "__main__":
    sys.exit(main())
