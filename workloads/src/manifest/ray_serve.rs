//! A RayService's Ray Serve config (`serveConfigV2`, a YAML document in a
//! string) read as Ray 2.60's schema reads it (`python/ray/serve/schema.py`,
//! `config.py`): each deployment's replicas (`num_replicas`, or
//! `autoscaling_config` / `num_replicas: auto` with Ray's defaults), what a
//! replica actor asks of a Ray node (`ray_actor_options`, 1 CPU by default),
//! `max_ongoing_requests` and `max_replicas_per_node`. The cluster's Ray nodes
//! (`rayStartParams`, else the pods' requests) and KubeRay's in-tree
//! autoscaler come from the RayCluster spec. Ray ignores fields it does not
//! know; lahar refuses them at their place (a typo would silently change
//! nothing), but takes the names older Ray releases used.

use super::common::{Ck, join};
use super::yaml::{At, Doc, Node, Val};
use super::{Context, Diagnostic};
use lahar_core::serving::ray::{
    Aggregation, Bundle, Deployment, RayAutoscaler, RayServeSpec, ServeAutoscaling, Sizing, WorkerGroup,
};
use lahar_core::util::time::SimDuration;

const TOP: &[&str] = &[
    "applications",
    "proxy_location",
    "http_options",
    "grpc_options",
    "controller_options",
    "logging_config",
    "tracing_config",
    "target_capacity",
];
const APP: &[&str] = &[
    "name",
    "route_prefix",
    "import_path",
    "runtime_env",
    "host",
    "port",
    "deployments",
    "autoscaling_policy",
    "args",
    "logging_config",
    "external_scaler_enabled",
];
const DEPLOYMENT: &[&str] = &[
    "name",
    "num_replicas",
    "max_ongoing_requests",
    "max_concurrent_queries",
    "max_queued_requests",
    "backpressure_config",
    "user_config",
    "autoscaling_config",
    "graceful_shutdown_wait_loop_s",
    "graceful_shutdown_timeout_s",
    "health_check_period_s",
    "health_check_timeout_s",
    "ray_actor_options",
    "placement_group_bundles",
    "placement_group_strategy",
    "placement_group_bundle_label_selector",
    "max_replicas_per_node",
    "logging_config",
    "request_router_config",
    "gang_scheduling_config",
    "deployment_actors",
    "rolling_update_percentage",
    "max_surge_percent",
];
const AUTOSCALING: &[&str] = &[
    "min_replicas",
    "max_replicas",
    "initial_replicas",
    "target_ongoing_requests",
    "target_num_ongoing_requests_per_replica",
    "metrics_interval_s",
    "look_back_period_s",
    "aggregation_function",
    "smoothing_factor",
    "upscale_smoothing_factor",
    "downscale_smoothing_factor",
    "upscaling_factor",
    "downscaling_factor",
    "upscale_delay_s",
    "downscale_delay_s",
    "downscale_to_zero_delay_s",
    "policy",
];
const ACTOR: &[&str] = &[
    "runtime_env",
    "num_cpus",
    "num_gpus",
    "memory",
    "resources",
    "accelerator_type",
    "label_selector",
    "fallback_strategy",
];

