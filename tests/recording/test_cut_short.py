"""Recordings as other programs read them, and as a killed run leaves them: `@mcap/core`'s
indexed and streamed readers (what Foxglove uses) accept fleetsim's files; a run killed with
SIGKILL leaves a file that `replay` and `report` read up to its last seconds, saying so; and
`report` counts tasks from the task events."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from mcap.reader import make_reader

import fleetsim.recording


def fleetsim_run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fleetsim", *args], capture_output=True, text=True, timeout=timeout
    )


def test_mcap_core_reads_our_recordings(js_clients: Path, tmp_path: Path) -> None:
    out = tmp_path / "run.mcap"
    assert (
        fleetsim_run("run", "warehouse", "--duration", "30", "--record", str(out)).returncode == 0
    )
    done = subprocess.run(
        ["node", str(js_clients / "mcap_read.js"), str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    read = json.loads(done.stdout)
    with fleetsim.recording.open(out) as recording:
        ours = Counter(topic for topic, _t, _d in recording.messages())
    indexed, streamed = read["indexed"], read["streamed"]
    assert "error" not in indexed and "error" not in streamed, read
    assert indexed["counts"] == streamed["counts"] == dict(ours)
    assert indexed["profile"] == "fleetsim" and streamed["complete"] is True
    assert indexed["schemas"]["/fleet"] == "foxglove.PointCloud"
    assert indexed["schemas"]["/scene"] == "foxglove.SceneUpdate"
    assert int(indexed["last"]) == 30 * 10**9


def test_a_killed_run_is_readable_to_its_last_seconds(tmp_path: Path) -> None:
    out = tmp_path / "killed.mcap"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fleetsim",
            "run",
            "warehouse",
            "--rtf",
            "4",
            "--duration",
            "600",
            "--record",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    time.sleep(8.0)  # about 25 simulated seconds
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    replay = fleetsim_run("replay", str(out), "--headless", "--speed", "0")
    assert replay.returncode == 0 and "Traceback" not in replay.stderr, replay.stderr
    assert "cut short" in replay.stderr
    shown = re.search(r"replayed (\d+) frames, 0\.0 to ([\d.]+) s", replay.stdout)
    assert shown is not None, replay.stdout
    end = float(shown.group(2))
    said = re.search(r"up to ([\d.]+) s", replay.stderr)
    assert said is not None and float(said.group(1)) >= end
    assert end >= 8.0  # chunks closed every 2 simulated seconds: all but the last few are there
    assert int(shown.group(1)) >= 10 * end - 1  # every frame up to there
    report = fleetsim_run("report", str(out), "-o", str(tmp_path / "killed.html"))
    assert report.returncode == 0 and "cut short" in report.stderr, report.stderr
    assert "cut short" in (tmp_path / "killed.html").read_text()


def test_report_counts_tasks_from_the_task_events(tmp_path: Path) -> None:
    """120 s of the warehouse: two tasks end before the one KPI point (at 60 s, saying 0)
    would count them; the report counts the task events."""
    out = tmp_path / "w.mcap"
    run = fleetsim_run("run", "warehouse", "--duration", "120", "--record", str(out))
    assert run.returncode == 0, run.stderr
    with fleetsim.recording.open(out) as recording:
        kinds = Counter(e["kind"] for e in recording.events())
        kpis = [json.loads(d) for _t, _time, d in recording.messages("/kpi")]
    assert kinds["task_done"] >= 1 and kpis[-1]["tasks_completed"] < kinds["task_done"]
    page = tmp_path / "w.html"
    assert fleetsim_run("report", str(out), "-o", str(page)).returncode == 0
    said = f"tasks completed / failed</th><td>{kinds['task_done']} / {kinds['task_failed']}"
    assert said in page.read_text()
    summary = re.search(r"tasks +│ (\d+) done, (\d+) failed", run.stdout)
    assert summary is not None and int(summary.group(1)) == kinds["task_done"]


@pytest.fixture(scope="module")
def sixty_seconds(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """60 s of the warehouse, recorded."""
    out = tmp_path_factory.mktemp("rec") / "w.mcap"
    assert (
        fleetsim_run("run", "warehouse", "--duration", "60", "--record", str(out)).returncode == 0
    )
    return out


def chunks_of(path: Path) -> list[tuple[int, int]]:
    """(start, length) of the recording's chunks, as its summary says."""
    with path.open("rb") as file:
        summary = make_reader(file).get_summary()
        assert summary is not None
        return [(c.chunk_start_offset, c.chunk_length) for c in summary.chunk_indexes]


