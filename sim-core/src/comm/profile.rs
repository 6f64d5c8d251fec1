//! What a training job is, for the runtime models: a catalog model's numbers
//! ([`ModelProfile`], [`CATALOG`]) and one job's configuration ([`JobProfile`]).

/// A catalog model's communication and compute profile.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelProfile {
    /// Catalog name.
    pub name: &'static str,
    /// Bytes all-reduced per iteration by data parallelism (all gradients).
    pub grad_bytes: u64,
    /// Compute time of one iteration on one A100, µs.
    pub a100_step_us: f64,
    /// Default share of the data-parallel all-reduce hidden behind compute.
    pub overlap: f64,
    /// Transformer layers (0: not a transformer; no tensor or pipeline parallelism).
    pub layers: u32,
    /// Hidden size.
    pub hidden: u32,
    /// Tokens per micro-batch (one sequence).
    pub seq_len: u32,
    /// Tokens (for ResNet-50: images) one GPU processes per iteration.
    pub tokens_per_step: u64,
}

/// Built-in catalog (shared/reference/nccl-model.md §6.2).
/// - resnet-50: 25.6 M params, fp32 gradients 102 MB; 104 ms per 256-image AMP step
///   on A100 (NVIDIA DeepLearningExamples RN50 README).
/// - bert-large: 340 M params, fp16 gradients 0.68 GB; ~441 ms per 256-sequence
///   micro-step on A100 (NVIDIA DeepLearningExamples BERT README); 24 layers,
///   hidden 1024, sequence 512 (Devlin et al. 2019).
/// - gpt2-xl: 1.56 B params, bf16 gradients 3.1 GB; 6·N·16,384 tokens per GPU step at
///   45% of A100's 312 TFLOP/s ≈ 1.09 s; 48 layers, hidden 1600, context 1024
///   (Radford et al. 2019).
/// - llama-7b / llama-13b / llama-70b: 13.4 / 26 / 130 GB bf16 gradients; 16,384 tokens
///   per GPU step at the LLaMA paper's 3,370 / 2,055 / 380 tokens/s/GPU on A100
///   (4.86 s / 7.97 s / 43.1 s; the published rates include communication, so these
///   slightly overstate compute); 32/40/80 layers, hidden 4096/5120/8192, sequences
///   of 4,096 tokens (Touvron et al. 2023, LLaMA 2).
pub const CATALOG: &[ModelProfile] = &[
    ModelProfile {
        name: "resnet-50",
        grad_bytes: 102_000_000,
        a100_step_us: 104_000.0,
        overlap: 0.5,
        layers: 0,
        hidden: 0,
        seq_len: 1,
        tokens_per_step: 256,
    },
    ModelProfile {
        name: "bert-large",
        grad_bytes: 680_000_000,
        a100_step_us: 441_000.0,
        overlap: 0.5,
        layers: 24,
        hidden: 1024,
        seq_len: 512,
        tokens_per_step: 131_072,
    },
    ModelProfile {
        name: "gpt2-xl",
        grad_bytes: 3_100_000_000,
        a100_step_us: 1_090_000.0,
        overlap: 0.5,
        layers: 48,
        hidden: 1600,
        seq_len: 1024,
        tokens_per_step: 16_384,
    },
    ModelProfile {
        name: "llama-7b",
        grad_bytes: 13_400_000_000,
        a100_step_us: 4_860_000.0,
        overlap: 0.5,
        layers: 32,
        hidden: 4096,
        seq_len: 4096,
        tokens_per_step: 16_384,
    },
    ModelProfile {
        name: "llama-13b",
        grad_bytes: 26_000_000_000,
        a100_step_us: 7_970_000.0,
        overlap: 0.5,
        layers: 40,
        hidden: 5120,
        seq_len: 4096,
        tokens_per_step: 16_384,
    },
    ModelProfile {
        name: "llama-70b",
        grad_bytes: 130_000_000_000,
        a100_step_us: 43_100_000.0,
        overlap: 0.5,
        layers: 80,
        hidden: 8192,
        seq_len: 4096,
        tokens_per_step: 16_384,
    },
];

