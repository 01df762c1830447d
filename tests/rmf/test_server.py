"""RMF's fleet-manager API served for real (uvicorn on 127.0.0.1, a free port), driven over HTTP
while the simulation steps: status, navigate to completion, stop, the error envelope, and many
clients at once."""

from __future__ import annotations

import json
import math
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from fleetsim import Agent, ConfigError, Pose, SimObject
from fleetsim.interfaces.rmf.fleet import RmfFleet
from fleetsim.interfaces.rmf.server import RmfServer, make_app
from fleetsim.objects import ShapeParams, SimObjectSpawnParams

from ..conftest import make_sim
from .helpers import Served


@pytest.fixture
def served() -> Iterator[Served]:
    with make_sim(timestep=0.05, collision_narrowphase="aabb") as sim:
        robots = [
            Agent.from_urdf(
                "mobile_robot",
                Pose.from_xyz(0, 3.0 * k, 0),
                sim_core=sim,
                name=f"tinyRobot{k + 1}",
                motion_mode="differential",
                max_linear_vel=1.0,
            )
            for k in range(3)
        ]
        fleet = RmfFleet(sim, robots, map_name="L1").start()
        with RmfServer(make_app(fleet)) as server:
            yield Served(sim, fleet, server)
        fleet.stop_serving()


def test_status_of_all_robots_and_of_one(served: Served) -> None:
    code, reply = served.call("GET", "status/")
    assert code == 200 and reply["success"] is True and reply["msg"] == ""
    robots = reply["data"]["all_robots"]
    assert reply["all_robots"] == robots  # where RMF's own client reads it
    assert [r["robot_name"] for r in robots] == ["tinyRobot1", "tinyRobot2", "tinyRobot3"]
    second = robots[1]
    assert second["map_name"] == "L1" and second["position"]["y"] == pytest.approx(3.0)
    assert second["battery"] == pytest.approx(100.0) and second["destination_arrival"] is None
    assert second["last_completed_request"] is None and second["replan"] is False
    code, one = served.call("GET", "status/?robot_name=tinyRobot3")
    assert code == 200 and one["data"]["position"]["y"] == pytest.approx(6.0)


def test_status_answers_are_the_boards_json(served: Served) -> None:
    """The fast answers (bytes written per robot) parse to the same status as the dicts, with
    a command running or not, and equal what the FastAPI route says in the same step."""
    body = {"destination": {"x": 5.0, "y": 0.0, "yaw": 1.0}}
    served.call("POST", "navigate/?robot_name=tinyRobot1&cmd_id=3", body)
    served.call("GET", "stop_robot/?robot_name=tinyRobot2&stop_cmd_id=4")
    for _ in range(5):
        served.sim.step_once()
    board = served.fleet.board
    for k in range(3):
        assert json.loads(board.body(k)) == {"data": board.data(k), "success": True, "msg": ""}
    assert board.data(0)["destination_arrival"]["cmd_id"] == 3
    assert board.data(1)["last_completed_request"] == 4
    everyone = json.loads(board.all_body())
    assert everyone["data"]["all_robots"] == [board.data(k) for k in range(3)]
    fast = served.call("GET", "status/?robot_name=tinyRobot1")
    routed = served.call("GET", "status/?robot_name=tinyRobot1&verbose=1")  # not the fast path
    assert fast == routed == (200, json.loads(board.body(0)))


def test_replan_while_blocked(served: Served) -> None:
    """A robot that makes no progress on its command for `blocked_after_s` says `replan`; once
    it drives on, it no longer does."""
    served.call(
        "POST",
        "navigate/?robot_name=tinyRobot1&cmd_id=1",
        {"destination": {"x": 30.0, "y": 0.0, "yaw": 0.0}},
    )
    robot, fleet = served.fleet.robots[0], served.fleet
    served.step_until(lambda: robot.get_pose().position[0] > 1.0)
    robot.hold()
    held_at = served.sim.sim_time
    served.step_until(lambda: fleet.status("tinyRobot1")["replan"])
    assert served.sim.sim_time - held_at >= fleet.blocked_after_s
    assert not fleet.status("tinyRobot2")["replan"]  # idle robots are never blocked
    robot.release()
    served.step_until(lambda: not fleet.status("tinyRobot1")["replan"])
    assert fleet.status("tinyRobot1")["destination_arrival"]["cmd_id"] == 1


