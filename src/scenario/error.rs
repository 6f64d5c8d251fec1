//! A scenario's problems: every [`Diagnostic`] validation found, and the
//! [`Warning`]s of input let through.

use std::fmt;

pub use lahar_core::util::diag::Diagnostic;

/// Every problem found in a scenario (validation collects all of them).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ScenarioError {
    /// The problems, in file order.
    pub errors: Vec<Diagnostic>,
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
        ScenarioError { errors: vec![Diagnostic { file: file.into(), at, path: path.into(), message: message.into() }] }
    }
}

/// Input lahar lets through but the user must know about: rows skipped, jobs that
/// can never be placed, a source that yields nothing. Printed once at the end of
/// `validate` and `run`, listed in summary.json (`warnings`); `--strict` makes every
/// warning an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// What kind of thing was let through (a stable code, e.g. `trace-rows-skipped`).
    pub kind: &'static str,
    /// How many (rows, jobs...).
    pub count: u64,
    /// Where the first one is: file, line and column, field path.
    pub file: String,
    /// 1-based line and column of the first one, when known.
    pub at: Option<(u64, u64)>,
    /// Field path of the source or object.
    pub path: String,
    /// What happened: the first case when `count` says how many there are in all
    /// (`first_of_many`), else the whole story, count included.
    pub message: String,
    /// Whether `message` describes the first of `count` cases.
    pub first_of_many: bool,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_error().fmt(f)
    }
}

impl Warning {
    /// The warning as an error (`--strict`).
    pub fn as_error(&self) -> Diagnostic {
        Diagnostic { file: self.file.clone(), at: self.at, path: self.path.clone(), message: self.text() }
    }

    /// The message with the count: the first case is described, the others counted.
    pub fn text(&self) -> String {
        if self.first_of_many && self.count > 1 {
            format!("{} ({} in all)", self.message, self.count)
        } else {
            self.message.clone()
        }
    }

    /// The location as `file:line:col` (or `file`).
    pub fn location(&self) -> String {
        self.location_in(std::path::Path::new(""))
    }

    /// [`Warning::location`] with its file named relative to `dir`, the folder
    /// the scenario's relative paths are read from (the file as typed when it
    /// is elsewhere): the same wherever the run was started from.
    pub fn location_in(&self, dir: &std::path::Path) -> String {
        let file = std::path::Path::new(&self.file);
        let file = file.strip_prefix(dir).unwrap_or(file).display().to_string();
        match self.at {
            Some((l, c)) => format!("{file}:{l}:{c}"),
            None => file,
        }
    }
}
