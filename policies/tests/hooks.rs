//! Every plugin answers only the extension points it declares in `hooks()`: the
//! framework asks no plugin elsewhere, so an undeclared answer would be ignored
//! without a word. Each plugin of `plugins::ALL` runs under the check on a
//! contended cluster (two priorities, two queues, preempt and reclaim); a toy plugin
//! that answers job order without declaring it is caught.

use lahar_core::engine::{Engine, EngineConfig, IdealRuntime, RunOutput};
use lahar_core::model::cluster::{Cluster, Node};
use lahar_core::model::job::{JobId, JobSpec, TaskSpec};
use lahar_core::model::queue::Queue;
use lahar_core::model::resource::{ResourceNames, Resources};
use lahar_core::model::topology::Topology;
use lahar_core::session::{Scheduler, Session};
use lahar_core::util::time::{SimDuration, SimTime};
use lahar_core::world::World;
use lahar_policies::volcano::framework::{Framework, Slot};
use lahar_policies::volcano::plugin::{Plugin, PluginConf};
use lahar_policies::volcano::{Volcano, conf, plugins};
use std::cmp::Ordering;
use std::sync::{Arc, Mutex};

const S: u64 = 1_000_000;

fn node(name: &str) -> Node {
    Node::plain(name, Resources::new(64_000, 1 << 40, 8_000, 110), "H100")
}

/// Jobs of 1–3 pods of 4 GPUs, every third of high priority, arriving every 10 s
/// in two queues: more than the 4 nodes hold, so the later high-priority jobs
/// preempt and the queues reclaim.
fn jobs() -> Vec<JobSpec> {
    (0..12u64)
        .map(|i| {
            let replicas = 1 + (i % 3) as u32;
            let mut j = JobSpec {
                name: format!("j{i}"),
                kind: "test".into(),
                submit: SimTime(i * 10 * S),
                queue: lahar_core::model::queue::QueueId((i % 2) as u32),
                priority: if i % 3 == 2 { 100 } else { 0 },
                min_available: replicas,
                tasks: vec![TaskSpec {
                    name: "w".into(),
                    replicas,
                    min_available: replicas,
                    requests: Resources::new(1000, 1 << 30, 4000, 1),
                    ..TaskSpec::default()
                }],
                duration: SimDuration(120 * S),
                ..JobSpec::default()
            };
            j.min_resources = j.compute_min_resources();
            j
        })
        .collect()
}

fn run(sched: Box<dyn Scheduler>) -> RunOutput {
    let nodes: Vec<Node> = (0..4).map(|i| node(&format!("n{i}"))).collect();
    let cluster = Cluster::new(nodes, ResourceNames::default(), Topology::flat(4));
    let world = World::new(cluster, vec![Queue::new("a"), Queue::new("b")], jobs());
    // Periodic plugins (tdm's windows, rescheduling's interval) ask for sessions
    // forever: the run stops at two hours.
    // The World's invariants are checked after every instant too.
    let config = EngineConfig { horizon: Some(SimTime(7200 * S)), check_invariants: true, ..EngineConfig::default() };
    Engine::new(world, sched, Box::new(IdealRuntime), config).run()
}

/// A conf running `plugins` in a tier after priority, gang and conformance, with
/// preempt and reclaim (not shuffle: with `pdb`, Volcano's shuffle evicts every
/// pod no budget covers, every session; the check asks `victim_tasks` anyway).
fn conf_with(plugins: &str) -> conf::SchedulerConf {
    let text = format!(
        "actions: \"enqueue, allocate, backfill, preempt, reclaim\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n- plugins:\n{plugins}"
    );
    conf::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[test]
fn every_plugin_answers_only_what_it_declares() {
    // proportion and capacity exclude each other, and hierarchical drf excludes
    // proportion; the extender gets an address and no verb, so it calls nothing.
    let entry = |name: &str| match name {
        "extender" => "  - name: extender\n    arguments: {extender.urlPrefix: \"http://127.0.0.1:9\"}\n".to_string(),
        // Nodes carry no node group: not strict, or nothing would run.
        "nodegroup" => "  - name: nodegroup\n    arguments: {strict: false}\n".to_string(),
        n => format!("  - name: {n}\n"),
    };
    let mut ran = Vec::new();
    for set in [&["capacity"][..], &["proportion"][..]] {
        let others: String = plugins::names()
            .filter(|n| !["capacity", "proportion", "priority", "gang", "conformance"].contains(n) || set.contains(n))
            .map(entry)
            .collect();
        let out = run(Box::new(Volcano::new(conf_with(&others)).check_hooks(true)));
        let started = out.world.jobs.iter().filter(|j| j.first_start.is_some()).count();
        assert_eq!(started, 12, "the run schedules every job ({set:?})");
        ran.extend(plugins::names().filter(|n| others.contains(&format!("name: {n}\n"))));
    }
    // And hierarchical drf (its own hooks).
    let out = run(Box::new(
        Volcano::new(conf_with("  - name: drf\n    enableHierarchy: true\n  - name: predicates\n")).check_hooks(true),
    ));
    assert!(out.world.jobs.iter().any(|j| j.first_start.is_some()), "hdrf schedules");
    ran.extend(["priority", "gang", "conformance"]);
    ran.sort();
    ran.dedup();
    let mut all: Vec<&str> = plugins::names().collect();
    all.sort();
    assert_eq!(ran, all, "every plugin of ALL ran under the check");
}

/// Orders jobs by name, backwards, without declaring `Hooks::JOB_ORDER`.
struct Sly;

impl Plugin for Sly {
    fn name(&self) -> &'static str {
        "sly"
    }
    fn job_order(&self, ssn: &Session<'_>, l: JobId, r: JobId) -> Option<Ordering> {
        Some(ssn.job(r).spec.name.cmp(&ssn.job(l).spec.name))
    }
}

/// Runs the default conf's framework with [`Sly`] added, recording what
/// [`Framework::undeclared`] finds each session.
struct Checked {
    fw: Framework,
    found: Arc<Mutex<Vec<String>>>,
}

impl Scheduler for Checked {
    fn name(&self) -> &str {
        "checked"
    }
    fn schedule(&mut self, ssn: &mut Session<'_>) {
        self.fw.open(ssn);
        self.found.lock().unwrap().extend(self.fw.undeclared(ssn));
        self.fw.close(ssn);
    }
}

#[test]
fn an_undeclared_answer_is_caught() {
    let conf = conf::parse(conf::DEFAULT_CONF).unwrap();
    let mut fw = Framework::new(&conf);
    assert!(fw.tiers.iter().flatten().all(|s| s.plugin.name() != "sly"));
    fw.tiers[1].push(Slot { conf: PluginConf::new("sly"), mask: u32::MAX, plugin: Box::new(Sly) });
    let found = Arc::new(Mutex::new(Vec::new()));
    run(Box::new(Checked { fw, found: Arc::clone(&found) }));
    let found = found.lock().unwrap();
    assert!(!found.is_empty(), "the check finds the undeclared job order");
    assert!(found.iter().all(|f| f == "plugin `sly` answers job_order without declaring it in hooks()"), "{found:?}");
    // The built-in plugins of the same conf, alone, answer nothing undeclared.
    let found = Arc::new(Mutex::new(Vec::new()));
    run(Box::new(Checked { fw: Framework::new(&conf), found: Arc::clone(&found) }));
    assert!(found.lock().unwrap().is_empty());
}
