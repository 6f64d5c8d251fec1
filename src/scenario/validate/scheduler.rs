//! `spec.scheduler` and `spec.priorityClasses`.

use super::{At, V, at};
use crate::scenario::SchedulerChoice;
use crate::scenario::raw::*;
use lahar_workloads::manifest::{PriorityClass, PriorityClasses};
use serde_saphyr::Spanned;
use std::path::Path;

/// Where a position `at` of an inline conf is in the scenario file: the block
/// scalar's text starts on the line after its key, at `inline_at`.
fn in_scenario(inline_at: At, at: Option<(u64, u64)>) -> At {
    match (inline_at, at) {
        (Some((l0, _)), Some((l, c))) => Some((l0 + l, c)),
        _ => inline_at,
    }
}

fn volcano_conf(v: &mut V<'_>, text: &str, conf_file: Option<&str>, inline_at: At, path: &str) -> SchedulerChoice {
    let parsed = match conf_file {
        Some(_) => lahar_policies::volcano::conf::parse_file(text),
        None => lahar_policies::volcano::conf::parse(text),
    };
    match parsed {
        Ok(c) => {
            for i in &c.retired {
                let (file, at) = match conf_file {
                    Some(f) => (f.to_string(), i.at),
                    None => (v.file.to_string(), in_scenario(inline_at, i.at)),
                };
                v.warn_in(crate::scenario::Warning {
                    kind: super::RETIRED_ARGUMENT,
                    count: 1,
                    file,
                    at,
                    path: i.path.clone(),
                    message: i.message.clone(),
                    first_of_many: true,
                });
            }
            SchedulerChoice::Volcano(Box::new(c))
        }
        Err(e) => {
            for i in e.issues {
                let p = if i.path.is_empty() { path.to_string() } else { format!("{path}: {}", i.path) };
                match conf_file {
                    Some(f) => v.errors.push(i.in_file(f)),
                    None => {
                        let at = in_scenario(inline_at, i.at);
                        v.err(
                            at,
                            p,
                            format!("{} (line {} of the inline conf)", i.message, i.at.map(|x| x.0).unwrap_or(0)),
                        );
                    }
                }
            }
            SchedulerChoice::Baseline("gang-fifo".into())
        }
    }
}

/// `spec.scheduler`: a baseline, a conf file or an inline conf (Volcano's default
/// conf when absent).
pub(super) fn scheduler(v: &mut V<'_>, s: Option<&Spanned<RawScheduler>>, base: &Path) -> SchedulerChoice {
    let default = || {
        SchedulerChoice::Volcano(Box::new(
            lahar_policies::volcano::conf::parse(lahar_policies::volcano::conf::DEFAULT_CONF).expect("built-in conf"),
        ))
    };
    let Some(s) = s else { return default() };
    match (&s.value.baseline, &s.value.conf, &s.value.inline) {
        (Some(b), None, None) => {
            if lahar_policies::baselines::spec_of(&b.value).is_none() {
                v.err(
                    at(b),
                    "spec.scheduler.baseline",
                    format!(
                        "unknown baseline `{}`; expected one of: {}",
                        b.value,
                        lahar_policies::baselines::names().collect::<Vec<_>>().join(", ")
                    ),
                );
            }
            SchedulerChoice::Baseline(b.value.clone())
        }
        (None, Some(c), None) => {
            let p = lahar_core::util::files::join(base, &c.value);
            match lahar_core::util::files::read_to_string(&p) {
                Ok(text) => volcano_conf(v, &text, Some(&p.display().to_string()), None, "spec.scheduler.conf"),
                Err(e) => {
                    v.err(at(c), "spec.scheduler.conf", format!("cannot read `{}`: {e}", p.display()));
                    default()
                }
            }
        }
        (None, None, Some(t)) => volcano_conf(v, &t.value, None, at(t), "spec.scheduler.inline"),
        _ => {
            v.err(
                at(s),
                "spec.scheduler",
                "expected exactly one of `baseline`, `conf` (a volcano-scheduler.conf path) or `inline` (its text)",
            );
            default()
        }
    }
}

