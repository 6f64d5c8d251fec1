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
    ("without-nta", include_str!("../examples/topology/without-nta.yaml")),
    ("faults-training", include_str!("../examples/faults/training.yaml")),
];

/// An example's first sentence: its leading comment up to the first `. ` (all
/// of it when it has none), cut to 160 characters at a space.
fn describe(text: &str) -> String {
    let comment: Vec<&str> =
        text.lines().map_while(|l| l.strip_prefix('#')).map(str::trim).filter(|l| !l.is_empty()).collect();
    let joined = comment.join(" ");
    let end = joined.find(". ").map_or(joined.len(), |i| i + 1);
    let first = &joined[..end];
    if first.chars().count() <= 160 {
        return first.to_string();
    }
    let cut: String = first.chars().take(160).collect();
    format!("{}…", cut.rsplit_once(' ').map_or(cut.as_str(), |(a, _)| a))
}

/// The text `lahar init` prints: the embedded default scenario, or the named
/// example; an unknown name lists the known ones.
pub fn init(example: Option<&str>) -> Result<&'static str, String> {
    match example {
        None => Ok(crate::scenario::DEFAULT_SCENARIO),
        Some(name) => EXAMPLES.iter().find(|(n, _)| *n == name).map(|(_, t)| *t).ok_or_else(|| {
            let known: Vec<&str> = EXAMPLES.iter().map(|(n, _)| *n).collect();
            format!(
                "unknown example `{name}`; expected one of: {} (`lahar list examples` says what each is; the examples/ folder of a clone has the ones made of several files)",
                known.join(", ")
            )
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
    /// Example scenarios `lahar init --example NAME` prints, with their first sentence.
    Examples,
}

/// The lines `lahar list WHAT` prints.
pub fn list(what: Listing) -> Vec<String> {
    match what {
        Listing::Schedulers => {
            let mut v =
                vec!["volcano\t(default) Volcano's actions and plugins from a volcano-scheduler.conf".to_string()];
            // Each baseline with what it does and the fields it reads.
            v.extend(lahar_policies::baselines::ALL.iter().map(|b| {
                let reads = match b.options {
                    [] => String::new(),
                    o => format!("; also reads {}", o.join(", ")),
                };
                format!("{n}\tbaseline: {} (spec.scheduler: {{baseline: {n}}}{reads})", b.summary, n = b.name)
            }));
            v
        }
        Listing::Plugins => lahar_policies::volcano::plugins::names().map(str::to_string).collect(),
        Listing::Models => lahar_core::comm::runtime::CATALOG.iter().map(|m| m.name.to_string()).collect(),
        Listing::Gpus => {
            CommConstants::default().gpu_aliases.iter().map(|(name, g)| format!("{name}\t{g:?}")).collect()
        }
        Listing::Examples => EXAMPLES.iter().map(|(name, text)| format!("{name}\t{}", describe(text))).collect(),
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
        // Each is described by its first sentence.
        let lines = list(Listing::Examples);
        assert_eq!(lines.len(), EXAMPLES.len());
        assert!(lines.iter().all(|l| l.split('\t').nth(1).is_some_and(|d| d.len() > 20)), "{lines:?}");
        assert!(lines[0].starts_with("large-h100\tA large what-if: 1,024 H100 nodes"), "{}", lines[0]);
    }
}