/// The Serve config of a RayService `spec` (`None`: none, or one lahar cannot
/// simulate, with why as a left-out warning). Errors go to `ck`.
pub(crate) fn read(ck: &mut Ck<'_>, cx: &mut Context<'_>, d: &Doc, spec: &Node, name: &str) -> Option<Vec<Deployment>> {
    let node = spec.get("serveConfigV2")?;
    let Val::Str(text) = &node.val else { return None };
    // Where the text's line 1, column 1 is in the file: a block scalar's
    // location is its first line of text, its indentation stripped.
    let (line, col) = node.at.unwrap_or((1, 1));
    let docs = match super::yaml::parse_documents(text, &d.file) {
        Ok(docs) => docs,
        Err((at, msg)) => {
            let at = at.map(|(l, c)| (l + line - 1, c + col - 1)).or(node.at);
            ck.err(at, "spec.serveConfigV2", format!("Ray Serve's config is not YAML: {msg}"));
            return None;
        }
    };
    let mut out = Vec::new();
    let mut left_out = |at: At, path: String, why: String| {
        cx.left_out.push(Diagnostic {
            file: d.file.clone(),
            at,
            path: format!("{}: {path}", d.label()),
            message: format!("RayService {name}: {why}"),
        })
    };
    for doc in &docs {
        let mut root = doc.root.clone();
        shift(&mut root, line, col);
        let p = "spec.serveConfigV2";
        super::ck::known_keys(ck, &root, p, TOP);
        if let Some(t) = root.get("target_capacity").filter(|t| t.val != Val::Null) {
            left_out(t.at, join(p, "target_capacity"), "`target_capacity` scales every deployment's replicas during an upgrade, which lahar does not simulate: the deployments keep their full targets".into());
        }
        for (a, app) in ck.seq(&root, "applications", p).iter().enumerate() {
            let ap = format!("{p}.applications[{a}]");
            super::ck::known_keys(ck, app, &ap, APP);
            let app_name = ck.opt_str(app, "name", &ap).unwrap_or_else(|| "default".into());
            if let Some(x) = app.get("autoscaling_policy").filter(|x| x.val != Val::Null) {
                left_out(
                    x.at,
                    join(&ap, "autoscaling_policy"),
                    format!(
                        "application {app_name} sizes its deployments with its own policy (`autoscaling_policy`), code lahar cannot run: they keep Serve's default policy"
                    ),
                );
            }
            let deps = ck.seq(app, "deployments", &ap);
            if deps.is_empty() {
                left_out(
                    app.at,
                    ap.clone(),
                    format!(
                        "application {app_name} lists no deployment: its replicas come from its code (`import_path`), which lahar cannot read, so none is simulated"
                    ),
                );
            }
            for (k, dep) in deps.iter().enumerate() {
                let dp = format!("{ap}.deployments[{k}]");
                if let Some(x) = deployment(ck, dep, &dp, &app_name, &mut left_out) {
                    out.push(x);
                }
            }
        }
    }
    let auto: Vec<&str> = out.iter().filter(|d| matches!(d.sizing, Sizing::Auto(_))).map(|d| d.name.as_str()).collect();
    if auto.len() > 1 {
        let why = format!(
            "Ray Serve autoscales deployments {}; lahar sizes only the one that serves a service's demand (the one `spec.services[].deployment` names, else the only one asking for GPUs): the others keep their initial replicas",
            auto.join(", ")
        );
        left_out(node.at, "spec.serveConfigV2".into(), why);
    }
    Some(out)
}

/// Moves every position of a tree read from the text at (`line`, `col`) of
/// the file to the file's.
fn shift(n: &mut Node, line: u64, col: u64) {
    n.at = n.at.map(|(l, c)| (l + line - 1, c + col - 1));
    match &mut n.val {
        Val::Seq(s) => s.iter_mut().for_each(|x| shift(x, line, col)),
        Val::Map(m) => m.iter_mut().for_each(|(_, x)| shift(x, line, col)),
        _ => {}
    }
}

/// A number ≥ 0 (`> 0` unless `zero_ok`) at `parent.key`.
fn number(ck: &mut Ck<'_>, parent: &Node, key: &str, path: &str, zero_ok: bool) -> Option<f64> {
    let n = parent.get(key).filter(|n| n.val != Val::Null)?;
    let x = match n.val {
        Val::Int(i) => i as f64,
        Val::Float(f) => f,
        _ => f64::NAN,
    };
    if !(x.is_finite() && x <= 1e12 && (x > 0.0 || (zero_ok && x == 0.0))) {
        let lo = if zero_ok { "≥ 0" } else { "> 0" };
        ck.err(
            n.at,
            &join(path, key),
            format!("expected a number {lo}, got {}", n.scalar().unwrap_or_else(|| n.type_name().into())),
        );
        return None;
    }
    Some(x)
}

