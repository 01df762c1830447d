"""The fleet-manager API's OpenAPI document as the server really answers: every answer in the
`{data, success, msg}` envelope, refusals as 200 with `success: false`, and the statuses the
server sends besides (401 with a token, 404, 405, 413), none it never sends (FastAPI's 422)."""

from __future__ import annotations

from typing import Any

MAX_BODY_BYTES = 64 * 1024  # a larger request body is answered 413
DESCRIPTION = (
    "Open-RMF's demo fleet-manager API (`rmf_demos_fm`), served by fleetsim for simulated "
    "robots. Every answer is the envelope `{data, success, msg}`. A request that cannot be "
    "carried out (an unknown robot, activity or label, a robot in teleop, a malformed command "
    "or body) is answered 200 with `success: false` and a message, as rmf_demos' fleet manager "
    "answers, so RMF's client treats it as impossible rather than retrying. Request bodies "
    f"over {MAX_BODY_BYTES} bytes are answered 413."
)

ENVELOPE = {
    "title": "Envelope",
    "type": "object",
    "required": ["data", "success", "msg"],
    "properties": {
        "data": {"title": "Data", "description": "The answer's content ({} when none)."},
        "success": {"title": "Success", "type": "boolean"},
        "msg": {"title": "Msg", "type": "string", "description": "Why, when success is false."},
    },
}
REF = {"$ref": "#/components/schemas/Envelope"}
OTHER_STATUSES = {
    "404": "No such endpoint.",
    "405": "The endpoint does not take this method.",
    "413": f"The request body is over {MAX_BODY_BYTES} bytes.",
}


def truthful_openapi(app: Any, with_token: bool) -> dict[str, Any]:
    """`app`'s OpenAPI document, generated once, with the answers the server really gives."""
    if app.openapi_schema is not None:
        return dict(app.openapi_schema)
    from fastapi.openapi.utils import get_openapi

    doc = get_openapi(
        title=app.title, version=app.version, description=app.description, routes=app.routes
    )
    statuses = dict(OTHER_STATUSES)
    if with_token:
        statuses["401"] = "A missing or wrong `Authorization: Bearer` token."
    for operations in doc.get("paths", {}).values():
        for operation in operations.values():
            ok = "The envelope; `success: false` with a message when the request is refused."
            responses = {
                "200": {"description": ok, "content": {"application/json": {"schema": REF}}}
            }
            for status, said in sorted(statuses.items()):
                responses[status] = {
                    "description": said,
                    "content": {"application/json": {"schema": REF}},
                }
            operation["responses"] = responses
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    schemas["Envelope"] = ENVELOPE
    if with_token:
        doc["components"]["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
        doc["security"] = [{"bearer": []}]
    app.openapi_schema = doc
    return dict(doc)
