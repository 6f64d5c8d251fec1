//! `lahar diff`: the same input scheduled under two confs (or any two variants),
//! and which decisions change — the first session where they part, the
//! decisions each side made there that the other did not, and the pods that end
//! in a different state.
//!
//! Both runs are in-process and write nothing; their decisions are compared row
//! by row as decisions.csv would hold them.

use crate::scenario::Scenario;
use crate::{RunError, RunOptions};
use lahar_core::model::job::PodStatus;
use std::collections::BTreeMap;

/// Rows of the first differing session shown per side; pods with a different end
/// state listed.
const SHOWN: usize = 50;

/// One side of a diff: what its run decided and where its pods ended.
pub struct Side {
    /// How the side is named (`A: FILE`).
    pub label: String,
    /// Every decision, fields as in decisions.csv.
    pub rows: Vec<[String; 9]>,
    /// Each pod's state at the end (`Running on gpu-b-0`, `Pending`...), by
    /// `namespace/name`.
    pub end: BTreeMap<String, String>,
    /// Sessions run.
    pub sessions: u64,
}

/// Runs `s` (writing nothing) and keeps its decisions and end state.
pub fn side(s: Scenario, label: String) -> Result<Side, RunError> {
    let r = crate::run(s, &RunOptions { no_write: true, ..Default::default() })?;
    let w = &r.output.world;
    let rows = r.output.decisions.iter().map(|d| lahar_reports::decision_fields(w, d)).collect();
    let mut end = BTreeMap::new();
    for job in w.jobs.iter() {
        for &p in &job.pods {
            let pod = &w.pods[p];
            let state = match (pod.status, pod.node, pod.nominated) {
                (PodStatus::Pending, _, Some(n)) => format!("Pending, nominated to {}", w.cluster.node(n).name),
                (st, Some(n), _) => format!("{st:?} on {}", w.cluster.node(n).name),
                (st, None, _) => format!("{st:?}"),
            };
            end.insert(lahar_reports::metrics::pod_label(&job.spec, pod.task, pod.index), state);
        }
    }
    Ok(Side { label, rows, end, sessions: r.output.stats.sessions })
}

/// Counts of a side's decisions by kind: `3 decisions (1 bind, 2 phase)`.
fn tally(rows: &[[String; 9]]) -> String {
    let mut by: BTreeMap<&str, usize> = BTreeMap::new();
    for r in rows {
        *by.entry(r[3].as_str()).or_default() += 1;
    }
    let parts: Vec<String> = by.iter().map(|(k, n)| format!("{n} {k}")).collect();
    format!(
        "{} decision{}{}",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        match parts.is_empty() {
            true => String::new(),
            false => format!(" ({})", parts.join(", ")),
        }
    )
}

/// A decision row as one line (session and time are the section's).
fn line(r: &[String; 9]) -> String {
    let fields: Vec<&str> = r[2..].iter().map(String::as_str).filter(|f| !f.is_empty()).collect();
    fields.join("  ")
}

/// The report, and whether the two sides differ.
pub fn render(a: &Side, b: &Side) -> (String, bool) {
    let mut out = vec![
        format!("A: {}: {} in {} session(s)", a.label, tally(&a.rows), a.sessions),
        format!("B: {}: {} in {} session(s)", b.label, tally(&b.rows), b.sessions),
    ];
    // Group by session; the first session whose rows differ (as multisets: the
    // same decisions in another order are the same decisions).
    let by_session = |rows: &[[String; 9]]| {
        let mut m: BTreeMap<u64, Vec<[String; 9]>> = BTreeMap::new();
        for r in rows {
            m.entry(r[0].parse().unwrap_or(0)).or_default().push(r.clone());
        }
        m
    };
    let (sa, sb) = (by_session(&a.rows), by_session(&b.rows));
    let sessions: std::collections::BTreeSet<u64> = sa.keys().chain(sb.keys()).copied().collect();
    let empty = Vec::new();
    let mut differing = sessions.iter().filter(|s| {
        let (mut x, mut y) = (sa.get(s).unwrap_or(&empty).clone(), sb.get(s).unwrap_or(&empty).clone());
        x.sort();
        y.sort();
        x != y
    });
    let first = differing.next().copied();
    let later = differing.count();
    let pods: Vec<(&String, &str, &str)> = a
        .end
        .keys()
        .chain(b.end.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|p| {
            let (x, y) = (a.end.get(p).map_or("absent", String::as_str), b.end.get(p).map_or("absent", String::as_str));
            (p, x, y)
        })
        .filter(|(_, x, y)| x != y)
        .collect();
    let Some(first) = first else {
        let same = if pods.is_empty() { "and every pod ends in the same state" } else { "but pods end differently" };
        out.push(format!("the same decisions in every session, {same}"));
        append_pods(&mut out, &pods, a.end.len().max(b.end.len()));
        return (out.join("\n"), !pods.is_empty());
    };
    let (x, y) = (sa.get(&first).unwrap_or(&empty), sb.get(&first).unwrap_or(&empty));
    let t = x.first().or(y.first()).map(|r| r[1].clone()).unwrap_or_default();
    out.push(format!(
        "first difference: session {first} (t = {t} s){}",
        if later > 0 { format!("; {later} later session(s) differ too") } else { String::new() }
    ));
    // Rows only one side made in that session, each side's order kept.
    let only = |mine: &Vec<[String; 9]>, theirs: &Vec<[String; 9]>| {
        let mut left: Vec<&[String; 9]> = theirs.iter().collect();
        let mut o = Vec::new();
        for r in mine {
            match left.iter().position(|l| *l == r) {
                Some(i) => {
                    left.remove(i);
                }
                None => o.push(line(r)),
            }
        }
        o
    };
    for (mark, side, rows) in [("-", "A", only(x, y)), ("+", "B", only(y, x))] {
        out.push(format!("  only under {side} ({}):", rows.len()));
        for r in rows.iter().take(SHOWN) {
            out.push(format!("  {mark} {r}"));
        }
        if rows.len() > SHOWN {
            out.push(format!("  … {} more", rows.len() - SHOWN));
        }
    }
    append_pods(&mut out, &pods, a.end.len().max(b.end.len()));
    (out.join("\n"), true)
}

fn append_pods(out: &mut Vec<String>, pods: &[(&String, &str, &str)], total: usize) {
    if pods.is_empty() {
        return;
    }
    out.push(format!("pods that end differently ({} of {total}):", pods.len()));
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_BORDERS_ONLY);
    t.set_header(["pod", "A", "B"]);
    for (p, x, y) in pods.iter().take(SHOWN) {
        t.add_row([p.as_str(), x, y]);
    }
    out.push(t.to_string());
    if pods.len() > SHOWN {
        out.push(format!("… {} more", pods.len() - SHOWN));
    }
}
