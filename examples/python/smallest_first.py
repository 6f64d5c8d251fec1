"""A scheduling policy in Python, compared with Volcano and lahar's baselines.

Smallest-gang-first: at every session, the waiting jobs are tried in order of the
GPUs they ask for (fewest first, then by submission), each gang placed pod by pod
on the first node that fits, all or nothing. It is run on a real trace sample (the
first 500 jobs of Alibaba's openb trace, examples/traces/canonical.yaml, on three
8-GPU nodes instead of openb's own, so that jobs queue) beside Volcano's default
conf and the gang-fifo and sjf baselines, and the script prints a table and draws
the JCT distributions to smallest-first.png.

    pip install ./python matplotlib
    python examples/python/smallest_first.py [OUT_DIR]
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

import lahar  # noqa: E402

HERE = Path(__file__).resolve().parent
TRACE = HERE.parent / "traces" / "canonical.yaml"
CLUSTER = {"spec.cluster": {"nodeGroups": [{"name": "g", "count": 3, "gpus": 8, "cpu": 96, "memory": "768Gi"}]}}


class SmallestFirst:
    """Fewest GPUs first; a gang starts whole or not at all."""

    name = "py-smallest-first"

    def schedule(self, s):
        idle_gpus = s.idle_total[0]
        jobs = [s.job(j) for j in s.pending_jobs()]
        for job in sorted(jobs, key=lambda job: (job.gpus, job.submit, job.id)):
            if job.gpus > idle_gpus + 1e-9 and job.ready == 0:
                continue  # cannot start on what is idle now
            if job.phase == "Pending":
                s.set_phase(job.id, "Inqueue", "admitted, smallest first")
            needed = max(job.min_available, 1) - job.ready
            stmt, placed = s.statement(), 0
            for p in s.pending_pods(job.id):
                n = s.first_fit(p)
                if n is not None:
                    stmt.allocate(p, n)
                    placed += 1
            if placed and placed >= needed:
                stmt.commit()
                idle_gpus = s.idle_total[0]
            else:
                stmt.discard()


def main(out: Path) -> pd.DataFrame:
    out.mkdir(parents=True, exist_ok=True)
    def baseline(name):
        return {**CLUSTER, "spec.scheduler": {"baseline": name}}

    runs = {
        "volcano (default conf)": lahar.run(TRACE, set=CLUSTER, outputs="jobs"),
        "gang-fifo": lahar.run(TRACE, set=baseline("gang-fifo"), outputs="jobs"),
        "sjf": lahar.run(TRACE, set=baseline("sjf"), outputs="jobs"),
        "smallest-first (Python)": lahar.run(TRACE, set=CLUSTER, scheduler=SmallestFirst(), outputs="jobs"),
    }
    rows = []
    for name, r in runs.items():
        m = r.summary["metrics"]
        rows.append(
            {
                "scheduler": name,
                "completed": m["completed"],
                "JCT mean (h)": m["jct_s"]["mean"] / 3600,
                "JCT p90 (h)": m["jct_s"]["p90"] / 3600,
                "wait mean (h)": m["wait_s"]["mean"] / 3600,
                "GPU allocation": m["gpu_allocation_rate"],
            }
        )
    table = pd.DataFrame(rows).set_index("scheduler")

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for name, r in runs.items():
        jct = r.jobs.jct_s.dropna().sort_values() / 3600
        ax.plot(jct.values, [(i + 1) / len(jct) for i in range(len(jct))], label=name)
    ax.set_xscale("log")
    ax.set_xlabel("job completion time (h, log scale)")
    ax.set_ylabel("share of jobs")
    ax.set_title("openb, first 500 jobs on 24 GPUs: JCT by scheduler")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "smallest-first.png", dpi=120)
    return table


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("out/python-examples")
    table = main(out)
    print(table.to_string(float_format=lambda x: f"{x:.3f}"))
    print(f"figure: {out / 'smallest-first.png'}")
