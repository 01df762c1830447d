import shutil
import sys
import textwrap
from functools import partial
from pathlib import Path

import pybullet as pb
import pytest

from fleetsim import AssetNotFoundError, ConfigError
from fleetsim.backend import PYBULLET_DATA
from fleetsim.models import (
    KNOWN_MODELS,
    ModelEntry,
    ModelNotAvailableError,
    UnknownModelError,
    add_search_path,
    discover_models,
    get_search_paths,
    list_all_models,
    register_model,
    remove_search_path,
    resolve_urdf,
    ros_model,
    sources,
    unregister_model,
)
from fleetsim.models.sources import LOCAL_DIR

from ..conftest import CUBE_OBJ, make_sim

SIMPLE_CUBE = LOCAL_DIR / "simple_cube.urdf"


def test_required_names_resolve() -> None:
    for name in (
        "mobile_robot",
        "arm_robot",
        "mobile_manipulator",
        "rail_arm_robot",
        "simple_cube",
    ):
        assert Path(resolve_urdf(name)).parent == LOCAL_DIR
    for name in ("panda", "kuka_iiwa", "r2d2", "husky", "racecar"):
        assert Path(resolve_urdf(name)).is_relative_to(PYBULLET_DATA)
        assert KNOWN_MODELS[name].tier == "pybullet_data"


def test_paths_pass_through(tmp_path: Path) -> None:
    copy = tmp_path / "bot.urdf"
    shutil.copy(SIMPLE_CUBE, copy)
    assert resolve_urdf(str(copy)) == str(copy)
    assert resolve_urdf(copy) == str(copy)
    assert resolve_urdf("r2d2.urdf") == str(PYBULLET_DATA / "r2d2.urdf")  # relative: pybullet_data
    with pytest.raises(AssetNotFoundError, match=r"robot file not found: missing/bot\.urdf"):
        resolve_urdf("missing/bot.urdf")


def test_unlisted_names_are_discovered_in_pybullet_data() -> None:
    assert "duck_vhacd" not in KNOWN_MODELS
    assert resolve_urdf("duck_vhacd") == str(PYBULLET_DATA / "duck_vhacd.urdf")
    found = discover_models("pybullet_data")
    assert found["kuka_iiwa"].endswith("kuka_iiwa/model.urdf")  # generic stems take the folder name
    assert set(discover_models("local")) == {
        "mobile_robot",
        "arm_robot",
        "mobile_manipulator",
        "rail_arm_robot",
        "simple_cube",
    }
    with pytest.raises(ValueError, match="unknown tier"):
        discover_models("github")


def test_unknown_names_suggest_close_ones() -> None:
    with pytest.raises(
        UnknownModelError, match=r"unknown robot model 'pandaa'; did you mean 'panda'"
    ) as exc:
        resolve_urdf("pandaa")
    assert isinstance(exc.value, ConfigError)
    with pytest.raises(UnknownModelError, match="'mobile_robot'"):
        resolve_urdf("mobil_robot")


def test_search_paths_shadow_built_ins(tmp_path: Path) -> None:
    shutil.copy(SIMPLE_CUBE, tmp_path / "panda.urdf")
    (tmp_path / "forklift").mkdir()
    shutil.copy(SIMPLE_CUBE, tmp_path / "forklift" / "model.urdf")
    add_search_path(tmp_path)
    add_search_path(tmp_path)  # idempotent
    assert get_search_paths() == [str(tmp_path.resolve())]
    assert resolve_urdf("panda") == str(tmp_path / "panda.urdf")
    assert resolve_urdf("forklift") == str(tmp_path / "forklift" / "model.urdf")
    listing = list_all_models()
    assert listing["panda"].tier == "search_path" and listing["forklift"].available
    remove_search_path(tmp_path)
    assert resolve_urdf("panda").startswith(str(PYBULLET_DATA))
    with pytest.raises(AssetNotFoundError, match="not a directory"):
        add_search_path(tmp_path / "nope")


def test_register_and_force(tmp_path: Path) -> None:
    mine = tmp_path / "mine.urdf"
    shutil.copy(SIMPLE_CUBE, mine)
    register_model("my_bot", str(mine))
    assert KNOWN_MODELS["my_bot"].tier == "user" and resolve_urdf("my_bot") == str(mine)
    with pytest.raises(ConfigError, match=r"already registered .*force=True"):
        register_model("my_bot", str(mine))
    with pytest.raises(ConfigError, match="already registered"):
        register_model("panda", str(mine))
    register_model("panda", str(mine), force=True)
    assert resolve_urdf("panda") == str(mine)
    register_model("lazy_bot", ModelEntry("custom", partial(str, mine)))
    assert list_all_models()["lazy_bot"].tier == "custom"
    with pytest.raises(AssetNotFoundError):
        register_model("ghost", str(tmp_path / "ghost.urdf"))
    unregister_model("my_bot")
    with pytest.raises(UnknownModelError, match="not registered"):
        unregister_model("my_bot")


