//! Starting points for a new user: `lahar init` (a scenario to start from) and
//! `lahar list` (what exists: schedulers, plugins, job models, GPU models).

use lahar_core::comm::CommConstants;

/// Single-file example scenarios shipped inside the binary, by name (their file
/// stem under examples/): `lahar init --example NAME` prints one.
pub const EXAMPLES: &[(&str, &str)] = &[
    ("large-h100", include_str!("../examples/large-h100.yaml")),
    ("gang-dependson", include_str!("../examples/gang-dependson.yaml")),
    ("with-nta", include_str!("../examples/topology/with-nta.yaml")),
    ("baseline-fifo", include_str!("../examples/baseline-fifo.yaml")),
    ("baseline-sjf", include_str!("../examples/baseline-sjf.yaml")),
    ("baseline-easy-backfill", include_str!("../examples/baseline-easy-backfill.yaml")),
    ("baseline-tiresias", include_str!("../examples/baseline-tiresias.yaml")),
    ("baseline-kube-default", include_str!("../examples/baseline-kube-default.yaml")),
];

/// The text `lahar init` prints: the embedded default scenario, or the named
/// example; an unknown name lists the known ones.
pub fn init(example: Option<&str>) -> Result<&'static str, String> {
    match example {
        None => Ok(crate::scenario::DEFAULT_SCENARIO),
        Some(name) => EXAMPLES.iter().find(|(n, _)| *n == name).map(|(_, t)| *t).ok_or_else(|| {
            let known: Vec<&str> = EXAMPLES.iter().map(|(n, _)| *n).collect();
            format!("unknown example `{name}`; expected one of: {}", known.join(", "))
        }),
    }
}

/// What `lahar list` can list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Listing {
    /// `spec.scheduler` choices: Volcano (a conf) and the research baselines.
    Schedulers,
    /// Volcano plugins a conf may name.
    Plugins,
    /// Built-in job models (`model:` of a job) for the communication model.
    Models,
    /// GPU model names the communication model knows (by prefix) and their generation.
    Gpus,
}

/// The lines `lahar list WHAT` prints.
pub fn list(what: Listing) -> Vec<String> {
    match what {
        Listing::Schedulers => {
            let mut v =
                vec!["volcano\t(default) Volcano's actions and plugins from a volcano-scheduler.conf".to_string()];
            v.extend(
                lahar_policies::BASELINES.iter().map(|b| format!("{b}\tbaseline (spec.scheduler: {{baseline: {b}}})")),
            );
            v
        }
        Listing::Plugins => lahar_policies::volcano::conf::PLUGINS.iter().map(|p| p.to_string()).collect(),
        Listing::Models => lahar_core::comm::runtime::CATALOG.iter().map(|m| m.name.to_string()).collect(),
        Listing::Gpus => {
            CommConstants::default().gpu_aliases.iter().map(|(name, g)| format!("{name}\t{g:?}")).collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every embedded example is a valid scenario on its own.
    #[test]
    fn embedded_examples_validate() {
        for (name, text) in EXAMPLES {
            crate::scenario::load_str(text, name, std::path::Path::new(""))
                .unwrap_or_else(|e| panic!("example {name}: {e}"));
        }
        assert!(init(Some("nope")).unwrap_err().contains("large-h100"));
    }
}