def flip_spread(data: bytearray, chunks: list[tuple[int, int]]) -> None:
    """Bytes flipped every 97 over 2 kB a third of the way in (chunk bodies, lengths, indexes:
    whatever lies there)."""
    for k in range(len(data) // 3, len(data) // 3 + 2000, 97):
        data[k] ^= 0xFF


def flip_inside_a_chunk(data: bytearray, chunks: list[tuple[int, int]]) -> None:
    """Bytes flipped in the compressed body of the chunk a third of the way through."""
    start, length = chunks[len(chunks) // 3]
    for k in range(start + length // 2, start + length - 1, 7):
        data[k] ^= 0xFF


def huge_chunk_length(data: bytearray, chunks: list[tuple[int, int]]) -> None:
    """The length of the chunk a third of the way through says it runs past the end."""
    start, _length = chunks[len(chunks) // 3]
    data[start + 1 : start + 9] = (len(data) * 4).to_bytes(8, "little")


def short_chunk_length(data: bytearray, chunks: list[tuple[int, int]]) -> None:
    """The length of the chunk a third of the way through is 100 bytes short: the reading
    lands in the middle of the chunk's compressed bytes."""
    start, length = chunks[len(chunks) // 3]
    data[start + 1 : start + 9] = (length - 9 - 100).to_bytes(8, "little")


def wrong_opcode(data: bytearray, chunks: list[tuple[int, int]]) -> None:
    """The opcode of the chunk a third of the way through is not an MCAP record's."""
    data[chunks[len(chunks) // 3][0]] = 0x7F


def flip_then_huge_length(data: bytearray, chunks: list[tuple[int, int]]) -> None:
    """A chunk's bytes flipped (the indexed reader fails there) and the next chunk's length
    damaged too (the reading record by record meets it)."""
    flip_inside_a_chunk(data, chunks)
    start, _length = chunks[len(chunks) // 3 + 1]
    data[start + 1 : start + 9] = (len(data) * 4).to_bytes(8, "little")


DAMAGE = [
    flip_spread,
    flip_inside_a_chunk,
    huge_chunk_length,
    short_chunk_length,
    wrong_opcode,
    flip_then_huge_length,
]


@pytest.mark.parametrize("damage", DAMAGE, ids=[d.__name__ for d in DAMAGE])
@pytest.mark.parametrize("summary", ["with summary", "killed"])
def test_damage_anywhere_loses_only_what_it_hit(
    sixty_seconds: Path, tmp_path: Path, damage: Callable[..., None], summary: str
) -> None:
    """Whatever the damage a third of the way into a recording hits (a chunk's bytes, its
    length, its opcode), the reader says it is damaged and reads every chunk after it: with
    the file's summary intact (the chunks' starts known) and without one (a killed run, the
    next chunk found by its shape)."""
    chunks = chunks_of(sixty_seconds)
    data = bytearray(sixty_seconds.read_bytes())
    if summary == "killed":
        data = data[: chunks[-1][0] + chunks[-1][1] // 2]  # (half the last chunk written)
    with fleetsim.recording.open(sixty_seconds) as whole:
        total = sum(1 for _topic, t, _d in whole.messages() if t < 56.0)  # (the last chunks)
        late = sum(1 for _topic, t, _d in whole.messages() if 30.0 < t < 56.0)
    damage(data, chunks)
    damaged = tmp_path / "damaged.mcap"
    damaged.write_bytes(bytes(data))
    with fleetsim.recording.open(damaged) as recording:
        times = [t for _topic, t, _d in recording.messages()]
        said = recording.truncated or ""
    lost = sum(1 for t in times if t < 56.0) < total
    assert lost is ("damaged record(s) skipped" in said), said  # a loss is said, only a loss
    if damage in (flip_spread, flip_inside_a_chunk, flip_then_huge_length) or summary == "killed":
        assert lost  # (with a summary, its index finds a chunk whose own header is wrong)
    assert ("cut short" in said) is (summary == "killed")
    assert sum(1 for t in times if 30.0 < t < 56.0) == late  # ... and nothing after the damage


def test_a_damaged_recording_is_said_damaged_and_read_where_intact(
    sixty_seconds: Path, tmp_path: Path
) -> None:
    """Bytes flipped in the middle of a recording (its header and summary intact): `replay`,
    `report` and the reader say it is damaged, how many records were lost, and read the rest."""
    with fleetsim.recording.open(sixty_seconds) as whole:
        total = sum(1 for _ in whole.messages())
        frames = sum(1 for _ in whole.frames())
    data = bytearray(sixty_seconds.read_bytes())
    flip_inside_a_chunk(data, chunks_of(sixty_seconds))
    damaged = tmp_path / "damaged.mcap"
    damaged.write_bytes(bytes(data))
    with fleetsim.recording.open(damaged) as recording:
        read = sum(1 for _ in recording.messages())
        assert (
            recording.truncated is not None and "damaged record(s) skipped" in recording.truncated
        )
        assert 0.8 * total < read < total  # what is intact: all but one chunk's
        assert 0.8 * frames < sum(1 for _ in recording.frames()) < frames
    report = fleetsim_run("report", str(damaged), "-o", str(tmp_path / "damaged.html"))
    assert report.returncode == 0 and "Traceback" not in report.stderr, report.stderr
    assert "damaged record(s) skipped" in report.stderr
    assert "damaged record(s) skipped" in (tmp_path / "damaged.html").read_text()
    replay = fleetsim_run("replay", str(damaged), "--headless", "--speed", "0")
    assert replay.returncode == 0 and "damaged record(s) skipped" in replay.stderr, replay.stderr
