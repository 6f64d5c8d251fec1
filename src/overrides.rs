//! Scenario overrides by field path: `lahar run --set PATH=VALUE`, `--seed N` and
//! the axes of `lahar sweep`.
//!
//! A PATH is dotted with list indices, `spec.cluster.nodeGroups[0].count`; a key
//! holding dots or brackets is quoted, `labels["nvidia.com/gpu.product"]`. The
//! VALUE is YAML (`--set 'spec.scheduler={baseline: sjf}'`). Overrides edit the
//! scenario's YAML tree; the edited tree is written back as YAML text and
//! validated like any scenario, and every error found is reported where the user
//! can fix it: an error inside an overridden value names the override, any other
//! keeps its line and column in the original file.

use crate::scenario::{Diagnostic, Scenario, ScenarioError};
use lahar_workloads::manifest::yaml::{At, parse_documents};
use lahar_workloads::manifest::{Node, Val};
use std::fmt::Write as _;
use std::path::Path;

/// One step of a field path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    /// A mapping key.
    Key(String),
    /// A list index.
    Index(usize),
}

/// A parsed field path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldPath(pub Vec<Seg>);

impl std::fmt::Display for FieldPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, s) in self.0.iter().enumerate() {
            match s {
                Seg::Key(k) if k.contains(['.', '[', ']', '"']) || k.is_empty() => write!(f, "[{k:?}]")?,
                Seg::Key(k) if i == 0 => write!(f, "{k}")?,
                Seg::Key(k) => write!(f, ".{k}")?,
                Seg::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

impl FieldPath {
    /// Parses `a.b[0]["c.d"]`.
    pub fn parse(text: &str) -> Result<FieldPath, String> {
        let mut segs = Vec::new();
        let b = text.as_bytes();
        let mut i = 0;
        let bad = |why: &str| format!("bad field path `{text}`: {why}");
        while i < b.len() {
            match b[i] {
                b'[' if text[i..].starts_with("[\"") => {
                    // A quoted key may hold dots and brackets: it ends at `"]`.
                    let end = text[i + 2..].find("\"]").map(|e| e + i + 2).ok_or_else(|| bad("unclosed quoted key"))?;
                    segs.push(Seg::Key(text[i + 2..end].to_string()));
                    i = end + 2;
                }
                b'[' => {
                    let close = text[i..].find(']').map(|c| c + i).ok_or_else(|| bad("`[` without `]`"))?;
                    let inner = &text[i + 1..close];
                    let n = inner.parse::<usize>().map_err(|_| bad(&format!("`[{inner}]` is not a list index")))?;
                    segs.push(Seg::Index(n));
                    i = close + 1;
                }
                // A dot separates keys: one, between a key or index and a key.
                b'.' if i > 0 && i + 1 < b.len() && !matches!(b[i + 1], b'.' | b'[' | b']') => i += 1,
                b'.' => return Err(bad("a path starts and ends with a key, not `.`")),
                _ => {
                    let end = text[i..].find(['.', '[', ']']).map_or(text.len(), |e| e + i);
                    if end == i {
                        return Err(bad("unexpected `]`"));
                    }
                    segs.push(Seg::Key(text[i..end].to_string()));
                    i = end;
                }
            }
        }
        if segs.is_empty() {
            return Err(bad("empty"));
        }
        Ok(FieldPath(segs))
    }

    /// Whether `path` (a validation error's dotted path) is this path or below it.
    fn covers(&self, path: &str) -> bool {
        let me = self.to_string();
        path == me || path.strip_prefix(me.as_str()).is_some_and(|r| r.starts_with(['.', '[']))
    }
}

/// One override: where it came from (for messages), the path and the new value.
#[derive(Clone, Debug)]
pub struct Override {
    /// File of the override (`<command line>` for `--set`).
    pub file: String,
    /// Position in that file, when it is one.
    pub at: At,
    /// How to name it in messages (`--set spec.seed=3`, `axis ratePerHour value 2`).
    pub origin: String,
    /// The field.
    pub path: FieldPath,
    /// The new value.
    pub value: Node,
}

impl Override {
    /// Parses a `--set PATH=VALUE` argument (the VALUE as YAML).
    pub fn from_set(arg: &str) -> Result<Override, String> {
        let (p, v) = arg.split_once('=').ok_or_else(|| format!("`{arg}`: expected PATH=VALUE"))?;
        let path = FieldPath::parse(p.trim())?;
        let value = parse_value(v).map_err(|m| format!("`{arg}`: the value is not YAML: {m}"))?;
        Ok(Override { file: "<command line>".into(), at: None, origin: format!("--set {arg}"), path, value })
    }
}

/// Parses a YAML value (`3`, `binpack`, `{baseline: sjf}`, empty = null).
pub fn parse_value(text: &str) -> Result<Node, String> {
    if text.trim().is_empty() {
        return Ok(Node { at: None, val: Val::Null });
    }
    let docs = parse_documents(text, "<value>").map_err(|(_, m)| m)?;
    match docs.len() {
        0 => Ok(Node { at: None, val: Val::Null }),
        1 => Ok(strip_positions(docs.into_iter().next().expect("one").root)),
        _ => Err("several YAML documents".into()),
    }
}

fn strip_positions(mut n: Node) -> Node {
    n.at = None;
    n.val = match n.val {
        Val::Seq(v) => Val::Seq(v.into_iter().map(strip_positions).collect()),
        Val::Map(m) => Val::Map(m.into_iter().map(|(k, v)| (k, strip_positions(v))).collect()),
        v => v,
    };
    n
}

/// Sets `path` in `root` to `value`. Missing mapping keys are created (an unknown
/// field is then reported by validation, like one written in the file); a list
/// index must exist.
pub fn apply(root: &mut Node, path: &FieldPath, value: Node) -> Result<(), String> {
    let mut cur = root;
    let mut walked = FieldPath(Vec::new());
    for (depth, seg) in path.0.iter().enumerate() {
        let here = walked.to_string();
        let here = if here.is_empty() { "the scenario".to_string() } else { format!("`{here}`") };
        if matches!(cur.val, Val::Null) {
            cur.val = match seg {
                Seg::Key(_) => Val::Map(Vec::new()),
                Seg::Index(_) => Val::Seq(Vec::new()),
            };
        }
        let kind = cur.type_name();
        cur = match (seg, &mut cur.val) {
            (Seg::Key(k), Val::Map(m)) => {
                let pos = match m.iter().position(|(mk, _)| mk == k) {
                    Some(p) => p,
                    // A list index cannot go into a field that does not exist.
                    None if matches!(path.0.get(depth + 1), Some(Seg::Index(_))) => {
                        let near = m.iter().map(|(mk, _)| mk.as_str()).min_by_key(|mk| crate::edit_distance(mk, k));
                        let hint = match near {
                            Some(n) if crate::edit_distance(n, k) <= 2 => format!("; did you mean `{n}`?"),
                            _ => String::new(),
                        };
                        return Err(format!("{here} has no list `{k}`{hint}"));
                    }
                    None => {
                        m.push((k.clone(), Node { at: None, val: Val::Null }));
                        m.len() - 1
                    }
                };
                &mut m[pos].1
            }
            (Seg::Index(i), Val::Seq(v)) => {
                let len = v.len();
                v.get_mut(*i).ok_or_else(|| format!("{here} has {len} items, no index {i}"))?
            }
            (Seg::Key(k), _) => return Err(format!("{here} is {kind}, not a map: no key `{k}`")),
            (Seg::Index(i), _) => return Err(format!("{here} is {kind}, not a list: no index {i}")),
        };
        walked.0.push(seg.clone());
    }
    *cur = value;
    Ok(())
}

/// The node at `path` (a validation error's dotted path), or its nearest ancestor.
fn locate<'a>(root: &'a Node, path: &str) -> Option<&'a Node> {
    let Ok(p) = FieldPath::parse(path) else { return None };
    let mut cur = root;
    let mut best = None;
    for seg in p.0 {
        let next = match (&seg, &cur.val) {
            (Seg::Key(k), Val::Map(_)) => cur.get(k),
            (Seg::Index(i), Val::Seq(v)) => v.get(*i),
            _ => None,
        };
        match next {
            Some(n) => {
                cur = n;
                if n.at.is_some() {
                    best = Some(n);
                }
            }
            None => break,
        }
    }
    best
}

