"""Image sizes from file headers (PNG, JPEG, GIF, WebP) and their token cost for vision models.

Cost (OpenAI, gpt-4o/4.1 family, high detail): fit within 2048x2048, then shrink so the short side is at most
768, then 170 tokens per 512-px tile plus 85. Low detail costs 85.
"""

from __future__ import annotations

import base64
import math
import struct

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def image_size(data: bytes) -> tuple[int, int] | None:
    if data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) >= 24:
        return struct.unpack(">II", data[16:24])
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        return struct.unpack("<HH", data[6:10])
    if data.startswith(b"RIFF") and data[8:12] == b"WEBP":
        return _webp(data)
    if data.startswith(b"\xff\xd8"):
        return _jpeg(data)
    return None


def _webp(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        return 1 + int.from_bytes(data[24:27], "little"), 1 + int.from_bytes(data[27:30], "little")
    if chunk == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
    if chunk == b"VP8 " and len(data) >= 30:
        return struct.unpack("<HH", data[26:30])[0] & 0x3FFF, struct.unpack("<HH", data[26:30])[1] & 0x3FFF
    return None


def _jpeg(data: bytes) -> tuple[int, int] | None:
    index = 2
    while index + 9 < len(data):
        if data[index] != 0xFF:
            return None
        marker = data[index + 1]
        length = int.from_bytes(data[index + 2 : index + 4], "big")
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            height, width = struct.unpack(">HH", data[index + 5 : index + 9])
            return width, height
        index += 2 + length
    return None


def image_tokens(width: int, height: int, detail: str = "high") -> int:
    if detail == "low":
        return 85
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, 768 / min(w, h))
    w, h = w * scale, h * scale
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


def data_url_tokens(url: str, detail: str = "high") -> int:
    """Cost of an image part given as a data URL; an unreadable or remote image is priced as 1024x1024."""
    size = None
    if url.startswith("data:") and "," in url:
        try:
            size = image_size(base64.b64decode(url.split(",", 1)[1][: 2048 * 4 // 3 * 8]))
        except ValueError:
            size = None
    return image_tokens(*(size or (1024, 1024)), detail=detail)
