//! Volcano's `extender` plugin: each configured verb is an extension point
//! answered by an external HTTP server (`POST <urlPrefix>/<verb>`, JSON in and
//! out, shapes as in Volcano's `argument.go`), with Volcano's error rules: a
//! failed call counts as a pass (or permit) when `extender.ignorable`, else as a
//! failure; pods that request none of `extender.managedResources` (when given)
//! are not the extender's business.
//!
//! Outputs stay deterministic as long as the extender answers deterministically
//! within `extender.httpTimeout`.

pub mod http;
pub mod wire;

use crate::volcano::args::{ArgSpec, ArgType, ArgValue, Args, problem};
use crate::volcano::plugin::{Hooks, Plugin, PluginSpec, Vote};
use http::Endpoint;
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{JobId, PodId};
use lahar_core::model::queue::QueueId;
use lahar_core::session::Session;
use serde_json::{Value, json};
use std::time::Duration;

/// The plugin's entry in [`super::ALL`].
pub const SPEC: PluginSpec = PluginSpec::new("extender", |pc| Box::new(Extender::new(&pc.args))).args(&[
    ArgSpec::new("extender.urlPrefix", ArgType::Str, "", "the server's http:// address")
        .checked(check_url)
        .required("the extender's address is required, such as http://127.0.0.1:8713 (Volcano would fail every call)"),
    ArgSpec::new("extender.httpTimeout", ArgType::Duration, "1s", "the bound on a whole call"),
    ArgSpec::new("extender.onSessionOpenVerb", ArgType::Str, "", "the path of that call").checked(check_verb_arg),
    ArgSpec::new("extender.onSessionCloseVerb", ArgType::Str, "", "the path of that call").checked(check_verb_arg),
    ArgSpec::new("extender.predicateVerb", ArgType::Str, "", "the path of that call").checked(check_verb_arg),
    ArgSpec::new("extender.prioritizeVerb", ArgType::Str, "", "the path of that call").checked(check_verb_arg),
    ArgSpec::new("extender.preemptableVerb", ArgType::Str, "", "the path of that call").checked(check_verb_arg),
    ArgSpec::new("extender.reclaimableVerb", ArgType::Str, "", "the path of that call").checked(check_verb_arg),
    ArgSpec::new("extender.queueOverusedVerb", ArgType::Str, "", "the path of that call").checked(check_verb_arg),
    ArgSpec::new("extender.jobEnqueueableVerb", ArgType::Str, "", "the path of that call").checked(check_verb_arg),
    ArgSpec::new("extender.jobEnqueuedVerb", ArgType::Str, "", "the path of that call").checked(check_verb_arg),
    ArgSpec::new("extender.jobReadyVerb", ArgType::Str, "", "the path of that call").checked(check_verb_arg),
    ArgSpec::new("extender.allocateFuncVerb", ArgType::Str, "", "refused unless empty").checked(check_undo_verb),
    ArgSpec::new("extender.deallocateFuncVerb", ArgType::Str, "", "refused unless empty").checked(check_undo_verb),
    ArgSpec::new("extender.ignorable", ArgType::Bool, "false", "a failed call passes, permits and scores nothing"),
    ArgSpec::new("extender.managedResources", ArgType::List, "", "resources whose pods are sent").checked(check_names),
]);

fn check_url(_: &str, v: &ArgValue) -> Vec<(String, String)> {
    match v {
        ArgValue::Str(u) => http::Endpoint::parse(u).err().map(problem).unwrap_or_default(),
        _ => Vec::new(),
    }
}

