"""Finish a built layer: drop unused botocore models, then ship bytecode.

Lambda's /opt is read-only, so a layer without ``.pyc`` files makes every cold start compile each imported module
from source (the webhook's import takes ~2.7x as long). ``unchecked-hash`` bytecode is used as is: the layer never
changes after the build, and copying it resets the mtimes a timestamp check would compare. The bytecode is only
valid for the Python that writes it, so it is written by an interpreter of Lambda's version (LAMBDA_VERSION, with
LAMBDA_PYTHON or one scripts/find-python finds), whichever Python runs this script.

Usage: python3 layers/bytecode.py DIR [--botocore-services "s3 sqs ..." | all]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

LAMBDA_VERSION = "3.13"  # the template's runtime; the top Makefile passes LAMBDA_VERSION


def prune_botocore(root: Path, keep: set[str]) -> list[str]:
    """Remove every service model not in ``keep``; shared files (endpoints, partitions, retries) stay."""
    data = root / "botocore" / "data"
    services = {path.name for path in data.iterdir() if path.is_dir()}
    if missing := keep - services:
        raise SystemExit(f"bytecode.py: no botocore model for {sorted(missing)} (check BOTOCORE_SERVICES)")
    removed = sorted(services - keep)
    for name in removed:
        shutil.rmtree(data / name)
    _prune_endpoints(data, keep)
    return removed


def _prune_endpoints(data: Path, keep: set[str]) -> None:
    """endpoints.json (1.2 MB, parsed by every new session: ~30 ms) keeps only the kept services' entries."""
    path = data / "endpoints.json"
    if not path.is_file():
        return
    prefixes = keep | {_endpoint_prefix(data / name) for name in keep}
    endpoints = json.loads(path.read_text())
    for partition in endpoints["partitions"]:
        partition["services"] = {k: v for k, v in partition["services"].items() if k in prefixes}
    path.write_text(json.dumps(endpoints, separators=(",", ":")))


def _endpoint_prefix(service: Path) -> str:
    """A service's key in endpoints.json: its model's endpointPrefix (``monitoring`` for cloudwatch)."""
    model = max(service.glob("*/service-2.json*"))  # the newest API version
    raw = gzip.decompress(model.read_bytes()) if model.suffix == ".gz" else model.read_bytes()
    return str(json.loads(raw)["metadata"].get("endpointPrefix", service.name))


def lambda_python() -> tuple[str, str | None]:
    """Lambda's Python version (LAMBDA_VERSION) and an interpreter of that version: LAMBDA_PYTHON, this one, or
    one scripts/find-python finds. Bytecode is only valid for the version that writes it."""
    version = os.environ.get("LAMBDA_VERSION") or LAMBDA_VERSION
    for candidate in filter(None, (os.environ.get("LAMBDA_PYTHON"), sys.executable)):
        probe = [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"]
        if subprocess.run(probe, capture_output=True, text=True, check=False).stdout.strip() == version:
            return version, candidate
    finder = Path(__file__).resolve().parent.parent / "scripts" / "find-python"  # pyenv, uv, ...: it checks them
    found = subprocess.run([finder, version], capture_output=True, text=True, check=False).stdout.strip()
    return version, found or None


def compile_tree(root: Path) -> None:
    version, python = lambda_python()
    if python is None:
        print(f"bytecode.py: warning: no Python {version} (Lambda's) found; no bytecode shipped")
        return
    # PEP 552 unchecked hashes: used as is, whatever the mtimes after copying.
    command = [python, "-m", "compileall", "-qq", "-j", "0", "--invalidation-mode", "unchecked-hash", str(root)]
    if subprocess.run(command, check=False).returncode:
        print("bytecode.py: some modules did not compile (they compile at import instead)", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--botocore-services", default="all")
    args = parser.parse_args(argv)
    if args.botocore_services.strip() not in ("", "all"):
        removed = prune_botocore(args.root, set(args.botocore_services.split()))
        print(f"bytecode.py: kept botocore models {sorted(args.botocore_services.split())}, removed {len(removed)}")
    compile_tree(args.root)


if __name__ == "__main__":
    main()
