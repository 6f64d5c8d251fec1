//! The `extender` plugin (issue 13, item 2) against a small local HTTP server:
//! its answers decide predicates, node scores and admission, calls follow
//! Volcano's shapes and error rules, and a missing server is a clear error.

use super::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// What the server saw: (verb, request body) per call.
type Log = Arc<Mutex<Vec<(String, serde_json::Value)>>>;

/// A server on a free port answering with `answer(verb, body)`: `Some((code,
/// body))`, or `None` for 404. Chunked answers when `chunked`.
fn server(
    answer: impl Fn(&str, &serde_json::Value) -> Option<(u16, String)> + Send + 'static,
    chunked: bool,
) -> (u16, Log) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let log: Log = Arc::default();
    let seen = Arc::clone(&log);
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let mut r = BufReader::new(s.try_clone().unwrap());
            let mut line = String::new();
            r.read_line(&mut line).unwrap();
            let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
            let mut len = 0;
            loop {
                let mut h = String::new();
                r.read_line(&mut h).unwrap();
                if h.trim().is_empty() {
                    break;
                }
                if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; len];
            r.read_exact(&mut body).unwrap();
            let verb = path.trim_start_matches('/').to_string();
            let json: serde_json::Value = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
            let reply = answer(&verb, &json);
            seen.lock().unwrap().push((verb, json));
            let (code, text) = reply.unwrap_or((404, "404 page not found".into()));
            let out = if chunked && code == 200 {
                let mid = text.len() / 2;
                format!(
                    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{}\r\n{:x}\r\n{}\r\n0\r\n\r\n",
                    mid,
                    &text[..mid],
                    text.len() - mid,
                    &text[mid..]
                )
            } else {
                format!("HTTP/1.1 {code} X\r\nContent-Length: {}\r\n\r\n{text}", text.len())
            };
            let _ = s.write_all(out.as_bytes());
        }
    });
    (port, log)
}

fn conf(port: u16, extra: &str) -> String {
    format!(
        "actions: \"enqueue, allocate\"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: extender
    arguments:
      extender.urlPrefix: http://127.0.0.1:{port}
      extender.onSessionOpenVerb: onSessionOpen
      extender.predicateVerb: predicate
      extender.prioritizeVerb: prioritize
      extender.jobEnqueueableVerb: jobEnqueueable
{extra}"
    )
}

/// `(job, node)` of every pod placed, and the jobs never started.
fn run(conf: &str, gpus: bool) -> (Vec<(String, String)>, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.conf"), conf).unwrap();
    let gpu = if gpus { ", gpus: 1" } else { "" };
    let text = scenario(
        &format!(
            "    nodes:\n      - {{name: n0, cpu: 4, memory: 8Gi{gpu}}}\n      - {{name: n1, cpu: 4, memory: 8Gi{gpu}}}"
        ),
        "  scheduler: {conf: s.conf}\n  workload:\n    - jobs:\n        - {name: a, duration: 1h, tasks: [{name: w, replicas: 1, resources: {cpu: 1}}]}\n        - {name: b, duration: 1h, tasks: [{name: w, replicas: 1, resources: {cpu: 1}}]}\n        - {name: c, duration: 1h, tasks: [{name: w, replicas: 1, resources: {cpu: 1}}]}\n",
    );
    let s = lahar::scenario::load_str(&text, "s.yaml", dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let r = lahar::run(s, &lahar::RunOptions { no_write: true, ..Default::default() }).expect("run");
    let w = &r.output.world;
    let mut placed: Vec<(String, String)> = r
        .output
        .pods
        .iter()
        .map(|p| {
            let pod = &w.pods[p.pod];
            (w.jobs[pod.job].spec.name.clone(), w.cluster.nodes[p.node].name.clone())
        })
        .collect();
    placed.sort();
    let waiting = w.jobs.iter().filter(|j| j.first_start.is_none()).map(|j| j.spec.name.clone()).collect();
    (placed, waiting)
}

/// A policy written as an extender: job `a` may not use n1 (which it scores
/// best), job `b` prefers n0 (lahar alone puts every pod on n1), and job `c` is
/// never admitted.
fn policy(verb: &str, body: &serde_json::Value) -> Option<(u16, String)> {
    let job = |t: &serde_json::Value| t["Job"].as_str().unwrap_or_default().to_string();
    Some(match verb {
        "onSessionOpen" => (200, String::new()),
        "predicate" => {
            let bad = job(&body["task"]) == "default/a" && body["node"]["Name"] == "n1";
            (200, serde_json::json!({"status": if bad { "n1 is not for a" } else { "" }, "code": 2}).to_string())
        }
        "prioritize" => {
            let b = job(&body["task"]) == "default/b";
            let scores: serde_json::Map<String, serde_json::Value> = body["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| {
                    let name = n["Name"].as_str().unwrap().to_string();
                    let s = if (name == "n0") == b { 10.0 } else { 0.0 };
                    (name, serde_json::json!(s))
                })
                .collect();
            (200, serde_json::json!({"nodeScore": scores, "errorMessage": ""}).to_string())
        }
        "jobEnqueueable" => {
            let c = body["job"]["Name"] == "c";
            (200, serde_json::json!({"status": if c { -1 } else { 1 }}).to_string())
        }
        _ => return None,
    })
}

