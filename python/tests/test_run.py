"""lahar.run: results as DataFrames, equal to the files the CLI writes; inputs as
paths, YAML text or dicts; overrides; nothing written without `out`."""

import json
import os
import warnings

import pandas as pd
import pytest

import lahar
from conftest import EXAMPLES, tiny


def test_the_default_scenario_runs_in_memory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = lahar.run()
    m = r.summary["metrics"]
    assert r.summary["scenario"] == "default"
    assert m["completed"] == 3000 and m["unfinished"] == 0
    assert r.out is None
    assert os.listdir(tmp_path) == [], "a run without out= wrote files"
    assert r.tables == ["jobs", "pods", "timeseries", "queues", "decisions"]
    jobs = r.jobs
    assert len(jobs) == 3000
    assert list(jobs.columns)[:4] == ["job", "queue", "priority", "gpus"]
    assert set(jobs.queue) == {"research", "prod"}
    # The summary's mean JCT is the mean of jobs.csv's jct_s.
    assert jobs.jct_s.mean() == pytest.approx(m["jct_s"]["mean"], rel=1e-9)
    # Every pod interval's GPUs add up to the GPU time jobs.csv implies.
    assert (r.pods.end_s >= r.pods.start_s).all()
    assert r.timeseries.gpus_total.max() == 512
    assert "lahar.Run 'default' seed 42" in repr(r)


def test_tables_are_the_files_lahar_run_writes(tmp_path):
    scenario = EXAMPLES / "faults" / "training.yaml"
    mem = lahar.run(scenario)
    out = tmp_path / "out"
    disk = lahar.run(scenario, out=out)
    assert disk.out == out and (out / "jobs.csv").is_file()
    assert mem.tables == disk.tables == ["jobs", "pods", "timeseries", "queues", "decisions", "events"]
    for name in mem.tables:
        assert mem.csv(name) == (out / f"{name}.csv").read_bytes(), name
        pd.testing.assert_frame_equal(mem.table(name), disk.table(name))
    without_wall = lambda s: {k: v for k, v in s.items() if k != "run"}  # noqa: E731
    assert without_wall(mem.summary) == without_wall(json.loads((out / "summary.json").read_text()))
    # A DataFrame holds the CSV's values: the first job row, field by field.
    first = (out / "jobs.csv").read_text().splitlines()[1].split(",")
    row = mem.jobs.iloc[0]
    assert row.job == first[0] and row.queue == first[1]
    assert row.submit_s == float(first[4])


def test_names_stay_as_written(names_trace):
    r = lahar.run(tiny(str(names_trace)))
    jobs = r.jobs.set_index("job")
    # Not NaN, not 7, not 1000.0: the names the trace gave.
    assert sorted(jobs.index) == sorted(["NA", "007", "null", "1e3"])
    assert jobs.loc["007", "gpus"] == 8
    # Hand-checked on two 8-GPU nodes under strict FIFO: NA and 007 start at 0 (a
    # node each); null (two 8-GPU pods, a gang) waits for both to end (007 at
    # 1800 s, NA at 3600 s) and runs 600 s; 1e3 (4 GPUs), behind null in FIFO
    # order, waits for it though it fits from 1800 s on: it starts at 4200 s.
    assert jobs.loc["NA", "start_s"] == 0 and jobs.loc["007", "start_s"] == 0
    assert jobs.loc["null", "start_s"] == 3600 and jobs.loc["null", "end_s"] == 4200
    assert jobs.loc["1e3", "start_s"] == 4200
    assert jobs.loc["1e3", "wait_s"] == 4200 - 120
    assert jobs.loc["null", "gpus"] == 16
    pods = r.pods
    assert set(pods.job) == {"NA", "007", "null", "1e3"}
    assert (pods.job == "null").sum() == 2
    assert pods.pod.str.len().min() > 0


def test_a_scenario_as_path_text_or_dict_runs_the_same(names_trace, tmp_path):
    d = tiny(str(names_trace))
    path = tmp_path / "s.yaml"
    path.write_text(json.dumps(d, indent=2) + "\n")
    by_dict = lahar.run(d)
    by_text = lahar.run(path.read_text())
    by_path = lahar.run(path)
    by_str = lahar.run(str(path))
    for r in (by_text, by_path, by_str):
        assert r.csv("jobs") == by_dict.csv("jobs")
        assert r.csv("decisions") == by_dict.csv("decisions")


def test_overrides_are_the_command_lines(tmp_path):
    base = lahar.run(seed=42, outputs="jobs")
    assert base.csv("jobs") == lahar.run(outputs=["jobs"]).csv("jobs")
    other = lahar.run(seed=7, outputs="jobs")
    assert other.summary["seed"] == 7
    assert other.csv("jobs") != base.csv("jobs")
    small = lahar.run(set={"spec.workload[0].synthetic.jobs": 50, "spec.queues[1].weight": 3}, outputs="jobs")
    assert len(small.jobs) == 50
    same = lahar.run(set=["spec.workload[0].synthetic.jobs=50", "spec.queues[1].weight=3"], outputs="jobs")
    assert same.csv("jobs") == small.csv("jobs")
    capped = lahar.run(sessions=10, outputs="decisions")
    assert capped.decisions.session.max() <= 10