/// A whole number ≥ `min` at `parent.key`.
fn whole(ck: &mut Ck<'_>, parent: &Node, key: &str, path: &str, min: i64) -> Option<u32> {
    let n = parent.get(key).filter(|n| n.val != Val::Null)?;
    match n.val {
        Val::Int(i) if i >= i128::from(min) && i <= i128::from(u32::MAX) => Some(i as u32),
        _ => {
            let got = n.scalar().unwrap_or_else(|| n.type_name().into());
            ck.err(n.at, &join(path, key), format!("expected a whole number ≥ {min}, got {got}"));
            None
        }
    }
}

fn seconds(x: f64) -> SimDuration {
    SimDuration((x * 1e6).round() as u64)
}

fn deployment(
    ck: &mut Ck<'_>,
    dep: &Node,
    dp: &str,
    app: &str,
    left_out: &mut impl FnMut(At, String, String),
) -> Option<Deployment> {
    super::ck::known_keys(ck, dep, dp, DEPLOYMENT);
    let name = match ck.opt_str(dep, "name", dp) {
        Some(n) => format!("{app}/{n}"),
        None => {
            ck.err(dep.at, &join(dp, "name"), "a Serve deployment needs a `name`");
            return None;
        }
    };
    for (key, what) in [
        ("placement_group_bundles", "places each replica as a placement group of bundles"),
        ("gang_scheduling_config", "starts and stops its replicas in gangs"),
        ("deployment_actors", "runs actors of its own beside its replicas"),
    ] {
        if let Some(x) = dep.get(key).filter(|x| x.val != Val::Null) {
            left_out(
                x.at,
                join(dp, key),
                format!(
                    "deployment {name} {what} (`{key}`), which lahar does not simulate: each replica is one actor of its `ray_actor_options`"
                ),
            );
        }
    }
    let empty = Node { at: dep.at, val: Val::Null };
    let opts = dep.get("ray_actor_options").unwrap_or(&empty);
    let op = join(dp, "ray_actor_options");
    super::ck::known_keys(ck, opts, &op, ACTOR);
    for key in ["resources", "accelerator_type", "label_selector", "fallback_strategy"] {
        if let Some(x) = opts.get(key).filter(|x| x.val != Val::Null) {
            left_out(
                x.at,
                join(&op, key),
                format!(
                    "deployment {name}'s replicas ask for `{key}`, which lahar does not match against the Ray nodes: they are placed by their CPUs, GPUs and memory"
                ),
            );
        }
    }
    let bundle = Bundle {
        cpu_milli: (number(ck, opts, "num_cpus", &op, true).unwrap_or(1.0) * 1000.0).round() as i64,
        gpu_milli: (number(ck, opts, "num_gpus", &op, true).unwrap_or(0.0) * 1000.0).round() as i64,
        memory: number(ck, opts, "memory", &op, true).unwrap_or(0.0).round() as i64,
    };
    let max_ongoing = match dep.get("max_ongoing_requests").filter(|x| x.val != Val::Null) {
        Some(_) => whole(ck, dep, "max_ongoing_requests", dp, 1),
        None => whole(ck, dep, "max_concurrent_queries", dp, 1),
    }
    .unwrap_or(5);
    let per_node = whole(ck, dep, "max_replicas_per_node", dp, 1);
    if per_node.is_some_and(|n| n > 100) {
        ck.err(
            dep.get("max_replicas_per_node").and_then(|n| n.at),
            &join(dp, "max_replicas_per_node"),
            "expected at most 100 (Ray's MAX_REPLICAS_PER_NODE_MAX_VALUE)",
        );
    }
    let auto = dep.get("num_replicas").and_then(Node::scalar).is_some_and(|n| n == "auto");
    let fixed = if auto { None } else { whole(ck, dep, "num_replicas", dp, 1) };
    let config = dep.get("autoscaling_config").filter(|c| c.val != Val::Null);
    let sizing = match (config, fixed) {
        (Some(c), Some(_)) => {
            ck.err(c.at, &join(dp, "autoscaling_config"), "`num_replicas` and `autoscaling_config` cannot both be set (Ray refuses it): give `num_replicas: auto` or leave it out");
            return None;
        }
        (None, _) if !auto => Sizing::Fixed(fixed.unwrap_or(1)),
        (c, _) => {
            let base = if auto { ServeAutoscaling::auto() } else { ServeAutoscaling::default() };
            let a = autoscaling(ck, c.unwrap_or(&empty), &join(dp, "autoscaling_config"), base, &name, left_out)?;
            Sizing::Auto(a)
        }
    };
    Some(Deployment { name, bundle, sizing, max_ongoing, per_node })
}

