"""``agent-runtime extract PATH``: a document as the extract_file tool sees it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..config import RuntimeConfig
from ..errors import ConfigError
from .common import Commands


def add(commands: Commands) -> None:
    extract = commands.add_parser(
        "extract",
        help="print a document (PDF, DOCX, PPTX, XLSX, HTML, CSV, text) as Markdown-like text",
        description="Print a document as the extract_file tool sees it. Exits 2 with a clear message if the "
        "document cannot be read (corrupt, encrypted, hostile, unsupported).",
    )
    extract.add_argument("path", metavar="PATH", help="the document")
    extract.set_defaults(handler=_cmd_extract)


def _cmd_extract(args: argparse.Namespace, config: RuntimeConfig) -> int:
    from ..extract import ExtractionError, extract

    path = Path(args.path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ConfigError(f"{args.path}: {error.strerror or error}") from None
    try:
        result = extract(data, path.name)
    except ExtractionError as error:
        raise ConfigError(f"{args.path}: {error}") from None
    sys.stdout.write(result.text)
    return 0
