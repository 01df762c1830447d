"""The base of every part of a scenario file (`Spec`: unknown keys are errors) and the number
types the parts share."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

Finite = Annotated[float, Field(allow_inf_nan=False)]
Vec3 = tuple[Finite, Finite, Finite]
Quat = tuple[Finite, Finite, Finite, Finite]
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
CollisionModeName = Literal["normal_3d", "normal_2d", "static", "disabled"]


class Spec(BaseModel):
    # Each field's docstring (the string below it) is its description in the JSON Schema, put
    # there by `json_schema` (pydantic's `use_attribute_docstrings` reads this file's source
    # once per class as it is made: a fifth of every command's start-up).
    """A part of a scenario file: unknown keys are errors, and each field's docstring is its
    description in the JSON Schema."""

    model_config = ConfigDict(extra="forbid")
