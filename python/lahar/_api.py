"""The Python API over ``lahar._native``: inputs described, results read as DataFrames.

The runs themselves are lahar's (Rust, without the GIL); this module turns Python
arguments into what the CLI takes and the bytes of a run's files into tables.
docs/python.md documents every name here.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
import threading
import warnings as _warnings
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _native

PathLike = Union[str, "os.PathLike[str]"]
Scenario = Union[PathLike, Mapping[str, Any], None]
Sets = Union[Mapping[str, Any], Sequence[str], str, None]

#: The row files a run writes, by the name ``outputs=`` and :meth:`Run.table` take.
TABLES = ("jobs", "pods", "timeseries", "queues", "decisions", "events", "services", "scaling", "timeline")


class LaharWarning(UserWarning):
    """Input lahar let through that you must know about (rows skipped, jobs that can
    never be placed...): the warnings ``lahar run`` prints at the end."""


def _columns() -> Dict[str, List[Tuple[str, str, bool]]]:
    return _native.columns()


def _source(scenario: Scenario, snapshot: Optional[PathLike]) -> Tuple[str, str, str]:
    """(kind, value, base) for the native side: ``base`` is the folder a text's
    relative paths resolve against (the working directory)."""
    if snapshot is not None:
        if scenario is not None:
            raise TypeError("give a scenario or a snapshot, not both")
        return ("snapshot", os.fspath(snapshot), "")
    if scenario is None:
        return ("default", "", "")
    if isinstance(scenario, Mapping):
        # JSON is YAML; indented, so an error's line points at the key.
        return ("text", json.dumps(scenario, indent=2), os.getcwd())
    if isinstance(scenario, os.PathLike):
        return ("file", os.fspath(scenario), "")
    if isinstance(scenario, str):
        if "\n" in scenario:
            return ("text", scenario, os.getcwd())
        return ("file", scenario, "")
    raise TypeError(
        f"scenario: expected a path, YAML text (a str with a newline) or a dict, not {type(scenario).__name__}"
    )


def _sets(set: Sets) -> List[str]:
    """``--set`` arguments: a mapping's values are written as JSON (which is YAML)."""
    if set is None:
        return []
    if isinstance(set, str):
        return [set]
    if isinstance(set, Mapping):
        return [f"{k}={json.dumps(v)}" for k, v in set.items()]
    out = list(set)
    for s in out:
        if not isinstance(s, str):
            raise TypeError(f"set: expected PATH=VALUE strings or a mapping, found {type(s).__name__}")
    return out


def _outputs(outputs: Union[str, Sequence[str], None]) -> Optional[str]:
    if outputs is None or isinstance(outputs, str):
        return outputs
    return ",".join(outputs)


def _path(p: Optional[PathLike]) -> Optional[str]:
    return None if p is None else os.fspath(p)


def _warn(ws: List[Dict[str, Any]]) -> None:
    for w in ws:
        where = ": ".join(x for x in (w["location"], w["path"]) if x)
        _warnings.warn(f"{where}: {w['message']}" if where else w["message"], LaharWarning, stacklevel=3)


def _read_pandas(data: bytes, cols: List[Tuple[str, str, bool]]):
    import pandas as pd

    text = [name for name, _, is_text in cols if is_text]
    numbers = [name for name, _, is_text in cols if not is_text]
    # Text stays as written (a job named `NA` or `007` keeps its name); only an
    # empty number is missing.
    return pd.read_csv(
        io.BytesIO(data),
        dtype={c: str for c in text},
        keep_default_na=False,
        na_values={c: [""] for c in numbers},
    )


def _read_polars(data: bytes, cols: List[Tuple[str, str, bool]]):
    import polars as pl

    text = {name: pl.Utf8 for name, _, is_text in cols if is_text}
    df = pl.read_csv(io.BytesIO(data), schema_overrides=text, null_values=[""])
    # An empty text field is an empty string, as in the CSV (polars reads it as null).
    present = [c for c in text if c in df.columns]
    return df.with_columns(pl.col(present).fill_null("")) if present else df


def _read_arrow(data: bytes, cols: List[Tuple[str, str, bool]]):
    import pyarrow as pa
    import pyarrow.csv as pacsv

    text = {name: pa.string() for name, _, is_text in cols if is_text}
    opts = pacsv.ConvertOptions(column_types=text, strings_can_be_null=False, null_values=[""])
    return pacsv.read_csv(io.BytesIO(data), convert_options=opts)


