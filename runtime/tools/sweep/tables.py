"""A sweep's tables in its output folder, from the plan and the store: `results.csv` and
`.parquet` (a row per run: its input columns, key, status, error, every scalar metric, then
its wall time), `categories.csv` and `.parquet` (per area category metrics, long format),
`classes.csv` and `.parquet` (per width x length category: jobs, mean response, mean bounded
slowdown; long format) and `summary.csv` (`summary.py`). The CSVs start with the facts every
run shares as `# KEY: VALUE` lines (`runtime/results/provenance.py`); the Parquet files carry them
as schema metadata. Rows are sorted by their inputs and numbers printed exactly, so the same
results give the same bytes. pyarrow is imported here only, when a table is written."""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from schedc.runtime.tools.sweep.runs import LABEL, Plan, RunDesc, text
from schedc.runtime.tools.sweep.summary import summarise

RESULTS = "results"
CATEGORIES = "categories"
CLASSES = "classes"  # the width x length categories (`metrics.CLASSES`)
SUMMARY = "summary.csv"
WALL = "wall_s"  # the only column that changes when the same run is made again


def metric_names() -> list[str]:
    """The scalar metrics, in the order of `schedc run --json` (the per-category lists have
    tables of their own)."""
    import attrs

    from schedc.runtime.results.metrics import Metrics

    return [f.name for f in attrs.fields(Metrics)
            if not f.name.startswith(("category_", "class_"))]


def input_columns(plan: Plan) -> list[str]:
    params = [c for n in plan.params
              for c in (f"param.{n}", *((f"param.{n}{LABEL}",) if n in plan.labels else ()))]
    return ["policy", "workload", *params, *plan.transforms, "seed"]


def result_rows(plan: Plan, records: Mapping[str, Mapping[str, Any]]
                ) -> tuple[list[str], list[dict[str, Any]]]:
    """The results table (runs not in ``records`` are left out)."""
    inputs = input_columns(plan)
    metrics = metric_names()
    rows = []
    for desc in plan.runs:
        record = records.get(desc.key)
        if record is None:
            continue
        got = record.get("metrics") or {}
        rows.append({**_inputs(desc, plan), "key": desc.key, "status": record["status"],
                     "error": record.get("error"), **{m: got.get(m) for m in metrics},
                     WALL: record.get("wall_s")})
    rows.sort(key=lambda r: tuple(_order(r[c]) for c in inputs))
    return [*inputs, "key", "status", "error", *metrics, WALL], rows


def category_rows(plan: Plan, records: Mapping[str, Mapping[str, Any]]
                  ) -> tuple[list[str], list[dict[str, Any]]]:
    inputs = input_columns(plan)
    rows = []
    for desc in plan.runs:
        record = records.get(desc.key)
        for c in (record or {}).get("categories") or ():
            rows.append({**_inputs(desc, plan), "key": desc.key, "category": c["category"],
                         "jobs": c["jobs"], "mean_response": c["mean_response"]})
    rows.sort(key=lambda r: (*(_order(r[c]) for c in inputs), r["category"]))
    return [*inputs, "key", "category", "jobs", "mean_response"], rows


def class_rows(plan: Plan, records: Mapping[str, Mapping[str, Any]]
               ) -> tuple[list[str], list[dict[str, Any]]]:
    """The width x length categories that have jobs, a row per run and category (from the
    record's metrics; a record stored before they existed has none)."""
    from schedc.runtime.results.metrics import CLASSES as NAMES

    inputs = input_columns(plan)
    rows = []
    for desc in plan.runs:
        got = ((records.get(desc.key) or {}).get("metrics")) or {}
        if "class_jobs" not in got:
            continue
        for k, name in enumerate(NAMES):
            if got["class_jobs"][k]:
                rows.append({**_inputs(desc, plan), "key": desc.key, "class": name,
                             "jobs": got["class_jobs"][k],
                             "mean_response": got["class_mean_response"][k],
                             "mean_bounded_slowdown": got["class_mean_bounded_slowdown"][k]})
    rows.sort(key=lambda r: (*(_order(r[c]) for c in inputs), NAMES.index(r["class"])))
    return [*inputs, "key", "class", "jobs", "mean_response", "mean_bounded_slowdown"], rows


def shared_facts(plan: Plan, records: Mapping[str, Mapping[str, Any]],
                 spec_file: str) -> dict[str, Any]:
    """The provenance facts all the runs share (their version, options...), the spec's file
    name and the number of runs."""
    from schedc.runtime.version import version

    provenances = [r["provenance"] for r in records.values() if r.get("provenance")]
    shared: dict[str, Any] = {"schedc": version(), "sweep": Path(spec_file).name,
                              "runs": len(plan.runs)}
    if provenances:
        first = provenances[0]
        for key in sorted(first):
            if key != "schedc" and all(p.get(key) == first[key] for p in provenances):
                shared[key] = first[key]
    return shared


