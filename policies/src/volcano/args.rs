//! A plugin's arguments: the values a conf gives (`arguments:`), and the spec
//! each plugin declares for them (key, type, default, doc, check).

use serde::Deserialize;
use serde::de::{self, Visitor};
use std::collections::BTreeMap;
use std::fmt;

/// An argument value as written (Volcano's readers are typed).
#[derive(Clone, Debug, PartialEq)]
pub enum ArgValue {
    /// A YAML boolean.
    Bool(bool),
    /// A YAML integer.
    Int(i64),
    /// A YAML float.
    Float(f64),
    /// A YAML string.
    Str(String),
    /// A map (resource-strategy-fit `resources`, usage `thresholds`...), read as
    /// Volcano's conf loader reads `arguments` (a `map[string]interface{}`).
    Map(BTreeMap<String, ArgValue>),
    /// A list (rescheduling `strategies`...).
    List(Vec<ArgValue>),
    /// An empty value.
    Null,
}

impl ArgValue {
    /// What the value is, for messages ("a map", "an integer").
    pub fn kind(&self) -> &'static str {
        match self {
            ArgValue::Bool(_) => "a boolean",
            ArgValue::Int(_) => "an integer",
            ArgValue::Float(_) => "a number",
            ArgValue::Str(_) => "a string",
            ArgValue::Map(_) => "a map",
            ArgValue::List(_) => "a list",
            ArgValue::Null => "nothing",
        }
    }
}

