"""Check that a built wheel holds every file of `src/fleetsim` (modules, bundled robots and
scenarios). The README's first command installs the wheel, not the editable tree the tests
use: a file the build leaves out (say, by a .gitignore pattern) breaks only that install.
Usage: python tools/check_wheel.py WHEEL"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

SRC = Path(__file__).parents[1] / "src"


def main() -> int:
    wheel = zipfile.ZipFile(sys.argv[1])
    have = set(wheel.namelist())
    want = {
        str(p.relative_to(SRC))
        for p in (SRC / "fleetsim").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }  # modules and data (robots, scenarios)
    missing = sorted(want - have)
    if missing:
        print(f"{sys.argv[1]} lacks {len(missing)} files, such as: {', '.join(missing[:5])}")
        return 1
    print(f"the wheel holds all {len(want)} files of src/fleetsim")
    return 0


if __name__ == "__main__":
    sys.exit(main())
