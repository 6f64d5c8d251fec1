//! The command line's grammar: every subcommand, flag and its help (clap). What
//! each command does is in the modules beside this one.

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// The examples `lahar --help` ends with.
pub(crate) const EXAMPLES_HELP: &str = "Examples:
  lahar run                                 the embedded default scenario (3,000 jobs, 512 GPUs)
  lahar init --example baseline-sjf > s.yaml  start from an example (`lahar list examples`)
  lahar run s.yaml --set 'spec.scheduler={baseline: fifo}' --out out/fifo
  lahar run --snapshot cluster.yaml --conf volcano-scheduler.conf --explain team-a/train-0
  lahar diff --snapshot cluster.yaml --conf a.conf --conf b.conf   decisions a conf changes
  lahar compare out/default out/fifo        headline metrics side by side
  lahar sweep examples/sweeps/nodes-by-policy.yaml --out out/sweep --jobs 2
  lahar check out/default --write-baseline baseline.json   then, in CI:
  lahar check out/default --baseline baseline.json   exit 1 when scheduling got worse

Docs: README.md and docs/ (scenario.md, outputs.md, volcano.md, metrics.md)";

#[derive(Parser)]
#[command(
    name = "lahar",
    version = lahar::VERSION,
    about = "Offline discrete-event simulator of Volcano-style batch scheduling on GPU clusters",
    arg_required_else_help = true,
    after_help = EXAMPLES_HELP
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Print a scenario to start from: the embedded default scenario (what `lahar
    /// run` runs without one), or a named example (`--example`).
    Init {
        /// Example name (`lahar list examples` lists them).
        #[arg(long)]
        example: Option<String>,
    },
    /// Print a shell completion script: `lahar completions bash > /etc/bash_completion.d/lahar`,
    /// `lahar completions zsh > ~/.zfunc/_lahar`, `lahar completions fish > ~/.config/fish/completions/lahar.fish`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// List what exists: schedulers, Volcano plugins, job models, GPU models.
    List {
        /// What to list.
        what: lahar::starting::Listing,
    },
    /// Run a scenario (without one: the embedded default scenario) and print a summary.
    Run(RunArgs),
    /// Which decisions change with the conf: run one scenario or snapshot under two
    /// confs (`--conf A --conf B`; with one `--conf`, A is the input's own
    /// scheduler) and show the first session where they differ, the decisions only
    /// one side made there, and the pods that end in a different state. Writes no
    /// files.
    Diff {
        /// Scenario YAML file (without one and without --snapshot: the embedded default).
        scenario: Option<PathBuf>,
        /// A cluster snapshot instead of a scenario (as `lahar run --snapshot`).
        #[arg(long, value_name = "FILE", conflicts_with = "scenario")]
        snapshot: Option<PathBuf>,
        /// A volcano-scheduler.conf: once (B, against the input's own scheduler) or
        /// twice (A, then B).
        #[arg(long, value_name = "FILE", required = true)]
        conf: Vec<PathBuf>,
        /// Stop each run after N scheduling sessions (overrides spec.sessions).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        sessions: Option<u64>,
        #[command(flatten)]
        overrides: OverrideArgs,
    },
    /// Gate a run on a baseline (for CI): compare the headline metrics of a run
    /// directory, or of every cell of a sweep directory, with a baseline file; exit 1
    /// when one moved in its bad direction beyond tolerance. With --write-baseline,
    /// write that file from a run instead.
    #[command(group(clap::ArgGroup::new("mode").required(true).args(["baseline", "write_baseline"])))]
    Check {
        /// Baseline file to check RUN_DIR against.
        #[arg(long, value_name = "FILE")]
        baseline: Option<PathBuf>,
        /// Write the baseline of RUN_DIR to FILE instead of checking.
        #[arg(long, value_name = "FILE")]
        write_baseline: Option<PathBuf>,
        /// Run output directory, or a sweep directory (sweep.json and cells/<cell-id>/).
        run_dir: PathBuf,
        /// Allowed move in the bad direction, in % of |baseline| (METRIC: a headline
        /// key such as jct_s.mean, or `all`; repeatable; default 0%).
        #[arg(long, value_name = "METRIC=P%", conflicts_with = "write_baseline")]
        tolerance: Vec<String>,
        /// What to print on stdout: `table`, or `markdown` (for a CI job summary),
        /// as `lahar compare --format`.
        #[arg(long, value_enum, default_value = "table", conflicts_with = "write_baseline")]
        format: CheckFormat,
        /// The same as `--format markdown` (the flag's name before 0.2).
        #[arg(long, hide = true, conflicts_with_all = ["write_baseline", "format"])]
        markdown: bool,
    },
    /// Put several runs side by side: headline metrics with the relative difference
    /// to the first run (terminal table; compare.csv, compare.md and overlay plots
    /// in --out).
    Compare {
        /// Run output directories (the first is the baseline).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Where to write compare.csv, compare.md and plots/.
        #[arg(long, default_value = "compare")]
        out: PathBuf,
        /// What to print on stdout.
        #[arg(long, value_enum, default_value = "table")]
        format: CompareFormat,
        #[command(flatten)]
        plot: PlotArgs,
    },
    /// Write one self-contained report.html (plots inline) for one or more runs.
    Report {
        /// Run output directories.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Report file (default: DIR/report.html for one run, ./report.html for several).
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        plot: PlotArgs,
    },
    /// Run a sweep: scenario cells over a grid of field overrides and seeds, in
    /// parallel, sharded, resumable (`lahar sweep merge` joins shard directories).
    #[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
    Sweep(SweepArgs),
    /// Check a scenario and report every problem with its location.
    Validate {
        /// Scenario YAML file.
        #[arg(required_unless_present = "snapshot")]
        scenario: Option<PathBuf>,
        /// Check a cluster snapshot instead (as `lahar run --snapshot` reads it).
        #[arg(long, value_name = "FILE", conflicts_with = "scenario")]
        snapshot: Option<PathBuf>,
        /// With this volcano-scheduler.conf (overrides spec.scheduler).
        #[arg(long, value_name = "FILE")]
        conf: Option<PathBuf>,
        #[command(flatten)]
        overrides: OverrideArgs,
        /// Treat every warning as an error (exit 2).
        #[arg(long)]
        strict: bool,
    },
    /// Collective cost tables from the NCCL-like model (like nccl-tests), or the
    /// model evaluated on every row of a calibration-format CSV (`--rows`).
    Nccl(NcclArgs),
    /// Look into a recorded trace (SWF, openb, Philly, PAI, Helios, canonical; the
    /// Azure LLM and BurstGPT request traces) or convert a job trace to lahar's
    /// canonical CSV.
    #[command(subcommand)]
    Trace(TraceCommand),
}

