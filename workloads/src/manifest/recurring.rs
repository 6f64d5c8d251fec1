//! Recurring kinds: Volcano's `CronJob`, Kubernetes' `batch/v1` `CronJob` (of
//! Jobs scheduled by Volcano), KubeRay's `RayCronJob` and the Spark operator's
//! `ScheduledSparkApplication`. Each becomes the runs its controller
//! creates from its cron schedule on the cluster clock (`spec.startTime`, UTC)
//! until `spec.horizon`: one job per scheduled time, named as the controller
//! names it, read from the object's job template as the inner kind is read, and
//! carrying the object's concurrency policy, which the engine applies when the
//! run is due (`lahar_core::model::recurring`).

use super::common::{self, Ck, join};
use super::yaml::{Doc, Node, Val};
use super::{Context, ImportedJob};
use crate::cron;
use lahar_core::model::job::{Concurrency, Recurrence};
use lahar_core::util::time::{MICROS_PER_SEC, SimDuration, SimTime};
use std::sync::Arc;

/// Runs one object may make before the horizon: beyond, the schedule is surely
/// not what the user meant (`* * * * *` for a year is 525,600 jobs).
pub const MAX_RUNS: usize = 100_000;

/// Longest name of a recurring object: Volcano's webhook and KubeRay leave 11
/// characters of the 63 of a job name for the `-<minutes>` suffix.
const MAX_NAME: usize = 52;

/// The key [`jobs`] takes for Kubernetes' `batch/v1` CronJob (Volcano's is
/// `CronJob`).
pub(crate) const BATCH_CRON_JOB: &str = "batch/v1 CronJob";

/// What differs between the kinds.
struct KindRules {
    /// The kind its runs are.
    inner_api: &'static str,
    inner_kind: &'static str,
    /// Where the run's template is under `spec`.
    template: &'static str,
    /// Whether the template is `{metadata, spec}` (Volcano) or the spec itself.
    template_has_meta: bool,
    concurrency: bool,
    /// Whether a run held back by Forbid starts when the active run ends.
    late_start: bool,
}

fn rules(kind: &str) -> KindRules {
    match kind {
        // Kubernetes' CronJob controller (`syncCronJob`, `getJobFromTemplate2`):
        // the same schedule, concurrency and deadline rules as Volcano's, which
        // copies them.
        BATCH_CRON_JOB => KindRules {
            inner_api: "batch/v1",
            inner_kind: "Job",
            template: "jobTemplate",
            template_has_meta: true,
            concurrency: true,
            late_start: true,
        },
        "CronJob" => KindRules {
            inner_api: "batch.volcano.sh/v1alpha1",
            inner_kind: "Job",
            template: "jobTemplate",
            template_has_meta: true,
            concurrency: true,
            late_start: true,
        },
        "RayCronJob" => KindRules {
            inner_api: "ray.io/v1",
            inner_kind: "RayJob",
            template: "jobTemplate",
            template_has_meta: false,
            concurrency: false,
            late_start: false,
        },
        _ => KindRules {
            inner_api: "sparkoperator.k8s.io/v1beta2",
            inner_kind: "SparkApplication",
            template: "template",
            template_has_meta: false,
            concurrency: true,
            late_start: false,
        },
    }
}

pub(crate) fn node(at: super::yaml::At, val: Val) -> Node {
    Node { at, val }
}

pub(crate) fn string_map(at: super::yaml::At, m: &[(String, (String, super::yaml::At))]) -> Node {
    node(at, Val::Map(m.iter().map(|(k, (v, a))| (k.clone(), node(*a, Val::Str(v.clone())))).collect()))
}

