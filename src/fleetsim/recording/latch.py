"""`Latch`: what a viewer that subscribes late needs to draw the world, kept from the messages
sent so far.

Foxglove and Lichtblick connect at any time and subscribe to one channel at a time. The scene
(`/scene`: the static world once, then the bodies that moved or went) and the robot list
(`/fleet/robots`: sent when it changes) are not sent again on their own, so a viewer that
subscribes after they went out would never see them. The latch keeps them: for `/scene` the
world as it stands now (every entity's latest version, deleted ones dropped) as one
`SceneUpdate`, for the others the last message; the server sends them again when a client
subscribes to their channel.
"""

from __future__ import annotations

import threading

from fleetsim.recording.schemas import foxglove

SCENE = "/scene"
LAST_ONLY = ("/fleet/robots",)  # topics whose last message is the current state


class Latch:
    """The messages a viewer that joins late needs: the scene's entities as they stand and the last
    message of the topics that hold the current state."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entities: dict[str, bytes] = {}  # the scene's entities by id, serialized
        self._scene_time = 0
        self._last: dict[str, tuple[int, bytes]] = {}

    @staticmethod
    def keeps(topic: str) -> bool:
        """Whether `topic`'s messages are kept for viewers that join later."""
        return topic == SCENE or topic in LAST_ONLY

    def add(self, topic: str, time_ns: int, data: bytes) -> None:
        """Note a message sent on `topic` (ignored unless the latch keeps the topic)."""
        if topic == SCENE:
            update = foxglove("SceneUpdate").FromString(data)
            with self._lock:
                for deletion in update.deletions:
                    if deletion.type == 0:  # MATCHING_ID
                        self._entities.pop(deletion.id, None)
                    else:  # ALL
                        self._entities.clear()
                for entity in update.entities:
                    self._entities[entity.id] = entity.SerializeToString()
                self._scene_time = time_ns
        elif topic in LAST_ONLY:
            with self._lock:
                self._last[topic] = (time_ns, data)

    def replay(self, topic: str) -> tuple[int, bytes] | None:
        """(log time, message) that brings a new subscriber of `topic` up to date, or None."""
        if topic == SCENE:
            with self._lock:
                if not self._entities:
                    return None
                entities, at = list(self._entities.values()), self._scene_time
            update = foxglove("SceneUpdate")()
            for entity in entities:
                update.entities.add().MergeFromString(entity)
            return at, update.SerializeToString()
        with self._lock:
            return self._last.get(topic)