/// `lahar run`'s arguments.
#[derive(clap::Args)]
pub(crate) struct RunArgs {
    /// Scenario YAML file.
    pub(crate) scenario: Option<PathBuf>,
    /// Run a cluster snapshot instead of a scenario: what `kubectl get
    /// nodes,pods,podgroups,queues,hypernodes,priorityclasses -A -o yaml` prints
    /// (its nodes, queues, HyperNodes, running and pending pods).
    #[arg(long, value_name = "FILE", conflicts_with = "scenario")]
    pub(crate) snapshot: Option<PathBuf>,
    /// Schedule with this volcano-scheduler.conf (overrides spec.scheduler).
    #[arg(long, value_name = "FILE")]
    pub(crate) conf: Option<PathBuf>,
    /// Output directory (overrides spec.output.dir).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Stop after N scheduling sessions (overrides spec.sessions).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) sessions: Option<u64>,
    /// Print nothing on success.
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// Also write plots (SVG and PNG) into <out>/plots/.
    #[arg(long)]
    pub(crate) plots: bool,
    #[command(flatten)]
    pub(crate) plot: PlotArgs,
    /// Write only these row files (comma-separated: jobs, pods, timeseries,
    /// queues, decisions, events); summary.json and summary.csv are always
    /// written. Default: all.
    #[arg(long, value_name = "LIST")]
    pub(crate) outputs: Option<String>,
    /// The row files' format: csv (the default), or parquet (`<name>.parquet`,
    /// the CSV's columns typed: text as strings, numbers as integers or
    /// doubles, an empty number as null; summary.json and summary.csv stay).
    #[arg(long, value_name = "FORMAT", value_parser = ["csv", "parquet"], default_value = "csv")]
    pub(crate) format: String,
    /// Explain a pod's placement, or every pod of a job (namespace/name or a
    /// unique name; repeatable): writes explain.csv with per-node predicate
    /// results and plugin scores (its job's other pods too), and prints each
    /// pod's node × plugin table and what keeps a waiting gang waiting.
    #[arg(long, value_name = "POD")]
    pub(crate) explain: Vec<String>,
    /// Keep explain.csv rows only for simulated times FROM..UNTIL (durations:
    /// `2h..3h`, `..30m`, `1d..`); the summary printed at the end still counts
    /// every session.
    #[arg(long, value_name = "FROM..UNTIL", requires = "explain")]
    pub(crate) explain_window: Option<String>,
    /// Walk everything in every session, as Volcano does, instead of skipping work
    /// that provably cannot change a decision (same outputs, slower; for checking).
    #[arg(long)]
    pub(crate) exhaustive: bool,
    /// Let the conf's `extender` plugins call servers on other machines (by
    /// default only loopback addresses: a conf copied from a cluster would send
    /// the simulated cluster's state to its extender).
    #[arg(long)]
    pub(crate) allow_remote_extender: bool,
    /// Replace the outputs of another scenario in the output directory (by
    /// default refused: its .lahar marker names the scenario that wrote them).
    #[arg(long)]
    pub(crate) force: bool,
    #[command(flatten)]
    pub(crate) overrides: OverrideArgs,
    /// Treat every warning (skipped rows, jobs that can never be placed...) as an
    /// error: exit 2 before running.
    #[arg(long)]
    pub(crate) strict: bool,
}

