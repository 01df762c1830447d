import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fleetsim import ObjectRemovedError
from fleetsim.state import BodyTable, Column, Table

ops = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(1, 5)),
        st.tuples(st.just("remove"), st.integers(0, 10**6)),
    ),
    max_size=80,
)


@settings(max_examples=60)
@given(ops)
def test_table_matches_a_dict_model(operations: list[tuple[str, int]]) -> None:
    table = Table({"value": Column(np.float64), "vec": Column(np.float64, (3,), 7.0)}, capacity=2)
    model: dict[int, float] = {}
    counter = 0.0
    for op, arg in operations:
        if op == "add":
            values = np.arange(arg) + counter
            counter += arg
            handles = table.add(arg, value=values)
            model.update(zip(handles.tolist(), values.tolist(), strict=True))
        elif model:
            handle = sorted(model)[arg % len(model)]
            table.remove(handle)
            del model[handle]
        assert table.size == len(model)
        for handle, value in model.items():
            assert table["value"][table.row(handle)] == value
        assert sorted(table.handles.tolist()) == sorted(model)
        assert np.all(table["vec"] == 7.0)
        views = table.views()  # kept views follow every add, remove and growth
        for name in ("value", "vec"):
            assert views[name] is table[name] and len(views[name]) == len(model)
            assert np.shares_memory(views[name], table._data[name]) or not model
        if model:
            views["value"][0] += 0.0  # writes through to the table


def test_handles_are_stable_and_never_reused() -> None:
    table = BodyTable(capacity=1)
    a, b, c = table.add(3, pos=[[1, 0, 0], [2, 0, 0], [3, 0, 0]])
    table.remove(int(a))
    assert not table.is_alive(int(a))
    with pytest.raises(ObjectRemovedError):
        table.row(int(a))
    with pytest.raises(ObjectRemovedError):
        table.rows([b, a])
    assert table["pos"][table.row(int(c))][0] == 3.0
    (d,) = table.add(1)
    assert d not in (a, b, c)
    np.testing.assert_array_equal(table["quat"][table.row(int(d))], [0, 0, 0, 1])


def test_add_validates_before_changing_anything() -> None:
    table = BodyTable()
    table.add(2)
    with pytest.raises(ValueError):
        table.add(2, pos=np.zeros((3, 3)))  # wrong count
    with pytest.raises(KeyError):
        table.add(1, velocity=1.0)
    assert table.size == 2


def test_clear_kills_all_handles() -> None:
    table = BodyTable()
    handles = table.add(4)
    table.clear()
    assert table.size == 0
    assert not any(table.is_alive(int(h)) for h in handles)


def test_clear_starts_the_handle_map_afresh() -> None:
    from fleetsim.errors import ObjectRemovedError
    from fleetsim.state import BodyTable

    table = BodyTable(capacity=8)
    for _ in range(5):  # five fleets of 20,000 built and reset
        old = table.add(20_000)
        table.clear()
    new = table.add(3)
    assert new.min() > old.max()  # handles are never reused
    assert table.rows(new).tolist() == [0, 1, 2]
    assert not table.is_alive(int(old[0])) and table.is_alive(int(new[0]))
    with pytest.raises(ObjectRemovedError, match="reset"):
        table.rows(old[:2])
    assert len(table._handle_to_row) <= 2 * 20_000  # not a slot per handle ever issued
    table.remove(int(new[0]))
    assert table.rows(new[1:]).tolist() == [1, 0]