/// A timeline step's `conf` (`c`, at field `path`, naming file `p`): the
/// volcano-scheduler.conf the scheduler reloads then, read and checked as
/// `spec.scheduler.conf` is. The run's scheduler (`first`) must be Volcano's,
/// and the conf must leave as they are the choices lahar makes once, from the
/// first conf, for the whole run: how devices are modelled (vGPU, vNPU, their
/// device ConfigMap, NUMA) and the FGD policy shares of one GPU follow. The conf
/// with its text (for the run's record); `None` when bad (reported).
pub(super) fn reloaded_conf(
    v: &mut V<'_>,
    (c, p): (&Spanned<String>, &Path),
    path: &str,
    first: &SchedulerChoice,
) -> Option<(lahar_policies::volcano::conf::SchedulerConf, String)> {
    if let SchedulerChoice::Baseline(b) = first {
        let why = format!(
            "reloads a volcano-scheduler.conf, but the run's scheduler is the baseline `{b}`: only a Volcano scheduler (`spec.scheduler.conf` or `inline`) reads a conf"
        );
        v.err(at(c), path, why);
        return None;
    }
    let text = match lahar_core::util::files::read_to_string(p) {
        Ok(t) => t,
        Err(e) => {
            v.err(at(c), path, format!("cannot read `{}`: {e}", p.display()));
            return None;
        }
    };
    // A conf with errors (reported) comes back as a stand-in baseline.
    let next @ SchedulerChoice::Volcano(_) = volcano_conf(v, &text, Some(&p.display().to_string()), None, path) else {
        return None;
    };
    let differs = [
        (
            "deviceshare.VGPUEnable (with its SchedulePolicy and GPUExclusiveRules)",
            first.vgpu_policy() != next.vgpu_policy(),
        ),
        ("deviceshare.AscendHAMiVNPUEnable (with its SchedulePolicy)", first.vnpu_policy() != next.vnpu_policy()),
        ("deviceshare.KnownGeometriesCMNamespace/CMName", first.device_config_map() != next.device_config_map()),
        ("the numa-aware plugin", first.models_numa() != next.models_numa()),
        ("the fgd plugin and its policy", first.placement_policy() != next.placement_policy()),
    ];
    let what: Vec<&str> = differs.iter().filter(|(_, d)| *d).map(|(w, _)| *w).collect();
    if !what.is_empty() {
        let why = format!(
            "`{}` changes {} from the run's first conf: lahar models the cluster's devices once, from that conf, for the whole run; a reloaded conf must keep them",
            p.display(),
            what.join(", ")
        );
        v.err(at(c), path, why);
        return None;
    }
    match next {
        SchedulerChoice::Volcano(conf) => Some((*conf, text)),
        SchedulerChoice::Baseline(_) => None,
    }
}

/// The largest `promoteKnob` (the authors' simulator offers up to 1,000).
const MAX_PROMOTE_KNOB: i64 = 1_000_000;
/// The most `tiresias` queues (thresholds + 1).
const MAX_TIRESIAS_QUEUES: usize = 16;
/// The largest threshold, in GPU·seconds (30 times a million GPUs for a year).
const MAX_THRESHOLD_GPU_SECS: i64 = 1_000_000_000_000_000;

