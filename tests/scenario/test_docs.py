"""The scenario YAML shown in the README is valid (docs match the code)."""

import re
from pathlib import Path

import yaml

from fleetsim.scenario import Scenario

README = Path(__file__).parents[2] / "README.md"


def test_readme_yaml_blocks_are_valid_scenarios() -> None:
    blocks = re.findall(r"```yaml\n(.*?)```", README.read_text(), re.S)
    assert blocks
    for block in blocks:
        Scenario.model_validate(yaml.safe_load(block))
