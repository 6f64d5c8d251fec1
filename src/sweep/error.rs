//! Why a sweep could not run.

use std::path::{Path, PathBuf};

/// Why a sweep could not run.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The output directory holds another sweep (exit 2).
    #[error("{0}")]
    Mismatch(String),
    /// The output directory cannot be written (exit 1).
    #[error("cannot write {path}: {source}")]
    Io {
        /// What was written.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
}

impl ExecError {
    /// The exit code the CLI contract gives this failure: 2 for another sweep in
    /// the directory, 1 for a write that failed.
    pub fn exit_code(&self) -> u8 {
        match self {
            ExecError::Mismatch(_) => 2,
            ExecError::Io { .. } => 1,
        }
    }
}

pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ExecError + '_ {
    move |source| ExecError::Io { path: path.to_path_buf(), source }
}

impl From<crate::outdir::OutDirError> for ExecError {
    fn from(e: crate::outdir::OutDirError) -> ExecError {
        match e {
            crate::outdir::OutDirError::Io { dir, source } => ExecError::Io { path: dir, source },
            e @ crate::outdir::OutDirError::Refused { .. } => ExecError::Mismatch(e.to_string()),
        }
    }
}