/// Where key `k` is first written in `tree` (its value's position), depth first.
fn find_key(tree: &Node, k: &str) -> Option<At> {
    match &tree.val {
        Val::Map(m) => m.iter().find_map(|(key, v)| if key == k { Some(v.at.or(tree.at)) } else { find_key(v, k) }),
        Val::Seq(v) => v.iter().find_map(|n| find_key(n, k)),
        _ => None,
    }
}

/// The first key of `path` that `root` does not have (the one an override creates).
fn first_new_key(root: &Node, path: &FieldPath) -> Option<String> {
    let mut cur = root;
    for seg in &path.0 {
        cur = match (seg, &cur.val) {
            (Seg::Key(k), Val::Map(_)) => match cur.get(k) {
                Some(n) => n,
                None => return Some(k.clone()),
            },
            (Seg::Index(i), Val::Seq(v)) => v.get(*i)?,
            _ => return None,
        };
    }
    None
}

/// Writes a value tree as YAML text (block style; scalars quoted as JSON, which is
/// YAML, so no string is ever read back as another type).
pub fn to_yaml(root: &Node) -> String {
    let mut out = String::new();
    emit(root, 0, &mut out);
    out
}

fn scalar(v: &Val) -> Option<String> {
    Some(match v {
        Val::Null => "null".into(),
        Val::Bool(b) => b.to_string(),
        Val::Int(i) => i.to_string(),
        Val::Float(f) if f.is_nan() => ".nan".into(),
        Val::Float(f) if f.is_infinite() => (if *f > 0.0 { ".inf" } else { "-.inf" }).into(),
        // Debug keeps a decimal point or exponent, so the value stays a float.
        Val::Float(f) => format!("{f:?}"),
        Val::Str(s) => quote(s),
        Val::Seq(v) if v.is_empty() => "[]".into(),
        Val::Map(m) if m.is_empty() => "{}".into(),
        _ => return None,
    })
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

fn emit(n: &Node, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match &n.val {
        Val::Map(m) if !m.is_empty() => {
            for (k, v) in m {
                match scalar(&v.val) {
                    Some(s) => writeln!(out, "{pad}{}: {s}", quote(k)).expect("string write"),
                    None => {
                        writeln!(out, "{pad}{}:", quote(k)).expect("string write");
                        emit(v, indent + 2, out);
                    }
                }
            }
        }
        Val::Seq(items) if !items.is_empty() => {
            for v in items {
                match scalar(&v.val) {
                    Some(s) => writeln!(out, "{pad}- {s}").expect("string write"),
                    None => {
                        // The item's block starts on the dash line, indented under it.
                        let mut inner = String::new();
                        emit(v, indent + 2, &mut inner);
                        let rest = inner.strip_prefix(&" ".repeat(indent + 2)).unwrap_or(&inner);
                        write!(out, "{pad}- {rest}").expect("string write");
                    }
                }
            }
        }
        v => writeln!(out, "{pad}{}", scalar(v).expect("an empty container or scalar")).expect("string write"),
    }
}

/// Loads scenario `text` (from `file`, relative paths against `base`) with
/// overrides applied. Without overrides this is [`crate::scenario::load_str`].
pub fn load_with(text: &str, file: &str, base: &Path, overrides: &[Override]) -> Result<Scenario, ScenarioError> {
    if overrides.is_empty() {
        return crate::scenario::load_str(text, file, base);
    }
    let root = parse_one(text, file)?;
    load_tree(&root, file, base, overrides)
}

/// The one YAML document of a scenario file, as a located tree.
pub fn parse_one(text: &str, file: &str) -> Result<Node, ScenarioError> {
    let docs = parse_documents(text, file).map_err(|(at, m)| ScenarioError::one(file, at, "", m))?;
    match docs.len() {
        1 => Ok(docs.into_iter().next().expect("one document").root),
        n => Err(ScenarioError::one(file, None, "", format!("expected one YAML document, found {n}"))),
    }
}

/// Loads a scenario given as a located tree (a file's, or one written inline in a
/// sweep file: positions are then the sweep file's) with overrides applied.
pub fn load_tree(root: &Node, file: &str, base: &Path, overrides: &[Override]) -> Result<Scenario, ScenarioError> {
    let mut edited = root.clone();
    let mut errors = Vec::new();
    for o in overrides {
        if let Err(m) = apply(&mut edited, &o.path, o.value.clone()) {
            errors.push(Diagnostic { file: o.file.clone(), at: o.at, path: o.path.to_string(), message: m });
        }
    }
    if !errors.is_empty() {
        return Err(ScenarioError { errors });
    }
    crate::scenario::load_str(&to_yaml(&edited), file, base).map_err(|e| relocate(e, root, file, overrides))
}

/// Points the errors found in the edited text back at what the user wrote.
fn relocate(e: ScenarioError, root: &Node, file: &str, overrides: &[Override]) -> ScenarioError {
    let root = Some(root);
    let errors = e
        .errors
        .into_iter()
        .map(|mut err| {
            if err.file != file {
                return err;
            }
            // The edited text's snippet lines would show text the user never wrote.
            err.message = err.message.lines().next().unwrap_or_default().to_string();
            // An unknown field the override itself created is the override's fault.
            let created = |o: &&Override| {
                root.and_then(|r| first_new_key(r, &o.path))
                    .is_some_and(|k| err.message.contains(&format!("unknown field `{k}`")))
            };
            // An unknown field that the checker could not place (no path): the
            // override whose value holds that key, else the key in the file.
            let unknown = err.message.strip_prefix("unknown field `").and_then(|r| r.split('`').next());
            let in_value =
                |o: &&Override| err.path.is_empty() && unknown.is_some_and(|k| find_key(&o.value, k).is_some());
            let culprit = overrides.iter().rev().find(|o| o.path.covers(&err.path) || created(o) || in_value(o));
            if let Some(o) = culprit {
                let hint = scalar_for_mapping(&err.message, o);
                err.message = format!("{} (set by {}){hint}", err.message, o.origin);
                err.file = o.file.clone();
                err.at = o.at;
            } else if let (true, Some(k), Some(r)) = (err.path.is_empty(), unknown, root) {
                err.at = find_key(r, k).unwrap_or(r.at);
            } else {
                err.at = root.and_then(|r| locate(r, &err.path)).and_then(|n| n.at);
            }
            err
        })
        .collect();
    ScenarioError { errors }
}

/// What to write instead when an override gave a plain value where a mapping
/// belongs (`--set spec.scheduler=sjf`): its fields one by one, or the whole
/// mapping — for a baseline's name, the baseline mapping itself.
fn scalar_for_mapping(message: &str, o: &Override) -> String {
    let plain = match &o.value.val {
        Val::Str(s) if !s.contains([' ', ':', '{', '}', '\'', '"']) => Some(s.clone()),
        v => scalar(v),
    };
    let Some(v) = plain.filter(|_| message.starts_with("expected mapping")) else {
        return String::new();
    };
    let path = o.path.to_string();
    if path == "spec.scheduler" && lahar_policies::baselines::spec_of(v.as_str()).is_some() {
        return format!(
            "; `{path}` is a mapping: write --set '{path}={{baseline: {v}}}' (or --set {path}.baseline={v})"
        );
    }
    format!(
        "; `{path}` is a mapping: set one of its fields (--set {path}.FIELD={v}) or write the whole mapping (--set '{path}={{FIELD: {v}}}')"
    )
}

/// Reads a scenario file, applies field overrides (`--set`, `--seed`, sweep axes)
/// and validates the result; errors point at the file or at the override.
pub fn load_file_with(path: &Path, overrides: &[Override]) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    let text = lahar_core::util::files::read_to_string(path)
        .map_err(|e| ScenarioError::one(&file, None, "", format!("cannot read scenario: {e}")))?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    load_with(&text, &file, &base, overrides)
}

