"""The code keeps the shape docs/architecture.md gives it: layers import only downwards.

Every import of a fleetsim module, at the top of a file, inside a function or under `if
TYPE_CHECKING:` (types only, but an import circle all the same), goes to a lower layer (or stays
in its own package); peers of one layer do not import each other. What a lower layer needs of a
higher one is a Protocol in the lower layer (`objects.ActionTicker`, `devices.host.DeviceHost`).
"""

from __future__ import annotations

import ast
from pathlib import Path

import fleetsim

SRC = Path(fleetsim.__file__).parent

# Lowest first; one row per layer, as the architecture page's table has them.
LAYERS: list[set[str]] = [
    {"errors"},
    {"environment", "version", "logs", "events", "assets", "yaml_source", "outputs"},
    {"spin", "hints"},
    {"jit", "parallel", "memory", "scheduling"},
    {"geometry"},
    {"state", "site"},
    {"backend"},
    {"collision", "control", "models", "sensors"},
    {"people"},
    {"objects"},
    {"devices", "usd"},
    {"agents"},
    {"actions"},
    {"core"},
    {"fleet"},
    {"faults"},
    {"behavior"},
    {"scenario", "recording", "interfaces"},
    {"sweep", "viz"},
    {"rl"},
    {"lorr"},
    {"fuzz"},
    {"__init__"},  # the package: `from fleetsim import Agent` is an import of all of it
    {"bench"},
    {"cli"},
    {"__main__"},
]
RANK = {name: k for k, layer in enumerate(LAYERS) for name in layer}


def package_of(path: Path) -> str:
    return path.relative_to(SRC).parts[0].removesuffix(".py")


def imported(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, fleetsim part) of every import, type-only ones included."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            found.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module == "fleetsim":
                found.extend((node.lineno, f"fleetsim.{a.name}") for a in node.names)
            else:
                found.append((node.lineno, node.module))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return [(line, name.split(".")[1]) for line, name in found if name.startswith("fleetsim.")]


def test_every_module_is_in_a_layer() -> None:
    packages = {package_of(p) for p in SRC.rglob("*.py")} - {"scenarios"}
    assert packages - set(RANK) == set(), "add it to LAYERS and to docs/architecture.md"


def test_layers_import_only_downwards() -> None:
    wrong = []
    for path in sorted(SRC.rglob("*.py")):
        source = package_of(path)
        for line, target in imported(ast.parse(path.read_text())):
            if target == source or target not in RANK:  # (names from fleetsim: its __init__)
                target = target if target in RANK else "__init__"
            if target != source and RANK[target] >= RANK[source]:
                wrong.append(f"{path.relative_to(SRC)}:{line} imports {target}")
    assert wrong == []


def test_the_architecture_page_lists_the_same_layers() -> None:
    page = (SRC.parents[1] / "docs" / "architecture.md").read_text()
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    listed = {name.strip("` ") for row in rows for name in row.split("|")[1].split(",")}
    assert set(RANK) - {"__init__", "__main__"} <= listed, "the page's layer table is out of date"
