"""Broken meshes and URDFs are errors naming the file, never a PyBullet crash."""

from __future__ import annotations

import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fleetsim.assets import check_mesh, check_urdf
from fleetsim.errors import AssetError, AssetNotFoundError

from .conftest import CUBE_OBJ

BROKEN = {
    "empty.stl": b"",
    "garbage.stl": b"garbage\x00\x01",
    "no_triangles.stl": bytes(80) + struct.pack("<I", 0),
    "truncated.stl": bytes(80) + struct.pack("<I", 5) + bytes(50),
    "ascii_empty.stl": b"solid x\nendsolid x\n",
    "empty.obj": b"",
    "faces_only.obj": b"f 1 2 3\n",
    "vertices_only.obj": b"v 0 0 0\nv 1 0 0\nv 0 1 0\n",
    "nan.obj": b"v nan 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n",
    "empty.dae": b"",
    "bad.dae": b"<COLLADA><unclosed></COLLADA>",
    "mesh.ply": b"ply\n",
}


def write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_meshes_are_asset_errors_naming_the_file(tmp_path: Path, name: str) -> None:
    path = write(tmp_path, name, BROKEN[name])
    with pytest.raises(AssetError, match=name):
        check_mesh(path)


def test_valid_meshes_pass(tmp_path: Path) -> None:
    check_mesh(write(tmp_path, "cube.obj", CUBE_OBJ.encode()))
    triangle = struct.pack("<12fH", 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0)
    check_mesh(write(tmp_path, "tri.stl", bytes(80) + struct.pack("<I", 1) + triangle))
    ascii_stl = b"solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\n"
    check_mesh(write(tmp_path, "tri_ascii.stl", ascii_stl + b"vertex 0 1 0\nendloop\nendfacet\n"))


URDF = """<robot name="r"><link name="base">
  <visual><geometry><mesh filename="{mesh}"/></geometry></visual>
</link></robot>"""


def test_urdf_meshes_are_checked_and_named(tmp_path: Path) -> None:
    missing = write(tmp_path, "missing.urdf", URDF.format(mesh="meshes/gone.stl").encode())
    with pytest.raises(AssetNotFoundError, match=r"mesh 'meshes/gone\.stl' of link 'base'"):
        check_urdf(missing)
    write(tmp_path, "bad.stl", b"garbage")
    broken = write(tmp_path, "broken.urdf", URDF.format(mesh="bad.stl").encode())
    with pytest.raises(AssetError, match=r"bad\.stl"):
        check_urdf(broken)
    with pytest.raises(AssetError, match="not valid URDF XML"):
        check_urdf(write(tmp_path, "torn.urdf", b"<robot><link></robot>"))


def test_the_library_and_the_cli_never_crash_on_them(tmp_path: Path) -> None:
    """In a child process, since without the checks PyBullet would kill this one."""
    for name, data in BROKEN.items():
        write(tmp_path, name, data)
    write(tmp_path, "robot.urdf", URDF.format(mesh="garbage.stl").encode())
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from fleetsim import Agent, AssetError, MultiRobotSimulationCore, SimObject
        folder = Path({str(tmp_path)!r})
        with MultiRobotSimulationCore() as sim:
            for name in {sorted(BROKEN)!r}:
                try:
                    SimObject.from_mesh(folder / name, sim_core=sim)
                except AssetError as exc:
                    print("ok", name)
            try:
                Agent.from_urdf(str(folder / "robot.urdf"), sim_core=sim)
            except AssetError as exc:
                print("ok urdf", "garbage.stl" in str(exc))
            print("bodies", len(sim.sim_objects))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("ok ") == len(BROKEN) + 1
    assert "ok urdf True" in result.stdout and "bodies 0" in result.stdout
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text("objects:\n  - shape: {type: mesh, mesh: truncated.stl}\n")
    cli = subprocess.run(
        [sys.executable, "-m", "fleetsim", "validate", str(scenario)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert cli.returncode == 2
    assert "objects[0]" in cli.stderr and "truncated.stl" in cli.stderr
