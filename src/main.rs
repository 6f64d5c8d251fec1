//! The `lahar` command line. Thin: parsing and exit codes; the work is in the library.
//! Exit codes: 0 ok, 1 run failed, 2 bad input or usage.
//! Output goes through `out!`/`outln!` and `errln!`, which never panic on a closed
//! or full stream; the print macros, which do, are refused.
#![deny(clippy::print_stderr, clippy::print_stdout)]

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// The examples `lahar --help` ends with.
const EXAMPLES_HELP: &str = "Examples:
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
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
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
    Run {
        /// Scenario YAML file.
        scenario: Option<PathBuf>,
        /// Run a cluster snapshot instead of a scenario: what `kubectl get
        /// nodes,pods,podgroups,queues,hypernodes,priorityclasses -A -o yaml` prints
        /// (its nodes, queues, HyperNodes, running and pending pods).
        #[arg(long, value_name = "FILE", conflicts_with = "scenario")]
        snapshot: Option<PathBuf>,
        /// Schedule with this volcano-scheduler.conf (overrides spec.scheduler).
        #[arg(long, value_name = "FILE")]
        conf: Option<PathBuf>,
        /// Output directory (overrides spec.output.dir).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Stop after N scheduling sessions (overrides spec.sessions).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        sessions: Option<u64>,
        /// Print nothing on success.
        #[arg(long, short)]
        quiet: bool,
        /// Also write plots (SVG and PNG) into <out>/plots/.
        #[arg(long)]
        plots: bool,
        #[command(flatten)]
        plot: PlotArgs,
        /// Explain a pod's placement, or every pod of a job (namespace/name or a
        /// unique name; repeatable): writes explain.csv with per-node predicate
        /// results and plugin scores (its job's other pods too), and prints each
        /// pod's node × plugin table and what keeps a waiting gang waiting.
        #[arg(long, value_name = "POD")]
        explain: Vec<String>,
        /// Keep explain.csv rows only for simulated times FROM..UNTIL (durations:
        /// `2h..3h`, `..30m`, `1d..`); the summary printed at the end still counts
        /// every session.
        #[arg(long, value_name = "FROM..UNTIL", requires = "explain")]
        explain_window: Option<String>,
        /// Walk everything in every session, as Volcano does, instead of skipping work
        /// that provably cannot change a decision (same outputs, slower; for checking).
        #[arg(long)]
        exhaustive: bool,
        /// Let the conf's `extender` plugins call servers on other machines (by
        /// default only loopback addresses: a conf copied from a cluster would send
        /// the simulated cluster's state to its extender).
        #[arg(long)]
        allow_remote_extender: bool,
        /// Replace the outputs of another scenario in the output directory (by
        /// default refused: its .lahar marker names the scenario that wrote them).
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        overrides: OverrideArgs,
        /// Treat every warning (skipped rows, jobs that can never be placed...) as an
        /// error: exit 2 before running.
        #[arg(long)]
        strict: bool,
    },
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
    /// Look into a recorded trace (SWF, openb, Philly, PAI, Helios, canonical) or
    /// convert it to lahar's canonical CSV.
    #[command(subcommand)]
    Trace(TraceCommand),
}

#[derive(clap::Args)]
struct SweepArgs {
    #[command(subcommand)]
    command: Option<SweepCommand>,
    /// Sweep file (`kind: Sweep`, docs/sweeps.md).
    #[arg(required = true)]
    sweep: Option<PathBuf>,
    /// Output directory.
    #[arg(long, required = true)]
    out: Option<PathBuf>,
    /// Cells run at once (default: all cores).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    jobs: Option<u64>,
    /// Run only the cells without finished outputs in --out.
    #[arg(long)]
    resume: bool,
    /// Run shard K of N (K from 1 to N; cell i, counted from 0, belongs to shard
    /// i mod N + 1). Without it, the shard comes from SLURM_ARRAY_TASK_ID,
    /// JOB_COMPLETION_INDEX or VC_TASK_INDEX.
    #[arg(long, value_name = "K/N")]
    shard: Option<String>,
    /// Number of shards, for array jobs whose environment does not say it
    /// (Kubernetes Indexed Jobs; else LAHAR_SHARDS).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    shards: Option<u64>,
    /// Print nothing on success.
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    plot: PlotArgs,
}

