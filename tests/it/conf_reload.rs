//! An operator edits the scheduler's conf during the run (`spec.timeline`'s
//! `conf`): Volcano's scheduler watches its conf file and reloads it, and its
//! next session runs the new actions, plugins and arguments. Hand-checked
//! through the binary; the equivalence property with `--exhaustive` over runs
//! that switch confs; every refusal through `lahar validate`.

use super::equivalence::{first_difference, outputs_at};
use super::equivalence_contention::{CONFS, jobs, text};
use super::node_timeline::rows;
use super::*;
use proptest::prelude::*;

/// A conf without preempt (`allocate, backfill`; gang lets its jobs be
/// victims), and the same with preempt.
const NO_PREEMPT: &str = "actions: \"allocate, backfill\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n    enablePreemptable: false\n  - name: conformance\n- plugins:\n  - name: drf\n  - name: predicates\n  - name: proportion\n  - name: nodeorder\n";

/// One 8-GPU node; `low` (priority 10, 10 h) from 0, `high` (priority 1000,
/// 2 h) from 1 h, each one 8-GPU pod; scheduled by `a.conf`, with `timeline`.
fn one_node(timeline: &str) -> String {
    scenario(
        "    nodes: [{name: n0, gpus: 8, cpu: 64, memory: 512Gi}]",
        &format!(
            "  priorityClasses:\n    - {{name: high, value: 1000}}\n    - {{name: low, value: 10}}\n  scheduler: {{conf: a.conf}}\n{timeline}  workload:\n    - jobs:\n        - {{name: low, priorityClassName: low, duration: 10h, tasks: [{{name: w, replicas: 1, resources: {{nvidia.com/gpu: 8}}}}]}}\n        - {{name: high, priorityClassName: high, submitAt: 1h, duration: 2h, tasks: [{{name: w, replicas: 1, resources: {{nvidia.com/gpu: 8}}}}]}}\n"
        ),
    )
}

/// Writes `scenario` and the confs `a.conf` (no preempt) and `b.conf` (with
/// preempt) in a new folder.
fn folder(scenario: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, path) = write_scenario(scenario);
    std::fs::write(dir.path().join("a.conf"), NO_PREEMPT).unwrap();
    std::fs::write(dir.path().join("b.conf"), NO_PREEMPT.replace("allocate, backfill", "allocate, preempt, backfill"))
        .unwrap();
    (dir, path)
}

/// By hand: under `a.conf` nothing preempts, so `high` (admitted at 1 h by
/// allocate) waits behind `low`. At 3 h the operator's conf adds preempt; the
/// session at that instant evicts `low`'s pod for `high`'s, which binds once the
/// victim's 30 s grace period is over (10,830 s) and runs 2 h (to 18,030 s);
/// `low`, without checkpoints, lost its 3 h (8 × 10,800 = 86,400 GPU·s) and runs
/// its 10 h again from 18,030 s to 54,030 s. Without the edit `high` waits for
/// `low` to end at 10 h.
#[test]
fn a_reloaded_conf_turns_preempt_on() {
    let (dir, path) = folder(&one_node("  timeline:\n    - {at: 3h, conf: b.conf}\n"));
    let out = dir.path().join("o");
    lahar().arg("run").arg("-q").arg(&path).arg("--out").arg(&out).assert().success();
    let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap();
    let evicts: Vec<(String, String, String)> = rows(&read("decisions.csv"))
        .into_iter()
        .filter(|r| r[3] == "evict" || r[3] == "pipeline" || r[3] == "bind")
        .map(|r| (r[1].clone(), r[2].clone(), r[5].clone()))
        .collect();
    let want = [
        ("0", "allocate", "default/low-w-0"),
        ("10800", "preempt", "default/low-w-0"),
        ("10800", "preempt", "default/high-w-0"),
        ("10830", "allocate", "default/high-w-0"),
        ("18030", "allocate", "default/low-w-0"),
    ]
    .map(|(t, a, p)| (t.to_string(), a.to_string(), p.to_string()));
    assert_eq!(evicts, want);
    let jobs: Vec<(String, String, String, String)> = rows(&read("jobs.csv"))
        .into_iter()
        .map(|r| (r[0].clone(), r[5].clone(), r[6].clone(), r[16].clone()))
        .collect();
    let want = [("high", "10830", "18030", "0"), ("low", "0", "54030", "86400")]
        .map(|(a, b, c, d)| (a.to_string(), b.to_string(), c.to_string(), d.to_string()));
    assert_eq!(jobs, want);
    assert_eq!(read("timeline.csv"), "t_s,step,action,target,outcome,note\n10800,spec.timeline[0],conf,b.conf,done,\n");

    // Without the edit, no preemption: `high` starts when `low` ends.
    let (dir, path) = folder(&one_node(""));
    let out = dir.path().join("o");
    lahar().arg("run").arg("-q").arg(&path).arg("--out").arg(&out).assert().success();
    let jobs = std::fs::read_to_string(out.join("jobs.csv")).unwrap();
    let starts: Vec<(String, String)> = rows(&jobs).into_iter().map(|r| (r[0].clone(), r[5].clone())).collect();
    assert_eq!(starts, [("low".to_string(), "0".to_string()), ("high".to_string(), "36000".to_string())]);
}

