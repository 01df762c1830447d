"""The environment is read in one place, and what it says is understood."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fleetsim import environment
from fleetsim.errors import ConfigError
from fleetsim.memory import check_site_fits

SRC = Path(environment.__file__).parent


def test_no_module_but_fleetsim_environment_reads_the_environment() -> None:
    reads = re.compile(r"os\.environ|os\.getenv|getenv\(")
    readers = sorted(
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if path.name != "environment.py" and reads.search(path.read_text())
    )
    assert readers == []


def test_every_variable_is_listed_once_with_what_it_does() -> None:
    names = [v.name for v in environment.VARIABLES]
    assert len(names) == len(set(names)) and all(v.what for v in environment.VARIABLES)
    text = (SRC / "environment.py").read_text()
    used = set(re.findall(r"Variable\(\s*\"([A-Z_]+)\"", text))
    assert used == set(names)  # nothing defined and left out of the list


def test_the_site_limit_comes_from_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FLEETSIM_MAX_SITE_GB", raising=False)
    assert environment.max_site_gb() == 3.0
    with pytest.raises(ConfigError, match="over the limit of 3 GB"):
        check_site_fits(30_000_000, "a big map")
    monkeypatch.setenv("FLEETSIM_MAX_SITE_GB", "0.001")
    with pytest.raises(ConfigError, match=r"over the limit of 0\.001 GB"):
        check_site_fits(10_000, "a small map")
    monkeypatch.setenv("FLEETSIM_MAX_SITE_GB", "lots")
    with pytest.raises(ConfigError, match=r"FLEETSIM_MAX_SITE_GB='lots': expected gigabytes"):
        environment.max_site_gb()


def test_numba_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLEETSIM_NO_NUMBA", "1")
    assert not environment.numba_allowed()
    monkeypatch.delenv("FLEETSIM_NO_NUMBA")
    assert environment.numba_allowed()
