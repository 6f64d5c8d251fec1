//! Loading a `volcano-scheduler.conf` as users write it.
//!
//! ```yaml
//! actions: "enqueue, allocate, backfill"
//! tiers:
//! - plugins:
//!   - name: priority
//!   - name: gang
//!     enablePreemptable: false
//! - plugins:
//!   - name: binpack
//!     arguments: {binpack.weight: 10}
//! configurations:
//! - name: allocate
//!   arguments: {predicateErrorCacheEnable: true}
//! ```
//!
//! Unlike Volcano, which logs and skips an unknown plugin or an argument of the wrong
//! YAML type, lahar rejects both with their line and column: a silently ignored
//! setting defeats a what-if study. Enable flags default to true (except
//! `enableHierarchy` and `enabledClusterOrder`), as in Volcano's conf parser.

use super::args::{ArgType, ArgValue, Args, check_arg};
use super::plugin::{FLAGS, PluginConf};
use super::plugins;
use lahar_core::util::diag::Diagnostic;
use lahar_core::util::text::did_you_mean;
use serde::Deserialize;
use serde::de::{self, IgnoredAny, Visitor};
use serde_saphyr::Spanned;
use std::collections::BTreeMap;
use std::fmt;

/// Volcano's built-in default configuration (used when a scenario gives none).
pub const DEFAULT_CONF: &str = "actions: \"enqueue, allocate, backfill\"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConf {
    actions: Spanned<String>,
    tiers: Option<Vec<RawTier>>,
    configurations: Option<Vec<Spanned<RawConfiguration>>>,
    #[allow(dead_code)] // accepted for compatibility; metrics do not apply to a simulation
    metrics: Option<IgnoredAny>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTier {
    /// Left empty (`- plugins:`), a tier without plugins, as Go's YAML reads it.
    #[serde(default)]
    plugins: Option<Vec<RawPlugin>>,
}

/// A plugin entry: its fields by name.
type RawPlugin = Spanned<BTreeMap<String, Spanned<PluginField>>>;

/// A value in a plugin entry: a scalar (`name`, flags) or the `arguments` map.
#[derive(Debug)]
enum PluginField {
    Scalar(ArgValue),
    Map(BTreeMap<String, Spanned<ArgValue>>),
}

