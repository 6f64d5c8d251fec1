//! Which of a run's files are written (`lahar run --outputs`): a million-job run
//! writes hundreds of megabytes of rows that a study may not read. summary.json
//! and summary.csv are always written (the run's headline, and the mark that it
//! finished), and so are the inputs kept beside them.

/// The run files `--outputs` chooses among, as named on the command line.
pub const NAMES: [&str; 7] = ["jobs", "pods", "timeseries", "queues", "decisions", "events", "summary"];

/// Which of a run's row files to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outputs {
    /// jobs.csv.
    pub jobs: bool,
    /// pods.csv.
    pub pods: bool,
    /// timeseries.csv.
    pub timeseries: bool,
    /// queues.csv.
    pub queues: bool,
    /// decisions.csv.
    pub decisions: bool,
    /// events.csv (runs with `spec.faults`).
    pub events: bool,
}

impl Default for Outputs {
    fn default() -> Outputs {
        Outputs::ALL
    }
}

impl Outputs {
    /// Every file (the default).
    pub const ALL: Outputs =
        Outputs { jobs: true, pods: true, timeseries: true, queues: true, decisions: true, events: true };
    /// No row file (the summary only).
    pub const NONE: Outputs =
        Outputs { jobs: false, pods: false, timeseries: false, queues: false, decisions: false, events: false };

    /// Parses a comma-separated list of [`NAMES`] (`jobs,timeseries`); `summary`
    /// names the summary, which is always written. Names may repeat; an empty
    /// list or an unknown name is an error that says what is accepted.
    pub fn parse(list: &str) -> Result<Outputs, String> {
        let mut o = Outputs::NONE;
        if list.trim().is_empty() {
            return Err(format!("expected a comma-separated list of {}", NAMES.join(", ")));
        }
        for name in list.split(',').map(str::trim) {
            match name {
                "jobs" => o.jobs = true,
                "pods" => o.pods = true,
                "timeseries" => o.timeseries = true,
                "queues" => o.queues = true,
                "decisions" => o.decisions = true,
                "events" => o.events = true,
                "summary" => {}
                "" => return Err(format!("an empty name in `{list}`; expected some of {}", NAMES.join(", "))),
                other => {
                    return Err(format!("unknown output `{other}`; expected some of {}", NAMES.join(", ")));
                }
            }
        }
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_chooses_its_files_and_nothing_else() {
        let o = Outputs::parse("jobs, timeseries,jobs,summary").unwrap();
        assert!(o.jobs && o.timeseries);
        assert!(!o.pods && !o.queues && !o.decisions && !o.events);
        assert_eq!(Outputs::parse("summary").unwrap(), Outputs::NONE);
        let all = Outputs::parse("events,decisions,queues,timeseries,pods,jobs").unwrap();
        assert_eq!(all, Outputs::ALL);
    }

    #[test]
    fn unknown_and_empty_names_are_refused_with_what_is_accepted() {
        let e = Outputs::parse("jobs,job").unwrap_err();
        assert_eq!(
            e,
            "unknown output `job`; expected some of jobs, pods, timeseries, queues, decisions, events, summary"
        );
        assert!(Outputs::parse("").unwrap_err().starts_with("expected a comma-separated list of jobs, pods"));
        assert!(Outputs::parse("jobs,,pods").unwrap_err().starts_with("an empty name in `jobs,,pods`"));
    }
}
