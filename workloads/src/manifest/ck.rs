//! Reading one manifest document: the error sink every reader writes to
//! ([`Ck`], with its typed field readers) and the small helpers all kinds share
//! (field paths, kinds, object metadata, derived names).

use super::Diagnostic;
use super::yaml::{At, Doc, Node, Val};
use lahar_core::model::job::MAX_PODS_PER_JOB;
use lahar_core::model::resource::{ResourceNames, Resources};
use lahar_core::util::time::{SimDuration, parse_duration};
use std::collections::BTreeMap;

/// Error sink for one document.
pub(crate) struct Ck<'e> {
    pub file: String,
    /// [`Doc::label`].
    pub doc: String,
    pub errs: &'e mut Vec<Diagnostic>,
    before: usize,
    /// Field paths as the user wrote them, for an object read inside another (a
    /// CronJob's job template): `(from, to)` prefixes, the first that matches
    /// (whole path components) rewrites the path.
    pub rewrite: Vec<(&'static str, String)>,
    /// [`Doc::text`]: the file's text, to quote what a value is written as.
    pub text: std::sync::Arc<str>,
}

impl<'e> Ck<'e> {
    pub fn new(d: &Doc, errs: &'e mut Vec<Diagnostic>) -> Self {
        let before = errs.len();
        Ck { file: d.file.clone(), doc: d.label(), errs, before, rewrite: Vec::new(), text: d.text.clone() }
    }
    /// A sink for an object read before (its file and [`Doc::label`]), so that
    /// names derived from it come out as when it was read.
    pub fn for_object(file: &str, doc: &str, errs: &'e mut Vec<Diagnostic>) -> Self {
        let before = errs.len();
        Ck { file: file.to_string(), doc: doc.to_string(), errs, before, rewrite: Vec::new(), text: "".into() }
    }
    pub fn err(&mut self, at: At, path: &str, message: impl Into<String>) {
        let rewritten = self.rewrite.iter().find_map(|(from, to)| {
            let rest = path.strip_prefix(from)?;
            (rest.is_empty() || rest.starts_with(['.', '['])).then(|| format!("{to}{rest}"))
        });
        let path = rewritten.as_deref().unwrap_or(path);
        let path = if path.is_empty() { self.doc.clone() } else { format!("{}: {path}", self.doc) };
        self.errs.push(Diagnostic { file: self.file.clone(), at, path, message: message.into() });
    }
    /// What a type error found at `n`: a number or boolean as it is written
    /// (`1.5`, `1e308`), a string with its text, else its kind (`a list`).
    pub fn found(&self, n: &Node) -> String {
        match &n.val {
            Val::Int(_) | Val::Float(_) | Val::Bool(_) => {
                let written = n.at.and_then(|at| super::yaml::written_at(&self.text, at));
                // Without the text, a float in its short form (`1e308`, not 309 digits).
                let read = || if let Val::Float(f) = n.val { Some(format!("{f:?}")) } else { n.scalar() };
                format!("`{}`", written.or_else(read).unwrap_or_default())
            }
            Val::Str(s) if s.chars().count() > 60 => {
                format!("the string `{}…`", s.chars().take(60).collect::<String>())
            }
            Val::Str(s) => format!("the string `{s}`"),
            _ => n.type_name().to_string(),
        }
    }
    /// True when no error was added since this sink was made.
    pub fn ok(&self) -> bool {
        self.errs.len() == self.before
    }