fn autoscaling(
    ck: &mut Ck<'_>,
    c: &Node,
    cp: &str,
    base: ServeAutoscaling,
    name: &str,
    left_out: &mut impl FnMut(At, String, String),
) -> Option<ServeAutoscaling> {
    super::ck::known_keys(ck, c, cp, AUTOSCALING);
    if let Some(x) = c.get("policy").filter(|x| x.val != Val::Null) {
        left_out(
            x.at,
            join(cp, "policy"),
            format!(
                "deployment {name} is sized by its own policy, code lahar cannot run: it keeps Serve's default policy"
            ),
        );
    }
    let mut a = base;
    a.min = whole(ck, c, "min_replicas", cp, 0).unwrap_or(a.min);
    a.max = whole(ck, c, "max_replicas", cp, 1).unwrap_or(a.max);
    a.initial = whole(ck, c, "initial_replicas", cp, 0);
    let target = match c.get("target_ongoing_requests").filter(|x| x.val != Val::Null) {
        Some(_) => number(ck, c, "target_ongoing_requests", cp, false),
        None => number(ck, c, "target_num_ongoing_requests_per_replica", cp, false),
    };
    if let Some(t) = target {
        a.target_milli = ((t * 1000.0).round() as i64).max(1);
    }
    if let Some(x) = number(ck, c, "metrics_interval_s", cp, false) {
        a.metrics_interval = seconds(x).max(SimDuration(1000));
    }
    if let Some(x) = number(ck, c, "look_back_period_s", cp, false) {
        a.look_back = seconds(x).max(SimDuration(1000));
    }
    if let Some(x) = number(ck, c, "upscale_delay_s", cp, true) {
        a.upscale_delay = seconds(x);
    }
    if let Some(x) = number(ck, c, "downscale_delay_s", cp, true) {
        a.downscale_delay = seconds(x);
    }
    a.downscale_to_zero_delay = number(ck, c, "downscale_to_zero_delay_s", cp, true).map(seconds);
    // upscaling_factor, else upscale_smoothing_factor, else smoothing_factor.
    let ppm = |x: f64| ((x * 1e6).round() as i64).max(1);
    let smoothing = number(ck, c, "smoothing_factor", cp, false).unwrap_or(1.0);
    let up = number(ck, c, "upscaling_factor", cp, false)
        .or(number(ck, c, "upscale_smoothing_factor", cp, false))
        .unwrap_or(smoothing);
    let down = number(ck, c, "downscaling_factor", cp, false)
        .or(number(ck, c, "downscale_smoothing_factor", cp, false))
        .unwrap_or(smoothing);
    (a.up_ppm, a.down_ppm) = (ppm(up), ppm(down));
    if let Some(f) = c.get("aggregation_function").filter(|x| x.val != Val::Null) {
        a.aggregation = match f.scalar().as_deref() {
            Some("mean") => Aggregation::Mean,
            Some("max") => Aggregation::Max,
            Some("min") => Aggregation::Min,
            other => {
                let got = other.unwrap_or("");
                ck.err(
                    f.at,
                    &join(cp, "aggregation_function"),
                    format!("expected `mean`, `max` or `min`, got `{got}`"),
                );
                return None;
            }
        };
    }
    // Ray's `replicas_settings_valid`.
    if a.max < a.min {
        ck.err(c.at, cp, format!("max_replicas ({}) must be at least min_replicas ({})", a.max, a.min));
        return None;
    }
    if let Some(i) = a.initial
        && (i < a.min || i > a.max)
    {
        ck.err(
            c.get("initial_replicas").and_then(|n| n.at),
            &join(cp, "initial_replicas"),
            format!("must be within min_replicas ({}) and max_replicas ({}), got {i}", a.min, a.max),
        );
        return None;
    }
    Some(a)
}