/// The run keeps each conf it reloads once, in the order the scenario names
/// them, headed by the file as written (quoted: a newline in a name stays in
/// its header), in input-timeline-confs.yaml; `lahar report` embeds it. A run
/// without conf steps writes no such file.
#[test]
fn the_run_keeps_every_conf_it_reloads() {
    let timeline = "  timeline:\n    - {at: 3h, conf: b.conf}\n    - {at: 5h, conf: \"c\\nd.conf\"}\n    - {at: 4h, conf: ./b.conf}\n    - {at: 6h, conf: a.conf}\n";
    let (dir, path) = folder(&one_node(timeline));
    let odd = NO_PREEMPT.replace("name: drf", "name: drf\n    enablePreemptable: false").replace("\n", "\n\n");
    std::fs::write(dir.path().join("c\nd.conf"), odd.trim_end()).unwrap();
    let out = dir.path().join("o");
    lahar().arg("run").arg("-q").arg(&path).arg("--out").arg(&out).assert().success();
    let kept = std::fs::read_to_string(out.join("input-timeline-confs.yaml")).unwrap();
    let b = NO_PREEMPT.replace("allocate, backfill", "allocate, preempt, backfill");
    let want = format!(
        "# The volcano-scheduler.conf files spec.timeline reloads, each once, in the order the scenario names them.\n--- # conf 0: \"b.conf\", first reloaded by spec.timeline[0]\n{b}--- # conf 1: \"c\\nd.conf\", first reloaded by spec.timeline[1]\n{}\n--- # conf 2: \"a.conf\", first reloaded by spec.timeline[3]\n{NO_PREEMPT}",
        odd.trim_end()
    );
    assert_eq!(kept, want);
    lahar().arg("report").arg(&out).assert().success();
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("The confs the timeline reloads (input-timeline-confs.yaml)"), "{html}");
    assert!(html.contains("--- # conf 1: &quot;c\\nd.conf&quot;, first reloaded by spec.timeline[1]"), "{html}");
    // The operators' steps, in the order carried out, as timeline.csv lists them.
    assert!(html.contains("<h3>What the operators did (spec.timeline)</h3>"), "{html}");
    assert!(html.contains("<summary>timeline.csv: 4 rows</summary>"), "{html}");
    // A timeline.csv that is not lahar's is refused, named.
    let theirs = std::fs::read_to_string(out.join("timeline.csv")).unwrap().replace("outcome", "result");
    std::fs::write(out.join("timeline.csv"), theirs).unwrap();
    let refused = lahar().arg("report").arg(&out).assert().code(2);
    let e = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(
        e.contains("timeline.csv") && e.contains("line 1: expected the columns t_s,step,action,target,outcome,note"),
        "{e}"
    );
    let row = |t: &str, i: u32, f: &str| {
        format!("<tr><td>{t}</td><td>spec.timeline[{i}]</td><td>conf</td><td>{f}</td><td>done</td><td></td></tr>")
    };
    let at = |r: String| html.find(&r).unwrap_or_else(|| panic!("no {r} in {html}"));
    assert!(at(row("10800", 0, "b.conf")) < at(row("14400", 2, ".&#x2f;b.conf")));
    assert!(at(row("14400", 2, ".&#x2f;b.conf")) < at(row("21600", 3, "a.conf")));

    let (dir, path) = folder(&one_node(""));
    let out = dir.path().join("o");
    lahar().arg("run").arg("-q").arg(&path).arg("--out").arg(&out).assert().success();
    assert!(out.join("input-scheduler.conf").exists());
    assert!(!out.join("input-timeline-confs.yaml").exists());
}