/// `spec.scheduler`'s options besides `baseline` (`runTime`; `thresholds`,
/// `promoteKnob`, `suspend`): each only with a baseline that reads it
/// ([`lahar_policies::baselines::BaselineSpec::options`]).
pub(super) fn baseline_options(
    v: &mut V<'_>,
    s: Option<&Spanned<RawScheduler>>,
) -> lahar_policies::baselines::BaselineOptions {
    use lahar_policies::baselines::{ALL, BaselineOptions, RUN_TIME, RunTime, spec_of};
    let mut opts = BaselineOptions::default();
    let Some(s) = s else { return opts };
    let r = &s.value;
    let baseline = r.baseline.as_ref().map(|b| b.value.as_str());
    let reads = |field: &str| baseline.and_then(spec_of).is_some_and(|b| b.options.contains(&field));
    let what = || baseline.map_or_else(|| "a Volcano conf".to_string(), |b| format!("baseline `{b}`"));
    let readers = |field: &str| -> String {
        let names: Vec<&str> = ALL.iter().filter(|b| b.options.contains(&field)).map(|b| b.name).collect();
        names.join(" and ")
    };
    // Each option given: is it read by the baseline chosen?
    let refuse = |v: &mut V<'_>, field: &str, at: At| -> bool {
        if reads(field) {
            return false;
        }
        let path = format!("spec.scheduler.{field}");
        let m = if field == RUN_TIME {
            format!("{} plans with no run time: `runTime` applies to {}", what(), readers(field))
        } else {
            format!("{} has no `{field}`: it applies to {}", what(), readers(field))
        };
        v.err(at, path, m);
        true
    };
    if let Some(rt) = &r.run_time {
        match RunTime::parse(&rt.value) {
            None => {
                v.err(at(rt), "spec.scheduler.runTime", format!("expected `actual` or `estimate`, got `{}`", rt.value))
            }
            Some(run_time) if !refuse(v, RUN_TIME, at(rt)) => opts.run_time = run_time,
            Some(_) => {}
        }
    }
    if let Some(k) = &r.promote_knob
        && !refuse(v, "promoteKnob", at(k))
    {
        match u64::try_from(k.value) {
            Ok(knob) if k.value <= MAX_PROMOTE_KNOB => opts.tiresias.promote_knob = knob,
            _ => v.err(
                at(k),
                "spec.scheduler.promoteKnob",
                format!("expected an integer from 0 (no starvation guard) to {MAX_PROMOTE_KNOB}, got {}", k.value),
            ),
        }
    }
    if let Some(t) = &r.thresholds
        && !refuse(v, "thresholds", at(t))
    {
        let path = "spec.scheduler.thresholds";
        let list = &t.value;
        if list.is_empty() || list.len() >= MAX_TIRESIAS_QUEUES {
            let m = format!(
                "expected 1 to {} thresholds (GPU·seconds, ascending; one queue more than thresholds), got {}",
                MAX_TIRESIAS_QUEUES - 1,
                list.len()
            );
            v.err(at(t), path, m);
        } else {
            let mut ok = true;
            for (i, x) in list.iter().enumerate() {
                let prev = i.checked_sub(1).map(|p| list[p].value);
                let m = if x.value <= 0 || x.value > MAX_THRESHOLD_GPU_SECS {
                    format!("expected GPU·seconds above 0 (at most {MAX_THRESHOLD_GPU_SECS}), got {}", x.value)
                } else if let Some(p) = prev.filter(|&p| x.value <= p) {
                    format!("expected thresholds in ascending order: {} is not above {p}", x.value)
                } else {
                    continue;
                };
                v.err(at(x), format!("{path}[{i}]"), m);
                ok = false;
            }
            if ok {
                opts.tiresias.thresholds_gpu_secs = list.iter().map(|x| x.value as u64).collect();
            }
        }
    }
    if let Some(b) = &r.suspend
        && !refuse(v, "suspend", at(b))
    {
        opts.tiresias.suspend = b.value;
    }
    opts
}

/// `spec.priorityClasses`: user classes added to Kubernetes' built-in ones.
pub(super) fn priority_classes(v: &mut V<'_>, list: Option<&[Spanned<RawPriorityClass>]>) -> PriorityClasses {
    let mut out = PriorityClasses::builtin();
    for (i, c) in list.unwrap_or_default().iter().enumerate() {
        let path = format!("spec.priorityClasses[{i}]");
        let r = &c.value;
        let global_default = r.global_default.as_ref().is_some_and(|g| g.value);
        let preemption_policy = match &r.preemption_policy {
            Some(p) if !["PreemptLowerPriority", "Never"].contains(&p.value.as_str()) => {
                v.err(
                    at(p),
                    format!("{path}.preemptionPolicy"),
                    format!("expected `PreemptLowerPriority` or `Never`, got `{}`", p.value),
                );
                continue;
            }
            Some(p) => p.value.clone(),
            None => "PreemptLowerPriority".into(),
        };
        if r.name.value.is_empty() {
            v.err(at(&r.name), format!("{path}.name"), "expected a non-empty name");
            continue;
        }
        if r.value.value < i64::from(i32::MIN) {
            v.err(
                at(&r.value),
                format!("{path}.value"),
                format!("must be at least {}, got {}", i32::MIN, r.value.value),
            );
            continue;
        }
        if let Some((field, m)) = out.check(&r.name.value, r.value.value, global_default, &preemption_policy) {
            let at = match field {
                "value" => at(&r.value),
                "globalDefault" => r.global_default.as_ref().map_or(at(c), at),
                _ => at(&r.name),
            };
            v.err(at, format!("{path}.{field}"), m);
            continue;
        }
        out.by_name.insert(
            r.name.value.clone(),
            PriorityClass { value: r.value.value as i32, global_default, preemption_policy },
        );
    }
    out
}

/// The conf text of a Volcano run, kept for its record (input-scheduler.conf).
pub(super) fn conf_text(choice: &SchedulerChoice, s: Option<&Spanned<RawScheduler>>, base: &Path) -> Option<String> {
    match choice {
        SchedulerChoice::Baseline(_) => None,
        SchedulerChoice::Volcano(_) => match s.map(|s| (&s.value.conf, &s.value.inline)) {
            Some((Some(c), _)) => {
                lahar_core::util::files::read_to_string(&lahar_core::util::files::join(base, &c.value)).ok()
            }
            Some((None, Some(t))) => Some(t.value.clone()),
            _ => Some(lahar_policies::volcano::conf::DEFAULT_CONF.to_string()),
        },
    }
}