/// The Ray node of a task whose pods ask for `requests`: `rayStartParams`
/// `num-cpus`, `num-gpus` and `memory` where given, else the pod's.
pub(crate) fn node(
    ck: &mut Ck<'_>,
    group: &Node,
    path: &str,
    requests: &lahar_core::model::resource::Resources,
) -> Bundle {
    let mut b = Bundle { cpu_milli: requests.cpu(), gpu_milli: requests.gpu_milli(), memory: requests.memory() };
    let Some(params) = group.get("rayStartParams") else { return b };
    let pp = join(path, "rayStartParams");
    for (key, scale, slot) in [("num-cpus", 1000, 0), ("num-gpus", 1000, 1), ("memory", 1, 2)] {
        let Some(n) = params.get(key).filter(|n| n.val != Val::Null) else { continue };
        let text = n.scalar().unwrap_or_default();
        match text.trim().parse::<f64>() {
            Ok(x) if (0.0..=1e15).contains(&x) => {
                let v = (x * f64::from(scale)).round() as i64;
                match slot {
                    0 => b.cpu_milli = v,
                    1 => b.gpu_milli = v,
                    _ => b.memory = v,
                }
            }
            _ => ck.err(
                n.at,
                &join(&pp, key),
                format!("expected a number ≥ 0 (Ray's `ray start --{key}`), got `{text}`"),
            ),
        }
    }
    b
}

/// KubeRay's in-tree autoscaler of `cluster` (at `cp`): its idle timeout
/// and upscaling mode; the groups are filled in by the caller.
pub(crate) fn autoscaler(ck: &mut Ck<'_>, cluster: &Node, cp: &str) -> RayAutoscaler {
    let mut a =
        RayAutoscaler { groups: Vec::new(), idle_timeout: SimDuration(60_000_000), upscaling_speed: 1000, v2: false };
    let Some(o) = cluster.get("autoscalerOptions") else { return a };
    let op = join(cp, "autoscalerOptions");
    if let Some(t) = ck.opt_count(o, "idleTimeoutSeconds", &op, 0) {
        a.idle_timeout = SimDuration(t as u64 * 1_000_000);
    }
    match ck.opt_str(o, "version", &op).as_deref() {
        None | Some("v1") => {}
        Some("v2") => a.v2 = true,
        Some(other) => {
            let at = o.get("version").and_then(|n| n.at);
            ck.err(at, &join(&op, "version"), format!("expected `v1` or `v2`, got `{other}`"));
        }
    }
    match ck.opt_str(o, "upscalingMode", &op).as_deref() {
        None | Some("Default") | Some("Aggressive") => {}
        Some("Conservative") => a.upscaling_speed = 1,
        Some(other) => {
            let at = o.get("upscalingMode").and_then(|n| n.at);
            ck.err(
                at,
                &join(&op, "upscalingMode"),
                format!("expected `Default`, `Aggressive` or `Conservative`, got `{other}`"),
            );
        }
    }
    a
}

/// Assembles the spec: the deployment whose replicas serve (the only one
/// asking for GPUs, else the only one Serve autoscales, else the only one).
pub(crate) fn spec(
    deployments: Vec<Deployment>,
    nodes: Vec<Bundle>,
    autoscaler: Option<RayAutoscaler>,
) -> RayServeSpec {
    let only = |f: &dyn Fn(&Deployment) -> bool| {
        let v: Vec<usize> = (0..deployments.len()).filter(|&i| f(&deployments[i])).collect();
        (v.len() == 1).then(|| v[0])
    };
    let serving = only(&|d| d.bundle.gpu_milli > 0)
        .or_else(|| only(&|d| matches!(d.sizing, Sizing::Auto(_))))
        .or_else(|| only(&|_| true));
    RayServeSpec { deployments, serving, nodes, autoscaler }
}

/// A worker group `g` (at `path`) for the autoscaler: its task, bounds and
/// own `idleTimeoutSeconds`.
pub(crate) fn group(ck: &mut Ck<'_>, g: &Node, path: &str, task: usize, (min, max): (u32, u32)) -> WorkerGroup {
    let idle_timeout = ck.opt_count(g, "idleTimeoutSeconds", path, 0).map(|t| SimDuration(t as u64 * 1_000_000));
    WorkerGroup { task, min, max, idle_timeout }
}
