"""MkDocs hooks: the pages generated from the code.

`docs/reference/cli.md`, `schema.md` and `environment.md` hold a marker comment; at build time
the marker is replaced by the command-line reference (from the `fleetsim` command's own
options and help), the scenario schema (from the JSON Schema `fleetsim schema` prints) and the
environment variables (`fleetsim.environment.VARIABLES`), so none can
drift from the code. `python tools/docs_hooks.py cli|schema|environment` prints one.
"""

from __future__ import annotations

import json
import sys
from typing import Any

CLI_MARKER = "<!-- generated: cli -->"
SCHEMA_MARKER = "<!-- generated: schema -->"
ENVIRONMENT_MARKER = "<!-- generated: environment -->"


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace the markers with the generated references."""
    if CLI_MARKER in markdown:
        markdown = markdown.replace(CLI_MARKER, cli_reference())
    if SCHEMA_MARKER in markdown:
        markdown = markdown.replace(SCHEMA_MARKER, schema_reference())
    if ENVIRONMENT_MARKER in markdown:
        markdown = markdown.replace(ENVIRONMENT_MARKER, environment_reference())
    return markdown


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
    return "\n".join("#" + line if line.startswith("#") else line for line in text.splitlines())


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
    pages = {"cli": cli_reference, "schema": schema_reference, "environment": environment_reference}
    print(pages[sys.argv[1]]())