def test_outputs_chooses_the_tables(tmp_path):
    r = lahar.run(outputs="jobs,timeseries")
    assert r.tables == ["jobs", "timeseries"]
    with pytest.raises(LookupError, match="no pods.csv"):
        r.pods
    with pytest.raises(KeyError):
        r.table("nope")
    with pytest.raises(lahar.InputError, match="unknown"):
        lahar.run(outputs="jobs,nope")


def test_the_same_run_as_the_cli(cli, tmp_path):
    """`lahar run --conf C --seed 3 --set ... --out D` and lahar.run with the same
    arguments write the same files."""
    conf = EXAMPLES / "volcano" / "volcano-scheduler.conf"
    sets = ["spec.workload[0].synthetic.jobs=300"]
    out = tmp_path / "cli"
    cli("run", "-q", "--conf", str(conf), "--seed", "3", "--set", sets[0], "--out", str(out))
    r = lahar.run(conf=conf, seed=3, set=sets)
    assert r.summary["seed"] == 3
    for name in r.tables:
        assert r.csv(name) == (out / f"{name}.csv").read_bytes(), name
    cli_summary = json.loads((out / "summary.json").read_text())
    assert {k: v for k, v in r.summary.items() if k != "run"} == {k: v for k, v in cli_summary.items() if k != "run"}


def test_warnings_are_issued_and_kept(tmp_path):
    # A job asking for more GPUs than any node set can hold is let through with a warning.
    trace = tmp_path / "big.csv"
    from conftest import CANONICAL_HEADER

    trace.write_text(
        CANONICAL_HEADER
        + "ok,default,,q,,0,60,1,0,,0,,worker,1,1,0,true,1,1Gi,8,\n"
        + "huge,default,,q,,0,60,1,0,,0,,worker,1,1,0,true,1,1Gi,64,\n"
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = lahar.run(tiny(str(trace)))
    assert r.warnings, "the run kept no warning"
    assert any(issubclass(w.category, lahar.LaharWarning) for w in caught)
    assert r.summary["warnings"][0]["kind"] == r.warnings[0]["kind"]
    with pytest.raises(lahar.InputError) as e:
        lahar.run(tiny(str(trace)), strict=True)
    # The warning as an error, where the CLI's --strict puts it.
    assert (e.value.file, e.value.path) == ("<string>", "spec.workload[0].trace")
    assert e.value.line is not None and e.value.line == r.warnings[0]["line"]


def test_ctrl_c_ends_a_run(tmp_path):
    """KeyboardInterrupt during a run (here raised by a policy's first session, as
    Ctrl-C raises it on the main thread) ends the run and is raised."""
    import _thread
    import time

    class Slow:
        def schedule(self, s):
            if s.index == 1:
                _thread.interrupt_main()  # Ctrl-C, as the main thread sees it
            time.sleep(0.002)

    started = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        lahar.run(scheduler=Slow(), outputs="summary")
    # The default scenario has 6,000 events: two ms each would take 12 s.
    assert time.perf_counter() - started < 5
    # The stop flag of one run does not reach the next.
    assert lahar.run(outputs="summary").summary["metrics"]["completed"] == 3000


def test_a_service_run_has_its_tables(tmp_path):
    scenario = EXAMPLES / "serving-scenario.yaml"
    mem = lahar.run(scenario)
    out = tmp_path / "out"
    disk = lahar.run(scenario, out=out)
    assert mem.tables == disk.tables == ["jobs", "pods", "timeseries", "queues", "decisions", "services", "scaling"]
    for name in ("services", "scaling"):
        assert mem.csv(name) == (out / f"{name}.csv").read_bytes(), name
    s = mem.services
    assert list(s.service.unique()) == ["chat"] and s.gpus.max() >= 1
    assert (mem.scaling.autoscaler == "default/chat").all()
    services = mem.summary["metrics"]["services"]
    assert services[0]["service"] == "chat" and services[0]["scale_ups"] == (mem.scaling["to"] > mem.scaling["from"]).sum()


def test_an_operator_s_timeline_is_a_table(tmp_path):
    scenario = EXAMPLES / "volcano" / "conf-edit.yaml"
    mem = lahar.run(scenario)
    out = tmp_path / "out"
    disk = lahar.run(scenario, out=out)
    assert mem.tables == disk.tables == ["jobs", "pods", "timeseries", "queues", "decisions", "timeline"]
    assert mem.csv("timeline") == (out / "timeline.csv").read_bytes()
    rows = mem.timeline.to_dict("records")
    assert rows == [
        {
            "t_s": 14400,
            "step": "spec.timeline[0]",
            "action": "conf",
            "target": "conf-edit/with-preempt.conf",
            "outcome": "done",
            "note": "",
        }
    ]
    assert "timeline" not in lahar.run(outputs="summary").tables
