"""Open Packaging Conventions: how the parts of an Office file point at each other and at the web; and the
namespaces the Office readers share."""

from __future__ import annotations

import io
import posixpath
from typing import Any

from .markdown import web_address
from .safety import Budget, iterparse, read_part

REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"
R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"  # r:id on elements
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"  # DOCX


def relations(archive: Any, part: str, budget: Budget) -> tuple[dict[str, str], dict[str, str]]:
    """``part``'s relationships: rId → the part it targets (its path in the zip), and rId → external address
    (web and mail links only)."""
    folder, name = posixpath.split(part)
    rels = posixpath.join(folder, "_rels", f"{name}.rels")
    parts: dict[str, str] = {}
    links: dict[str, str] = {}
    if rels not in archive.namelist():
        return parts, links
    for _, rel in iterparse(io.BytesIO(read_part(archive, rels, budget)), (f"{REL}Relationship",)):
        target, rid = rel.get("Target", ""), rel.get("Id", "")
        if rel.get("TargetMode") == "External":
            if web_address(target):
                links[rid] = target
        elif target.startswith("/"):  # from the package root
            parts[rid] = target[1:]
        else:
            parts[rid] = posixpath.normpath(posixpath.join(folder, target))
    return parts, links
