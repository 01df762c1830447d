"""`LogLevelManager`: one place to set how chatty fleetsim and PyBullet are.

Nothing is configured at import: fleetsim only creates `logging.getLogger("fleetsim.*")` loggers,
and applications (or the CLI) decide on handlers and levels.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import logging
import os
import sys
from collections.abc import Callable, Iterator

LOGGER_NAME = "fleetsim"


class LogLevelManager:
    """Sets the level of the `fleetsim` logger and whether PyBullet's native prints get through.

    PyBullet writes warnings from C straight to file descriptor 1 (for example while parsing a
    URDF). They are silenced unless the fleetsim log level is DEBUG or native output is enabled.
    """

    _native_output = False

    @staticmethod
    def set_log_level(level: int | str) -> None:
        """Set the `fleetsim` logger level: a `logging` constant or a name such as "INFO"."""
        if isinstance(level, str):
            value = logging.getLevelName(level.upper())
            if not isinstance(value, int):
                raise ValueError(f"unknown log level {level!r}: use DEBUG, INFO, WARNING or ERROR")
            level = value
        logging.getLogger(LOGGER_NAME).setLevel(level)

    @staticmethod
    def get_log_level() -> int:
        """The effective level of fleetsim's logger."""
        return logging.getLogger(LOGGER_NAME).getEffectiveLevel()

    @classmethod
    def set_native_output(cls, enabled: bool) -> None:
        """Let PyBullet's own C-level prints reach stdout (off by default)."""
        cls._native_output = enabled

    @classmethod
    def native_output_enabled(cls) -> bool:
        """Whether PyBullet's own prints reach stdout (asked for, or logging at DEBUG)."""
        return cls._native_output or cls.get_log_level() <= logging.DEBUG

    @classmethod
    @contextlib.contextmanager
    def quiet_native(cls, fds: tuple[int, ...] = (1,)) -> Iterator[None]:
        """Silence C-level writes to these file descriptors (stdout by default) for the
        duration, unless native output is enabled."""
        if cls.native_output_enabled():
            yield
            return
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            saved = [os.dup(fd) for fd in fds]
        except (OSError, ValueError):  # no real stdout (embedded interpreters)
            yield
            return
        _flush_c_stdio()  # what C printed before belongs on the real outputs
        try:
            for fd in fds:
                os.dup2(_devnull(), fd)
            yield
        finally:
            _flush_c_stdio()  # what C buffered inside is dropped, not printed later
            for fd, copy in zip(fds, saved, strict=True):
                os.dup2(copy, fd)
                os.close(copy)


@contextlib.contextmanager
def native_stdout_parked() -> Iterator[None]:
    """For a whole GUI session: C-level writes to fd 1 (PyBullet's window threads print at
    any time) go nowhere, while Python's `sys.stdout` keeps writing to the real output.

    Used by the command line around a `--gui` run; a no-op when native output is enabled.
    """
    if LogLevelManager.native_output_enabled():
        yield
        return
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):
        yield
        return
    python_out = os.fdopen(os.dup(saved), "w", buffering=1)
    previous = sys.stdout
    _flush_c_stdio()
    os.dup2(_devnull(), 1)
    sys.stdout = python_out
    try:
        yield
    finally:
        python_out.flush()
        sys.stdout = previous
        _flush_c_stdio()  # what the window threads left in C buffers is dropped
        os.dup2(saved, 1)
        os.close(saved)
        python_out.close()


@functools.cache
def _devnull() -> int:
    return os.open(os.devnull, os.O_WRONLY)


@functools.cache
def _c_fflush() -> Callable[[None], int] | None:
    try:
        fflush: Callable[[None], int] = ctypes.CDLL(None).fflush
    except (OSError, AttributeError):  # no C library on unusual platforms
        return None
    return fflush


def _flush_c_stdio() -> None:
    fflush = _c_fflush()
    if fflush is not None:
        fflush(None)
