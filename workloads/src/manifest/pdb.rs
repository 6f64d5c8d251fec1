//! `policy/v1` PodDisruptionBudgets: what Volcano's `pdb` plugin reads. Every
//! field is checked by name here (the field lists of `schemas/` come from CRDs,
//! and PodDisruptionBudget is a built-in kind). `status` is accepted as
//! `kubectl` prints it and recomputed: lahar's disruption counts follow the pods
//! it simulates.

use super::Diagnostic;
use super::ck::{self, Ck, join, known_keys};
use super::yaml::{Doc, Node, Val};
use lahar_core::model::budget::{BudgetRule, DisruptionBudget, IntOrPercent, LabelSelector, SelectorOp};
use std::sync::Arc;

/// Whether `d` is a PodDisruptionBudget.
pub fn is_budget(d: &Doc) -> bool {
    let (api, kind) = ck::kind_of(&d.root);
    kind == "PodDisruptionBudget" && api.starts_with("policy/")
}

/// An `IntOrString` count: an integer ≥ 0 or a percentage `N%`.
fn int_or_percent(ck: &mut Ck<'_>, n: &Node, path: &str) -> Option<IntOrPercent> {
    let bad = |ck: &mut Ck<'_>| {
        ck.err(n.at, path, "expected an integer ≥ 0 or a percentage such as `50%`");
        None
    };
    match &n.val {
        Val::Int(i) if *i >= 0 => Some(IntOrPercent::Int(*i as u32)),
        Val::Str(s) => match s.strip_suffix('%').map(str::parse::<u32>) {
            Some(Ok(p)) if p <= 100 => Some(IntOrPercent::Percent(p)),
            _ => bad(ck),
        },
        _ => bad(ck),
    }
}

pub(crate) fn selector(ck: &mut Ck<'_>, n: &Node, path: &str) -> LabelSelector {
    known_keys(ck, n, path, &["matchLabels", "matchExpressions"]);
    let mut out = LabelSelector::default();
    for (k, v) in ck.map(n, "matchLabels", path) {
        if let Some(v) = ck.str(v, &join(&join(path, "matchLabels"), k)) {
            out.labels.push((k.clone(), v));
        }
    }
    for (i, e) in ck.seq(n, "matchExpressions", path).iter().enumerate() {
        let ep = format!("{path}.matchExpressions[{i}]");
        known_keys(ck, e, &ep, &["key", "operator", "values"]);
        let key = ck.opt_str(e, "key", &ep);
        let op = match ck.opt_str(e, "operator", &ep).as_deref() {
            Some("In") => Some(SelectorOp::In),
            Some("NotIn") => Some(SelectorOp::NotIn),
            Some("Exists") => Some(SelectorOp::Exists),
            Some("DoesNotExist") => Some(SelectorOp::DoesNotExist),
            other => {
                let at = e.get("operator").and_then(|o| o.at).or(e.at);
                let got = other.map_or("nothing".to_string(), |o| format!("`{o}`"));
                ck.err(at, &join(&ep, "operator"), format!("expected In, NotIn, Exists or DoesNotExist, got {got}"));
                None
            }
        };
        let values: Vec<String> = ck
            .seq(e, "values", &ep)
            .iter()
            .enumerate()
            .filter_map(|(j, v)| ck.str(v, &format!("{ep}.values[{j}]")))
            .collect();
        let Some(key) = key else {
            ck.err(e.at, &join(&ep, "key"), "a requirement needs a `key`");
            continue;
        };
        if let Some(op) = op {
            // Kubernetes' validation: In and NotIn need values, the others none.
            let needs = matches!(op, SelectorOp::In | SelectorOp::NotIn);
            if needs == values.is_empty() {
                let why = if needs { "In and NotIn need `values`" } else { "Exists and DoesNotExist take no `values`" };
                ck.err(e.at, &join(&ep, "values"), why);
            }
            out.expressions.push((key, op, values));
        }
    }
    out
}