class Run:
    """What :func:`run` produced: the summary, the warnings, and the row files as
    tables (each read on first use, then kept).

    ``jobs``, ``pods``, ``timeseries``, ``queues``, ``decisions`` and ``events`` are
    pandas DataFrames with the CSVs' columns (docs/outputs.md): text columns as
    text, numbers as numbers, an empty number as NaN.
    """

    def __init__(
        self,
        summary: Dict[str, Any],
        warnings: List[Dict[str, Any]],
        tables: Dict[str, bytes],
        out: Optional[Path],
    ) -> None:
        #: summary.json, as a dict: ``summary["metrics"]``, ``summary["scenario"]``, ``summary["seed"]``...
        self.summary = summary
        #: The input's and the run's warnings (dicts of kind, count, location, file,
        #: line, column, path, message).
        self.warnings = warnings
        #: Where the files were written (``out=``), else None.
        self.out = out
        self._bytes = tables
        self._frames: Dict[str, Any] = {}

    def __repr__(self) -> str:
        m, s = self.summary.get("metrics", {}), self.summary
        return (
            f"<lahar.Run {s.get('scenario')!r} seed {s.get('seed')} under {s.get('scheduler')}: "
            f"{m.get('completed')} completed, {m.get('unfinished')} unfinished; tables {', '.join(self.tables)}>"
        )

    @property
    def tables(self) -> List[str]:
        """The names of the tables this run has (those ``outputs=`` kept)."""
        return [n for n in TABLES if self._data(n, missing_ok=True) is not None]

    def _data(self, name: str, missing_ok: bool = False) -> Optional[bytes]:
        if name not in TABLES:
            raise KeyError(f"no table {name!r}: the tables are {', '.join(TABLES)}")
        file = f"{name}.csv"
        if self.out is not None:
            p = self.out / file
            data = p.read_bytes() if p.is_file() else None
        else:
            data = self._bytes.get(file)
        if data is None and not missing_ok:
            why = {
                "events": "events.csv is written by runs with spec.faults",
                "services": "services.csv is written by runs with services (spec.services or an autoscaler)",
                "scaling": "scaling.csv is written by runs whose autoscalers changed a workload's replicas",
                "timeline": "timeline.csv is written by runs whose spec.timeline had a step before the run ended",
            }.get(name, "left out by outputs=")
            raise LookupError(f"this run has no {file} ({why})")
        return data

    def table(self, name: str):
        """Table ``name`` (``jobs``, ``pods``...) as a pandas DataFrame."""
        if name not in self._frames:
            self._frames[name] = _read_pandas(self._data(name), _columns()[f"{name}.csv"])
        return self._frames[name]

    def csv(self, name: str) -> bytes:
        """The bytes of ``<name>.csv``: exactly what ``lahar run`` writes."""
        data = self._data(name)
        assert data is not None
        return data

    @property
    def jobs(self):
        """jobs.csv: one row per job."""
        return self.table("jobs")

    @property
    def pods(self):
        """pods.csv: one row per pod placement interval."""
        return self.table("pods")

    @property
    def timeseries(self):
        """timeseries.csv: one row per sample."""
        return self.table("timeseries")

    @property
    def queues(self):
        """queues.csv: one row per queue per sample."""
        return self.table("queues")

    @property
    def decisions(self):
        """decisions.csv: one row per scheduling decision, in the order made."""
        return self.table("decisions")

    @property
    def events(self):
        """events.csv (runs with spec.faults): one row per failure, repair and drain step."""
        return self.table("events")

    @property
    def services(self):
        """services.csv (runs with services): each service at every sample."""
        return self.table("services")

    @property
    def scaling(self):
        """scaling.csv (runs with an autoscaler): each change of a workload's replicas."""
        return self.table("scaling")

    @property
    def timeline(self):
        """timeline.csv (runs with spec.timeline): each operator's step and what came of it."""
        return self.table("timeline")

    def to_polars(self, name: Optional[str] = None):
        """Table ``name`` as a polars DataFrame, or every table as a dict (needs polars)."""
        if name is not None:
            return _read_polars(self._data(name), _columns()[f"{name}.csv"])
        return {n: self.to_polars(n) for n in self.tables}

    def to_arrow(self, name: Optional[str] = None):
        """Table ``name`` as a pyarrow Table, or every table as a dict (needs pyarrow)."""
        if name is not None:
            return _read_arrow(self._data(name), _columns()[f"{name}.csv"])
        return {n: self.to_arrow(n) for n in self.tables}

    def to_parquet(self, directory: PathLike, name: Optional[str] = None) -> List[Path]:
        """Writes table ``name`` (or every table) as ``<name>.parquet`` in
        ``directory`` (made if missing): the CSV's column names, typed columns
        (text as strings, numbers as integers or floats, an empty number as
        null), each column's unit (docs/outputs.md) in its field metadata as
        ``unit``. Needs pyarrow. Returns the paths written."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for n in [name] if name is not None else self.tables:
            cols = _columns()[f"{n}.csv"]
            table = _read_arrow(self._data(n), cols)
            units = {c: u for c, u, _ in cols}
            fields = [
                f.with_metadata({"unit": units[f.name]}) if units.get(f.name) else f for f in table.schema
            ]
            table = table.cast(pa.schema(fields))
            path = out / f"{n}.parquet"
            pq.write_table(table, path)
            written.append(path)
        return written


def _interruptible(call):
    """Runs ``call(stop)`` so that Ctrl-C ends the run: on the main thread the run
    goes on a worker thread while this one waits (Python sees signals only on
    its main thread, and only between bytecodes); KeyboardInterrupt raises the
    run's stop flag, waits for the run to end at its next event, and is raised
    again. Elsewhere the call runs in place."""
    stop = _native.Stop()
    if threading.current_thread() is not threading.main_thread():
        return call(stop)
    done: Dict[str, Any] = {}
    # The run's end, as an Event: a Thread.join that KeyboardInterrupt breaks can
    # take the thread for ended while it still runs (CPython 3.11's join).
    finished = threading.Event()

    def work() -> None:
        try:
            done["value"] = call(stop)
        except BaseException as e:  # handed to the caller's thread
            done["error"] = e
        finally:
            finished.set()

    worker = threading.Thread(target=work, name="lahar-run", daemon=True)
    try:
        # Started inside the try: a Ctrl-C that comes at once still stops it.
        worker.start()
        while not finished.wait(0.1):
            pass
    except KeyboardInterrupt:
        stop.set()
        while worker.ident is not None and not finished.is_set():
            try:
                finished.wait()
            except KeyboardInterrupt:  # pressed again while it stops: it ends at its next event
                continue
        raise
    if "error" in done:
        raise done["error"]
    return done["value"]


def run(
    scenario: Scenario = None,
    *,
    seed: Optional[int] = None,
    set: Sets = None,
    conf: Optional[PathLike] = None,
    snapshot: Optional[PathLike] = None,
    sessions: Optional[int] = None,
    out: Optional[PathLike] = None,
    outputs: Union[str, Sequence[str], None] = None,
    strict: bool = False,
    force: bool = False,
    scheduler: Any = None,
) -> Run:
    """Runs a scenario, as ``lahar run`` does.

    ``scenario`` is a path, YAML text (a str with a newline), a dict, or None for
    the embedded default scenario; ``snapshot`` a cluster snapshot instead.
    ``seed``, ``set`` (``{"spec.cluster.nodeGroups[0].count": 8}`` or
    ``["PATH=VALUE", ...]``), ``conf`` and ``sessions`` are the CLI's overrides.
    Without ``out`` nothing is written: the tables are built in memory. With
    ``out``, the files are written there as ``lahar run --out`` writes them
    (``force`` replaces another scenario's outputs). ``outputs`` chooses the row
    files (``"jobs,timeseries"`` or a list; all by default). Warnings are issued
    as :class:`LaharWarning` and kept in ``Run.warnings``; ``strict=True`` makes
    them an :class:`InputError` before the run.

    ``scheduler`` is a policy written in Python: an object with a
    ``schedule(self, session)`` method, called once per scheduling session with
    the live :class:`Session` (docs/python.md); it replaces the scenario's
    scheduler (whose device models stay), and its ``name`` attribute (or class
    name) is the run's scheduler in summary.json. An exception it raises ends
    the run and is raised here.

    Ctrl-C (KeyboardInterrupt) ends the run at its next event and is raised;
    nothing of the run is returned (with ``out``, its files are whole up to
    there and summary.json says ``interrupted``).

    Raises :class:`InputError` for bad input (with file, line, column, field path),
    :class:`RunError` when the outputs cannot be written.
    """
    kind, value, base = _source(scenario, snapshot)
    args = dict(seed=seed, set=_sets(set), conf=_path(conf), sessions=sessions, strict=strict)
    r = _interruptible(
        lambda stop: _native.run(
            kind,
            value,
            base,
            out=_path(out),
            outputs=_outputs(outputs),
            force=force,
            scheduler=scheduler,
            stop=stop,
            **args,
        )
    )
    _warn(r["warnings"])
    if r["out_dir"] is not None:
        out_dir = Path(r["out_dir"])
        summary = json.loads((out_dir / "summary.json").read_text())
        return Run(summary, r["warnings"], {}, out_dir)
    return Run(json.loads(r["summary_json"]), r["warnings"], r["tables"], None)


class Validated(dict):
    """What :func:`validate` found: ``scenario``, ``nodes``, ``queues``, ``jobs``,
    ``placement`` (whether it is a placement scenario) and ``warnings``."""


def validate(
    scenario: Scenario = None,
    *,
    seed: Optional[int] = None,
    set: Sets = None,
    conf: Optional[PathLike] = None,
    snapshot: Optional[PathLike] = None,
    sessions: Optional[int] = None,
    strict: bool = False,
) -> Validated:
    """Loads and checks a scenario as ``lahar validate`` does, without running it.

    Raises :class:`InputError` — the CLI's errors, every one in ``errors``, the
    first one's ``file``, ``line``, ``column``, ``path`` and ``message`` as
    attributes. ``strict=True`` makes the warnings errors too.
    """
    kind, value, base = _source(scenario, snapshot)
    v = _native.validate(
        kind, value, base, seed=seed, set=_sets(set), conf=_path(conf), sessions=sessions, strict=strict
    )
    _warn(v["warnings"])
    return Validated(v)


def _read_sweep_csv(path: Path):
    import pandas as pd

    header = path.read_text().split("\n", 1)[0].split(",")
    # The cell, the axes' value names (every column before `seed`), status, error.
    axes = header[1 : header.index("seed")] if "seed" in header else []
    text = ["cell", "status", "error", *axes]
    numbers = [c for c in header if c not in text]
    return pd.read_csv(path, dtype={c: str for c in text}, keep_default_na=False, na_values={c: [""] for c in numbers})


def sweep(
    spec: Scenario,
    *,
    jobs: Optional[int] = None,
    out: Optional[PathLike] = None,
    resume: bool = False,
    outputs: Union[str, Sequence[str], None] = None,
):
    """Runs a sweep (a sweep file's path, its YAML text, or a dict) as ``lahar sweep``
    does, ``jobs`` cells at once (default: all cores), and returns its per-cell
    table (sweep.csv) as a pandas DataFrame: ``cell``, each axis, ``seed``,
    ``status``, ``error``, then every headline metric.

    With ``out`` the sweep's directory is kept there (``resume=True`` runs only the
    cells not finished); without it, the cells run in a temporary directory that is
    removed afterwards. A failed cell is a row with ``status == "failed"``.
    Ctrl-C on the main thread stops the running cells at their next event,
    starts no other, and is raised (with ``out``, ``resume=True`` goes on).
    """
    if spec is None:
        raise TypeError("sweep: give a sweep file, its YAML text or a dict")
    kind, value, base = _source(spec, None)
    if out is None:
        with tempfile.TemporaryDirectory(prefix="lahar-sweep-") as tmp:
            rows = _outputs(outputs) or "summary"
            _interruptible(
                lambda stop: _native.sweep(kind, value, base, tmp, jobs=jobs, resume=False, outputs=rows, stop=stop)
            )
            return _read_sweep_csv(Path(tmp) / "sweep.csv")
    where, rows = os.fspath(out), _outputs(outputs)
    _interruptible(
        lambda stop: _native.sweep(kind, value, base, where, jobs=jobs, resume=resume, outputs=rows, stop=stop)
    )
    return _read_sweep_csv(Path(out) / "sweep.csv")
