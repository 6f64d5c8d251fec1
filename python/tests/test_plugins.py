"""Volcano plugins written in Python: registered by name, named in a conf, and
deciding exactly as their built-in twins on the same scenario."""

import runpy
import warnings

import pytest

import lahar
from conftest import EXAMPLES

# The tiers of the twins' confs; {x} is the plugin under test.
TWIN_CONF = """\
actions: "enqueue, allocate, backfill{preempt}"
tiers:
- plugins:
  - name: {prio}
  - name: gang{gang}
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: {binpack}
    arguments: {args}
"""

BINPACK_GPU = "{binpack.cpu: 0, binpack.memory: 0, binpack.resources: nvidia.com/gpu}"


def conf(prio="priority", binpack="binpack", args=BINPACK_GPU, preempt=False):
    # With preempt, gang lets victims go below their gang's size (as the issue's
    # production-style conf does), or single-gang jobs could never be victims.
    gang = "\n    enablePreemptable: false" if preempt else ""
    return TWIN_CONF.format(prio=prio, binpack=binpack, args=args, preempt=", preempt" if preempt else "", gang=gang)


def busy(priority_share=0):
    """The synthetic mix (4 × 8 GPUs) with a share of its jobs at priority 100."""
    sources = [
        {
            "synthetic": {
                "jobs": 160,
                "arrival": {"poisson": {"ratePerHour": 12}},
                "gpus": {1: 50, 2: 15, 4: 20, 8: 15},
                "cpuPerGpu": 8,
                "memoryPerGpu": "64Gi",
                "duration": {"lognormal": {"median": "1h", "sigma": 1.0, "min": "5m", "max": "1d"}},
                "queues": {"research": 3, "prod": 1},
            }
        }
    ]
    if priority_share:
        sources.append(
            {
                "synthetic": {
                    "jobs": priority_share,
                    "arrival": {"poisson": {"ratePerHour": 2}},
                    "gpus": {4: 1, 8: 1},
                    "cpuPerGpu": 8,
                    "memoryPerGpu": "64Gi",
                    "duration": {"lognormal": {"median": "30m", "sigma": 0.5, "min": "5m", "max": "4h"}},
                    "queues": {"research": 1},
                    "priority": 100,
                }
            }
        )
    return {
        "apiVersion": "lahar.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "busy"},
        "spec": {
            "seed": 3,
            "cluster": {
                "nodeGroups": [
                    {"name": "big", "count": 2, "gpus": 8, "cpu": 96, "memory": "1Ti"},
                    {"name": "small", "count": 3, "gpus": 4, "cpu": 48, "memory": "512Gi"},
                ]
            },
            "queues": [{"name": "research", "weight": 3}, {"name": "prod", "weight": 1}],
            "workload": sources,
        },
    }


def with_conf(scenario, text):
    s = dict(scenario)
    s["spec"] = dict(s["spec"], scheduler={"inline": text})
    return s


# binpack with `binpack.cpu: 0, binpack.memory: 0, binpack.resources:
# nvidia.com/gpu`, as lahar's binpack.rs computes it: examples/python/gpu_pack.py.
GpuBinpack = runpy.run_path(str(EXAMPLES / "python" / "gpu_pack.py"))["GpuPack"]


class BatchGpuBinpack(GpuBinpack):
    """The same, one call per pod for all the candidate nodes."""

    node_score = None  # not a method: the batch form is the one used

    def node_scores(self, session, pod, nodes):
        score = GpuBinpack.node_score
        return [score(self, session, pod, n) for n in nodes]


class UncachedGpuBinpack(GpuBinpack):
    """The same, every score asked."""

    score_by_node = False


class Priority:
    """priority.rs's job order, task order, preemption and starving."""

    def job_key(self, session, job):
        return -float(session.job(job).priority)

    def task_order(self, session, l, r):
        return session.pod(r).priority - session.pod(l).priority

    def preemptable(self, session, preemptor, candidates):
        p = session.pod(preemptor)
        pj = session.job(p.job).priority
        out = []
        for c in candidates:
            v = session.pod(c)
            if v.job != p.job:
                if session.job(v.job).priority < pj:
                    out.append(c)
            elif v.priority < p.priority:
                out.append(c)
        return out

    def job_starving(self, session, job):
        j = session.job(job)
        live = sum(1 for p in session.pods(job) if session.pod(p).status != "Deleted")
        waiting = sum(1 for p in session.pods(job) if session.pod(p).status == "Pipelined")
        return j.ready + waiting < live


