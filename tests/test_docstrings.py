"""Every name of the public API has a docstring: the names in `__all__` of `fleetsim` and its
subpackages, and the public methods and properties of the classes among them (the API
reference is made from these; ruff's D1 rules check the rest of the library)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import fleetsim


def public_api() -> dict[str, object]:
    packages = ["fleetsim"] + [
        m.name for m in pkgutil.walk_packages(fleetsim.__path__, "fleetsim.") if m.ispkg
    ]
    found: dict[str, object] = {}
    for name in packages:
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", []):
            obj = getattr(module, attr)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                found.setdefault(f"{name}.{attr}", obj)
    return found


def test_the_public_api_is_documented() -> None:
    api = public_api()
    assert len(api) > 150  # the packages were read
    missing = []
    for name, obj in api.items():
        own = obj.__dict__.get("__doc__") if inspect.isclass(obj) else obj.__doc__
        if not own:
            missing.append(name)
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_"):
                    continue
                fn = member.fget if isinstance(member, property) else member
                fn = getattr(fn, "__func__", fn)
                if (inspect.isfunction(fn) or isinstance(member, property)) and not fn.__doc__:
                    missing.append(f"{name}.{attr}")
    assert missing == []


def test_docstring_sections_are_google_style() -> None:
    """mkdocstrings is told the docstrings are Google style (mkdocs.yml): every docstring of the
    package parses so, with no warning from griffe (an `Args:` name the signature lacks, an
    entry without its colon), no entry naming two things at once, and no section written in
    another style (`:param x:`, NumPy's underlined headings)."""
    import logging
    import re

    import griffe

    said: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            said.append(record.getMessage())

    log = logging.getLogger("griffe")
    keep, level = Keep(level=logging.WARNING), log.level
    log.addHandler(keep)
    log.setLevel(logging.WARNING)
    other_style = re.compile(r"^\s*(:param |:returns?:|:raises |-{3,}\s*$)", re.M)
    found: list[str] = []
    try:
        package = griffe.load("fleetsim", search_paths=[str(Path(fleetsim.__file__).parents[1])])
        before = len(said)  # loading warns of unresolvable bases, not of docstrings
        pending: list[griffe.Object] = [package]
        while pending:
            obj = pending.pop()
            pending.extend(m for m in obj.members.values() if not m.is_alias)
            if obj.docstring is None:
                continue
            if other_style.search(obj.docstring.value):
                found.append(f"{obj.path}: a section in another style")
            for section in obj.docstring.parse("google"):
                if section.kind.value in ("parameters", "attributes"):
                    for item in section.value:
                        if not item.name.isidentifier():
                            found.append(f"{obj.path}: one entry for {item.name!r}")
        found.extend(said[before:])
    finally:
        log.removeHandler(keep)
        log.setLevel(level)
    assert len(list(package.members)) > 20  # the package was read
    assert found == []
