"""Markers for looking at a whole fleet in RViz2 or Foxglove (visualization_msgs/MarkerArray,
frame `map`):

- `/site/markers`, latched (transient local), once: the lanes (namespace `lanes`, a line list)
  and the outlines of the walls and blocked cells (`obstacles`, a line list);
- `/fleet/markers` at `markers_hz`: every robot as a box (`robots`, one cube list: blue while
  moving, grey at rest) and each door as a line (`doors`: green open, red closed, amber
  moving).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from fleetsim.devices.doors import DoorMode
from fleetsim.interfaces.ros2.robot_topics import stamp

if TYPE_CHECKING:
    from fleetsim.core import MultiRobotSimulationCore

MOVING, RESTING = (0.2, 0.4, 1.0), (0.6, 0.6, 0.6)
DOOR = {DoorMode.OPEN: (0.1, 0.8, 0.1), DoorMode.CLOSED: (0.9, 0.1, 0.1)}
DOOR_MOVING = (1.0, 0.7, 0.0)


class Markers:
    """The site's and the fleet's markers (see the module's text)."""

    def __init__(
        self, sim: MultiRobotSimulationCore, robots: list[Any], ros: dict[str, Any], node: Any
    ) -> None:
        self.sim, self.robots, self.ros = sim, robots, ros
        self.fleet = node.create_publisher(ros["MarkerArray"], "/fleet/markers", 10)
        self.site = node.create_publisher(ros["MarkerArray"], "/site/markers", ros["Latched"])
        self.site.publish(self._site())

    def _marker(self, ns: str, kind: str, scale: float, rgb: tuple[float, ...] = RESTING) -> Any:
        m = self.ros["Marker"]()
        m.header.frame_id = "map"
        m.header.stamp.sec, m.header.stamp.nanosec = stamp(self.sim.sim_time)
        m.ns, m.id, m.type, m.action = ns, 0, getattr(m, kind), m.ADD
        m.pose.orientation.w = 1.0
        m.scale.x = m.scale.y = m.scale.z = scale
        m.color.r, m.color.g, m.color.b, m.color.a = (*rgb, 1.0)
        return m

    def _points(self, xyz: Any) -> list[Any]:
        out = []
        for x, y, z in np.asarray(xyz, dtype=float).reshape(-1, 3).tolist():
            p = self.ros["Point"]()
            p.x, p.y, p.z = x, y, z
            out.append(p)
        return out

    def _site(self) -> Any:
        array = self.ros["MarkerArray"]()
        site = self.sim.site
        if site is None:
            return array
        graph = site.graph
        lanes = self._marker("lanes", "LINE_LIST", 0.05, (0.3, 0.3, 0.3))
        if len(graph.lane_from):
            heights = np.array([site.elevation(name) for name in graph.level_names])
            xyz = np.column_stack((graph.xy, heights[graph.level]))
            ends = np.column_stack((graph.lane_from, graph.lane_to)).astype(np.int64)
            lanes.points = self._points(xyz[ends.ravel()])
        array.markers.append(lanes)
        o = site.obstacles
        if len(o):
            corners = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], dtype=float)
            local = corners[None] * o.half_extents[:, None, :2]  # (K, 4, 2)
            c, s = np.cos(o.yaws)[:, None], np.sin(o.yaws)[:, None]
            x = o.centres[:, None, 0] + c * local[..., 0] - s * local[..., 1]
            y = o.centres[:, None, 1] + s * local[..., 0] + c * local[..., 1]
            z = np.repeat((o.centres[:, 2] - o.half_extents[:, 2])[:, None], 4, axis=1)
            quad = np.stack((x, y, z), axis=-1)  # (K, 4, 3)
            edges = np.stack((quad, np.roll(quad, -1, axis=1)), axis=2)  # (K, 4, 2, 3)
            outline = self._marker("obstacles", "LINE_LIST", 0.05, (0.1, 0.1, 0.1))
            outline.points = self._points(edges)
            array.markers.append(outline)
        return array

    def publish(self) -> None:
        """The robots and doors now."""
        array = self.ros["MarkerArray"]()
        here = [r for r in self.robots if not r.is_removed]
        world = self.sim.world
        pos = world.bodies["pos"][
            world.bodies.rows(np.array([r.handle for r in here], dtype=np.int64))
        ]
        agents = world.motion.agents
        motion = np.array([r.motion_handle for r in here], dtype=np.int64)
        speed = np.linalg.norm(agents["vel"][agents.rows(motion)], axis=1)
        for moving, rgb, ns in ((True, MOVING, "robots"), (False, RESTING, "robots_resting")):
            boxes = self._marker(ns, "CUBE_LIST", 0.5, rgb)
            boxes.points = self._points(pos[(speed > 1e-6) == moving])
            array.markers.append(boxes)
        doors = self.sim.doors
        for k, door in enumerate(doors.doors.values() if doors is not None else ()):
            line = self._marker("doors", "LINE_STRIP", 0.1, DOOR.get(door.mode, DOOR_MOVING))
            line.id = k
            line.points = self._points(np.column_stack((door.ends, np.full(2, door.elevation))))
            array.markers.append(line)
        self.fleet.publish(array)