@pytest.fixture
def plugins():
    names = {
        "py-binpack": GpuBinpack,
        "py-binpack-batch": BatchGpuBinpack,
        "py-binpack-uncached": UncachedGpuBinpack,
        "py-priority": Priority,
    }
    for name, cls in names.items():
        lahar.register_plugin(name, cls)
    yield names
    for name in names:
        lahar.unregister_plugin(name)


def same(a, b):
    for name in ("jobs", "pods", "decisions", "timeseries"):
        assert a.csv(name) == b.csv(name), name
    assert a.summary["metrics"] == b.summary["metrics"]


def test_a_python_node_score_decides_as_binpack(plugins):
    s = busy()
    built_in = lahar.run(with_conf(s, conf()))
    python = lahar.run(with_conf(s, conf(binpack="py-binpack", args="{weight: 1}")))
    batch = lahar.run(with_conf(s, conf(binpack="py-binpack-batch", args="{weight: 1}")))
    uncached = lahar.run(with_conf(s, conf(binpack="py-binpack-uncached", args="{weight: 1}")))
    assert built_in.summary["metrics"]["completed"] > 100
    same(python, built_in)
    same(batch, built_in)
    same(uncached, built_in)
    # The score matters here: without it the placements differ.
    unscored = lahar.run(with_conf(s, conf(args="{binpack.weight: 0}")))
    assert unscored.csv("pods") != built_in.csv("pods")


def test_a_python_priority_decides_as_priority_with_preemption(plugins):
    s = busy(priority_share=16)
    built_in = lahar.run(with_conf(s, conf(preempt=True)))
    python = lahar.run(with_conf(s, conf(prio="py-priority", preempt=True)))
    assert built_in.summary["metrics"]["preemptions"] > 0
    same(python, built_in)


def test_a_predicate_keeps_pods_off_nodes_and_says_why(tmp_path):
    class OnlyBig:
        def __init__(self, arguments):
            self.prefix = arguments["prefix"]

        def predicate(self, session, pod, node):
            name = session.node(node).name
            return True if name.startswith(self.prefix) else f"{name} is not a {self.prefix} node"

    lahar.register_plugin("only-big", OnlyBig)
    try:
        text = conf().replace("  - name: predicates\n", "  - name: predicates\n  - name: only-big\n    arguments: {prefix: big}\n")
        r = lahar.run(with_conf(busy(), text))
    finally:
        lahar.unregister_plugin("only-big")
    placed = r.pods.dropna(subset=["node"])
    assert len(placed) > 0
    assert set(placed.node.str.split("-").str[0]) == {"big"}


def test_a_preemptable_vote_can_protect_every_victim():
    s = busy(priority_share=16)
    base = lahar.run(with_conf(s, conf(preempt=True)), outputs="jobs")
    assert base.summary["metrics"]["preemptions"] > 0

    class Protect:
        def preemptable(self, session, preemptor, candidates):
            return []

    lahar.register_plugin("protect", Protect)
    try:
        # In priority's tier, the victims are what both let go: none.
        text = conf(preempt=True).replace("  - name: priority\n", "  - name: priority\n  - name: protect\n")
        protected = lahar.run(with_conf(s, text), outputs="jobs")
    finally:
        lahar.unregister_plugin("protect")
    assert protected.summary["metrics"]["preemptions"] == 0


def test_job_order_and_readiness_from_python(tmp_path):
    order = []

    class Last:
        """Runs the latest submitted job first; a job is ready only when all its pods are."""

        def __init__(self, arguments):
            pass

        def job_order(self, session, l, r):
            return session.job(r).submit - session.job(l).submit

        def job_ready(self, session, job):
            j = session.job(job)
            order.append(j.name)
            return None

    lahar.register_plugin("last-first", Last)
    try:
        text = conf().replace("  - name: priority\n", "  - name: last-first\n")
        r = lahar.run(with_conf(busy(), text), outputs="jobs")
    finally:
        lahar.unregister_plugin("last-first")
    assert order, "job_ready was asked"
    assert r.summary["metrics"]["completed"] > 0


def test_exceptions_and_wrong_answers_end_the_run():
    class Boom:
        def __init__(self, arguments):
            pass

        def node_score(self, session, pod, node):
            raise ZeroDivisionError("boom")

    class Wrong:
        def __init__(self, arguments):
            pass

        def node_score(self, session, pod, node):
            return "high"

    class Writes:
        def __init__(self, arguments):
            pass

        def node_score(self, session, pod, node):
            session.statement().allocate(pod, node)

    class BadFactory:
        def __init__(self, arguments):
            raise KeyError("needed")

    for name, cls, err, match in [
        ("boom", Boom, ZeroDivisionError, "boom"),
        ("wrong", Wrong, TypeError, "node_score: expected a number"),
        ("writes", Writes, lahar.SessionError, "read-only"),
        ("bad-factory", BadFactory, KeyError, "needed"),
    ]:
        lahar.register_plugin(name, cls)
        try:
            text = conf(binpack=name, args="{}")
            with pytest.raises(err, match=match):
                lahar.run(with_conf(busy(), text), outputs="jobs")
        finally:
            lahar.unregister_plugin(name)


