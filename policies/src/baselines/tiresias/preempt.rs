//! Tiresias's preemption (rule 4): a gang that does not fit evicts running jobs of
//! strictly lower-priority queues, whole, lowest priority first, and only when its
//! pods then fit. The checks that rule a preemptor out cheaply read one
//! [`VictimView`] per queue level, kept until this scheduler commits a change,
//! and the level's per-node [`Room`], kept between sessions.

use super::Tiresias;
use super::book::Key;
use super::room::Room;
use super::room::copies;
use crate::baselines::gang::{self, Mode};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{JobId, PodId, PodStatus};
use lahar_core::model::resource::Resources;
use lahar_core::session::{Session, Statement};
use std::collections::BTreeSet;

/// What [`Tiresias::preempt_for`]'s checks read of one queue level's victims: the
/// same for every preemptor of that level until a pod moves, which within a session
/// only this scheduler's commits do — a placement is subtracted from it
/// ([`Tiresias::commit_placements`]), a preemption drops it. The exhaustive mode
/// builds it for every preemptor (and prunes nothing: no room).
#[derive(Debug, Clone)]
pub(super) struct VictimView {
    /// The preemptors' queue.
    level: usize,
    /// Running jobs of a lower-priority queue, lowest priority first.
    victims: Vec<(usize, JobId)>,
    /// Every node's future-idle resources summed.
    free: Resources,
    /// What the victims hold.
    held: Resources,
}

impl VictimView {
    /// The view for preemptors of queue `level`, from `running`: the jobs that
    /// had Running pods at their last refresh (a superset of those that have
    /// them now), in order.
    fn of(ssn: &Session<'_>, level: usize, running: &BTreeSet<Key>) -> VictimView {
        let victims: Vec<(usize, JobId)> = running
            .iter()
            .rev()
            .take_while(|k| k.0 > level)
            .filter(|k| ssn.job(k.2).count(PodStatus::Running) > 0)
            .map(|k| (k.0, k.2))
            .collect();
        if victims.is_empty() {
            // No preemptor of this level has anything to evict.
            return VictimView { level, victims, free: Resources::ZERO, held: Resources::ZERO };
        }
        let held = victims.iter().fold(Resources::ZERO, |a, &(_, v)| a + ssn.job(v).allocated);
        let free = match ssn.is_exhaustive() {
            true => (0..ssn.node_count()).fold(Resources::ZERO, |a, n| a + ssn.future_idle(NodeId(n as u32))),
            false => ssn.future_idle_total(),
        };
        VictimView { level, victims, free, held }
    }

    /// This scheduler placed (allocated or pipelined) these pods: the future-idle
    /// total shrinks by their requests; the victims and what they hold stay (a pod
    /// placed in a session is not Running before it ends).
    fn placed(&mut self, ssn: &Session<'_>, pods: &[(PodId, NodeId)]) {
        for &(p, _) in pods {
            self.free -= ssn.pod(p).req;
        }
    }
}

impl Tiresias {
    /// Commits a statement that only places pods, keeping the victims' view.
    pub(super) fn commit_placements(&mut self, ssn: &mut Session<'_>, stmt: Statement) {
        if self.view.is_some() || self.room.is_some() {
            let placed = ssn.placements(&stmt);
            if let Some(view) = &mut self.view {
                view.placed(ssn, &placed);
            }
            if let Some(room) = &mut self.room {
                for &(_, n) in &placed {
                    room.update(ssn, &self.book, n);
                }
            }
        }
        ssn.commit(stmt);
    }

    /// Tries to start `j` (of queue `level`) by evicting running jobs of a strictly
    /// lower-priority queue, lowest priority first. Returns whether it committed.
    pub(super) fn preempt_for(&mut self, ssn: &mut Session<'_>, j: JobId, level: usize) -> bool {
        let mut view = match self.view.take() {
            Some(v) if v.level == level => v,
            _ => VictimView::of(ssn, level, self.book.running()),
        };
        let done = self.preempt_with(ssn, j, level, &mut view);
        // Nothing moves a pod during this scheduler's session but its own commits.
        if !done && !ssn.is_exhaustive() {
            self.view = Some(view);
        }
        done
    }

