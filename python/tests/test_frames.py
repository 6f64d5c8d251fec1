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