def test_unavailable_models_say_how_to_get_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    with pytest.raises(
        ModelNotAvailableError, match="'ur_description' is not in AMENT_PREFIX_PATH"
    ):
        resolve_urdf("ur5e")
    status = list_all_models()["ur5e"]
    assert not status.available and "AMENT_PREFIX_PATH" in (status.reason or "")


FAKE_URDF = """<?xml version="1.0"?>
<robot name="fake_bot">
  <link name="base_link">
    <inertial>
      <mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/>
    </inertial>
    <visual><geometry><mesh filename="package://{pkg}/meshes/body.obj"/></geometry></visual>
    <collision><geometry><mesh filename="package://{pkg}/meshes/body.obj"/></geometry></collision>
  </link>
</robot>
"""


def make_ros_prefix(root: Path, package: str, urdf_package: str | None = None) -> Path:
    share = root / "share" / package
    (share / "urdf").mkdir(parents=True)
    (share / "meshes").mkdir()
    (share / "meshes" / "body.obj").write_text(CUBE_OBJ)
    (share / "package.xml").write_text(f"<package><name>{package}</name></package>")
    (share / "urdf" / "fake_bot.urdf").write_text(FAKE_URDF.format(pkg=urdf_package or package))
    return root


def test_ros_prefix_with_package_meshes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prefix = make_ros_prefix(tmp_path / "install", "fake_description")
    monkeypatch.setenv("AMENT_PREFIX_PATH", f"{tmp_path / 'empty'}:{prefix}")
    register_model("fake_bot", ros_model("fake_description", "urdf/fake_bot.urdf"))
    path = resolve_urdf("fake_bot")
    assert "package://" not in Path(path).read_text()
    assert discover_models("ros")["fake_bot"].endswith("fake_description/urdf/fake_bot.urdf")
    with make_sim() as sim:
        body = pb.loadURDF(path, physicsClientId=sim.client)
        mesh = pb.getVisualShapeData(body, physicsClientId=sim.client)[0][4].decode()
        assert mesh == str(prefix / "share" / "fake_description" / "meshes" / "body.obj")
        assert pb.getCollisionShapeData(body, -1, physicsClientId=sim.client)
    unregister_model("fake_bot")
    assert resolve_urdf("fake_bot")  # found by the ROS discovery scan too


def test_ros_missing_package_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prefix = make_ros_prefix(
        tmp_path / "install", "fake_description", urdf_package="missing_meshes"
    )
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(prefix))
    register_model("fake_bot", ros_model("fake_description", "urdf/fake_bot.urdf"))
    with pytest.raises(AssetNotFoundError, match="ROS package 'missing_meshes'"):
        resolve_urdf("fake_bot")


def make_robot_descriptions(site: Path) -> None:
    pkg = site / "robot_descriptions"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "_repositories.py").write_text(
        textwrap.dedent("""
        REPOSITORIES = {
            "fake-robot-data": Repository(
                url="https://example.invalid/x.git", commit="abc", cache_path="fake_data"
            ),
        }
    """)
    )
    (pkg / "fakebot_description.py").write_text(
        textwrap.dedent("""
        raise RuntimeError("importing a description module would clone a repository")
        from os import path as _path
        from ._cache import clone_to_cache as _clone_to_cache
        REPOSITORY_PATH: str = _clone_to_cache("fake-robot-data")
        PACKAGE_PATH: str = _path.join(REPOSITORY_PATH, "robots", "fakebot_description")
        URDF_PATH: str = _path.join(PACKAGE_PATH, "urdf", "fakebot.urdf")
    """)
    )


def test_robot_descriptions_only_counts_what_is_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site, cache = tmp_path / "site", tmp_path / "cache"
    make_robot_descriptions(site)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("ROBOT_DESCRIPTIONS_CACHE", str(cache))
    register_model(
        "fakebot",
        ModelEntry(
            "robot_descriptions", partial(sources.robot_descriptions, "fakebot_description")
        ),
    )
    with pytest.raises(ModelNotAvailableError, match="not downloaded yet"):
        resolve_urdf("fakebot")
    assert "fakebot" not in discover_models("robot_descriptions")
    package_dir = cache / "fake_data" / "robots" / "fakebot_description"
    (package_dir / "urdf").mkdir(parents=True)
    (package_dir / "meshes").mkdir()
    (package_dir / "meshes" / "body.obj").write_text(CUBE_OBJ)
    (package_dir / "urdf" / "fakebot.urdf").write_text(FAKE_URDF.format(pkg="fakebot_description"))
    path = resolve_urdf("fakebot")
    assert "package://" not in Path(path).read_text()
    assert discover_models("robot_descriptions")["fakebot"] == path
    assert "robot_descriptions.fakebot_description" not in sys.modules  # read, never imported
