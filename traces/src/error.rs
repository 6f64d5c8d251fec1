//! Import errors, each naming the file and, for a bad row, where it is.

use std::path::PathBuf;

use crate::report::SkipReason;

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

/// Why an import failed.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file could not be opened or read.
    #[error("{}: {source}", path.display())]
    Io {
        /// File.
        path: PathBuf,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
    /// A bad row, in strict mode (or a syntax error that makes the rest of the
    /// file unreadable, in any mode).
    #[error("{}: line {}, row {}: {reason}: {message}", path.display(), at.line, at.row)]
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
    #[error("{}: {message}", path.display())]
    File {
        /// File.
        path: PathBuf,
        /// What was wrong.
        message: String,
    },
    /// The consumer of [`stream`](crate::stream) refused a job.
    #[error("{}: {source}", path.display())]
    Sink {
        /// File being imported.
        path: PathBuf,
        /// The consumer's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl ImportError {
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