/// One job's training configuration: a model's numbers and its parallelism.
#[derive(Clone, Debug, PartialEq)]
pub struct JobProfile {
    /// Model name (catalog name, or the user's).
    pub name: String,
    /// Bytes all-reduced per iteration by data parallelism (all gradients).
    pub grad_bytes: u64,
    /// Compute time of one iteration on one A100, µs.
    pub a100_step_us: f64,
    /// Share of the data-parallel all-reduce hidden behind compute, in [0, 1].
    pub overlap: f64,
    /// Transformer layers (0: no tensor or pipeline parallelism possible).
    pub layers: u32,
    /// Hidden size.
    pub hidden: u32,
    /// Tokens per micro-batch.
    pub seq_len: u32,
    /// Tokens one GPU processes per iteration.
    pub tokens_per_step: u64,
    /// Tensor-parallel degree (1: none).
    pub tensor_parallel: u32,
    /// Pipeline-parallel degree (1: none).
    pub pipeline_parallel: u32,
    /// Iterations to run (`None`: the job's duration is its ideal run time).
    pub iterations: Option<u64>,
}

impl JobProfile {
    /// A catalog model, data-parallel only, with its default overlap.
    pub fn from_catalog(p: &ModelProfile) -> JobProfile {
        JobProfile {
            name: p.name.to_string(),
            grad_bytes: p.grad_bytes,
            a100_step_us: p.a100_step_us,
            overlap: p.overlap,
            layers: p.layers,
            hidden: p.hidden,
            seq_len: p.seq_len,
            tokens_per_step: p.tokens_per_step,
            tensor_parallel: 1,
            pipeline_parallel: 1,
            iterations: None,
        }
    }

    /// Checks the profile for a job of `gpus` GPUs; the message names the field.
    pub fn check(&self, gpus: u32) -> Result<(), String> {
        let (t, s) = (self.tensor_parallel, self.pipeline_parallel);
        if !(self.overlap.is_finite() && (0.0..=1.0).contains(&self.overlap)) {
            return Err(format!("overlap must be in [0, 1], got {}", self.overlap));
        }
        if !(self.a100_step_us.is_finite() && self.a100_step_us > 0.0) {
            return Err(format!("the step time must be positive, got {} µs", self.a100_step_us));
        }
        if t == 0 || s == 0 {
            return Err("tensorParallel and pipelineParallel must be at least 1".into());
        }
        if (t > 1 || s > 1) && (self.layers == 0 || self.hidden == 0) {
            return Err(format!(
                "model `{}` has no transformer shape (layers, hidden), so it cannot be split by tensorParallel or pipelineParallel",
                self.name
            ));
        }
        if s > self.layers.max(1) {
            return Err(format!("pipelineParallel {s} exceeds the model's {} layers", self.layers));
        }
        if self.seq_len == 0 || self.tokens_per_step < u64::from(self.seq_len) {
            return Err(format!(
                "tokensPerStep ({}) must be at least one sequence ({} tokens)",
                self.tokens_per_step, self.seq_len
            ));
        }
        let group = u64::from(t) * u64::from(s);
        if gpus > 0 && !u64::from(gpus).is_multiple_of(group) {
            return Err(format!(
                "the job's {gpus} GPUs are not a multiple of tensorParallel x pipelineParallel = {group}"
            ));
        }
        if self.iterations == Some(0) {
            return Err("iterations must be at least 1".into());
        }
        Ok(())
    }

    /// Whether the job is data-parallel only (its communication depends only on the
    /// whole job's placement, so estimates can be memoized by placement).
    pub(crate) fn data_parallel_only(&self) -> bool {
        self.tensor_parallel <= 1 && self.pipeline_parallel <= 1
    }
}
