//! Elastic jobs: jobs that run on any number of workers between their
//! minimum and their replicas, faster with more.
//!
//! A job is elastic when its input says so (a compact job's `scaling` or
//! `resizeOverhead`, the `lahar.io/scaling` annotation, a PyTorchJob's
//! `elasticPolicy`, KubeRay's in-tree autoscaling, Spark's dynamic
//! allocation). Its speed is its placement's speed times its scaling curve at
//! the number of pods running; each change of that number while it runs costs
//! a resize overhead (the workers' re-rendezvous), during which it makes no
//! progress. Jobs whose `minAvailable` is below their replicas but that do not
//! declare elasticity run at their placement's speed whatever their size.

use crate::model::progress::FULL_SPEED_PPM;
use crate::util::time::SimDuration;

/// Volcano-style elastic training's re-rendezvous, when the input gives none.
pub const DEFAULT_RESIZE_OVERHEAD: SimDuration = SimDuration(30_000_000);

/// How a job's speed grows with its workers, relative to its speed with all
/// its replicas (its `duration` is its run time with all of them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScalingCurve {
    /// Speed proportional to the workers (perfect data parallelism).
    Linear,
    /// Relative throughput at some worker counts, `(workers, ppm)` with
    /// workers ascending and ppm > 0; linear between points, proportional to
    /// the workers below the first, flat above the last. Normalised so that
    /// all replicas run at full speed.
    Points(Vec<(u32, u32)>),
}

impl ScalingCurve {
    /// Parses `linear` or `K:S, K:S, ...` (workers, relative throughput as a
    /// number > 0), e.g. `1:0.3, 2:0.55, 4:1`.
    pub fn parse(s: &str) -> Result<ScalingCurve, String> {
        let s = s.trim();
        if s == "linear" {
            return Ok(ScalingCurve::Linear);
        }
        let mut points = Vec::new();
        for part in s.split(',') {
            let (k, v) = part.split_once(':').ok_or_else(|| {
                format!("`{}`: expected WORKERS:THROUGHPUT (e.g. `1:0.3, 2:0.55, 4:1`) or `linear`", part.trim())
            })?;
            let k: u32 = k.trim().parse().map_err(|_| format!("`{}`: workers must be a whole number ≥ 1", k.trim()))?;
            let v: f64 =
                v.trim().parse().map_err(|_| format!("`{}`: throughput must be a number above 0", v.trim()))?;
            if k == 0 {
                return Err("workers must be a whole number ≥ 1".into());
            }
            if !(v.is_finite() && v > 0.0 && v <= 1e6) {
                return Err(format!("`{v}`: throughput must be a number above 0"));
            }
            if points.last().is_some_and(|&(last, _)| last >= k) {
                return Err(format!(
                    "worker counts must ascend (`{k}` after `{}`)",
                    points.last().map_or(0, |p: &(u32, u32)| p.0)
                ));
            }
            points.push((k, (v * 1e6).round().max(1.0) as u32));
        }
        Ok(ScalingCurve::Points(points))
    }

    /// Relative throughput (arbitrary unit) at `k` workers.
    fn at(&self, k: u32) -> f64 {
        match self {
            ScalingCurve::Linear => k as f64,
            ScalingCurve::Points(p) => {
                let Some(&(k0, v0)) = p.first() else { return k as f64 };
                if k <= k0 {
                    return v0 as f64 * k as f64 / k0 as f64;
                }
                for w in p.windows(2) {
                    let ((a, va), (b, vb)) = (w[0], w[1]);
                    if k <= b {
                        return va as f64 + (vb as f64 - va as f64) * (k - a) as f64 / (b - a) as f64;
                    }
                }
                p.last().map_or(0.0, |&(_, v)| v as f64)
            }
        }
    }

    /// Speed (ppm of full) with `k` of `n` workers running.
    pub fn speed_ppm(&self, k: u32, n: u32) -> u32 {
        if k >= n || n == 0 {
            return FULL_SPEED_PPM;
        }
        let full = self.at(n);
        if full <= 0.0 {
            return FULL_SPEED_PPM;
        }
        ((self.at(k) / full * FULL_SPEED_PPM as f64).round() as u32).clamp(1, FULL_SPEED_PPM)
    }
}

/// What makes a job elastic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Elastic {
    /// Speed by workers.
    pub curve: ScalingCurve,
    /// Time without progress after each resize while running.
    pub resize_overhead: SimDuration,
}

impl Default for Elastic {
    fn default() -> Self {
        Elastic { curve: ScalingCurve::Linear, resize_overhead: DEFAULT_RESIZE_OVERHEAD }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curves() {
        assert_eq!(ScalingCurve::Linear.speed_ppm(2, 4), 500_000);
        assert_eq!(ScalingCurve::Linear.speed_ppm(4, 4), FULL_SPEED_PPM);
        let c = ScalingCurve::parse("1:0.3, 2:0.55, 4:1").unwrap();
        assert_eq!(c.speed_ppm(1, 4), 300_000);
        assert_eq!(c.speed_ppm(3, 4), 775_000);
        // Normalised to the job's own size: with 2 replicas, 2 is full speed.
        assert_eq!(c.speed_ppm(1, 2), 545_455);
        // Above the last point: flat; below the first: proportional.
        let c = ScalingCurve::parse("2:0.5, 4:1").unwrap();
        assert_eq!(c.speed_ppm(1, 8), 250_000);
        assert_eq!(c.speed_ppm(6, 8), FULL_SPEED_PPM);
        for bad in ["", "1:0", "0:1", "2:1, 1:0.5", "x:1", "1:y", "1"] {
            assert!(ScalingCurve::parse(bad).is_err(), "{bad}");
        }
    }
}