/// `gang-never-valid` looks at every conf of the run: a job whose gang
/// counts a dependent task never starts when each conf has the gang plugin,
/// and waits only while one that has it is in force when another lacks it
/// (the gangless conf reloaded at 1 h lets it start then).
#[test]
fn the_gang_warning_reads_every_conf() {
    let job = "  workload:\n    - jobs:\n        - {name: j, minAvailable: 2, duration: 1h, tasks: [{name: a, replicas: 1, resources: {nvidia.com/gpu: 1}}, {name: b, replicas: 1, dependsOn: {name: [a]}, resources: {nvidia.com/gpu: 1}}]}\n";
    let warned = |timeline: &str, gangless: bool| {
        let text = scenario(
            "    nodes: [{name: n0, gpus: 8, cpu: 64, memory: 512Gi}]",
            &format!("  scheduler: {{conf: a.conf}}\n{timeline}{job}"),
        );
        let (dir, path) = folder(&text);
        std::fs::write(
            dir.path().join("c.conf"),
            NO_PREEMPT.replace("  - name: gang\n    enablePreemptable: false\n", ""),
        )
        .unwrap();
        if gangless {
            std::fs::write(dir.path().join("a.conf"), std::fs::read(dir.path().join("c.conf")).unwrap()).unwrap();
        }
        let out = dir.path().join("o");
        let run = lahar().arg("run").arg(&path).arg("--out").arg(&out).assert().success();
        let jobs = std::fs::read_to_string(out.join("jobs.csv")).unwrap();
        let start = rows(&jobs)[0][5].clone();
        (String::from_utf8_lossy(&run.get_output().stderr).into_owned(), start)
    };
    let (e, start) = warned("  timeline:\n    - {at: 1h, conf: b.conf}\n", false);
    assert!(
        e.contains("1 job(s) can never start (the first `default/j`: its gang needs 2 pods, and only 1 exist"),
        "{e}"
    );
    assert!(e.contains("Volcano's gang plugin refuses"), "{e}");
    assert_eq!(start, "");
    let (e, start) = warned("  timeline:\n    - {at: 1h, conf: c.conf}\n", false);
    assert!(
        e.contains("1 job(s) cannot start while a conf with the gang plugin is in force (the first `default/j`: its gang needs 2 pods, and only 1 exist"),
        "{e}"
    );
    assert!(e.contains("Volcano's gang plugin (1 of the run's 2 confs (spec.scheduler's and those spec.timeline reloads) have it) refuses"), "{e}");
    assert_eq!(start, "3600");
    let (e, start) = warned("", true);
    assert!(!e.contains("gang"), "{e}");
    assert_eq!(start, "0");
}

/// The contended scenario of `equivalence_contention` (of `nodes` and `jobs`)
/// starting under its conf `first` and reloading `c{conf}.conf` at each
/// (instant in seconds, conf) of `edits`.
fn reloads_text(nodes: u32, first: usize, edits: &[(u32, usize)], jobs: &[super::equivalence_contention::J]) -> String {
    let mut timeline = String::from("  timeline:\n");
    for (at, c) in edits {
        timeline += &format!("    - {{at: {at}s, conf: c{c}.conf}}\n");
    }
    text(nodes, CONFS[first], jobs).replacen("  workload:\n", &format!("{timeline}  workload:\n"), 1)
}

