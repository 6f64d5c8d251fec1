//! Ray Serve on a KubeRay cluster: a RayService's Serve deployments as Ray
//! actors (replicas) on its pods, Serve's controller that sizes a deployment
//! from its ongoing requests (`autoscaling_config`, `num_replicas: auto`), and
//! the spec of KubeRay's in-tree autoscaler that adds worker pods for replicas
//! that find no room and removes idle ones. The engine keeps the state
//! (engine/serving/ray.rs); this module holds the specs and the decisions,
//! which read no engine state.
//!
//! Sources (Ray 2.60, `python/ray/serve/`): `autoscaling_policy.py`
//! (`_core_replica_queue_length_policy`, `_apply_scaling_factors`,
//! `_apply_delay_logic`, `_get_cold_start_scale_up_replicas`), `config.py`
//! (`AutoscalingConfig` defaults), `_private/autoscaling_state.py` (the
//! requests averaged over `look_back_period_s`, bounds applied last);
//! KubeRay's `autoscaling_config.py` and Ray's `resource_demand_scheduler.py`
//! for the autoscaler. docs/model.md, "Ray Serve", says what lahar leaves out.

use crate::util::time::{SimDuration, SimTime};

/// Serve's controller loop (`CONTROL_LOOP_INTERVAL_S` = 0.1 s): decisions are
/// taken on its ticks, at multiples of 100 ms.
pub const CONTROL_LOOP_US: u64 = 100_000;

/// The Ray autoscaler's update interval (`AUTOSCALER_UPDATE_INTERVAL_S` = 5 s).
pub const AUTOSCALER_UPDATE_US: u64 = 5_000_000;

/// At least this many nodes of a type may be launching at once
/// (`AUTOSCALER_UPSCALING_INITIAL_NUM_NODES`).
pub const UPSCALING_INITIAL_NODES: u32 = 5;

/// Ray resources: milli-CPUs, milli-GPUs, bytes of memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bundle {
    /// Milli-CPUs.
    pub cpu_milli: i64,
    /// Milli-GPUs.
    pub gpu_milli: i64,
    /// Bytes of memory.
    pub memory: i64,
}

impl Bundle {
    /// Whether `need` fits in `self`.
    pub fn fits(&self, need: &Bundle) -> bool {
        need.cpu_milli <= self.cpu_milli && need.gpu_milli <= self.gpu_milli && need.memory <= self.memory
    }

    /// `self` less `other`.
    pub fn minus(&self, o: &Bundle) -> Bundle {
        Bundle {
            cpu_milli: self.cpu_milli - o.cpu_milli,
            gpu_milli: self.gpu_milli - o.gpu_milli,
            memory: self.memory - o.memory,
        }
    }

    /// `self` plus `other`.
    pub fn plus(&self, o: &Bundle) -> Bundle {
        Bundle {
            cpu_milli: self.cpu_milli + o.cpu_milli,
            gpu_milli: self.gpu_milli + o.gpu_milli,
            memory: self.memory + o.memory,
        }
    }
}

/// How Serve's controller aggregates the requests over its look-back window
/// (`aggregation_function`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Aggregation {
    /// The time-weighted mean (the default).
    #[default]
    Mean,
    /// The highest value.
    Max,
    /// The lowest value.
    Min,
}

