//! Inference request traces: when requests arrived and how many tokens each
//! carried — the demand of a serving workload, not jobs.
//!
//! | format | file | columns read |
//! |---|---|---|
//! | `azure-llm` | the Azure LLM inference trace (AzurePublicDataset, `AzureLLMInferenceTrace_{conv,code}.csv`, 2023; the 2024 week alike) | `TIMESTAMP` (`YYYY-MM-DD HH:MM:SS[.fraction][+00:00]`), `ContextTokens`, `GeneratedTokens` |
//! | `burstgpt` | BurstGPT (HPMLL/BurstGPT, `BurstGPT_*.csv`) | `Timestamp` (seconds, a decimal), `Request tokens`, `Response tokens`; other columns (`Model`, `Log Type`, `Session ID`...) ignored |
//! | `mooncake` | Mooncake's traces (kvcache-ai/Mooncake `FAST25-release`, `*_trace.jsonl`: one JSON object a line) | `timestamp` (milliseconds, an integer), `input_length`, `output_length`; `hash_ids` (prefix-cache blocks) ignored |
//!
//! Columns are found by header name. A row whose fields do not parse is skipped
//! and counted (`malformed`), or, with `strict`, stops the read with its line.
//! Times become microseconds after the earliest request; the rows may come in
//! any order (they are sorted by time, ties in file order). Tokens are counts ≥ 0.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use crate::error::{ImportError, Location, SkipReason};

mod mooncake;

/// An inference request trace format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RequestFormat {
    /// The Azure LLM inference trace.
    AzureLlm,
    /// BurstGPT.
    BurstGpt,
    /// Mooncake's FAST'25 traces (JSON lines).
    Mooncake,
}

impl RequestFormat {
    /// Every request format.
    pub const ALL: [RequestFormat; 3] = [RequestFormat::AzureLlm, RequestFormat::BurstGpt, RequestFormat::Mooncake];

    /// Its name on the command line and in scenarios.
    pub fn name(self) -> &'static str {
        match self {
            RequestFormat::AzureLlm => "azure-llm",
            RequestFormat::BurstGpt => "burstgpt",
            RequestFormat::Mooncake => "mooncake",
        }
    }

    /// The format named `s`.
    pub fn from_name(s: &str) -> Option<RequestFormat> {
        RequestFormat::ALL.into_iter().find(|f| f.name() == s)
    }

    /// The format a file's name suggests.
    pub fn guess(path: &Path) -> Option<RequestFormat> {
        let name = path.file_name()?.to_string_lossy().to_lowercase();
        if name.starts_with("azurellminferencetrace") {
            Some(RequestFormat::AzureLlm)
        } else if name.starts_with("burstgpt") {
            Some(RequestFormat::BurstGpt)
        } else if name.starts_with("mooncake") || name.ends_with("_trace.jsonl") {
            Some(RequestFormat::Mooncake)
        } else {
            None
        }
    }
}

/// Which of a request's tokens a count of tokens takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tokens {
    /// Prompt (context) tokens.
    Input,
    /// Generated (response) tokens.
    Output,
    /// Both.
    Total,
}

impl Tokens {
    /// Every choice.
    pub const ALL: [Tokens; 3] = [Tokens::Input, Tokens::Output, Tokens::Total];

    /// Its name in scenarios.
    pub fn name(self) -> &'static str {
        match self {
            Tokens::Input => "input",
            Tokens::Output => "output",
            Tokens::Total => "total",
        }
    }

    /// The choice named `s`.
    pub fn from_name(s: &str) -> Option<Tokens> {
        Tokens::ALL.into_iter().find(|t| t.name() == s)
    }
}

/// The most requests one trace may hold (a check, not a target: the published
/// BurstGPT files hold about 1.4 million each).
pub const MAX_REQUESTS: usize = 50_000_000;

/// A request trace as read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestTrace {
    /// Arrival of each request, µs after the earliest, in time order.
    pub at_us: Vec<u64>,
    /// Prompt (context) tokens of each request, in the same order.
    pub input_tokens: Vec<u32>,
    /// Generated (response) tokens of each request.
    pub output_tokens: Vec<u32>,
    /// Data rows read.
    pub rows: u64,
    /// Rows skipped as malformed, and the first one's line and why.
    pub skipped: u64,
    /// The first skipped row: its line and the reason.
    pub first_skip: Option<(u64, String)>,
}

impl RequestTrace {
    /// From the first request to the last (µs).
    pub fn span_us(&self) -> u64 {
        self.at_us.last().copied().unwrap_or(0)
    }

    /// Requests per bin of `bin_us` from 0: (bin start µs, count), every bin up
    /// to the last request's.
    pub fn counts(&self, bin_us: u64) -> Vec<(u64, u64)> {
        self.binned(bin_us, |_| 1)
    }

