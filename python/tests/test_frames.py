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