def test_navigate_to_completion_with_a_speed_limit(served: Served) -> None:
    body = {
        "map_name": "L1",
        "destination": {"x": 4.0, "y": 0.0, "yaw": math.pi / 2},
        "speed_limit": 0.5,
    }
    code, reply = served.call("POST", "navigate/?robot_name=tinyRobot1&cmd_id=7", body)
    assert code == 200 and reply["success"] is True
    served.sim.step_once()
    arrival = served.fleet.status("tinyRobot1")["destination_arrival"]
    assert arrival["cmd_id"] == 7 and arrival["duration"] == pytest.approx(4.0, abs=0.2)
    robot = served.fleet.robots[0]
    fastest = 0.0

    def done() -> bool:
        nonlocal fastest
        fastest = max(fastest, float(np.hypot(*robot.get_velocity()[0][:2])))
        return bool(served.fleet.status("tinyRobot1")["last_completed_request"] == 7)

    served.step_until(done)
    _, one = served.call("GET", "status/?robot_name=tinyRobot1")
    state = one["data"]
    assert state["position"]["x"] == pytest.approx(4.0, abs=0.06)
    assert state["position"]["yaw"] == pytest.approx(math.pi / 2, abs=0.02)
    assert state["destination_arrival"] is None and state["battery"] < 100.0
    assert fastest <= 0.5 + 1e-6


def test_stop_robot(served: Served) -> None:
    body = {"map_name": "L1", "destination": {"x": 40.0, "y": 3.0, "yaw": 0.0}}
    served.call("POST", "navigate/?robot_name=tinyRobot2&cmd_id=1", body)
    served.step_until(lambda: served.fleet.robots[1].get_pose().position[0] > 1.0)
    code, reply = served.call(
        "GET", "stop_robot/?robot_name=tinyRobot2&running_cmd_id=9&stop_cmd_id=2"
    )
    assert code == 200 and "running command 1, not 9" in reply["msg"]
    served.sim.step_once()
    assert served.fleet.robots[1].is_moving  # not stopped: another command
    code, reply = served.call(
        "GET", "stop_robot/?robot_name=tinyRobot2&running_cmd_id=1&stop_cmd_id=2"
    )
    assert code == 200 and reply["success"] is True
    served.step_until(lambda: not served.fleet.robots[1].is_moving)
    state = served.fleet.status("tinyRobot2")
    assert state["last_completed_request"] == 2 and state["destination_arrival"] is None
    assert state["position"]["x"] < 5.0


def test_bad_requests_get_the_envelope_never_a_500(served: Served) -> None:
    code, reply = served.call("GET", "status/?robot_name=ghost")
    assert code == 200 and reply["success"] is False and "no robot 'ghost'" in reply["msg"]
    good = {"destination": {"x": 1.0, "y": 0.0, "yaw": 0.0}}
    cases = [
        ("POST", "navigate/?robot_name=tinyRobot1&cmd_id=3", {"map_name": "L1"}, "destination"),
        ("POST", "navigate/?robot_name=tinyRobot1&cmd_id=3", b"{not json", "json"),
        ("POST", "navigate/?robot_name=tinyRobot1&cmd_id=three", good, "cmd_id"),
        ("POST", "navigate/?robot_name=ghost&cmd_id=3", good, "no robot"),
        (
            "POST",
            "navigate/?robot_name=tinyRobot1&cmd_id=3",
            {**good, "map_name": "B2"},
            "tinyRobot1 is on 'L1'",
        ),
        ("GET", "stop_robot/?robot_name=ghost", None, "no robot"),
        ("POST", "navigate/?robot_name=tinyRobot1&cmd_id=-1", good, "cmd_id -1"),
        ("GET", f"stop_robot/?robot_name=tinyRobot1&stop_cmd_id={2**64}", None, "cmd_id"),
    ]
    for method, path, body, said in cases:
        code, reply = served.call(method, path, body)
        assert code == 200 and reply["success"] is False, (path, reply)
        assert said in reply["msg"].lower() or said in reply["msg"], (path, reply)
    served.sim.step_once()
    assert not any(r.is_moving for r in served.fleet.robots)  # nothing was started


