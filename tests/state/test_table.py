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


def test_columns_start_on_a_cache_line_and_keep_their_values_as_they_grow() -> None:
    """Every column begins on a 64-byte boundary (a 64-byte row, such as the narrow phase's
    `level_box`, is one cache line), with its defaults, before and after the table grows."""
    table = BodyTable(capacity=3)
    (first,) = table.add(1, pos=[[1.0, 2.0, 3.0]])
    for grown in (False, True):
        for name in table.column_names:
            column = table[name]
            assert column.ctypes.data % 64 == 0 and column.flags.c_contiguous, (name, grown)
        assert table["level_kind"][0] == -1 and np.isnan(table["box_quat"][0]).all()
        np.testing.assert_array_equal(table["quat"][0], [0, 0, 0, 1])
        table.add(40)
    np.testing.assert_array_equal(table["pos"][table.row(int(first))], [1.0, 2.0, 3.0])


def test_new_rows_read_their_defaults_where_removed_rows_wrote() -> None:
    """Rows added after others were written and removed, one at a time or in a batch, across
    growth, read every column's default where no value is given (zero-default columns are
    written only where a row has been used before; fresh rows are the zeroed memory)."""
    table = Table({"x": Column(np.float64, (3,)), "k": Column(np.int8, (), -1)}, capacity=4)
    handles = table.add(6, x=[[1.0, 2.0, 3.0]] * 6, k=5)
    for h in handles[2:].tolist():
        table.remove(h)  # rows 2-5 keep what they held, past the live ones
    (one,) = table.add(1)  # a row used before, alone
    batch = table.add(5)  # three used before, two fresh; then growth and fresh rows
    more = table.add(12)
    for h in (one, *batch.tolist(), *more.tolist()):
        row = table.row(int(h))
        assert table["x"][row].tolist() == [0.0, 0.0, 0.0] and table["k"][row] == -1, h
    assert table["x"][table.row(int(handles[0]))].tolist() == [1.0, 2.0, 3.0]
    with pytest.raises((ValueError, TypeError)):  # x written, then k refused: no row
        table.add(1, x=[7.0, 7.0, 7.0], k="not a number")
    (after,) = table.add(1)
    assert table["x"][table.row(int(after))].tolist() == [0.0, 0.0, 0.0]


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
    assert table._map.nbytes < 100_000  # not a slot per handle ever issued
    table.remove(int(new[0]))
    assert table.rows(new[1:]).tolist() == [1, 0]


def test_the_handle_map_across_pages_matches_a_dict_model() -> None:
    """Thousands of bodies added in batches and one at a time and removed at random, across
    many pages of the handle map (pages given back, reused): every handle ever issued names
    its body's row while it lives and no body once removed, even after its page is reused."""
    rng = np.random.default_rng(7)
    table = Table({"value": Column(np.int64)}, capacity=4)
    model: dict[int, int] = {}
    issued: list[int] = []
    for round_ in range(60):
        count = int(rng.integers(1, 3000))
        if round_ % 3 == 0:
            new = [int(table.add(1, value=len(issued) + k)[0]) for k in range(min(count, 200))]
        else:
            new = table.add(count, value=np.arange(len(issued), len(issued) + count)).tolist()
        for k, handle in enumerate(new):
            model[handle] = len(issued) + k
        issued += new
        alive = np.array(sorted(model))
        for handle in rng.choice(alive, size=int(0.9 * len(alive)), replace=False).tolist():
            table.remove(handle)
            del model[handle]
        handles = np.array(sorted(model), dtype=np.int64)
        assert table["value"][table.rows(handles)].tolist() == [model[h] for h in handles]
        dead = np.setdiff1d(issued, handles)
        assert not any(table.is_alive(int(h)) for h in dead[-500:])
        assert all(table._map.row(int(h)) == -1 for h in dead)
    assert table._map.nbytes < 64 * 4096 * 8  # pages given back: not a slot per handle


def test_spawn_and_remove_for_ever_holds_no_memory_per_body() -> None:
    """A robot that lives for the whole run (handle 0) and 250,000 bodies that come and go
    one at a time (parcels spawned and removed): the handle map stays a few pages, and no
    removed body's handle names the new ones."""
    table = BodyTable(capacity=8)
    (robot,) = table.add(1)
    for _ in range(100):  # 100 x 2,500 spawn/remove cycles
        parcels = table.add(2500)
        for handle in parcels.tolist():
            table.remove(handle)
    assert table._map.issued == 250_001
    assert table._map.nbytes < 200_000  # a few pages (a slot per handle: 2 MB)
    assert table.row(int(robot)) == 0 and table.size == 1
    assert not table.is_alive(int(parcels[-1])) and not table.is_alive(1)
    (parcel,) = table.add(1)
    assert table.rows([robot, parcel]).tolist() == [0, 1] and not table.is_alive(int(parcels[0]))