/// A deployment's `autoscaling_config` with Ray's defaults applied.
#[derive(Clone, Debug, PartialEq)]
pub struct ServeAutoscaling {
    /// `min_replicas` (default 1).
    pub min: u32,
    /// `max_replicas` (default 1; 100 for `num_replicas: auto`).
    pub max: u32,
    /// `initial_replicas`: the first target (default `min_replicas`).
    pub initial: Option<u32>,
    /// `target_ongoing_requests` in milli-requests (default 2).
    pub target_milli: i64,
    /// `metrics_interval_s` (default 10 s): how often the handles push.
    pub metrics_interval: SimDuration,
    /// `look_back_period_s` (default 30 s): the window aggregated.
    pub look_back: SimDuration,
    /// `aggregation_function` (default mean).
    pub aggregation: Aggregation,
    /// `upscale_delay_s` (default 30 s).
    pub upscale_delay: SimDuration,
    /// `downscale_delay_s` (default 600 s).
    pub downscale_delay: SimDuration,
    /// `downscale_to_zero_delay_s` (default: `downscale_delay_s`).
    pub downscale_to_zero_delay: Option<SimDuration>,
    /// `upscaling_factor` (else `upscale_smoothing_factor`, else
    /// `smoothing_factor`, default 1) in parts per million.
    pub up_ppm: i64,
    /// `downscaling_factor` (likewise) in parts per million.
    pub down_ppm: i64,
}

impl Default for ServeAutoscaling {
    /// `AutoscalingConfig()`'s defaults.
    fn default() -> Self {
        ServeAutoscaling {
            min: 1,
            max: 1,
            initial: None,
            target_milli: 2000,
            metrics_interval: SimDuration(10_000_000),
            look_back: SimDuration(30_000_000),
            aggregation: Aggregation::Mean,
            upscale_delay: SimDuration(30_000_000),
            downscale_delay: SimDuration(600_000_000),
            downscale_to_zero_delay: None,
            up_ppm: 1_000_000,
            down_ppm: 1_000_000,
        }
    }
}

impl ServeAutoscaling {
    /// `num_replicas: auto`: `AutoscalingConfig.default()` (min 1, max 100,
    /// target 2), which the fields the user gives override.
    pub fn auto() -> Self {
        ServeAutoscaling { max: 100, ..Default::default() }
    }
}

/// How many replicas a deployment has.
#[derive(Clone, Debug, PartialEq)]
pub enum Sizing {
    /// `num_replicas: N` (default 1).
    Fixed(u32),
    /// Sized by Serve's controller.
    Auto(ServeAutoscaling),
}

/// One Serve deployment.
#[derive(Clone, Debug, PartialEq)]
pub struct Deployment {
    /// `application/deployment`.
    pub name: String,
    /// What one replica actor asks of a Ray node (`ray_actor_options`:
    /// `num_cpus` default 1, `num_gpus` default 0, `memory` default 0).
    pub bundle: Bundle,
    /// Its replicas.
    pub sizing: Sizing,
    /// `max_ongoing_requests` (default 5).
    pub max_ongoing: u32,
    /// `max_replicas_per_node` (`None`: no limit).
    pub per_node: Option<u32>,
}

/// A worker group as the Ray autoscaler sees it (a node type).
#[derive(Clone, Debug, PartialEq)]
pub struct WorkerGroup {
    /// The job's task of this group's pods.
    pub task: usize,
    /// `minReplicas × numOfHosts`.
    pub min: u32,
    /// `maxReplicas × numOfHosts`.
    pub max: u32,
    /// The group's own `idleTimeoutSeconds` (autoscaler v2 only).
    pub idle_timeout: Option<SimDuration>,
}

/// KubeRay's in-tree autoscaler (`enableInTreeAutoscaling: true`).
#[derive(Clone, Debug, PartialEq)]
pub struct RayAutoscaler {
    /// The worker groups it sizes, in the spec's order.
    pub groups: Vec<WorkerGroup>,
    /// `autoscalerOptions.idleTimeoutSeconds` (default 60 s).
    pub idle_timeout: SimDuration,
    /// `upscalingMode`: `Conservative` is 1, `Default` and `Aggressive`
    /// 1000 (`upscaling_speed`).
    pub upscaling_speed: u32,
    /// `autoscalerOptions.version: v2`: Ray's autoscaler v2 (at most 10
    /// workers of a group launching, groups' own idle timeouts).
    pub v2: bool,
}

/// At most this many workers of a group launching at once under autoscaler
/// v2 (`AUTOSCALER_MAX_CONCURRENT_LAUNCHES`).
pub const V2_MAX_CONCURRENT_LAUNCHES: u32 = 10;