def test_many_clients_at_once(served: Served) -> None:
    failures: list[Any] = []
    stop = threading.Event()

    def client() -> None:
        for _ in range(40):
            code, reply = served.call("GET", "status/")
            if code != 200 or len(reply["all_robots"]) != 3:
                failures.append((code, reply))

    threads = [threading.Thread(target=client) for _ in range(8)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):  # the simulation steps meanwhile
        served.sim.step_once()
        time.sleep(0.002)
    stop.set()
    assert failures == []


def test_teleop_and_attach(served: Served) -> None:
    cart = SimObject.from_params(
        SimObjectSpawnParams(
            visual_shape=ShapeParams(half_extents=(0.3, 0.3, 0.2)),
            initial_pose=Pose.from_xyz(0.6, 6.0, 0.2),
            pickable=True,
            name="cart_1",
        ),
        sim_core=served.sim,
    )
    code, _ = served.call("POST", "toggle_teleop/?robot_name=tinyRobot3", {"toggle": True})
    assert code == 200
    served.sim.step_once()
    body = {"destination": {"x": 5.0, "y": 6.0, "yaw": 0.0}}
    code, reply = served.call("POST", "navigate/?robot_name=tinyRobot3&cmd_id=4", body)
    assert code == 200 and "teleop" in reply["msg"]
    served.call("POST", "toggle_teleop/?robot_name=tinyRobot3", {"toggle": False})
    code, _ = served.call("POST", "toggle_attach/?robot_name=tinyRobot3&cmd_id=5", {"toggle": True})
    assert code == 200
    served.sim.step_once()
    robot = served.fleet.robots[2]
    assert (
        cart.attached_to is robot
        and served.fleet.status("tinyRobot3")["last_completed_request"] == 5
    )
    code, _ = served.call("POST", "navigate/?robot_name=tinyRobot3&cmd_id=6", body)
    assert code == 200
    served.step_until(lambda: served.fleet.status("tinyRobot3")["last_completed_request"] == 6)
    assert cart.get_pose().position[0] == pytest.approx(5.6, abs=0.1)  # it came along
    served.call("POST", "toggle_attach/?robot_name=tinyRobot3&cmd_id=7", {"toggle": False})
    served.sim.step_once()
    assert cart.attached_to is None
    code, reply = served.call("POST", "toggle_attach/?robot_name=tinyRobot3&cmd_id=8", {})
    assert code == 200 and "toggle" in reply["msg"]


def test_a_bearer_token_when_asked() -> None:
    with make_sim(timestep=0.05) as sim:
        robot = Agent.from_urdf("mobile_robot", Pose.from_xyz(0, 0, 0), sim_core=sim, name="r1")
        fleet = RmfFleet(sim, [robot]).start()
        with RmfServer(make_app(fleet, token="s3cret")) as server:
            served = Served(sim, fleet, server)
            code, reply = served.call("GET", "status/")
            assert code == 401 and reply["success"] is False and "bearer token" in reply["msg"]
            auth = {"Authorization": "Bearer s3cret"}
            request = urllib.request.Request(f"{server.url}/status/", headers=auth)
            with urllib.request.urlopen(request, timeout=10) as response:
                assert json.loads(response.read())["success"] is True

            def raw(path: str, headers: dict[str, str]) -> tuple[int, bytes]:
                request = urllib.request.Request(f"{server.url}/{path}", headers=headers)
                try:
                    with urllib.request.urlopen(request, timeout=10) as response:
                        return response.status, response.read()
                except urllib.error.HTTPError as exc:
                    return exc.code, exc.read()

            # One check of the token, whichever path answers: the same refusal, byte for byte
            refused = {
                raw(path, headers)
                for path in (
                    "status/",
                    "status/?robot_name=r1",
                    "status/?robot_name=r1&x=1",
                    "stop_robot/",
                )
                for headers in ({}, {"Authorization": "Bearer wrong"})
            }
            assert len(refused) == 1 and next(iter(refused))[0] == 401
            fast = raw("status/?robot_name=r1", auth)  # answered before FastAPI
            routed = raw("status/?robot_name=r1&x=1", auth)  # answered by the route
            assert fast == routed and fast[0] == 200
            assert raw("status/?robot_name=r9", auth) == raw("status/?robot_name=r9&x=1", auth)
        fleet.stop_serving()


