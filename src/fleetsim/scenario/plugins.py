"""`Plugin`: behaviour attached to a robot or to the world, with the lifecycle of a blueprint run.

Hooks, in the order they are called (seed 003): `on_plugin_load(robot)` as each robot is loaded
(before it is in the scene); `set_up_scene(scene)` as it is registered; `initialize()` once joints
and handles are ready; then for every physics step `pre_physics_step(dt)`, the step,
`on_physics_step(dt)`; `on_render()` every `render_dt`; `on_shutdown()` at the end. World plugins
get the same hooks, with `robot` None.

Plugins are found by a registered name (`@register_plugin("name")`), by dotted path
("package.module:Class" or "package.module.Class"), or through the `fleetsim.plugins` entry point
group of installed packages.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import pydantic

from fleetsim.errors import AssetError, ConfigError, FleetSimError, closest

HOOKS = (
    "on_plugin_load",
    "set_up_scene",
    "initialize",
    "pre_physics_step",
    "on_physics_step",
    "on_render",
    "on_shutdown",
)
ENTRY_POINT_GROUP = "fleetsim.plugins"

P = TypeVar("P", bound="type[Plugin]")


class PluginError(FleetSimError, RuntimeError):
    """A plugin raised; the message names the plugin and the hook."""


class UnknownPluginError(ConfigError):
    """No plugin of that name or path; the message lists the closest registered names."""


class PluginConfigError(PluginError, ConfigError):
    """A plugin hook rejected its configuration (bad input: exit code 2, in any hook)."""


class Plugin:
    """Base class: override the hooks you need. `params` holds the validated parameters.

    Declare `Params` (a pydantic model) to have scenario files checked: unknown or mistyped keys
    are reported with their key path before anything is built.
    """

    Params: ClassVar[type[pydantic.BaseModel] | None] = None
    name: ClassVar[str] = ""

    def __init__(self, **params: Any) -> None:
        self.params: Any = self.Params(**params) if self.Params is not None else params
        self.robot: Any = None
        self.scene: Any = None

    def on_plugin_load(self, robot: Any) -> None:
        """When the robot (None for a world plugin) has been loaded."""
        self.robot = robot

    def set_up_scene(self, scene: Any) -> None:
        """When the robot is registered in the scene."""
        self.scene = scene

    def initialize(self) -> None:
        """Joints and handles are ready."""

    def pre_physics_step(self, dt: float) -> None:
        """Before each physics step (`dt` seconds)."""

    def on_physics_step(self, dt: float) -> None:
        """After each physics step."""

    def on_render(self) -> None:
        """Every `render_dt` of simulated time."""

    def on_shutdown(self) -> None:
        """Once, at the end, even when another plugin failed."""

    @property
    def label(self) -> str:
        """How messages name the plugin: its name and its robot."""
        owner = f" on {self.robot.name}" if self.robot is not None else ""
        return f"plugin '{self.name or type(self).__name__}'{owner}"


_REGISTRY: dict[str, type[Plugin]] = {}


def register_plugin(name: str) -> Callable[[P], P]:
    """Class decorator: make a plugin available to scenario files as `type: <name>`."""

    def add(cls: P) -> P:
        if not (isinstance(cls, type) and issubclass(cls, Plugin)):
            raise ConfigError(f"@register_plugin('{name}') must decorate a Plugin subclass")
        cls.name = name
        _REGISTRY[name] = cls
        return cls

    return add


def registered_plugins() -> dict[str, type[Plugin]]:
    """Registered names, including installed entry points (loaded on demand)."""
    names = dict(_REGISTRY)
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        names.setdefault(ep.name, None)  # type: ignore[arg-type]
    return names


def find_plugin(
    type_name: str | None = None,
    class_path: str | None = None,
    search_dir: str | Path | None = None,
) -> type[Plugin]:
    """The plugin class for a `type:` name or a `class:` dotted path.

    A module in `search_dir` (the scenario file's folder) is found without PYTHONPATH.
    """
    if class_path:
        return _import_class(class_path, search_dir)
    assert type_name is not None
    if type_name in _REGISTRY:
        return _REGISTRY[type_name]
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == type_name:
            return _check(ep.load(), f"entry point '{type_name}'")
    known = sorted(registered_plugins())
    guess = closest(type_name, known)
    hint = f"did you mean '{guess}'?" if guess else f"known plugins: {', '.join(known)}"
    raise UnknownPluginError(
        f"unknown plugin type '{type_name}': {hint} (or give class: module.Class)"
    )


def _import_class(path: str, search_dir: str | Path | None = None) -> type[Plugin]:
    return _check(import_object(path, search_dir, "plugin class"), f"'{path}'")


def import_object(path: str, search_dir: str | Path | None = None, what: str = "object") -> Any:
    """The attribute named by "package.module:attr" (or "package.module.attr"), or by
    "/path/to/module.py:attr" (a module by its file).

    A module in `search_dir` (a scenario's folder) is found without PYTHONPATH. Errors are
    `UnknownPluginError`s naming the path.
    """
    module_name, sep, attr = path.rpartition(":")
    if not sep:
        module_name, _, attr = path.rpartition(".")
    if module_name.endswith(".py"):  # a module by its file ("/path/to/module.py:Class")
        return _from_file(Path(module_name), attr, path, what)
    folder = str(Path(search_dir).resolve()) if search_dir is not None else None
    added = folder is not None and folder not in sys.path
    if added:
        sys.path.insert(0, str(folder))
    try:
        module = importlib.import_module(module_name)
        return getattr(module, attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise UnknownPluginError(f"cannot import {what} '{path}': {exc}") from None
    except Exception as exc:  # the module itself raised while importing
        raise UnknownPluginError(
            f"importing module '{module_name}' for {what} '{path}' raised "
            f"{type(exc).__name__}: {exc}"
        ) from None
    finally:
        if added:
            sys.path.remove(str(folder))


def _from_file(file: Path, attr: str, path: str, what: str) -> Any:
    """`attr` of the module in `file` (loaded once per file, under a name of its own)."""
    name = "fleetsim_plugin_" + hashlib.sha1(str(file.resolve()).encode()).hexdigest()[:12]
    module = sys.modules.get(name)
    try:
        if module is None:
            spec = importlib.util.spec_from_file_location(name, file)
            if spec is None or spec.loader is None or not file.is_file():
                raise ImportError(f"no module file {file}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
        return getattr(module, attr)
    except (ImportError, AttributeError, OSError) as exc:
        sys.modules.pop(name, None)
        raise UnknownPluginError(f"cannot import {what} '{path}': {exc}") from None
    except Exception as exc:  # the module itself raised while importing
        sys.modules.pop(name, None)
        raise UnknownPluginError(
            f"importing {file} for {what} '{path}' raised {type(exc).__name__}: {exc}"
        ) from None


def _check(cls: Any, where: str) -> type[Plugin]:
    if not (isinstance(cls, type) and issubclass(cls, Plugin)):
        raise UnknownPluginError(f"{where} is not a fleetsim Plugin subclass")
    return cls


def call_hook(plugins: Iterable[Plugin], hook: str, *args: Any) -> None:
    """Call `hook` on every plugin in order; a failure names the plugin and the hook."""
    for plugin in plugins:
        try:
            getattr(plugin, hook)(*args)
        except (ConfigError, AssetError) as exc:
            raise PluginConfigError(f"{plugin.label} failed in {hook}(): {exc}") from exc
        except FleetSimError as exc:
            raise PluginError(f"{plugin.label} failed in {hook}(): {exc}") from exc
        except Exception as exc:
            raise PluginError(
                f"{plugin.label} failed in {hook}(): {type(exc).__name__}: {exc}"
            ) from exc


def shut_down(plugins: Iterable[Plugin]) -> list[PluginError]:
    """`on_shutdown` for every plugin, even if some fail; returns the failures."""
    failures = []
    for plugin in plugins:
        try:
            call_hook([plugin], "on_shutdown")
        except PluginError as exc:
            failures.append(exc)
    return failures
