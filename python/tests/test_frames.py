"""Run.to_polars and Run.to_arrow: the same values and the same text columns as the DataFrames."""

import pytest

import lahar
from conftest import tiny


def test_polars_and_arrow_tables_hold_the_same_rows(names_trace):
    pl = pytest.importorskip("polars")
    pytest.importorskip("pyarrow")
    r = lahar.run(tiny(str(names_trace)))
    jobs = r.jobs.sort_values("job").reset_index(drop=True)
    p = r.to_polars("jobs").sort("job")
    a = r.to_arrow("jobs").sort_by("job")
    assert p["job"].to_list() == a["job"].to_pylist() == jobs.job.tolist() == ["007", "1e3", "NA", "null"]
    assert p.schema["job"] == pl.Utf8
    assert p["start_s"].to_list() == a["start_s"].to_pylist() == jobs.start_s.tolist()
    # An empty text field is an empty string, an empty number is missing.
    assert set(p["kind"].to_list()) == set(a["kind"].to_pylist()) == set(jobs.kind)
    every = r.to_polars()
    assert sorted(every) == sorted(r.tables)
    assert every["pods"].height == len(r.pods)


def test_parquet_files_keep_names_types_and_units(names_trace, tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    r = lahar.run(tiny(str(names_trace)))
    paths = r.to_parquet(tmp_path / "pq")
    assert sorted(p.name for p in paths) == sorted(f"{n}.parquet" for n in r.tables)
    jobs = pq.read_table(tmp_path / "pq" / "jobs.parquet")
    assert jobs.column_names == list(r.jobs.columns)
    assert jobs.schema.field("job").type == pa.string()
    assert jobs.schema.field("start_s").type in (pa.int64(), pa.float64())
    assert jobs.schema.field("wait_s").metadata == {b"unit": b"s"}
    assert sorted(jobs.column("job").to_pylist()) == ["007", "1e3", "NA", "null"]
    assert jobs.to_pandas().sort_values("job").job.tolist() == sorted(r.jobs.job)
    assert pq.read_table(tmp_path / "pq" / "pods.parquet").num_rows == len(r.pods)
    # One table.
    (one,) = r.to_parquet(tmp_path / "one", "decisions")
    assert one.name == "decisions.parquet" and pq.read_table(one).num_rows == len(r.decisions)


def test_the_cli_writes_parquet_with_the_csvs_values(cli, names_trace, tmp_path):
    """`lahar run --format parquet`: the row files as Parquet, typed, with the
    values and names the CSVs of the same run hold."""
    pytest.importorskip("pyarrow")
    import json

    import pandas as pd
    import pyarrow.parquet as pq

    scenario = tmp_path / "s.yaml"
    scenario.write_text(json.dumps(tiny(str(names_trace))))
    out = tmp_path / "pq"
    cli("run", "-q", str(scenario), "--out", str(out), "--format", "parquet")
    r = lahar.run(scenario)
    assert sorted(p.name for p in out.glob("*.csv")) == ["summary.csv"]
    assert (out / "summary.json").is_file() and (out / "summary.csv").is_file()
    for name in r.tables:
        table = pq.read_table(out / f"{name}.parquet")
        pd.testing.assert_frame_equal(table.to_pandas(), r.table(name), check_dtype=False)
    jobs = pq.read_table(out / "jobs.parquet")
    assert str(jobs.schema.field("job").type) == "string"
    assert str(jobs.schema.field("submit_s").type) in ("int64", "double")
    assert sorted(jobs.column("job").to_pylist()) == ["007", "1e3", "NA", "null"]
    assert pq.read_metadata(out / "jobs.parquet").metadata[b"lahar.unit.wait_s"] == b"s"
    bad = cli("run", "-q", str(scenario), "--out", str(tmp_path / "x"), "--format", "xml", code=2)
    assert "parquet" in bad.stderr
