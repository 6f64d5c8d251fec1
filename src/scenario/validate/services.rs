//! `spec.services` (a workload's request demand, what a replica serves, how long
//! one takes to start) and `spec.autoscaling` (the HPA controller's settings),
//! checked before any work. Workloads are named as lahar's outputs name jobs and
//! found when they arrive (a service's workload may come from any source); one
//! that never arrives is a counted warning after the run.

use super::{V, at};
use crate::scenario::raw::{RawAutoscaling, RawDemand, RawDemandTrace, RawService};
use lahar_core::model::cluster::Node;
use lahar_core::serving::demand::Demand;
use lahar_core::serving::hpa::HpaConfig;
use lahar_core::serving::{ServiceSpec, Unit};
use lahar_core::util::time::{SimDuration, SimTime};
use serde_saphyr::Spanned;
use std::sync::Arc;

/// The most requests (or tokens) per second a rate may be.
const MAX_RATE: f64 = 1e9;

/// A rate in `unit`s per second as milli-units per second.
fn rate(v: &mut V<'_>, x: &Spanned<f64>, path: &str, zero_ok: bool, unit: Unit) -> Option<i64> {
    let ok = x.value.is_finite() && x.value <= MAX_RATE && (x.value > 0.0 || (zero_ok && x.value == 0.0));
    if !ok {
        let lo = if zero_ok { "from 0" } else { "greater than 0 and" };
        let what = unit.name();
        v.err(at(x), path, format!("must be a number of {what} per second {lo} up to {MAX_RATE:e}, got {}", x.value));
        return None;
    }
    Some((x.value * 1000.0).round() as i64)
}

/// `spec.services[].unit`.
fn unit(v: &mut V<'_>, u: Option<&Spanned<String>>, path: &str) -> Option<Unit> {
    match u.map(|u| (u, u.value.as_str())) {
        None | Some((_, "requests")) => Some(Unit::Requests),
        Some((_, "tokens")) => Some(Unit::Tokens),
        Some((u, other)) => {
            v.err(at(u), path, format!("unknown unit `{other}`; expected `requests` or `tokens`"));
            None
        }
    }
}