#[derive(Subcommand)]
enum SweepCommand {
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
struct PlotArgs {
    /// `screen` (each plot's own size, with a title) or `paper` (300 dpi at a
    /// column's or a page's width, no title: the caption says it, every line told
    /// apart by its dash as well as its color).
    #[arg(long, value_enum, default_value = "screen", value_name = "STYLE")]
    plot_style: PlotStyleArg,
    /// Every plot's size in pixels, WIDTHxHEIGHT (default: each plot's own in the
    /// style).
    #[arg(long, value_name = "WxH", value_parser = lahar_reports::plots::PlotStyle::parse_size)]
    plot_size: Option<(u32, u32)>,
    /// Tick-label size in pixels; titles, legends, margins and lines scale with it
    /// (default: 14 on screen, 32 for a paper).
    #[arg(long, value_name = "PX", value_parser = parse_font_size)]
    plot_font_size: Option<u32>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
enum PlotStyleArg {
    #[default]
    Screen,
    Paper,
}

fn parse_font_size(s: &str) -> Result<u32, String> {
    let n: u32 = s.trim().parse().map_err(|_| format!("`{s}` is not a whole number of pixels"))?;
    lahar_reports::plots::PlotStyle::check_font(n)
}

impl PlotArgs {
    fn style(&self) -> lahar_reports::plots::PlotStyle {
        lahar_reports::plots::PlotStyle {
            paper: self.plot_style == PlotStyleArg::Paper,
            size: self.plot_size,
            font: self.plot_font_size,
        }
    }
    /// Whether any plot option was given.
    fn given(&self) -> bool {
        self.plot_style != PlotStyleArg::Screen || self.plot_size.is_some() || self.plot_font_size.is_some()
    }
}

/// Scenario fields changed from the command line.
#[derive(clap::Args)]
struct OverrideArgs {
    /// The scenario's seed (overrides spec.seed).
    #[arg(long)]
    seed: Option<u64>,
    /// Set a scenario field: PATH is dotted with list indices
    /// (`spec.cluster.nodeGroups[0].count`), VALUE is YAML
    /// (`--set 'spec.scheduler={baseline: sjf}'`). Repeatable; applied in order.
    #[arg(long, value_name = "PATH=VALUE")]
    set: Vec<String>,
}

impl OverrideArgs {
    /// The overrides, `--set` first and `--seed` last, or the first malformed one.
    fn parse(&self) -> Result<Vec<lahar::overrides::Override>, lahar::scenario::ScenarioError> {
        let mut out = Vec::new();
        for arg in &self.set {
            let o = lahar::overrides::Override::from_set(arg)
                .map_err(|m| lahar::scenario::ScenarioError::one("<command line>", None, "--set", m))?;
            out.push(o);
        }
        if let Some(seed) = self.seed {
            out.push(lahar::overrides::Override {
                file: "<command line>".into(),
                at: None,
                origin: format!("--seed {seed}"),
                path: lahar::overrides::FieldPath::parse("spec.seed").expect("a valid path"),
                value: lahar::overrides::parse_value(&seed.to_string()).expect("an integer"),
            });
        }
        Ok(out)
    }