def test_registration_rules_and_errors_name_the_plugin():
    with pytest.raises(ValueError, match="built in"):
        lahar.register_plugin("binpack", object)
    with pytest.raises(TypeError, match="callable"):
        lahar.register_plugin("x", 3)

    @lahar.register_plugin("decorated")
    class Decorated:
        def __init__(self, arguments):
            pass

    try:
        assert isinstance(Decorated, type)
        assert "decorated" in lahar.registered_plugins()
        # Flags are checked as every plugin's.
        with pytest.raises(lahar.InputError) as e:
            lahar.validate(with_conf(busy(), conf(binpack="decorated", args="{}").replace("arguments: {}", "enableNodeOrder: 3")))
        assert e.value.message.startswith("expected true or false")
        assert e.value.path.endswith("tiers[1].plugins[4].enableNodeOrder")
    finally:
        assert lahar.unregister_plugin("decorated")
    assert not lahar.unregister_plugin("decorated")

    # A factory that takes nothing refuses arguments it would drop.
    class Bare:
        pass

    lahar.register_plugin("bare", Bare)
    try:
        with pytest.raises(ValueError, match="takes no arguments; its conf entry gives: x"):
            lahar.run(with_conf(busy(), conf(binpack="bare", args="{x: 1}")), outputs="jobs")
    finally:
        lahar.unregister_plugin("bare")
    with pytest.raises(lahar.InputError) as e:
        lahar.validate(with_conf(busy(), conf(binpack="decorated", args="{}")))
    assert "unknown plugin `decorated`" in e.value.message


def test_a_plugin_in_a_sweep_cell_fails_that_cell(tmp_path):
    class Boom:
        def __init__(self, arguments):
            pass

        def node_score(self, session, pod, node):
            raise ValueError("no score today")

    scenario = tmp_path / "s.yaml"
    import json

    scenario.write_text(json.dumps(with_conf(busy(), conf(binpack="boom-sweep", args="{}"))))
    spec = f"""
apiVersion: lahar.io/v1alpha1
kind: Sweep
metadata: {{name: s}}
spec:
  scenario: {scenario}
  seeds: 1
"""
    lahar.register_plugin("boom-sweep", Boom)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = lahar.sweep(spec, out=tmp_path / "out")
    finally:
        lahar.unregister_plugin("boom-sweep")
    assert list(table.status) == ["failed"]
    err = next((tmp_path / "out" / "cells").glob("*/error.txt")).read_text()
    assert "Python plugin `boom-sweep` raised in node_score" in err and "no score today" in err


def test_ctrl_c_stops_a_sweep_and_resume_finishes_it(tmp_path):
    import _thread
    import json
    import time

    class Slow:
        """Presses Ctrl-C at its first score, then scores slowly."""

        pressed = False

        def node_score(self, session, pod, node):
            if not Slow.pressed:
                Slow.pressed = True
                _thread.interrupt_main()
            time.sleep(0.001)
            return 0.0

    scenario = tmp_path / "s.yaml"
    scenario.write_text(json.dumps(with_conf(busy(), conf(binpack="slow", args="{}"))))
    spec = {
        "apiVersion": "lahar.io/v1alpha1",
        "kind": "Sweep",
        "metadata": {"name": "s"},
        "spec": {"scenario": str(scenario), "seeds": 6},
    }
    out = tmp_path / "out"
    lahar.register_plugin("slow", Slow)
    try:
        started = time.perf_counter()
        with pytest.raises(KeyboardInterrupt):
            lahar.sweep(spec, jobs=1, out=out)
        assert time.perf_counter() - started < 20
        finished = [d for d in (out / "cells").iterdir() if (d / "summary.json").is_file()]
        assert len(finished) < 6
        # The cells left run on resume (scored at once now).
        lahar.register_plugin("slow", lambda arguments: type("Quick", (), {"node_score": lambda *a: 0.0})())
        table = lahar.sweep(spec, jobs=1, out=out, resume=True)
    finally:
        lahar.unregister_plugin("slow")
    assert list(table.status) == ["ok"] * 6