fn check_verb_arg(_: &str, v: &ArgValue) -> Vec<(String, String)> {
    match v {
        ArgValue::Str(verb) => http::check_verb(verb).err().map(problem).unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// An allocate or deallocate handler, which may undo a bind.
fn check_undo_verb(k: &str, v: &ArgValue) -> Vec<(String, String)> {
    match v {
        ArgValue::Str(s) if !s.is_empty() => problem(
            "an allocate or deallocate handler that may undo a bind is not modelled (lahar's binds are final within an action); leave it empty",
        ),
        _ => check_verb_arg(k, v),
    }
}

fn check_names(_: &str, v: &ArgValue) -> Vec<(String, String)> {
    match v {
        ArgValue::List(l) if l.iter().any(|x| !matches!(x, ArgValue::Str(_))) => {
            problem("expected a list of resource names")
        }
        _ => Vec::new(),
    }
}

/// Volcano's default `extender.httpTimeout`.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1);

/// The verbs, `None` where not configured.
#[derive(Clone, Debug, Default)]
struct Verbs {
    open: Option<String>,
    close: Option<String>,
    predicate: Option<String>,
    prioritize: Option<String>,
    preemptable: Option<String>,
    reclaimable: Option<String>,
    overused: Option<String>,
    enqueueable: Option<String>,
    enqueued: Option<String>,
    ready: Option<String>,
}

/// The plugin.
#[derive(Debug)]
pub struct Extender {
    endpoint: Endpoint,
    timeout: Duration,
    verbs: Verbs,
    ignorable: bool,
    /// `extender.managedResources`, as resource dimensions of the cluster (names
    /// the cluster does not have are requested by no pod).
    managed: Vec<String>,
    /// False for a session whose `onSessionOpen` failed (not ignorable): Volcano
    /// then registers nothing.
    on: bool,
}

/// The argument keys (Volcano's `parseExtenderConfig`).
pub const STRING_KEYS: &[&str] = &[
    "extender.urlPrefix",
    "extender.onSessionOpenVerb",
    "extender.onSessionCloseVerb",
    "extender.predicateVerb",
    "extender.prioritizeVerb",
    "extender.preemptableVerb",
    "extender.reclaimableVerb",
    "extender.queueOverusedVerb",
    "extender.jobEnqueueableVerb",
    "extender.jobEnqueuedVerb",
    "extender.jobReadyVerb",
    "extender.allocateFuncVerb",
    "extender.deallocateFuncVerb",
];

impl Extender {
    /// From the plugin's arguments (checked by the conf loader).
    pub fn new(args: &Args) -> Extender {
        let verb = |k: &str| args.str(k).filter(|v| !v.is_empty()).map(str::to_string);
        let timeout = args
            .str("extender.httpTimeout")
            .and_then(lahar_core::util::time::parse_go_duration)
            .map(Duration::from_micros)
            .unwrap_or(DEFAULT_TIMEOUT);
        Extender {
            endpoint: Endpoint::parse(args.str("extender.urlPrefix").unwrap_or_default())
                .expect("urlPrefix checked by the conf loader"),
            timeout,
            verbs: Verbs {
                open: verb("extender.onSessionOpenVerb"),
                close: verb("extender.onSessionCloseVerb"),
                predicate: verb("extender.predicateVerb"),
                prioritize: verb("extender.prioritizeVerb"),
                preemptable: verb("extender.preemptableVerb"),
                reclaimable: verb("extender.reclaimableVerb"),
                overused: verb("extender.queueOverusedVerb"),
                enqueueable: verb("extender.jobEnqueueableVerb"),
                enqueued: verb("extender.jobEnqueuedVerb"),
                ready: verb("extender.jobReadyVerb"),
            },
            ignorable: args.bool("extender.ignorable", false),
            managed: match args.0.get("extender.managedResources") {
                Some(ArgValue::List(l)) => l
                    .iter()
                    .filter_map(|v| match v {
                        ArgValue::Str(s) => Some(s.clone()),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            },
            on: true,
        }
    }

    /// Where the extender listens, and how long a call may take.
    pub fn endpoint(&self) -> (&Endpoint, Duration) {
        (&self.endpoint, self.timeout)
    }

    /// One call: the decoded answer.
    fn call(&self, verb: &str, body: &Value) -> Result<Value, String> {
        let out = self.post(verb, body)?;
        serde_json::from_slice(&out).map_err(|e| format!("{verb}: the extender's answer is not the expected JSON: {e}"))
    }

    /// One call whose answer is not read (session open and close: only the
    /// status counts).
    fn post(&self, verb: &str, body: &Value) -> Result<Vec<u8>, String> {
        let bytes = serde_json::to_vec(body).map_err(|e| e.to_string())?;
        self.endpoint.post(verb, &bytes, self.timeout)
    }

    /// Volcano's `IsInterested`: every pod without managed resources, else the
    /// pods that request one of them.
    fn interested(&self, ssn: &Session<'_>, p: PodId) -> bool {
        if self.managed.is_empty() {
            return true;
        }
        let names = &ssn.cluster().resource_names;
        let req = &ssn.pod(p).req;
        self.managed.iter().any(|m| names.dim(m).is_some_and(|d| req.get(d) > 0))
    }

    fn verb<'a>(&self, v: &'a Option<String>) -> Option<&'a str> {
        v.as_deref().filter(|_| self.on)
    }

    /// Preemptable and reclaimable: the victims the extender permits.
    fn victims(&self, verb: Option<&str>, ssn: &Session<'_>, evictor: PodId, cands: &[PodId]) -> Option<Vec<PodId>> {
        let verb = verb?;
        if !self.interested(ssn, evictor) {
            return None;
        }
        let body = json!({
            "evictor": wire::task(ssn, evictor),
            "evictees": cands.iter().map(|&c| wire::task(ssn, c)).collect::<Vec<_>>(),
        });
        let resp = match self.call(verb, &body) {
            // Either way no victim: a permit or a reject with nil victims.
            Err(_) => return Some(Vec::new()),
            Ok(r) => r,
        };
        match resp.get("status").and_then(Value::as_i64).unwrap_or(0) {
            0 => None,
            v if v < 0 => Some(Vec::new()),
            _ => {
                let uids: Vec<&str> = resp
                    .get("victims")
                    .and_then(Value::as_array)
                    .map(|vs| vs.iter().filter_map(|v| v.get("UID").and_then(Value::as_str)).collect())
                    .unwrap_or_default();
                Some(cands.iter().copied().filter(|&c| uids.contains(&wire::pod_uid(ssn, c).as_str())).collect())
            }
        }
    }

    /// A node score per node of `nodes` (the batch `prioritize` call); `None` on
    /// any error (Volcano then takes no batch score).
    fn scores(&self, ssn: &Session<'_>, pod: PodId, nodes: &[NodeId]) -> Option<Vec<f64>> {
        let verb = self.verb(&self.verbs.prioritize)?;
        if !self.interested(ssn, pod) {
            return Some(vec![0.0; nodes.len()]);
        }
        let body = json!({
            "task": wire::task(ssn, pod),
            "nodes": nodes.iter().map(|&n| wire::node(ssn, n)).collect::<Vec<_>>(),
        });
        let resp = self.call(verb, &body).ok()?;
        let msg = resp.get("errorMessage").and_then(Value::as_str).unwrap_or("");
        let scores = resp.get("nodeScore").and_then(Value::as_object).filter(|_| msg.is_empty())?;
        Some(nodes.iter().map(|&n| scores.get(&ssn.node(n).name).and_then(Value::as_f64).unwrap_or(0.0)).collect())
    }
}

impl Plugin for Extender {
    fn name(&self) -> &'static str {
        "extender"
    }
    fn hooks(&self) -> Hooks {
        Hooks::when(self.verbs.predicate.is_some(), Hooks::PREDICATE)
            .and(Hooks::when(self.verbs.prioritize.is_some(), Hooks::NODE_SCORE))
            .and(Hooks::when(self.verbs.preemptable.is_some(), Hooks::PREEMPTABLE))
            .and(Hooks::when(self.verbs.reclaimable.is_some(), Hooks::RECLAIMABLE))
            .and(Hooks::when(self.verbs.enqueueable.is_some(), Hooks::ENQUEUE_BY_JOB))
    }
    fn open(&mut self, ssn: &mut Session<'_>) {
        self.on = true;
        if let Some(v) = self.verbs.open.clone() {
            let ok = self.post(&v, &wire::snapshot(ssn)).is_ok();
            self.on = ok || self.ignorable;
        }
    }
    fn close(&mut self, _ssn: &Session<'_>) {
        if let Some(v) = self.verbs.close.clone().filter(|_| self.on) {
            // Only logged by Volcano.
            let _ = self.post(&v, &json!({}));
        }
    }
    fn predicate(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<Result<(), String>> {
        let verb = self.verb(&self.verbs.predicate)?;
        if !self.interested(ssn, pod) {
            return Some(Ok(()));
        }
        let body = json!({"task": wire::task(ssn, pod), "node": wire::node(ssn, node)});
        match self.call(verb, &body) {
            Err(_) if self.ignorable => Some(Ok(())),
            Err(e) => Some(Err(e)),
            // The error message is in the field `status`.
            Ok(r) => match r.get("status").and_then(Value::as_str).filter(|m| !m.is_empty()) {
                Some(m) => Some(Err(m.to_string())),
                None => Some(Ok(())),
            },
        }
    }
    fn score_by_node(&self, _: &Session<'_>, _: PodId) -> bool {
        false
    }
    fn node_score(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<f64> {
        self.verb(&self.verbs.prioritize)?;
        Some(self.scores(ssn, pod, &[node]).map_or(0.0, |s| s[0]))
    }
    fn add_node_scores(&self, ssn: &Session<'_>, pod: PodId, nodes: &[NodeId], sums: &mut [f64]) {
        if let Some(s) = self.scores(ssn, pod, nodes) {
            for (sum, x) in sums.iter_mut().zip(s) {
                *sum += x;
            }
        }
    }
    fn preemptable(&self, ssn: &Session<'_>, preemptor: PodId, cands: &[PodId]) -> Option<Vec<PodId>> {
        self.victims(self.verb(&self.verbs.preemptable), ssn, preemptor, cands)
    }
    fn reclaimable(&self, ssn: &Session<'_>, reclaimer: PodId, cands: &[PodId]) -> Option<Vec<PodId>> {
        self.victims(self.verb(&self.verbs.reclaimable), ssn, reclaimer, cands)
    }
    fn job_enqueueable(&self, ssn: &Session<'_>, job: JobId) -> Option<Vote> {
        let verb = self.verb(&self.verbs.enqueueable)?;
        match self.call(verb, &json!({"job": wire::job(ssn, job)})) {
            Err(_) => Some(if self.ignorable { 1 } else { -1 }),
            Ok(r) => Some(r.get("status").and_then(Value::as_i64).unwrap_or(0).clamp(-1, 1) as Vote),
        }
    }
    fn job_enqueued(&mut self, ssn: &Session<'_>, job: JobId) {
        if let Some(v) = self.verbs.enqueued.clone().filter(|_| self.on) {
            let _ = self.call(&v, &json!({"job": wire::job(ssn, job)}));
        }
    }
    fn overused(&self, ssn: &Session<'_>, queue: QueueId) -> Option<bool> {
        let verb = self.verb(&self.verbs.overused)?;
        match self.call(verb, &json!({"queue": wire::queue(ssn, queue)})) {
            Err(_) => Some(!self.ignorable),
            Ok(r) => Some(r.get("overused").and_then(Value::as_bool).unwrap_or(false)),
        }
    }
    fn job_ready(&self, ssn: &Session<'_>, job: JobId) -> Option<bool> {
        let verb = self.verb(&self.verbs.ready)?;
        match self.call(verb, &json!({"job": wire::job(ssn, job)})) {
            Err(_) => Some(!self.ignorable),
            Ok(r) => Some(r.get("status").and_then(Value::as_bool).unwrap_or(false)),
        }
    }
}