/// The scenario `lahar run --snapshot FILE` runs: the cluster snapshot `FILE` (its
/// nodes, queues, HyperNodes and workload; see docs/manifests.md) under Volcano's
/// default conf, named after the file, with field overrides (`--conf`, `--set`).
/// Errors in the snapshot name the snapshot file.
pub fn load_snapshot(path: &Path, overrides: &[Override]) -> Result<Scenario, ScenarioError> {
    let file = path.file_name().map(|f| f.to_string_lossy().to_string()).unwrap_or_default();
    let stem = path.file_stem().map(|f| f.to_string_lossy().to_string()).unwrap_or_else(|| "snapshot".into());
    let name: String = stem.chars().map(|c| if c == '/' || c == '\\' { '-' } else { c }).collect();
    let text = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: {}}}\nspec:\n  snapshot: {}\n",
        quoted(&name),
        quoted(&file)
    );
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    // Messages about the scenario as a whole name the snapshot; one about the
    // snapshot's path (missing, a folder, a pipe) has no place in it.
    let shown = path.display().to_string();
    load_with(&text, &shown, &base, overrides).map_err(|mut e| {
        for d in e.errors.iter_mut().filter(|d| d.file == shown && d.path == "spec.snapshot") {
            d.at = None;
            d.path.clear();
        }
        e
    })
}

