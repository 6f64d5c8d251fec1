//! Calibration-format rows: the columns of `examples/calibration/nccl-reference.csv`
//! parsed into a model input, so `lahar nccl --rows FILE.csv` can price each row.

use super::model::{Estimate, Placement};
use super::{AlgoChoice, Collective, CommError, CommModel, GpuGen, IntraLink, NetFabric};
use std::sync::OnceLock;

/// One calibration row as model input (plus the measurement, when the row has one).
#[derive(Clone, Debug, PartialEq)]
pub struct RowInput {
    /// Row id (`R001`), empty when the file has no `id` column.
    pub id: String,
    /// Collective.
    pub collective: Collective,
    /// GPU model as written.
    pub gpu: String,
    /// Its generation.
    pub gpu_gen: GpuGen,
    /// GPUs of the job on each node.
    pub gpus_per_node: u32,
    /// Nodes.
    pub nodes: u32,
    /// Intra-node link.
    pub intra: IntraLink,
    /// Network fabric (`None` for `inter_link = none`).
    pub net: Option<NetFabric>,
    /// NIC line rate per GPU, Gbit/s.
    pub nic_gbps_per_gpu: f64,
    /// Message size.
    pub bytes: u64,
    /// `auto` or a forced algorithm.
    pub algo: AlgoChoice,
    /// Highest switch tier crossed (optional column `tier`; default 1 on several
    /// nodes, 0 on one).
    pub tier: u32,
    /// Uplink oversubscription (optional column `oversubscription`; default 1).
    pub oversubscription: f64,
    /// Rail-optimized fabric (optional column `rail_optimized`; default true).
    pub rail_optimized: bool,
    /// Measured busbw, GB/s (column `busbw_GBps`), if present.
    pub measured_busbw_gbps: Option<f64>,
    /// Measured time, µs (column `time_us`), if present.
    pub measured_time_us: Option<f64>,
}

impl RowInput {
    /// The placement the row describes.
    pub fn placement(&self) -> Placement {
        Placement::uniform(
            self.gpu_gen,
            self.intra,
            self.gpus_per_node,
            self.nodes,
            self.nic_gbps_per_gpu,
            self.net.unwrap_or_default(),
        )
        .crossing(self.tier, self.oversubscription)
        .with_rail_optimized(self.rail_optimized)
    }

    /// Parses one record given the header's column names. Columns may come in any
    /// order; unknown columns (`source`...) are ignored. Required: `collective`,
    /// `gpu`, `gpus_per_node`, `nodes`, `intra_link`, `inter_link`,
    /// `nic_gbps_per_gpu`, `bytes`. Optional: `id`, `algo`, `busbw_GBps`, `time_us`,
    /// `tier`, `oversubscription`, `rail_optimized`.
    pub fn from_record<S: AsRef<str>>(model: &CommModel, header: &[S], fields: &[S]) -> Result<RowInput, CommError> {
        if header.len() != fields.len() {
            return Err(CommError::FieldCount { line: 0, expected: header.len(), found: fields.len() });
        }
        let get = |name: &str| -> Option<&str> {
            header.iter().position(|h| h.as_ref().trim() == name).map(|i| fields[i].as_ref().trim())
        };
        let req = |name: &str| get(name).ok_or_else(|| CommError::MissingColumn(name.to_string()));
        let field_err = |column: &str, value: &str, reason: String| CommError::Field {
            column: column.to_string(),
            value: value.to_string(),
            reason,
        };
        let int = |name: &str| -> Result<u64, CommError> {
            let v = req(name)?;
            v.parse::<u64>().map_err(|e| field_err(name, v, e.to_string()))
        };
        let small = |name: &str| -> Result<u32, CommError> {
            let v = int(name)?;
            u32::try_from(v).map_err(|e| field_err(name, &v.to_string(), e.to_string()))
        };
        let float = |name: &str, v: &str| -> Result<f64, CommError> {
            match v.parse::<f64>() {
                Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
                Ok(_) => Err(field_err(name, v, "must be a finite number >= 0".into())),
                Err(e) => Err(field_err(name, v, e.to_string())),
            }
        };
        let optional_float = |name: &str| -> Result<Option<f64>, CommError> {
            match get(name) {
                None | Some("") => Ok(None),
                Some(v) => float(name, v).map(Some),
            }
        };
        let gpu = req("gpu")?.to_string();
        let nodes = small("nodes")?;
        let inter = req("inter_link")?;
        let net = NetFabric::parse_inter_link(inter)?;
        let nic_text = req("nic_gbps_per_gpu")?;
        let tier = match get("tier") {
            None | Some("") => u32::from(nodes > 1),
            Some(v) => v.parse::<u32>().map_err(|e| field_err("tier", v, e.to_string()))?,
        };
        Ok(RowInput {
            id: get("id").unwrap_or("").to_string(),
            collective: Collective::parse(req("collective")?)?,
            gpu_gen: model.constants().gpu_gen(&gpu)?,
            gpu,
            gpus_per_node: small("gpus_per_node")?,
            nodes,
            intra: IntraLink::parse(req("intra_link")?)?,
            net,
            nic_gbps_per_gpu: float("nic_gbps_per_gpu", nic_text)?,
            bytes: int("bytes")?,
            algo: AlgoChoice::parse(get("algo").unwrap_or("auto"))?,
            tier,
            oversubscription: optional_float("oversubscription")?.unwrap_or(1.0),
            rail_optimized: match get("rail_optimized") {
                None | Some("") => true,
                Some(v) => match v.to_ascii_lowercase().as_str() {
                    "true" | "yes" | "1" => true,
                    "false" | "no" | "0" => false,
                    _ => return Err(field_err("rail_optimized", v, "expected true or false".into())),
                },
            },
            measured_busbw_gbps: optional_float("busbw_GBps")?,
            measured_time_us: optional_float("time_us")?,
        })
    }
}