    pub fn str(&mut self, n: &Node, path: &str) -> Option<String> {
        match &n.val {
            Val::Str(s) => Some(s.clone()),
            Val::Int(_) | Val::Float(_) | Val::Bool(_) => n.scalar(),
            _ => {
                self.err(n.at, path, format!("expected a string, got {}", self.found(n)));
                None
            }
        }
    }
    pub fn opt_str(&mut self, parent: &Node, key: &str, path: &str) -> Option<String> {
        let n = parent.get(key)?;
        if n.val == Val::Null {
            return None;
        }
        self.str(n, &join(path, key))
    }
    /// An integer field: a YAML integer from `min` to `u32::MAX`. A quoted
    /// number is a string, which the API server refuses for an integer field
    /// (`cannot unmarshal string into ... of type int32`).
    pub fn int(&mut self, n: &Node, path: &str, min: i64) -> Option<i64> {
        let x = match &n.val {
            Val::Int(i) => Some(*i),
            Val::Str(s) if s.trim().parse::<i128>().is_ok() => {
                let msg = format!("expected an integer ≥ {min}, got the string `{s}` (write it without quotes)");
                self.err(n.at, path, msg);
                return None;
            }
            _ => None,
        };
        let min = i128::from(min);
        match x {
            Some(x) if x >= min && x <= i128::from(u32::MAX) => Some(x as i64),
            Some(x) if x >= min => {
                self.err(n.at, path, format!("must be an integer from {min} to {}, got {x}", u32::MAX));
                None
            }
            Some(x) => {
                self.err(n.at, path, format!("must be an integer ≥ {min}, got {x}"));
                None
            }
            None => {
                self.err(n.at, path, format!("expected an integer ≥ {min}, got {}", self.found(n)));
                None
            }
        }
    }
    pub fn opt_int(&mut self, parent: &Node, key: &str, path: &str, min: i64) -> Option<i64> {
        let n = parent.get(key)?;
        if n.val == Val::Null {
            return None;
        }
        self.int(n, &join(path, key), min)
    }
    /// A count of pods (`replicas`, `numNodes`, `instances`...): an integer from
    /// `min` to [`MAX_PODS_PER_JOB`], the one limit every kind of job shares.
    pub fn opt_count(&mut self, parent: &Node, key: &str, path: &str, min: i64) -> Option<i64> {
        let x = self.opt_int(parent, key, path, min)?;
        if x > i64::from(MAX_PODS_PER_JOB) {
            let at = parent.get(key).and_then(|n| n.at);
            self.err(
                at,
                &join(path, key),
                format!("must be an integer from {min} to {MAX_PODS_PER_JOB} (pods of one job, at most), got {x}"),
            );
            return None;
        }
        Some(x)
    }
    /// A number of seconds (`terminationGracePeriodSeconds`,
    /// `activeDeadlineSeconds`...): an integer from 0 to `u32::MAX`, as
    /// [`Ck::int`] reads every integer.
    pub fn opt_secs(&mut self, parent: &Node, key: &str, path: &str) -> Option<SimDuration> {
        self.opt_int(parent, key, path, 0).map(|s| SimDuration::from_secs(s as u64))
    }
    /// `a × b` pods (a count of groups times pods per group), or 0 with an error
    /// at `path` when that passes [`MAX_PODS_PER_JOB`].
    pub fn pods(&mut self, at: At, path: &str, a: u32, b: u32) -> u32 {
        match u64::from(a) * u64::from(b) {
            n if n > u64::from(MAX_PODS_PER_JOB) => {
                self.err(at, path, format!("{a} × {b} = {n} pods; a job has at most {MAX_PODS_PER_JOB}"));
                0
            }
            n => n as u32,
        }
    }
    /// Refuses field `key` of `parent` (at `path`) when it is given: it changes
    /// how the `object` runs (`what`), and lahar does not model it.
    pub fn unmodelled(&mut self, parent: &Node, key: &str, path: &str, what: &str, object: &str) {
        if let Some(n) = parent.get(key).filter(|n| !matches!(n.val, Val::Null)) {
            let msg =
                format!("`{key}` {what}, and lahar does not model it: remove it to simulate the {object} without it");
            self.err(n.at, &join(path, key), msg);
        }
    }
    pub fn opt_bool(&mut self, parent: &Node, key: &str, path: &str) -> Option<bool> {
        let n = parent.get(key)?;
        match &n.val {
            Val::Bool(b) => Some(*b),
            Val::Null => None,
            _ => {
                self.err(n.at, &join(path, key), format!("expected true or false, got {}", self.found(n)));
                None
            }
        }
    }
    /// A list under `key` (absent or null → empty).
    pub fn seq<'n>(&mut self, parent: &'n Node, key: &str, path: &str) -> &'n [Node] {
        match parent.get(key).map(|n| (n, &n.val)) {
            Some((_, Val::Seq(s))) => s,
            None | Some((_, Val::Null)) => &[],
            Some((n, _)) => {
                self.err(n.at, &join(path, key), format!("expected a list, got {}", self.found(n)));
                &[]
            }
        }
    }
    /// A map under `key` (absent or null → empty).
    pub fn map<'n>(&mut self, parent: &'n Node, key: &str, path: &str) -> &'n [(String, Node)] {
        match parent.get(key).map(|n| (n, &n.val)) {
            Some((_, Val::Map(m))) => m,
            None | Some((_, Val::Null)) => &[],
            Some((n, _)) => {
                self.err(n.at, &join(path, key), format!("expected a map, got {}", self.found(n)));
                &[]
            }
        }
    }
    /// A map of strings (labels, annotations, nodeSelector).
    pub fn string_map(&mut self, parent: &Node, key: &str, path: &str) -> BTreeMap<String, (String, At)> {
        let mut out = BTreeMap::new();
        let p = join(path, key);
        for (k, v) in self.map(parent, key, path) {
            if let Some(s) = self.str(v, &join(&p, k)) {
                out.insert(k.clone(), (s, v.at));
            }
        }
        out
    }
    pub fn duration(&mut self, text: &str, at: At, path: &str) -> Option<SimDuration> {
        parse_duration(text).map_err(|e| self.err(at, path, e.to_string())).ok()
    }
    /// A resource map (`requests`, `capability`...) parsed into `into`.
    pub fn resources(
        &mut self,
        parent: &Node,
        key: &str,
        path: &str,
        names: &mut ResourceNames,
    ) -> Vec<(usize, i64, At)> {
        self.resources_where(parent, key, path, names, |_, _| true)
    }

    /// [`Ck::resources`] over the entries `keep` accepts (name, quantity node).
    pub fn resources_where(
        &mut self,
        parent: &Node,
        key: &str,
        path: &str,
        names: &mut ResourceNames,
        keep: impl Fn(&str, &Node) -> bool,
    ) -> Vec<(usize, i64, At)> {
        let mut out = Vec::new();
        let p = join(path, key);
        for (k, v) in self.map(parent, key, path) {
            let fp = join(&p, k);
            // Nodes in lahar declare no ephemeral storage; a request for it cannot be checked.
            if k == "ephemeral-storage" || !keep(k, v) {
                continue;
            }
            let Some(q) = v.scalar() else {
                self.err(
                    v.at,
                    &fp,
                    format!("expected a Kubernetes quantity such as 8, 500m or 4Gi, got {}", self.found(v)),
                );
                continue;
            };
            let d = match names.dim_or_register(k) {
                Ok(d) => d,
                Err(e) => {
                    self.err(v.at, &fp, e.to_string());
                    continue;
                }
            };
            match lahar_core::util::quantity::parse_quantity(&q, ResourceNames::scale(d)) {
                Ok(x) if x >= 0 => out.push((d, x, v.at)),
                Ok(x) => self.err(v.at, &fp, format!("must not be negative, got {x}")),
                Err(e) => self.err(v.at, &fp, e.to_string()),
            }
        }
        out
    }

    /// `parent.key` as a resource vector (`minResources` and the like), `None` when
    /// the key is absent; bad quantities are recorded as errors. Read as Volcano's
    /// scheduler reads a PodGroup's `minResources` (`api.NewResource`): the quota keys
    /// Volcano's job controller also writes there (`count/pods`, `requests.cpu`,
    /// `requests.nvidia.com/gpu`, `limits.*`) are not resources and are passed over;
    /// the plain names beside them (`cpu`, `nvidia.com/gpu`, `pods`) are read.
    pub fn resource_vec(
        &mut self,
        parent: &Node,
        key: &str,
        path: &str,
        names: &mut ResourceNames,
    ) -> Option<Resources> {
        parent.get(key)?;
        let mut r = Resources::ZERO;
        let quota_key = |k: &str| k.starts_with("count/") || k.starts_with("requests.") || k.starts_with("limits.");
        for (d, x, _) in self.resources_where(parent, key, path, names, |k, _| !quota_key(k)) {
            r.set(d, x);
        }
        Some(r)
    }
}

