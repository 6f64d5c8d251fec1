//! `lahar nccl`: the collective cost model as tables users can hold against their
//! own nccl-tests runs, and a batch evaluator for rows in the calibration format.

use crate::scenario::{Diagnostic, ScenarioError};
use lahar_core::comm::{AlgoChoice, Collective, CommModel, Estimate, IntraLink, NetFabric, Placement, RowInput};
use std::io::Write;
use std::path::Path;

/// A placement described on the command line.
#[derive(Clone, Debug)]
pub struct TableArgs {
    /// GPU model (e.g. `H100`, `A100-SXM4-80GB`).
    pub gpu: String,
    /// Intra-node link (`nvswitch-nvlink4`, `pcie-gen5`...).
    pub intra: String,
    /// GPUs of the job on each node.
    pub gpus_per_node: u32,
    /// Nodes.
    pub nodes: u32,
    /// NIC line rate per GPU, Gbit/s.
    pub nic_gbps_per_gpu: f64,
    /// Network fabric (`ib`, `roce`, `efa`, `efa-v4`, `tcpxo`).
    pub net: String,
    /// Collective.
    pub collective: String,
    /// `auto` or a forced algorithm.
    pub algo: String,
    /// Smallest message (bytes).
    pub min_bytes: u64,
    /// Largest message (bytes).
    pub max_bytes: u64,
    /// Size step factor.
    pub factor: u64,
    /// Highest switch tier crossed (0 = within a leaf).
    pub tier: u32,
    /// Oversubscription of that tier.
    pub oversubscription: f64,
}

fn arg_error(path: &str, e: impl std::fmt::Display) -> ScenarioError {
    ScenarioError::one("<command line>", None, path, e.to_string())
}

/// Parses a message size: an integer with an optional `K`, `M`, `G` suffix (powers
/// of 1024, as nccl-tests' `-b`/`-e` flags).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, 'K' | 'k')) => (&t[..i], 1u64 << 10),
        Some((i, 'M' | 'm')) => (&t[..i], 1 << 20),
        Some((i, 'G' | 'g')) => (&t[..i], 1 << 30),
        _ => (t, 1),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| format!("bad size `{s}`: expected an integer with an optional K, M or G suffix"))
}

/// The nccl-tests-like table for a placement.
pub fn table(model: &CommModel, a: &TableArgs) -> Result<String, ScenarioError> {
    let generation = model.constants().gpu_gen(&a.gpu).map_err(|e| arg_error("--gpu", e))?;
    let intra = IntraLink::parse(&a.intra).map_err(|e| arg_error("--intra", e))?;
    let net = NetFabric::parse(&a.net).map_err(|e| arg_error("--net", e))?;
    let coll = Collective::parse(&a.collective).map_err(|e| arg_error("--collective", e))?;
    let choice = AlgoChoice::parse(&a.algo).map_err(|e| arg_error("--algo", e))?;
    // The placement's own sizes, named as the user gave them (not as a sweep error).
    if a.nodes == 0 {
        return Err(arg_error("--nodes", "must be at least 1"));
    }
    if a.gpus_per_node == 0 {
        return Err(arg_error("--gpus-per-node", "must be at least 1"));
    }
    // Each number is checked under its own flag's name (a NaN would otherwise
    // surface as an invalid placement blamed on the message sizes).
    if !(a.nic_gbps_per_gpu.is_finite() && a.nic_gbps_per_gpu > 0.0) {
        return Err(arg_error("--nic-gbps", format!("expected a finite number above 0, got {}", a.nic_gbps_per_gpu)));
    }
    if !(a.oversubscription.is_finite() && a.oversubscription >= 1.0) {
        return Err(arg_error(
            "--oversubscription",
            format!("expected a finite number of at least 1 (1 is 1:1), got {}", a.oversubscription),
        ));
    }
    let p = Placement::uniform(generation, intra, a.gpus_per_node, a.nodes, a.nic_gbps_per_gpu, net)
        .crossing(a.tier, a.oversubscription);
    let rows = model
        .sweep(coll, &p, choice, a.min_bytes, a.max_bytes, a.factor)
        .map_err(|e| arg_error("--min-bytes/--max-bytes/--factor", e))?;
    let mut out = format!(
        "# lahar nccl: {} on {} x {} GPUs ({}, {}, {} Gb/s NIC per GPU, {}), tier {} oversubscription {}\n",
        coll.as_str(),
        a.nodes,
        a.gpus_per_node,
        a.gpu,
        intra.as_str(),
        a.nic_gbps_per_gpu,
        net.as_str(),
        a.tier,
        a.oversubscription
    );
    out += &format!(
        "{:>12} {:>12} {:>10} {:>10}  {:<9} {:<6}\n",
        "size(B)", "time(us)", "algbw", "busbw", "algo", "proto"
    );
    for e in rows {
        out += &format!(
            "{:>12} {:>12.2} {:>10.2} {:>10.2}  {:<9} {:<6}\n",
            e.bytes,
            e.time_us,
            e.algbw_gbps,
            e.busbw_gbps,
            e.algo.as_str(),
            e.proto.as_str()
        );
    }
    Ok(out)
}