/// The services, in the order written.
pub(super) fn services(
    v: &mut V<'_>,
    raw: &[Spanned<RawService>],
    nodes: &[Node],
    base: &std::path::Path,
) -> Vec<Arc<ServiceSpec>> {
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeMap::new();
    for (i, s) in raw.iter().enumerate() {
        let path = format!("spec.services[{i}]");
        let r = &s.value;
        let (namespace, name) = match r.workload.value.split_once('/') {
            Some((ns, n)) => (ns.to_string(), n.to_string()),
            None => ("default".to_string(), r.workload.value.clone()),
        };
        if name.is_empty() || namespace.is_empty() {
            v.err(at(&r.workload), format!("{path}.workload"), "expected `namespace/name` or `name` of a workload");
            continue;
        }
        if let Some(first) = seen.insert((namespace.clone(), name.clone()), i) {
            v.err(
                at(&r.workload),
                format!("{path}.workload"),
                format!("{namespace}/{name} is already a service (spec.services[{first}])"),
            );
        }
        let Some(unit) = unit(v, r.unit.as_ref(), &format!("{path}.unit")) else { continue };
        let demand = demand(v, &r.demand, &format!("{path}.demand"), base, unit);
        let by_role: Vec<(Arc<str>, i64, super::At)> = match &r.capacity_by_role {
            Some(m) => {
                if m.value.is_empty() {
                    v.err(at(m), format!("{path}.capacityByRole"), "expected at least one role and its capacity");
                }
                let mut out = Vec::new();
                for (role, c) in &m.value {
                    if let Some(x) = rate(v, c, &format!("{path}.capacityByRole.{role}"), false, unit) {
                        out.push((Arc::<str>::from(role.as_str()), x, at(c)));
                    }
                }
                out
            }
            None => Vec::new(),
        };
        let capacity = match (&r.capacity, &r.capacity_by_role) {
            (Some(c), None) => rate(v, c, &format!("{path}.capacity"), false, unit),
            (None, Some(_)) => Some(0),
            (Some(c), Some(_)) => {
                let msg = "give `capacity` (what a replica serves) or `capacityByRole` (what a replica of each role serves), not both";
                v.err(at(c), format!("{path}.capacity"), msg);
                None
            }
            (None, None) => {
                v.err(
                    at(s),
                    format!("{path}.capacity"),
                    "required: the requests (or tokens) per second one ready replica serves",
                );
                None
            }
        };
        if let (Some(m), Some(_)) = (&r.capacity_by_gpu_model, &r.capacity_by_role) {
            let msg = "`capacityByGpuModel` and `capacityByRole` do not combine: give the roles' capacities alone";
            v.err(at(m), format!("{path}.capacityByGpuModel"), msg);
        }
        let mut by_model = Vec::new();
        if let Some(m) = &r.capacity_by_gpu_model {
            for (model, c) in &m.value {
                let p = format!("{path}.capacityByGpuModel.{model}");
                if !nodes.iter().any(|n| n.gpu_model == *model) {
                    let mut models: Vec<&str> =
                        nodes.iter().map(|n| n.gpu_model.as_str()).filter(|m| !m.is_empty()).collect();
                    models.sort_unstable();
                    models.dedup();
                    v.err(at(c), &p, format!("no node has GPU model `{model}`; the cluster's: {}", models.join(", ")));
                }
                if let Some(x) = rate(v, c, &p, false, unit) {
                    by_model.push((Arc::<str>::from(model.as_str()), x));
                }
            }
        }
        let startup = match &r.startup {
            Some(d) => v.duration(d, &format!("{path}.startup")),
            None => Some(SimDuration::ZERO),
        };
        if let (Some(demand), Some(capacity), Some(startup)) = (demand, capacity, startup) {
            out.push(Arc::new(ServiceSpec {
                namespace: namespace.into(),
                name,
                unit,
                demand,
                capacity,
                capacity_by_model: by_model,
                capacity_by_role: by_role,
                startup,
                place: path,
                deployment: r.deployment.as_ref().map(|d| (d.value.clone(), at(d))),
            }));
        }
    }
    out
}