impl RayAutoscaler {
    /// How long a worker of task `task` may idle before it is removed.
    pub fn idle_timeout_of(&self, task: usize) -> SimDuration {
        let own = self.groups.iter().find(|g| g.task == task).and_then(|g| g.idle_timeout);
        if self.v2 { own.unwrap_or(self.idle_timeout) } else { self.idle_timeout }
    }

    /// Whether one more worker of a group may launch now, with `launching`
    /// of its workers launching, `running` running and `adding` decided this
    /// update: v1, while the launching stay below max(5, speed × running);
    /// v2, while this update's launches stay below min(10 − launching,
    /// max(1, speed × running)) (running counted at least 1).
    pub fn may_launch(&self, launching: u32, running: u32, adding: u32) -> bool {
        let scaled = self.upscaling_speed.saturating_mul(running.max(1));
        if self.v2 {
            adding < V2_MAX_CONCURRENT_LAUNCHES.saturating_sub(launching).min(scaled.max(1))
        } else {
            launching + adding < scaled.max(UPSCALING_INITIAL_NODES)
        }
    }
}

/// A RayService's Serve applications on its cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct RayServeSpec {
    /// Every deployment of every application, in the config's order.
    pub deployments: Vec<Deployment>,
    /// The deployment whose replicas serve the service's demand (the only one
    /// asking for GPUs, else the only one Serve autoscales, else the only
    /// one; `spec.services[].deployment` names another).
    pub serving: Option<usize>,
    /// Each task's Ray node resources (`rayStartParams` `num-cpus`, `num-gpus`,
    /// `memory`, else the pod's requests), by task index (0: the head).
    pub nodes: Vec<Bundle>,
    /// The in-tree autoscaler, if the cluster enables it.
    pub autoscaler: Option<RayAutoscaler>,
}

impl RayServeSpec {
    /// The deployment named `name` (`application/deployment`, or the
    /// deployment alone when no other application has one of that name).
    pub fn find(&self, name: &str) -> Result<usize, String> {
        if let Some(i) = self.deployments.iter().position(|d| d.name == name) {
            return Ok(i);
        }
        let tail: Vec<usize> = (0..self.deployments.len())
            .filter(|&i| self.deployments[i].name.rsplit_once('/').is_some_and(|(_, d)| d == name))
            .collect();
        match tail.as_slice() {
            [i] => Ok(*i),
            _ => {
                let all: Vec<&str> = self.deployments.iter().map(|d| d.name.as_str()).collect();
                Err(format!("expected one of its Serve deployments ({}), got `{name}`", all.join(", ")))
            }
        }
    }
}

/// Which way a pending decision goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dir {
    Up,
    Down,
}

/// Serve's controller state for one autoscaled deployment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Controller {
    /// The deployment's target replicas.
    pub target: u32,
    /// Since when the policy has wanted to move the target one way
    /// (`__decision_timestamp`), if it does.
    since: Option<(Dir, SimTime)>,
}

/// A change of a deployment's target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// The new target.
    pub to: u32,
    /// What the policy proposed before the delays.
    pub proposed: u32,
    /// Why.
    pub reason: String,
}

/// `ceil(a / b)` for `b > 0`.
fn div_ceil(a: i128, b: i128) -> i128 {
    a.div_euclid(b) + i128::from(a.rem_euclid(b) != 0)
}

impl Controller {
    /// The controller of a deployment first deployed: `initial_replicas`, else
    /// `min_replicas`, within the bounds.
    pub fn new(cfg: &ServeAutoscaling) -> Controller {
        Controller { target: cfg.initial.unwrap_or(cfg.min).clamp(cfg.min, cfg.max), since: None }
    }