/// One budget.
fn budget(d: &Doc, errs: &mut Vec<Diagnostic>) -> Option<DisruptionBudget> {
    let mut ck = Ck::new(d, errs);
    let root = &d.root;
    known_keys(&mut ck, root, "", &["apiVersion", "kind", "metadata", "spec", "status"]);
    let meta = ck::meta(&mut ck, root, "", true);
    let empty = Node { at: root.at, val: Val::Null };
    let spec = root.get("spec").unwrap_or(&empty);
    known_keys(&mut ck, spec, "spec", &["minAvailable", "maxUnavailable", "selector", "unhealthyPodEvictionPolicy"]);
    let min = spec.get("minAvailable").and_then(|n| int_or_percent(&mut ck, n, "spec.minAvailable"));
    let max = spec.get("maxUnavailable").and_then(|n| int_or_percent(&mut ck, n, "spec.maxUnavailable"));
    let rule = match (min, max, spec.get("minAvailable").is_some() || spec.get("maxUnavailable").is_some()) {
        (Some(m), None, _) => Some(BudgetRule::MinAvailable(m)),
        (None, Some(m), _) if spec.get("minAvailable").is_none() => Some(BudgetRule::MaxUnavailable(m)),
        (Some(_), Some(_), _) => {
            ck.err(spec.at, "spec", "minAvailable and maxUnavailable cannot both be set (Kubernetes refuses it)");
            None
        }
        (_, _, false) => {
            ck.err(spec.at.or(root.at), "spec", "expected `minAvailable` or `maxUnavailable`");
            None
        }
        _ => None,
    };
    let sel = match spec.get("selector") {
        Some(s) => selector(&mut ck, s, "spec.selector"),
        None => LabelSelector::default(),
    };
    if let Some(p) = ck.opt_str(spec, "unhealthyPodEvictionPolicy", "spec")
        && p != "IfHealthyBudget"
        && p != "AlwaysAllow"
    {
        let at = spec.get("unhealthyPodEvictionPolicy").and_then(|n| n.at);
        ck.err(at, "spec.unhealthyPodEvictionPolicy", format!("expected IfHealthyBudget or AlwaysAllow, got `{p}`"));
    }
    if !ck.ok() {
        return None;
    }
    Some(DisruptionBudget {
        name: meta.name,
        namespace: Arc::from(meta.namespace.as_str()),
        selector: sel,
        rule: rule?,
    })
}

/// The PodDisruptionBudgets among `docs` (other kinds are skipped).
pub fn budgets(docs: &[Doc], errs: &mut Vec<Diagnostic>) -> Vec<DisruptionBudget> {
    docs.iter().filter(|d| is_budget(d)).filter_map(|d| budget(d, errs)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::yaml;

    fn read(text: &str) -> Result<Vec<DisruptionBudget>, Vec<String>> {
        let docs = yaml::parse_documents(text, "t.yaml").map_err(|e| vec![e.1])?;
        let mut errs = Vec::new();
        let b = budgets(&docs, &mut errs);
        if errs.is_empty() {
            Ok(b)
        } else {
            Err(errs.iter().map(|e| format!("{:?} {}: {}", e.at, e.path, e.message)).collect())
        }
    }

    #[test]
    fn reads_a_budget_as_kubectl_prints_it() {
        let b = read(
            "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: prod}\nspec:\n  maxUnavailable: 25%\n  selector:\n    matchLabels: {app: web}\n    matchExpressions: [{key: tier, operator: In, values: [a]}]\nstatus: {disruptionsAllowed: 1, currentHealthy: 4, desiredHealthy: 3, expectedPods: 4, observedGeneration: 1}\n",
        )
        .expect("loads");
        assert_eq!(b[0].name, "web");
        assert_eq!(&*b[0].namespace, "prod");
        assert_eq!(b[0].rule, BudgetRule::MaxUnavailable(IntOrPercent::Percent(25)));
        assert_eq!(b[0].selector.labels, [("app".to_string(), "web".to_string())]);
        assert_eq!(b[0].selector.expressions, [("tier".to_string(), SelectorOp::In, vec!["a".to_string()])]);
    }

    #[test]
    fn bad_budgets_are_located() {
        let e = read("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec:\n  minAvailable: half\n  selectr: {}\n")
            .expect_err("refused");
        assert!(e.iter().any(|m| m.contains("spec.selectr: unknown field")), "{e:?}");
        assert!(e.iter().any(|m| m.contains("spec.minAvailable: expected an integer")), "{e:?}");
        let e = read("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec:\n  minAvailable: 1\n  maxUnavailable: 1\n")
            .expect_err("refused");
        assert!(e[0].contains("cannot both be set"), "{e:?}");
        let e = read("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec:\n  minAvailable: 1\n  selector: {matchExpressions: [{key: a, operator: Has}]}\n")
            .expect_err("refused");
        assert!(e[0].contains("expected In, NotIn, Exists or DoesNotExist, got `Has`"), "{e:?}");
    }
}
