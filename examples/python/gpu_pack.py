"""A Volcano node-score plugin written in Python, used from a volcano-scheduler.conf.

gpu-pack prefers the node whose GPUs would be fullest with the pod on it: score =
100 × weight × (GPUs used + GPUs asked) / GPUs of the node, 0 for a pod without
GPUs or a node it would overflow. That is Volcano's binpack with only
nvidia.com/gpu weighed, so the script runs gpu-pack.conf and its twin
binpack-gpu.conf (the same tiers with the built-in binpack) on the same jobs,
checks that they decide alike, and prints both wall times. The jobs: the first
500 of Alibaba's openb trace (examples/traces/canonical.yaml) on two 8-GPU and
four 4-GPU nodes, or the scenario given.

    pip install ./python
    python examples/python/gpu_pack.py [SCENARIO] [--only python|built-in] [--uncached]
"""

import argparse
import time
from pathlib import Path

import lahar

HERE = Path(__file__).resolve().parent
TRACE = HERE.parent / "traces" / "canonical.yaml"
CLUSTER = {
    "spec.cluster": {
        "nodeGroups": [
            {"name": "g8", "count": 2, "gpus": 8, "cpu": 96, "memory": "768Gi"},
            {"name": "g4", "count": 4, "gpus": 4, "cpu": 48, "memory": "384Gi"},
        ]
    }
}
CONFS = {"python": HERE / "gpu-pack.conf", "built-in": HERE / "binpack-gpu.conf"}


@lahar.register_plugin("gpu-pack")
class GpuPack:
    """Fullest GPUs first. Its score reads only the pod's request and the node's
    allocatable and used resources, so lahar may reuse it while the node is
    unchanged (``score_by_node``)."""

    score_by_node = True

    def __init__(self, arguments):
        self.weight = arguments.get("weight", 1)

    def node_score(self, session, pod, node):
        p, n = session.pod(pod), session.node(node)
        gpus = n.allocatable[0]
        if p.gpus <= 0 or gpus == 0:
            return 0.0
        used = n.used[0] + p.gpus
        if used > gpus:
            return 0.0
        return 1.0 * used / gpus / 1.0 * 100.0 * self.weight


def run(which, scenario=None):
    """One run under `which` conf: (the run, wall seconds)."""
    sets = {"spec.scheduler": {"conf": str(CONFS[which])}}
    if scenario is None:
        scenario, sets = TRACE, {**CLUSTER, **sets}
    t = time.perf_counter()
    r = lahar.run(scenario, set=sets, outputs="jobs,pods,decisions")
    return r, time.perf_counter() - t


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenario", nargs="?", help="a scenario (default: 500 openb jobs on 32 GPUs)")
    ap.add_argument("--only", choices=sorted(CONFS), help="run one conf and print its time")
    ap.add_argument("--uncached", action="store_true", help="declare score_by_node False: every score is asked")
    a = ap.parse_args(argv)
    GpuPack.score_by_node = not a.uncached
    runs = {w: run(w, a.scenario) for w in ([a.only] if a.only else CONFS)}
    for which, (r, wall) in runs.items():
        m = r.summary["metrics"]
        print(f"{which:9} {wall:7.2f} s  jobs {m['jobs']}  JCT mean {m['jct_s']['mean'] / 3600:.3f} h")
    if len(runs) == 2:
        (a_run, _), (b_run, _) = runs.values()
        same = all(a_run.csv(t) == b_run.csv(t) for t in ("jobs", "pods", "decisions"))
        print(f"same decisions: {same}")
        return 0 if same else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