#[derive(clap::Args)]
pub(crate) struct SweepArgs {
    #[command(subcommand)]
    pub(crate) command: Option<SweepCommand>,
    /// Sweep file (`kind: Sweep`, docs/sweeps.md).
    #[arg(required = true)]
    pub(crate) sweep: Option<PathBuf>,
    /// Output directory.
    #[arg(long, required = true)]
    pub(crate) out: Option<PathBuf>,
    /// Cells run at once (default: all cores).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) jobs: Option<u64>,
    /// Run only the cells without finished outputs in --out.
    #[arg(long)]
    pub(crate) resume: bool,
    /// Run shard K of N (K from 1 to N; cell i, counted from 0, belongs to shard
    /// i mod N + 1). Without it, the shard comes from SLURM_ARRAY_TASK_ID,
    /// JOB_COMPLETION_INDEX or VC_TASK_INDEX.
    #[arg(long, value_name = "K/N")]
    pub(crate) shard: Option<String>,
    /// Number of shards, for array jobs whose environment does not say it
    /// (Kubernetes Indexed Jobs; else LAHAR_SHARDS).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) shards: Option<u64>,
    /// Each cell writes only these row files (as `lahar run --outputs`); every
    /// cell's summary is always written. Default: all.
    #[arg(long, value_name = "LIST")]
    pub(crate) outputs: Option<String>,
    /// Print nothing on success.
    #[arg(long, short)]
    pub(crate) quiet: bool,
    #[command(flatten)]
    pub(crate) plot: PlotArgs,
}

#[derive(Subcommand)]
pub(crate) enum SweepCommand {
    /// Join shard output directories into the files a single-machine run writes.
    Merge {
        /// Shard output directories.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Where the merged sweep goes (may be one of the shard directories).
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        plot: PlotArgs,
    },
}

