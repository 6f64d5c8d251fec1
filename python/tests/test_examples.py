"""Every Python example runs from a clean clone and draws its figure."""

import runpy
import sys

from conftest import ROOT, canonical, tiny

EXAMPLES = ROOT / "examples" / "python"


def run_example(name, out, monkeypatch):
    monkeypatch.setattr(sys, "argv", [str(EXAMPLES / name), str(out)])
    return runpy.run_path(str(EXAMPLES / name), run_name="__main__")


def test_smallest_first(tmp_path, monkeypatch, capsys):
    run_example("smallest_first.py", tmp_path, monkeypatch)
    printed = capsys.readouterr().out
    for name in ("volcano (default conf)", "gang-fifo", "sjf", "smallest-first (Python)"):
        assert name in printed
    png = tmp_path / "smallest-first.png"
    assert png.stat().st_size > 10_000


def test_the_example_policy_starts_the_smallest_gang_first(tmp_path):
    """Hand-checked on two 8-GPU nodes: `a` and `b` hold a node each until 1800 s
    and 3600 s; at 1800 s, `big` (8 GPUs, waiting since 100 s) and `small` (4 GPUs,
    since 200 s) wait. Smallest-first starts `small` (1800–1860 s), then `big` no
    longer fits until `small` ends: it starts at 1860 s. gang-fifo starts `big` at
    1800 s (to 2400 s) and `small` when `big` ends, at 2400 s."""
    import lahar

    mod = runpy.run_path(str(EXAMPLES / "smallest_first.py"))
    rows = [("a", 0, 3600, 1, 8), ("b", 0, 1800, 1, 8), ("big", 100, 600, 1, 8), ("small", 200, 60, 1, 4)]
    scenario = tiny(str(canonical(tmp_path / "t.csv", rows)))
    start = lambda r: r.jobs.set_index("job").start_s.to_dict()  # noqa: E731
    mine = lahar.run(scenario, scheduler=mod["SmallestFirst"](), outputs="jobs")
    assert mine.summary["scheduler"] == "py-smallest-first"
    assert start(mine) == {"a": 0, "b": 0, "big": 1860, "small": 1800}
    scenario["spec"]["scheduler"] = {"baseline": "gang-fifo"}
    assert start(lahar.run(scenario, outputs="jobs")) == {"a": 0, "b": 0, "big": 1800, "small": 2400}


def test_sweep_figure(tmp_path, monkeypatch, capsys):
    run_example("sweep_figure.py", tmp_path, monkeypatch)
    printed = capsys.readouterr().out
    assert "gang-fifo" in printed and "sjf" in printed
    assert (tmp_path / "sweep-jct.png").stat().st_size > 10_000


def test_tiresias(tmp_path, monkeypatch, capsys):
    run_example("tiresias.py", tmp_path, monkeypatch)
    printed = capsys.readouterr().out
    for name in ("volcano (default conf)", "gang-fifo", "tiresias (built-in)", "tiresias-style (Python)"):
        assert name in printed
    assert (tmp_path / "tiresias.png").stat().st_size > 10_000


def test_the_tiresias_example_demotes_and_preempts_on_time():
    """examples/baseline-tiresias.yaml, hand-checked: `long` (2 pods × 2 GPUs on
    the one 4-GPU node) reaches 3,200 GPU-s at 800 s and drops to the low queue;
    `short-0` (4 GPUs, waiting since 10 s) then evicts it (30 s grace) and runs
    830–930 s, `short-1` 930–1030 s; `long` resumes from its 800 s checkpoint
    (nothing lost) and ends at 1030 + 1200 = 2230 s. As the built-in tiresias."""
    import lahar

    mod = runpy.run_path(str(EXAMPLES / "tiresias.py"))
    scenario = ROOT / "examples" / "baseline-tiresias.yaml"
    mine = lahar.run(scenario, scheduler=mod["Tiresias"](), outputs="jobs,pods")
    jobs = mine.jobs.set_index("job")
    assert jobs.start_s.to_dict() == {"short-0": 830, "short-1": 930, "long": 0}
    assert jobs.end_s.to_dict() == {"short-0": 930, "short-1": 1030, "long": 2230}
    assert jobs.preemptions.to_dict() == {"short-0": 0, "short-1": 0, "long": 1}
    preempted = mine.pods[mine.pods.reason_end == "preempted"]
    assert sorted(preempted.pod) == ["default/long-worker-0", "default/long-worker-1"]
    assert set(preempted.end_s) == {800}
    built_in = lahar.run(scenario, outputs="jobs")
    assert built_in.csv("jobs") == mine.csv("jobs")


def test_gpu_pack_plugin_decides_as_binpack(capsys):
    mod = runpy.run_path(str(EXAMPLES / "gpu_pack.py"))
    assert mod["main"]([]) == 0
    assert "same decisions: True" in capsys.readouterr().out