/// Checks a map's keys against `known`: any other is an error at its place.
pub(crate) fn known_keys(ck: &mut Ck<'_>, n: &Node, path: &str, known: &[&str]) {
    if let Val::Map(m) = &n.val {
        for (k, v) in m {
            if !known.contains(&k.as_str()) {
                ck.err(v.at, &join(path, k), format!("unknown field; expected one of: {}", known.join(", ")));
            }
        }
    }
}

/// `a.b` (or `b` when `a` is empty).
pub(crate) fn join(a: &str, b: &str) -> String {
    if a.is_empty() { b.to_string() } else { format!("{a}.{b}") }
}

/// (apiVersion, kind) of an object; empty strings when missing.
pub(crate) fn kind_of(root: &Node) -> (String, String) {
    let s = |k: &str| root.get(k).and_then(Node::scalar).unwrap_or_default();
    (s("apiVersion"), s("kind"))
}

/// `metadata` of an object: name, namespace, labels, annotations.
pub(crate) struct Meta {
    /// Where `metadata.annotations` (else `metadata`, else the object) starts.
    pub at: At,
    pub name: String,
    pub namespace: String,
    pub labels: BTreeMap<String, (String, At)>,
    pub annotations: BTreeMap<String, (String, At)>,
}

pub(crate) fn meta(ck: &mut Ck<'_>, obj: &Node, path: &str, need_name: bool) -> Meta {
    let empty = Node { at: obj.at, val: Val::Null };
    let m = obj.get("metadata").unwrap_or(&empty);
    let mp = join(path, "metadata");
    let mut name = ck.opt_str(m, "name", &mp).unwrap_or_default();
    if name.is_empty()
        && path.is_empty()
        && let Some(prefix) = ck.opt_str(m, "generateName", &mp)
    {
        name = generated_name(ck, &prefix);
    }
    if need_name && name.is_empty() {
        ck.err(m.at.or(obj.at), &join(&mp, "name"), "expected a non-empty name");
    }
    let namespace = ck.opt_str(m, "namespace", &mp).unwrap_or_else(|| "default".into());
    // A Kubernetes object's own name and namespace (not a template's): what the
    // API server would accept, so every output can print them unchanged.
    if path.is_empty() {
        let at = |k: &str| m.get(k).and_then(|n| n.at).or(m.at).or(obj.at);
        if let Some(why) = (!name.is_empty()).then(|| lahar_core::util::text::dns_subdomain_problem(&name)).flatten() {
            ck.err(at("name"), &join(&mp, "name"), why);
        }
        if let Some(why) = lahar_core::util::text::dns_label_problem(&namespace) {
            ck.err(at("namespace"), &join(&mp, "namespace"), why);
        }
    }
    let at = m.get("annotations").and_then(|a| a.at).or(m.at).or(obj.at);
    Meta {
        at,
        name,
        namespace,
        labels: ck.string_map(m, "labels", &mp),
        annotations: ck.string_map(m, "annotations", &mp),
    }
}