fn demand(v: &mut V<'_>, d: &Spanned<RawDemand>, path: &str, base: &std::path::Path, unit: Unit) -> Option<Demand> {
    let r = &d.value;
    let given: Vec<&str> = [
        ("constant", r.constant.is_some()),
        ("steps", r.steps.is_some()),
        ("diurnal", r.diurnal.is_some()),
        ("bursts", r.bursts.is_some()),
        ("trace", r.trace.is_some()),
    ]
    .iter()
    .filter(|(_, g)| *g)
    .map(|(k, _)| *k)
    .collect();
    if given.len() != 1 {
        let got = if given.is_empty() { "none".to_string() } else { given.join(", ") };
        v.err(at(d), path, format!("expected exactly one of constant, steps, diurnal, bursts, trace; got {got}"));
        return None;
    }
    if let Some(c) = &r.constant {
        return rate(v, c, &format!("{path}.constant"), true, unit).map(Demand::Constant);
    }
    if let Some(t) = &r.trace {
        return trace(v, &t.value, &format!("{path}.trace"), base, unit);
    }
    if let Some(steps) = &r.steps {
        let mut out: Vec<(SimTime, i64)> = Vec::new();
        if steps.value.is_empty() {
            v.err(at(steps), format!("{path}.steps"), "expected at least one `{at, rate}`");
        }
        for (k, s) in steps.value.iter().enumerate() {
            let p = format!("{path}.steps[{k}]");
            let t = v.duration(&s.value.at, &format!("{p}.at")).map(|d| SimTime::ZERO.plus(d));
            let x = rate(v, &s.value.rate, &format!("{p}.rate"), true, unit);
            if let (Some(t), Some(x)) = (t, x) {
                if out.last().is_some_and(|l| l.0 >= t) {
                    v.err(at(&s.value.at), format!("{p}.at"), "must be later than the step before");
                }
                out.push((t, x));
            }
        }
        return Some(Demand::Steps(out));
    }
    if let Some(di) = &r.diurnal {
        let p = format!("{path}.diurnal");
        // The hourly rates are named by the service's unit.
        let (field, hours, other) = match unit {
            Unit::Requests => ("requestsPerSecond", &di.value.requests_per_second, &di.value.tokens_per_second),
            Unit::Tokens => ("tokensPerSecond", &di.value.tokens_per_second, &di.value.requests_per_second),
        };
        if let Some(o) = other {
            let (given, unit_) =
                if unit == Unit::Tokens { ("requestsPerSecond", "tokens") } else { ("tokensPerSecond", "requests") };
            v.err(at(o), format!("{p}.{given}"), format!("the service counts {unit_} (`unit`): give `{field}`"));
            return None;
        }
        let Some(hours) = hours else {
            v.err(at(di), format!("{p}.{field}"), "missing: 24 rates, one per hour");
            return None;
        };
        if hours.value.len() != 24 {
            v.err(
                at(hours),
                format!("{p}.{field}"),
                format!("expected 24 rates (one per hour), got {}", hours.value.len()),
            );
            return None;
        }
        let mut per_hour = [0i64; 24];
        for (h, x) in hours.value.iter().enumerate() {
            if !(x.is_finite() && *x >= 0.0 && *x <= MAX_RATE) {
                v.err(at(hours), format!("{p}.{field}[{h}]"), format!("must be from 0 to {MAX_RATE:e}, got {x}"));
                return None;
            }
            per_hour[h] = (x * 1000.0).round() as i64;
        }
        let mut weekly = [1000i64; 7];
        if let Some(w) = &di.value.weekly {
            if w.value.len() != 7 {
                v.err(at(w), format!("{p}.weekly"), format!("expected 7 factors (one per day), got {}", w.value.len()));
                return None;
            }
            for (k, x) in w.value.iter().enumerate() {
                if !(x.is_finite() && *x >= 0.0 && *x <= 1000.0) {
                    v.err(at(w), format!("{p}.weekly[{k}]"), format!("must be a factor from 0 to 1000, got {x}"));
                    return None;
                }
                weekly[k] = (x * 1000.0).round() as i64;
            }
        }
        return Some(Demand::Diurnal { per_hour: Box::new(per_hour), weekly: Box::new(weekly) });
    }
    let b = &r.bursts.as_ref()?.value;
    let p = format!("{path}.bursts");
    let base = rate(v, &b.base, &format!("{p}.base"), true, unit);
    let peak = rate(v, &b.peak, &format!("{p}.peak"), true, unit);
    let every = v.duration(&b.every, &format!("{p}.every"));
    let lasting = v.duration(&b.lasting, &format!("{p}.lasting"));
    let first = match &b.first {
        Some(f) => v.duration(f, &format!("{p}.first")),
        None => Some(SimDuration::ZERO),
    };
    let (every, lasting) = (every?, lasting?);
    if every.micros() == 0 {
        v.err(at(&b.every), format!("{p}.every"), "must be longer than 0");
        return None;
    }
    if lasting > every {
        v.err(at(&b.lasting), format!("{p}.lasting"), format!("must not exceed `every` ({})", every.secs_string()));
        return None;
    }
    Some(Demand::Bursts { base: base?, peak: peak?, first: SimTime::ZERO.plus(first?), every, lasting })
}