    /// [`Tiresias::preempt_for`] over the victims of `view`.
    fn preempt_with(&mut self, ssn: &mut Session<'_>, j: JobId, level: usize, view: &mut VictimView) -> bool {
        if view.victims.is_empty() {
            return false;
        }
        // Necessary condition, in every dimension: the smallest pods the gang needs
        // fit in the future-idle resources plus the victims'.
        let job = ssn.job(j);
        let needed = job.spec.min_available.max(1).saturating_sub(job.ready_count()) as usize;
        let reqs: Vec<Resources> = ssn.pending_pods(j).iter().map(|&p| ssn.pod(p).req).collect();
        if reqs.len() < needed {
            return false;
        }
        let want = gang::least(&reqs, needed);
        let free = view.free;
        if !want.fits_in(&(free + view.held)) {
            return false;
        }
        if !ssn.is_exhaustive() && !self.may_fit_without(ssn, j, needed, level) {
            return false;
        }
        let victims = &view.victims;
        ssn.set_action("preempt");
        // Trial: evict lowest priority first until the gang fits on future-idle
        // resources, note the nodes its pods would take, and undo everything
        // (its moves unfiled: nothing here reads the World's lists and journals
        // that a filed move keeps, and the trial is always discarded).
        let mut trial = ssn.unfiled_statement();
        let mut freed = free;
        let mut found: Option<(usize, Vec<NodeId>)> = None;
        for (i, &(vl, v)) in victims.iter().enumerate() {
            freed += ssn.job(v).allocated;
            Self::evict_job(ssn, &mut trial, j, level, v, vl, false);
            // First fit is tried only once the nodes' future-idle room, counted
            // node by node, holds the gang (an upper bound on what it places).
            if !want.fits_in(&freed) || !gang::may_fit_nodes(ssn, j, Mode::Pipeline) {
                continue;
            }
            if let Some(pl) = gang::try_gang_first_fit(ssn, j, Mode::Pipeline) {
                let mut nodes: Vec<NodeId> = ssn
                    .job(j)
                    .pods
                    .iter()
                    .filter(|&&p| ssn.pod(p).status == PodStatus::Pipelined)
                    .filter_map(|&p| ssn.pod(p).node)
                    .collect();
                nodes.sort_unstable();
                nodes.dedup();
                ssn.discard(pl);
                found = Some((i + 1, nodes));
                break;
            }
        }
        ssn.discard(trial);
        let Some((k, nodes)) = found else {
            ssn.set_action("allocate");
            return false;
        };
        // Keep only the victims holding a node the gang takes; if that is not enough
        // (first-fit may then choose other nodes), evict all victims of the trial.
        let kept: Vec<(usize, JobId)> = victims[..k]
            .iter()
            .copied()
            .filter(|&(_, v)| {
                ssn.job(v).pods.iter().any(|&p| {
                    ssn.pod(p).status == PodStatus::Running && ssn.pod(p).node.is_some_and(|n| nodes.contains(&n))
                })
            })
            .collect();
        let done = (kept.len() < k && self.evict_and_pipeline(ssn, j, level, &kept))
            || self.evict_and_pipeline(ssn, j, level, &victims[..k]);
        ssn.set_action("allocate");
        done
    }

    /// Whether `j`'s gang could fit the future-idle resources once every victim's
    /// Running pods are evicted, counted per node: for each task's run of Pending
    /// pods, how many of them each node's room (future-idle resources plus the
    /// victims' pods there) takes, node selector and taints included, GPU devices
    /// not (an upper bound), against what the run must place
    /// ([`gang::run_demands`]). When false, the trial could not place the gang
    /// with every victim evicted either.
    fn may_fit_without(&mut self, ssn: &Session<'_>, j: JobId, needed: usize, level: usize) -> bool {
        let Some(runs) = gang::run_demands(ssn, j, needed as u64) else { return true };
        let room = self.room_of(ssn, level);
        runs.iter().all(|&(p, want)| {
            let pod = ssn.pod(p);
            let req = pod.req;
            // A pod any node may take (no node filter, no taints) counts the same
            // as any other pod of its request: counted once, then kept.
            let anywhere = !ssn.cluster().has_taints() && !ssn.job(j).spec.tasks[pod.task as usize].has_node_filter();
            let fits = match anywhere {
                true => room.copies_held(&req),
                false => (0..room.len())
                    .filter(|&n| ssn.selector_matches(p, NodeId(n as u32)))
                    .map(|n| copies(&room.at(n), &req))
                    .sum(),
            };
            fits >= want
        })
    }

    /// The per-node room for preemptors of queue `level`, up to date: kept
    /// between sessions (built again for another level).
    fn room_of(&mut self, ssn: &Session<'_>, level: usize) -> &mut Room {
        match &mut self.room {
            Some(room) if room.level() == level && room.len() == ssn.node_count() => room.sync(ssn, &self.book),
            _ => self.room = Some(Room::build(ssn, &self.book, level)),
        }
        self.room.as_mut().expect("set above")
    }

    /// Evicts the Running pods of victim `v` (queue `vl`) for job `j` (queue
    /// `level`), each with its reason if `record` (a trial's evictions, always
    /// discarded, are written nowhere).
    fn evict_job(
        ssn: &mut Session<'_>,
        stmt: &mut Statement,
        j: JobId,
        level: usize,
        v: JobId,
        vl: usize,
        record: bool,
    ) {
        let pods: Vec<PodId> =
            ssn.job(v).pods.iter().copied().filter(|&p| ssn.pod(p).status == PodStatus::Running).collect();
        for p in pods {
            let reason = match record {
                true => {
                    let (by, of) = (&ssn.job(j).spec.name, &ssn.job(v).spec.name);
                    format!("tiresias: job {by} (queue {level}) preempts job {of} (queue {vl})").into()
                }
                false => std::borrow::Cow::Borrowed(""),
            };
            // The pod was just checked to be Running.
            let _ = ssn.evict_for(stmt, p, j, reason);
        }
    }

    /// Evicts `victims` and pipelines `j`'s gang; commits both and records the stops if
    /// the gang fits, otherwise undoes everything. Returns whether it committed.
    fn evict_and_pipeline(
        &mut self,
        ssn: &mut Session<'_>,
        j: JobId,
        level: usize,
        victims: &[(usize, JobId)],
    ) -> bool {
        let mut ev = ssn.statement();
        for &(vl, v) in victims {
            Self::evict_job(ssn, &mut ev, j, level, v, vl, true);
        }
        match gang::place_gang_first_fit(ssn, j, Mode::Pipeline) {
            Some(pl) => {
                self.claims.make(j, ssn.placements(&pl));
                ssn.commit(ev);
                ssn.commit(pl);
                if let Some(room) = &mut self.room {
                    room.touch();
                }
                for &(_, v) in victims {
                    self.book.stopped(ssn, v);
                    if self.cfg.suspend {
                        ssn.suspend(v);
                    }
                }
                true
            }
            None => {
                ssn.discard(ev);
                false
            }
        }
    }
}