    /// Tokens per bin of `bin_us` from 0, as [`RequestTrace::counts`]: each
    /// request's `which` tokens summed in the bin it arrived in.
    pub fn token_counts(&self, bin_us: u64, which: Tokens) -> Vec<(u64, u64)> {
        let (input, output) = (&self.input_tokens, &self.output_tokens);
        self.binned(bin_us, |i| match which {
            Tokens::Input => u64::from(input[i]),
            Tokens::Output => u64::from(output[i]),
            Tokens::Total => u64::from(input[i]) + u64::from(output[i]),
        })
    }

    /// The sum of the requests' `which` tokens (their count for `None`) and the
    /// largest sum in one bin of `bin_us`, walking the requests in time order:
    /// memory does not grow with the span, as [`RequestTrace::counts`]'s does.
    pub fn sum_and_peak(&self, bin_us: u64, which: Option<Tokens>) -> (u64, u64) {
        let bin = bin_us.max(1);
        let weight = |i: usize| match which {
            None => 1,
            Some(Tokens::Input) => u64::from(self.input_tokens[i]),
            Some(Tokens::Output) => u64::from(self.output_tokens[i]),
            Some(Tokens::Total) => u64::from(self.input_tokens[i]) + u64::from(self.output_tokens[i]),
        };
        let (mut sum, mut peak, mut current) = (0u64, 0u64, (u64::MAX, 0u64));
        for (i, &t) in self.at_us.iter().enumerate() {
            let w = weight(i);
            sum = sum.saturating_add(w);
            current = if current.0 == t / bin { (current.0, current.1.saturating_add(w)) } else { (t / bin, w) };
            peak = peak.max(current.1);
        }
        (sum, peak)
    }

    /// Σ `weight(i)` over the requests `i` of each bin of `bin_us` from 0.
    fn binned(&self, bin_us: u64, weight: impl Fn(usize) -> u64) -> Vec<(u64, u64)> {
        let bin = bin_us.max(1);
        let n = self.at_us.last().map_or(0, |&t| t / bin + 1);
        let mut out: Vec<(u64, u64)> = (0..n).map(|k| (k * bin, 0)).collect();
        for (i, &t) in self.at_us.iter().enumerate() {
            out[(t / bin) as usize].1 += weight(i);
        }
        out
    }
}

/// Reads a request trace.
pub fn read_requests(format: RequestFormat, path: &Path, strict: bool) -> Result<RequestTrace, ImportError> {
    let io = |source| ImportError::Io { path: path.to_path_buf(), source };
    let f = File::open(path).map_err(io)?;
    let mut input = BufReader::new(f);
    read_from(format, &mut input, path, strict)
}

fn file_err(path: &Path, message: impl Into<String>) -> ImportError {
    ImportError::File { path: path.to_path_buf(), message: message.into() }
}

/// Reads a request trace from `input` (named `path` in errors).
pub fn read_from(
    format: RequestFormat,
    input: &mut dyn BufRead,
    path: &Path,
    strict: bool,
) -> Result<RequestTrace, ImportError> {
    let Some(layout) = Layout::of(format) else {
        return mooncake::read(input, path, strict);
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(lahar_core::util::files::LfLines::new(input));
    let mut rec = csv::StringRecord::new();
    match reader.read_record(&mut rec) {
        Ok(true) => {}
        Ok(false) => return Err(file_err(path, "the file is empty; expected a header row")),
        Err(e) => return Err(file_err(path, format!("unreadable header: {e}"))),
    }
    let header: Vec<String> = rec.iter().map(str::to_string).collect();
    let col = |name: &str| header.iter().position(|h| h == name);
    let need = |name: &str| {
        col(name).ok_or_else(|| {
            file_err(path, format!("no `{name}` column; a {} trace's header has {}", format.name(), layout.header))
        })
    };
    let (t, inp, out) = (need(layout.time)?, need(layout.input)?, need(layout.output)?);
    let width = header.len();
    let mut rows = Rows::new(path, strict);
    let path_buf: PathBuf = path.to_path_buf();
    loop {
        let line = reader.position().line();
        let parsed = match reader.read_record(&mut rec) {
            Ok(false) => break,
            Ok(true) => {
                let line = rec.position().map_or(line, |p| p.line());
                let row = if rec.len() != width {
                    Err(format!("expected {width} fields, found {}", rec.len()))
                } else {
                    row(&layout, &rec, t, inp, out)
                };
                (line, row)
            }
            Err(e) => {
                let at = e.position().map_or(line, |p| p.line());
                match e.into_kind() {
                    csv::ErrorKind::Io(source) => return Err(ImportError::Io { path: path_buf, source }),
                    csv::ErrorKind::Utf8 { .. } => (at, Err("the row is not valid UTF-8".to_string())),
                    other => (at, Err(format!("unreadable row: {other:?}"))),
                }
            }
        };
        rows.push(parsed.0, parsed.1)?;
    }
    Ok(rows.finish())
}

/// The requests read so far, and the rows skipped.
struct Rows<'p> {
    path: &'p Path,
    strict: bool,
    rows: Vec<(i64, u32, u32)>,
    trace: RequestTrace,
}

