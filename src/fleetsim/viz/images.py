"""`save_png`: write an RGB image array to a PNG file with the standard library only."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np


def save_png(path: str | Path, rgb: np.ndarray) -> Path:
    """Write an (height, width, 3) uint8 array as an 8-bit RGB PNG; returns the path."""
    image = np.ascontiguousarray(rgb, dtype=np.uint8)
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"expected an RGB image of shape (height, width, 3), got {image.shape}")
    height, width, _ = image.shape
    rows = b"".join(b"\x00" + image[y].tobytes() for y in range(height))  # filter 0 per row

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 6))
        + chunk(b"IEND", b"")
    )
    out = Path(path)
    out.write_bytes(png)
    return out
