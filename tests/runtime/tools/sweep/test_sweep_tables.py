"""The sweep's Parquet writer (runtime/tools/sweep/tables.py): any rows of cells a sweep makes
(ints, floats, bools, text, empty cells, columns of mixed kinds) come back exactly, typed by
their column, with the provenance as schema metadata, and writing one does not load
pandas (0.35 s of CPU a sweep would spend for nothing)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from schedc.runtime.tools.sweep.tables import write_parquet

CELL = {
    "int": st.integers(-(2**63), 2**63 - 1),
    "float": st.floats(allow_nan=False, allow_infinity=False),
    "bool": st.booleans(),
    "text": st.text(max_size=12),
    "number": st.one_of(st.integers(-(2**53), 2**53), st.floats(allow_nan=False,
                                                                 allow_infinity=False)),
    "mixed": st.one_of(st.integers(-5, 5), st.text(max_size=4), st.booleans(),
                       st.floats(allow_nan=False, allow_infinity=False)),
}


@st.composite
def tables(draw):
    kinds = draw(st.lists(st.sampled_from(sorted(CELL)), min_size=1, max_size=6))
    columns = [f"{k}.{i}" for i, k in enumerate(kinds)]
    n = draw(st.integers(0, 6))
    rows = [{c: draw(st.none() | CELL[k]) for c, k in zip(columns, kinds, strict=True)}
            for _ in range(n)]
    return columns, rows


def _expected(values: list) -> list:
    kinds = {type(v) for v in values if v is not None}
    if kinds == {int} or kinds == {bool} or kinds == {str} or not kinds:
        return values
    if kinds <= {int, float}:
        return [None if v is None else float(v) for v in values]
    text = {bool: lambda v: "true" if v else "false", float: repr, int: str, str: str}
    return [None if v is None else text[type(v)](v) for v in values]


@settings(max_examples=150, deadline=None)
@given(tables())
def test_parquet_gives_back_each_cell_typed_by_its_column(tmp_path_factory, table) -> None:
    columns, rows = table
    path = tmp_path_factory.mktemp("pq") / "t.parquet"
    write_parquet(str(path), columns, rows, {"runs": len(rows)})
    read = pq.read_table(path)
    assert read.column_names == columns and read.num_rows == len(rows)
    assert json.loads(read.schema.metadata[b"schedc.provenance"]) == {"runs": len(rows)}
    for c in columns:
        got = read.column(c).to_pylist()
        want = _expected([r[c] for r in rows])
        assert got == want and all(
            (g is None) == (w is None) and (not isinstance(g, float) or
                                            math.copysign(1, g) == math.copysign(1, w))
            for g, w in zip(got, want, strict=True))  # -0.0 stays -0.0
        kinds = {type(r[c]) for r in rows if r[c] is not None}
        if kinds == {int}:
            assert read.schema.field(c).type == pa.int64()


def test_writing_parquet_does_not_load_pandas(tmp_path: Path) -> None:
    program = ("import sys; from schedc.runtime.tools.sweep.tables import write_parquet; "
               f"write_parquet({str(tmp_path / 't.parquet')!r}, ['a', 'b'], "
               "[{'a': 1, 'b': 'x'}, {'a': None, 'b': 2.5}], {}); "
               "print('pandas' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "False"
