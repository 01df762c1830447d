"""Every name of the public API has a docstring: the names in `__all__` of `fleetsim` and its
subpackages, and the public methods and properties of the classes among them (the API
reference is made from these; ruff's D1 rules check the rest of the library)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

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
