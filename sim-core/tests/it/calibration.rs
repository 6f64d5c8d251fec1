//! Calibration of the collective cost model against the published measurements in
//! `examples/calibration/nccl-reference.csv` (a copy of the team's calibration points; see its SOURCE.md).
//!
//! Run with `--nocapture` to see the per-row table that `docs/nccl-model.md` quotes.

use lahar_core::comm::{CommModel, RowInput, split_csv_line};

const CSV: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/calibration/nccl-reference.csv");

/// Median |relative error| of busbw allowed.
const MEDIAN_LIMIT: f64 = 0.15;
/// Every row's model/measured busbw ratio must lie in [1/RATIO_LIMIT, RATIO_LIMIT].
const RATIO_LIMIT: f64 = 2.0;

struct Outcome {
    id: String,
    measured: f64,
    model: f64,
    algo: &'static str,
    proto: &'static str,
}

impl Outcome {
    fn rel_err(&self) -> f64 {
        (self.model - self.measured) / self.measured
    }
    fn ratio(&self) -> f64 {
        self.model / self.measured
    }
}

/// Four significant digits, without switching to exponents for small-message rows.
fn bw(x: f64) -> String {
    let digits = (3 - x.abs().log10().floor() as i32).clamp(0, 9) as usize;
    format!("{x:.digits$}")
}

fn evaluate() -> Vec<Outcome> {
    let text =
        std::fs::read_to_string(CSV).unwrap_or_else(|e| panic!("calibration data missing: cannot read {CSV}: {e}"));
    let model = CommModel::default();
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let (_, head) = lines.next().expect("the calibration CSV is empty");
    let header = split_csv_line(head).expect("header parses");
    let mut out = Vec::new();
    for (i, line) in lines {
        let fields = split_csv_line(line).unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
        assert_eq!(fields.len(), header.len(), "line {}: field count differs from the header", i + 1);
        let row = RowInput::from_record(&model, &header, &fields).unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
        let measured = row.measured_busbw_gbps.unwrap_or_else(|| panic!("row {} has no busbw_GBps", row.id));
        assert!(measured > 0.0, "row {} has busbw 0", row.id);
        let e = model.estimate_row(&row).unwrap_or_else(|e| panic!("row {}: {e}", row.id));
        out.push(Outcome {
            id: row.id.clone(),
            measured,
            model: e.busbw_gbps,
            algo: e.algo.as_str(),
            proto: e.proto.as_str(),
        });
    }
    out
}

#[test]
fn calibration_busbw_error_is_bounded() {
    let rows = evaluate();
    assert!(rows.len() >= 40, "expected the 50 reference rows, found {}", rows.len());
    println!("| id | measured busbw GB/s | model busbw GB/s | rel. error | algo | proto |");
    println!("|---|---:|---:|---:|---|---|");
    for r in &rows {
        println!(
            "| {} | {} | {} | {:+.1}% | {} | {} |",
            r.id,
            bw(r.measured),
            bw(r.model),
            100.0 * r.rel_err(),
            r.algo,
            r.proto
        );
    }
    let mut errs: Vec<f64> = rows.iter().map(|r| r.rel_err().abs()).collect();
    errs.sort_by(f64::total_cmp);
    let m = errs.len();
    let median = if m % 2 == 1 { errs[m / 2] } else { (errs[m / 2 - 1] + errs[m / 2]) / 2.0 };
    let worst = rows.iter().max_by(|a, b| a.ratio().ln().abs().total_cmp(&b.ratio().ln().abs())).expect("rows");
    println!(
        "\nrows {m}, median |error| {:.1}%, max |error| {:.1}%, worst ratio {:.2} ({})",
        100.0 * median,
        100.0 * errs[m - 1],
        worst.ratio(),
        worst.id
    );
    assert!(median <= MEDIAN_LIMIT, "median |busbw error| {:.1}% exceeds {:.0}%", 100.0 * median, 100.0 * MEDIAN_LIMIT);
    let off: Vec<String> = rows
        .iter()
        .filter(|r| !(1.0 / RATIO_LIMIT..=RATIO_LIMIT).contains(&r.ratio()))
        .map(|r| format!("{} (ratio {:.2})", r.id, r.ratio()))
        .collect();
    assert!(off.is_empty(), "rows off by more than {RATIO_LIMIT}x: {off:?}");
}
