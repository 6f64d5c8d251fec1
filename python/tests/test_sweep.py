"""lahar.sweep: the per-cell table as a DataFrame, the same as `lahar sweep` writes."""

import pandas as pd

import lahar
from conftest import EXAMPLES

SPEC = {
    "apiVersion": "lahar.io/v1alpha1",
    "kind": "Sweep",
    "metadata": {"name": "py"},
    "spec": {
        "scenario": str(EXAMPLES / "synthetic-mix.yaml"),
        "seeds": 2,
        "grid": [
            {"name": "nodes", "path": "spec.cluster.nodeGroups[0].count", "values": [3, 6]},
            {
                "name": "policy",
                "path": "spec.scheduler",
                "values": [{"name": "sjf", "value": {"baseline": "sjf"}}, {"name": "fifo", "value": {"baseline": "fifo"}}],
            },
        ],
    },
}


def test_a_sweep_returns_its_cells(cli, tmp_path):
    table = lahar.sweep(SPEC, jobs=2)
    assert len(table) == 2 * 2 * 2
    assert list(table.columns[:5]) == ["cell", "nodes", "policy", "seed", "status"]
    assert (table.status == "ok").all()
    assert set(table.policy) == {"sjf", "fifo"}
    assert table.nodes.tolist()[:2] == ["3", "3"]
    # More nodes, less waiting, for each policy and seed.
    for policy in ("sjf", "fifo"):
        rows = table[table.policy == policy].groupby("nodes")["wait_s.mean"].mean()
        assert rows["6"] < rows["3"]
    # The CLI's sweep.csv, from the same spec written to a file.
    spec = tmp_path / "sweep.yaml"
    import json

    spec.write_text(json.dumps(SPEC))
    out = tmp_path / "out"
    cli("sweep", str(spec), "--out", str(out), "-q")
    written = pd.read_csv(out / "sweep.csv", dtype={"cell": str, "nodes": str, "policy": str})
    pd.testing.assert_frame_equal(table.drop(columns=["error"]), written.drop(columns=["error"]))
    kept = lahar.sweep(spec, out=tmp_path / "kept", outputs="jobs")
    assert (tmp_path / "kept" / "sweep.csv").read_bytes() == (out / "sweep.csv").read_bytes()
    pd.testing.assert_frame_equal(kept, table)
