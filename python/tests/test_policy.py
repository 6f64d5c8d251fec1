"""Policies written in Python: the live Session API, and a Python gang-FIFO that
decides exactly as the built-in one on the same jobs."""

import runpy

import pytest

import lahar
from conftest import EXAMPLES, tiny

# The policy of examples/python/gang_fifo.py.
GangFifo = runpy.run_path(str(EXAMPLES / "python" / "gang_fifo.py"))["GangFifo"]


def test_a_python_gang_fifo_decides_as_the_built_in_one():
    mix = EXAMPLES / "synthetic-mix.yaml"
    built_in = lahar.run(mix, set={"spec.scheduler": {"baseline": "gang-fifo"}})
    python = lahar.run(mix, scheduler=GangFifo())
    assert python.summary["scheduler"] == "py-gang-fifo"
    assert built_in.summary["scheduler"] == "gang-fifo"
    for name in ("jobs", "pods", "decisions", "timeseries"):
        assert python.csv(name) == built_in.csv(name), name
    assert python.summary["metrics"] == built_in.summary["metrics"]


def test_the_example_script_checks_its_twin(capsys, monkeypatch):
    import sys

    monkeypatch.setattr(sys, "argv", ["gang_fifo.py"])
    with pytest.raises(SystemExit) as e:
        runpy.run_path(str(EXAMPLES / "python" / "gang_fifo.py"), run_name="__main__")
    assert e.value.code == 0
    assert "same decisions: True" in capsys.readouterr().out


def test_the_session_api_reads_the_live_state(names_trace):
    seen = {}

    class Look:
        def schedule(self, s):
            if s.index == 1:
                seen["now"] = (s.now, s.now_us)
                seen["nodes"] = [s.node(n) for n in range(s.node_count)]
                seen["queues"] = s.queues()
                j = s.pending_jobs()[0]
                seen["job"] = s.job(j)
                p = s.pending_pods(j)[0]
                seen["pod"] = s.pod(p)
                seen["fit"] = (s.fits(p, 0), s.first_fit(p), s.fitting_nodes(p))
                stmt = s.statement()
                stmt.allocate(p, 1)
                seen["len"] = len(stmt)
                seen["after"] = s.node(1).idle
                seen["pod_after"] = s.pod(p).status
                stmt.commit()
                seen["session"] = s
                seen["stmt"] = stmt

    lahar.run(tiny(str(names_trace)), scheduler=Look(), outputs="jobs")
    assert seen["now"] == (0.0, 0)
    n0 = seen["nodes"][0]
    assert (n0.id, n0.allocatable[0], n0.allocatable[1]) == (0, 8.0, 64.0)
    assert n0.idle == n0.allocatable == n0.future_idle
    assert seen["queues"] == [("q", 1)]
    job = seen["job"]
    assert (job.name, job.queue, job.min_available, job.pending, job.ready, job.phase) == ("NA", "q", 1, 1, 0, "Pending")
    assert job.gpus == 8.0
    pod = seen["pod"]
    assert (pod.job, pod.task, pod.index, pod.gpus, pod.status, pod.node) == (job.id, "worker", 0, 8.0, "Pending", None)
    assert seen["fit"] == (True, 0, [0, 1])
    assert seen["len"] == 1 and seen["after"][0] == 0.0 and seen["pod_after"] == "Allocated"
    # Kept past its session, neither reaches a later one.
    with pytest.raises(lahar.SessionError, match="ended"):
        seen["session"].pending_jobs()
    with pytest.raises(lahar.SessionError):
        seen["stmt"].commit()


def test_refused_operations_raise_and_exceptions_end_the_run(names_trace):
    class Wrong:
        def schedule(self, s):
            j = s.pending_jobs()[0]
            p = s.pending_pods(j)[0]
            stmt = s.statement()
            stmt.allocate(p, 0)
            with pytest.raises(lahar.SessionError, match="not Pending"):
                stmt.allocate(p, 1)
            stmt.discard()
            with pytest.raises(lahar.SessionError, match="committed or discarded"):
                stmt.commit()
            with pytest.raises(IndexError):
                s.job(10**6)
            with pytest.raises(ValueError):
                s.set_phase(j, "Sideways")
            raise KeyError("the policy's own bug")

    with pytest.raises(KeyError, match="the policy's own bug"):
        lahar.run(tiny(str(names_trace)), scheduler=Wrong())
    with pytest.raises(TypeError, match="schedule"):
        lahar.run(scheduler=object())


def test_an_open_statement_is_discarded(names_trace):
    class Forgetful:
        def schedule(self, s):
            for j in s.pending_jobs():
                for p in s.pending_pods(j):
                    n = s.first_fit(p)
                    if n is not None:
                        s.statement().allocate(p, n)  # never committed

    r = lahar.run(tiny(str(names_trace)), scheduler=Forgetful(), outputs="jobs,decisions")
    assert r.summary["metrics"]["completed"] == 0
    assert len(r.decisions[r.decisions.kind == "bind"]) == 0


def test_a_wakeup_left_after_the_last_job_does_not_stretch_the_run(names_trace):
    """The four jobs end by 3600 s; a timer the policy asked for at 10 days must
    not make the run (and every rate over its length) last 10 days."""

    class Timer(GangFifo):
        def schedule(self, s):
            super().schedule(s)
            s.wakeup(10 * 86400)

    r = lahar.run(tiny(str(names_trace)), scheduler=Timer(), outputs="jobs,timeseries")
    m = r.summary["metrics"]
    assert r.jobs.end_s.max() == m["makespan_s"] == m["sim_time_s"]
    assert m["sim_time_s"] < 86400
    fifo = tiny(str(names_trace))
    fifo["spec"]["scheduler"] = {"baseline": "gang-fifo"}
    same = lahar.run(fifo, outputs="jobs")
    assert m["gpu_allocation_rate"] == same.summary["metrics"]["gpu_allocation_rate"]


def test_the_new_session_members(names_trace):
    seen = {}

    class Look(GangFifo):
        def schedule(self, s):
            super().schedule(s)
            if s.index == 2:
                seen["jobs"] = s.jobs()
                seen["running"] = s.running_jobs()
                j = seen["running"][0]
                seen["job"] = s.job(j)
                seen["pods"] = [s.pod(p) for p in s.pods(j)]
                seen["node"] = s.node(seen["pods"][0].node)
                seen["now"] = s.now

    lahar.run(tiny(str(names_trace)), scheduler=Look(), outputs="jobs")
    job, pods, node = seen["job"], seen["pods"], seen["node"]
    assert len(seen["jobs"]) >= len(seen["running"]) >= 1
    assert job.running == len([p for p in pods if p.status == "Running"]) >= 1
    # Attained service: GPUs × seconds run so far (at ideal speed).
    assert job.attained == pytest.approx(job.gpus * seen["now"])
    assert all(p.priority == 0 for p in pods)
    assert node.used[0] == node.allocatable[0] - node.idle[0] >= pods[0].gpus
