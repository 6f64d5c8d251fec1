"""lahar.validate and lahar.InputError: the CLI's errors, with file, line, column
and field path as attributes."""

import pytest

import lahar
from conftest import EXAMPLES, tiny

BAD = """apiVersion: lahar.io/v1alpha1
kind: Scenario
metadata: {name: bad}
spec:
  cluster:
    nodeGroups:
      - {name: n, count: 2, gpus: 8, cpu: 64, memory: 512Gi, colour: blue}
"""


def test_validate_counts_what_it_loaded():
    v = lahar.validate()
    assert v["scenario"] == "default"
    assert (v["nodes"], v["queues"], v["jobs"]) == (64, 2, 3000)
    assert v["warnings"] == [] and v["placement"] is False
    v = lahar.validate(set={"spec.workload[0].synthetic.jobs": 10})
    assert v["jobs"] == 10


NO_QUEUE = """apiVersion: lahar.io/v1alpha1
kind: Scenario
metadata: {name: bad}
spec:
  cluster:
    nodeGroups:
      - {name: n, count: 2, gpus: 8, cpu: 64, memory: 512Gi}
  queues:
    - {name: a, weight: 1}
  workload:
    - synthetic:
        jobs: 10
        gpus: {1: 1}
        duration: {lognormal: {median: 1h, sigma: 0.5}}
        queues: {a: 1, b: 1}
        arrival: {poisson: {ratePerHour: 1}}
"""


def test_an_unknown_field_names_its_place():
    with pytest.raises(lahar.InputError) as e:
        lahar.validate(BAD)
    err = e.value
    assert isinstance(err, ValueError)
    assert err.file == "<string>"
    assert (err.line, err.column) == (7, 62)
    assert err.message == (
        "unknown field `colour`, expected one of name, count, gpuModel, gpus, cpu, memory, pods, intraNode, "
        "nics, speed, labels, extendedResources, vgpu, vnpu, numa, absent"
    )
    assert len(err.errors) == 1 and err.errors[0]["line"] == 7
    # The text is the CLI's: the message, then the lines it points into.
    assert str(err).startswith("<string>:7:62: unknown field `colour`")
    assert "^ unknown field `colour`" in str(err)


def test_a_validation_error_names_its_field_path():
    with pytest.raises(lahar.InputError) as e:
        lahar.validate(NO_QUEUE)
    err = e.value
    assert err.path == "spec.workload[0].synthetic.queues.b"
    assert (err.line, err.column) == (15, 17)
    assert err.message == "queue `b` does not exist; defined queues: a"


def test_the_errors_are_the_clis(cli, tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text(BAD)
    printed = cli("validate", str(p), code=2).stderr
    with pytest.raises(lahar.InputError) as e:
        lahar.validate(p)
    assert e.value.file == str(p)
    # The CLI prints `error: ` before the first line and indents the others.
    assert same_lines(str(e.value), printed)
    # A bad --set is the command line's fault, as in the CLI.
    mix = str(EXAMPLES / "synthetic-mix.yaml")
    with pytest.raises(lahar.InputError) as e:
        lahar.validate(mix, set=["spec.cluster.nodeGroups[0].count=-1"])
    assert e.value.file == "<command line>"
    printed = cli("validate", "--set", "spec.cluster.nodeGroups[0].count=-1", mix, code=2).stderr
    assert same_lines(str(e.value), printed)
    with pytest.raises(lahar.InputError, match="--set"):
        lahar.run(set=["no equals sign"])


def same_lines(text, printed):
    strip = lambda t: [line.strip().removeprefix("error: ") for line in t.strip().splitlines()]  # noqa: E731
    return strip(text) == strip(printed)[: len(strip(text))]


def test_missing_files_and_wrong_arguments():
    with pytest.raises(lahar.InputError) as e:
        lahar.run("no/such/scenario.yaml")
    assert e.value.file == "no/such/scenario.yaml" and "cannot read scenario" in e.value.message
    with pytest.raises(TypeError):
        lahar.run(42)
    with pytest.raises(TypeError):
        lahar.run(EXAMPLES / "synthetic-mix.yaml", snapshot="x.yaml")
    with pytest.raises(lahar.InputError) as e:
        lahar.run(tiny("no-such-trace.csv"))
    assert "no-such-trace.csv" in str(e.value) and e.value.path.startswith("spec.workload[0].trace")


def test_a_snapshot_loads():
    snap = EXAMPLES / "snapshot" / "cluster.yaml"
    # Three of its jobs carry no run time: said as a warning, not an error.
    with pytest.warns(lahar.LaharWarning, match="3 jobs have no run time"):
        v = lahar.validate(snapshot=snap)
    assert v["nodes"] > 0
