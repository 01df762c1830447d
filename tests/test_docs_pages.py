"""The reference pages' generated parts (the command line, the scenario schema, the
environment variables, the events) are what the code says today: `python tools/docs_pages.py`
writes them, and this fails when one is out of date."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from fleetsim.events import CATALOGUE

ROOT = Path(__file__).resolve().parents[1]


def test_the_generated_pages_are_current() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "docs_pages.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_event_emitted_is_in_the_catalogue() -> None:
    """Every name the code emits, listens to or declares is a catalogued event, and the events
    page lists each one."""
    import re

    names = {e.name for e in CATALOGUE}
    used = set()
    for path in (ROOT / "src" / "fleetsim").rglob("*.py"):
        used |= set(re.findall(r"""\.(?:emit|on)\(\s*["']([a-z_]+)["']""", path.read_text()))
    assert used - names == set(), "add them to fleetsim.events.CATALOGUE"
    page = (ROOT / "docs" / "reference" / "events.md").read_text()
    assert all(f"| `{name}` |" in page for name in names)