impl<'de> Deserialize<'de> for ArgValue {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ArgValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a value (boolean, integer, number, string, map or list)")
            }
            fn visit_unit<E: de::Error>(self) -> Result<ArgValue, E> {
                Ok(ArgValue::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<ArgValue, E> {
                Ok(ArgValue::Null)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut m: A) -> Result<ArgValue, A::Error> {
                let mut out = BTreeMap::new();
                while let Some(k) = m.next_key::<String>()? {
                    out.insert(k, m.next_value()?);
                }
                Ok(ArgValue::Map(out))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut s: A) -> Result<ArgValue, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = s.next_element()? {
                    out.push(v);
                }
                Ok(ArgValue::List(out))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<ArgValue, E> {
                Ok(ArgValue::Bool(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ArgValue, E> {
                Ok(ArgValue::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ArgValue, E> {
                i64::try_from(v).map(ArgValue::Int).map_err(|_| E::custom("integer too large"))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<ArgValue, E> {
                Ok(ArgValue::Float(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ArgValue, E> {
                Ok(ArgValue::Str(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// Plugin arguments, typed on read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Args(pub BTreeMap<String, ArgValue>);

impl Args {
    /// An integer argument.
    pub fn int(&self, key: &str, default: i64) -> i64 {
        match self.0.get(key) {
            Some(ArgValue::Int(v)) => *v,
            _ => default,
        }
    }
    /// A float argument (integers accepted).
    pub fn float(&self, key: &str, default: f64) -> f64 {
        match self.0.get(key) {
            Some(ArgValue::Float(v)) => *v,
            Some(ArgValue::Int(v)) => *v as f64,
            _ => default,
        }
    }
    /// A boolean argument (bools or `"true"`/`"false"` strings).
    pub fn bool(&self, key: &str, default: bool) -> bool {
        match self.0.get(key) {
            Some(ArgValue::Bool(v)) => *v,
            Some(ArgValue::Str(s)) => s.parse().unwrap_or(default),
            _ => default,
        }
    }
    /// A string argument.
    pub fn str(&self, key: &str) -> Option<&str> {
        match self.0.get(key) {
            Some(ArgValue::Str(s)) => Some(s),
            _ => None,
        }
    }
    /// Keys with a prefix, in order.
    pub fn with_prefix<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = (&'a str, &'a ArgValue)> + 'a {
        self.0.iter().filter(move |(k, _)| k.starts_with(prefix)).map(|(k, v)| (k.as_str(), v))
    }
}

/// The type a plugin expects for an argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgType {
    /// An integer.
    Int,
    /// A number (integers accepted).
    Float,
    /// A boolean (`"true"` and `"false"` strings accepted).
    Bool,
    /// A string.
    Str,
    /// A Go duration string (`30s`, `1h30m`).
    Duration,
    /// A list (read for its shape; what it configures is not modelled).
    List,
    /// A map, checked field by field by the argument's own check.
    Nested,
}

impl ArgType {
    /// The name docs and `lahar list` show.
    pub fn as_str(self) -> &'static str {
        match self {
            ArgType::Int => "integer",
            ArgType::Float => "number",
            ArgType::Bool => "boolean",
            ArgType::Str => "string",
            ArgType::Duration => "duration",
            ArgType::List => "list",
            ArgType::Nested => "map",
        }
    }
}

/// Problems in an argument's value beyond its type: (path below the argument,
/// what is wrong); empty when the value is fine.
pub type ArgCheck = fn(key: &str, value: &ArgValue) -> Vec<(String, String)>;

/// No check beyond the type.
pub fn no_check(_: &str, _: &ArgValue) -> Vec<(String, String)> {
    Vec::new()
}

/// One problem with the argument itself (no path below it).
pub fn problem(message: impl Into<String>) -> Vec<(String, String)> {
    vec![(String::new(), message.into())]
}

/// One argument a plugin reads: declared beside the plugin, validated by the conf
/// loader, listed in docs/volcano.md (a test holds the two together).
#[derive(Clone, Copy, Debug)]
pub struct ArgSpec {
    /// The key as written; a last segment in angle brackets (`binpack.resources.<name>`)
    /// stands for any non-empty name.
    pub key: &'static str,
    /// The value's type.
    pub ty: ArgType,
    /// The default as docs show it (empty: none, or the argument is optional).
    pub default: &'static str,
    /// What it does, one line.
    pub doc: &'static str,
    /// Checks beyond the type.
    pub check: ArgCheck,
    /// The plugin cannot work without it: what to say when it is missing.
    pub required: Option<&'static str>,
}

impl ArgSpec {
    /// An optional argument checked by its type alone.
    pub const fn new(key: &'static str, ty: ArgType, default: &'static str, doc: &'static str) -> ArgSpec {
        ArgSpec { key, ty, default, doc, check: no_check, required: None }
    }

    /// The same argument with a check beyond its type.
    pub const fn checked(self, check: ArgCheck) -> ArgSpec {
        ArgSpec { check, ..self }
    }

    /// The same argument, required (`missing`: the message when it is absent).
    pub const fn required(self, missing: &'static str) -> ArgSpec {
        ArgSpec { required: Some(missing), ..self }
    }

    /// True if `key` is this argument (a name in place of a `<...>` segment).
    pub fn matches(&self, key: &str) -> bool {
        match self.key.find('<') {
            Some(i) if self.key.ends_with('>') => key.len() > i && key.starts_with(&self.key[..i]),
            _ => key == self.key,
        }
    }
}

/// The spec of argument `key` among `specs`.
pub fn find<'a>(specs: &'a [ArgSpec], key: &str) -> Option<&'a ArgSpec> {
    specs.iter().find(|s| s.matches(key))
}

/// `v` as an argument of type `ty` (a `"true"`/`"false"` string read as a boolean),
/// or what was expected.
pub fn check_arg(ty: ArgType, v: &ArgValue) -> Result<ArgValue, String> {
    match (ty, v) {
        (ArgType::Int, ArgValue::Int(_)) | (ArgType::Float, ArgValue::Float(_) | ArgValue::Int(_)) => Ok(v.clone()),
        (ArgType::Bool, ArgValue::Bool(_)) => Ok(v.clone()),
        (ArgType::Bool, ArgValue::Str(s)) if s == "true" || s == "false" => Ok(ArgValue::Bool(s == "true")),
        (ArgType::Str, ArgValue::Str(_)) | (ArgType::List, ArgValue::List(_)) => Ok(v.clone()),
        (ArgType::Duration, ArgValue::Str(s)) => lahar_core::util::time::parse_go_duration(s)
            .map(|_| v.clone())
            .ok_or_else(|| format!("expected a Go duration such as 30s or 1h30m, got `{s}`")),
        (ty, v) => Err(format!(
            "expected {}, got {} (Volcano would silently ignore this value)",
            match ty {
                ArgType::Int => "an integer",
                ArgType::Float => "a number",
                ArgType::Bool => "a boolean",
                ArgType::Str => "a string",
                ArgType::Duration => "a duration string",
                ArgType::List => "a list",
                ArgType::Nested => "a map",
            },
            v.kind()
        )),
    }
}
