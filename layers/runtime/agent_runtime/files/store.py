"""The file store: a template-method base (Powertools style) and an in-memory implementation.

Stores hold bytes plus metadata. Ids are derived from name and content, so a resumed run or a retried
upload gets the same id. Persistent stores (local directory, S3 + DynamoDB) subclass :class:`FileStore`.
"""

from __future__ import annotations

import builtins
import hashlib
import mimetypes
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass

from ..state import Slot
from .exceptions import FileNotFoundInStoreError, FileRangeError


@dataclass(frozen=True, slots=True)
class FileMeta:
    """What the model and the run record know about a file."""

    id: str
    name: str
    mimetype: str
    size_bytes: int
    source: str = "attachment"  # attachment | virtual | extracted | archive (masked outputs, compaction archives)

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "name": self.name,
            "mimetype": self.mimetype,
            "size_bytes": self.size_bytes,
            "source": self.source,
        }


TEXT_MIMETYPES = ("application/json", "application/xml", "application/yaml", "application/x-yaml", "text/")


def is_text(meta: FileMeta) -> bool:
    """Readable as text as it is (the runtime's own files are: virtual, extracted, archives)."""
    return meta.mimetype.startswith(TEXT_MIMETYPES) or meta.source in ("virtual", "extracted", "archive")


CHUNK_SIZE = 1 << 20
# Run state: a document's id → the id of the text extracted from it (extract_file writes it, the status shows it).
EXTRACTED: Slot[dict[str, str]] = Slot("extracted", dict, owner=__name__)


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace").rstrip("\r")


TEXT_EXTENSIONS = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".log": "text/plain",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".tsv": "text/tab-separated-values",
    ".jsonl": "application/json",
}


def guess_mimetype(name: str) -> str:
    suffix = name[name.rfind(".") :].lower() if "." in name else ""
    if suffix in TEXT_EXTENSIONS:  # not in every platform's mimetypes table
        return TEXT_EXTENSIONS[suffix]
    guessed, _ = mimetypes.guess_type(name)
    return guessed or "application/octet-stream"


def file_id_for(name: str, data: bytes) -> str:
    digest = hashlib.sha256(name.encode() + b"\0" + data).hexdigest()
    return f"file-{digest[:12]}"


class FileStore(ABC):
    """Bytes and metadata for one run's files. Subclasses implement four primitives."""

    def put(self, data: bytes, *, name: str, mimetype: str | None = None, source: str = "attachment") -> FileMeta:
        """Store ``data`` and return its metadata (idempotent for the same name and content)."""
        meta = FileMeta(
            id=file_id_for(name, data),
            name=name,
            mimetype=mimetype or guess_mimetype(name),
            size_bytes=len(data),
            source=source,
        )
        self._write(meta, data)
        return meta

    def meta(self, file_id: str) -> FileMeta:
        meta = self._load_meta(file_id)
        if meta is None:
            known = ", ".join(m.id for m in self.list()) or "none"
            raise FileNotFoundInStoreError(f"no file with id {file_id!r} (known ids: {known})")
        return meta

    def read(self, file_id: str, start: int = 0, end: int | None = None) -> bytes:
        """Bytes ``[start, end)`` of a file; ``end=None`` reads to the end."""
        meta = self.meta(file_id)
        stop = meta.size_bytes if end is None else min(end, meta.size_bytes)
        if start < 0 or start > meta.size_bytes or stop < start:
            raise FileRangeError(f"byte range {start}:{end} is outside {file_id!r} (0:{meta.size_bytes})")
        return self._read(file_id, start, stop)

    def list(self) -> list[FileMeta]:
        return self._list_meta()

    def iter_chunks(self, file_id: str, *, chunk_size: int = CHUNK_SIZE, start: int = 0) -> Iterator[bytes]:
        """The file's bytes in ranged reads, so memory stays bounded whatever the file size."""
        size = self.meta(file_id).size_bytes
        for offset in range(start, size, chunk_size):
            yield self._read(file_id, offset, min(offset + chunk_size, size))

    def iter_lines(self, file_id: str) -> Iterator[tuple[int, int, str]]:
        """``(line number from 1, byte offset, text without the newline)`` for each line, streamed."""
        number, offset, pending = 1, 0, b""
        for chunk in self.iter_chunks(file_id):
            pending += chunk
            *complete, pending = pending.split(b"\n")
            for raw in complete:
                yield number, offset, _decode(raw)
                number, offset = number + 1, offset + len(raw) + 1
        if pending:
            yield number, offset, _decode(pending)

    @abstractmethod
    def _write(self, meta: FileMeta, data: bytes) -> None: ...

    @abstractmethod
    def _read(self, file_id: str, start: int, end: int) -> bytes: ...

    @abstractmethod
    def _load_meta(self, file_id: str) -> FileMeta | None: ...

    @abstractmethod
    def _list_meta(self) -> builtins.list[FileMeta]: ...


class InMemoryFileStore(FileStore):
    """A store for one process: tests, the CLI, sub-runs that share nothing durable."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._data: dict[str, bytes] = {}
        self._meta: dict[str, FileMeta] = {}

    def _write(self, meta: FileMeta, data: bytes) -> None:
        with self._lock:
            self._data[meta.id] = data
            self._meta[meta.id] = meta

    def _read(self, file_id: str, start: int, end: int) -> bytes:
        return self._data[file_id][start:end]

    def _load_meta(self, file_id: str) -> FileMeta | None:
        return self._meta.get(file_id)

    def _list_meta(self) -> list[FileMeta]:
        with self._lock:
            return list(self._meta.values())