def test_activities_are_paths_a_robot_drives() -> None:
    clean = {"clean": {"lobby": [[2.0, 0.0, 0.0], [2.0, 2.0, 1.57], [0.0, 2.0, 3.14]]}}
    with make_sim(timestep=0.05) as sim:
        robot = Agent.from_urdf(
            "mobile_robot", Pose.from_xyz(0, 0, 0), sim_core=sim, name="r1", max_linear_vel=1.0
        )
        with pytest.raises(
            ConfigError, match=r"activities.clean.hall\[1\]: expected \[x, y, yaw\]"
        ):
            RmfFleet(sim, [robot], activities={"clean": {"hall": [[0, 0, 0], [1, "a", 0]]}})
        fleet = RmfFleet(sim, [robot], activities=clean).start()
        with RmfServer(make_app(fleet)) as server:
            served = Served(sim, fleet, server)
            code, reply = served.call("GET", "action_paths/?activity=clean&label=lobby")
            assert code == 200 and reply["data"] == {
                "map_name": "L1",
                "path": clean["clean"]["lobby"],
            }
            code, reply = served.call("GET", "action_paths/?activity=clean&label=roof")
            assert code == 200 and "has no label 'roof' (labels: lobby)" in reply["msg"]
            code, reply = served.call(
                "POST",
                "start_activity/?robot_name=r1&cmd_id=9",
                {"activity": "mop", "label": "lobby"},
            )
            assert code == 200 and "no activity 'mop' (activities: clean)" in reply["msg"]
            code, reply = served.call(
                "POST",
                "start_activity/?robot_name=r1&cmd_id=9",
                {"activity": "clean", "label": "lobby"},
            )
            wanted = {"map_name": "L1", "path": clean["clean"]["lobby"]}
            assert code == 200 and reply["data"]["path"] == wanted
            passed_corner = []

            def done() -> bool:
                x, y = robot.get_pose().position[:2]
                if abs(x - 2.0) < 0.1 and abs(y - 2.0) < 0.1:
                    passed_corner.append(True)
                return bool(fleet.status("r1")["last_completed_request"] == 9)

            served.step_until(done, steps=4000)
            x, y = robot.get_pose().position[:2]
            assert (x, y) == pytest.approx((0.0, 2.0), abs=0.06) and passed_corner
            assert robot.get_pose().yaw == pytest.approx(3.14, abs=0.02)
        fleet.stop_serving()


def read_answers(sock: socket.socket, count: int) -> list[tuple[bytes, dict[str, Any]]]:
    """`count` HTTP answers from `sock`: (status line, JSON body) each."""
    buf, answers = b"", []
    while len(answers) < count:
        end = buf.find(b"\r\n\r\n")
        if end >= 0:
            head = buf[:end].lower()
            length = int(head.split(b"content-length:")[1].split(b"\r\n")[0])
            if len(buf) >= end + 4 + length:
                answers.append(
                    (buf.split(b"\r\n", 1)[0], json.loads(buf[end + 4 : end + 4 + length]))
                )
                buf = buf[end + 4 + length :]
                continue
        chunk = sock.recv(65536)
        assert chunk, f"closed after {len(answers)} answers"
        buf += chunk
    return answers


