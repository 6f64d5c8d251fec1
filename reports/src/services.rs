//! Services' outputs: services.csv (each service at every sample instant),
//! scaling.csv (each change an autoscaler made) and summary.json's `services`
//! (what each was offered and served; formulas in docs/metrics.md). The files
//! exist only for runs with services, created at their first row.

use crate::pipe::{Csv, csv_at};
use crate::schema::{SCALING, SERVICES, at, header};
use crate::sink::{Dest, Tables};
use crate::summary::{Dist, ServiceSummary, ServingSummary};
use crate::write::push_milli;
use lahar_core::record::{ScaleRecord, ServiceSample, ServiceStats, ServingImpact};
use lahar_core::serving::Unit;
use lahar_core::util::text::{push_i64, push_u64};
use lahar_core::util::time::push_secs;
use std::io;
use std::path::PathBuf;

/// Milli-requests (or milli-tokens) per second × µs in one request (token).
const MILLI_US_PER_REQUEST: f64 = 1e9;

/// summary.json's `services`, in the order the services were bound.
pub fn summarize(stats: &[ServiceStats]) -> Vec<ServiceSummary> {
    stats
        .iter()
        .map(|s| {
            let d = s.has_demand;
            let req = |x: u128| (d && s.unit == Unit::Requests).then_some(x as f64 / MILLI_US_PER_REQUEST);
            let tok = |x: u128| (d && s.unit == Unit::Tokens).then_some(x as f64 / MILLI_US_PER_REQUEST);
            let measured = s.measured_us as f64 / 1e6;
            ServiceSummary {
                service: s.service.to_string(),
                kind: s.kind.to_string(),
                measured_s: measured,
                unit: d.then(|| s.unit.name().to_string()),
                offered_requests: req(s.offered),
                served_requests: req(s.served),
                unserved_requests: req(s.offered - s.served),
                offered_tokens: tok(s.offered),
                served_tokens: tok(s.served),
                unserved_tokens: tok(s.offered - s.served),
                slo_attainment: (d && s.measured_us > 0).then(|| 1.0 - s.short_us as f64 / s.measured_us as f64),
                replica_hours_short: d.then(|| s.replica_short_us as f64 / 3.6e9),
                catch_up_s: Dist::of(s.catch_up_us.iter().map(|&u| u as f64 / 1e6).collect()),
                short_at_end_s: s.open_short_us.map(|u| u as f64 / 1e6),
                scale_ups: s.scale_ups,
                scale_downs: s.scale_downs,
                max_replicas: s.max_replicas,
                pod_starts: s.starts,
            }
        })
        .collect()
}

/// summary.json's `serving`: `None` for a run without services.
pub fn serving(stats: &[ServiceStats], impact: &ServingImpact) -> Option<ServingSummary> {
    if stats.is_empty() {
        return None;
    }
    let with: Vec<&ServiceStats> = stats.iter().filter(|s| s.has_demand).collect();
    // Requests and tokens summed apart, each over the services that count it.
    let sum_of = |unit: Unit, f: fn(&ServiceStats) -> u128| {
        let of: Vec<&&ServiceStats> = with.iter().filter(|s| s.unit == unit).collect();
        (!of.is_empty()).then(|| of.iter().map(|s| f(s)).sum::<u128>() as f64 / MILLI_US_PER_REQUEST)
    };
    let sum = |f: fn(&ServiceStats) -> u128| sum_of(Unit::Requests, f);
    let tokens = |f: fn(&ServiceStats) -> u128| sum_of(Unit::Tokens, f);
    let measured: u128 = with.iter().map(|s| u128::from(s.measured_us)).sum();
    let short: u128 = with.iter().map(|s| u128::from(s.short_us)).sum();
    Some(ServingSummary {
        services: stats.len(),
        offered_requests: sum(|s| s.offered),
        served_requests: sum(|s| s.served),
        unserved_requests: sum(|s| s.offered - s.served),
        offered_tokens: tokens(|s| s.offered),
        served_tokens: tokens(|s| s.served),
        unserved_tokens: tokens(|s| s.offered - s.served),
        slo_attainment: (measured > 0).then(|| 1.0 - short as f64 / measured as f64),
        gpu_hours: impact.gpu_milli_us as f64 / 1000.0 / 3.6e9,
        pods_evicted: impact.pods_evicted,
        batch_pods_evicted: impact.batch_pods_evicted,
        batch_preemptions: impact.batch_preemptions,
        batch_gpu_hours_lost: impact.batch_lost_gpu_us as f64 / 3.6e9,
    })
}

