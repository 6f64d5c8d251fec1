//! `spec.comm` (constant overrides, link sharing) and job `model:` profiles.

use super::{At, V, at};
use crate::scenario::raw::{RawComm, RawConstants, RawModel, RawModelSpec};
use crate::scenario::{CommSettings, Diagnostic, ScenarioError};
use lahar_core::comm::CommConstants;
use lahar_core::comm::runtime::{CATALOG, JobProfile, lookup};
use lahar_core::util::time::parse_duration;
use serde_json::Value;
use serde_saphyr::Spanned;
use std::path::Path;

/// Applies `over` onto the default constants. Keys are the constants' own names
/// (docs/nccl-model.md); any subset may be given. Errors name the dotted path under
/// `path` and what was expected.
pub fn merge_constants(over: &Value, path: &str) -> Result<CommConstants, (String, String)> {
    let mut base = serde_json::to_value(CommConstants::default()).map_err(|e| (path.to_string(), e.to_string()))?;
    merge(&mut base, over, path, false)?;
    let c: CommConstants = serde_json::from_value(base).map_err(|e| (path.to_string(), e.to_string()))?;
    c.validate().map_err(|e| (path.to_string(), e.to_string()))?;
    Ok(c)
}

/// Merges `over` into `base`; `open` maps (GPU aliases) accept new keys.
fn merge(base: &mut Value, over: &Value, path: &str, open: bool) -> Result<(), (String, String)> {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                let p = format!("{path}.{k}");
                match b.get_mut(k) {
                    Some(slot) => merge(slot, v, &p, k == "gpu_aliases")?,
                    None if open => {
                        b.insert(k.clone(), v.clone());
                    }
                    None => {
                        let known: Vec<&str> = b.keys().map(String::as_str).collect();
                        return Err((p, format!("unknown constant `{k}`; expected one of: {}", known.join(", "))));
                    }
                }
            }
            Ok(())
        }
        (b @ Value::Number(_), Value::Number(n)) => {
            *b = Value::Number(n.clone());
            Ok(())
        }
        (b @ Value::Bool(_), Value::Bool(x)) => {
            *b = Value::Bool(*x);
            Ok(())
        }
        (b @ Value::String(_), Value::String(x)) => {
            *b = Value::String(x.clone());
            Ok(())
        }
        (b, o) => {
            let want = match b {
                Value::Object(_) => "a map",
                Value::Number(_) => "a number",
                Value::Bool(_) => "true or false",
                Value::String(_) => "a string",
                _ => "a value",
            };
            Err((path.to_string(), format!("expected {want}, got `{o}`")))
        }
    }
}

/// Reads a YAML file of constant overrides (for `lahar nccl --constants`).
pub fn load_constants(file: &Path) -> Result<CommConstants, ScenarioError> {
    let name = file.display().to_string();
    let text = lahar_core::util::files::read_to_string(file)
        .map_err(|e| ScenarioError::one(&name, None, "", format!("cannot read comm constants: {e}")))?;
    let value: Value = serde_saphyr::from_str_with_options(&text, lahar_core::util::files::yaml_options(None))
        .map_err(|e| {
            let at = e.location().map(|l| (l.line(), l.column())).filter(|&(l, _)| l > 0);
            ScenarioError::one(&name, at, "", format!("not a YAML map of comm constants: {e}"))
        })?;
    merge_constants(&value, "constants").map_err(|(p, m)| ScenarioError {
        errors: vec![Diagnostic { file: name.clone(), at: None, path: p, message: m }],
    })
}

/// `spec.comm`.
pub(super) fn comm_settings(v: &mut V<'_>, raw: Option<&Spanned<RawComm>>, base: &Path) -> CommSettings {
    let mut out = CommSettings::default();
    let Some(raw) = raw else { return out };
    if let Some(c) = &raw.value.constants {
        let path = "spec.comm.constants";
        let value = match &c.value {
            RawConstants::Inline(v) => Some(v.clone()),
            RawConstants::Path(p) => {
                let file = lahar_core::util::files::join(base, p);
                match lahar_core::util::files::read_to_string(&file) {
                    Ok(text) => {
                        match serde_saphyr::from_str_with_options::<Value>(
                            &text,
                            lahar_core::util::files::yaml_options(None),
                        ) {
                            Ok(v) => Some(v),
                            Err(e) => {
                                v.err(
                                    at(c),
                                    path,
                                    format!("`{}` is not a YAML map of comm constants: {e}", file.display()),
                                );
                                None
                            }
                        }
                    }
                    Err(e) => {
                        v.err(at(c), path, format!("cannot read `{}`: {e}", file.display()));
                        None
                    }
                }
            }
        };
        if let Some(value) = value {
            match merge_constants(&value, path) {
                Ok(k) => out.constants = k,
                Err((p, m)) => v.err(at(c), p, m),
            }
        }
    }
    if let Some(s) = &raw.value.link_sharing {
        match s.value.as_str() {
            "none" => out.link_sharing = false,
            "maxmin" | "max-min" => out.link_sharing = true,
            other => v.err(at(s), "spec.comm.linkSharing", format!("expected `none` or `maxmin`, got `{other}`")),
        }
    }
    out
}