    /// What `lahar run` runs: a snapshot (`--snapshot`) or a scenario (the embedded
    /// default without a path), `--conf` setting its scheduler before the other
    /// overrides.
    fn load_run(
        &self,
        scenario: Option<&std::path::Path>,
        snapshot: Option<&std::path::Path>,
        conf: Option<&std::path::Path>,
        sessions: Option<u64>,
    ) -> Result<lahar::scenario::Scenario, lahar::scenario::ScenarioError> {
        let mut overrides = Vec::new();
        let mut set = |origin: String, path: &str, value: String| {
            overrides.push(lahar::overrides::Override {
                file: "<command line>".into(),
                at: None,
                origin,
                path: lahar::overrides::FieldPath::parse(path).expect("a valid path"),
                value: lahar::overrides::parse_value(&value).expect("JSON is YAML"),
            })
        };
        // `--sessions` is the scenario's session limit from the start (warnings say so).
        if let Some(n) = sessions {
            set(format!("--sessions {n}"), "spec.sessions", n.to_string());
        }
        if let Some(c) = conf {
            // Relative to the scenario's folder, where the scenario's paths resolve:
            // the recorded scenario (and its hash) is the same in every folder.
            let base = snapshot.or(scenario).and_then(std::path::Path::parent).unwrap_or(std::path::Path::new(""));
            let rel = lahar_core::files::relative_to(c, base);
            let value = serde_json::json!({ "conf": rel.display().to_string() });
            set(format!("--conf {}", c.display()), "spec.scheduler", value.to_string());
        }
        overrides.extend(self.parse()?);
        match (snapshot, scenario) {
            (Some(s), _) => lahar::overrides::load_snapshot(s, &overrides),
            (None, Some(p)) => lahar::overrides::load_file_with(p, &overrides),
            (None, None) if overrides.is_empty() => Ok(lahar::scenario::load_default()),
            (None, None) => lahar::overrides::load_with(
                lahar::scenario::DEFAULT_SCENARIO,
                lahar::scenario::DEFAULT_SCENARIO_FILE,
                std::path::Path::new(""),
                &overrides,
            ),
        }
    }
}

#[derive(Subcommand)]
enum TraceCommand {
    /// Rows read, jobs made, rows skipped by reason, time span, GPUs per job,
    /// run-time percentiles and jobs per queue.
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
struct TraceFileArgs {
    /// Trace file.
    file: PathBuf,
    /// swf, openb, philly, pai, helios or lahar (alias canonical); default: guessed
    /// from the file name as the traces ship them.
    #[arg(long)]
    format: Option<String>,
    /// Fail on the first invalid row (naming file, line and row) instead of
    /// skipping and counting it.
    #[arg(long)]
    strict: bool,
    /// CPU per GPU for traces that record none (Philly), a Kubernetes quantity.
    #[arg(long)]
    cpu_per_gpu: Option<String>,
    /// Memory per GPU for traces that record none (Philly, Helios), a quantity.
    #[arg(long)]
    memory_per_gpu: Option<String>,
    /// SWF: processors per pod (default: MaxProcs/MaxNodes from the header, else 1).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    procs_per_pod: Option<u32>,
    /// Time origin, whole seconds of the trace's clock (default: earliest submit).
    #[arg(long, allow_negative_numbers = true)]
    origin: Option<i64>,
    /// openb reduced schema (no time columns): pod i is submitted at i × this
    /// duration (`1s`, `5m`...; default 1s).
    #[arg(long)]
    untimed_interval: Option<String>,
    /// openb reduced schema: run time of every pod (default 1000000000s).
    #[arg(long)]
    untimed_duration: Option<String>,
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
enum CheckFormat {
    /// Aligned table.
    Table,
    /// Markdown table.
    Markdown,
}

/// Output format of `lahar compare` on stdout.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum CompareFormat {
    /// Aligned table.
    Table,
    /// Markdown table.
    Markdown,
    /// CSV.
    Csv,
}

#[derive(clap::Args)]
struct NcclArgs {
    /// Evaluate every row of this CSV (columns as examples/calibration/nccl-reference.csv).
    #[arg(long)]
    rows: Option<PathBuf>,
    /// YAML map of comm constants overriding the defaults (names as in docs/nccl-model.md).
    #[arg(long, value_name = "FILE")]
    constants: Option<PathBuf>,
    /// Where to write the evaluated rows (default: stdout).
    #[arg(long, requires = "rows")]
    out: Option<PathBuf>,
    /// GPU model.
    #[arg(long, default_value = "H100-SXM-80G")]
    gpu: String,
    /// Intra-node link: nvswitch-nvlink3|4|5, nvlink2-hybrid-cube-mesh, nvlink-bridge-nv12, pcie-gen5, pcie-sys.
    #[arg(long, default_value = "nvswitch-nvlink4")]
    intra: String,
    /// GPUs of the job on each node.
    #[arg(long, default_value_t = 8)]
    gpus_per_node: u32,
    /// Nodes.
    #[arg(long, default_value_t = 1)]
    nodes: u32,
    /// NIC line rate per GPU in Gbit/s.
    #[arg(long, default_value_t = 400.0)]
    nic_gbps: f64,
    /// Network fabric: ib, roce, efa, efa-v4, tcpxo.
    #[arg(long, default_value = "ib")]
    net: String,
    /// Collective: allreduce, allgather, reducescatter, broadcast, alltoall.
    #[arg(long, default_value = "allreduce")]
    collective: String,
    /// Algorithm: auto, or one to force (ring, tree, nvls, nvlstree, pat...).
    #[arg(long, default_value = "auto")]
    algo: String,
    /// Smallest size (K, M, G suffixes are powers of 1024).
    #[arg(long, short = 'b', default_value = "8")]
    min_bytes: String,
    /// Largest size.
    #[arg(long, short = 'e', default_value = "8G")]
    max_bytes: String,
    /// Size multiplication factor.
    #[arg(long, short = 'f', default_value_t = 2)]
    factor: u64,
    /// Highest switch tier the job crosses (0 = one leaf).
    #[arg(long, default_value_t = 0)]
    tier: u32,
    /// Oversubscription of that tier.
    #[arg(long, default_value_t = 1.0)]
    oversubscription: f64,
}

/// Writes to stderr. A stderr that cannot be written (`2>/dev/full`, a closed
/// pipe) loses the message but never the exit code: the message is dropped, the
/// program goes on (a panic would exit 101 instead of the code that matters).
fn emit_err(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.flush());
}

/// `eprintln!` through [`emit_err`] (`eprintln!` panics when stderr fails).
macro_rules! errln {
    ($($t:tt)*) => { emit_err(format_args!("{}\n", format_args!($($t)*))) };
}

/// Writes to stdout. A reader that went away (`| head`, `| true`) ends the program
/// quietly with success, as Unix tools do; another write error is reported.
fn emit(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        errln!("error: cannot write to standard output: {e}");
        std::process::exit(1);
    }
}

/// `print!` through [`emit`].
macro_rules! out {
    ($($t:tt)*) => { emit(format_args!($($t)*)) };
}

/// `println!` through [`emit`].
macro_rules! outln {
    ($($t:tt)*) => { emit(format_args!("{}\n", format_args!($($t)*))) };
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Init { example } => match lahar::starting::init(example.as_deref()) {
            Ok(text) => {
                out!("{text}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                errln!("error: --example: {e}");
                ExitCode::from(2)
            }
        },
        Command::Completions { shell } => {
            use clap::CommandFactory;
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "lahar", &mut buf);
            out!("{}", String::from_utf8_lossy(&buf));
            ExitCode::SUCCESS
        }
        Command::List { what } => {
            for line in lahar::starting::list(what) {
                outln!("{line}");
            }
            ExitCode::SUCCESS
        }
        Command::Run {
            scenario,
            snapshot,
            conf,
            out,
            sessions,
            quiet,
            plots,
            plot,
            explain,
            explain_window,
            exhaustive,
            allow_remote_extender,
            force,
            overrides,
            strict,
        } => {
            let explain_window = match explain_window.as_deref().map(parse_window).transpose() {
                Ok(w) => w,
                Err(m) => {
                    return input_error(&lahar::scenario::ScenarioError::one(
                        "<command line>",
                        None,
                        "--explain-window",
                        m,
                    ));
                }
            };
            if plot.given() && !plots {
                errln!(
                    "error: --plot-style, --plot-size and --plot-font-size shape the plots --plots writes: add --plots"
                );
                return ExitCode::from(2);
            }
            let s = match overrides.load_run(scenario.as_deref(), snapshot.as_deref(), conf.as_deref(), sessions) {
                Ok(s) => s,
                Err(e) => return input_error(&e),
            };
            if strict && !s.warnings.is_empty() {
                return strict_error(&s.warnings);
            }
            let warnings = s.warnings.clone();
            let opts = lahar::RunOptions {
                out_dir: out,
                sessions,
                no_write: false,
                progress: !quiet,
                plots: plots.then(|| plot.style()),
                explain,
                explain_window,
                exhaustive,
                allow_remote_extender,
                force,
                keep_decisions: snapshot.is_some().then_some(lahar::operator::DECISIONS_SHOWN),
                snapshot: snapshot.is_some(),
            };
            install_interrupt();
            match lahar::run_any(s, &opts) {
                Ok(lahar::Ran::Placement(report)) => {
                    if !quiet {
                        outln!("{}", lahar::placement::table(&report));
                    }
                    print_warnings(&warnings);
                    ExitCode::SUCCESS
                }
                Ok(lahar::Ran::Run(report)) => {
                    if !quiet && snapshot.is_some() {
                        // An operator's question: what the sessions did, not research metrics.
                        if let Some(k) = &report.decisions {
                            outln!("{}", lahar::operator::decisions_table(k));
                        }
                        let sessions = report.summary.sessions;
                        outln!(
                            "{}",
                            lahar::operator::snapshot_summary(&report.output, report.decisions.as_ref(), sessions)
                        );
                        outln!("outputs: {}", report.out_dir.display());
                    } else if !quiet {
                        outln!("{}", lahar::summary_table(&report));
                        for line in lahar::explain_summary::lines(&report.output, &report.explained) {
                            outln!("explain: {line}");
                        }
                    }
                    if !quiet && !report.explained.is_empty() {
                        outln!("\n{}", lahar::operator::explain_report(&report.output, &report.explained));
                    }
                    let all: Vec<lahar::scenario::Warning> =
                        warnings.iter().chain(&report.run_warnings).cloned().collect();
                    print_warnings(&all);
                    if let Some(i) = &report.meta.interrupted {
                        errln!(
                            "interrupted ({}) at simulated time {:.2} h, {} of {} jobs ended: the files in {} are whole up to there and summary.json says `interrupted`",
                            i.signal,
                            i.at_s / 3600.0,
                            i.jobs_ended,
                            i.jobs,
                            report.out_dir.display()
                        );
                        return ExitCode::from(lahar::interrupt::exit_code());
                    }
                    // The process exits next and the OS takes the memory back at once;
                    // freeing a long run's millions of allocations one by one took
                    // half a second at a million jobs.
                    std::mem::forget(report);
                    ExitCode::SUCCESS
                }
                Err(lahar::RunError::Input(e)) => input_error(&e),
                // The input changed under the run: still the input's fault.
                Err(lahar::RunError::Source(m) | lahar::RunError::Output(m)) => {
                    errln!("error: {m}");
                    ExitCode::from(2)
                }
                Err(e) => {
                    errln!("error: {e}");
                    ExitCode::from(1)
                }
            }
        }
        Command::Validate { scenario, snapshot, conf, overrides, strict } => {
            match overrides.load_run(scenario.as_deref(), snapshot.as_deref(), conf.as_deref(), None) {
                Ok(s) if strict && !s.warnings.is_empty() => strict_error(&s.warnings),
                Ok(s) => {
                    let file = scenario.or(snapshot).unwrap_or_default();
                    match &s.placement {
                        Some(p) => outln!(
                            "{}: ok (placement: {} nodes, {} pods listed, demand {}, policy {})",
                            file.display(),
                            s.cluster.len(),
                            p.pods.len(),
                            p.demand,
                            p.policy.name()
                        ),
                        None => outln!(
                            "{}: ok ({} nodes, {} queues, {} jobs)",
                            file.display(),
                            s.cluster.len(),
                            s.queues.len(),
                            s.workload.count
                        ),
                    }
                    print_warnings(&s.warnings);
                    ExitCode::SUCCESS
                }
                Err(e) => input_error(&e),
            }
        }
        Command::Sweep(a) => sweep(a),
        Command::Nccl(a) => nccl(a),
        Command::Trace(t) => trace(t),
        Command::Diff { scenario, snapshot, conf, sessions, overrides } => {
            diff(scenario.as_deref(), snapshot.as_deref(), &conf, sessions, &overrides)
        }
        Command::Check { baseline, write_baseline, run_dir, tolerance, format, markdown } => {
            let markdown = markdown || format == CheckFormat::Markdown;
            let done = match (baseline, write_baseline) {
                (_, Some(file)) => lahar::check::write_baseline(&file, &run_dir).map(|s| {
                    outln!("{}: baseline of {} ({})", file.display(), run_dir.display(), s.extent());
                    ExitCode::SUCCESS
                }),
                (Some(file), None) => lahar::check::check(&file, &run_dir, &tolerance).map(|c| {
                    if let Some(what) = &c.other_inputs {
                        errln!(
                            "warning: the baseline and the run are of different inputs ({what}): the check compares two experiments; write the baseline again if the inputs changed on purpose"
                        );
                    }
                    if markdown {
                        out!("{}\n", c.to_markdown());
                    } else {
                        outln!("{}", c.to_terminal());
                    }
                    outln!("{}", c.verdict_line());
                    if c.passed() { ExitCode::SUCCESS } else { ExitCode::from(1) }
                }),
                // clap requires one of the two.
                (None, None) => {
                    Err(lahar::check::CheckError::Input("give --baseline FILE or --write-baseline FILE".into()))
                }
            };
            done.unwrap_or_else(|e| {
                errln!("error: {e}");
                ExitCode::from(e.exit_code())
            })
        }
        Command::Compare { dirs, out, format, plot } => match lahar::report_cmd::compare(&dirs, &out, &plot.style()) {
            Ok(c) => {
                match format {
                    CompareFormat::Table => outln!("{}", c.to_terminal()),
                    CompareFormat::Markdown => out!("{}", c.to_markdown()),
                    CompareFormat::Csv => out!("{}", c.to_csv()),
                }
                ExitCode::SUCCESS
            }
            Err(e) => report_error(&e),
        },
        Command::Report { dirs, out, plot } if dirs.len() == 1 && dirs[0].join("sweep.json").is_file() => {
            if plot.given() {
                errln!(
                    "error: {}: a sweep's report shows the plots the sweep drew; draw them in another style with `lahar sweep ... --plot-style`",
                    dirs[0].display()
                );
                return ExitCode::from(2);
            }
            match lahar::sweep::report::write(&dirs[0], out.as_deref()) {
                Ok(p) => {
                    outln!("{}", p.display());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    errln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Report { dirs, out, plot } => match lahar::report_cmd::report(&dirs, out.as_deref(), &plot.style()) {
            Ok(p) => {
                outln!("{}", p.display());
                ExitCode::SUCCESS
            }
            Err(e) => report_error(&e),
        },
    }
}

/// SIGINT and SIGTERM end `run` and `sweep` cleanly ([`lahar::interrupt`]).
/// `lahar diff`: both sides loaded before either runs (a bad input fails first).
fn diff(
    scenario: Option<&std::path::Path>,
    snapshot: Option<&std::path::Path>,
    conf: &[PathBuf],
    sessions: Option<u64>,
    overrides: &OverrideArgs,
) -> ExitCode {
    let (a, b) = match conf {
        [b] => (None, b),
        [a, b] => (Some(a), b),
        _ => {
            let m =
                format!("give one conf (B, against the input's own scheduler) or two (A, then B), not {}", conf.len());
            return input_error(&lahar::scenario::ScenarioError::one("<command line>", None, "--conf", m));
        }
    };
    let load = |c: Option<&PathBuf>| overrides.load_run(scenario, snapshot, c.map(PathBuf::as_path), sessions);
    let (sa, sb) = match (load(a), load(Some(b))) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(e), _) | (_, Err(e)) => return input_error(&e),
    };
    let name_a =
        a.map_or_else(|| format!("the input's scheduler ({})", sa.scheduler.name()), |p| p.display().to_string());
    let name_b = b.display().to_string();
    let side = |s, label| match lahar::diff::side(s, label) {
        Ok(side) => Ok(side),
        Err(lahar::RunError::Input(e)) => Err(input_error(&e)),
        Err(e) => {
            errln!("error: {e}");
            Err(ExitCode::from(1))
        }
    };
    let (sa, sb) = match (side(sa, name_a), side(sb, name_b)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(c), _) | (_, Err(c)) => return c,
    };
    outln!("{}", lahar::diff::render(&sa, &sb).0);
    ExitCode::SUCCESS
}

