import logging
import os

import pytest

from fleetsim import LogLevelManager


@pytest.fixture(autouse=True)
def restore_level() -> None:
    logger = logging.getLogger("fleetsim")
    before = logger.level
    yield
    logger.setLevel(before)
    LogLevelManager.set_native_output(False)


def test_set_log_level_by_name_and_value() -> None:
    LogLevelManager.set_log_level("warning")
    assert LogLevelManager.get_log_level() == logging.WARNING
    LogLevelManager.set_log_level(logging.DEBUG)
    assert logging.getLogger("fleetsim.core").getEffectiveLevel() == logging.DEBUG
    with pytest.raises(ValueError, match="unknown log level"):
        LogLevelManager.set_log_level("loud")


def test_quiet_native_silences_fd1_unless_enabled(capfd: pytest.CaptureFixture[str]) -> None:
    LogLevelManager.set_log_level("INFO")
    with LogLevelManager.quiet_native():
        os.write(1, b"native noise\n")
    assert "native noise" not in capfd.readouterr().out
    LogLevelManager.set_native_output(True)
    with LogLevelManager.quiet_native():
        os.write(1, b"native noise\n")
    assert "native noise" in capfd.readouterr().out
