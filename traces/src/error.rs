//! Import errors, each naming the file and, for a bad row, where it is.

use lahar_core::util::diag::Diagnostic;
use std::fmt;
use std::path::PathBuf;

/// Why a row (or, for formats that group rows, a job) was not turned into a job.
///
/// The first three are *invalid* data: in strict mode they abort the import. The
/// others are valid records of jobs lahar cannot replay; they are skipped and
/// counted in both modes (otherwise strict mode would reject every real trace).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SkipReason {
    /// Unparsable: wrong number of fields, a value of the wrong type or out of range,
    /// invalid UTF-8, inconsistent rows of one job.
    Malformed,
    /// A required value is empty or absent.
    MissingField,
    /// The job ends before it starts.
    EndBeforeStart,
    /// The job never started (pending, cancelled in the queue, no attempts).
    NotStarted,
    /// The job has no end time (still running when the trace was cut).
    StillRunning,
    /// The job ran for zero time.
    ZeroDuration,
    /// The trace records the submit time as unknown (SWF `-1`, Philly `None`).
    UnknownSubmit,
    /// The trace records the run time as unknown (SWF `-1`).
    UnknownRunTime,
    /// The job's size is unknown or zero (SWF processors `-1`, no machines).
    NoResources,
    /// Submitted before an explicit time origin.
    BeforeOrigin,
}

impl SkipReason {
    /// Every reason, in report order.
    pub const ALL: [SkipReason; 10] = [
        SkipReason::Malformed,
        SkipReason::MissingField,
        SkipReason::EndBeforeStart,
        SkipReason::NotStarted,
        SkipReason::StillRunning,
        SkipReason::ZeroDuration,
        SkipReason::UnknownSubmit,
        SkipReason::UnknownRunTime,
        SkipReason::NoResources,
        SkipReason::BeforeOrigin,
    ];

    /// The snake_case name used in reports and docs.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::Malformed => "malformed",
            SkipReason::MissingField => "missing_field",
            SkipReason::EndBeforeStart => "end_before_start",
            SkipReason::NotStarted => "not_started",
            SkipReason::StillRunning => "still_running",
            SkipReason::ZeroDuration => "zero_duration",
            SkipReason::UnknownSubmit => "unknown_submit",
            SkipReason::UnknownRunTime => "unknown_run_time",
            SkipReason::NoResources => "no_resources",
            SkipReason::BeforeOrigin => "before_origin",
        }
    }

    /// True for invalid data (an error in strict mode); false for valid records
    /// that are filtered out.
    pub fn is_invalid(self) -> bool {
        matches!(self, SkipReason::Malformed | SkipReason::MissingField | SkipReason::EndBeforeStart)
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a row is in its file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// 1-based physical line. For CSV and SWF the line the row starts on; for
    /// Philly's JSON the line on which the job's object ends (the parser only
    /// learns where an element ends).
    pub line: u64,
    /// 1-based index of the row among the file's data rows (headers and comments
    /// excluded); for Philly, the index of the job in the top-level array.
    pub row: u64,
}

/// Why an import failed. It prints as its [`ImportError::diagnostic`].
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file could not be opened or read.
    Io {
        /// File.
        path: PathBuf,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
    /// A bad row, in strict mode (or a syntax error that makes the rest of the
    /// file unreadable, in any mode).
    Row {
        /// File.
        path: PathBuf,
        /// Where.
        at: Location,
        /// Category, as counted when not strict.
        reason: SkipReason,
        /// What was wrong, naming the field.
        message: String,
    },
    /// The file as a whole is unusable (a required column is missing, the JSON is
    /// not an array...).
    File {
        /// File.
        path: PathBuf,
        /// What was wrong.
        message: String,
    },
    /// The consumer of [`stream`](crate::stream) refused a job.
    Sink {
        /// File being imported.
        path: PathBuf,
        /// The consumer's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.diagnostic().fmt(f)
    }
}

impl ImportError {
    /// The error as the located problem every input reader reports
    /// ([`Diagnostic`]): the file, the row as its field path (`line L, row R`; a
    /// CSV's column is not known), the reason and message. The error's own
    /// message is this.
    pub fn diagnostic(&self) -> Diagnostic {
        let file = match self {
            ImportError::Io { path, .. }
            | ImportError::Row { path, .. }
            | ImportError::File { path, .. }
            | ImportError::Sink { path, .. } => path.display().to_string(),
        };
        match self {
            ImportError::Io { source, .. } => Diagnostic::new(&file, None, "", source.to_string()),
            ImportError::Row { at, reason, message, .. } => Diagnostic::new(
                &file,
                None,
                &format!("line {}, row {}", at.line, at.row),
                format!("{reason}: {message}"),
            ),
            ImportError::File { message, .. } => Diagnostic::new(&file, None, "", message.clone()),
            ImportError::Sink { source, .. } => Diagnostic::new(&file, None, "", source.to_string()),
        }
    }

    /// The location of the offending row, if the error is about one.
    pub fn location(&self) -> Option<Location> {
        match self {
            ImportError::Row { at, .. } => Some(*at),
            _ => None,
        }
    }
}

/// Why the canonical CSV writer failed.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Writing failed.
    #[error("cannot write the trace: {0}")]
    Io(#[from] std::io::Error),
    /// The CSV encoder failed.
    #[error("cannot write the trace: {0}")]
    Csv(#[from] csv::Error),
    /// The job uses a feature the canonical CSV cannot carry; writing it would
    /// silently change it.
    #[error("job `{job}`: the canonical trace CSV cannot represent {what}")]
    Unrepresentable {
        /// Job name.
        job: String,
        /// The feature.
        what: String,
    },
}

#[cfg(test)]
mod tests {
    use super::{ImportError, Location, SkipReason};
    use std::path::PathBuf;

    #[test]
    fn an_import_error_is_the_diagnostic_it_prints_as() {
        let row = ImportError::Row {
            path: PathBuf::from("t.csv"),
            at: Location { line: 7, row: 5 },
            reason: SkipReason::Malformed,
            message: "`gpus`: expected an integer".into(),
        };
        let d = row.diagnostic();
        assert_eq!((d.file.as_str(), d.at, d.path.as_str()), ("t.csv", None, "line 7, row 5"));
        assert_eq!(d.to_string(), row.to_string());
        assert_eq!(d.to_string(), "t.csv: line 7, row 5: malformed: `gpus`: expected an integer");
        let file = ImportError::File { path: PathBuf::from("t.json"), message: "expected an array".into() };
        assert_eq!(file.diagnostic().to_string(), file.to_string());
        assert_eq!(file.diagnostic().to_string(), "t.json: expected an array");
    }
}