/// The runs of one recurring object (none when it is suspended).
pub(crate) fn jobs(d: &Doc, key: &str, cx: &mut Context<'_>, ck: &mut Ck<'_>) -> Vec<ImportedJob> {
    let r = rules(key);
    // Kubernetes' CronJob follows Volcano's rules; its name in messages is its kind.
    let batch = key == BATCH_CRON_JOB;
    let kind = if batch { "CronJob" } else { key };
    let root = &d.root;
    let meta = common::meta(ck, root, "", true);
    let empty = node(root.at, Val::Null);
    let spec = root.get("spec").unwrap_or(&empty);
    let sp = "spec";
    if meta.name.chars().count() > MAX_NAME && kind != "ScheduledSparkApplication" {
        ck.err(
            root.get("metadata").and_then(|m| m.get("name")).and_then(|n| n.at),
            "metadata.name",
            format!("a {kind} name must be no more than {MAX_NAME} characters (its runs add `-<minutes>`)"),
        );
    }
    let at_of = |k: &str| spec.get(k).and_then(|n| n.at).or(spec.at);
    let suspend = ck.opt_bool(spec, "suspend", sp).unwrap_or(false);
    let schedule_text = ck.opt_str(spec, "schedule", sp).unwrap_or_default();
    if schedule_text.is_empty() {
        ck.err(at_of("schedule"), "spec.schedule", "schedule is required, but got empty");
    }
    let tz = ck.opt_str(spec, "timeZone", sp);
    let policy = if r.concurrency {
        match ck.opt_str(spec, "concurrencyPolicy", sp).as_deref() {
            None | Some("Allow") => Concurrency::Allow,
            Some("Forbid") => Concurrency::Forbid,
            Some("Replace") => Concurrency::Replace,
            Some(other) => {
                ck.err(
                    at_of("concurrencyPolicy"),
                    "spec.concurrencyPolicy",
                    format!("expected `Allow`, `Forbid` or `Replace`, got `{other}`"),
                );
                Concurrency::Allow
            }
        }
    } else {
        Concurrency::Allow
    };
    let deadline = if kind == "CronJob" {
        // (Volcano's and Kubernetes'.)
        ck.opt_int(spec, "startingDeadlineSeconds", sp, 0).map(|s| SimDuration(s as u64 * MICROS_PER_SEC))
    } else {
        None
    };
    // Kept runs: they delete finished runs' objects, which changes no decision.
    for k in
        ["successfulJobsHistoryLimit", "failedJobsHistoryLimit", "successfulRunHistoryLimit", "failedRunHistoryLimit"]
    {
        ck.opt_int(spec, k, sp, 0);
    }
    let schedule = schedule(ck, kind, &schedule_text, tz.as_deref(), at_of("schedule"), at_of("timeZone"));
    let Some(template) = spec.get(r.template).filter(|t| matches!(t.val, Val::Map(_))) else {
        ck.err(at_of(r.template), &join(sp, r.template), format!("a {kind} needs its run's template here"));
        return Vec::new();
    };
    let timing = common::timing(ck, cx, &meta.annotations, meta.at, "");
    if !ck.ok() || suspend {
        return Vec::new();
    }
    let (Some(schedule), Some(timing)) = (schedule, timing) else { return Vec::new() };
    let Some(horizon) = cx.horizon else {
        ck.err(
            at_of("schedule"),
            "spec.schedule",
            format!("a {kind} makes runs until the run ends: set `spec.horizon` in the scenario to end it"),
        );
        return Vec::new();
    };

    // The scheduled times: after the object's creation, up to the horizon.
    let created = cx.clock_start + (timing.submit.micros() / MICROS_PER_SEC) as i64;
    let last = cx.clock_start + (horizon.micros() / MICROS_PER_SEC) as i64;
    let mut slots = Vec::new();
    let mut t = created;
    while let Some(n) = schedule.next(t).filter(|&n| n <= last) {
        if slots.len() == MAX_RUNS {
            ck.err(
                at_of("schedule"),
                "spec.schedule",
                format!(
                    "`{schedule_text}` makes more than {MAX_RUNS} runs before the horizon; is this the schedule you meant?"
                ),
            );
            return Vec::new();
        }
        slots.push(n);
        t = n;
    }
    // No run before the horizon: said, and the template still checked (one run's
    // worth, at the creation time, kept by nobody).
    let check_only = slots.is_empty();
    if check_only {
        let first = schedule.next(created).map_or_else(
            || "its schedule has no next time".to_string(),
            |n| format!("its first run would be at {} s", n - cx.clock_start),
        );
        cx.left_out.push(super::Diagnostic {
            file: d.file.clone(),
            at: at_of("schedule"),
            path: format!("{}: spec.schedule", d.label()),
            message: format!(
                "{kind} `{}/{}` (`{schedule_text}`) makes no run before the horizon ({} s): {first}",
                meta.namespace,
                meta.name,
                horizon.micros() / MICROS_PER_SEC
            ),
        });
        slots.push(created);
    }

    // The run's object, as the controller creates it: the template, the run's
    // name, the labels it copies, and lahar's annotations of the object.
    let lahar_ann: Vec<(String, (String, super::yaml::At))> = meta
        .annotations
        .iter()
        .filter(|(k, _)| k.starts_with("lahar.io/") && *k != "lahar.io/submit-at")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let tpl_meta = if r.template_has_meta { template.get("metadata") } else { None };
    let inner_spec = if r.template_has_meta { template.get("spec").unwrap_or(&empty) } else { template };
    let mut labels: Vec<(String, (String, super::yaml::At))> = Vec::new();
    let mut annotations = lahar_ann;
    let tp = join(sp, r.template);
    if let Some(m) = tpl_meta {
        let mp = join(&tp, "metadata");
        for (k, v) in ck.string_map(m, "labels", &mp) {
            labels.push((k, v));
        }
        for (k, v) in ck.string_map(m, "annotations", &mp) {
            if k == "lahar.io/submit-at" {
                ck.err(v.1, &format!("{mp}.annotations.{k}"), "a run is submitted at its scheduled time");
            }
            annotations.retain(|(a, _)| *a != k);
            annotations.push((k, v));
        }
    }
    match kind {
        "ScheduledSparkApplication" => {
            labels.extend(meta.labels.iter().map(|(k, v)| (k.clone(), v.clone())));
            labels.push(("sparkoperator.k8s.io/scheduled-app-name".into(), (meta.name.clone(), meta.at)));
        }
        "RayCronJob" => labels.push(("ray.io/cronjob-name".into(), (meta.name.clone(), meta.at))),
        _ => {}
    }
    if !ck.ok() {
        return Vec::new();
    }
    let series: Arc<str> = Arc::from(format!("{kind} {}/{}", meta.namespace, meta.name));
    let rewrite: Vec<(&'static str, String)> = if r.template_has_meta {
        vec![
            ("metadata.annotations.lahar.io", "metadata.annotations.lahar.io".into()),
            ("metadata", join(&tp, "metadata")),
            ("spec", join(&tp, "spec")),
        ]
    } else {
        vec![("spec", tp.clone())]
    };
    let mut out = Vec::with_capacity(slots.len());
    for (i, &slot) in slots.iter().enumerate() {
        let name = match kind {
            // The Spark operator's default name precision: nanoseconds.
            "ScheduledSparkApplication" => format!("{}-{}", meta.name, slot as i128 * 1_000_000_000),
            _ => format!("{}-{}", meta.name, slot.div_euclid(60)),
        };
        let md = vec![
            ("name".to_string(), node(meta.at, Val::Str(name))),
            ("namespace".to_string(), node(meta.at, Val::Str(meta.namespace.clone()))),
            ("labels".to_string(), string_map(meta.at, &labels)),
            ("annotations".to_string(), string_map(meta.at, &annotations)),
        ];
        let inner = d.made(r.inner_api, r.inner_kind, node(meta.at, Val::Map(md)), inner_spec.clone());
        // The first run reports the template's problems; the others are the same.
        let mut scratch = Vec::new();
        let errs: &mut Vec<super::Diagnostic> = if i == 0 { ck.errs } else { &mut scratch };
        let mut ick = Ck::new(&inner, errs);
        ick.rewrite = rewrite.clone();
        let job = match kind {
            "CronJob" if batch => super::batchjob::job(&inner, cx, &mut ick),
            "CronJob" => super::vcjob::job(&inner, cx, &mut ick),
            "RayCronJob" => super::ray::job(&inner, "RayJob", cx, &mut ick),
            _ => super::spark::job(&inner, cx, &mut ick),
        };
        let Some(mut job) = job else { return Vec::new() };
        let slot_us = SimTime((slot - cx.clock_start) as u64 * MICROS_PER_SEC);
        job.spec.submit = slot_us;
        job.spec.recurrence = Some(Box::new(Recurrence {
            series: Arc::clone(&series),
            slot: slot_us,
            policy,
            late_start: r.late_start,
            deadline,
        }));
        job.doc = d.label();
        job.at = root.at;
        if !check_only {
            out.push(job);
        }
    }
    out
}