#[test]
fn an_extender_decides_predicates_scores_and_admission() {
    for chunked in [false, true] {
        let (port, log) = server(policy, chunked);
        let (placed, waiting) = run(&conf(port, ""), false);
        assert_eq!(placed, [("a".to_string(), "n0".to_string()), ("b".into(), "n0".into())], "chunked {chunked}");
        assert_eq!(waiting, ["c"]);
        // The session snapshot and the calls have Volcano's shapes.
        let log = log.lock().unwrap();
        let open = &log.iter().find(|(v, _)| v == "onSessionOpen").unwrap().1;
        assert!(open["Nodes"]["n0"]["Allocatable"]["MilliCPU"] == 4000.0, "{open}");
        assert!(open["Jobs"]["default/a"]["MinAvailable"] == 1, "{open}");
        let pred = &log.iter().find(|(v, _)| v == "predicate").unwrap().1;
        assert_eq!(pred["task"]["Resreq"]["MilliCPU"], 1000.0);
        assert!(pred["task"]["UID"].as_str().unwrap().starts_with("default/"));
    }
}

/// Volcano's error rules: a verb the server does not serve fails every call; not
/// ignorable, the predicate fails (nothing placed), ignorable, it passes.
#[test]
fn failed_calls_follow_ignorable() {
    let only_open = |verb: &str, _: &serde_json::Value| (verb == "onSessionOpen").then(|| (200, String::new()));
    let (port, _) = server(only_open, false);
    let (placed, waiting) = run(
        &conf(port, "      extender.jobEnqueueableVerb: \"\"\n")
            .replace("      extender.jobEnqueueableVerb: jobEnqueueable\n", ""),
        false,
    );
    assert!(placed.is_empty(), "{placed:?}");
    assert_eq!(waiting, ["a", "b", "c"]);
    let c = conf(port, "      extender.ignorable: true\n");
    let (placed, waiting) = run(&c, false);
    assert_eq!(placed.len(), 3, "{placed:?}");
    assert!(waiting.is_empty());
}

/// Volcano's TestIsInterested through a run: with `managedResources`, pods that
/// request none of them are not sent to the extender.
#[test]
fn managed_resources_limit_what_the_extender_sees() {
    let (port, log) = server(policy, false);
    let c = conf(port, "      extender.managedResources: [nvidia.com/gpu]\n");
    let (placed, waiting) = run(&c, true);
    // CPU-only pods: no predicate or prioritize call (the placement is lahar's own);
    // admission is no pod's business, so `c` still waits.
    assert_eq!(placed.len(), 2);
    assert_eq!(waiting, ["c"]);
    let log = log.lock().unwrap();
    assert!(!log.iter().any(|(v, _)| v == "predicate" || v == "prioritize"), "{log:?}");
}

/// Volcano's TestMaxBodySizeLimit2: an answer over 10 MiB is an error.
#[test]
fn an_answer_over_ten_mib_is_an_error() {
    use lahar_policies::volcano::plugins::extender::http::{Endpoint, MAX_BODY};
    let big = format!("{{\"padding\":\"{}\"}}", "a".repeat(MAX_BODY + 1));
    let (port, _) = server(move |_, _| Some((200, big.clone())), false);
    let ep = Endpoint::parse(&format!("http://127.0.0.1:{port}")).unwrap();
    let e = ep.post("test", b"{}", std::time::Duration::from_secs(10)).unwrap_err();
    assert!(e.contains("http: request body too large"), "{e}");
    let (port, _) = server(|_, _| Some((200, "{}".into())), false);
    let ep = Endpoint::parse(&format!("http://127.0.0.1:{port}")).unwrap();
    assert_eq!(ep.post("test", b"{}", std::time::Duration::from_secs(10)).unwrap(), b"{}");
}

