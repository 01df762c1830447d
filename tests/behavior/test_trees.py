"""Tree files read for the engine: fleetsim's nodes checked (unknown nodes and ports, missing
and malformed values: the file and line), written as SubTrees line for line, which the real
BehaviorTree.CPP then parses."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleetsim.behavior import LEAVES, BehaviorError, read

bt = pytest.importorskip("behaviortreepy", reason="behaviour trees need fleetsim[bt]")

SHIFT = """<?xml version="1.0"?>
<root BTCPP_format="4" main_tree_to_execute="Shift">
  <BehaviorTree ID="Shift">
    <Sequence>
      <GoTo place="face_1"/>
      <Wait seconds="20"></Wait>
      <ChoosePlace tag="dropoff" place="{station}"/>
      <GoTo name="to packing" place="{station}"/>
    </Sequence>
  </BehaviorTree>
  <TreeNodesModel>
    <Action ID="GoTo"><input_port name="place"/></Action>
  </TreeNodesModel>
</root>
"""


def test_fleetsims_nodes_become_subtrees_line_for_line() -> None:
    prepared = read(SHIFT, LEAVES)
    assert prepared.main == "Shift" and prepared.uses == {"GoTo", "Wait", "ChoosePlace"}
    lines = prepared.text.splitlines()
    assert len(lines) == len(SHIFT.splitlines())
    assert lines[4].strip() == '<SubTree ID="fleetsim.GoTo" place="face_1"/>'
    assert lines[5].strip() == '<SubTree ID="fleetsim.Wait" seconds="20"></SubTree>'
    assert '<Action ID="GoTo">' in lines[11]  # (Groot2's model of the nodes: as it was)


@pytest.mark.parametrize(
    ("xml", "line", "words"),
    [
        ('<root>\n<BehaviorTree ID="a">\n<GoTo plac="x"/></BehaviorTree></root>', 3,
         "no port 'plac' (did you mean 'place'?)"),
        ('<root><BehaviorTree ID="a">\n\n<Goto place="x"/></BehaviorTree></root>', 3,
         "no node <Goto>: did you mean <GoTo>?"),
        ('<root><BehaviorTree ID="a">\n<Wait seconds="soon"/></BehaviorTree></root>', 2,
         "a number is wanted"),
        ('<root><BehaviorTree ID="a">\n<Wait seconds="-1"/></BehaviorTree></root>', 2,
         "a finite number >= 0"),
        ('<root><BehaviorTree ID="a"><Wait/></BehaviorTree></root>', 1, "<Wait> needs seconds"),
        ('<root><BehaviorTree ID="a">\n<ChoosePlace tag="x" place="p"/></BehaviorTree></root>',
         2, "an output: name a blackboard entry"),
        ('<root><BehaviorTree ID="a"><fleetsim.GoTo place="x"/></BehaviorTree></root>', 1,
         "write <GoTo>"),
        ('<root><BehaviorTree ID="a">\n<GoTo place="x">\n</root>', 3, "not well-formed"),
        ('<root><BehaviorTree ID="a"/><BehaviorTree ID="b"/></root>', 0,
         "say which to run with <root main_tree_to_execute"),
        ('<root><Sequence/></root>', 0, "no <BehaviorTree ID=...>"),
    ],
)  # fmt: skip
def test_a_tree_the_engine_cannot_run_names_the_line(xml: str, line: int, words: str) -> None:
    with pytest.raises(BehaviorError) as caught:
        read(xml, LEAVES)
    assert caught.value.line == line and words in str(caught.value), str(caught.value)
    if line:
        assert f"<text>, line {line}: " in str(caught.value)


def test_a_file_is_named_in_its_errors(tmp_path: Path) -> None:
    path = tmp_path / "mission.xml"
    path.write_text('<root>\n<BehaviorTree ID="m">\n  <GoTo where="x"/>\n</BehaviorTree></root>')
    with pytest.raises(BehaviorError, match=rf"{path}, line 3: <GoTo> has no port 'where'"):
        read(path, LEAVES)
    with pytest.raises(BehaviorError, match="cannot read the tree file"):
        read(tmp_path / "missing.xml", LEAVES)


def test_the_real_engine_parses_the_result() -> None:
    prepared = read(SHIFT, LEAVES)
    factory = bt.BehaviorTreeFactory()
    seen: list[str] = []
    for name in LEAVES:
        factory.register_simple_action(f"leaf.{name}", lambda node, n=name: (
            seen.append(n), bt.NodeStatus.SUCCESS)[1])  # fmt: skip
        factory.register_behavior_tree_from_text(
            f'<root BTCPP_format="4"><BehaviorTree ID="fleetsim.{name}"><leaf.{name}/>'
            "</BehaviorTree></root>"
        )
    factory.register_behavior_tree_from_text(prepared.text)
    tree = factory.create_tree(prepared.main, bt.Blackboard.create())
    assert tree.tick_once() == bt.NodeStatus.SUCCESS
    assert seen == ["GoTo", "Wait", "ChoosePlace", "GoTo"]