fn int(v: &mut V<'_>, s: &Option<Spanned<i64>>, path: &str, field: &str, min: i64) -> Option<u64> {
    let s = s.as_ref()?;
    if s.value < min || s.value > i64::from(u32::MAX) * 1024 {
        v.err(at(s), format!("{path}.{field}"), format!("must be an integer ≥ {min}, got {}", s.value));
        return None;
    }
    Some(s.value as u64)
}

/// A job's `model:` (a catalog name or a profile map); `None` after an error.
pub(super) fn model_profile(v: &mut V<'_>, m: &Spanned<RawModel>, path: &str) -> Option<JobProfile> {
    let unknown = |v: &mut V<'_>, name: &str, a: At, p: String| {
        let known: Vec<&str> = CATALOG.iter().map(|c| c.name).collect();
        v.err(a, p, format!("unknown model `{name}`; the catalog has: {}", known.join(", ")));
    };
    match &m.value {
        RawModel::Name(n) => match lookup(n) {
            Some(p) => Some(JobProfile::from_catalog(p)),
            None => {
                unknown(v, n, at(m), path.to_string());
                None
            }
        },
        RawModel::Spec(s) => spec_profile(v, s, at(m), path, unknown),
    }
}

fn spec_profile(
    v: &mut V<'_>,
    s: &RawModelSpec,
    whole: At,
    path: &str,
    unknown: impl Fn(&mut V<'_>, &str, At, String),
) -> Option<JobProfile> {
    let before = v.errors.len();
    let mut p = match &s.name {
        Some(n) => match lookup(&n.value) {
            Some(c) => JobProfile::from_catalog(c),
            None if s.grad_bytes.is_some() && s.step_time.is_some() => {
                JobProfile { name: n.value.clone(), ..JobProfile::from_catalog(&CATALOG[0]) }
            }
            None => {
                unknown(v, &n.value, at(n), format!("{path}.name"));
                return None;
            }
        },
        None if s.grad_bytes.is_some() && s.step_time.is_some() => {
            JobProfile { name: "custom".into(), layers: 0, hidden: 0, ..JobProfile::from_catalog(&CATALOG[0]) }
        }
        None => {
            v.err(whole, path, "expected `name` (a catalog model) or both `gradBytes` and `stepTime`");
            return None;
        }
    };
    if let Some(g) = &s.grad_bytes {
        match lahar_core::util::quantity::parse_quantity(&g.value.0, 1) {
            Ok(b) if b > 0 => p.grad_bytes = b as u64,
            Ok(b) => v.err(at(g), format!("{path}.gradBytes"), format!("must be positive, got {b}")),
            Err(e) => v.err(at(g), format!("{path}.gradBytes"), e.to_string()),
        }
    }
    if let Some(t) = &s.step_time {
        match parse_duration(&t.value) {
            Ok(d) if d.micros() > 0 => p.a100_step_us = d.micros() as f64,
            Ok(_) => v.err(at(t), format!("{path}.stepTime"), "must be longer than 0"),
            Err(e) => v.err(at(t), format!("{path}.stepTime"), e.to_string()),
        }
    }
    if let Some(o) = &s.overlap {
        if (0.0..=1.0).contains(&o.value) {
            p.overlap = o.value;
        } else {
            v.err(at(o), format!("{path}.overlap"), format!("must be in [0, 1], got {}", o.value));
        }
    }
    if let Some(x) = int(v, &s.layers, path, "layers", 1) {
        p.layers = x as u32;
    }
    if let Some(x) = int(v, &s.hidden, path, "hidden", 1) {
        p.hidden = x as u32;
    }
    if let Some(x) = int(v, &s.seq_len, path, "seqLen", 1) {
        p.seq_len = x as u32;
    }
    if let Some(x) = int(v, &s.tokens_per_step, path, "tokensPerStep", 1) {
        p.tokens_per_step = x;
    }
    if let Some(x) = int(v, &s.tensor_parallel, path, "tensorParallel", 1) {
        p.tensor_parallel = x.min(u64::from(u32::MAX)) as u32;
    }
    if let Some(x) = int(v, &s.pipeline_parallel, path, "pipelineParallel", 1) {
        p.pipeline_parallel = x.min(u64::from(u32::MAX)) as u32;
    }
    if let Some(x) = int(v, &s.iterations, path, "iterations", 1) {
        p.iterations = Some(x);
    }
    if v.errors.len() > before {
        return None;
    }
    if let Err(m) = p.check(0) {
        v.err(whole, path, m);
        return None;
    }
    Some(p)
}
