"""File errors. They are ``ToolError`` s: a wrong id or range goes back to the model, which can fix it."""

from __future__ import annotations

from ..errors import ConfigError, ToolError


class FileNotFoundInStoreError(ToolError):
    """No file with that id in this run's store."""


class FileRangeError(ToolError):
    """A requested range is outside the file or otherwise invalid."""


class FileInputError(ConfigError):
    """A file given by the user (CLI ``--file``, an attachment) cannot be read."""
