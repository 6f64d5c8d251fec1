//! Training throughput of the catalog's models per GPU model, relative to one
//! A100-80GB SXM4 (Gavel-style: a model's speed depends on the GPU it runs on,
//! and the ratio differs by model). Only published figures, each normalised
//! within its own source (absolute numbers differ by software stack, so sources
//! are never mixed in one ratio):
//!
//! - **(L)** Lambda, `lambdal/deeplearning-benchmark` @ aa5addb6,
//!   `pytorch/pytorch-train-throughput*-fp16.csv` and raw logs: one GPU,
//!   NVIDIA DeepLearningExamples ResNet-50 (AMP, synthetic data) and BERT-Large
//!   SQuAD fine-tuning (fp16). ResNet-50 img/s: A100-80GB SXM4 1582, A100-80GB
//!   PCIe 1527, A100-40GB SXM4 1455, A100-40GB PCIe 1396, V100-16GB 833, A10 638,
//!   H100 SXM5 ~2790, H100 PCIe 1976, H200 3079, B200 3076. BERT-Large seq/s:
//!   152, 140, 133.6, 117, 57, 42, 307, 204, 350, 523 in the same order.
//! - **(F)** MosaicML `llm-foundry` @ 061f2c7c,
//!   `scripts/train/benchmarking/README.md`: tokens/s/GPU in bf16 on 8 GPUs
//!   (64 for 70B) of H100-80GB, A100-80GB and A100-40GB, for MPT 1B (the
//!   stand-in for GPT-2 XL's 1.5B), 7B, 13B and 70B, at matched sequence length
//!   and activation checkpointing: 1B 45455 / 20513 / 19271 (seq 2048); 7B 8611 /
//!   3684 / 3366 and 13B 4717 / 2060 / 1603 (seq 4096, checkpointing); 70B 1039 /
//!   410 / 276 (seq 2048).
//!
//! What is not published (T4, L4, L40S, P100 in mixed precision, V100 and A10 for
//! the language models, H200 and B200 in bf16 for them) falls back to the GPU
//! generation's relative speed ([`super::runtime::relative_speed`]).

use super::constants::normalize_gpu_name;

/// The catalog's models, in the order of [`TABLE`]'s columns.
const MODELS: [&str; 6] = ["resnet-50", "bert-large", "gpt2-xl", "llama-7b", "llama-13b", "llama-70b"];

/// A100-40GB SXM4: (L) for the vision and BERT models, (F) for the language models.
const A100_40GB: [Option<f64>; 6] = [
    Some(1455.0 / 1582.0),
    Some(133.6 / 152.0),
    Some(19271.0 / 20513.0),
    Some(3366.0 / 3684.0),
    Some(1603.0 / 2060.0),
    Some(276.0 / 410.0),
];

/// GPU model name prefix (matched as the generation aliases are: normalised,
/// the longest prefix wins) and each catalog model's throughput relative to
/// A100-80GB SXM4; `None` where no source publishes one.
const TABLE: &[(&str, [Option<f64>; 6])] = &[
    // (L) ResNet-50 and BERT-Large; (F) the language models.
    ("A100", [Some(1.0), Some(1.0), Some(1.0), Some(1.0), Some(1.0), Some(1.0)]),
    ("A100-SXM4-40GB", A100_40GB),
    ("A100-40GB", A100_40GB),
    ("A100-PCIE", [Some(1527.0 / 1582.0), Some(140.0 / 152.0), None, None, None, None]),
    ("A100-PCIE-40GB", [Some(1396.0 / 1582.0), Some(117.0 / 152.0), None, None, None, None]),
    ("V100", [Some(833.0 / 1582.0), Some(57.0 / 152.0), None, None, None, None]),
    ("A10", [Some(638.0 / 1582.0), Some(42.0 / 152.0), None, None, None, None]),
    (
        "H100",
        [
            Some(2790.0 / 1582.0),
            Some(307.0 / 152.0),
            Some(45455.0 / 20513.0),
            Some(8611.0 / 3684.0),
            Some(4717.0 / 2060.0),
            Some(1039.0 / 410.0),
        ],
    ),
    ("H100-PCIE", [Some(1976.0 / 1582.0), Some(204.0 / 152.0), None, None, None, None]),
    ("H200", [Some(3079.0 / 1582.0), Some(350.0 / 152.0), None, None, None, None]),
    ("B200", [Some(3076.0 / 1582.0), Some(523.0 / 152.0), None, None, None, None]),
];

/// The published throughput of catalog model `model` on GPU model `gpu`,
/// relative to A100-80GB SXM4; `None` for another model, an unknown GPU, or a
/// cell no source publishes.
pub fn published(model: &str, gpu: &str) -> Option<f64> {
    let col = MODELS.iter().position(|m| *m == model)?;
    let norm = normalize_gpu_name(gpu);
    TABLE
        .iter()
        .map(|(prefix, row)| (normalize_gpu_name(prefix), row))
        .filter(|(p, _)| !p.is_empty() && norm.starts_with(p.as_str()))
        .max_by_key(|(p, _)| p.len())
        .and_then(|(_, row)| row[col])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The longest prefix decides: an A100 40GB is not an A100 80GB, an A10 is not
    /// an A100, an H100 PCIe not an SXM; names are matched as the generation
    /// aliases are (case, dashes and an `NVIDIA-` prefix do not matter).
    #[test]
    fn cells_by_longest_prefix() {
        assert_eq!(published("resnet-50", "A100-SXM4-80GB"), Some(1.0));
        assert_eq!(published("resnet-50", "NVIDIA-A100-SXM4-40GB"), Some(1455.0 / 1582.0));
        assert_eq!(published("resnet-50", "A10"), Some(638.0 / 1582.0));
        assert_eq!(published("bert-large", "H100-PCIe-80GB"), Some(204.0 / 152.0));
        assert_eq!(published("llama-70b", "H100-SXM-80G"), Some(1039.0 / 410.0));
        assert_eq!(published("llama-7b", "V100-SXM2-32GB"), None, "not published");
        assert_eq!(published("my-model", "H100-SXM-80G"), None);
        assert_eq!(published("resnet-50", "T4"), None);
    }
}
