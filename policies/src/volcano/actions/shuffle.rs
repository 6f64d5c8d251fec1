//! `shuffle` (Volcano's `actions/shuffle`): every Running pod is offered to the
//! plugins' `VictimTasks` functions (`pdb` is the one lahar runs), and the pods
//! they name are evicted at once. Pods are offered job by job (job creation
//! order), each job's pods in creation order; Volcano walks its maps in random
//! order, which matters only when a budget lets some of the pods go and not
//! others. Without a plugin that names victims, nothing is walked.

use super::super::framework::Framework;
use lahar_core::model::job::{PodId, PodStatus};
use lahar_core::session::Session;

/// Runs the shuffle action.
pub fn run(fw: &Framework, ssn: &mut Session<'_>) {
    ssn.set_action("shuffle");
    if !fw.names_victims() {
        return;
    }
    let running: Vec<PodId> = ssn
        .jobs()
        .flat_map(|j| ssn.job(j).pods.iter().copied())
        .filter(|&p| ssn.pod(p).status == PodStatus::Running)
        .collect();
    let victims = fw.victim_tasks(ssn, &running);
    if victims.is_empty() {
        return;
    }
    let mut stmt = ssn.statement();
    for v in victims {
        ssn.evict(&mut stmt, v, "shuffle").expect("victims are running");
    }
    ssn.commit(stmt);
}
