"""Where a result came from: the schedc version, the policy's files and their hashes, every
param value bound, the workload file and its hash, and every option that changes a run.

`run_policy` builds a `Provenance` for every run; `--json` prints it as a `"provenance"`
object, and the CSVs (`run --jobs-out`, `compare --csv`) start with the same facts as
comment lines, one `# KEY: VALUE` per line with VALUE in JSON, which `read_csv` reads back.
No timestamps: the same inputs give the same bytes.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from attrs import frozen


@frozen
class Provenance:
    """The facts of one run, each a JSON value (see `to_json` for their shape)."""

    schedc: str  # the installed version
    command: tuple[str, ...] | None  # the arguments after `schedc`, when run from the CLI
    policy: Mapping[str, Any]  # name, file as given, sha256, imports [(file, sha256)]
    params: Mapping[str, Mapping[str, Any]]  # name -> {"value", "from": default|given|state}
    workload: Mapping[str, Any]  # file, bundled, sha256, jobs, skipped (or a state file)
    options: Mapping[str, Any]  # every RunOptions field that changes the result
    seeds: Mapping[str, int]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"schedc": self.schedc}
        if self.command is not None:
            out["command"] = list(self.command)
        out.update(policy=dict(self.policy), params={k: dict(v) for k, v in self.params.items()},
                   workload=dict(self.workload), options=dict(self.options),
                   seeds=dict(self.seeds))
        return out


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_file(path: str | os.PathLike[str]) -> str | None:
    """The file's bytes hashed in one pass (None if it cannot be read); cached while the file
    is unchanged, so that the runs of a `compare` hash a trace once."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return _sha256_of(os.path.realpath(path), info.st_size, info.st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _sha256_of(path: str, size: int, mtime_ns: int) -> str | None:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def policy_facts(name: str, file: str, texts: Mapping[str, str]) -> dict[str, Any]:
    """The policy's name, its file as given and the hashes of the texts compiled: the file's
    own and every import's (sorted by file)."""
    own = texts.get(file)
    imports = sorted((f, sha256_text(t)) for f, t in texts.items() if f != file)
    return {"name": name, "file": file, "sha256": sha256_text(own) if own is not None else None,
            "imports": [{"file": f, "sha256": h} for f, h in imports]}


def param_facts(values: Mapping[str, object], given: Iterable[str], state: Iterable[str] = ()
                ) -> dict[str, dict[str, Any]]:
    """Every param's bound value and where it came from."""
    given, state = set(given), set(state)
    return {name: {"value": json_value(value),
                   "from": "given" if name in given else "state" if name in state
                   else "default"}
            for name, value in values.items()}


def json_value(value: object) -> Any:
    """A param value in JSON: ints and booleans as they are, an exact real as its text."""
    from schedc.dsl.number_text import show

    if isinstance(value, Fraction):
        return int(value) if value.denominator == 1 else show(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def shared_and_own(records: Sequence[Provenance]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Several runs' facts (a comparison): those all runs share, and each run's others."""
    runs = [r.to_json() for r in records]
    keys = [k for k in runs[0] if all(k in r and r[k] == runs[0][k] for r in runs)]
    shared = {k: runs[0][k] for k in keys}
    return shared, [{k: v for k, v in r.items() if k not in shared} for r in runs]


def header_lines(facts: Mapping[str, Any]) -> list[str]:
    """The facts as CSV comment lines: `# KEY: VALUE`, VALUE in JSON on one line."""
    return [f"# {key}: {json.dumps(value, ensure_ascii=False)}\n"
            for key, value in facts.items()]


def read_csv(path: str | os.PathLike[str]) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """A CSV schedc wrote (`--jobs-out`, `compare --csv`, a sweep's tables): its provenance
    header as a dict, then its rows by column name. A file damaged since (not UTF-8, a
    header line whose value is not JSON, a row of more or fewer cells than the columns)
    raises DiagnosticError at the line."""
    from schedc.dsl.diagnostics import Diagnostic, DiagnosticError

    name = os.fspath(path)
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            lines = handle.read().splitlines(keepends=True)
    except UnicodeDecodeError:
        raise DiagnosticError([Diagnostic(f"`{name}` is not UTF-8 text", name,
                                          help=_REWRITE)]) from None

    def wrong(line: int, message: str) -> DiagnosticError:
        source = lines[line - 1].rstrip("\r\n") if line <= len(lines) else ""
        return DiagnosticError([Diagnostic(message, name, line, 1, line, len(source) + 1,
                                           help=_REWRITE, source=source)])

    facts: dict[str, Any] = {}
    header_lines = 0
    for line in lines:
        if not line.startswith("# "):
            break
        key, _, value = line[2:].partition(": ")
        try:
            facts[key] = json.loads(value)
        except ValueError:
            raise wrong(header_lines + 1, "a header line is `# KEY: VALUE`, its value JSON"
                        ) from None
        header_lines += 1
    reader = csv.reader(lines[header_lines:])
    rows: list[dict[str, str]] = []
    try:
        columns: list[str] = next(reader, [])
        for cells in reader:
            if not cells:  # a blank line
                continue
            if len(cells) != len(columns):
                raise wrong(header_lines + reader.line_num, f"{len(cells)} cells where the "
                            f"table has {len(columns)} columns")
            rows.append(dict(zip(columns, cells, strict=True)))
    except csv.Error as error:
        raise wrong(header_lines + reader.line_num, f"not a CSV row: {error}") from None
    return facts, rows


_REWRITE = "a table schedc wrote, changed since: make it again with the command that wrote it"

