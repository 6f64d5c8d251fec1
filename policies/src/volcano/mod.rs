//! Volcano's scheduler: actions and plugins configured by a `volcano-scheduler.conf`,
//! run once per session as Volcano's `runOnce` does.
//!
//! `docs/volcano.md` lists what each action and plugin does in lahar and where lahar
//! deliberately differs from Volcano.

pub mod actions;
pub mod args;
pub mod conf;
mod explain;
pub mod external;
pub mod framework;
pub mod plugin;
pub mod plugins;
pub mod subjobs;

use actions::allocate::AllocState;
use actions::barred::Barred;
use actions::carry::Carry;
use actions::gang_evict::GangArgs;
use actions::waiting::WaitingOrder;
use conf::{ActionKind, SchedulerConf};
use framework::Framework;
use lahar_core::session::{Scheduler, Session};
use plugin::EvictKind;

/// Volcano's scheduling pipeline.
pub struct Volcano {
    conf: SchedulerConf,
    fw: Framework,
    alloc: AllocState,
    waiting: WaitingOrder,
    /// gangpreempt's and gangreclaim's arguments.
    gang_args: [GangArgs; 2],
    /// preempt's failed searches, kept across sessions.
    carry: Carry,
    /// preempt's barred jobs, kept across sessions.
    barred: Barred,
    /// Check at each session's open that no plugin answers an extension point it
    /// did not declare ([`Framework::undeclared`]); on in debug builds.
    check_hooks: bool,
}

impl Volcano {
    /// A scheduler for a validated conf.
    pub fn new(conf: SchedulerConf) -> Volcano {
        let fw = Framework::new(&conf);
        let gang_args = ["gangpreempt", "gangreclaim"].map(|a| GangArgs::from_conf(conf.configurations.get(a)));
        let carry = Carry::new(&fw);
        Volcano {
            conf,
            fw,
            alloc: AllocState::default(),
            waiting: WaitingOrder::default(),
            gang_args,
            carry,
            barred: Barred::default(),
            check_hooks: cfg!(debug_assertions),
        }
    }
    /// The same scheduler checking every session that no plugin answers an
    /// extension point it did not declare (a panic naming it if one does).
    pub fn check_hooks(mut self, on: bool) -> Volcano {
        self.check_hooks = on;
        self
    }
    /// Volcano's built-in default configuration.
    pub fn default_conf() -> Volcano {
        Volcano::new(conf::parse(conf::DEFAULT_CONF).expect("the built-in conf is valid"))
    }
    /// The configuration.
    pub fn conf(&self) -> &SchedulerConf {
        &self.conf
    }
    /// The plugin framework (for `--explain`).
    pub fn framework(&self) -> &Framework {
        &self.fw
    }
}

impl Scheduler for Volcano {
    fn name(&self) -> &str {
        "volcano"
    }
    fn schedule(&mut self, ssn: &mut Session<'_>) {
        self.fw.open(ssn);
        if self.check_hooks {
            let wrong = self.fw.undeclared(ssn);
            assert!(wrong.is_empty(), "{}", wrong.join("; "));
        }
        let has_enqueue = self.conf.actions.contains(&ActionKind::Enqueue);
        // By index: the actions borrow the scheduler's state, not the conf's list.
        for i in 0..self.conf.actions.len() {
            match self.conf.actions[i] {
                ActionKind::Enqueue => actions::enqueue::run(&mut self.fw, ssn, &mut self.waiting),
                ActionKind::Allocate => actions::allocate::run(&self.fw, ssn, &mut self.alloc, !has_enqueue),
                ActionKind::Backfill => actions::backfill::run(&self.fw, ssn, &mut self.alloc),
                ActionKind::Preempt => actions::preempt::run(&self.fw, ssn, &mut self.carry, &mut self.barred),
                ActionKind::Reclaim => actions::reclaim::run(&self.fw, ssn, &mut self.carry),
                ActionKind::GangPreempt => {
                    actions::gang_evict::run(&self.fw, ssn, EvictKind::GangPreempt, self.gang_args[0])
                }
                ActionKind::Shuffle => actions::shuffle::run(&self.fw, ssn),
                ActionKind::GangReclaim => {
                    actions::gang_evict::run(&self.fw, ssn, EvictKind::GangReclaim, self.gang_args[1])
                }
            }
        }
        self.fw.close(ssn);
    }
    fn marks_unschedulable(&self) -> bool {
        // Every plugin's OnSessionClose runs, whatever its enable flags.
        self.conf.runs_plugin("gang")
    }
    fn admits_pod_groups(&self) -> bool {
        // enqueue admits PodGroups, or allocate does without it.
        true
    }
}
