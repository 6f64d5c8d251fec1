//! [`Diagnostic`]: one problem in the user's input, located — the one type every
//! reader of input reports with (scenario files, manifests, schedulers' confs,
//! traces, sweep specs), printed as `file:line:col: field.path: what was expected`.

use std::fmt;

/// One located problem in an input.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostic {
    /// File name as shown to the user (`<command line>`, `<default scenario>`), or
    /// empty for a text that is not a file of its own (a conf inside a scenario,
    /// until the scenario loader names the file with [`Diagnostic::in_file`]) or a
    /// problem of the run rather than of a file.
    pub file: String,
    /// 1-based line and column, when known.
    pub at: Option<(u64, u64)>,
    /// Field path (`spec.cluster.nodeGroups[0].count`, `document 2: spec.tasks[0]`),
    /// or empty for a problem of the file as a whole.
    pub path: String,
    /// What is wrong and what was expected.
    pub message: String,
}

impl Diagnostic {
    /// A problem at `file:at`, field `path`.
    pub fn new(file: &str, at: Option<(u64, u64)>, path: &str, message: impl Into<String>) -> Diagnostic {
        Diagnostic { file: file.to_string(), at, path: path.to_string(), message: message.into() }
    }

    /// The same problem, in `file` (a text read from inside another file).
    pub fn in_file(self, file: &str) -> Diagnostic {
        Diagnostic { file: file.to_string(), ..self }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::with_capacity(3);
        match (self.file.is_empty(), self.at) {
            (false, Some((l, c))) => parts.push(format!("{}:{l}:{c}", self.file)),
            (false, None) => parts.push(self.file.clone()),
            (true, Some((l, c))) => parts.push(format!("{l}:{c}")),
            (true, None) => {}
        }
        if !self.path.is_empty() {
            parts.push(self.path.clone());
        }
        parts.push(self.message.clone());
        write!(f, "{}", parts.join(": "))
    }
}

#[cfg(test)]
mod tests {
    use super::Diagnostic;

    #[test]
    fn every_part_is_printed_when_known() {
        let d = |file: &str, at, path: &str| Diagnostic::new(file, at, path, "expected a number").to_string();
        assert_eq!(d("s.yaml", Some((3, 5)), "spec.x"), "s.yaml:3:5: spec.x: expected a number");
        assert_eq!(d("s.yaml", None, "spec.x"), "s.yaml: spec.x: expected a number");
        assert_eq!(d("s.yaml", None, ""), "s.yaml: expected a number");
        assert_eq!(d("", Some((3, 5)), "tiers[0]"), "3:5: tiers[0]: expected a number");
        assert_eq!(d("", None, "job `a`"), "job `a`: expected a number");
        assert_eq!(d("", None, ""), "expected a number");
        let named = Diagnostic::new("", Some((1, 2)), "actions", "m").in_file("conf.yaml");
        assert_eq!(named.to_string(), "conf.yaml:1:2: actions: m");
    }
}
