"""Checks of the files a command will write, made before it runs: a long run must not end by
finding that its results cannot be written (a folder that is not there, a folder given for a
file, no permission, a suffix the writer does not know)."""

from __future__ import annotations

import os
from pathlib import Path

from fleetsim.errors import ConfigError


def check_writable(path: Path, option: str, suffixes: tuple[str, ...] | None = None) -> None:
    """`path` (given as `option`) can be written: a file, not a folder, with one of `suffixes`
    (any when None), in a folder that exists and may be written."""
    if suffixes is not None and path.suffix.lower() not in suffixes:
        raise ConfigError(f"{option} {path}: give a {' or '.join(suffixes)} file")
    if path.is_dir():
        raise ConfigError(f"{option} {path}: a folder; give a file")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise ConfigError(f"{option} {path}: no folder {folder}; make it first")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ConfigError(f"{option} {path}: cannot write there (permissions)")