/// A YAML double-quoted string.
fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_parse_and_print() {
        let p = FieldPath::parse("spec.cluster.nodeGroups[0].count").unwrap();
        assert_eq!(
            p.0,
            vec![
                Seg::Key("spec".into()),
                Seg::Key("cluster".into()),
                Seg::Key("nodeGroups".into()),
                Seg::Index(0),
                Seg::Key("count".into())
            ]
        );
        assert_eq!(p.to_string(), "spec.cluster.nodeGroups[0].count");
        let q = FieldPath::parse(r#"labels["nvidia.com/gpu.product"]"#).unwrap();
        assert_eq!(q.0[1], Seg::Key("nvidia.com/gpu.product".into()));
        assert_eq!(q.to_string(), r#"labels["nvidia.com/gpu.product"]"#);
        for bad in ["", ".a", "a.", "a[x]", "a[0", "a]", "a..b", "a.[0]"] {
            assert!(FieldPath::parse(bad).is_err(), "{bad}");
        }
        assert!(p.covers("spec.cluster.nodeGroups[0].count"));
        assert!(FieldPath::parse("spec.cluster").unwrap().covers("spec.cluster.nodeGroups[0]"));
        assert!(!FieldPath::parse("spec.cluster").unwrap().covers("spec.clusters"));
    }

    #[test]
    fn apply_edits_creates_keys_and_checks_indices() {
        let text = "spec:\n  seed: 1\n  list: [a, b]\n";
        let mut root = parse_documents(text, "f").unwrap().remove(0).root;
        apply(&mut root, &FieldPath::parse("spec.seed").unwrap(), parse_value("7").unwrap()).unwrap();
        apply(&mut root, &FieldPath::parse("spec.list[1]").unwrap(), parse_value("{x: 1}").unwrap()).unwrap();
        apply(&mut root, &FieldPath::parse("spec.output.dir").unwrap(), parse_value("out").unwrap()).unwrap();
        let e = apply(&mut root, &FieldPath::parse("spec.list[2]").unwrap(), parse_value("1").unwrap());
        assert_eq!(e.unwrap_err(), "`spec.list` has 2 items, no index 2");
        let e = apply(&mut root, &FieldPath::parse("spec.seed.x").unwrap(), parse_value("1").unwrap());
        assert_eq!(e.unwrap_err(), "`spec.seed` is an integer, not a map: no key `x`");
        let y = to_yaml(&root);
        assert_eq!(
            y,
            "\"spec\":\n  \"seed\": 7\n  \"list\":\n    - \"a\"\n    - \"x\": 1\n  \"output\":\n    \"dir\": \"out\"\n"
        );
        // What is written reads back as the same tree.
        let back = strip_positions(parse_documents(&y, "f").unwrap().remove(0).root);
        assert_eq!(back, strip_positions(root));
    }

    #[test]
    fn scalars_keep_their_types() {
        let v = parse_value("[1, 1.5, '2', true, null, 1e300, x: y]").unwrap();
        let y = to_yaml(&Node { at: None, val: Val::Map(vec![("v".into(), v.clone())]) });
        let back = strip_positions(parse_documents(&y, "f").unwrap().remove(0).root);
        assert_eq!(back.get("v").unwrap(), &v);
    }
}
