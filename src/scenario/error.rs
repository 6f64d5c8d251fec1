//! Input errors with locations: `file:line:col: field.path: what was expected`.

use std::fmt;

/// One problem in an input file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// File name as given (or `<default scenario>`).
    pub file: String,
    /// 1-based line and column, when known.
    pub at: Option<(u64, u64)>,
    /// Field path, e.g. `spec.cluster.nodeGroups[0].count`.
    pub path: String,
    /// What is wrong and what was expected.
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some((l, c)) = self.at {
            write!(f, ":{l}:{c}")?;
        }
        if !self.path.is_empty() {
            write!(f, ": {}", self.path)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Every problem found in a scenario (validation collects all of them).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ScenarioError {
    /// The problems, in file order.
    pub errors: Vec<InputError>,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.errors.len();
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        if n > 1 {
            write!(f, "\n({n} errors)")?;
        }
        Ok(())
    }
}

impl ScenarioError {
    /// A single error.
    pub fn one(file: &str, at: Option<(u64, u64)>, path: &str, message: impl Into<String>) -> Self {
        ScenarioError { errors: vec![InputError { file: file.into(), at, path: path.into(), message: message.into() }] }
    }
}
