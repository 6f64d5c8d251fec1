//! Mooncake's request traces (kvcache-ai/Mooncake `FAST25-release/traces/`:
//! `conversation_trace.jsonl`, `toolagent_trace.jsonl`, `synthetic_trace.jsonl`;
//! the older `arxiv-trace/mooncake_trace.jsonl` alike): one JSON object a line,
//! `{"timestamp": ms, "input_length": tokens, "output_length": tokens,
//! "hash_ids": [...]}`. `timestamp` is the arrival in milliseconds from the
//! trace's start; `hash_ids` (the prompt's 512-token prefix-cache blocks) are
//! not read, nor any other key. Blank lines are not rows.

use super::{RequestTrace, Rows, file_err};
use crate::error::ImportError;
use std::io::{BufRead, Read};
use std::path::Path;

/// The longest line read (a published line is at most a few kilobytes: a
/// 100,000-token prompt has about 200 block hashes).
const MAX_LINE: u64 = 1 << 20;

/// Reads a Mooncake trace from `input` (named `path` in errors).
pub(super) fn read(input: &mut dyn BufRead, path: &Path, strict: bool) -> Result<RequestTrace, ImportError> {
    let mut rows = Rows::new(path, strict);
    let mut buf = Vec::new();
    let mut line = 0u64;
    loop {
        buf.clear();
        let n = Read::take(&mut *input, MAX_LINE + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|source| ImportError::Io { path: path.to_path_buf(), source })?;
        if n == 0 {
            break;
        }
        line += 1;
        if buf.len() as u64 > MAX_LINE {
            return Err(file_err(path, format!("line {line} is longer than {MAX_LINE} bytes: not a Mooncake trace")));
        }
        let text = match std::str::from_utf8(&buf) {
            Ok(t) => t.trim(),
            Err(_) => {
                rows.push(line, Err("the line is not valid UTF-8".into()))?;
                continue;
            }
        };
        if text.is_empty() {
            continue;
        }
        rows.push(line, request(text))?;
    }
    Ok(rows.finish())
}

/// One line: (arrival µs, input tokens, output tokens).
fn request(text: &str) -> Result<(i64, u32, u32), String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not a JSON object: {e}"))?;
    let obj = v.as_object().ok_or_else(|| "expected a JSON object".to_string())?;
    let field = |k: &str| obj.get(k).ok_or_else(|| format!("no `{k}`"));
    let ts = field("timestamp")?;
    let ms = ts
        .as_u64()
        .filter(|&ms| ms <= (i64::MAX / 1000) as u64)
        .ok_or_else(|| format!("`timestamp`: expected milliseconds, an integer ≥ 0, got `{ts}`"))?;
    let tokens = |k: &str| -> Result<u32, String> {
        let t = field(k)?;
        t.as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| format!("`{k}`: expected a count of tokens ≥ 0, got `{t}`"))
    };
    Ok((ms as i64 * 1000, tokens("input_length")?, tokens("output_length")?))
}

#[cfg(test)]
mod tests {
    use super::super::{RequestFormat, read_from};
    use std::path::Path;

    fn read(text: &str, strict: bool) -> Result<super::RequestTrace, super::ImportError> {
        read_from(RequestFormat::Mooncake, &mut text.as_bytes(), Path::new("t.jsonl"), strict)
    }

    #[test]
    fn lines_become_offsets() {
        let t = read(
            "{\"timestamp\": 3000, \"input_length\": 13544, \"output_length\": 71, \"hash_ids\": [0, 219]}\n\
             {\"timestamp\": 0, \"input_length\": 6758, \"output_length\": 500, \"hash_ids\": [0, 1, 2]}\r\n\
             \n\
             {\"timestamp\": 5999, \"input_length\": 1053, \"output_length\": 26}",
            true,
        )
        .unwrap();
        assert_eq!(t.at_us, [0, 3_000_000, 5_999_000]);
        assert_eq!(t.input_tokens, [6758, 13544, 1053]);
        assert_eq!(t.output_tokens, [500, 71, 26]);
        assert_eq!((t.rows, t.skipped), (3, 0));
    }

    #[test]
    fn bad_lines_are_counted_or_stop_a_strict_read() {
        let text = "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 2}\n\
                    {\"timestamp\": -5, \"input_length\": 1, \"output_length\": 2}\n\
                    [1, 2]\n\
                    {\"timestamp\": 1.5, \"input_length\": 1, \"output_length\": 2}\n\
                    {\"timestamp\": 9, \"input_length\": 99999999999, \"output_length\": 2}\n\
                    {\"timestamp\": 9, \"output_length\": 2}\n\
                    {\"timestamp\": 9, \"input_length\n";
        let t = read(text, false).unwrap();
        assert_eq!((t.rows, t.skipped, t.at_us.len()), (7, 6, 1));
        assert_eq!(t.first_skip, Some((2, "`timestamp`: expected milliseconds, an integer ≥ 0, got `-5`".into())));
        let e = read(text, true).unwrap_err().to_string();
        assert_eq!(
            e,
            "t.jsonl: line 2, row 2: malformed: `timestamp`: expected milliseconds, an integer ≥ 0, got `-5`"
        );
        for (line, want) in [
            ("[1, 2]", "expected a JSON object"),
            ("{\"timestamp\": 1.5, \"input_length\": 1, \"output_length\": 2}", "got `1.5`"),
            (
                "{\"timestamp\": 9, \"input_length\": 99999999999, \"output_length\": 2}",
                "`input_length`: expected a count",
            ),
            ("{\"timestamp\": 9, \"output_length\": 2}", "no `input_length`"),
            ("{\"timestamp\": 9, \"input_length", "not a JSON object"),
        ] {
            let e = read(line, true).unwrap_err().to_string();
            assert!(e.contains(want), "{line}: {e}");
        }
    }

    #[test]
    fn a_line_too_long_is_refused() {
        let long = format!("{{\"timestamp\": 0, \"pad\": \"{}\"}}\n", "x".repeat(2 << 20));
        let e = read(&long, false).unwrap_err().to_string();
        assert!(e.contains("line 1 is longer than 1048576 bytes"), "{e}");
    }
}
