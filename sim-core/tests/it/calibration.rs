//! Calibration of the collective cost model against the published measurements in
//! `examples/calibration/nccl-reference.csv` (a copy of the team's calibration points; see its SOURCE.md).
//!
//! Run with `--nocapture` to see the per-row table that `docs/nccl-model.md` quotes;
//! [`nccl_model_page_is_the_model_s`] checks the page's table and numbers against it.

use lahar_core::comm::{CommModel, RowInput, split_csv_line};

const CSV: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/calibration/nccl-reference.csv");

/// Median |relative error| of busbw allowed.
const MEDIAN_LIMIT: f64 = 0.15;
/// Every row's model/measured busbw ratio must lie in [1/RATIO_LIMIT, RATIO_LIMIT].
const RATIO_LIMIT: f64 = 2.0;

struct Outcome {
    id: String,
    gpus: u32,
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

/// The row of the page's table: `| id | measured | model | rel. error | algo | proto |`.
fn table_row(r: &Outcome) -> String {
    format!(
        "| {} | {} | {} | {:+.1}% | {} | {} |",
        r.id,
        bw(r.measured),
        bw(r.model),
        100.0 * r.rel_err(),
        r.algo,
        r.proto
    )
}

/// The rows' median |relative error|.
fn median_abs_err(rows: &[Outcome]) -> f64 {
    let mut errs: Vec<f64> = rows.iter().map(|r| r.rel_err().abs()).collect();
    errs.sort_by(f64::total_cmp);
    let m = errs.len();
    if m % 2 == 1 { errs[m / 2] } else { (errs[m / 2 - 1] + errs[m / 2]) / 2.0 }
}

/// The row whose model/measured ratio is furthest from 1 (on a log scale).
fn worst(rows: &[Outcome]) -> &Outcome {
    rows.iter().max_by(|a, b| a.ratio().ln().abs().total_cmp(&b.ratio().ln().abs())).expect("rows")
}

/// The summary line under the page's table, as the page writes it (bold).
fn summary_line(rows: &[Outcome]) -> String {
    let max = rows.iter().map(|r| r.rel_err().abs()).fold(0.0, f64::max);
    let w = worst(rows);
    format!(
        "**{} rows: median |error| {:.1}%, max |error| {:.1}%, worst model/measured ratio {:.2} ({}).**",
        rows.len(),
        100.0 * median_abs_err(rows),
        100.0 * max,
        w.ratio(),
        w.id
    )
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
            gpus: row.gpus_per_node * row.nodes,
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
        println!("{}", table_row(r));
    }
    println!("\n{}", summary_line(&rows));
    let median = median_abs_err(&rows);
    assert!(median <= MEDIAN_LIMIT, "median |busbw error| {:.1}% exceeds {:.0}%", 100.0 * median, 100.0 * MEDIAN_LIMIT);
    let off: Vec<String> = rows
        .iter()
        .filter(|r| !(1.0 / RATIO_LIMIT..=RATIO_LIMIT).contains(&r.ratio()))
        .map(|r| format!("{} (ratio {:.2})", r.id, r.ratio()))
        .collect();
    assert!(off.is_empty(), "rows off by more than {RATIO_LIMIT}x: {off:?}");
}

/// docs/nccl-model.md's calibration results are the model's now: the table's rows
/// (the measured column is the CSV's, the model busbw, error, algorithm and
/// protocol what `estimate_row` gives), the summary line under it, the NVLS rows'
/// errors quoted in the list above it, and the table of the worst rows (the rows
/// of largest |error|, in that order, each error rounded to a whole percent).
#[test]
fn nccl_model_page_is_the_model_s() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/nccl-model.md"))
        .expect("docs/nccl-model.md");
    let rows = evaluate();
    let table = |header: &str| -> Vec<&str> {
        let start = doc.find(header).unwrap_or_else(|| panic!("docs/nccl-model.md has no table `{header}`"));
        doc[start..].lines().skip(2).take_while(|l| l.starts_with('|')).collect()
    };
    let documented = table("| id | measured busbw GB/s | model busbw GB/s | rel. error | algo | proto |");
    let computed: Vec<String> = rows.iter().map(table_row).collect();
    let differ: Vec<String> = documented
        .iter()
        .zip(&computed)
        .filter(|(d, c)| d != c)
        .map(|(d, c)| format!("page  {d}\nmodel {c}"))
        .collect();
    assert!(differ.is_empty(), "docs/nccl-model.md's calibration table differs:\n{}", differ.join("\n"));
    assert_eq!(documented.len(), computed.len(), "docs/nccl-model.md's calibration table has a row per CSV row");
    let summary = summary_line(&rows);
    assert!(doc.contains(&summary), "docs/nccl-model.md should have:\n{summary}");
    // "6 GPUs R036 +2.9 %, 8 GPUs R038 +3.2 %" (the NVLS traffic formula's check).
    let prose = doc.split_whitespace().collect::<Vec<_>>().join(" ");
    let row = |id: &str| rows.iter().find(|r| r.id == id).unwrap_or_else(|| panic!("no row {id}"));
    let nvls =
        ["R036", "R038"].map(|id| format!("{} GPUs {id} {:+.1} %", row(id).gpus, 100.0 * row(id).rel_err())).join(", ");
    assert!(prose.contains(&nvls), "docs/nccl-model.md should say: {nvls}");
    // The worst rows: `| R095 | +56 % | cause |`, a minus sign for a negative error.
    let worst_rows: Vec<(String, String)> = table("| row | error | cause |")
        .iter()
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (cells[1].to_string(), cells[2].to_string())
        })
        .collect();
    let mut by_error: Vec<&Outcome> = rows.iter().collect();
    by_error.sort_by(|a, b| b.rel_err().abs().total_cmp(&a.rel_err().abs()));
    let want: Vec<(String, String)> = by_error
        .iter()
        .take(worst_rows.len())
        .map(|r| {
            let e = 100.0 * r.rel_err();
            (r.id.clone(), format!("{}{:.0} %", if e < 0.0 { "−" } else { "+" }, e.abs()))
        })
        .collect();
    assert!(worst_rows.len() >= 5, "docs/nccl-model.md's table of the worst rows not found");
    assert_eq!(worst_rows, want, "docs/nccl-model.md's worst rows are the rows of largest |error|");
}