    /// The replicas the policy proposes with `total_milli` ongoing requests
    /// (milli-requests) over `running` running replicas, before the delays
    /// (`None`: no running replica and no request, the target stays).
    pub fn propose(cfg: &ServeAutoscaling, total_milli: i64, running: u32) -> Option<u32> {
        if running == 0 {
            return None;
        }
        // desired = total / target_ongoing (a ratio); scaled = ceil(running +
        // factor × (desired − running)), in integers: everything × target × 1e6.
        let (t, r) = (i128::from(cfg.target_milli.max(1)), i128::from(running));
        let total = i128::from(total_milli.max(0));
        let up = total > r * t;
        let f = i128::from(if up { cfg.up_ppm } else { cfg.down_ppm });
        let mut scaled = div_ceil(r * t * 1_000_000 + f * (total - r * t), t * 1_000_000).max(0);
        // A small factor cannot stall a scale-down.
        if div_ceil(total, t) < r && scaled == r {
            scaled -= 1;
        }
        Some(scaled.min(i128::from(u32::MAX)) as u32)
    }

    /// One tick of the control loop at `now`: the policy with its delays
    /// (decision timestamps as Serve 2.60 keeps them), then the bounds.
    /// Returns the change of target, if any.
    pub fn tick(&mut self, cfg: &ServeAutoscaling, now: SimTime, total_milli: i64, running: u32) -> Option<Decision> {
        let bounded = |n: u32| n.clamp(cfg.min, cfg.max);
        if running == 0 {
            // With no replica running Serve skips its delays (timestamps kept);
            // a target of 0 with no request is where it wants to be.
            if total_milli <= 0 {
                if self.target == 0 {
                    self.since = None;
                }
                return None;
            }
            // Cold start: at once, `max(ceil(1 × upscaling_factor), target)`.
            let cold = div_ceil(i128::from(cfg.up_ppm), 1_000_000).min(i128::from(u32::MAX)) as u32;
            let to = bounded(cold.max(self.target));
            return (to != self.target).then(|| self.set(to, cold, "cold start: requests and no running replica"));
        }
        let proposed = Controller::propose(cfg, total_milli, running).unwrap_or(self.target);
        let (dir, desired, delay) = if proposed > self.target {
            (Dir::Up, proposed, cfg.upscale_delay)
        } else if proposed < self.target {
            match self.target {
                1 => (Dir::Down, proposed, cfg.downscale_to_zero_delay.unwrap_or(cfg.downscale_delay)),
                _ => (Dir::Down, proposed.max(1), cfg.downscale_delay),
            }
        } else {
            self.since = None;
            return None;
        };
        let since = match self.since {
            Some((d, s)) if d == dir => s,
            _ => {
                self.since = Some((dir, now));
                now
            }
        };
        if now.micros() - since.micros() < delay.micros() {
            return None;
        }
        self.since = None;
        let to = bounded(desired);
        let why = match dir {
            Dir::Up => "ongoing requests above target",
            Dir::Down => "ongoing requests below target",
        };
        (to != self.target).then(|| self.set(to, proposed, why))
    }

    fn set(&mut self, to: u32, proposed: u32, why: &str) -> Decision {
        self.target = to;
        Decision { to, proposed, reason: why.to_string() }
    }

    /// When a decision pending now would be taken if nothing changes: the
    /// first tick at or after its delay (`None`: none is pending).
    pub fn due(&self, cfg: &ServeAutoscaling) -> Option<SimTime> {
        let (dir, since) = self.since?;
        let delay = match dir {
            Dir::Up => cfg.upscale_delay,
            Dir::Down if self.target == 1 => cfg.downscale_to_zero_delay.unwrap_or(cfg.downscale_delay),
            Dir::Down => cfg.downscale_delay,
        };
        Some(next_tick(since.plus(delay)))
    }
}

/// The first control-loop tick at or after `t`.
pub fn next_tick(t: SimTime) -> SimTime {
    SimTime(t.micros().div_ceil(CONTROL_LOOP_US).saturating_mul(CONTROL_LOOP_US))
}