/// Writes services.csv and scaling.csv as their rows come.
pub struct ServiceWriter {
    /// Where the files go: a directory, or memory (`None`).
    dir: Option<PathBuf>,
    services: Option<Csv>,
    scaling: Option<Csv>,
    row: Vec<String>,
    /// Files formatted on the run's thread (see [`crate::RunWriter::format_rows_here`]).
    here: bool,
}

impl ServiceWriter {
    /// A writer of files at `dest`, none created yet.
    pub fn new(dest: Dest) -> ServiceWriter {
        let dir = match dest {
            Dest::Dir(d) => Some(d.to_path_buf()),
            Dest::Memory => None,
        };
        ServiceWriter { dir, services: None, scaling: None, row: vec![String::new(); SERVICES.len()], here: false }
    }

    /// Formats the rows on the run's thread (see [`crate::RunWriter::format_rows_here`]).
    pub(crate) fn format_here(&mut self) {
        self.here = true;
        for w in [&mut self.services, &mut self.scaling].into_iter().flatten() {
            w.format_here();
        }
    }

    fn open(&self, name: &str, header: &[&str]) -> io::Result<Csv> {
        let mut w = csv_at(self.dest(), name, header)?;
        if self.here {
            w.format_here();
        }
        Ok(w)
    }

    fn dest(&self) -> Dest<'_> {
        match &self.dir {
            Some(d) => Dest::Dir(d),
            None => Dest::Memory,
        }
    }

    /// One row of services.csv.
    pub fn sample(&mut self, s: &ServiceSample) -> io::Result<()> {
        if self.services.is_none() {
            self.services = Some(self.open("services.csv", &header(&SERVICES))?);
        }
        let f = &mut self.row;
        for x in f.iter_mut() {
            x.clear();
        }
        const fn c(name: &str) -> usize {
            at(&SERVICES, name)
        }
        push_secs(&mut f[const { c("t_s") }], s.t.micros());
        f[const { c("service") }].push_str(&s.service);
        f[const { c("kind") }].push_str(&s.kind);
        // A service in tokens writes the `_tps` columns, any other the `_rps` ones.
        let (demand, served, capacity) = match s.unit {
            Unit::Requests => (const { c("demand_rps") }, const { c("served_rps") }, const { c("capacity_rps") }),
            Unit::Tokens => (const { c("demand_tps") }, const { c("served_tps") }, const { c("capacity_tps") }),
        };
        if let Some(d) = s.demand_milli {
            push_milli(&mut f[demand], d);
            push_milli(&mut f[served], d.min(s.capacity_milli));
        }
        push_milli(&mut f[capacity], s.capacity_milli);
        push_u64(&mut f[const { c("replicas") }], s.replicas.into());
        push_u64(&mut f[const { c("pending") }], s.pending.into());
        push_u64(&mut f[const { c("starting") }], s.starting.into());
        push_u64(&mut f[const { c("ready") }], s.ready.into());
        push_milli(&mut f[const { c("gpus") }], s.gpu_milli);
        let w = self.services.as_mut().expect("made above");
        w.write_record(&self.row)
    }

    /// One row of scaling.csv.
    pub fn scaled(&mut self, r: &ScaleRecord) -> io::Result<()> {
        if self.scaling.is_none() {
            self.scaling = Some(self.open("scaling.csv", &header(&SCALING))?);
        }
        const fn c(name: &str) -> usize {
            at(&SCALING, name)
        }
        let mut f: [String; SCALING.len()] = Default::default();
        push_secs(&mut f[const { c("t_s") }], r.t.micros());
        f[const { c("autoscaler") }].push_str(&r.autoscaler);
        f[const { c("target") }].push_str(&r.target);
        push_i64(&mut f[const { c("from") }], r.from.into());
        push_i64(&mut f[const { c("to") }], r.to.into());
        push_i64(&mut f[const { c("proposed") }], r.proposed.into());
        f[const { c("reason") }].push_str(&r.reason);
        let w = self.scaling.as_mut().expect("made above");
        w.write_record(&f)
    }

    /// Flushes the files; a run to memory gets their bytes in `tables`.
    pub fn finish(self, tables: &mut Tables) -> io::Result<()> {
        if let Some(w) = self.services {
            tables.add("services.csv", w.close()?);
        }
        if let Some(w) = self.scaling {
            tables.add("scaling.csv", w.close()?);
        }
        Ok(())
    }
}
