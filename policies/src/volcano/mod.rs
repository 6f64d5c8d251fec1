//! Volcano's scheduler: actions and plugins configured by a `volcano-scheduler.conf`.

pub mod conf;