/// A request trace's requests counted per `bin` (default 1 minute), each bin's
/// rate × `scale`, from `start` (default 0s) on, `repeat` times (default once)
/// every `every` (default: the trace's bins end to end); 0 after the last bin.
fn trace(v: &mut V<'_>, t: &RawDemandTrace, path: &str, base: &std::path::Path, unit: Unit) -> Option<Demand> {
    use lahar_traces::requests::{RequestFormat, Tokens, read_requests};
    // A service in tokens counts each request's input, output or both.
    let tokens = match (&t.tokens, unit) {
        (Some(x), Unit::Requests) => {
            v.err(
                at(x),
                format!("{path}.tokens"),
                "counts tokens for a service in tokens: the service counts requests (`unit: tokens` to count tokens)",
            );
            return None;
        }
        (Some(x), Unit::Tokens) => match Tokens::from_name(&x.value) {
            Some(k) => Some(k),
            None => {
                v.err(
                    at(x),
                    format!("{path}.tokens"),
                    format!("unknown `{}`; expected `input`, `output` or `total`", x.value),
                );
                return None;
            }
        },
        (None, Unit::Tokens) => Some(Tokens::Total),
        (None, Unit::Requests) => None,
    };
    let file = lahar_core::util::files::join(base, &t.path.value);
    let format = match &t.format {
        Some(f) => match RequestFormat::from_name(&f.value) {
            Some(x) => x,
            None => {
                let known: Vec<&str> = RequestFormat::ALL.iter().map(|f| f.name()).collect();
                v.err(
                    at(f),
                    format!("{path}.format"),
                    format!("unknown request trace format `{}`; expected one of {}", f.value, known.join(", ")),
                );
                return None;
            }
        },
        None => match RequestFormat::guess(&file) {
            Some(x) => x,
            None => {
                v.err(
                    at(&t.path),
                    format!("{path}.format"),
                    "the format cannot be told from the file's name: give `format: azure-llm`, `burstgpt` or `mooncake`",
                );
                return None;
            }
        },
    };
    let bin = match &t.bin {
        Some(b) => v.duration(b, &format!("{path}.bin"))?,
        None => SimDuration::from_secs(60),
    };
    if bin.micros() < 1_000_000 {
        let b = t.bin.as_ref().expect("a default bin is a minute");
        v.err(at(b), format!("{path}.bin"), "must be at least 1s");
        return None;
    }
    let scale = match &t.scale {
        Some(x) if x.value.is_finite() && x.value > 0.0 && x.value <= 1e6 => x.value,
        Some(x) => {
            v.err(
                at(x),
                format!("{path}.scale"),
                format!("expected a factor above 0 and at most 10^6, got {}", x.value),
            );
            return None;
        }
        None => 1.0,
    };
    let start = match &t.start {
        Some(d) => v.duration(d, &format!("{path}.start"))?,
        None => SimDuration::ZERO,
    };
    let trace = match read_requests(format, &file, false) {
        Ok(x) => x,
        Err(e) => {
            v.err(at(&t.path), format!("{path}.path"), e.to_string());
            return None;
        }
    };
    if let Some((line, why)) = &trace.first_skip {
        v.warn(
            "trace-rows-skipped",
            trace.skipped,
            at(&t.path),
            format!("{path}.path"),
            format!(
                "{} of {} rows of {} skipped (the first, line {line}: {why})",
                trace.skipped,
                trace.rows,
                file.display()
            ),
        );
    }
    if trace.at_us.is_empty() {
        v.err(at(&t.path), format!("{path}.path"), format!("{} holds no request", file.display()));
        return None;
    }
    const MAX_BINS: u64 = 10_000_000;
    let repeat = match &t.repeat {
        Some(n) if (1..=MAX_BINS).contains(&n.value) => n.value,
        Some(n) => {
            v.err(at(n), format!("{path}.repeat"), format!("expected 1 to {MAX_BINS} copies, got {}", n.value));
            return None;
        }
        None => 1,
    };
    if trace.span_us() / bin.micros() >= MAX_BINS {
        v.err(
            at(&t.path),
            format!("{path}.bin"),
            format!(
                "the trace spans {} s: more than {MAX_BINS} bins of {} s; give a longer `bin`",
                trace.span_us() / 1_000_000,
                bin.micros() / 1_000_000
            ),
        );
        return None;
    }
    let counts = match tokens {
        Some(k) => trace.token_counts(bin.micros(), k),
        None => trace.counts(bin.micros()),
    };
    // The busiest bin's rate within the bound every rate keeps.
    let busiest = counts.iter().map(|c| c.1).max().unwrap_or(0) as f64 * scale * 1e6 / bin.micros() as f64;
    if busiest > MAX_RATE {
        v.err(
            at(&t.path),
            format!("{path}.path"),
            format!("the busiest bin offers {busiest:e} {} per second (× scale): more than {MAX_RATE:e}", unit.name()),
        );
        return None;
    }
    // The trace's bins end to end: the shortest period its copies can have.
    let span = (counts.len() as u64).saturating_mul(bin.micros());
    let every = match &t.every {
        Some(d) if repeat < 2 => {
            v.err(at(d), format!("{path}.every"), "spaces the copies of `repeat`: with one copy it does nothing");
            return None;
        }
        Some(d) => {
            let e = v.duration(d, &format!("{path}.every"))?;
            if e.micros() < span {
                v.err(
                    at(d),
                    format!("{path}.every"),
                    format!(
                        "the copies would overlap: the trace's bins span {} s, so `every` must be at least that",
                        span / 1_000_000
                    ),
                );
                return None;
            }
            e.micros()
        }
        None => span,
    };
    if (counts.len() as u64).saturating_mul(repeat) > MAX_BINS {
        let r = t.repeat.as_ref().expect("one copy fits: checked above");
        v.err(
            at(r),
            format!("{path}.repeat"),
            format!("{repeat} copies of {} bins are more than {MAX_BINS} bins; give a longer `bin`", counts.len()),
        );
        return None;
    }
    // Instants stay far below the end of time (µs in 64 bits: 584,000 years).
    let last = repeat.checked_mul(every).and_then(|x| x.checked_add(start.micros())).and_then(|x| x.checked_add(span));
    if last.is_none_or(|l| l > u64::MAX / 2) {
        let at_ = t.every.as_ref().unwrap_or(&t.path);
        v.err(at(at_), format!("{path}.repeat"), "the copies reach beyond the time lahar can count");
        return None;
    }
    let mut steps: Vec<(SimTime, i64)> = Vec::new();
    for copy in 0..repeat {
        let from = start.micros() + copy * every;
        // A gap between copies (a period longer than the trace) offers nothing.
        if let Some(&(last, _)) = steps.last()
            && last.micros().saturating_add(bin.micros()) < from
        {
            steps.push((SimTime(last.micros().saturating_add(bin.micros())), 0));
        }
        for &(b, n) in &counts {
            let milli = (n as f64 * scale * 1e9 / bin.micros() as f64).round() as i64;
            steps.push((SimTime(from + b), milli));
        }
    }
    let end = steps.last().map_or(start.micros(), |s| s.0.micros().saturating_add(bin.micros()));
    steps.push((SimTime(end), 0));
    Some(Demand::Steps(steps))
}