/// A folder with `c0.conf`, `c1.conf`, `c2.conf`: [`CONFS`] as files.
fn conf_files() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (i, c) in CONFS.iter().enumerate() {
        std::fs::write(dir.path().join(format!("c{i}.conf")), c.replace("\n      ", "\n")).unwrap();
    }
    dir
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Contended scenarios switching confs at up to three instants:
    /// decisions.csv and pods.csv byte-identical with and without
    /// `--exhaustive` (the scheduler that takes over keeps no memo of the one
    /// it replaces).
    #[test]
    fn sessions_after_a_reload_decide_as_the_exhaustive_walk(
        nodes in 3u32..9,
        first in 0usize..3,
        edits in prop::collection::vec((0u32..9000, 0usize..3), 1..4),
        jobs in jobs(),
    ) {
        let dir = conf_files();
        let t = reloads_text(nodes, first, &edits, &jobs);
        let fast = outputs_at(&t, dir.path(), false, |_| {});
        let full = outputs_at(&t, dir.path(), true, |_| {});
        prop_assert!(fast.0 == full.0, "decisions.csv differs:\n{}", first_difference(&fast.0, &full.0));
        prop_assert!(fast.1 == full.1, "pods.csv differs:\n{}", first_difference(&fast.1, &full.1));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    /// Reloading the conf in force at instants a session runs anyway (jobs'
    /// arrivals) changes nothing: the new scheduler, which starts with no memo
    /// of the old one's sessions, decides as the old one would have.
    /// (Elsewhere the session an edit calls for may repeat what the last one
    /// did: a pipeline not yet bound is made again each session.)
    #[test]
    fn reloading_the_same_conf_changes_no_decision(
        nodes in 3u32..9,
        first in 0usize..3,
        at in prop::collection::vec(any::<prop::sample::Index>(), 1..4),
        jobs in jobs(),
    ) {
        let dir = conf_files();
        let edits: Vec<(u32, usize)> = at.iter().map(|i| (jobs[i.index(jobs.len())].submit, first)).collect();
        let reloaded = outputs_at(&reloads_text(nodes, first, &edits, &jobs), dir.path(), false, |_| {});
        let kept = outputs_at(&text(nodes, CONFS[first], &jobs), dir.path(), false, |_| {});
        prop_assert!(reloaded.0 == kept.0, "decisions.csv differs:\n{}", first_difference(&reloaded.0, &kept.0));
        prop_assert!(reloaded.1 == kept.1, "pods.csv differs:\n{}", first_difference(&reloaded.1, &kept.1));
    }
}

/// The decisions and pod records of the contended scenario of `nodes` and
/// `jobs` under the `tiresias` baseline, handed at `at` to a second `tiresias`
/// (the engine's conf edit, as a library user can make it between any two
/// schedulers), `planted` as given: Debug text, to compare.
fn tiresias_handover(
    nodes: u32,
    jobs: &[super::equivalence_contention::J],
    at: u32,
    exhaustive: bool,
    kept_journals: bool,
) -> String {
    use lahar_core::timeline::{Operation, Step};
    use lahar_core::util::time::{SimDuration, SimTime};
    let t = text(nodes, CONFS[0], jobs);
    let (head, rest) = t.split_once("  scheduler:\n").expect("scheduler");
    let (_, tail) = rest.split_once("  workload:\n").expect("workload");
    let t = format!("{head}  scheduler: {{baseline: tiresias}}\n  workload:\n{tail}");
    let mut s = lahar::scenario::load_str(&t, "t.yaml", std::path::Path::new("")).unwrap_or_else(|e| panic!("{e}"));
    s.engine.exhaustive = exhaustive;
    s.engine.planted.kept_journals = kept_journals;
    let at = SimTime::ZERO.plus(SimDuration::from_secs(u64::from(at)));
    s.engine.timeline.push(Step {
        at,
        op: Operation::Conf(0),
        place: "handover".into(),
        action: "conf",
        target: "b".into(),
    });
    let seed = s.seed;
    let mut e = lahar::build_engine(s);
    e.set_reloads(vec![Box::new(move || lahar_policies::baseline("tiresias", seed).expect("tiresias"))]);
    let out = e.run();
    format!("{:?}\n{:?}", out.decisions, out.pods)
}

