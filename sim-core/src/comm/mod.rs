//! NCCL-like cost model of collective communication.
//!
//! Prices one collective call (all-reduce, all-gather, reduce-scatter, broadcast,
//! all-to-all) of `bytes` bytes on a [`Placement`] (GPU generation, intra-node link,
//! GPUs per node, nodes, NIC rate per GPU, fabric, switch tier crossed and its
//! oversubscription) and returns an [`Estimate`]: time in µs, nccl-tests algbw and
//! busbw, and the algorithm/protocol chosen.
//!
//! The structure is NCCL's own (`src/graph/tuning.cc`): every applicable
//! (algorithm, protocol) pair — Ring, Tree, NVLS, NVLSTree, PAT, and point-to-point
//! for all-to-all; LL, LL128, Simple — gets
//!
//! ```text
//! t = t_launch + lat(algo, proto) + T_bw + min(φ · T_bw, ramp_cap)    (ramp: LL128/Simple)
//! T_bw = bytes / algbw(algo, proto)
//! ```
//!
//! and the cheapest wins, as NCCL's tuner picks (ties go to the first in the order
//! Ring, Tree, NVLS, NVLSTree, PAT, P2P and LL, LL128, Simple). Bandwidths come from
//! the per-link traffic each algorithm puts on NVLink and on the NICs, bounded by
//! the data in [`CommConstants`]; see `docs/nccl-model.md` for the equations, the
//! constants and the calibration against `examples/calibration/nccl-reference.csv`.
//!
//! Contracts:
//! - Deterministic: pure `f64` arithmetic, no hash-map iteration.
//! - Time never decreases with `bytes` for a fixed placement and choice.
//! - The link traffic implied by an estimate never exceeds the physical link
//!   bandwidth ([`Estimate::intra_load_gbps`], [`Estimate::nic_load_gbps`] versus
//!   [`CommModel::capacity`]); busbw itself may exceed link rates (NVLS, 2-node
//!   trees), as it does in nccl-tests.
//! - A placement inside one node is never slower than the same ranks spread over
//!   nodes of the same kind (up to 8 GPUs per node, links that are not pair-only,
//!   NICs at most half as fast as NVLink per GPU).
//!
//! ```
//! use lahar_core::comm::{AlgoChoice, Collective, CommModel, GpuGen, IntraLink, Placement};
//! let model = CommModel::default();
//! let p = Placement::single_node(GpuGen::Hopper, IntraLink::NvswitchNvlink4, 8);
//! let e = model.estimate(Collective::AllReduce, 1 << 30, &p, AlgoChoice::Auto).unwrap();
//! assert!(e.busbw_gbps > 400.0); // NVLS
//! ```

mod cache;
mod constants;
#[cfg(test)]
mod invariants;
mod model;
mod placement;
pub mod profile;
mod row;
pub mod runtime;
pub mod throughput;

pub use cache::{CommCache, CommKey};
pub use constants::{
    AlgoLatency, ArchConstants, ArchTable, CommConstants, GpuGen, IntraConstants, IntraLink, IntraTable, LatencyTable,
    LinkKind, NetConstants, NetFabric, NetTable, NodeBuckets, ProtoLatency, normalize_gpu_name,
};
pub use model::{Capacity, CommModel, Estimate, Placement};
pub use placement::AdapterOptions;
pub use row::{RowInput, estimate_row, parse_rows, split_csv_line};

/// A collective operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Collective {
    /// All-reduce.
    AllReduce,
    /// All-gather (`bytes` = the gathered buffer, nccl-tests convention).
    AllGather,
    /// Reduce-scatter (`bytes` = the full input buffer, nccl-tests convention).
    ReduceScatter,
    /// Broadcast.
    Broadcast,
    /// All-to-all (`bytes` = each rank's send buffer).
    AllToAll,
}

impl Collective {
    /// Every collective.
    pub const ALL: [Collective; 5] = [
        Collective::AllReduce,
        Collective::AllGather,
        Collective::ReduceScatter,
        Collective::Broadcast,
        Collective::AllToAll,
    ];

    /// nccl-tests name without `_perf` (`allreduce`...).
    pub fn as_str(self) -> &'static str {
        match self {
            Collective::AllReduce => "allreduce",
            Collective::AllGather => "allgather",
            Collective::ReduceScatter => "reducescatter",
            Collective::Broadcast => "broadcast",
            Collective::AllToAll => "alltoall",
        }
    }

    /// Parses `allreduce`, `all_reduce`, `all-reduce` (any case) and so on.
    pub fn parse(s: &str) -> Result<Collective, CommError> {
        let t: String = s.chars().filter(|c| c.is_ascii_alphanumeric()).collect::<String>().to_ascii_lowercase();
        Collective::ALL.into_iter().find(|c| c.as_str() == t).ok_or_else(|| CommError::UnknownCollective(s.to_string()))
    }

    /// nccl-tests bus-bandwidth factor for `ranks` ranks: busbw = algbw x factor.
    pub fn busbw_factor(self, ranks: u32) -> f64 {
        let n = f64::from(ranks.max(1));
        match self {
            Collective::AllReduce => 2.0 * (n - 1.0) / n,
            Collective::AllGather | Collective::ReduceScatter | Collective::AllToAll => (n - 1.0) / n,
            Collective::Broadcast => 1.0,
        }
    }
}

