"""The Python gRPC stubs of hookd's protos, generated on demand.

The stubs are generated from proto/hookd/v1/*.proto into examples/python/gen/ (gitignored, never
committed) with grpc_tools, the first time a module imports this one and again whenever the protos
change (a hash of their text is kept beside the stubs). Run this file to generate them now:

    /usr/bin/python3 examples/python/hookd_stubs.py [--force]

Needs Debian's python3-grpcio and python3-grpc-tools (scripts/python-deps.sh installs them).
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROTO_ROOT = HERE.parent.parent / "proto"
PROTOS = ["hookd/v1/hookd.proto", "hookd/v1/hook.proto"]
GEN = HERE / "gen"
STAMP = GEN / ".proto-hash"
MODULES = ["hookd_pb2.py", "hookd_pb2_grpc.py", "hook_pb2.py", "hook_pb2_grpc.py"]


def _digest() -> str:
    h = hashlib.sha256()
    for name in PROTOS:
        h.update(name.encode())
        h.update(b"\0")
        h.update((PROTO_ROOT / name).read_bytes())
    return h.hexdigest()


def _fresh(digest: str) -> bool:
    try:
        return STAMP.read_text() == digest and all((GEN / "hookd" / "v1" / m).exists() for m in MODULES)
    except OSError:
        return False


def generate(force: bool = False) -> Path:
    """Generates the stubs unless they are current; returns the folder to put on sys.path."""
    digest = _digest()
    if not force and _fresh(digest):
        return GEN
    try:
        from grpc_tools import protoc
    except ImportError as err:
        raise SystemExit(
            f"hookd: {sys.executable} cannot import grpc_tools ({err}); run scripts/python-deps.sh, "
            "or use /usr/bin/python3, which sees Debian's python3-grpc-tools"
        ) from None
    GEN.mkdir(parents=True, exist_ok=True)
    # Generate into a private folder, then move each file into place: two processes that generate at
    # once (parallel tests) never see a half-written module.
    with tempfile.TemporaryDirectory(dir=GEN, prefix=".tmp-") as tmp:
        code = protoc.main(
            ["grpc_tools.protoc", f"-I{PROTO_ROOT}", f"--python_out={tmp}", f"--grpc_python_out={tmp}", *PROTOS]
        )
        if code != 0:
            raise SystemExit(f"hookd: protoc failed ({code}) generating stubs from {PROTO_ROOT}")
        target = GEN / "hookd" / "v1"
        target.mkdir(parents=True, exist_ok=True)
        for module in MODULES:
            os.replace(Path(tmp) / "hookd" / "v1" / module, target / module)
    stamp = GEN / f".proto-hash.{os.getpid()}"
    stamp.write_text(digest)
    os.replace(stamp, STAMP)
    return GEN


def load() -> None:
    """Makes `from hookd.v1 import hookd_pb2, hook_pb2, ...` importable."""
    path = str(generate())
    if path not in sys.path:
        sys.path.insert(0, path)


if __name__ == "__main__":
    print(f"hookd: Python stubs in {generate(force='--force' in sys.argv[1:])}")