/// Splits one CSV line into fields (RFC 4180 quoting: `"a, b"`, `""` for a quote).
/// Records spanning lines are not supported: an unterminated quote is an error.
pub fn split_csv_line(line: &str) -> Result<Vec<String>, CommError> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let mut fields = Vec::new();
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut after_quote = false;
    while let Some(ch) = chars.next() {
        if quoted {
            match ch {
                '"' if chars.peek() == Some(&'"') => {
                    cur.push('"');
                    chars.next();
                }
                '"' => {
                    quoted = false;
                    after_quote = true;
                }
                _ => cur.push(ch),
            }
            continue;
        }
        match ch {
            ',' => {
                fields.push(std::mem::take(&mut cur));
                after_quote = false;
            }
            '"' if cur.is_empty() && !after_quote => quoted = true,
            _ if after_quote => {
                return Err(CommError::MalformedCsv(format!("text after a closing quote: {line}")));
            }
            _ => cur.push(ch),
        }
    }
    if quoted {
        return Err(CommError::MalformedCsv(format!("unterminated quote: {line}")));
    }
    fields.push(cur);
    Ok(fields)
}

/// Parses a whole calibration-format file: a header line, then one record per
/// non-empty line. Errors carry the 1-based line number.
pub fn parse_rows(model: &CommModel, text: &str) -> Result<Vec<RowInput>, CommError> {
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let Some((_, head)) = lines.next() else {
        return Err(CommError::MissingColumn("collective".into()));
    };
    let header = split_csv_line(head)?;
    let mut rows = Vec::new();
    for (i, line) in lines {
        let at = |e: CommError| CommError::AtLine { line: i + 1, source: Box::new(e) };
        let fields = split_csv_line(line).map_err(at)?;
        if fields.len() != header.len() {
            return Err(CommError::FieldCount { line: i + 1, expected: header.len(), found: fields.len() });
        }
        rows.push(RowInput::from_record(model, &header, &fields).map_err(at)?);
    }
    Ok(rows)
}

impl CommModel {
    /// Prices one calibration row with its own algorithm choice.
    pub fn estimate_row(&self, row: &RowInput) -> Result<Estimate, CommError> {
        self.estimate(row.collective, row.bytes, &row.placement(), row.algo)
    }
}

/// Prices one calibration row with the default constants.
pub fn estimate_row(row: &RowInput) -> Result<Estimate, CommError> {
    static DEFAULT: OnceLock<CommModel> = OnceLock::new();
    DEFAULT.get_or_init(CommModel::default).estimate_row(row)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comm::Algo;

    const HEAD: &str = "id,collective,gpu,gpus_per_node,nodes,intra_link,inter_link,nic_gbps_per_gpu,bytes,busbw_GBps,time_us,source,algo";

    #[test]
    fn splits_quoted_fields() {
        let f = split_csv_line(r#"a,"b, c",,"say ""hi""",e"#).unwrap();
        assert_eq!(f, vec!["a", "b, c", "", "say \"hi\"", "e"]);
        assert!(split_csv_line(r#"a,"b"#).is_err());
        assert!(split_csv_line(r#"a,"b"x,c"#).is_err());
        assert_eq!(split_csv_line("x,y\r").unwrap(), vec!["x", "y"]);
    }

    #[test]
    fn parses_and_prices_rows() {
        let text = format!(
            "{HEAD}\nR038,allreduce,H200-SXM-141GB,8,1,nvswitch-nvlink4,none,0,8589934592,473.1,31774.22,\"x, y\",auto\n\
             R091,allreduce,H20,8,2,nvswitch-nvlink4,ib-ndr 8x400G,400,8,0.000315,47.6,src,nvlstree\n"
        );
        let m = CommModel::default();
        let rows = parse_rows(&m, &text).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].id, "R038");
        assert_eq!(rows[0].measured_busbw_gbps, Some(473.1));
        assert_eq!(rows[1].algo, AlgoChoice::Force(Algo::NvlsTree));
        assert_eq!(rows[1].placement().tier, 1);
        let e = estimate_row(&rows[1]).unwrap();
        assert_eq!(e.algo, Algo::NvlsTree);
        assert_eq!(m.estimate_row(&rows[0]).unwrap().algo, Algo::Nvls);
    }

    #[test]
    fn bad_rows_name_the_value() {
        let m = CommModel::default();
        let bad = format!("{HEAD}\nR1,allreduce,MI300X,8,1,nvswitch-nvlink4,none,0,8,1,1,s,auto\n");
        let e = parse_rows(&m, &bad).unwrap_err();
        assert_eq!(e.to_string(), "line 2: unknown GPU model `MI300X` (no alias in the comm constants matches it)");
        let bad = format!("{HEAD}\nR1,allreduce,H100,8,1,infinity-fabric,none,0,8,1,1,s,auto\n");
        assert!(parse_rows(&m, &bad).unwrap_err().to_string().contains("`infinity-fabric`"));
        let bad = format!("{HEAD}\nR1,allreduce,H100,8,1,nvswitch-nvlink4,none,0,-8,1,1,s,auto\n");
        assert!(matches!(
            parse_rows(&m, &bad),
            Err(CommError::AtLine { line: 2, source }) if matches!(*source, CommError::Field { .. })
        ));
        let bad = format!("{HEAD}\nR1,allreduce,H100,8,1\n");
        assert!(matches!(parse_rows(&m, &bad), Err(CommError::FieldCount { line: 2, .. })));
        assert!(matches!(parse_rows(&m, "id,gpu\nR1,H100\n"), Err(CommError::AtLine { .. })));
    }
}