/// Without a server: a clear error before the run (exit 2); bad arguments are
/// conf errors.
#[test]
fn a_missing_server_and_bad_arguments_are_errors() {
    // A port nothing listens on: bind one, then let it go.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.conf"), conf(port, "")).unwrap();
    let text = scenario(
        "    nodes:\n      - {name: n0, cpu: 4, memory: 8Gi}",
        "  scheduler: {conf: s.conf}\n  workload:\n    - jobs:\n        - {name: a, duration: 1h, tasks: [{name: w, replicas: 1, resources: {cpu: 1}}]}\n",
    );
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    let out = lahar().arg("run").arg("-q").arg(dir.path().join("s.yaml")).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains(&format!("spec.scheduler: tiers[1].plugins[1].arguments.extender.urlPrefix: no scheduler extender answers at http://127.0.0.1:{port}")),
        "{err}"
    );
    for (args, want) in [
        (
            "extender.urlPrefix: https://x:1",
            "arguments.extender.urlPrefix: `https://x:1`: lahar's extender client speaks plain HTTP",
        ),
        ("extender.predicateVerb: p", "arguments.extender.urlPrefix: the extender's address is required"),
        (
            "{extender.urlPrefix: \"http://a:1\", extender.allocateFuncVerb: allocate}",
            "arguments.extender.allocateFuncVerb: an allocate or deallocate handler",
        ),
        (
            "{extender.urlPrefix: \"http://a:1\", extender.httpTimeout: soon}",
            "arguments.extender.httpTimeout: expected a Go duration",
        ),
        (
            "{extender.urlPrefix: \"http://a:1\", extender.managedResources: nvidia.com/gpu}",
            "arguments.extender.managedResources: expected a list",
        ),
    ] {
        let args = if args.starts_with('{') { args.to_string() } else { format!("{{{args}}}") };
        let err =
            conf_errors(&format!("actions: allocate\ntiers:\n- plugins:\n  - name: extender\n    arguments: {args}\n"));
        assert!(err.contains(want), "{want}\n{err}");
    }
}

/// The evicting verbs and queueOverused: on one 2-cpu node, `l1` and `l2`
/// (priority 1) run and `h` (priority 100, at 10 s) must take one of them. Priority
/// permits both; the extender, in the same tier, permits only `l1`'s pod, so the
/// intersection evicts `l1` (without the extender preempt takes `l2`'s, the first
/// in victim order). A queue the extender calls overused gets nothing placed.
#[test]
fn the_extender_chooses_victims_and_overused_queues() {
    let answer = |verb: &str, body: &serde_json::Value| -> Option<(u16, String)> {
        Some(match verb {
            "preemptable" => {
                let keep: Vec<&serde_json::Value> =
                    body["evictees"].as_array().unwrap().iter().filter(|t| t["Job"] == "default/l1").collect();
                (200, serde_json::json!({"status": 1, "victims": keep}).to_string())
            }
            "queueOverused" => (200, serde_json::json!({"overused": body["queue"]["Name"] == "default"}).to_string()),
            _ => return None,
        })
    };
    let (port, _) = server(answer, false);
    let conf = |verbs: &str| {
        format!(
            "actions: \"enqueue, allocate, preempt\"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: extender
    arguments:
      extender.urlPrefix: http://127.0.0.1:{port}
{verbs}- plugins:
  - name: predicates
"
        )
    };
    let run = |conf: &str| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s.conf"), conf).unwrap();
        let job = |n: &str, p: u32, at: u32| {
            format!(
                "        - {{name: {n}, priority: {p}, submitAt: {at}s, duration: 1h, tasks: [{{name: w, replicas: 1, resources: {{cpu: 1}}}}]}}\n"
            )
        };
        let text = scenario(
            "    nodes:\n      - {name: n0, cpu: 2, memory: 8Gi}",
            &format!(
                "  horizon: 2h\n  scheduler: {{conf: s.conf}}\n  workload:\n    - jobs:\n{}{}{}",
                job("l1", 1, 0),
                job("l2", 1, 0),
                job("h", 100, 10)
            ),
        );
        let s = lahar::scenario::load_str(&text, "s.yaml", dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let r = lahar::run(s, &lahar::RunOptions { no_write: true, ..Default::default() }).expect("run");
        let w = &r.output.world;
        let evicted: Vec<String> = r
            .output
            .pods
            .iter()
            .filter(|p| p.reason == lahar_core::engine::EndReason::Preempted)
            .map(|p| w.jobs[w.pods[p.pod].job].spec.name.clone())
            .collect();
        let started: Vec<String> =
            w.jobs.iter().filter(|j| j.first_start.is_some()).map(|j| j.spec.name.clone()).collect();
        (evicted, started)
    };
    let (evicted, started) = run(&conf("      extender.preemptableVerb: preemptable\n"));
    assert_eq!((evicted, started), (vec!["l1".to_string()], vec!["l1".into(), "l2".into(), "h".into()]));
    let (evicted, _) = run(&conf(""));
    assert_eq!(evicted, ["l2"]);
    let (evicted, started) = run(&conf("      extender.queueOverusedVerb: queueOverused\n"));
    assert!(evicted.is_empty() && started.is_empty(), "{evicted:?} {started:?}");
}