/// The name Kubernetes would give an object with `metadata.generateName: prefix`
/// and no name: the prefix and 5 characters of its alphabet (no vowels, no 0, 1, 3).
/// The API server draws them at random; lahar derives them from the file's name
/// (not its folder) and the object's place in it, so a run is the same on every
/// machine.
pub(crate) fn generated_name(ck: &Ck<'_>, prefix: &str) -> String {
    format!("{prefix}{}", derived_chars(ck, "", 5))
}

/// `n` characters of Kubernetes' random-name alphabet derived from the file's name,
/// the object's place in it and `salt` (a pod's index): the random suffixes
/// controllers give the objects they create, made the same on every machine.
pub(crate) fn derived_chars(ck: &Ck<'_>, salt: &str, n: usize) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let file = std::path::Path::new(&ck.file).file_name().map(|f| f.to_string_lossy().to_string()).unwrap_or_default();
    // FNV-1a: stable across platforms and Rust versions. An empty salt hashes as
    // generateName always has.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let salted = if salt.is_empty() { Vec::new() } else { [&[0u8][..], salt.as_bytes()].concat() };
    for b in file.bytes().chain([0]).chain(ck.doc.bytes()).chain(salted) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    let mut out = String::with_capacity(n);
    for _ in 0..n {
        if h == 0 {
            // 10 characters need more than one word of hash.
            h = 0x9e37_79b9_7f4a_7c15;
        }
        out.push(ALPHABET[(h % ALPHABET.len() as u64) as usize] as char);
        h /= ALPHABET.len() as u64;
    }
    out
}

/// Go's `strconv.ParseBool`.
pub(crate) fn parse_go_bool(v: &str) -> Option<bool> {
    match v {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}