/// Evaluates every row of a calibration-format CSV and writes the rows back with
/// `x` with three decimals, or with four significant digits below 1 (an 8-byte
/// all-reduce moves a few kB/s of bus bandwidth: `0.0002346`, not `0.000`).
fn significant(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || x.abs() >= 1.0 {
        return format!("{x:.3}");
    }
    let decimals = (3 - x.abs().log10().floor() as i32).clamp(3, 17) as usize;
    format!("{x:.decimals$}")
}

/// `model_time_us, model_busbw_GBps, model_algo, model_proto` appended, to `out`
/// (stdout when `None`). Returns the number of rows.
pub fn rows(model: &CommModel, input: &Path, out: Option<&Path>) -> Result<usize, ScenarioError> {
    let file = input.display().to_string();
    let err = |row: Option<u64>, msg: String| ScenarioError {
        errors: vec![Diagnostic {
            file: file.clone(),
            at: row.map(|r| (r, 1)),
            path: row.map(|r| format!("row {r}")).unwrap_or_default(),
            message: msg,
        }],
    };
    let f = lahar_core::util::files::open(input).map_err(|e| err(None, format!("cannot read: {e}")))?;
    let mut rdr =
        csv::ReaderBuilder::new().from_reader(lahar_core::util::files::LfLines::new(std::io::BufReader::new(f)));
    let header: Vec<String> =
        rdr.headers().map_err(|e| err(Some(1), e.to_string()))?.iter().map(str::to_string).collect();
    let mut results: Vec<(csv::StringRecord, Estimate)> = Vec::new();
    for rec in rdr.records() {
        // Physical lines, as an editor shows them (a quoted field may span lines).
        let rec = rec.map_err(|e| err(e.position().map(csv::Position::line), e.to_string()))?;
        let line = rec.position().map_or(0, csv::Position::line);
        let fields: Vec<&str> = rec.iter().collect();
        let id = header.iter().position(|h| h == "id").and_then(|k| fields.get(k)).copied().unwrap_or("");
        let what = if id.is_empty() { String::new() } else { format!("(id {id}) ") };
        let row = RowInput::from_record(model, &header.iter().map(String::as_str).collect::<Vec<_>>(), &fields)
            .map_err(|e| err(Some(line), format!("{what}{e}")))?;
        let est = model.estimate_row(&row).map_err(|e| err(Some(line), format!("{what}{e}")))?;
        results.push((rec, est));
    }
    // A file is written under a temporary name and renamed when whole.
    let cannot = |p: &Path, e: std::io::Error| {
        ScenarioError::one(&p.display().to_string(), None, "", format!("cannot write: {e}"))
    };
    let mut file = match out {
        Some(p) => Some(lahar_core::util::files::AtomicFile::create(p).map_err(|e| cannot(p, e))?),
        None => None,
    };
    let sink: Box<dyn Write + '_> = match file.as_mut() {
        Some(f) => Box::new(f),
        None => Box::new(std::io::stdout().lock()),
    };
    let mut w = csv::Writer::from_writer(sink);
    let io = |e: csv::Error| ScenarioError::one("<output>", None, "", e.to_string());
    let mut h = header.clone();
    h.extend(["model_time_us", "model_busbw_GBps", "model_algo", "model_proto"].map(String::from));
    w.write_record(&h).map_err(io)?;
    for (rec, e) in &results {
        let mut r: Vec<String> = rec.iter().map(str::to_string).collect();
        r.push(significant(e.time_us));
        r.push(significant(e.busbw_gbps));
        r.push(e.algo.as_str().to_string());
        r.push(e.proto.as_str().to_string());
        w.write_record(&r).map_err(io)?;
    }
    w.flush().map_err(|e| ScenarioError::one("<output>", None, "", e.to_string()))?;
    drop(w);
    if let (Some(f), Some(p)) = (file, out) {
        f.commit().map_err(|e| cannot(p, e))?;
    }
    Ok(results.len())
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_use_binary_suffixes() {
        assert_eq!(parse_size("8").unwrap(), 8);
        assert_eq!(parse_size("1K").unwrap(), 1024);
        assert_eq!(parse_size("8G").unwrap(), 8 << 30);
        assert!(parse_size("8X").is_err());
        assert!(parse_size("").is_err());
    }
}
