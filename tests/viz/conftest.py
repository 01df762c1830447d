import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def xvfb_display() -> Iterator[str]:
    """A private virtual X display (Debian's Xvfb); skipped where Xvfb or xdotool is missing."""
    if shutil.which("Xvfb") is None or shutil.which("xdotool") is None:
        pytest.skip("needs Xvfb and xdotool (apt-get install xvfb xdotool)")
    read, write = os.pipe()  # Xvfb picks a free display and says which (no race between workers)
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        pass_fds=(write,),
    )
    os.close(write)
    with os.fdopen(read) as said:
        number = said.readline().strip()
    if not number:
        server.kill()
        server.wait(timeout=10)
        pytest.skip("Xvfb did not start")
    socket = Path(f"/tmp/.X11-unix/X{number}")
    for _ in range(100):
        if socket.exists():
            break
        time.sleep(0.05)
    try:
        yield f":{number}"
    finally:
        server.terminate()
        server.wait(timeout=10)
