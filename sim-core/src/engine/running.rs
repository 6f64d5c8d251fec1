//! The running jobs' progress book: starting, stopping, crediting and
//! re-pricing jobs, and the totals the samples read. The arithmetic itself is
//! [`crate::model::progress`]'s, shared with the baselines.

use super::{Engine, Event};
use crate::model::ids::JobId;
use crate::model::job::JobPhase;
use crate::model::progress::FULL_SPEED_PPM;

impl Engine {
    /// Re-prices the running jobs after the set of running jobs changed (link
    /// sharing): each job whose speed changed is credited at its old speed and goes
    /// on at the new one.
    pub(super) fn reprice(&mut self) {
        self.reprice_due = false;
        // `active` is ordered, so `running` is ascending.
        let running: Vec<JobId> =
            self.world.active.iter().copied().filter(|j| self.world.jobs[*j].is_progressing()).collect();
        for (j, speed) in self.runtime.reprice(&self.world, &running) {
            let speed = speed.clamp(1, FULL_SPEED_PPM);
            let job = &self.world.jobs[j];
            if !job.is_progressing() || job.progress.speed_ppm == speed {
                continue;
            }
            self.credit(j);
            self.set_speed(j, speed);
        }
    }

    /// Sets a progressing job's speed from now on: a new Finish generation at
    /// the time its remaining work ends at that speed, and its term of the
    /// effective-utilization sum.
    pub(super) fn set_speed(&mut self, j: JobId, speed: u32) {
        self.world.job_changed(j);
        let job = &mut self.world.jobs[j];
        let at = job.progress.set_speed(self.now, speed, job.spec.duration);
        let generation = job.progress.generation;
        let held = job.allocated.gpu_milli();
        let work_milli = if job.spec.elastic.is_some() { job.spec.total_gpu_milli() } else { held };
        job.progress.work_milli = work_milli;
        // Never more than it holds (a scaling curve above linear).
        let term = (work_milli as i128 * speed as i128).min(held as i128 * FULL_SPEED_PPM as i128);
        self.effective_milli_ppm += term - std::mem::replace(&mut job.progress.effective_term, term);
        self.running_milli += held - std::mem::replace(&mut job.progress.running_term, held);
        // A job without a run time never finishes by itself.
        if !job.spec.duration.is_unbounded() {
            self.events.push(at, Event::Finish(j, generation));
        }
    }

    /// Starts a runnable job's progress at the speed its placement gives it.
    pub(super) fn start_progress(&mut self, j: JobId) {
        let nodes = self.world.job_nodes(j);
        let mut speed = self.runtime.speed_ppm(&self.world, j, &nodes).clamp(1, FULL_SPEED_PPM);
        if self.speeds.uneven() && !self.runtime.prices_compute(j) {
            let gpus = self.world.jobs[j].allocated.gpu_milli() > 0;
            speed = crate::speed::NodeSpeeds::apply(speed, self.speeds.of(&self.world.cluster, &nodes, gpus));
        }
        let tier = self.world.cluster.topology.highest_tier(&nodes);
        let now = self.now;
        let job = &mut self.world.jobs[j];
        if let Some(e) = &job.spec.elastic {
            // An elastic job runs at its placement's speed scaled by its workers.
            let k = job.count(crate::model::job::PodStatus::Running);
            let scale = e.curve.speed_ppm(k, job.spec.total_replicas());
            speed = ((speed as u64 * scale as u64).div_ceil(FULL_SPEED_PPM as u64) as u32).clamp(1, FULL_SPEED_PPM);
            job.progress.workers = k;
        }
        job.nodes_spanned = nodes.len() as u32;
        job.highest_tier = tier;
        if job.first_start.is_none() {
            job.first_start = Some(now);
        }
        job.phase = JobPhase::Running;
        job.progress.since = Some(now);
        // A stopped job's term is 0 (stop_progress clears it), so set_speed adds the full term.
        self.set_speed(j, speed);
        self.running_jobs += 1;
        self.reprice_due |= self.runtime.coupled();
    }

    /// Credits work done since the last speed change.
    pub(super) fn credit(&mut self, j: JobId) {
        let job = &mut self.world.jobs[j];
        let (duration, ckpt) = (job.spec.duration, job.spec.checkpoint_interval);
        job.progress.credit(self.now, duration, ckpt);
    }

    /// A suspended job saves its work now: what it has done is checkpointed
    /// (a job not progressing has nothing new to save).
    pub(super) fn save_progress(&mut self, j: JobId) {
        if !self.world.jobs.get(j).is_some_and(|job| job.is_progressing()) {
            return;
        }
        self.credit(j);
        let p = &mut self.world.jobs[j].progress;
        p.checkpointed = p.done;
    }

    /// Stops progress; with `lose`, work since the last checkpoint is lost.
    /// Returns the work lost (µs of ideal run time).
    pub(super) fn stop_progress(&mut self, j: JobId, lose: bool) -> u64 {
        if !self.world.jobs[j].is_progressing() {
            return 0;
        }
        self.credit(j);
        self.world.job_changed(j);
        let job = &mut self.world.jobs[j];
        let gpus = job.spec.total_gpus().max(0) as u128;
        let lost = job.progress.stop(lose, gpus);
        // Work a batch job loses to evictions made for a service.
        if lost > 0 && self.serving.hit.binary_search(&j).is_ok() {
            self.stats.serving.batch_lost_gpu_us += lost as u128 * gpus;
        }
        self.effective_milli_ppm -= std::mem::take(&mut job.progress.effective_term);
        self.running_milli -= std::mem::take(&mut job.progress.running_term);
        self.running_jobs -= 1;
        self.reprice_due |= self.runtime.coupled();
        lost
    }
}
