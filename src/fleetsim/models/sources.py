"""Where robot files come from: one finder per tier, and discovery scans of whole tiers.

Tiers, in lookup order: "local" (robots bundled with fleetsim), "pybullet_data", "ros" (packages
under `AMENT_PREFIX_PATH`), "robot_descriptions" (the pip package, only descriptions already in
its cache: fleetsim never triggers a download). Nothing here touches the network.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from pathlib import Path

from fleetsim import environment
from fleetsim.backend import PYBULLET_DATA
from fleetsim.errors import FleetSimError
from fleetsim.models.ros import find_package, resolve_package_uris, ros_packages

LOCAL_DIR = Path(__file__).parent / "robots"
TIERS: tuple[str, ...] = ("local", "pybullet_data", "ros", "robot_descriptions")
GENERIC_STEMS = frozenset({"model", "robot", "urdf", "main"})


class ModelNotAvailableError(FleetSimError, FileNotFoundError):
    """A known model whose files are not on this machine; the message says how to get them."""


def local(name: str) -> str:
    """The path of a robot bundled with fleetsim."""
    path = LOCAL_DIR / f"{name}.urdf"
    if not path.is_file():
        raise ModelNotAvailableError(f"bundled robot file missing: {path} (reinstall fleetsim)")
    return str(path)


def pybullet_data(relative: str) -> str:
    """The path of a file in pybullet_data."""
    path = PYBULLET_DATA / relative
    if not path.is_file():
        raise ModelNotAvailableError(f"{relative} is not in pybullet_data ({PYBULLET_DATA})")
    return str(path)


def ros(package: str, relative: str) -> str:
    """The path of a file in a ROS package (found through `AMENT_PREFIX_PATH`)."""
    share = find_package(package)
    if share is None:
        raise ModelNotAvailableError(
            f"ROS package '{package}' is not in AMENT_PREFIX_PATH: install it "
            f"(e.g. ros-<distro>-{package.replace('_', '-')}) and source your workspace"
        )
    path = share / relative
    if not path.is_file():
        raise ModelNotAvailableError(f"{path} not found in ROS package '{package}'")
    return str(resolve_package_uris(path))


def robot_descriptions(module: str) -> str:
    """URDF of `robot_descriptions.<module>`, if that description is already downloaded."""
    root = _robot_descriptions_root()
    if root is None:
        raise ModelNotAvailableError(
            "the robot_descriptions package is not installed (pip install robot_descriptions)"
        )
    path, repo_dir = _description_urdf(root, module)
    if not path.is_file():
        raise ModelNotAvailableError(
            f"robot_descriptions.{module} is not downloaded yet (looked for {path}); fetch it once "
            f'with: python -c "import robot_descriptions.{module}" (needs the network)'
        )
    return str(resolve_package_uris(path, [repo_dir.parent, repo_dir]))  # repo-named packages


# -- discovery ----------------------------------------------------------------------------------


def discover_models(tier: str) -> dict[str, str]:
    """Every model a tier has on this machine, as {name: path}.

    File stems name models, except generic ones ("model.urdf") which take their folder's name.
    """
    if tier == "local":
        return {p.stem: str(p) for p in sorted(LOCAL_DIR.glob("*.urdf"))}
    if tier == "pybullet_data":
        return dict(_scan(str(PYBULLET_DATA)))
    if tier == "ros":
        found: dict[str, str] = {}
        for share in ros_packages().values():
            for name, path in _scan(str(share)):
                found.setdefault(name, path)
        return found
    if tier == "robot_descriptions":
        return _discover_robot_descriptions()
    raise ValueError(f"unknown tier {tier!r}: use one of {', '.join(TIERS)}")


@functools.lru_cache(maxsize=32)
def _scan(directory: str) -> tuple[tuple[str, str], ...]:
    found: dict[str, str] = {}
    for path in sorted(Path(directory).rglob("*.urdf")):
        name = path.parent.name if path.stem in GENERIC_STEMS else path.stem
        found.setdefault(name, str(path))
    return tuple(found.items())


def _discover_robot_descriptions() -> dict[str, str]:
    root = _robot_descriptions_root()
    if root is None:
        return {}
    found = {}
    for module in sorted(root.glob("*_description.py")):
        try:
            found[module.stem.removesuffix("_description")] = robot_descriptions(module.stem)
        except (ModelNotAvailableError, SyntaxError, KeyError, ValueError):
            continue
    return found


# -- robot_descriptions, read without importing it (its modules clone repositories on import) --


def _robot_descriptions_root() -> Path | None:
    spec = importlib.util.find_spec("robot_descriptions")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _robot_descriptions_cache() -> Path:
    return environment.robot_descriptions_cache()


def _description_urdf(root: Path, module: str) -> tuple[Path, Path]:
    """(URDF path, repository folder) that `robot_descriptions.<module>` would point at."""
    source = root / f"{module}.py"
    if not source.is_file():
        raise ModelNotAvailableError(f"robot_descriptions has no module '{module}'")
    values: dict[str, Path] = {}
    repo_dir: Path | None = None
    for node in ast.parse(source.read_text()).body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        value = getattr(node, "value", None)
        if not isinstance(target, ast.Name) or not isinstance(value, ast.Call):
            continue
        func = ast.unparse(value.func)
        if (
            func.endswith("clone_to_cache")
            and value.args
            and isinstance(value.args[0], ast.Constant)
        ):
            repo_dir = _robot_descriptions_cache() / _repository_cache_path(
                root, str(value.args[0].value)
            )
            values[target.id] = repo_dir
        elif func.endswith("path.join"):
            parts = [
                values[a.id] if isinstance(a, ast.Name) else Path(str(a.value))
                for a in value.args
                if isinstance(a, ast.Name | ast.Constant)
            ]
            values[target.id] = Path(*parts)
    if "URDF_PATH" not in values or repo_dir is None:
        raise ModelNotAvailableError(f"robot_descriptions.{module} has no URDF")
    return values["URDF_PATH"], repo_dir


@functools.lru_cache(maxsize=4)
def _repositories(root: Path) -> dict[str, str]:
    """repository name -> cache_path, parsed from robot_descriptions/_repositories.py."""
    out: dict[str, str] = {}
    for node in ast.walk(ast.parse((root / "_repositories.py").read_text())):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(value, ast.Call):
                    kw = {k.arg: k.value for k in value.keywords}
                    cache = kw.get("cache_path")
                    out[str(key.value)] = (
                        str(cache.value) if isinstance(cache, ast.Constant) else str(key.value)
                    )
    return out


def _repository_cache_path(root: Path, repository: str) -> str:
    return _repositories(root).get(repository, repository)