impl<'de> Deserialize<'de> for PluginField {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PluginField;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a scalar or a map of arguments")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<PluginField, E> {
                Ok(PluginField::Scalar(ArgValue::Bool(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<PluginField, E> {
                Ok(PluginField::Scalar(ArgValue::Int(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<PluginField, E> {
                i64::try_from(v)
                    .map(|v| PluginField::Scalar(ArgValue::Int(v)))
                    .map_err(|_| E::custom("integer too large"))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<PluginField, E> {
                Ok(PluginField::Scalar(ArgValue::Float(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<PluginField, E> {
                Ok(PluginField::Scalar(ArgValue::Str(v.to_string())))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut m: A) -> Result<PluginField, A::Error> {
                let mut out = BTreeMap::new();
                while let Some(k) = m.next_key::<String>()? {
                    let v: Spanned<ArgValue> = m.next_value()?;
                    out.insert(k, v);
                }
                Ok(PluginField::Map(out))
            }
            // `arguments:` left empty: no arguments, as Volcano reads it.
            fn visit_unit<E: de::Error>(self) -> Result<PluginField, E> {
                Ok(PluginField::Map(BTreeMap::new()))
            }
            fn visit_none<E: de::Error>(self) -> Result<PluginField, E> {
                Ok(PluginField::Map(BTreeMap::new()))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfiguration {
    name: Spanned<String>,
    arguments: Option<BTreeMap<String, Spanned<ArgValue>>>,
}

/// An action of the pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ActionKind {
    /// PodGroup admission.
    Enqueue,
    /// Gang-aware placement.
    Allocate,
    /// BestEffort pods.
    Backfill,
    /// Eviction within a queue.
    Preempt,
    /// Eviction across queues.
    Reclaim,
    /// Gang-aware eviction within a queue.
    GangPreempt,
    /// Gang-aware eviction across queues.
    GangReclaim,
    /// Eviction of the pods the plugins' `VictimTasks` name.
    Shuffle,
}

impl ActionKind {
    /// Every action lahar runs, in the order messages list them.
    pub const ALL: [ActionKind; 8] = [
        ActionKind::Enqueue,
        ActionKind::Allocate,
        ActionKind::Backfill,
        ActionKind::Preempt,
        ActionKind::Reclaim,
        ActionKind::GangPreempt,
        ActionKind::GangReclaim,
        ActionKind::Shuffle,
    ];

    /// The action Volcano's conf names `name`.
    pub fn from_name(name: &str) -> Option<ActionKind> {
        ActionKind::ALL.into_iter().find(|a| a.as_str() == name)
    }

    /// The names of [`ActionKind::ALL`], in order.
    pub fn names() -> Vec<&'static str> {
        ActionKind::ALL.iter().map(|a| a.as_str()).collect()
    }

    /// The arguments the action reads from the conf's `configurations`
    /// (Volcano's `GetArgOfActionFromConf`), with their types.
    /// `predicateErrorCacheEnable` (allocate, backfill, preempt, reclaim) and
    /// `topologyAwarePreemptWorkerNum` (preempt) change how Volcano computes, not
    /// what it decides: lahar checks them and keeps them on record
    /// (docs/volcano.md's action table, which a test holds to this list).
    pub fn args(self) -> &'static [(&'static str, ArgKind)] {
        const CACHE: (&str, ArgKind) = ("predicateErrorCacheEnable", ArgKind::Bool);
        const GANG: &[(&str, ArgKind)] = &[("allowWholeBundle", ArgKind::Bool), ("maxDomains", ArgKind::Positive)];
        match self {
            ActionKind::Enqueue | ActionKind::Shuffle => &[],
            ActionKind::Allocate | ActionKind::Backfill | ActionKind::Reclaim => &[CACHE],
            ActionKind::Preempt => &[
                CACHE,
                ("enableTopologyAwarePreemption", ArgKind::Bool),
                ("topologyAwarePreemptWorkerNum", ArgKind::Count),
                ("minCandidateNodesPercentage", ArgKind::Count),
                ("minCandidateNodesAbsolute", ArgKind::Count),
                ("maxCandidateNodesAbsolute", ArgKind::Count),
            ],
            ActionKind::GangPreempt | ActionKind::GangReclaim => GANG,
        }
    }

    /// Volcano's name.
    pub fn as_str(self) -> &'static str {
        match self {
            ActionKind::Enqueue => "enqueue",
            ActionKind::Allocate => "allocate",
            ActionKind::Backfill => "backfill",
            ActionKind::Preempt => "preempt",
            ActionKind::Reclaim => "reclaim",
            ActionKind::GangPreempt => "gangpreempt",
            ActionKind::GangReclaim => "gangreclaim",
            ActionKind::Shuffle => "shuffle",
        }
    }
}

pub use super::plugins::VOLCANO_ONLY;

/// A validated configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct SchedulerConf {
    /// Actions in execution order.
    pub actions: Vec<ActionKind>,
    /// Tiers of plugins.
    pub tiers: Vec<Vec<PluginConf>>,
    /// Per-action arguments.
    pub configurations: BTreeMap<String, Args>,
    /// Arguments older Volcano releases read and today's Volcano ignores (from
    /// [`crate::volcano::plugin::PluginSpec::retired`]): warnings, never errors (Volcano skips them too); the
    /// scenario loader reports them, and `--strict` makes them errors.
    pub retired: Vec<Diagnostic>,
}

impl SchedulerConf {
    /// Whether plugin `name` is in a tier (whatever its enable flags).
    pub fn runs_plugin(&self, name: &str) -> bool {
        self.tiers.iter().flatten().any(|p| p.name == name)
    }
}

/// Every problem found in a conf.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", .issues.iter().map(Diagnostic::to_string).collect::<Vec<_>>().join("\n"))]
pub struct ConfError {
    /// The problems.
    pub issues: Vec<Diagnostic>,
}

fn at<T>(s: &Spanned<T>) -> Option<(u64, u64)> {
    (s.referenced.line() > 0).then(|| (s.referenced.line(), s.referenced.column()))
}

/// `; did you mean `x`?` for a key one edit (or one swap of neighbours) from
/// `got` that `known` accepts — the smallest such, so the hint is the same on
/// every machine — or nothing. For argument names, which the plugins match by
/// pattern rather than list.
fn did_you_mean_key(got: &str, known: impl Fn(&str) -> bool) -> String {
    const ALPHABET: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_";
    let chars: Vec<char> = got.chars().collect();
    let mut found: Option<String> = None;
    let mut take = |c: Vec<char>| {
        let s: String = c.into_iter().collect();
        if s != got && known(&s) && found.as_ref().is_none_or(|f| s < *f) {
            found = Some(s);
        }
    };
    for i in 0..=chars.len() {
        if i < chars.len() {
            let mut c = chars.clone();
            c.remove(i);
            take(c);
            if i + 1 < chars.len() {
                let mut c = chars.clone();
                c.swap(i, i + 1);
                take(c);
            }
        }
        for a in ALPHABET.chars() {
            if i < chars.len() {
                let mut c = chars.clone();
                c[i] = a;
                take(c);
            }
            let mut c = chars.clone();
            c.insert(i, a);
            take(c);
        }
    }
    found.map(|n| format!("; did you mean `{n}`?")).unwrap_or_default()
}

/// The kind of value an action argument takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// true or false.
    Bool,
    /// An integer ≥ 0.
    Count,
    /// An integer ≥ 1.
    Positive,
}

/// The argument `key` of `action` (its name in the conf's `configurations`), if
/// the action reads one ([`ActionKind::args`]).
fn config_arg(action: &str, key: &str) -> Option<ArgKind> {
    let args = ActionKind::from_name(action)?.args();
    args.iter().find(|(k, _)| *k == key).map(|&(_, kind)| kind)
}

/// Just enough of a Kubernetes object to tell a ConfigMap.
#[derive(Deserialize)]
struct MaybeConfigMap {
    kind: Option<String>,
    data: Option<BTreeMap<String, Spanned<String>>>,
}

/// The key under which Volcano's Helm chart stores the conf in its ConfigMap.
pub const CONFIGMAP_KEY: &str = "volcano-scheduler.conf";

/// Parses a conf file: the conf itself, or a ConfigMap holding it under `data`
/// (`volcano-scheduler.conf`, or a ConfigMap's only `*.conf` key), as Volcano's
/// Helm chart installs it and `kubectl get configmap -o yaml` prints it. Problems
/// inside the ConfigMap's conf are located in the file.
pub fn parse_file(text: &str) -> Result<SchedulerConf, ConfError> {
    let Ok(MaybeConfigMap { kind: Some(kind), data }) =
        serde_saphyr::from_str_with_options::<MaybeConfigMap>(text, lahar_core::util::files::yaml_options(None))
    else {
        return parse(text);
    };
    if kind != "ConfigMap" {
        return parse(text);
    }
    let data = data.unwrap_or_default();
    let confs: Vec<&String> = data.keys().filter(|k| k.ends_with(".conf")).collect();
    let key = match (data.get(CONFIGMAP_KEY), confs.as_slice()) {
        (Some(_), _) => CONFIGMAP_KEY.to_string(),
        (None, [one]) => one.to_string(),
        _ => {
            let keys: Vec<&str> = data.keys().map(String::as_str).collect();
            return Err(ConfError {
                issues: vec![Diagnostic {
                    file: String::new(),
                    at: None,
                    path: "data".into(),
                    message: format!(
                        "a ConfigMap holding the scheduler conf needs `data.{CONFIGMAP_KEY}` (or one `*.conf` key); it has: {}",
                        if keys.is_empty() { "nothing".to_string() } else { keys.join(", ") }
                    ),
                }],
            });
        }
    };
    let value = &data[&key];
    // Where the block's text starts: the first line at or after the value's
    // line that holds the conf's first line, and its indentation.
    let first = value.value.lines().find(|l| !l.trim().is_empty()).unwrap_or_default().trim_end();
    let from = value.referenced.line().saturating_sub(1) as usize;
    let origin = text.lines().enumerate().skip(from).find(|(_, l)| !first.is_empty() && l.trim() == first.trim());
    parse(&value.value).map_err(|mut e| {
        for i in &mut e.issues {
            i.path = if i.path.is_empty() { format!("data.{key}") } else { format!("data.{key}: {}", i.path) };
            i.at = match (i.at, origin) {
                (Some((l, c)), Some((row, line))) => {
                    let skipped = value.value.lines().take_while(|l| l.trim().is_empty()).count() as u64;
                    let indent = (line.len() - line.trim_start().len()) as u64;
                    Some((row as u64 + 1 + l - 1 - skipped, c + indent))
                }
                _ => at(value),
            };
        }
        e
    })
}

/// Parses and validates conf text.
pub fn parse(text: &str) -> Result<SchedulerConf, ConfError> {
    let raw: RawConf =
        serde_saphyr::from_str_with_options(text, lahar_core::util::files::yaml_options(None)).map_err(|e| {
            let at = e.location().map(|l| (l.line(), l.column())).filter(|&(l, _)| l > 0);
            let msg = e.render_with_formatter(&serde_saphyr::UserMessageFormatter);
            let first = msg.lines().next().unwrap_or_default();
            let first = first.strip_prefix("error: ").unwrap_or(first);
            let first = first.split_once(": ").filter(|(p, _)| p.starts_with("line ")).map(|(_, m)| m).unwrap_or(first);
            ConfError {
                issues: vec![Diagnostic { file: String::new(), at, path: String::new(), message: first.to_string() }],
            }
        })?;
    let mut issues = Vec::new();
    let mut retired = Vec::new();
    let mut actions = Vec::new();
    for name in raw.actions.value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let Some(a) = ActionKind::from_name(name) else {
            let known = ActionKind::names();
            issues.push(Diagnostic {
                file: String::new(),
                at: at(&raw.actions),
                path: "actions".into(),
                message: format!(
                    "unknown action `{name}`; expected one of {}{}",
                    known.join(", "),
                    did_you_mean(name, known.iter().copied())
                ),
            });
            continue;
        };
        actions.push(a);
    }
    let mut tiers = Vec::new();
    for (ti, tier) in raw.tiers.iter().flatten().enumerate() {
        let mut plugins = Vec::new();
        for (pi, rp) in tier.plugins.iter().flatten().enumerate() {
            let path = format!("tiers[{ti}].plugins[{pi}]");
            let name_field = rp.value.get("name");
            let (name, name_at) = match name_field {
                Some(Spanned { value: PluginField::Scalar(ArgValue::Str(n)), .. }) => {
                    (n.as_str(), name_field.and_then(at))
                }
                _ => {
                    issues.push(Diagnostic {
                        file: String::new(),
                        at: at(rp),
                        path: format!("{path}.name"),
                        message: "a plugin needs a `name`".into(),
                    });
                    continue;
                }
            };
            // A built-in plugin, or one registered while the process runs.
            let spec = plugins::spec(name);
            let external = if spec.is_none() { super::external::find(name) } else { None };
            if spec.is_none() && external.is_none() {
                let mut names = plugins::names().collect::<Vec<_>>().join(", ");
                let registered = super::external::names();
                if !registered.is_empty() {
                    names = format!("{names}; registered: {}", registered.join(", "));
                }
                let message = match VOLCANO_ONLY.iter().find(|(n, _)| *n == name) {
                    Some((_, why)) => format!(
                        "plugin `{name}` exists in Volcano but is not modelled by lahar ({why}); docs/volcano.md lists every plugin; lahar implements: {names}"
                    ),
                    None => format!(
                        "unknown plugin `{name}` (Volcano would skip it silently); lahar implements: {names}{}",
                        did_you_mean(name, plugins::names())
                    ),
                };
                issues.push(Diagnostic { file: String::new(), at: name_at, path: format!("{path}.name"), message });
                continue;
            }
            let mut pc = PluginConf::new(name);
            for (k, v) in &rp.value {
                match (k.as_str(), &v.value) {
                    ("name", _) => {}
                    ("arguments", PluginField::Map(args)) => match spec {
                        // A registered plugin takes its arguments as written: it checks them.
                        None => pc.args.0.extend(args.iter().map(|(k, v)| (k.clone(), v.value.clone()))),
                        Some(spec) => {
                            for (ak, av) in args {
                                let arg_path = format!("{path}.arguments.{ak}");
                                let Some(arg) = spec.arg(ak) else {
                                    match spec.retired_arg(ak) {
                                        Some(what) => retired.push(Diagnostic { file: String::new(),
                                            at: at(av),
                                            path: arg_path,
                                            message: format!("retired argument: {what}"),
                                        }),
                                        None => issues.push(Diagnostic { file: String::new(),
                                            at: at(av),
                                            path: arg_path,
                                            message: format!(
                                                "plugin `{name}` has no argument `{ak}`{}",
                                                did_you_mean_key(ak, |k| spec.arg(k).is_some())
                                            ),
                                        }),
                                    }
                                    continue;
                                };
                                // A map's own check reads it field by field; any other
                                // value is first read as its type.
                                let typed = if arg.ty == ArgType::Nested {
                                    Ok(av.value.clone())
                                } else {
                                    check_arg(arg.ty, &av.value)
                                };
                                let value = match typed {
                                    Ok(v) => v,
                                    Err(message) => {
                                        issues.push(Diagnostic { file: String::new(), at: at(av), path: arg_path, message });
                                        continue;
                                    }
                                };
                                let found = (arg.check)(ak, &value);
                                if found.is_empty() {
                                    pc.args.0.insert(ak.clone(), value);
                                }
                                for (sub, message) in found {
                                    issues.push(Diagnostic { file: String::new(), at: at(av), path: format!("{arg_path}{sub}"), message });
                                }
                            }
                        }
                    },
                    ("arguments", PluginField::Scalar(_)) => issues.push(Diagnostic { file: String::new(),
                        at: at(v),
                        path: format!("{path}.arguments"),
                        message: "expected a map of arguments".into(),
                    }),
                    (k, val) => match FLAGS.iter().find(|(f, _)| *f == k) {
                        Some((f, _)) => match val {
                            PluginField::Scalar(ArgValue::Bool(b)) => {
                                pc.flags.insert(f, *b);
                            }
                            _ => issues.push(Diagnostic { file: String::new(),
                                at: at(v),
                                path: format!("{path}.{k}"),
                                message: "expected true or false".into(),
                            }),
                        },
                        None => issues.push(Diagnostic { file: String::new(),
                            at: at(v),
                            path: format!("{path}.{k}"),
                            message: format!("unknown field `{k}`; expected name, arguments or an enable flag (enableJobOrder, enablePreemptable, ...)"),
                        }),
                    },
                }
            }
            let written = |k: &str| matches!(rp.value.get("arguments").map(|a| &a.value), Some(PluginField::Map(m)) if m.contains_key(k));
            if let Some(spec) = spec {
                for (k, message) in (spec.conflicts)(&pc.args) {
                    issues.push(Diagnostic {
                        file: String::new(),
                        at: at(rp),
                        path: format!("{path}.arguments.{k}"),
                        message: message.into(),
                    });
                }
                for arg in spec.args.iter().filter(|a| !written(a.key)) {
                    if let Some(missing) = arg.required {
                        issues.push(Diagnostic {
                            file: String::new(),
                            at: at(rp),
                            path: format!("{path}.arguments.{}", arg.key),
                            message: missing.into(),
                        });
                    }
                }
            }
            pc.external = external;
            plugins.push(pc);
        }
        let hier_drf = plugins.iter().any(|p| p.name == "drf" && p.flag("enableHierarchy"));
        if hier_drf && plugins.iter().any(|p| p.name == "proportion") {
            issues.push(Diagnostic {
                file: String::new(),
                at: tier.plugins.iter().flatten().next().and_then(at),
                path: format!("tiers[{ti}]"),
                message: "drf with enableHierarchy and proportion cannot be in the same tier".into(),
            });
        }
        tiers.push(plugins);
    }
    let all: Vec<&str> = tiers.iter().flatten().map(|p| p.name.as_str()).collect();
    if all.contains(&"proportion") && all.contains(&"capacity") {
        issues.push(Diagnostic {
            file: String::new(),
            at: None,
            path: "tiers".into(),
            message: "proportion and capacity are mutually exclusive".into(),
        });
    }
    let mut configurations = BTreeMap::new();
    for (i, c) in raw.configurations.iter().flatten().enumerate() {
        let name = c.value.name.value.clone();
        let mut args = Args::default();
        // A configuration holds an action's arguments; `init-params` is Ascend
        // MindCluster vNPU's (read by deviceshare's 310P devices).
        let not_an_action = match name.as_str() {
            "init-params" => Some("`init-params` configures Ascend MindCluster vNPU sharing (deviceshare.AscendMindClusterVNPUEnable), which lahar does not model".to_string()),
            n if ActionKind::from_name(n).is_some() => None,
            n => Some(format!(
                "unknown action `{n}`; a configuration gives the arguments of one of {}{}",
                ActionKind::names().join(", "),
                did_you_mean(n, ActionKind::names())
            )),
        };
        if let Some(message) = not_an_action {
            issues.push(Diagnostic {
                file: String::new(),
                at: at(&c.value.name),
                path: format!("configurations[{i}].name"),
                message,
            });
            continue;
        }
        for (k, v) in c.value.arguments.iter().flatten() {
            if let Some(kind) = config_arg(&name, k) {
                let ok = match (kind, &v.value) {
                    (ArgKind::Bool, ArgValue::Bool(_)) => true,
                    (ArgKind::Bool, ArgValue::Str(s)) => s == "true" || s == "false",
                    (ArgKind::Count, ArgValue::Int(x)) => *x >= 0,
                    (ArgKind::Count, ArgValue::Str(s)) => s.parse::<u32>().is_ok(),
                    // Volcano replaces a value ≤ 0 with the default and logs it.
                    (ArgKind::Positive, ArgValue::Int(x)) => *x >= 1,
                    _ => false,
                };
                if !ok {
                    let want = match kind {
                        ArgKind::Bool => "true or false",
                        ArgKind::Count => "an integer ≥ 0",
                        ArgKind::Positive => "an integer ≥ 1",
                    };
                    issues.push(Diagnostic {
                        file: String::new(),
                        at: at(v),
                        path: format!("configurations[{i}].arguments.{k}"),
                        message: format!("expected {want}"),
                    });
                }
                args.0.insert(k.clone(), v.value.clone());
            } else {
                issues.push(Diagnostic {
                    file: String::new(),
                    at: at(v),
                    path: format!("configurations[{i}].arguments.{k}"),
                    message: format!(
                        "action `{name}` has no argument `{k}` that lahar knows{}",
                        did_you_mean_key(k, |x| config_arg(&name, x).is_some())
                    ),
                });
            }
        }
        configurations.insert(name, args);
    }
    if issues.is_empty() {
        Ok(SchedulerConf { actions, tiers, configurations, retired })
    } else {
        Err(ConfError { issues })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_conf_parses() {
        let c = parse(DEFAULT_CONF).unwrap();
        assert_eq!(c.actions, vec![ActionKind::Enqueue, ActionKind::Allocate, ActionKind::Backfill]);
        assert_eq!(c.tiers.len(), 2);
        assert_eq!(
            c.tiers[1].iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
            ["overcommit", "drf", "predicates", "proportion", "nodeorder"]
        );
        assert!(c.tiers[0][1].flag("enablePreemptable"));
        assert!(!c.tiers[0][1].flag("enableHierarchy"));
    }

    #[test]
    fn flags_and_arguments() {
        let c = parse(
            "actions: \"enqueue, allocate, preempt\"\ntiers:\n- plugins:\n  - name: gang\n    enablePreemptable: false\n  - name: binpack\n    arguments:\n      binpack.weight: 10\n      binpack.resources: nvidia.com/gpu\n      binpack.resources.nvidia.com/gpu: 5\nconfigurations:\n- name: allocate\n  arguments: {predicateErrorCacheEnable: true}\n",
        )
        .unwrap();
        assert!(!c.tiers[0][0].flag("enablePreemptable"));
        assert_eq!(c.tiers[0][1].args.int("binpack.weight", 1), 10);
        assert_eq!(c.tiers[0][1].args.int("binpack.resources.nvidia.com/gpu", 1), 5);
        assert_eq!(c.actions.len(), 3);
    }

    /// The arguments Volcano's actions read (issue 13, item 3): predicateErrorCacheEnable
    /// on allocate, backfill, preempt and reclaim, preempt's worker count; typed; and
    /// a predicates switch Volcano no longer reads is an unknown argument.
    #[test]
    fn action_arguments_and_retired_predicate_switches() {
        let conf = |args: &str| {
            format!(
                "actions: \"allocate, backfill, preempt, reclaim\"\ntiers:\n- plugins:\n  - name: predicates\n    arguments: {{predicate.TaintTolerationEnable: false}}\nconfigurations:\n{args}"
            )
        };
        let ok = conf(
            "- name: backfill\n  arguments: {predicateErrorCacheEnable: true}\n- name: preempt\n  arguments: {predicateErrorCacheEnable: \"false\", topologyAwarePreemptWorkerNum: 8}\n- name: reclaim\n  arguments: {predicateErrorCacheEnable: true}\n",
        );
        let c = parse(&ok).unwrap_or_else(|e| panic!("{:?}", e.issues));
        assert!(!c.tiers[0][0].args.bool("predicate.TaintTolerationEnable", true));
        assert_eq!(c.configurations["preempt"].int("topologyAwarePreemptWorkerNum", 1), 8);
        let e = parse(&conf(
            "- name: reclaim\n  arguments: {predicateErrorCacheEnable: maybe, topologyAwarePreemptWorkerNum: 2}\n",
        ))
        .unwrap_err();
        assert_eq!(e.issues.len(), 2, "{:?}", e.issues);
        assert_eq!(e.issues[0].path, "configurations[0].arguments.predicateErrorCacheEnable");
        assert!(e.issues[0].message.contains("expected true or false"));
        assert!(e.issues[1].message.contains("action `reclaim` has no argument `topologyAwarePreemptWorkerNum`"));
        // A retired switch is read as Volcano reads it, ignored, with a note that says so.
        let c = parse(&conf("").replace("predicate.TaintTolerationEnable: false", "predicate.GPUSharingEnable: true"))
            .unwrap_or_else(|e| panic!("{:?}", e.issues));
        assert_eq!(c.retired.len(), 1);
        assert_eq!(c.retired[0].path, "tiers[0].plugins[0].arguments.predicate.GPUSharingEnable");
        assert!(c.retired[0].message.contains("deviceshare.GPUSharingEnable"), "{:?}", c.retired);
        assert!(c.tiers[0][0].args.0.is_empty());
        let e = parse(&conf("").replace("predicate.TaintTolerationEnable: false", "predicate.GPUSharingEnabled: true"))
            .unwrap_err();
        assert!(e.issues[0].message.contains("has no argument `predicate.GPUSharingEnabled`"), "{:?}", e.issues);
        // A configuration names an action; Ascend MindCluster's `init-params` is
        // refused as what it is, once, at its name.
        let e = parse(&conf(
            "- name: init-params
  arguments: {grace-over-time: \"900\", presetVirtualDevice: \"true\"}
- name: alocate
",
        ))
        .unwrap_err();
        let got: Vec<(&str, &str)> = e.issues.iter().map(|i| (i.path.as_str(), i.message.as_str())).collect();
        assert_eq!(
            got,
            [
                (
                    "configurations[0].name",
                    "`init-params` configures Ascend MindCluster vNPU sharing (deviceshare.AscendMindClusterVNPUEnable), which lahar does not model"
                ),
                (
                    "configurations[1].name",
                    "unknown action `alocate`; a configuration gives the arguments of one of enqueue, allocate, backfill, preempt, reclaim, gangpreempt, gangreclaim, shuffle; did you mean `allocate`?"
                ),
            ]
        );
    }

    /// A tier left empty (`- plugins:`) is a tier without plugins, as Go's YAML
    /// reads it, not a YAML error without a place.
    #[test]
    fn an_empty_tier_has_no_plugins() {
        let c = parse("actions: \"allocate\"\ntiers:\n- plugins:\n- plugins:\n  - name: gang\n")
            .unwrap_or_else(|e| panic!("{:?}", e.issues));
        assert_eq!((c.tiers[0].len(), c.tiers[1][0].name.as_str()), (0, "gang"));
    }

    /// lahar's `fgd` plugin: its policy and weight load; an unknown policy or a
    /// weight of the wrong type is refused at its path, both at once.
    #[test]
    fn fgd_arguments() {
        let conf = |args: &str| {
            format!("actions: \"allocate\"\ntiers:\n- plugins:\n  - name: fgd\n    arguments: {{{args}}}\n")
        };
        let c = parse(&conf("fgd.policy: best-fit, fgd.weight: 3")).unwrap_or_else(|e| panic!("{:?}", e.issues));
        assert_eq!(c.tiers[0][0].args.str("fgd.policy"), Some("best-fit"));
        assert_eq!(
            crate::volcano::plugins::fgd::policy_of(c.tiers.iter().flatten()),
            Some(crate::placement::Policy::BestFit)
        );
        let e = parse(&conf("fgd.policy: tetris, fgd.weight: high")).unwrap_err();
        assert_eq!(e.issues.len(), 2, "{:?}", e.issues);
        assert_eq!(e.issues[0].path, "tiers[0].plugins[0].arguments.fgd.policy");
        assert!(e.issues[0].message.contains("unknown policy `tetris`; expected one of: random, dot-product, gpu-clustering, gpu-packing, best-fit, fgd"), "{:?}", e.issues);
        assert_eq!(e.issues[1].path, "tiers[0].plugins[0].arguments.fgd.weight");
        let plain = parse("actions: \"allocate\"\ntiers:\n- plugins:\n  - name: fgd\n").unwrap();
        assert_eq!(
            crate::volcano::plugins::fgd::policy_of(plain.tiers.iter().flatten()),
            Some(crate::placement::Policy::Fgd)
        );
        let off = parse(&conf("fgd.weight: 0")).unwrap();
        assert_eq!(
            crate::volcano::plugins::fgd::policy_of(off.tiers.iter().flatten()),
            None,
            "weight 0: no scores, no device choice"
        );
    }

    /// capacity's arguments (issue 13, item 3): `ancestorReclaimLevel` loads (0,
    /// its default, and above), a negative one is refused; the DRA quota switches
    /// load (lahar's jobs have no claims).
    #[test]
    fn capacity_ancestor_level_and_dra_switches() {
        let conf = |args: &str| {
            format!(
                "actions: \"enqueue, reclaim, allocate\"\ntiers:\n- plugins:\n  - name: capacity\n    arguments: {{{args}}}\n"
            )
        };
        let c = parse(&conf(
            "ancestorReclaimLevel: 0, capacity.DynamicResourceAllocationEnable: true, capacity.DRAConsumableCapacityEnable: false",
        ))
        .unwrap_or_else(|e| panic!("{:?}", e.issues));
        assert_eq!(c.tiers[0][0].args.int("ancestorReclaimLevel", 9), 0);
        assert!(c.tiers[0][0].args.bool("capacity.DynamicResourceAllocationEnable", false));
        let c = parse(&conf("ancestorReclaimLevel: 2")).unwrap_or_else(|e| panic!("{:?}", e.issues));
        assert_eq!(c.tiers[0][0].args.int("ancestorReclaimLevel", 0), 2);
        let e = parse(&conf("ancestorReclaimLevel: 2, capacity.DRAConsumableCapacityEnable: maybe")).unwrap_err();
        assert_eq!(e.issues.len(), 1, "{:?}", e.issues);
        assert!(e.issues[0].message.contains("expected a boolean, got a string"), "{:?}", e.issues);
        let e = parse(&conf("ancestorReclaimLevel: -1")).unwrap_err();
        assert!(e.issues[0].message.contains("expected a level of 0 or more, got -1"), "{:?}", e.issues);
    }

    /// Conf structure as Volcano's loader reads it (issue 13, item 1): argument values
    /// that are maps or lists, and `arguments:` left empty, load; what is wrong is
    /// reported all at once, each with its place, instead of the first map stopping
    /// the load with a type error.
    #[test]
    fn map_and_list_arguments_and_empty_arguments() {
        let text = "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: gang\n    arguments:\n  - name: predicates\n    arguments:\n      predicate.CacheEnable: true\n      volumebinding.shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]\n- plugins:\n  - name: binpack\n    arguments:\n      binpack.weight: {a: 1}\n  - name: resource-strategy-fit\n    arguments:\n      resourceStrategyFitWeight: 10\n      resources:\n        nvidia.com/gpu: {type: MostAllocated, weight: 2}\n";
        let e = parse(text).unwrap_err();
        let issues: Vec<(Option<(u64, u64)>, &str)> = e.issues.iter().map(|i| (i.at, i.message.as_str())).collect();
        assert_eq!(e.issues.len(), 1, "{issues:?}");
        assert!(e.issues[0].message.contains("expected an integer, got a map"), "{issues:?}");
        assert!(e.issues.iter().all(|i| i.at.is_some() || !i.path.is_empty()), "{issues:?}");
        // Without the wrong value it loads; the empty `arguments:` is no argument,
        // resource-strategy-fit's `resources` a map.
        let ok = text.replace("binpack.weight: {a: 1}", "binpack.weight: 1");
        let c = parse(&ok).unwrap_or_else(|e| panic!("{:?}", e.issues));
        assert!(c.tiers[0][0].args.0.is_empty());
        assert!(matches!(c.tiers[0][1].args.0["volumebinding.shape"], ArgValue::List(ref l) if l.len() == 2));
        assert!(matches!(c.tiers[1][1].args.0["resources"], ArgValue::Map(ref m) if m.len() == 1));
    }

    /// A ConfigMap holding the conf loads as the conf; its problems are located in
    /// the file and named under `data.volcano-scheduler.conf`.
    #[test]
    fn configmap_wrapped_conf() {
        let cm = "kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: volcano-scheduler-configmap\n  namespace: volcano-system\ndata:\n  volcano-scheduler.conf: |\n    actions: \"enqueue, allocate\"\n    tiers:\n    - plugins:\n      - name: gang\n";
        let c = parse_file(cm).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.actions, [ActionKind::Enqueue, ActionKind::Allocate]);
        let bad = cm.replace("name: gang", "name: gnag");
        let e = parse_file(&bad).unwrap_err();
        assert_eq!(e.issues[0].at, Some((11, 15)), "{e}");
        assert!(e.issues[0].path.starts_with("data.volcano-scheduler.conf: tiers[0].plugins[0].name"), "{e}");
        let e = parse_file("kind: ConfigMap\ndata:\n  other: x\n").unwrap_err();
        assert!(
            e.to_string().contains("needs `data.volcano-scheduler.conf`") && e.to_string().contains("other"),
            "{e}"
        );
        // A plain conf is read as before.
        assert_eq!(parse_file("actions: allocate\n").unwrap().actions, [ActionKind::Allocate]);
    }

    /// A Volcano plugin lahar does not run is named as such; a typo is unknown.
    #[test]
    fn volcano_plugins_not_modelled_and_unknown_ones() {
        let conf = |p: &str| format!("actions: allocate\ntiers:\n- plugins:\n  - name: {p}\n");
        let e = parse(&conf("resourcequota")).unwrap_err().to_string();
        assert!(e.contains("plugin `resourcequota` exists in Volcano but is not modelled by lahar (namespace"), "{e}");
        // deviceshare: the GPU-number and GPU-memory modes load, vGPU and vNPU are refused.
        let c = |args: &str| {
            format!("actions: allocate\ntiers:\n- plugins:\n  - name: deviceshare\n    arguments: {{{args}}}\n")
        };
        parse(&c("deviceshare.GPUNumberEnable: true, deviceshare.SchedulePolicy: binpack, deviceshare.ScheduleWeight: 10, deviceshare.VGPUEnable: false, deviceshare.GPUSharingEnable: true")).unwrap_or_else(|e| panic!("{e}"));
        parse(&c("deviceshare.VGPUEnable: true, deviceshare.SchedulePolicy: binpack, deviceshare.ScheduleWeight: 10"))
            .unwrap_or_else(|e| panic!("{e}"));
        // TestLoadGPUExclusiveConfig: a list of two label maps; the edge cases
        // Volcano reads as no rules (a wrong type, an empty rule, a label that is
        // not a string) are errors.
        let ok = parse(&c("deviceshare.VGPUEnable: true, deviceshare.GPUExclusiveRules: [{app: training, team: ml}, {workload: inference}]")).unwrap_or_else(|e| panic!("{e}"));
        let d = crate::volcano::plugins::deviceshare::DeviceShare::vgpu_policy(&ok.tiers[0][0].args).unwrap();
        assert_eq!(d.1.len(), 2);
        for (args, want) in [
            ("deviceshare.GPUExclusiveRules: {app: x}", "expected a list"),
            ("deviceshare.GPUExclusiveRules: [{}]", "rule 0 is empty"),
            ("deviceshare.GPUExclusiveRules: [{app: x}, {priority: 1}]", "rule 1: label `priority` has an integer"),
            ("deviceshare.GPUExclusiveRules: [x]", "rule 0: expected a map of labels"),
        ] {
            let e = parse(&c(&format!("deviceshare.VGPUEnable: true, {args}"))).unwrap_err().to_string();
            assert!(e.contains("arguments.deviceshare.GPUExclusiveRules") && e.contains(want), "{args}: {e}");
        }
        parse(&c("deviceshare.VGPUEnable: true, deviceshare.GPUExclusiveRules: []")).unwrap_or_else(|e| panic!("{e}"));
        let e = parse(&c("deviceshare.VGPUEnable: true, deviceshare.GPUNumberEnable: true")).unwrap_err().to_string();
        assert!(e.contains("arguments.deviceshare.VGPUEnable: vGPU cannot be used together"), "{e}");
        let e =
            parse(&c("deviceshare.GPUSharingEnable: true, deviceshare.NodeLockEnable: true")).unwrap_err().to_string();
        assert!(e.contains("arguments.deviceshare.NodeLockEnable: the node lock"), "{e}");
        parse(&c("deviceshare.GPUNumberEnable: true, deviceshare.NodeLockEnable: true"))
            .unwrap_or_else(|e| panic!("{e}"));
        parse(&c("deviceshare.AscendHAMiVNPUEnable: true, deviceshare.SchedulePolicy: binpack"))
            .unwrap_or_else(|e| panic!("{e}"));
        let e = parse(&c("deviceshare.AscendHAMiVNPUEnable: true, deviceshare.NodeLockEnable: true"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("arguments.deviceshare.NodeLockEnable: the node lock"), "{e}");
        let e = parse(&c("deviceshare.AscendMindClusterVNPUEnable: true")).unwrap_err().to_string();
        assert!(e.ends_with("arguments.deviceshare.AscendMindClusterVNPUEnable: Ascend vNPU sharing in MindCluster mode (dynamic 310P templates with Ascend's own device info ConfigMaps) is not modelled; HAMi mode (deviceshare.AscendHAMiVNPUEnable) and the NVIDIA modes are"), "{e}");
        let e = parse(&conf("binpak")).unwrap_err().to_string();
        assert!(e.contains("unknown plugin `binpak` (Volcano would skip it silently)"), "{e}");
        // Every name Volcano registers is either run or listed as not modelled.
        for n in [
            "drf",
            "gang",
            "deviceshare",
            "predicates",
            "priority",
            "nodeorder",
            "conformance",
            "binpack",
            "resource-strategy-fit",
            "tdm",
            "overcommit",
            "sla",
            "task-topology",
            "numa-aware",
            "cdp",
            "rescheduling",
            "usage",
            "pdb",
            "nodegroup",
            "network-topology-aware",
            "proportion",
            "capacity",
            "extender",
            "resourcequota",
        ] {
            assert!(plugins::spec(n).is_some() || VOLCANO_ONLY.iter().any(|(v, _)| *v == n), "{n}");
        }
        // Predicates' volume and resource-claim tuning loads.
        let c = "actions: allocate\ntiers:\n- plugins:\n  - name: predicates\n    arguments: {volumebinding.weight: 1, volumebinding.bindTimeoutSeconds: 600, dynamicresources.filterTimeoutSeconds: 10}\n";
        parse(c).unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    fn rejects_with_locations() {
        let e = parse("actions: \"enqueue, allocat\"\n").unwrap_err();
        assert_eq!(e.issues[0].at, Some((1, 10)));
        assert!(e.issues[0].message.contains("unknown action `allocat`"));
        let e = parse("actions: \"allocate\"\ntiers:\n- plugins:\n  - name: gangg\n").unwrap_err();
        assert_eq!(e.issues[0].at, Some((4, 11)));
        assert!(e.issues[0].message.contains("unknown plugin `gangg`"));
        let e = parse(
            "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: binpack\n    arguments: {binpack.weight: \"10\"}\n",
        )
        .unwrap_err();
        assert_eq!(e.issues[0].path, "tiers[0].plugins[0].arguments.binpack.weight");
        assert!(e.issues[0].message.contains("expected an integer, got a string"), "{e}");
        let e = parse("actions: \"allocate\"\ntiers:\n- plugins:\n  - name: gang\n    enablePreemptible: false\n")
            .unwrap_err();
        assert!(e.issues[0].message.contains("unknown field `enablePreemptible`"), "{e}");
        let e = parse("actions: \"allocate\"\ntiers:\n- plugins:\n  - name: drf\n    enableHierarchy: true\n  - name: proportion\n").unwrap_err();
        assert!(e.issues[0].message.contains("same tier"));
        let e = parse(
            "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: sla\n    arguments: {sla-waiting-time: soon}\n",
        )
        .unwrap_err();
        assert!(e.issues[0].message.contains("Go duration"));
        assert!(parse("actions: [allocate]\n").is_err());
    }

    #[test]
    fn go_durations() {
        assert_eq!(lahar_core::util::time::parse_go_duration("1h30m"), Some(5_400_000_000));
        assert_eq!(lahar_core::util::time::parse_go_duration("300ms"), Some(300_000));
        assert_eq!(lahar_core::util::time::parse_go_duration("1.5h"), Some(5_400_000_000));
        assert_eq!(lahar_core::util::time::parse_go_duration("5"), None);
    }

    #[test]
    fn typos_get_a_did_you_mean() {
        let text = "actions: \"enqueue, alocate\"\ntiers:\n- plugins:\n  - name: proportoin\n  - {name: nodeorder, arguments: {leastrequested.wieght: 2}}\n  - {name: binpack, arguments: {binpack.resource: nvidia.com/gpu}}\nconfigurations:\n- {name: preemt, arguments: {}}\n- {name: preempt, arguments: {enableTopologyAwarePreemptoin: true}}\n";
        let e = parse(text).unwrap_err().to_string();
        for want in [
            "unknown action `alocate`; expected one of enqueue, allocate, backfill, preempt, reclaim, gangpreempt, gangreclaim, shuffle; did you mean `allocate`?",
            "; did you mean `proportion`?",
            "plugin `nodeorder` has no argument `leastrequested.wieght`; did you mean `leastrequested.weight`?",
            "plugin `binpack` has no argument `binpack.resource`; did you mean `binpack.resources`?",
            "unknown action `preemt`; a configuration gives the arguments of one of enqueue, allocate, backfill, preempt, reclaim, gangpreempt, gangreclaim, shuffle; did you mean `preempt`?",
            "action `preempt` has no argument `enableTopologyAwarePreemptoin` that lahar knows; did you mean `enableTopologyAwarePreemption`?",
        ] {
            assert!(e.contains(want), "lacks {want:?}:\n{e}");
        }
        // Nothing near: no hint.
        let e = parse("actions: \"zzzzzz\"\ntiers: []\n").unwrap_err().to_string();
        assert!(!e.contains("did you mean"), "{e}");
    }
}