fn install_interrupt() {
    if let Err(e) = lahar::interrupt::install() {
        errln!("warning: cannot handle SIGINT/SIGTERM ({e}): an interrupt will cut the outputs short");
    }
}

fn sweep(a: SweepArgs) -> ExitCode {
    use lahar::sweep::{ExecError, Written};
    let exec_error = |e: ExecError| {
        errln!("error: {e}");
        ExitCode::from(match e {
            ExecError::Mismatch(_) => 2,
            ExecError::Io { .. } => 1,
        })
    };
    let tell = |w: &Written, out: &std::path::Path| {
        for (id, e) in &w.failed {
            errln!("error: cell {id} failed: {}", e.lines().next().unwrap_or_default());
        }
        if !w.missing.is_empty() {
            errln!(
                "warning: {} cells have no outputs (first: {}): not run, or their shard was not merged",
                w.missing.len(),
                w.missing[0]
            );
        }
        if !a.quiet {
            outln!(
                "{}: {} cells, {} ok, {} failed, {} missing (sweep.csv, summary.csv, plots/)",
                out.display(),
                w.cells,
                w.ok,
                w.failed.len(),
                w.missing.len()
            );
        }
        if w.failed.is_empty() && w.missing.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) }
    };
    if let Some(SweepCommand::Merge { dirs, out, plot }) = &a.command {
        return match lahar::sweep::merge(dirs, out, &plot.style()) {
            Ok(w) => tell(&w, out),
            Err(e) => exec_error(e),
        };
    }
    let (Some(file), Some(out)) = (&a.sweep, &a.out) else { unreachable!("clap requires both") };
    let sweep = match lahar::sweep::load(file) {
        Ok(s) => s,
        Err(e) => return input_error(&e),
    };
    let usage = |m: String| {
        errln!("error: {m}");
        ExitCode::from(2)
    };
    let shard = match &a.shard {
        Some(t) => match lahar::sweep::Shard::parse(t) {
            Ok(s) => Some(s),
            Err(m) => return usage(m),
        },
        None => {
            let vars: Vec<(String, String)> = std::env::vars().collect();
            match lahar::sweep::Shard::from_env(&vars, a.shards.map(|n| n as usize)) {
                Ok(s) => s,
                Err(m) => return usage(m),
            }
        }
    };
    install_interrupt();
    let opts = lahar::sweep::ExecOptions {
        out: out.clone(),
        jobs: a.jobs.map(|n| n as usize),
        resume: a.resume,
        shard,
        progress: !a.quiet,
        plot_style: a.plot.style(),
    };
    match lahar::sweep::run(&sweep, &opts) {
        Ok((o, Some(w))) => {
            if !a.quiet && o.kept > 0 {
                outln!("resumed: {} cells kept, {} run", o.kept, o.ran);
            }
            tell(&w, out)
        }
        Ok((o, None)) => {
            for (id, e) in &o.failed {
                errln!("error: cell {id} failed: {}", e.lines().next().unwrap_or_default());
            }
            if o.interrupted > 0 {
                errln!(
                    "interrupted ({}): {} cells finished and kept, {} not run (nothing of them is left); `lahar sweep --resume` with the same sweep and --out runs them",
                    lahar::interrupt::signal().unwrap_or("SIGINT"),
                    o.kept + o.ran,
                    o.interrupted
                );
                return ExitCode::from(lahar::interrupt::exit_code());
            }
            if !a.quiet {
                let s = shard.expect("sharded");
                outln!(
                    "{}: shard {s}: {} cells ({} run, {} kept, {} failed); join the shards with `lahar sweep merge`",
                    out.display(),
                    o.cells,
                    o.ran,
                    o.kept,
                    o.failed.len()
                );
            }
            if o.failed.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) }
        }
        Err(e) => exec_error(e),
    }
}