def warm_up() -> None:
    """Import what writing a Parquet file imports (pyarrow: 0.15 s), e.g. in a thread while
    the runs go, instead of after the last one. A failure here is left for `write_tables`
    to meet."""
    try:
        import pyarrow.json  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except Exception:  # noqa: BLE001, S110 - only a head start
        pass


def write_tables(out: str, plan: Plan, records: Mapping[str, Mapping[str, Any]],
                 spec_file: str) -> dict[str, str]:
    """Every table written into ``out``; returns their paths by name."""
    facts = shared_facts(plan, records, spec_file)
    columns, rows = result_rows(plan, records)
    cat_columns, cat_rows = category_rows(plan, records)
    class_columns, class_body = class_rows(plan, records)
    s_columns, s_rows = summarise(rows, input_columns(plan), metric_names())
    paths = {}
    for name, (cols, body) in {RESULTS: (columns, rows),
                               CATEGORIES: (cat_columns, cat_rows),
                               CLASSES: (class_columns, class_body)}.items():
        paths[f"{name}.csv"] = write_csv(os.path.join(out, f"{name}.csv"), cols, body, facts)
        paths[f"{name}.parquet"] = write_parquet(os.path.join(out, f"{name}.parquet"), cols,
                                                 body, facts)
    paths[SUMMARY] = write_csv(os.path.join(out, SUMMARY), s_columns, s_rows, facts)
    return paths


def write_csv(path: str, columns: Sequence[str], rows: Sequence[Mapping[str, Any]],
              facts: Mapping[str, Any]) -> str:
    from schedc.runtime.atomicio import open_atomic
    from schedc.runtime.results.provenance import header_lines

    with open_atomic(path, newline="") as handle:
        handle.writelines(header_lines(facts))
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([_cell(r[c]) for c in columns] for r in rows)
    return path


def write_parquet(path: str, columns: Sequence[str], rows: Sequence[Mapping[str, Any]],
                  facts: Mapping[str, Any]) -> str:
    """The rows as Parquet, each column typed by its values (int64, double, bool, else
    text). The rows go through pyarrow's JSON reader with that schema: `pa.array` on Python
    values imports pandas when it is installed (0.35 s of a sweep's CPU, for nothing)."""
    import pyarrow as pa
    import pyarrow.json as pa_json
    import pyarrow.parquet as pq

    from schedc.runtime.atomicio import open_atomic

    types = {c: _column_type({type(r[c]) for r in rows if r[c] is not None}) for c in columns}
    schema = pa.schema([(c, types[c][0]) for c in columns],
                       metadata={"schedc.provenance": json.dumps(dict(facts), sort_keys=True)})
    if rows:
        typed = {c: types[c][1] for c in columns}
        lines = "".join(json.dumps({c: typed[c](r[c]) for c in columns}, allow_nan=False)
                        + "\n" for r in rows).encode("utf-8")
        table = pa_json.read_json(pa.BufferReader(lines), parse_options=pa_json.ParseOptions(
            explicit_schema=schema, unexpected_field_behavior="error"))
        table = table.replace_schema_metadata(schema.metadata)
    else:
        table = schema.empty_table()
    with open_atomic(path, binary=True) as handle:
        pq.write_table(table, handle)
    return path


def _column_type(kinds: set[type]) -> tuple[Any, Callable[[Any], Any]]:
    """The Arrow type of a column of values of ``kinds``, and how its cells are given as
    that type holds them (a column of several kinds is text)."""
    import pyarrow as pa

    if kinds == {int}:
        return pa.int64(), _same
    if kinds == {bool}:
        return pa.bool_(), _same
    if kinds <= {str}:
        return pa.string(), _same
    if kinds <= {int, float}:
        return pa.float64(), _as_float
    return pa.string(), _as_text


def _same(value: Any) -> Any:
    return value


def _as_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _as_text(value: Any) -> str | None:
    return None if value is None else str(_cell(value))


def read_rows(path: str) -> list[dict[str, Any]]:
    """A table of ours read back, numbers as numbers and empty cells as None."""
    from schedc.runtime.results.provenance import read_csv

    _, rows = read_csv(path)
    return [{k: number(v) for k, v in row.items()} for row in rows]


def number(cell: str) -> Any:
    if cell == "":
        return None
    for kind in (int, float):
        try:
            return kind(cell)
        except ValueError:
            pass
    return cell


def _inputs(desc: RunDesc, plan: Plan) -> dict[str, Any]:
    return desc.inputs(plan.params, plan.transforms, plan.labels)


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return text(value)
    return repr(value) if isinstance(value, float) else value


def _order(value: Any) -> tuple:
    """Sort key of a cell: empty first, then numbers by value, then text."""
    if value is None:
        return (0, 0, "")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (1, value, "")
    return (2, 0, str(value))
