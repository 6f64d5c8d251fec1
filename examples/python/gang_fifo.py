"""lahar's gang-fifo baseline written in Python, and what the crossing costs.

The policy (policies/src/baselines/gang_fifo.rs, in 25 lines of Python) makes
exactly the built-in one's decisions. Run as a script, it runs a scenario under
both, checks that jobs.csv, pods.csv and decisions.csv are the same bytes, and
prints each one's wall time:

    pip install ./python
    python examples/python/gang_fifo.py [SCENARIO] [--only python|rust]

docs/PERFORMANCE.md ("Policies in Python") quotes it on 100,000 jobs.
"""

import sys
import time
import warnings
from pathlib import Path

import lahar

HERE = Path(__file__).resolve().parent


class GangFifo:
    """Jobs in creation order; each gang placed pod by pod on the first node that
    fits, committed whole or discarded."""

    name = "py-gang-fifo"

    def schedule(self, s):
        for j in s.pending_jobs():
            job = s.job(j)
            if job.phase == "Pending":
                s.set_phase(j, "Inqueue", "admitted in FIFO order")
            needed = max(job.min_available, 1) - job.ready
            pods = s.pending_pods(j)
            stmt = s.statement()
            placed = 0
            for i, p in enumerate(pods):
                n = s.first_fit(p)
                if n is not None:
                    stmt.allocate(p, n)
                    placed += 1
                elif placed + len(pods) - i - 1 < needed:
                    break  # the pods left cannot complete the gang
            if placed > 0 and placed >= needed:
                stmt.commit()
            else:
                stmt.discard()


BUILT_IN = {"spec.scheduler": {"baseline": "gang-fifo"}}


def timed(scenario, **kw):
    t = time.perf_counter()
    r = lahar.run(scenario, **kw)
    return r, time.perf_counter() - t


if __name__ == "__main__":
    warnings.simplefilter("ignore", lahar.LaharWarning)
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    scenario = args[0] if args else str(HERE.parent / "synthetic-mix.yaml")
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    if only == "python":
        r, t = timed(scenario, set=BUILT_IN, scheduler=GangFifo(), outputs="summary")
        print(f"python policy: {t:.2f} s, {r.summary['metrics']['completed']} jobs completed")
    elif only == "rust":
        r, t = timed(scenario, set=BUILT_IN, outputs="summary")
        print(f"built-in gang-fifo: {t:.2f} s, {r.summary['metrics']['completed']} jobs completed")
    else:
        rust, tr = timed(scenario, set=BUILT_IN, outputs="jobs,pods,decisions")
        py, tp = timed(scenario, set=BUILT_IN, scheduler=GangFifo(), outputs="jobs,pods,decisions")
        same = all(rust.csv(n) == py.csv(n) for n in rust.tables)
        print(f"built-in gang-fifo {tr:.2f} s, Python gang-fifo {tp:.2f} s ({tp / tr:.1f}x); same decisions: {same}")
        sys.exit(0 if same else 1)
