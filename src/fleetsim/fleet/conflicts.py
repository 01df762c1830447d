"""Which nodes of a site graph two robots may not hold at once: every node within the traffic
clearance of another, and the nodes of lanes in one mutex group (one robot at a time)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fleetsim.errors import ConfigError
from fleetsim.site import NavGraph


@dataclass(frozen=True)
class Csr:
    """A compressed sparse row table: row k's entries are `indices[indptr[k]:indptr[k + 1]]`."""

    indptr: np.ndarray
    indices: np.ndarray


def mutex_nodes(graph: NavGraph) -> dict[int, set[int]]:
    """For each node at the end of a lane in a mutex group, the other nodes of its groups'
    lanes: one robot at a time in a group."""
    members: dict[int, set[int]] = {}
    for group in np.unique(graph.mutex[graph.mutex >= 0]).tolist():
        lanes = graph.mutex == group
        nodes = set(graph.lane_from[lanes].tolist()) | set(graph.lane_to[lanes].tolist())
        for k in nodes:
            members.setdefault(k, set()).update(nodes)
    return members


def distinct_neighbours(graph: NavGraph, block: int = 1 << 20) -> np.ndarray:
    """For each node, how many other nodes a lane joins it to (either direction, counted once
    however many lanes join the two). One array of pair keys, sorted in place; the counting
    goes a block of keys at a time."""
    n = len(graph)
    pairs = np.minimum(graph.lane_from, graph.lane_to).astype(np.int64)
    pairs *= n
    pairs += np.maximum(graph.lane_from, graph.lane_to)
    pairs.sort()
    degree = np.zeros(n, dtype=np.int64)
    for s in range(0, len(pairs), block):
        keys = pairs[s : s + block]
        before = pairs[s - 1 : s - 1 + len(keys)] if s else np.r_[-1, keys[:-1]]
        keys = keys[keys != before]  # the first of each run of equal keys
        degree += np.bincount(keys // n, minlength=n) + np.bincount(keys % n, minlength=n)
    return degree


def levels_apart(graph: NavGraph, radius: float) -> np.ndarray:
    """The nodes' positions with each level moved along x clear of the others, so nodes on
    different floors (a lift's, one above the other) never conflict."""
    if len(graph.level_names) < 2:
        return graph.xy
    width = float(np.ptp(graph.xy[:, 0])) + 4 * radius + 1.0
    apart: np.ndarray = graph.xy.copy()
    apart[:, 0] += np.asarray(graph.level, dtype=np.float64) * width
    return apart


def conflict_sets(
    xy: np.ndarray, radius: float, extra: dict[int, set[int]] | None = None, block: int = 1 << 16
) -> Csr:
    """For each node, the nodes within `radius` (itself included) and the nodes `extra` adds.

    Vectorised over a grid of radius-sized cells: for a block of nodes at a time, the members
    of the 3 x 3 cells around each are the candidates (three runs of the nodes sorted by
    cell, found in a table of cells or, for a sparse site, by binary search), kept when
    nearer than `radius`. A node's list is in the order of the cells (left to right, bottom
    to top within a column) and of node index within a cell."""
    n = len(xy)
    index = np.int32 if n < 2**31 else np.int64
    if n == 0:
        return Csr(np.zeros(1, dtype=index), np.zeros(0, dtype=index))
    cell = np.floor(xy / max(radius, 1e-9))
    cell -= cell.min(axis=0) - 1  # a cell of margin all round: neighbours never wrap
    rows, cell_x_max = float(cell[:, 1].max()) + 2, float(cell[:, 0].max())
    if (cell_x_max + 2) * rows >= 2.0**62:
        raise ConfigError(
            f"the site spans {np.ptp(xy, axis=0).max():.3g} m, too far for cells of the "
            f"traffic clearance ({radius:.3g} m)"
        )
    key = (cell[:, 0] * rows + cell[:, 1]).astype(np.int64)
    del cell
    order = np.argsort(key, kind="stable").astype(index)
    cells = (float(cell_x_max) + 2) * rows
    if cells <= 4 * n + (1 << 20):  # a table of where each cell's run starts: no search
        starts = np.zeros(int(cells) + 1, dtype=np.int64)
        np.cumsum(np.bincount(key, minlength=int(cells)), out=starts[1:])

        def runs(low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return starts[low], starts[high + 1] - starts[low]
    else:  # sparse: binary search in the keys sorted
        by_cell = key[order]

        def runs(low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            first = np.searchsorted(by_cell, low, "left")
            return first, np.searchsorted(by_cell, high, "right") - first

    counts = np.zeros(n, dtype=np.int64)
    chunks = []
    for s in range(0, n, block):
        nodes = np.arange(s, min(n, s + block), dtype=index)
        nodes = nodes[np.argsort(key[nodes], kind="stable")]  # sorted: faster to look up
        near_of, near = [], []
        for dx in (-1, 0, 1):
            # the cells dy = -1, 0, 1 have consecutive keys: their members are one run
            column = key[nodes] + dx * int(rows)
            first, found = runs(column - 1, column + 1)
            near_of.append(np.repeat(nodes, found))
            skip = np.repeat(first - np.cumsum(found) + found, found)  # each run from `first`
            near.append(order[skip + np.arange(len(skip))])
        k, m = np.concatenate(near_of), np.concatenate(near)
        d = np.hypot(xy[m, 0] - xy[k, 0], xy[m, 1] - xy[k, 1])
        keep = (d < radius) | (m == k)
        k, m = k[keep], m[keep]
        by_node = np.argsort(k, kind="stable")  # node by node, each in the cells' order
        counts[s : s + len(nodes)] = np.bincount(k - s, minlength=len(nodes))
        chunks.append(m[by_node])
    indices = np.concatenate(chunks)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    if extra:
        indptr, indices = _add(indptr, indices, extra)
    return Csr(indptr.astype(_index(len(indices))), indices.astype(index))


def _add(
    indptr: np.ndarray, indices: np.ndarray, extra: dict[int, set[int]]
) -> tuple[np.ndarray, np.ndarray]:
    """The CSR with `extra[k]` joined to node k's list (sorted, without repeats)."""
    parts, counts, last = [], np.diff(indptr), 0
    for k in sorted(extra):
        joined = sorted(set(indices[indptr[k] : indptr[k + 1]].tolist()) | extra[k])
        parts += [indices[indptr[last] : indptr[k]], np.array(joined, dtype=indices.dtype)]
        counts[k], last = len(joined), k + 1
    parts.append(indices[indptr[last] :])
    indptr = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    return indptr, np.concatenate(parts)


def _index(count: int) -> type[np.signedinteger]:
    return np.int32 if count < 2**31 else np.int64