/// How plots are drawn.
#[derive(clap::Args, Clone, Debug, Default)]
pub(crate) struct PlotArgs {
    /// `screen` (each plot's own size, with a title) or `paper` (300 dpi at a
    /// column's or a page's width, no title: the caption says it, every line told
    /// apart by its dash as well as its color).
    #[arg(long, value_enum, default_value = "screen", value_name = "STYLE")]
    pub(crate) plot_style: PlotStyleArg,
    /// Every plot's size in pixels, WIDTHxHEIGHT (default: each plot's own in the
    /// style).
    #[arg(long, value_name = "WxH", value_parser = lahar_reports::plots::PlotStyle::parse_size)]
    pub(crate) plot_size: Option<(u32, u32)>,
    /// Tick-label size in pixels; titles, legends, margins and lines scale with it
    /// (default: 14 on screen, 32 for a paper).
    #[arg(long, value_name = "PX", value_parser = parse_font_size)]
    pub(crate) plot_font_size: Option<u32>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum PlotStyleArg {
    #[default]
    Screen,
    Paper,
}

pub(crate) fn parse_font_size(s: &str) -> Result<u32, String> {
    let n: u32 = s.trim().parse().map_err(|_| format!("`{s}` is not a whole number of pixels"))?;
    lahar_reports::plots::PlotStyle::check_font(n)
}

impl PlotArgs {
    pub(crate) fn style(&self) -> lahar_reports::plots::PlotStyle {
        lahar_reports::plots::PlotStyle {
            paper: self.plot_style == PlotStyleArg::Paper,
            size: self.plot_size,
            font: self.plot_font_size,
        }
    }
    /// Whether any plot option was given.
    pub(crate) fn given(&self) -> bool {
        self.plot_style != PlotStyleArg::Screen || self.plot_size.is_some() || self.plot_font_size.is_some()
    }
}

/// Scenario fields changed from the command line.
#[derive(clap::Args)]
pub(crate) struct OverrideArgs {
    /// The scenario's seed (overrides spec.seed).
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// Set a scenario field: PATH is dotted with list indices
    /// (`spec.cluster.nodeGroups[0].count`), VALUE is YAML
    /// (`--set 'spec.scheduler={baseline: sjf}'`). Repeatable; applied in order.
    #[arg(long, value_name = "PATH=VALUE")]
    pub(crate) set: Vec<String>,
}

impl OverrideArgs {
    /// What `lahar run` runs: a snapshot (`--snapshot`) or a scenario (the embedded
    /// default without a path), `--conf` setting its scheduler before the other
    /// overrides ([`lahar::input::load`]).
    pub(crate) fn load_run(
        &self,
        scenario: Option<&std::path::Path>,
        snapshot: Option<&std::path::Path>,
        conf: Option<&std::path::Path>,
        sessions: Option<u64>,
    ) -> Result<lahar::scenario::Scenario, lahar::scenario::ScenarioError> {
        use lahar::input::Source;
        let source = match (snapshot, scenario) {
            (Some(s), _) => Source::Snapshot(s),
            (None, Some(p)) => Source::File(p),
            (None, None) => Source::Default,
        };
        lahar::input::load(&lahar::input::Load { source, conf, sessions, set: &self.set, seed: self.seed })
    }
}

#[derive(Subcommand)]
pub(crate) enum TraceCommand {
    /// Rows read, jobs made, rows skipped by reason, time span, GPUs per job,
    /// run-time percentiles and jobs per queue; for a request trace, requests,
    /// span, mean and busiest-minute rates and token percentiles.
    Inspect {
        #[command(flatten)]
        trace: TraceFileArgs,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Write the jobs of a trace as lahar's canonical trace CSV.
    Convert {
        #[command(flatten)]
        trace: TraceFileArgs,
        /// Output CSV file.
        #[arg(long)]
        out: PathBuf,
    },
}

#[derive(clap::Args)]
pub(crate) struct TraceFileArgs {
    /// Trace file.
    pub(crate) file: PathBuf,
    /// swf, openb, philly, pai, helios or lahar (alias canonical); azure-llm,
    /// burstgpt or mooncake (request traces, `inspect` only); default: guessed
    /// from the file name as the traces ship them.
    #[arg(long)]
    pub(crate) format: Option<String>,
    /// Fail on the first invalid row (naming file, line and row) instead of
    /// skipping and counting it.
    #[arg(long)]
    pub(crate) strict: bool,
    /// CPU per GPU for traces that record none (Philly), a Kubernetes quantity.
    #[arg(long)]
    pub(crate) cpu_per_gpu: Option<String>,
    /// Memory per GPU for traces that record none (Philly, Helios), a quantity.
    #[arg(long)]
    pub(crate) memory_per_gpu: Option<String>,
    /// SWF: processors per pod (default: MaxProcs/MaxNodes from the header, else 1).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) procs_per_pod: Option<u32>,
    /// Time origin, whole seconds of the trace's clock (default: earliest submit).
    #[arg(long, allow_negative_numbers = true)]
    pub(crate) origin: Option<i64>,
    /// openb reduced schema (no time columns): pod i is submitted at i × this
    /// duration (`1s`, `5m`...; default 1s).
    #[arg(long)]
    pub(crate) untimed_interval: Option<String>,
    /// openb reduced schema: run time of every pod (default 1000000000s).
    #[arg(long)]
    pub(crate) untimed_duration: Option<String>,
}

impl From<TraceFileArgs> for lahar::trace_cmd::TraceArgs {
    fn from(a: TraceFileArgs) -> Self {
        lahar::trace_cmd::TraceArgs {
            path: a.file,
            format: a.format,
            strict: a.strict,
            cpu_per_gpu: a.cpu_per_gpu,
            memory_per_gpu: a.memory_per_gpu,
            procs_per_pod: a.procs_per_pod,
            origin: a.origin,
            untimed_interval: a.untimed_interval,
            untimed_duration: a.untimed_duration,
        }
    }
}

/// Output format of `lahar check` on stdout.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CheckFormat {
    /// Aligned table.
    Table,
    /// Markdown table.
    Markdown,
}

/// Output format of `lahar compare` on stdout.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CompareFormat {
    /// Aligned table.
    Table,
    /// Markdown table.
    Markdown,
    /// CSV.
    Csv,
}

