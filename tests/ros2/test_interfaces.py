"""The interfaces built from ros2-interfaces/ are Jazzy's on the wire: each type's RIHS01 hash,
as the build generated it, equals the hash of the upstream Jazzy release's definition (worked
out with `rosbags` from the release's own .msg/.action text, recorded below with the tag), and
`rosbags`' built-in Jazzy store where it has the type; rclpy and rosbags read each other's
CDR."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from rclpy.serialization import deserialize_message, serialize_message
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

ROOT = Path(__file__).parents[2] / "ros2-interfaces" / "interfaces"

# From the upstream releases (geometry2 0.36.4, navigation2 1.3.13, rmf_internal_msgs 3.3.1):
# rosbags' hash_rihs01 of each definition, registered from the release's file.
UPSTREAM = {
    "tf2_msgs/msg/TFMessage": ("e369d0f05a23ae52508854b66f6aa0437f3449d652e8cbf22d5abe85d020f087"),
    "nav2_msgs/action/NavigateToPose_Goal": (
        "22a9dffbd6733011220460bd52edbc7843c8fc86282d40bc7ad3ca176a9dec10"
    ),
    "nav2_msgs/action/NavigateToPose_Result": (
        "ddbff7fc6d1e51d774d5defdb8398a57cb23fa8709355002d676408bb4860b85"
    ),
    "nav2_msgs/action/NavigateToPose_Feedback": (
        "9ebc544c7d41bd8c6060b191bf9f5e4ddca6c2f61ee9e04fcb62ed5d67218a33"
    ),
    "rmf_door_msgs/msg/DoorMode": (
        "02c834bb83aa3ca1fbd8cf4f61a1d1ae4dc8227111bde3820dda580f8c2c6429"
    ),
    "rmf_door_msgs/msg/DoorState": (
        "1cb9d98f19c66cbc1f9acb16faaa90c63a7b65021bd26c69958d96f0a0388bb2"
    ),
    "rmf_door_msgs/msg/DoorRequest": (
        "3145b5d97064f89b0a0db953b8167ddeeefbc2914c24a603c3bdc51f122f143e"
    ),
    "rmf_lift_msgs/msg/LiftState": (
        "ce0553cd08eeeb321bdae554efdb6d2ebb2be9755df2e34895cbef55b51f4c06"
    ),
    "rmf_lift_msgs/msg/LiftRequest": (
        "e8f1e0aa4d172703d0d7840c1876448c6c5d75ab58955faf7de7dddc17c096ac"
    ),
}


def built_hashes() -> dict[str, str]:
    """What the build generated: share/<package>/<kind>/<Type>.json, beside the ROS wheels."""
    found: dict[str, str] = {}
    for package in ("tf2_msgs", "nav2_msgs", "rmf_door_msgs", "rmf_lift_msgs"):
        for path in (Path(sys.prefix) / "share" / package).glob("*/*.json"):
            for entry in json.loads(path.read_text())["type_hashes"]:
                found[entry["type_name"]] = entry["hash_string"]
    return found


def test_built_types_hash_as_jazzys() -> None:
    built = built_hashes()
    for name, digest in UPSTREAM.items():
        assert built.get(name) == f"RIHS01_{digest}", name
    store = get_typestore(Stores.ROS2_JAZZY)
    assert store.hash_rihs01("tf2_msgs/msg/TFMessage") == built["tf2_msgs/msg/TFMessage"]


@pytest.mark.parametrize("package", ["tf2_msgs", "nav2_msgs", "rmf_door_msgs", "rmf_lift_msgs"])
def test_our_definitions_hash_as_recorded(package: str) -> None:
    """The definitions in this repo, read by rosbags (not by the build), hash as recorded."""
    store = get_typestore(Stores.ROS2_JAZZY)
    types = {}
    for path in sorted((ROOT / package).glob("*/*.*")):
        if path.suffix == ".msg":
            types.update(get_types_from_msg(path.read_text(), f"{package}/msg/{path.stem}"))
        elif path.suffix == ".action":
            for part, suffix in zip(
                path.read_text().split("---"), ("Goal", "Result", "Feedback"), strict=True
            ):
                types.update(get_types_from_msg(part, f"{package}/action/{path.stem}_{suffix}"))
    store.register(types)
    mine = [name for name in UPSTREAM if name.startswith(package)]
    assert mine and all(store.hash_rihs01(n) == f"RIHS01_{UPSTREAM[n]}" for n in mine)


def test_rclpy_and_rosbags_read_each_others_cdr() -> None:
    from rmf_lift_msgs.msg import LiftState

    store = get_typestore(Stores.ROS2_JAZZY)
    text = (ROOT / "rmf_lift_msgs" / "msg" / "LiftState.msg").read_text()
    store.register(get_types_from_msg(text, "rmf_lift_msgs/msg/LiftState"))
    state = LiftState(lift_name="LiftA", available_floors=["L1", "L3"], current_floor="L1")
    state.door_state, state.available_modes, state.session_id = LiftState.DOOR_OPEN, [1, 2], "s"
    back = store.deserialize_cdr(serialize_message(state), "rmf_lift_msgs/msg/LiftState")
    assert (back.lift_name, back.available_floors, back.door_state) == ("LiftA", ["L1", "L3"], 2)
    back.current_floor = "L3"
    again = deserialize_message(
        bytes(store.serialize_cdr(back, "rmf_lift_msgs/msg/LiftState")), LiftState
    )
    assert again.current_floor == "L3" and list(again.available_modes) == [1, 2]
