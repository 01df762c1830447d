"""The documentation pages written from the code: `python tools/docs_pages.py` (`--check`
says which are out of date, exit 1).

`docs/reference/cli.md`, `schema.md`, `environment.md` and `events.md` hold a generated part
between `<!-- generated: NAME -->` and `<!-- end generated -->`: the command-line reference
(from the `fleetsim` command's own options and help), the scenario schema (from the JSON Schema
`fleetsim schema` prints), the environment variables (`fleetsim.environment.VARIABLES`) and the
events (`fleetsim.events.CATALOGUE`). The parts are plain Markdown in the files, so any engine
that reads `mkdocs.yml` builds the same site (no build hook); `tests/test_docs_pages.py` fails
when one is out of date.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PAGES = {
    "cli": ROOT / "docs" / "reference" / "cli.md",
    "schema": ROOT / "docs" / "reference" / "schema.md",
    "environment": ROOT / "docs" / "reference" / "environment.md",
    "events": ROOT / "docs" / "reference" / "events.md",
}
END = "<!-- end generated -->"


def generated(name: str) -> str:
    """The generated part of page `name`."""
    makers = {
        "cli": cli_reference,
        "schema": schema_reference,
        "environment": environment_reference,
        "events": events_reference,
    }
    return makers[name]()


def rewritten(text: str, name: str) -> str:
    """The page's text with its generated part made anew."""
    begin = f"<!-- generated: {name} -->"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(END), re.S)
    if begin not in text:
        raise SystemExit(f"{name}: the page has no '{begin}' marker")
    block = f"{begin}\n\n{generated(name)}\n\n{END}"
    if END not in text:  # (the old single marker)
        return text.replace(begin, block)
    return pattern.sub(lambda _m: block, text)


def main(argv: list[str]) -> int:
    stale = []
    for name, path in PAGES.items():
        text = path.read_text()
        new = rewritten(text, name)
        if new != text:
            stale.append(str(path.relative_to(ROOT)))
            if "--check" not in argv:
                path.write_text(new)
    if "--check" in argv and stale:
        print("out of date (run python tools/docs_pages.py): " + ", ".join(stale))
        return 1
    return 0


def events_reference() -> str:
    """Every event a simulation emits (`fleetsim.events.CATALOGUE`)."""
    from fleetsim.events import CATALOGUE

    rows = ["| event | emitted by | when | handler | it gets |", "|---|---|---|---|---|"]
    rows += [
        f"| `{e.name}` | {e.source} | {_cell(e.when)} | `{e.handler}` | {_cell(e.carries)} |"
        for e in CATALOGUE
    ]
    return "\n".join(rows)


def environment_reference() -> str:
    """The environment variables fleetsim reads (`fleetsim.environment.VARIABLES`)."""
    from fleetsim.environment import VARIABLES

    rows = ["| variable | default | what |", "|---|---|---|"]
    rows += [f"| `{v.name}` | {_json(v.default or None)} | {_cell(v.what)} |" for v in VARIABLES]
    return "\n".join(rows)


# --- the command line ------------------------------------------------------------------------


def cli_reference() -> str:
    """Every `fleetsim` command: usage, help, arguments and options with their defaults.

    Typer's own Markdown writer (what `typer ... utils docs` prints), each heading one level
    down so that the page's title stays the only top-level one.
    """
    import typer
    import typer.cli

    from fleetsim.cli.app import app

    root = typer.main.get_command(app)
    ctx = root.make_context("fleetsim", [], resilient_parsing=True)
    text = typer.cli.get_docs_for_click(obj=root, ctx=ctx, name="fleetsim")
    lines = ("#" + line if line.startswith("#") else line for line in text.splitlines())
    return "\n".join("```text" if line == "```console" else line for line in lines)


# --- the scenario schema ---------------------------------------------------------------------


def schema_reference() -> str:
    """The scenario file's keys, one table per section, from the JSON Schema."""
    from fleetsim.scenario import json_schema

    schema = json_schema()
    out = ["## Scenario (the file)", "", _clean(schema.get("description", "")), ""]
    out += _properties(schema)
    for name, definition in sorted(schema.get("$defs", {}).items()):
        out += [f"## {name}", "", _clean(definition.get("description", "")), ""]
        out += _properties(definition) if "properties" in definition else [_type(definition), ""]
    return "\n".join(out)


def _properties(definition: dict[str, Any]) -> list[str]:
    required = set(definition.get("required", []))
    rows = ["| key | type | default | what |", "|---|---|---|---|"]
    for key, prop in definition.get("properties", {}).items():
        default = "required" if key in required else _json(prop.get("default"))
        rows.append(f"| `{key}` | {_type(prop)} | {default} | {_cell(prop.get('description'))} |")
    if definition.get("additionalProperties") is False:
        rows += ["", "No other keys are accepted."]
    return [*rows, ""]


def _type(prop: dict[str, Any]) -> str:
    if "$ref" in prop:
        name = prop["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if "enum" in prop:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in prop["enum"])
    if "const" in prop:
        return f"`{json.dumps(prop['const'])}`"
    for combinator in ("anyOf", "oneOf", "allOf"):
        if combinator in prop:
            return " or ".join(_type(p) for p in prop[combinator])
    kind = prop.get("type", "any")
    if isinstance(kind, list):
        return " or ".join(kind)
    if kind == "array":
        if "prefixItems" in prop:
            return "[" + ", ".join(_type(p) for p in prop["prefixItems"]) + "]"
        return f"list of {_type(prop.get('items', {}))}"
    if kind == "object" and isinstance(prop.get("additionalProperties"), dict):
        return f"mapping of {_type(prop['additionalProperties'])}"
    return str(kind)


def _json(value: Any) -> str:
    return "" if value is None else f"`{json.dumps(value)}`"


def _clean(text: str | None) -> str:
    return " ".join((text or "").split()) if text else ""


def _cell(text: str | None) -> str:
    return _clean(text).replace("|", "\\|")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
