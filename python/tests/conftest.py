"""Shared fixtures: the repository's examples, and small scenarios written by hand."""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

CANONICAL_HEADER = (
    "job,namespace,kind,queue,user,submit_s,duration_s,min_available,priority,priority_class,max_retry,"
    "checkpoint_s,task,replicas,task_min_available,task_priority,preemptable,cpu,memory,gpu,gpu_model\n"
)


def tiny(trace: str) -> dict:
    """A two-node scenario (8 GPUs each) replaying canonical trace `trace`, FIFO."""
    return {
        "apiVersion": "lahar.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "tiny"},
        "spec": {
            "seed": 1,
            "cluster": {"nodeGroups": [{"name": "n", "count": 2, "gpus": 8, "cpu": 64, "memory": "512Gi"}]},
            "queues": [{"name": "q", "weight": 1}],
            "scheduler": {"baseline": "fifo"},
            "workload": [{"trace": {"format": "canonical", "path": trace, "queue": "q"}}],
        },
    }


def canonical(path, rows):
    """Writes a canonical trace of (name, submit s, run time s, pods, GPUs per pod) rows."""
    text = CANONICAL_HEADER + "".join(
        f"{name},default,,q,,{submit},{dur},{pods},0,,0,,worker,{pods},{pods},0,true,1,1Gi,{gpu},\n"
        for name, submit, dur, pods, gpu in rows
    )
    path.write_text(text)
    return path


@pytest.fixture
def names_trace(tmp_path):
    """Jobs whose names a careless CSV reader would turn into numbers or missing values."""
    # (name, submit s, run time s, pods, GPUs per pod)
    rows = [
        ("NA", 0, 3600, 1, 8),
        ("007", 0, 1800, 1, 8),
        ("null", 60, 600, 2, 8),
        ("1e3", 120, 60, 1, 4),
    ]
    return canonical(tmp_path / "names.csv", rows)


@pytest.fixture
def cli():
    """Runs the `lahar` binary of this checkout (built by python/test.sh, or
    $LAHAR_BIN); returns the finished process, its output as text."""
    binary = Path(os.environ.get("LAHAR_BIN", ROOT / "target" / "release" / "lahar"))
    assert binary.is_file(), f"{binary}: build it with `cargo build --release` (python/test.sh does)"

    def run(*args, code=0):
        p = subprocess.run([str(binary), *args], capture_output=True, text=True)
        assert p.returncode == code, f"lahar {' '.join(args)}: exit {p.returncode}\n{p.stderr}"
        return p

    return run