fn trace(t: TraceCommand) -> ExitCode {
    let result = match t {
        TraceCommand::Inspect { trace, json } => lahar::trace_cmd::inspect(&trace.into()).map(|i| {
            if json {
                outln!("{}", i.to_json());
            } else {
                out!("{}", i.to_text());
            }
        }),
        TraceCommand::Convert { trace, out } => lahar::trace_cmd::convert(&trace.into(), &out).map(|r| {
            outln!("{}: {} jobs ({} rows read, {} skipped)", out.display(), r.jobs, r.rows_read, r.skipped_total());
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            errln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

fn report_error(e: &lahar::report_cmd::ReportError) -> ExitCode {
    errln!("error: {e}");
    ExitCode::from(e.exit_code())
}

fn nccl(a: NcclArgs) -> ExitCode {
    let model = match &a.constants {
        None => lahar_core::comm::CommModel::default(),
        Some(f) => match lahar::scenario::load_constants(f).and_then(|c| {
            lahar_core::comm::CommModel::new(c).map_err(|e| {
                lahar::scenario::ScenarioError::one(&f.display().to_string(), None, "constants", e.to_string())
            })
        }) {
            Ok(m) => m,
            Err(e) => return input_error(&e),
        },
    };
    if let Some(rows) = &a.rows {
        return match lahar::nccl::rows(&model, rows, a.out.as_deref()) {
            Ok(_) => ExitCode::SUCCESS,
            Err(e) => input_error(&e),
        };
    }
    let size = |s: &str, flag: &str| {
        lahar::nccl::parse_size(s).map_err(|m| lahar::scenario::ScenarioError::one("<command line>", None, flag, m))
    };
    let args = match (size(&a.min_bytes, "--min-bytes"), size(&a.max_bytes, "--max-bytes")) {
        (Ok(min_bytes), Ok(max_bytes)) => lahar::nccl::TableArgs {
            gpu: a.gpu,
            intra: a.intra,
            gpus_per_node: a.gpus_per_node,
            nodes: a.nodes,
            nic_gbps_per_gpu: a.nic_gbps,
            net: a.net,
            collective: a.collective,
            algo: a.algo,
            min_bytes,
            max_bytes,
            factor: a.factor,
            tier: a.tier,
            oversubscription: a.oversubscription,
        },
        (Err(e), _) | (_, Err(e)) => return input_error(&e),
    };
    match lahar::nccl::table(&model, &args) {
        Ok(t) => {
            out!("{t}");
            ExitCode::SUCCESS
        }
        Err(e) => input_error(&e),
    }
}

/// `FROM..UNTIL` of simulated durations, either side optional.
fn parse_window(text: &str) -> Result<(lahar_core::time::SimTime, lahar_core::time::SimTime), String> {
    let (a, b) = text.split_once("..").ok_or_else(|| format!("`{text}`: expected FROM..UNTIL, e.g. 2h..3h"))?;
    let at = |s: &str, none: u64| -> Result<lahar_core::time::SimTime, String> {
        if s.trim().is_empty() {
            return Ok(lahar_core::time::SimTime(none));
        }
        lahar_core::time::parse_duration(s.trim())
            .map(|d| lahar_core::time::SimTime(d.micros()))
            .map_err(|e| format!("`{text}`: {e}"))
    };
    let (from, until) = (at(a, 0)?, at(b, u64::MAX)?);
    if from >= until {
        return Err(format!("`{text}`: the window is empty (FROM must be before UNTIL)"));
    }
    Ok((from, until))
}

/// Prints the scenario's warnings once, at the end, on stderr.
fn print_warnings(ws: &[lahar::scenario::Warning]) {
    for w in ws {
        errln!("warning: {w}");
    }
    if ws.len() > 1 {
        errln!("{} warnings", ws.len());
    }
}

/// `--strict`: the warnings as errors (exit 2, nothing run).
fn strict_error(ws: &[lahar::scenario::Warning]) -> ExitCode {
    let errors = ws.iter().map(|w| w.as_error()).collect();
    let code = input_error(&lahar::scenario::ScenarioError { errors });
    errln!("(--strict: warnings are errors)");
    code
}

fn input_error(e: &lahar::scenario::ScenarioError) -> ExitCode {
    for err in &e.errors {
        let text = err.to_string();
        let mut lines = text.lines();
        errln!("error: {}", lines.next().unwrap_or_default());
        for l in lines {
            errln!("  {l}");
        }
    }
    if e.errors.len() > 1 {
        errln!("{} errors", e.errors.len());
    }
    ExitCode::from(2)
}