/// A collective algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Algo {
    /// Flat ring over all ranks.
    Ring,
    /// Double binary tree across nodes, chain inside a node (all-reduce, 2+ nodes).
    Tree,
    /// NVSwitch SHARP reduction inside one node (all-reduce, Hopper+).
    Nvls,
    /// NVLS inside nodes plus a tree across nodes (all-reduce, Hopper+, 2+ nodes).
    NvlsTree,
    /// Parallel aggregated trees (all-gather/reduce-scatter, 1 GPU per node).
    Pat,
    /// Point-to-point sends to every peer (all-to-all).
    P2p,
    /// Nothing to communicate (one rank or zero bytes).
    None,
}

impl Algo {
    /// NCCL spelling, lower case (`ring`, `tree`, `nvls`, `nvlstree`, `pat`, `p2p`, `none`).
    pub fn as_str(self) -> &'static str {
        match self {
            Algo::Ring => "ring",
            Algo::Tree => "tree",
            Algo::Nvls => "nvls",
            Algo::NvlsTree => "nvlstree",
            Algo::Pat => "pat",
            Algo::P2p => "p2p",
            Algo::None => "none",
        }
    }
}

/// A protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Proto {
    /// Low latency: 8-byte stores with inline flags.
    Ll,
    /// 128-byte lines carrying 120 bytes of data.
    Ll128,
    /// Bulk copies with separate flags.
    Simple,
}

impl Proto {
    /// NCCL spelling (`LL`, `LL128`, `Simple`).
    pub fn as_str(self) -> &'static str {
        match self {
            Proto::Ll => "LL",
            Proto::Ll128 => "LL128",
            Proto::Simple => "Simple",
        }
    }
}

/// Which algorithm to evaluate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum AlgoChoice {
    /// The fastest applicable one (NCCL's default tuning).
    #[default]
    Auto,
    /// Only this algorithm (`NCCL_ALGO=...`), with its fastest protocol.
    Force(Algo),
}

impl AlgoChoice {
    /// Parses the calibration CSV's `algo` column: `auto` (or empty), `ring`, `tree`,
    /// `nvls`, `nvlstree`, `pat`, `p2p` (any case).
    pub fn parse(s: &str) -> Result<AlgoChoice, CommError> {
        let t = s.trim().to_ascii_lowercase();
        let a = match t.as_str() {
            "" | "auto" | "default" => return Ok(AlgoChoice::Auto),
            "ring" => Algo::Ring,
            "tree" => Algo::Tree,
            "nvls" => Algo::Nvls,
            "nvlstree" | "nvls_tree" | "nvls-tree" => Algo::NvlsTree,
            "pat" => Algo::Pat,
            "p2p" => Algo::P2p,
            _ => return Err(CommError::UnknownAlgorithm(s.to_string())),
        };
        Ok(AlgoChoice::Force(a))
    }

    /// `auto` or the forced algorithm's name.
    pub fn as_str(self) -> &'static str {
        match self {
            AlgoChoice::Auto => "auto",
            AlgoChoice::Force(a) => a.as_str(),
        }
    }
}

/// Errors of the communication model; every variant names the offending value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CommError {
    /// A GPU model no alias prefix matches.
    #[error("unknown GPU model `{0}` (no alias in the comm constants matches it)")]
    UnknownGpu(String),
    /// An intra-node link name the model does not know.
    #[error(
        "unknown intra-node link `{0}` (expected nvswitch-nvlink2..5, nvlink2-hybrid-cube-mesh, nvlink-bridge-nv12, pcie-gen3/4/5 or pcie-sys)"
    )]
    UnknownIntraLink(String),
    /// A network fabric name the model does not know.
    #[error("unknown network fabric `{0}` (expected ib, roce, efa, efa-v4, tcpxo or tcp)")]
    UnknownFabric(String),
    /// A collective name the model does not know.
    #[error("unknown collective `{0}` (expected allreduce, allgather, reducescatter, broadcast or alltoall)")]
    UnknownCollective(String),
    /// An algorithm name the model does not know.
    #[error("unknown algorithm `{0}` (expected auto, ring, tree, nvls, nvlstree, pat or p2p)")]
    UnknownAlgorithm(String),
    /// A forced algorithm that cannot run this collective on this placement.
    #[error("algorithm `{algo}` cannot run {collective} on this placement: {reason}")]
    AlgorithmUnavailable {
        /// The forced algorithm.
        algo: &'static str,
        /// The collective.
        collective: &'static str,
        /// Why.
        reason: &'static str,
    },
    /// A placement that cannot exist.
    #[error("invalid placement: {0}")]
    InvalidPlacement(String),
    /// Sweep bounds that describe no sizes.
    #[error("invalid sweep: {0}")]
    InvalidSweep(String),
    /// A constant outside its valid range.
    #[error("comm constant `{name}` = {value} is out of range")]
    InvalidConstant {
        /// Dotted path of the constant.
        name: String,
        /// Its value.
        value: f64,
    },
    /// A CSV field that does not parse.
    #[error("column `{column}`: cannot use `{value}`: {reason}")]
    Field {
        /// Column name.
        column: String,
        /// Raw value.
        value: String,
        /// Why.
        reason: String,
    },
    /// A required CSV column is absent from the header.
    #[error("missing column `{0}`")]
    MissingColumn(String),
    /// A CSV record whose field count differs from the header's.
    #[error("line {line}: {found} fields, header has {expected}")]
    FieldCount {
        /// 1-based line number.
        line: usize,
        /// Fields in the header.
        expected: usize,
        /// Fields in the record.
        found: usize,
    },
    /// A CSV line with an unterminated quote or text after a closing quote.
    #[error("malformed CSV line: {0}")]
    MalformedCsv(String),
    /// An error on a numbered CSV line.
    #[error("line {line}: {source}")]
    AtLine {
        /// 1-based line number.
        line: usize,
        /// The error.
        source: Box<CommError>,
    },
}
