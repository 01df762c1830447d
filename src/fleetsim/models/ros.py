"""ROS install trees: find packages under `AMENT_PREFIX_PATH` and resolve `package://` URIs.

PyBullet cannot follow `package://pkg/...` mesh references, so a URDF that uses them is copied
once, with every such URI (and every relative mesh path) made absolute, into a cache folder.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path

from fleetsim import environment
from fleetsim.errors import AssetNotFoundError

_FILENAME = re.compile(r'filename\s*=\s*"([^"]+)"')


def ros_prefixes(environ: Mapping[str, str] | None = None) -> list[Path]:
    """Install prefixes from `AMENT_PREFIX_PATH` (of `environ`, or of this process's
    environment, read when called)."""
    if environ is None:
        return environment.ros_prefixes()
    return [Path(p) for p in environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]


def find_package(package: str, prefixes: list[Path] | None = None) -> Path | None:
    """The share directory of a ROS package (`<prefix>/share/<package>`), or None."""
    for prefix in prefixes if prefixes is not None else ros_prefixes():
        share = prefix / "share" / package
        if share.is_dir():
            return share
    return None


def ros_packages(prefixes: list[Path] | None = None) -> dict[str, Path]:
    """Every package share directory in the prefixes, first prefix wins."""
    found: dict[str, Path] = {}
    for prefix in prefixes if prefixes is not None else ros_prefixes():
        share = prefix / "share"
        if share.is_dir():
            for pkg in sorted(share.iterdir()):
                if pkg.is_dir():
                    found.setdefault(pkg.name, pkg)
    return found


def _package_dir(package: str, urdf_path: Path, roots: list[Path]) -> Path | None:
    for ancestor in urdf_path.resolve().parents:
        if ancestor.name == package:
            return ancestor
    for root in roots:
        if (root / package).is_dir():
            return root / package
    return find_package(package)


def resolve_package_uris(urdf_path: Path, package_roots: list[Path] | None = None) -> Path:
    """A URDF PyBullet can load: the file itself, or a cached copy with absolute mesh paths.

    `package://pkg/...` is looked up as a folder named `pkg` above the URDF (the usual case: the
    URDF's own package), then as `<root>/pkg` for each of `package_roots`, then as a ROS package.
    Raises AssetNotFoundError naming the package when it cannot be resolved.
    """
    text = urdf_path.read_text()
    if "package://" not in text:
        return urdf_path  # relative mesh paths resolve next to the original file

    def absolute(match: re.Match[str]) -> str:
        ref = match.group(1)
        if ref.startswith("package://"):
            package, _, rest = ref[len("package://") :].partition("/")
            share = _package_dir(package, urdf_path, package_roots or [])
            if share is None:
                raise AssetNotFoundError(
                    f"{urdf_path}: ROS package '{package}' (for {ref}) is not in "
                    "AMENT_PREFIX_PATH; source your ROS workspace or install the package"
                )
            return f'filename="{share / rest}"'
        if ref.startswith("file://"):
            return f'filename="{ref[len("file://") :]}"'
        if not os.path.isabs(ref):
            return f'filename="{(urdf_path.parent / ref).resolve()}"'
        return match.group(0)

    rewritten = _FILENAME.sub(absolute, text)
    digest = hashlib.sha1(f"{urdf_path.resolve()}\n{rewritten}".encode()).hexdigest()[:16]
    out_dir = Path(tempfile.gettempdir()) / f"fleetsim-urdf-{getattr(os, 'getuid', lambda: 0)()}"
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{urdf_path.stem}-{digest}.urdf"
    if not out.exists():
        tmp = out.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(rewritten)
        tmp.replace(out)  # atomic: concurrent processes never see half a file
    return out
