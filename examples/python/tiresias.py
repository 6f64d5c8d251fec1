"""A Tiresias-style policy in Python, compared with Volcano and lahar's baselines.

Discretized two-dimensional least-attained-service (Gu et al., NSDI '19), in
about fifty lines: a job's attained service is GPUs × time run (Session's
``Job.attained``, GPU-seconds); jobs below THRESHOLD are in the high queue, the
others in the low one. Each session the waiting jobs are tried high queue
first, then by submission, each gang placed first-fit, all or nothing. A
high-queue job that does not fit takes resources being released (pipelined)
if that is enough, or else evicts low-queue running jobs, latest submitted
first, the fewest that let its whole gang be pipelined onto what they release;
it starts once they are gone. A wake-up at the instant each running job would cross the threshold
demotes it on time. (lahar's built-in ``tiresias`` adds the paper's starvation
guard, suspension at preemption and evictions only where the gang goes.)

It runs on a real trace sample (the first 500 jobs of Alibaba's openb trace,
examples/traces/canonical.yaml, on three 8-GPU nodes, so that jobs queue) beside
Volcano's default conf and the gang-fifo and built-in tiresias baselines; the
script prints a table and draws the JCT distributions to tiresias.png.

    pip install ./python matplotlib
    python examples/python/tiresias.py [OUT_DIR]
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


class Tiresias:
    name = "py-tiresias"

    def __init__(self, threshold=3200.0):
        self.threshold = threshold  # GPU-seconds

    def queue(self, job):
        return 0 if job.attained < self.threshold else 1

    def place(self, s, job, pipeline=False):
        stmt, placed = s.statement(), 0
        for p in s.pending_pods(job.id):
            n = s.first_fit(p, pipeline=pipeline)
            if n is not None:
                (stmt.pipeline if pipeline else stmt.allocate)(p, n)
                placed += 1
        if placed and placed >= max(job.min_available, 1) - job.ready:
            stmt.commit()
            return True
        stmt.discard()
        return False

    def preempt(self, s, job):
        low = [s.job(j) for j in s.running_jobs()]
        low = sorted((v for v in low if self.queue(v) > 0), key=lambda v: (v.submit, v.id), reverse=True)
        s.set_action("preempt")
        for k in range(1, len(low) + 1):  # the fewest victims, latest first, that make room
            stmt = s.statement()
            for v in low[:k]:
                for p in (p for p in s.pods(v.id) if s.pod(p).status == "Running"):
                    stmt.evict(p, f"2D-LAS: {job.name} (high queue) preempts {v.name} (low queue)")
            evicted, pods = len(stmt), s.pending_pods(job.id)
            for p in pods:
                n = s.first_fit(p, pipeline=True)
                if n is None:
                    break
                stmt.pipeline(p, n)
            if len(stmt) == evicted + len(pods):
                stmt.commit()
                break
            stmt.discard()
        s.set_action("allocate")

    def schedule(self, s):
        waiting = sorted((s.job(j) for j in s.pending_jobs()), key=lambda j: (self.queue(j), j.submit, j.id))
        for job in waiting:
            if job.phase == "Pending":
                s.set_phase(job.id, "Inqueue", "2D-LAS")
            if not self.place(s, job) and self.queue(job) == 0 and not self.place(s, job, pipeline=True):
                self.preempt(s, job)
        for j in s.running_jobs():
            job = s.job(j)
            if job.attained < self.threshold:
                s.wakeup(s.now + (self.threshold - job.attained) / max(job.gpus, 1))


def main(out: Path) -> pd.DataFrame:
    out.mkdir(parents=True, exist_ok=True)

    def baseline(name):
        return {**CLUSTER, "spec.scheduler": {"baseline": name}}

    runs = {
        "volcano (default conf)": lahar.run(TRACE, set=CLUSTER, outputs="jobs"),
        "gang-fifo": lahar.run(TRACE, set=baseline("gang-fifo"), outputs="jobs"),
        "tiresias (built-in)": lahar.run(TRACE, set=baseline("tiresias"), outputs="jobs"),
        "tiresias-style (Python)": lahar.run(TRACE, set=CLUSTER, scheduler=Tiresias(), outputs="jobs"),
    }
    rows = []
    for name, r in runs.items():
        m = r.summary["metrics"]
        rows.append(
            {
                "scheduler": name,
                "completed": m["completed"],
                "JCT mean (h)": m["jct_s"]["mean"] / 3600,
                "JCT median (h)": m["jct_s"]["p50"] / 3600,
                "JCT p90 (h)": m["jct_s"]["p90"] / 3600,
                "preemptions": m["preemptions"],
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
    ax.set_title("openb, first 500 jobs on 24 GPUs: least attained service first")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "tiresias.png", dpi=120)
    return table


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("out/python-examples")
    table = main(out)
    print(table.to_string(float_format=lambda x: f"{x:.3f}"))
    print(f"figure: {out / 'tiresias.png'}")