def test_status_answered_on_kept_alive_and_pipelined_connections(served: Served) -> None:
    """Status answers written straight by the HTTP protocol share connections with requests
    that go through FastAPI: kept alive, pipelined (in order), HTTP/1.0, and the path without
    its slash (as RMF's client asks) answered with no redirect."""
    host, port = served.server.host, served.server.port
    assert served.server.fast  # status answered before uvicorn parses anything
    base = "/open-rmf/rmf_demos_fm"
    body = json.dumps({"destination": {"x": 2.0, "y": 0.0, "yaw": 0.0}}).encode()
    navigate = (
        f"POST {base}/navigate/?robot_name=tinyRobot1&cmd_id=5 HTTP/1.1\r\nHost: x\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    status = f"GET {base}/status?robot_name=tinyRobot2 HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    unknown = f"GET {base}/status/?robot_name=ghost HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(status)
        ((line, first),) = read_answers(sock, 1)
        assert line == b"HTTP/1.1 200 OK" and first["data"]["robot_name"] == "tinyRobot2"
        sock.sendall(status[:20])  # a head in two pieces
        time.sleep(0.05)
        sock.sendall(status[20:])
        assert read_answers(sock, 1)[0][1] == first
        sock.sendall(status + navigate + status + unknown + status)  # pipelined, in one write
        answers = read_answers(sock, 5)
        assert [a[0].split(b" ")[1] for a in answers] == [b"200"] * 5
        assert answers[0][1] == first and answers[2][1] == first and answers[4][1] == first
        assert answers[1][1] == {"data": {}, "success": True, "msg": ""}
        assert "no robot 'ghost'" in answers[3][1]["msg"]
    served.sim.step_once()
    assert served.fleet.status("tinyRobot1")["destination_arrival"]["cmd_id"] == 5
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(f"GET {base}/status/ HTTP/1.0\r\n\r\n".encode())
        ((line, everyone),) = read_answers(sock, 1)
        assert len(everyone["all_robots"]) == 3
        assert sock.recv(10) == b""  # HTTP/1.0: closed after the answer


def test_a_client_that_does_not_read_gets_every_answer_in_order(served: Served) -> None:
    """Thousands of pipelined status requests (megabytes of answers, more than the sockets
    hold) sent before reading any answer: the server stops reading while its answers wait,
    then answers all, in order."""
    host, port = served.server.host, served.server.port
    wanted = [f"tinyRobot{k % 3 + 1}" if k % 4 == 0 else "" for k in range(8000)]
    requests = b"".join(
        f"GET /open-rmf/rmf_demos_fm/status/{'?robot_name=' + name if name else ''} HTTP/1.1\r\n"
        f"Host: x\r\n\r\n".encode()
        for name in wanted
    )
    with socket.create_connection((host, port), timeout=20) as sock:
        sender = threading.Thread(target=sock.sendall, args=(requests,))
        sender.start()
        time.sleep(0.5)  # answers pile up unread
        answers = read_answers(sock, len(wanted))
        sender.join(10)
    said = [a[1]["data"].get("robot_name", "") for a in answers]
    assert said == wanted
    assert sum(len(json.dumps(a[1])) for a in answers) > 5_000_000


def test_the_server_stops_with_kept_alive_connections_open() -> None:
    with make_sim(timestep=0.05) as sim:
        robot = Agent.from_urdf("mobile_robot", Pose.from_xyz(0, 0, 0), sim_core=sim, name="r1")
        fleet = RmfFleet(sim, [robot]).start()
        server = RmfServer(make_app(fleet)).start()
        base = "/open-rmf/rmf_demos_fm"
        with socket.create_connection((server.host, server.port), timeout=10) as sock:
            sock.sendall(f"GET {base}/status/ HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            assert read_answers(sock, 1)[0][1]["all_robots"][0]["robot_name"] == "r1"
            t0 = time.monotonic()
            server.stop()
            assert time.monotonic() - t0 < 5.0
            assert sock.recv(10) == b""  # closed by the server on its way out
        fleet.stop_serving()