impl<'p> Rows<'p> {
    fn new(path: &'p Path, strict: bool) -> Self {
        Rows { path, strict, rows: Vec::new(), trace: RequestTrace::default() }
    }

    /// The data row at `line`: a request (time µs on the trace's clock, input
    /// and output tokens), or why it does not parse (skipped and counted, or
    /// with `strict` the read's error).
    fn push(&mut self, line: u64, row: Result<(i64, u32, u32), String>) -> Result<(), ImportError> {
        self.trace.rows += 1;
        match row {
            Ok(r) => {
                if self.rows.len() >= MAX_REQUESTS {
                    return Err(file_err(self.path, format!("more than {MAX_REQUESTS} requests: split the trace")));
                }
                self.rows.push(r);
            }
            Err(message) => {
                if self.strict {
                    return Err(ImportError::Row {
                        path: self.path.to_path_buf(),
                        at: Location { line, row: self.trace.rows },
                        reason: SkipReason::Malformed,
                        message,
                    });
                }
                self.trace.skipped += 1;
                self.trace.first_skip.get_or_insert((line, message));
            }
        }
        Ok(())
    }

    /// The trace: requests in time order (ties in file order), from the first.
    fn finish(mut self) -> RequestTrace {
        let rows = &mut self.rows;
        rows.sort_by_key(|r| r.0);
        let first = rows.first().map_or(0, |r| r.0);
        let mut trace = self.trace;
        trace.at_us = rows.iter().map(|r| (r.0 - first) as u64).collect();
        trace.input_tokens = rows.iter().map(|r| r.1).collect();
        trace.output_tokens = rows.iter().map(|r| r.2).collect();
        trace
    }
}

/// A CSV request trace's columns and how its times read.
struct Layout {
    /// The published header, for errors.
    header: &'static str,
    time: &'static str,
    input: &'static str,
    output: &'static str,
    /// A time field as µs on the trace's clock.
    parse_time: fn(&str) -> Result<i64, String>,
}

impl Layout {
    /// The layout of a CSV format; `None` for Mooncake's JSON lines.
    fn of(format: RequestFormat) -> Option<Layout> {
        match format {
            RequestFormat::AzureLlm => Some(Layout {
                header: "TIMESTAMP,ContextTokens,GeneratedTokens",
                time: "TIMESTAMP",
                input: "ContextTokens",
                output: "GeneratedTokens",
                parse_time: azure_time,
            }),
            RequestFormat::BurstGpt => Some(Layout {
                header: "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type",
                time: "Timestamp",
                input: "Request tokens",
                output: "Response tokens",
                parse_time: |s| seconds(s).ok_or_else(|| format!("`Timestamp`: expected seconds ≥ 0, got `{s}`")),
            }),
            RequestFormat::Mooncake => None,
        }
    }
}

/// One data row: (time µs on the trace's clock, input tokens, output tokens).
fn row(layout: &Layout, rec: &csv::StringRecord, t: usize, inp: usize, out: usize) -> Result<(i64, u32, u32), String> {
    let tokens = |i: usize, name: &str| -> Result<u32, String> {
        let s = &rec[i];
        s.parse::<u32>().map_err(|_| format!("`{name}`: expected a count of tokens ≥ 0, got `{s}`"))
    };
    let time = (layout.parse_time)(&rec[t])?;
    Ok((time, tokens(inp, layout.input)?, tokens(out, layout.output)?))
}

/// Non-negative decimal seconds (`19440110.0`, `5`, `110.5`) as µs; more than six
/// fractional digits are cut.
fn seconds(s: &str) -> Option<i64> {
    let (int_part, frac) = s.split_once('.').unwrap_or((s, ""));
    if int_part.is_empty() || int_part.len() > 12 || !int_part.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut us: i64 = int_part.parse::<i64>().ok()? * 1_000_000;
    let digits: Vec<u8> = frac.bytes().take(6).collect();
    let mut scale = 100_000;
    for d in digits {
        us += i64::from(d - b'0') * scale;
        scale /= 10;
    }
    Some(us)
}

