//! PodDisruptionBudgets (`policy/v1`): which pods a budget covers (namespace and
//! label selector, as Kubernetes matches them) and how many of them may be
//! disrupted, as the disruption controller computes `status.disruptionsAllowed`.
//!
//! A pod's labels are its template's labels with those its controller adds
//! ([`crate::model::job::JobSpec::pod_labels`], matched by [`crate::model::job::JobSpec::covered_by`]).

use std::sync::Arc;

/// An integer or a percentage (Kubernetes' `IntOrString` for budgets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntOrPercent {
    /// A count of pods.
    Int(u32),
    /// A percentage of the expected pods, rounded up.
    Percent(u32),
}

impl IntOrPercent {
    /// The value over `total` pods (`GetScaledValueFromIntOrPercent`, rounding up).
    pub fn of(self, total: u32) -> u32 {
        match self {
            IntOrPercent::Int(n) => n,
            IntOrPercent::Percent(p) => (p as u64 * total as u64).div_ceil(100) as u32,
        }
    }
}

/// How a budget is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetRule {
    /// `spec.minAvailable`.
    MinAvailable(IntOrPercent),
    /// `spec.maxUnavailable`.
    MaxUnavailable(IntOrPercent),
}

/// A label selector requirement's operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelectorOp {
    /// The label is one of the values.
    In,
    /// The label is absent or none of the values.
    NotIn,
    /// The label is present.
    Exists,
    /// The label is absent.
    DoesNotExist,
}

/// A label selector (`matchLabels` and `matchExpressions`, all required).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelSelector {
    /// `matchLabels`.
    pub labels: Vec<(String, String)>,
    /// `matchExpressions`: key, operator, values.
    pub expressions: Vec<(String, SelectorOp, Vec<String>)>,
}

impl LabelSelector {
    /// True if the selector requires nothing: Volcano's pdb plugin (and the
    /// disruption controller) then match no pod.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.expressions.is_empty()
    }

    /// True if `labels` satisfy every requirement.
    pub fn matches(&self, labels: &[(String, String)]) -> bool {
        let get = |k: &str| labels.iter().find(|(l, _)| l == k).map(|(_, v)| v.as_str());
        self.labels.iter().all(|(k, v)| get(k) == Some(v.as_str()))
            && self.expressions.iter().all(|(k, op, values)| match op {
                SelectorOp::In => get(k).is_some_and(|v| values.iter().any(|x| x == v)),
                SelectorOp::NotIn => get(k).is_none_or(|v| !values.iter().any(|x| x == v)),
                SelectorOp::Exists => get(k).is_some(),
                SelectorOp::DoesNotExist => get(k).is_none(),
            })
    }
}

/// A PodDisruptionBudget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DisruptionBudget {
    /// Name, as written.
    pub name: String,
    /// Namespace: it covers pods of this namespace only.
    pub namespace: Arc<str>,
    /// `spec.selector`.
    pub selector: LabelSelector,
    /// `spec.minAvailable` or `spec.maxUnavailable`.
    pub rule: BudgetRule,
}

impl DisruptionBudget {
    /// `status.disruptionsAllowed` for `healthy` running pods out of `expected`, as
    /// the disruption controller computes it: healthy pods above the desired
    /// number (`minAvailable`, or `expected − maxUnavailable`), never below 0.
    pub fn allowed(&self, healthy: u32, expected: u32) -> u32 {
        let desired = match self.rule {
            BudgetRule::MinAvailable(m) => m.of(expected),
            BudgetRule::MaxUnavailable(m) => expected.saturating_sub(m.of(expected)),
        };
        healthy.saturating_sub(desired)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn selectors_match_as_kubernetes_does() {
        let s = LabelSelector {
            labels: l(&[("app", "web")]),
            expressions: vec![
                ("tier".into(), SelectorOp::In, vec!["a".into(), "b".into()]),
                ("canary".into(), SelectorOp::DoesNotExist, vec![]),
                ("zone".into(), SelectorOp::NotIn, vec!["x".into()]),
            ],
        };
        assert!(s.matches(&l(&[("app", "web"), ("tier", "b")])));
        assert!(!s.matches(&l(&[("app", "web"), ("tier", "c")])));
        assert!(!s.matches(&l(&[("app", "web"), ("tier", "a"), ("canary", "1")])));
        assert!(!s.matches(&l(&[("app", "web"), ("tier", "a"), ("zone", "x")])));
        assert!(s.matches(&l(&[("app", "web"), ("tier", "a"), ("zone", "y")])));
        assert!(!s.matches(&l(&[("tier", "a")])));
        assert!(LabelSelector::default().is_empty());
    }

    #[test]
    fn allowed_disruptions() {
        let b = |rule| DisruptionBudget {
            name: "b".into(),
            namespace: Arc::from("default"),
            selector: LabelSelector::default(),
            rule,
        };
        use BudgetRule::*;
        use IntOrPercent::*;
        assert_eq!(b(MinAvailable(Int(2))).allowed(5, 5), 3);
        assert_eq!(b(MinAvailable(Int(6))).allowed(5, 5), 0);
        // 50% of 5, rounded up: 3 must stay.
        assert_eq!(b(MinAvailable(Percent(50))).allowed(5, 5), 2);
        assert_eq!(b(MaxUnavailable(Int(1))).allowed(5, 5), 1);
        assert_eq!(b(MaxUnavailable(Int(1))).allowed(3, 5), 0);
        // 30% of 5 rounded up is 2 unavailable: 3 desired.
        assert_eq!(b(MaxUnavailable(Percent(30))).allowed(5, 5), 2);
        assert_eq!(b(MaxUnavailable(Percent(100))).allowed(4, 5), 4);
    }
}