/// `spec.autoscaling`, over the controller's defaults.
pub(super) fn autoscaling(v: &mut V<'_>, raw: Option<&Spanned<RawAutoscaling>>) -> HpaConfig {
    let mut cfg = HpaConfig::default();
    let Some(r) = raw else { return cfg };
    let r = &r.value;
    if let Some(p) = &r.sync_period {
        match v.duration(p, "spec.autoscaling.syncPeriod") {
            Some(d) if d.micros() < 1_000_000 => v.err(at(p), "spec.autoscaling.syncPeriod", "must be at least 1s"),
            Some(d) => cfg.sync_period_us = d.micros(),
            None => {}
        }
    }
    if let Some(t) = &r.tolerance {
        if t.value.is_finite() && (0.0..1.0).contains(&t.value) {
            cfg.tolerance = t.value;
        } else {
            v.err(at(t), "spec.autoscaling.tolerance", format!("must be a fraction from 0 up to 1, got {}", t.value));
        }
    }
    if let Some(w) = &r.downscale_stabilization
        && let Some(d) = v.duration(w, "spec.autoscaling.downscaleStabilization")
    {
        if d.micros() % 1_000_000 != 0 || d.micros() / 1_000_000 > 3600 {
            v.err(at(w), "spec.autoscaling.downscaleStabilization", "must be whole seconds, at most 1h");
        } else {
            cfg.downscale_window_s = (d.micros() / 1_000_000) as u32;
        }
    }
    cfg
}
