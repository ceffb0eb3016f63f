"""The workflow's ``files:`` section."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

KEYS = ("preload_kb", "preload_images")


@dataclass(frozen=True, slots=True)
class FileSettings:
    preload_kb: int = 0  # the first N KB of each text attachment go into the first message; 0 disables
    preload_images: bool = False  # send image attachments as image parts (vision models only)


def parse_files_section(data: Mapping[str, Any], report: Callable[[str, str], None]) -> FileSettings:
    for key in data:
        if key not in KEYS:
            report(f"files.{key}", f"unknown key; allowed: {', '.join(KEYS)}")
    preload = data.get("preload_kb", 0)
    if isinstance(preload, bool) or not isinstance(preload, int) or not 0 <= preload <= 1024:
        report("files.preload_kb", f"must be an integer from 0 to 1024 (KB), got {preload!r}")
        preload = 0
    images = data.get("preload_images", False)
    if not isinstance(images, bool):
        report("files.preload_images", "must be true or false")
    return FileSettings(preload_kb=preload, preload_images=images is True)