/// How many of eight fixed contended scenarios, handed from one `tiresias` to
/// another at the arrival of their middle job, decide otherwise than the
/// exhaustive walk (which rebuilds tiresias's book every session), with the
/// journals kept across the handover or not.
fn handovers_differing(kept_journals: bool) -> usize {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = (3u32..9, jobs());
    (0..8)
        .filter(|_| {
            let (nodes, jobs) = strategy.new_tree(&mut runner).expect("value").current();
            let at = jobs[jobs.len() / 2].submit;
            tiresias_handover(nodes, &jobs, at, false, kept_journals)
                != tiresias_handover(nodes, &jobs, at, true, kept_journals)
        })
        .count()
}

/// A scheduler that takes over walks every job at its first session: the
/// World's journals of changed jobs start again at the handover
/// (`World::restart_journals`), so `tiresias`, which follows them, decides as
/// the exhaustive walk; and the comparison can fail — with the journals left
/// running (`planted.kept_journals`), the new book sees only the jobs changed
/// since the old one's last session, and fixed scenarios decide otherwise.
#[test]
fn a_scheduler_taking_over_walks_every_job() {
    assert_eq!(handovers_differing(false), 0);
    assert!(handovers_differing(true) > 0, "no scenario showed the kept journals");
}

/// `lahar validate` of the one-node scenario with `timeline` (its scheduler
/// `scheduler`), beside `a.conf`, `b.conf` and `extra` (file, text): stderr,
/// asserting exit 2.
fn refused(scheduler: &str, timeline: &str, extra: (&str, &str)) -> String {
    let text = one_node(timeline).replace("scheduler: {conf: a.conf}", scheduler);
    let (dir, path) = folder(&text);
    std::fs::write(dir.path().join(extra.0), extra.1).unwrap();
    let out = lahar().arg("validate").arg(&path).assert().code(2);
    String::from_utf8_lossy(&out.get_output().stderr).into_owned()
}

/// Each refusal names the step's field (or the conf file's line) and what is
/// expected, before any work.
#[test]
fn refused_reloads_exit_2_with_their_place() {
    let conf = "scheduler: {conf: a.conf}";
    let e = refused(conf, "  timeline:\n    - {at: 3h, conf: missing.conf}\n", ("x", ""));
    assert!(e.contains("scenario.yaml:") && e.contains("spec.timeline[0].conf: cannot read"), "{e}");
    assert!(e.contains("missing.conf"), "{e}");
    // The conf is checked as spec.scheduler.conf is: its own line and column.
    let bad = "actions: \"allocate, bogus\"\ntiers:\n- plugins:\n  - name: gang\n";
    let e = refused(conf, "  timeline:\n    - {at: 3h, conf: bad.conf}\n", ("bad.conf", bad));
    assert!(e.contains("bad.conf:1:10: actions: unknown action `bogus`"), "{e}");
    // A conf that would change how devices are modelled.
    let numa = format!("{NO_PREEMPT}  - name: numa-aware\n");
    let e = refused(conf, "  timeline:\n    - {at: 3h, conf: numa.conf}\n", ("numa.conf", &numa));
    assert!(e.contains("spec.timeline[0].conf: `") && e.contains("changes the numa-aware plugin"), "{e}");
    // A baseline reads no conf.
    let e = refused("scheduler: {baseline: fifo}", "  timeline:\n    - {at: 3h, conf: b.conf}\n", ("x", ""));
    assert!(
        e.contains(
            "spec.timeline[0].conf: reloads a volcano-scheduler.conf, but the run's scheduler is the baseline `fifo`"
        ),
        "{e}"
    );
    // One action a step.
    let e = refused(conf, "  timeline:\n    - {at: 3h, conf: b.conf, cordon: n0}\n", ("x", ""));
    assert!(e.contains("spec.timeline[0]: expected exactly one action of") && e.contains("got cordon, conf"), "{e}");
}