/// `YYYY-MM-DD HH:MM:SS[.fraction][+00:00]` as µs since 1970 (UTC when a zone
/// is given; naive otherwise).
fn azure_time(s: &str) -> Result<i64, String> {
    let bad = || format!("`TIMESTAMP`: expected `YYYY-MM-DD HH:MM:SS[.fraction]`, got `{s}`");
    let (body, offset) = match s.len().checked_sub(6).and_then(|i| s.get(i..).map(|z| (i, z))) {
        Some((i, z)) if (z.starts_with('+') || z.starts_with('-')) && z.as_bytes().get(3) == Some(&b':') => {
            let sign = if z.starts_with('-') { -1 } else { 1 };
            let h: i64 = z[1..3].parse().map_err(|_| bad())?;
            let m: i64 = z[4..6].parse().map_err(|_| bad())?;
            (&s[..i], sign * (h * 3600 + m * 60))
        }
        _ => (s, 0),
    };
    let (whole, frac) = body.split_once('.').unwrap_or((body, ""));
    let iso = whole.replacen(' ', "T", 1);
    let secs = lahar_core::util::time::parse_civil(&iso).filter(|_| whole.len() == 19).ok_or_else(bad)?;
    let frac_us = if frac.is_empty() { 0 } else { seconds(&format!("0.{frac}")).ok_or_else(bad)? };
    Ok((secs - offset) * 1_000_000 + frac_us)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(format: RequestFormat, text: &str, strict: bool) -> Result<RequestTrace, ImportError> {
        read_from(format, &mut text.as_bytes(), Path::new("t.csv"), strict)
    }

    #[test]
    fn azure_rows_become_offsets() {
        let t = read(
            RequestFormat::AzureLlm,
            "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:50.9951690,396,109\n2023-11-16 18:15:46.1805900,91,16\n",
            true,
        )
        .unwrap();
        assert_eq!(t.at_us, [0, 500_000, 4_814_579]);
        assert_eq!(t.input_tokens, [91, 374, 396]);
        assert_eq!(t.output_tokens, [16, 44, 109]);
        // Two requests in the first 4 s, one in the second.
        assert_eq!(t.token_counts(4_000_000, Tokens::Input), [(0, 465), (4_000_000, 396)]);
        assert_eq!(t.token_counts(4_000_000, Tokens::Output), [(0, 60), (4_000_000, 109)]);
        assert_eq!(t.token_counts(4_000_000, Tokens::Total), [(0, 525), (4_000_000, 505)]);
        assert_eq!(t.sum_and_peak(4_000_000, Some(Tokens::Total)), (1030, 525));
        assert_eq!(t.sum_and_peak(4_000_000, Some(Tokens::Output)), (169, 109));
        let n = t.counts(4_000_000);
        assert_eq!(t.sum_and_peak(4_000_000, None), (n[0].1 + n[1].1, n[0].1.max(n[1].1)));
        assert_eq!(t.counts(4_000_000), [(0, 2), (4_000_000, 1)]);
        assert_eq!(t.counts(1_000_000), [(0, 2), (1_000_000, 0), (2_000_000, 0), (3_000_000, 0), (4_000_000, 1)]);
        // The 2024 trace's zone suffix.
        let z = read(
            RequestFormat::AzureLlm,
            "TIMESTAMP,ContextTokens,GeneratedTokens\n2024-05-12 00:00:10+00:00,1,2\n2024-05-12 00:00:00.5+00:00,3,4\n",
            true,
        )
        .unwrap();
        assert_eq!(z.at_us, [0, 9_500_000]);
    }

    #[test]
    fn burstgpt_rows_become_offsets() {
        let t = read(
            RequestFormat::BurstGpt,
            "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,18,490,Conversation log\n45,ChatGPT,1087,0,1087,Conversation log\n110.5,GPT-4,417,505,922,API log\n",
            true,
        )
        .unwrap();
        assert_eq!(t.at_us, [0, 40_000_000, 105_500_000]);
        assert_eq!(t.input_tokens, [472, 1087, 417]);
    }

    #[test]
    fn bad_rows_are_counted_or_stop_a_strict_read() {
        let text = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,1,2\nyesterday,1,2\n2023-11-16 18:15:47,-3,2\n";
        let t = read(RequestFormat::AzureLlm, text, false).unwrap();
        assert_eq!((t.rows, t.skipped, t.at_us.len()), (3, 2, 1));
        assert_eq!(t.first_skip.as_ref().map(|s| s.0), Some(3));
        let e = read(RequestFormat::AzureLlm, text, true).unwrap_err().to_string();
        assert_eq!(
            e,
            "t.csv: line 3, row 2: malformed: `TIMESTAMP`: expected `YYYY-MM-DD HH:MM:SS[.fraction]`, got `yesterday`"
        );
        let e = read(RequestFormat::BurstGpt, "Time,Model\n1,a\n", false).unwrap_err().to_string();
        assert!(e.contains("no `Timestamp` column"), "{e}");
        assert!(read(RequestFormat::BurstGpt, "", false).is_err());
    }
}
