"""tiktoken encodings built from files shipped in this package: no download path exists at run time.

The files are OpenAI's ``o200k_base`` and ``cl100k_base`` rank files (gzipped copies taken from the
``bpe-openai`` wheel, see ``make encodings``). Each load checks tiktoken's published sha256, so a corrupt or
swapped file fails loudly instead of miscounting.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import logging
from pathlib import Path

import tiktoken

from ..errors import ConfigError

logger = logging.getLogger(__name__)
DATA_DIR = Path(__file__).resolve().parent / "data"

# From tiktoken_ext/openai_public.py (tiktoken 0.14): the files' hashes, split patterns and special tokens.
EXPECTED_SHA256 = {
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}
_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|"""
    r"""\s+(?!\S)|\s"""
)
_SPECS = {
    "o200k_base": (_O200K_PATTERN, {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}),
    "cl100k_base": (
        _CL100K_PATTERN,
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
}
DEFAULT_ENCODING = "o200k_base"


def encoding_name_for(model: str) -> str:
    """tiktoken's mapping for known OpenAI models; o200k_base for the rest (modern models are closest to it)."""
    try:
        name = tiktoken.encoding_name_for_model(model)
    except KeyError:
        _stand_in(model)
        return DEFAULT_ENCODING
    return name if name in _SPECS else ("o200k_base" if name.startswith("o200k") else "cl100k_base")


@functools.cache
def _stand_in(model: str) -> None:
    """Said once per model and process: the count is an estimate until the server's usage calibrates it."""
    logger.warning(
        "model=<%s>, encoding=<%s> | not a model tiktoken knows: counting with %s, calibrated from the server's "
        "usage (set model.tokenizer to choose)",
        model,
        DEFAULT_ENCODING,
        DEFAULT_ENCODING,
    )


@functools.cache
def load_encoding(name: str) -> tiktoken.Encoding:
    """Build an encoding from the shipped file (cached for the life of the process)."""
    if name not in _SPECS:
        raise ConfigError(f"encoding {name!r} is not shipped; available: {', '.join(_SPECS)}")
    path = DATA_DIR / f"{name}.tiktoken.gz"
    try:
        raw = gzip.decompress(path.read_bytes())
    except (OSError, EOFError, gzip.BadGzipFile) as error:
        raise ConfigError(f"cannot read the shipped encoding {path}: {error} (run `make encodings`)") from None
    digest = hashlib.sha256(raw).hexdigest()
    if digest != EXPECTED_SHA256[name]:
        raise ConfigError(f"{path} is corrupt: sha256 {digest} is not tiktoken's {EXPECTED_SHA256[name]}")
    ranks = {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in raw.splitlines() if line)}
    pattern, special = _SPECS[name]
    return tiktoken.Encoding(name=name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=special)


def encoding_for_model(model: str) -> tiktoken.Encoding:
    return load_encoding(encoding_name_for(model))
