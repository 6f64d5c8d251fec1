//! Why a command failed, and the exit code the CLI contract gives it (0 ok, 1 the
//! work failed, 2 bad input or usage): [`RunError`] for `run`, [`CmdError`] for
//! the commands over files (`check`, `compare`, `report`, `trace`).

use crate::outdir::OutDirError;
use std::path::PathBuf;

/// Why a command over files failed, with its exit code.
#[derive(Debug, thiserror::Error)]
pub enum CmdError {
    /// Bad input: a missing or unreadable file or directory, a bad option value,
    /// an invalid trace (the message names the file and, for a bad row, its line
    /// and row). Exit 2.
    #[error("{0}")]
    Input(String),
    /// The outputs could not be written or rendered. Exit 1.
    #[error("{0}")]
    Output(String),
}

impl CmdError {
    /// The exit code the CLI contract gives this failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            CmdError::Input(_) => 2,
            CmdError::Output(_) => 1,
        }
    }
}

/// A run that failed after its input was accepted.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Writing outputs failed.
    #[error("cannot write outputs to {dir}: {source}")]
    Write {
        /// Output directory.
        dir: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// An `--explain` pod that the scenario does not have, or names ambiguously
    /// (bad input: exit code 2).
    #[error("{0}")]
    Input(crate::scenario::ScenarioError),
    /// A source could not make its jobs again during the run (a trace changed or
    /// went away after it was validated).
    #[error("{0}")]
    Source(String),
    /// The output directory holds files lahar did not write, or another kind's
    /// outputs (exit code 2).
    #[error("{0}")]
    Output(String),
    /// Plotting the written outputs failed.
    #[error("cannot plot the outputs in {dir}: {msg}")]
    Plots {
        /// Output directory.
        dir: PathBuf,
        /// Cause.
        msg: String,
    },
}

impl From<OutDirError> for CmdError {
    /// A directory refused is the input's fault (exit 2), as for a run; the file
    /// system refusing is an output failure (exit 1).
    fn from(e: OutDirError) -> CmdError {
        match e {
            e @ OutDirError::Refused { .. } => CmdError::Input(e.to_string()),
            e @ OutDirError::Io { .. } => CmdError::Output(e.to_string()),
        }
    }
}

impl From<OutDirError> for RunError {
    fn from(e: OutDirError) -> RunError {
        match e {
            OutDirError::Io { dir, source } => RunError::Write { dir, source },
            e @ OutDirError::Refused { .. } => RunError::Output(e.to_string()),
        }
    }
}

impl RunError {
    /// The exit code the CLI contract gives this failure: 2 when the input is at
    /// fault (an `--explain` pod it lacks, a source that changed under the run, an
    /// output directory holding what lahar did not write), else 1.
    pub fn exit_code(&self) -> u8 {
        match self {
            RunError::Input(_) | RunError::Source(_) | RunError::Output(_) => 2,
            RunError::Write { .. } | RunError::Plots { .. } => 1,
        }
    }
}