/// Requests in flight and queued (milli-requests) when `rate` milli-requests
/// per second are offered to replicas that each serve `capacity` per second
/// with `max_ongoing` in flight: Little's law, a request spending
/// `max_ongoing / capacity` seconds in the system.
pub fn ongoing_milli(rate: i64, max_ongoing: u32, capacity: i64) -> i64 {
    let v = i128::from(rate.max(0)) * i128::from(max_ongoing) * 1000 / i128::from(capacity.max(1));
    v.min(i128::from(i64::MAX)) as i64
}

/// The ongoing requests the controller reads at a push at `at`: the
/// aggregate over the look-back window `[max(from, at − look_back), at]` of
/// [`ongoing_milli`] under `demand` (a window of no length: the value at `at`).
pub fn aggregate(
    cfg: &ServeAutoscaling,
    demand: &super::demand::Demand,
    from: SimTime,
    at: SimTime,
    max_ongoing: u32,
    capacity: i64,
) -> i64 {
    let start = SimTime(at.micros().saturating_sub(cfg.look_back.micros()).max(from.micros()));
    if start >= at {
        return ongoing_milli(demand.at(at).0, max_ongoing, capacity);
    }
    let (mut sum, mut hi, mut lo) = (0u128, i64::MIN, i64::MAX);
    demand.pieces(start, at, |a, b, rate| {
        sum += rate.max(0) as u128 * u128::from(b.micros() - a.micros());
        hi = hi.max(rate);
        lo = lo.min(rate);
    });
    let rate = match cfg.aggregation {
        Aggregation::Mean => (sum / u128::from(at.micros() - start.micros())) as i64,
        Aggregation::Max => hi,
        Aggregation::Min => lo,
    };
    ongoing_milli(rate, max_ongoing, capacity)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serving::demand::Demand;

    fn s(x: u64) -> SimTime {
        SimTime(x * 1_000_000)
    }

    #[test]
    fn proposes_total_over_target_smoothed() {
        let cfg = ServeAutoscaling { max: 10, ..Default::default() };
        // 9 requests over target 2: ceil(4.5) = 5, whatever is running.
        assert_eq!(Controller::propose(&cfg, 9000, 1), Some(5));
        assert_eq!(Controller::propose(&cfg, 9000, 7), Some(5));
        // Exactly on target: stays.
        assert_eq!(Controller::propose(&cfg, 8000, 4), Some(4));
        // Factor 0.5 from 2 running toward 5: ceil(2 + 0.5 × 3) = 4.
        let half = ServeAutoscaling { up_ppm: 500_000, down_ppm: 100_000, ..cfg.clone() };
        assert_eq!(Controller::propose(&half, 10_000, 2), Some(4));
        // Down with factor 0.1 from 4 toward 1: ceil(4 − 0.3) = 4, which a
        // scale-down may not stall: 3.
        assert_eq!(Controller::propose(&half, 2000, 4), Some(3));
        assert_eq!(Controller::propose(&half, 2000, 0), None);
    }

    #[test]
    fn delays_count_from_the_first_tick_that_wanted_it() {
        let cfg = ServeAutoscaling { max: 10, ..Default::default() };
        let mut c = Controller::new(&cfg);
        assert_eq!(c.target, 1);
        // 6 ongoing over 1 running: 3 wanted from t=10 s; taken at 40 s.
        assert_eq!(c.tick(&cfg, s(10), 6000, 1), None);
        assert_eq!(c.due(&cfg), Some(s(40)));
        assert_eq!(c.tick(&cfg, SimTime(39_900_000), 6000, 1), None);
        let d = c.tick(&cfg, s(40), 6000, 1).unwrap();
        assert_eq!((d.to, d.proposed), (3, 3));
        // A flip of direction restarts the clock; down waits 600 s.
        assert_eq!(c.tick(&cfg, s(50), 1000, 3), None);
        assert_eq!(c.tick(&cfg, s(60), 9000, 3), None);
        assert_eq!(c.tick(&cfg, s(61), 1000, 3), None);
        assert_eq!(c.due(&cfg), Some(s(661)));
        assert_eq!(c.tick(&cfg, s(660), 1000, 3), None);
        assert_eq!(c.tick(&cfg, s(661), 1000, 3).unwrap().to, 1);
        // Equal: nothing pending.
        assert_eq!(c.tick(&cfg, s(700), 2000, 1), None);
        assert_eq!(c.due(&cfg), None);
    }

    #[test]
    fn zero_only_from_one_and_cold_start_at_once() {
        let cfg = ServeAutoscaling {
            min: 0,
            max: 10,
            downscale_to_zero_delay: Some(SimDuration(5_000_000)),
            ..Default::default()
        };
        let mut c = Controller { target: 3, since: None };
        // From 3 with no requests: to 1 (never 3 → 0) after 600 s...
        assert_eq!(c.tick(&cfg, s(0), 0, 3), None);
        assert_eq!(c.tick(&cfg, s(600), 0, 3).unwrap().to, 1);
        // ...then 1 → 0 after downscale_to_zero_delay_s.
        assert_eq!(c.tick(&cfg, s(601), 0, 1), None);
        assert_eq!(c.tick(&cfg, s(606), 0, 1).unwrap().to, 0);
        // No replica running and a request: 1 at once.
        assert_eq!(c.tick(&cfg, s(700), 0, 0), None);
        assert_eq!(c.tick(&cfg, s(701), 1, 0).unwrap().to, 1);
        // Bounds last: max 10 even when 40 are wanted.
        let mut c = Controller { target: 2, since: None };
        c.tick(&cfg, s(0), 80_000, 2);
        assert_eq!(
            c.tick(&cfg, s(30), 80_000, 2).unwrap(),
            Decision { to: 10, proposed: 40, reason: "ongoing requests above target".into() }
        );
    }

    /// Every tick decides alike between changes of the controller's input
    /// (requests, running replicas, its own target), so running the first tick
    /// after each change and the tick a pending decision is due at — what the
    /// engine does — takes the same decisions at the same instants as running
    /// every 100 ms tick. `skip_after_decision` leaves out the tick after a
    /// decision (a new target is new input) to show the property can fail.
    fn compare(cfg: &ServeAutoscaling, changes: &[(u64, i64, u32)], skip_after_decision: bool) -> bool {
        let end = changes.iter().map(|c| c.0).max().unwrap_or(0) + 2_000_000_000;
        let input = |t: u64| changes.iter().rev().find(|c| c.0 <= t).map_or((0, 0), |c| (c.1, c.2));
        // Every tick.
        let mut every = Vec::new();
        let mut c = Controller::new(cfg);
        let mut t = 0;
        while t <= end {
            let (m, r) = input(t);
            if let Some(d) = c.tick(cfg, SimTime(t), m, r) {
                every.push((t, d.to));
            }
            t += CONTROL_LOOP_US;
        }
        // Event by event.
        let mut events = Vec::new();
        let mut c = Controller::new(cfg);
        let mut fresh = true;
        let mut now = 0u64;
        loop {
            let mut next: Option<u64> = None;
            let mut at = |x: u64| {
                if x >= now && x <= end {
                    next = Some(next.map_or(x, |n| n.min(x)));
                }
            };
            if fresh {
                at(now);
            }
            if let Some(d) = c.due(cfg) {
                at(d.micros());
            }
            if let Some(ch) = changes.iter().map(|c| next_tick(SimTime(c.0)).micros()).filter(|&x| x >= now).min() {
                at(ch);
            }
            let Some(t) = next else { break };
            let (m, r) = input(t);
            fresh = false;
            if let Some(d) = c.tick(cfg, SimTime(t), m, r) {
                events.push((t, d.to));
                fresh = !skip_after_decision;
            }
            now = t + CONTROL_LOOP_US;
        }
        every == events
    }

    proptest::proptest! {
        #[test]
        fn ticking_on_changes_decides_as_every_tick(
            min in 0u32..3, span in 0u32..6, initial in proptest::option::of(0u32..3),
            up_s in 0u64..40, down_s in 0u64..40, zero_s in proptest::option::of(0u64..40),
            up_ppm in 100_000i64..2_000_000, down_ppm in 100_000i64..2_000_000,
            changes in proptest::collection::vec((0u64..600_000_000, 0i64..30_000, 0u32..8), 1..12),
        ) {
            let cfg = ServeAutoscaling {
                min, max: (min + span).max(1), initial: initial.map(|i| i.clamp(min, (min + span).max(1))),
                upscale_delay: SimDuration(up_s * 1_000_000), downscale_delay: SimDuration(down_s * 1_000_000),
                downscale_to_zero_delay: zero_s.map(|z| SimDuration(z * 1_000_000)),
                up_ppm, down_ppm, ..Default::default()
            };
            proptest::prop_assert!(compare(&cfg, &changes, false));
        }
    }

    /// The property is able to fail: without the tick after a decision, a
    /// 3 → 1 step's 1 → 0 that follows is never taken.
    #[test]
    fn skipping_the_tick_after_a_decision_is_caught() {
        let cfg = ServeAutoscaling { min: 0, max: 5, downscale_delay: SimDuration(10_000_000), ..Default::default() };
        let changes = [(0, 0, 3)];
        let mut c = Controller { target: 3, since: None };
        assert_eq!(c.tick(&cfg, SimTime(0), 0, 3), None);
        assert!(compare(&ServeAutoscaling { initial: Some(3), ..cfg.clone() }, &changes, false));
        assert!(!compare(&ServeAutoscaling { initial: Some(3), ..cfg }, &changes, true));
    }

    /// Ray's launch limits: v1 keeps fewer than max(5, speed × running)
    /// launching; v2 launches fewer than min(10 − launching, max(1, speed ×
    /// running)) in one update.
    #[test]
    fn launch_limits_of_v1_and_v2() {
        let mut a =
            RayAutoscaler { groups: Vec::new(), idle_timeout: SimDuration(60_000_000), upscaling_speed: 1, v2: false };
        // v1, speed 1, 2 running: 5 may be launching at once.
        assert!(a.may_launch(3, 2, 1) && !a.may_launch(3, 2, 2));
        // v1, speed 1, 8 running: 8.
        assert!(a.may_launch(0, 8, 7) && !a.may_launch(0, 8, 8));
        a.v2 = true;
        // v2, speed 1, 2 running: 2 an update; 10 launching at most.
        assert!(a.may_launch(0, 2, 1) && !a.may_launch(0, 2, 2));
        a.upscaling_speed = 1000;
        assert!(a.may_launch(7, 2, 2) && !a.may_launch(7, 2, 3));
    }

    #[test]
    fn requests_follow_littles_law_over_the_window() {
        let cfg = ServeAutoscaling::default();
        // 10 req/s to replicas serving 5 req/s at 5 in flight: 10 ongoing.
        assert_eq!(ongoing_milli(10_000, 5, 5000), 10_000);
        // 0 for 20 s then 30 req/s for 10 s: a mean of 10 req/s over 30 s.
        let d = Demand::Steps(vec![(s(20), 30_000)]);
        assert_eq!(aggregate(&cfg, &d, s(0), s(30), 5, 5000), 10_000);
        let max = ServeAutoscaling { aggregation: Aggregation::Max, ..cfg.clone() };
        assert_eq!(aggregate(&max, &d, s(0), s(30), 5, 5000), 30_000);
        // The window starts no earlier than the deployment.
        assert_eq!(aggregate(&cfg, &d, s(25), s(30), 5, 5000), 30_000);
        assert_eq!(next_tick(SimTime(1)), SimTime(100_000));
        assert_eq!(next_tick(s(3)), s(3));
    }
}
