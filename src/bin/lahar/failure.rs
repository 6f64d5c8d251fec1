//! Why a command failed, as the user reads it on stderr, and its exit code (0 ok,
//! 1 the work failed, 2 bad input or usage). Every command returns
//! `Result<ExitCode, Failure>`; `main` reports the failure once.

use lahar::scenario::{ScenarioError, Warning};
use std::process::ExitCode;

/// A failed command.
pub(crate) enum Failure {
    /// Located problems in the input: each printed `error: file:line:col: path:
    /// message` (its further lines indented), counted when several. Exit 2.
    Input(ScenarioError),
    /// `--strict` refused the input's warnings: printed as [`Failure::Input`], then
    /// why. Exit 2.
    Strict(ScenarioError),
    /// One message and the exit code it carries.
    Message(String, u8),
}

impl Failure {
    /// Bad usage or input that has no location: exit 2.
    pub(crate) fn usage(message: impl Into<String>) -> Failure {
        Failure::Message(message.into(), 2)
    }

    /// A problem with a command-line flag, located as `<command line>: FLAG`.
    pub(crate) fn flag(flag: &str, message: impl Into<String>) -> Failure {
        Failure::Input(ScenarioError::one("<command line>", None, flag, message))
    }

    /// `--strict`: the warnings as errors.
    pub(crate) fn strict(warnings: &[Warning]) -> Failure {
        Failure::Strict(ScenarioError { errors: warnings.iter().map(Warning::as_error).collect() })
    }

    /// Prints the failure on stderr and gives its exit code.
    pub(crate) fn report(self) -> ExitCode {
        match self {
            Failure::Input(e) => {
                located(&e);
                ExitCode::from(2)
            }
            Failure::Strict(e) => {
                located(&e);
                errln!("(--strict: warnings are errors)");
                ExitCode::from(2)
            }
            Failure::Message(m, code) => {
                errln!("error: {m}");
                ExitCode::from(code)
            }
        }
    }
}

/// One `error:` line per problem (a message's further lines indented), then the
/// count when there are several.
fn located(e: &ScenarioError) {
    for err in &e.errors {
        let text = err.to_string();
        let mut lines = text.lines();
        errln!("error: {}", lines.next().unwrap_or_default());
        for l in lines {
            errln!("  {l}");
        }
    }
    if e.errors.len() > 1 {
        errln!("{} errors", e.errors.len());
    }
}

impl From<ScenarioError> for Failure {
    fn from(e: ScenarioError) -> Failure {
        Failure::Input(e)
    }
}

impl From<lahar::CmdError> for Failure {
    fn from(e: lahar::CmdError) -> Failure {
        let code = e.exit_code();
        Failure::Message(e.to_string(), code)
    }
}

impl From<lahar::RunError> for Failure {
    fn from(e: lahar::RunError) -> Failure {
        match e {
            lahar::RunError::Input(e) => Failure::Input(e),
            e => {
                let code = e.exit_code();
                Failure::Message(e.to_string(), code)
            }
        }
    }
}

impl From<lahar::sweep::ExecError> for Failure {
    fn from(e: lahar::sweep::ExecError) -> Failure {
        let code = e.exit_code();
        Failure::Message(e.to_string(), code)
    }
}