/// A run under a policy given in code (the Python package's `scheduler=`)
/// reads no conf: a scenario that reloads one is refused before the run.
#[test]
fn a_policy_given_in_code_refuses_a_reload() {
    let (dir, path) = folder(&one_node("  timeline:\n    - {at: 3h, conf: b.conf}\n"));
    let s = lahar::scenario::load_file(&path).unwrap_or_else(|e| panic!("{e}"));
    let policy = lahar_policies::baseline("fifo", 1).expect("fifo");
    let opts = lahar::RunOptions { no_write: true, ..Default::default() };
    let e = lahar::run_policy(s, &opts, Some(policy)).err().expect("refused").to_string();
    assert!(e.contains("spec.timeline[0].conf") && e.contains("the policy `fifo`, which reads no conf"), "{e}");
    drop(dir);
}

/// examples/volcano/conf-edit.yaml behaves as its comments say.
#[test]
fn the_conf_edit_example_does_what_it_says() {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/volcano/conf-edit.yaml");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    lahar().arg("run").arg("-q").arg(&p).arg("--out").arg(&out).assert().success();
    let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap();
    let evicted: Vec<(String, String)> = rows(&read("decisions.csv"))
        .into_iter()
        .filter(|r| r[3] == "evict")
        .map(|r| (r[1].clone(), r[5].clone()))
        .collect();
    let want = [("14400", "default/sweep-a-trial-1"), ("14400", "default/sweep-b-trial-1")]
        .map(|(t, p)| (t.to_string(), p.to_string()));
    assert_eq!(evicted, want);
    let jobs: Vec<(String, String, String, String)> = rows(&read("jobs.csv"))
        .into_iter()
        .map(|r| (r[0].clone(), r[5].clone(), r[6].clone(), r[16].clone()))
        .collect();
    let want =
        [("finetune", "14430", "21630", "0"), ("sweep-a", "0", "50430", "0"), ("sweep-b", "300", "64830", "225600")]
            .map(|(a, b, c, d)| (a.to_string(), b.to_string(), c.to_string(), d.to_string()));
    assert_eq!(jobs, want);
    // Without the edit, finetune waits for sweep-a to end at 12 h.
    let text = std::fs::read_to_string(&p).unwrap();
    let kept = text.replace("  timeline:\n    - {at: 4h, conf: conf-edit/with-preempt.conf}\n", "");
    assert_ne!(kept, text);
    let copy = dir.path().join("examples");
    std::fs::create_dir_all(copy.join("conf-edit")).unwrap();
    for f in ["allocate-only.conf", "with-preempt.conf"] {
        std::fs::copy(p.parent().unwrap().join("conf-edit").join(f), copy.join("conf-edit").join(f)).unwrap();
    }
    std::fs::write(copy.join("kept.yaml"), kept).unwrap();
    let out2 = dir.path().join("o2");
    lahar().arg("run").arg("-q").arg(copy.join("kept.yaml")).arg("--out").arg(&out2).assert().success();
    let jobs = std::fs::read_to_string(out2.join("jobs.csv")).unwrap();
    let finetune = rows(&jobs).into_iter().find(|r| r[0] == "finetune").unwrap();
    assert_eq!(finetune[5], "43200");
}

/// A run reloads at most 1,000 different confs (each held parsed for the
/// run); steps naming one conf again share it, however many they are.
#[test]
fn at_most_a_thousand_different_confs() {
    let steps = |n: usize, distinct: bool| -> String {
        let mut t = String::from("  timeline:\n");
        for i in 0..n {
            let f = if distinct { format!("c{i}.conf") } else { "c0.conf".to_string() };
            t += &format!("    - {{at: {}s, conf: {f}}}\n", i + 1);
        }
        t
    };
    let write = |timeline: &str| {
        let (dir, path) = folder(&one_node(timeline));
        for i in 0..1001 {
            std::fs::write(dir.path().join(format!("c{i}.conf")), NO_PREEMPT).unwrap();
        }
        (dir, path)
    };
    let (_dir, path) = write(&steps(1001, true));
    let out = lahar().arg("validate").arg(&path).assert().code(2);
    let e = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(e.contains("spec.timeline[1000].conf: more than 1000 different confs reloaded in one run"), "{e}");
    assert_eq!(e.matches("error:").count(), 1, "{e}");
    let (_dir, path) = write(&steps(3000, false));
    lahar().arg("validate").arg(&path).assert().success();
}