#[derive(clap::Args)]
pub(crate) struct NcclArgs {
    /// Evaluate every row of this CSV (columns as examples/calibration/nccl-reference.csv).
    #[arg(long)]
    pub(crate) rows: Option<PathBuf>,
    /// YAML map of comm constants overriding the defaults (names as in docs/nccl-model.md).
    #[arg(long, value_name = "FILE")]
    pub(crate) constants: Option<PathBuf>,
    /// Where to write the evaluated rows (default: stdout).
    #[arg(long, requires = "rows")]
    pub(crate) out: Option<PathBuf>,
    /// GPU model.
    #[arg(long, default_value = "H100-SXM-80G")]
    pub(crate) gpu: String,
    /// Intra-node link: nvswitch-nvlink3|4|5, nvlink2-hybrid-cube-mesh, nvlink-bridge-nv12, pcie-gen5, pcie-sys.
    #[arg(long, default_value = "nvswitch-nvlink4")]
    pub(crate) intra: String,
    /// GPUs of the job on each node.
    #[arg(long, default_value_t = 8)]
    pub(crate) gpus_per_node: u32,
    /// Nodes.
    #[arg(long, default_value_t = 1)]
    pub(crate) nodes: u32,
    /// NIC line rate per GPU in Gbit/s.
    #[arg(long, default_value_t = 400.0)]
    pub(crate) nic_gbps: f64,
    /// Network fabric: ib, roce, efa, efa-v4, tcpxo.
    #[arg(long, default_value = "ib")]
    pub(crate) net: String,
    /// Collective: allreduce, allgather, reducescatter, broadcast, alltoall.
    #[arg(long, default_value = "allreduce")]
    pub(crate) collective: String,
    /// Algorithm: auto, or one to force (ring, tree, nvls, nvlstree, pat...).
    #[arg(long, default_value = "auto")]
    pub(crate) algo: String,
    /// Smallest size (K, M, G suffixes are powers of 1024).
    #[arg(long, short = 'b', default_value = "8")]
    pub(crate) min_bytes: String,
    /// Largest size.
    #[arg(long, short = 'e', default_value = "8G")]
    pub(crate) max_bytes: String,
    /// Size multiplication factor.
    #[arg(long, short = 'f', default_value_t = 2)]
    pub(crate) factor: u64,
    /// Highest switch tier the job crosses (0 = one leaf).
    #[arg(long, default_value_t = 0)]
    pub(crate) tier: u32,
    /// Oversubscription of that tier.
    #[arg(long, default_value_t = 1.0)]
    pub(crate) oversubscription: f64,
}
