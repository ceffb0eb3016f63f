"""The workflow's ``files:`` section."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..sections import Report, check_keys, flag

KEYS = ("preload_kb", "preload_images")


@dataclass(frozen=True, slots=True)
class FileSettings:
    preload_kb: int = 0  # the first N KB of each text attachment go into the first message; 0 disables
    preload_images: bool = False  # send image attachments as image parts (vision models only)


def parse_files_section(data: Mapping[str, Any], report: Report) -> FileSettings:
    check_keys("files", data, KEYS, report)
    preload = data.get("preload_kb", 0)
    if isinstance(preload, bool) or not isinstance(preload, int) or not 0 <= preload <= 1024:
        report("files.preload_kb", f"must be an integer from 0 to 1024 (KB), got {preload!r}")
        preload = 0
    return FileSettings(preload_kb=preload, preload_images=flag("files", data, "preload_images", report))
