//! A YAML value tree that keeps the line and column of every node, and the
//! multi-document file reader. Manifests are read leniently (Kubernetes objects carry
//! many fields a scheduler never looks at), so they are walked as a tree rather than
//! deserialized into structs that would reject unknown fields.

use serde::Deserialize;
use serde::de::{self, Visitor};
use serde_saphyr::Spanned;
use std::fmt;

/// 1-based line and column.
pub type At = Option<(u64, u64)>;

/// A YAML node with its position.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Where the node starts in its file.
    pub at: At,
    /// The value.
    pub val: Val,
}

/// A YAML value.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    /// `null` or empty.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer: any YAML integer of 64 bits, signed or not (a seed up to
    /// 2^64 − 1 stays exact when written back).
    Int(i128),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, keys in file order.
    Map(Vec<(String, Node)>),
}

impl Node {
    /// The value under `key` of a mapping.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.val {
            Val::Map(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
    /// A scalar as text (numbers and booleans as written by YAML).
    pub fn scalar(&self) -> Option<String> {
        match &self.val {
            Val::Str(s) => Some(s.clone()),
            Val::Int(i) => Some(i.to_string()),
            Val::Float(f) => Some(f.to_string()),
            Val::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }
    /// Short name of the value's type, for messages.
    pub fn type_name(&self) -> &'static str {
        match self.val {
            Val::Null => "null",
            Val::Bool(_) => "a boolean",
            Val::Int(_) => "an integer",
            Val::Float(_) => "a number",
            Val::Str(_) => "a string",
            Val::Seq(_) => "a list",
            Val::Map(_) => "a map",
        }
    }
    fn shift(&mut self, lines: u64) {
        if let Some((l, _)) = &mut self.at {
            *l += lines;
        }
        match &mut self.val {
            Val::Seq(s) => s.iter_mut().for_each(|n| n.shift(lines)),
            Val::Map(m) => m.iter_mut().for_each(|(_, n)| n.shift(lines)),
            _ => {}
        }
    }
}

struct ValVisitor;

impl<'de> Visitor<'de> for ValVisitor {
    type Value = Val;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Val, E> {
        Ok(Val::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Val, E> {
        Ok(Val::Null)
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Val, D::Error> {
        d.deserialize_any(ValVisitor)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Val, E> {
        Ok(Val::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Val, E> {
        Ok(Val::Int(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Val, E> {
        Ok(Val::Int(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Val, E> {
        Ok(Val::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Val, E> {
        Ok(Val::Str(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Val, E> {
        Ok(Val::Str(v))
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Val, A::Error> {
        let mut out = Vec::new();
        while let Some(n) = seq.next_element::<Node>()? {
            out.push(n);
        }
        Ok(Val::Seq(out))
    }
    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Val, A::Error> {
        let mut out: Vec<(String, Node)> = Vec::new();
        while let Some(k) = map.next_key::<Key>()? {
            let v = map.next_value::<Node>()?;
            out.push((k.0, v));
        }
        Ok(Val::Map(out))
    }
}

impl<'de> Deserialize<'de> for Val {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValVisitor)
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = Spanned::<Val>::deserialize(d)?;
        let l = s.referenced;
        Ok(Node { at: (l.line() > 0).then(|| (l.line(), l.column())), val: s.value })
    }
}

/// A mapping key: any scalar, as text.
struct Key(String);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Val::deserialize(d)? {
            Val::Str(s) => Ok(Key(s)),
            Val::Int(i) => Ok(Key(i.to_string())),
            Val::Float(f) => Ok(Key(f.to_string())),
            Val::Bool(b) => Ok(Key(b.to_string())),
            _ => Err(de::Error::custom("expected a scalar map key")),
        }
    }
}

/// One document of a manifest file.
#[derive(Clone, Debug)]
pub struct Doc {
    /// File name as shown in messages.
    pub file: String,
    /// 1-based position among the file's non-empty documents.
    pub index: usize,
    /// For an object of a `kind: List` document (`kubectl get -o yaml`), its
    /// position in `items` (0-based).
    pub item: Option<usize>,
    /// The document's root (the object itself for a List item).
    pub root: Node,
    /// The whole file's text (shared by its documents): an error quotes a
    /// scalar as it is written there ([`written_at`]).
    pub text: std::sync::Arc<str>,
}

impl Doc {
    /// Where the object is, for messages: `document 2`, or `document 1: items[3]`.
    pub fn label(&self) -> String {
        match self.item {
            Some(i) => format!("document {}: items[{i}]", self.index),
            None => format!("document {}", self.index),
        }
    }

    /// An object a controller makes from this one (a CronJob's run, a
    /// JobFlow's or a HyperJob's VolcanoJob): `apiVersion`, `kind`, `metadata`
    /// and `spec`, at this document's place in its file, so its problems are
    /// reported there.
    pub fn made(&self, api_version: &str, kind: &str, metadata: Node, spec: Node) -> Doc {
        let at = self.root.at;
        let s = |v: &str| Node { at, val: Val::Str(v.to_string()) };
        let root = Node {
            at,
            val: Val::Map(vec![
                ("apiVersion".into(), s(api_version)),
                ("kind".into(), s(kind)),
                ("metadata".into(), metadata),
                ("spec".into(), spec),
            ]),
        };
        Doc { file: self.file.clone(), index: self.index, item: self.item, root, text: self.text.clone() }
    }
}

/// The plain scalar as it is written at `at` (1-based line and column, in
/// characters), up to a comment, and inside a flow collection up to `,`, `]` or
/// `}`: what an error says it found (`5.0`, where the value read back is `5`).
/// None for a quoted one, whose value is its text.
pub fn written_at(text: &str, at: (u64, u64)) -> Option<String> {
    let line = text.lines().nth(usize::try_from(at.0).ok()?.checked_sub(1)?)?;
    let col = usize::try_from(at.1).ok()?.checked_sub(1)?;
    let flow = line.chars().take(col).any(|c| matches!(c, '{' | '['));
    let mut out = String::new();
    for c in line.chars().skip(col) {
        if (flow && matches!(c, ',' | ']' | '}')) || (c == '#' && out.ends_with([' ', '\t'])) {
            break;
        }
        out.push(c);
    }
    let out = out.trim_end();
    (!out.is_empty() && !out.starts_with(['"', '\''])).then(|| out.to_string())
}

/// A YAML syntax error: (line and column, message).
pub type SyntaxError = (At, String);

/// Splits `text` into documents at `---` / `...` marker lines (markers at column 0
/// always end a document in YAML) and parses each; empty documents are skipped.
pub fn parse_documents(text: &str, file: &str) -> Result<Vec<Doc>, SyntaxError> {
    documents(text, file, lahar_core::util::files::yaml_options(None))
}

/// [`parse_documents`] that keeps `.inf`, `-.inf` and `.nan` as the strings
/// they are written as, where the reader refuses them: for finding where an
/// error another reader reported lies.
pub fn parse_documents_keeping_non_finite(text: &str, file: &str) -> Result<Vec<Doc>, SyntaxError> {
    let mut options = lahar_core::util::files::yaml_options(None);
    options.non_finite_float_policy = serde_saphyr::NonFiniteFloatPolicy::AsString;
    documents(text, file, options)
}

fn documents(text: &str, file: &str, options: serde_saphyr::Options) -> Result<Vec<Doc>, SyntaxError> {
    let shared: std::sync::Arc<str> = text.into();
    let mut docs = Vec::new();
    let mut chunk = String::new();
    let mut start = 0u64; // 0-based line where the current chunk starts
    let flush = |chunk: &mut String, start: u64, docs: &mut Vec<Doc>| -> Result<(), SyntaxError> {
        let has_content = chunk.lines().any(|l| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with('#') && !t.starts_with('%')
        });
        if has_content {
            let mut root: Node = serde_saphyr::from_str_with_options(chunk, options.clone()).map_err(|e| {
                let at = e.location().map(|l| (l.line() + start, l.column())).filter(|&(l, _)| l > start);
                let msg = e.render_with_formatter(&serde_saphyr::UserMessageFormatter);
                let first = msg.lines().next().unwrap_or_default().trim_start_matches("error: ").to_string();
                let first = first
                    .split_once(": ")
                    .filter(|(p, _)| p.starts_with("line "))
                    .map(|(_, m)| m.to_string())
                    .unwrap_or(first);
                (at, format!("invalid YAML: {first}"))
            })?;
            root.shift(start);
            if root.val != Val::Null {
                docs.push(Doc {
                    file: file.to_string(),
                    index: docs.len() + 1,
                    item: None,
                    root,
                    text: shared.clone(),
                });
            }
        }
        chunk.clear();
        Ok(())
    };
    for (i, line) in text.lines().enumerate() {
        let marker = |m: &str| line == m || line.starts_with(&format!("{m} ")) || line.starts_with(&format!("{m}\t"));
        if marker("---") || marker("...") {
            flush(&mut chunk, start, &mut docs)?;
            // Content after `--- ` on the marker line belongs to the new document.
            let rest = if marker("---") { line[3..].trim_start() } else { "" };
            start = i as u64;
            if !rest.is_empty() && !rest.starts_with('#') {
                chunk.push_str(rest);
            }
            chunk.push('\n');
            continue;
        }
        if chunk.is_empty() {
            start = i as u64;
        }
        chunk.push_str(line);
        chunk.push('\n');
    }
    flush(&mut chunk, start, &mut docs)?;
    Ok(docs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_keep_their_lines() {
        let text = "---\n# c\n---\na: 1\nb: [x, {c: 2Gi}]\n---\nkind: Pod\n...\n";
        let docs = parse_documents(text, "f.yaml").unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].index, 1);
        assert_eq!(docs[0].root.get("a").unwrap().val, Val::Int(1));
        assert_eq!(docs[0].root.get("a").unwrap().at, Some((4, 4)));
        let b = docs[0].root.get("b").unwrap();
        let Val::Seq(items) = &b.val else { panic!("b is a list") };
        assert_eq!(items[1].get("c").unwrap().scalar().as_deref(), Some("2Gi"));
        assert_eq!(items[1].get("c").unwrap().at.unwrap().0, 5);
        assert_eq!(docs[1].index, 2);
        assert_eq!(docs[1].root.get("kind").unwrap().at, Some((7, 7)));
    }

    #[test]
    fn syntax_errors_point_at_the_file_line() {
        let text = "a: 1\n---\nb: [1, 2\nc: 3\n";
        let (at, msg) = parse_documents(text, "f.yaml").unwrap_err();
        assert!(at.unwrap().0 >= 3, "{at:?}");
        assert!(msg.starts_with("invalid YAML"), "{msg}");
    }
}