/// The schedule as the kind's controller builds it from `schedule` and
/// `timeZone`, with its admission checks.
fn schedule(
    ck: &mut Ck<'_>,
    kind: &str,
    text: &str,
    tz: Option<&str>,
    at: super::yaml::At,
    tz_at: super::yaml::At,
) -> Option<cron::Schedule> {
    if text.is_empty() {
        return None;
    }
    let mut ok = true;
    if let Some(z) = tz {
        let why = if z.is_empty() {
            Some("timeZone must be omitted or a non-empty IANA name".to_string())
        } else if kind == "CronJob" && z.eq_ignore_ascii_case("Local") {
            Some("timeZone can't be Local, and must be defined in https://www.iana.org/time-zones".to_string())
        } else {
            cron::zone(z).err()
        };
        if let Some(w) = why {
            ck.err(tz_at, "spec.timeZone", w);
            ok = false;
        }
    }
    let full = match kind {
        "ScheduledSparkApplication" if text.starts_with("CRON_TZ=") || text.starts_with("TZ=") => text.to_string(),
        "ScheduledSparkApplication" => format!("CRON_TZ={} {text}", tz.unwrap_or("Local")),
        _ if text.contains("TZ") => {
            ck.err(at, "spec.schedule", "schedule should not contain TZ or CRON_TZ; set the zone in `timeZone`");
            return None;
        }
        _ => match tz {
            Some(z) => format!("TZ={z} {text}"),
            None => text.to_string(),
        },
    };
    if !ok {
        return None;
    }
    match cron::parse(&full) {
        Ok(s) => Some(s),
        Err(e) => {
            ck.err(at, "spec.schedule", format!("`{text}` is not a valid cron schedule: {e}"));
            None
        }
    }
}
