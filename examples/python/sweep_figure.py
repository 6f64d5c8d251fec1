"""A sweep into a DataFrame into a figure.

Runs examples/sweeps/nodes-by-policy.yaml (3 cluster sizes x 3 schedulers x 3
seeds = 27 cells of examples/synthetic-mix.yaml) with lahar.sweep, which returns
the per-cell table, and plots mean JCT against cluster size per scheduler with a
band of one standard deviation over the seeds, to sweep-jct.png.

    pip install ./python matplotlib
    python examples/python/sweep_figure.py [OUT_DIR]
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import lahar  # noqa: E402

HERE = Path(__file__).resolve().parent
SWEEP = HERE.parent / "sweeps" / "nodes-by-policy.yaml"


def main(out: Path):
    out.mkdir(parents=True, exist_ok=True)
    cells = lahar.sweep(SWEEP, jobs=2)
    cells["gpus"] = cells["nodes"].astype(int) * 8
    cells["jct_h"] = cells["jct_s.mean"] / 3600
    by = cells.groupby(["policy", "gpus"])["jct_h"].agg(["mean", "std", "count"]).reset_index()

    fig, ax = plt.subplots(figsize=(6.5, 4))
    for policy, g in by.groupby("policy"):
        ax.plot(g.gpus, g["mean"], marker="o", label=policy)
        ax.fill_between(g.gpus, g["mean"] - g["std"], g["mean"] + g["std"], alpha=0.2)
    ax.set_xlabel("GPUs in the cluster")
    ax.set_ylabel("mean JCT (h), ± 1 sd over seeds")
    ax.set_title("synthetic mix: JCT against cluster size")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "sweep-jct.png", dpi=120)
    return by


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("out/python-examples")
    by = main(out)
    print(by.to_string(index=False, float_format=lambda x: f"{x:.2f}"))
    print(f"figure: {out / 'sweep-jct.png'}")
