//! A job's progress: how much of its ideal run time it has done, at what speed,
//! and the arithmetic every part of lahar uses to read or change it.
//!
//! Work is measured in microseconds of run time under ideal placement; speed in
//! parts per million of the ideal speed. The engine credits work with
//! [`work_in`] (rounded down) and schedules a finish with [`wall_time`] (rounded
//! up), so a baseline that predicts an instant from the same two functions
//! agrees with the engine to the microsecond.

use crate::util::time::{SimDuration, SimTime};

/// Full speed, in parts per million of the ideal speed.
pub const FULL_SPEED_PPM: u32 = 1_000_000;

/// Work accounting of a job: work is measured in microseconds of run time under
/// ideal placement; speed is in parts per million of ideal.
#[derive(Clone, Debug, Default)]
pub struct Progress {
    /// Work completed, including work that may be lost at the next stop.
    pub done: u64,
    /// Work saved at the last checkpoint.
    pub checkpointed: u64,
    /// Current speed (ppm), meaningful while running.
    pub speed_ppm: u32,
    /// Running since (last speed change), if running.
    pub since: Option<SimTime>,
    /// Generation of the pending finish event; stale events are dropped.
    pub generation: u64,
    /// Work lost to stops, times GPUs held (GPU·µs of ideal work).
    pub lost_gpu_us: u128,
    /// The part of `lost_gpu_us` lost to failed nodes and GPUs.
    pub lost_to_faults_gpu_us: u128,
    /// Exposed-communication time accumulated (GPU·µs), for effective utilization.
    pub comm_gpu_us: u128,
    /// GPU·µs held while progressing: its work (kept or later lost), its exposed
    /// communication and its pauses. What its pods held beyond this, they held
    /// without progress (a gang waiting for the rest of its pods).
    pub running_gpu_us: u128,
    /// This job's term in the engine's effective-GPU sum (milli-GPU × ppm).
    pub effective_term: i128,
    /// This job's term in the engine's sum of GPUs held by progressing jobs
    /// (milli-GPUs): what its pods held at its last speed change.
    pub running_term: i64,
    /// The milli-GPUs one microsecond of its ideal work stands for: its pods'
    /// (`running_term`), or for an elastic job, whose speed counts its workers
    /// against all of them, every replica's.
    pub work_milli: i64,
    /// An elastic job resized while running makes no progress until then (its
    /// workers' re-rendezvous).
    pub resume_at: Option<SimTime>,
    /// Pods running when it last started or resized (elastic jobs).
    pub workers: u32,
    /// The instant it last started from stopped: workers added in a later
    /// session of that same instant join the start (no resize pause).
    pub started_at: Option<SimTime>,
}

/// Ideal work (µs) done in `elapsed_us` at `speed_ppm`, rounded down.
pub fn work_in(elapsed_us: u64, speed_ppm: u32) -> u64 {
    (elapsed_us as u128 * speed_ppm as u128 / FULL_SPEED_PPM as u128) as u64
}

/// Time (µs) a job needs to do `work_us` of ideal work at `speed_ppm` (clamped
/// to 1..=full speed), rounded up so that [`work_in`] credits at least `work_us`
/// by then.
pub fn wall_time(work_us: u64, speed_ppm: u32) -> u64 {
    let speed = speed_ppm.clamp(1, FULL_SPEED_PPM) as u128;
    let t = (work_us as u128 * FULL_SPEED_PPM as u128).div_ceil(speed);
    t.min(u64::MAX as u128) as u64
}

impl Progress {
    /// Credits the work done since the last speed change at `now`, by a job of
    /// `duration` that checkpoints every `checkpoint`, holding `running_term`
    /// milli-GPUs since: the GPU time not spent on work is counted as exposed
    /// communication, and the last checkpoint moves with the work done.
    pub(crate) fn credit(&mut self, now: SimTime, duration: SimDuration, checkpoint: Option<SimDuration>) {
        let Some(since) = self.since else { return };
        // A resize's pause counts with the time not spent on work.
        let from = self.resume_at.map_or(since, |r| r.max(since)).min(now);
        let paused = from.since(since).micros();
        let elapsed = now.since(from).micros();
        let work = work_in(elapsed, self.speed_ppm);
        self.done = (self.done + work).min(duration.micros());
        let held = (paused + elapsed) as u128 * self.running_term.max(0) as u128;
        let worked = (work as u128 * self.work_milli.max(0) as u128).min(held);
        self.comm_gpu_us += (held - worked) / 1000;
        self.running_gpu_us += held / 1000;
        if let Some(c) = checkpoint.filter(|c| c.micros() > 0) {
            // A save at a suspension may be ahead of the last periodic checkpoint.
            self.checkpointed = self.checkpointed.max(self.done / c.micros() * c.micros());
        }
        self.since = Some(now);
    }

    /// Goes on at `speed` from `now` (a new finish generation): returns the
    /// instant its remaining work of `duration` ends at that speed.
    pub(crate) fn set_speed(&mut self, now: SimTime, speed: u32, duration: SimDuration) -> SimTime {
        self.speed_ppm = speed;
        self.generation += 1;
        let remaining = duration.micros().saturating_sub(self.done);
        let from = self.resume_at.map_or(now, |r| r.max(now));
        SimTime(from.micros().saturating_add(wall_time(remaining, speed)))
    }

    /// Stops (the job was credited first): no finish pending. With `lose`, the
    /// work since the last checkpoint is lost, counted for `gpus` whole GPUs;
    /// returns the work lost.
    pub(crate) fn stop(&mut self, lose: bool, gpus: u128) -> u64 {
        self.since = None;
        self.resume_at = None;
        self.generation += 1;
        if !lose {
            return 0;
        }
        let lost = self.done - self.checkpointed;
        self.done = self.checkpointed;
        self.lost_gpu_us += lost as u128 * gpus;
        lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A finish scheduled with `wall_time` is credited in full by `work_in`, and
    /// one microsecond earlier it is not (for speeds that are not exact divisors).
    #[test]
    fn wall_time_and_work_in_agree() {
        for speed in [1, 3, 300_000, 333_333, 999_999, FULL_SPEED_PPM] {
            for work in [0u64, 1, 10, 7_777, 1_000_000_007] {
                let t = wall_time(work, speed);
                assert!(work_in(t, speed) >= work, "speed {speed} work {work}");
                if t > 0 {
                    assert!(work_in(t - 1, speed) < work, "speed {speed} work {work}");
                }
            }
        }
        // 10 µs at 0.3 speed: 34 µs (33 credit 9.9 → 9).
        assert_eq!(wall_time(10, 300_000), 34);
        assert_eq!(work_in(33, 300_000), 9);
    }
}
