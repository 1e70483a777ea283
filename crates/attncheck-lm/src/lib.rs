//! Small decoder-only language models for attncheck's trained-model claims
//! (positional/trained-model-claims), written with candle on the CPU.
//!
//! - [`corpus`]: a byte-level corpus built from the `.rs` files of pinned crates in the
//!   local cargo registry, with a content hash and a fixed train/validation split.
//! - [`model`]: a pre-LayerNorm decoder with one of five position schemes (an additive
//!   per-head bias b_h(r) given by the caller — ALiBi and Sandwich —, sinusoidal input
//!   embeddings, RoPE, or a hard window).
//! - [`train`]: AdamW with warm-up and cosine decay, gradient clipping, seeded batches.
//! - [`eval`]: sliding-window perplexity, attention truncation, and the cumulative
//!   normalised gradient receptive field with a bootstrap over sequences.
//! - [`job`]: one training-and-evaluation job of the trained-model claim, and what it
//!   stores (its result is a unit of a sharded run).
//! - [`probe`]: an untrusted search for byte inputs that make a head's content-logit range
//!   large (a lower bound on the worst case that the certified Δ̄ bounds from above).
//!
//! - [`attn`], [`mm`], [`ops`]: the fused CPU operations a step is made of (attention,
//!   linear layers, layer norm, cross-entropy), each with its own backward pass, in the
//!   model's type (f32 for training and evaluation).
//!
//! Every random draw comes from [`SplitMix64`] seeds, and every sum of the fused operations
//! runs in an order fixed by the shapes (one sequential `gemm` call per product, fixed
//! blocks, fixed lanes), never by a thread count, so a run is bit-for-bit repeatable on one
//! machine and under any `CANDLE_NUM_THREADS` (`tests/kernels.rs`). Across machines, `gemm`
//! picks its kernel by CPU features (AVX2 or AVX-512), which may change the last bits. The crate knows no formula for a bias: the caller passes b_h(r), so the
//! bias formulas have one source (attncheck's `claims/positional/common.rs`).

pub mod attn;
pub mod corpus;
pub mod eval;
pub mod job;
pub mod mm;
pub mod model;
pub mod ops;
pub mod probe;
pub mod train;

pub use candle_core::{DType, Device, Tensor, Var};
/// The framework, for callers that build tensors themselves (tests).
pub use {candle_core, candle_nn};

/// Sets up the process for these small models; call it before the first tensor operation
/// (it runs once). Changes speed only, never a number:
/// - candle runs elementwise operations on tensors of ≥ 64k elements on a pool of
///   `CANDLE_NUM_THREADS` spinning workers; each job here is single-threaded (jobs run side
///   by side instead), so the variable is set to 1 unless the user set it;
/// - glibc returns every allocation above 128 KiB to the kernel when it is freed, so each
///   such tensor costs page faults when it is next allocated (a tenth of a training step);
///   the mmap and trim thresholds are raised to 64 MiB.
pub fn configure() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("CANDLE_NUM_THREADS").is_none() {
            std::env::set_var("CANDLE_NUM_THREADS", "1");
        }
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: mallopt only changes glibc's allocation thresholds; it is thread-safe.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 64 << 20);
            libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
        }
    });
}

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The corpus could not be assembled (missing package, changed content).
    #[error("corpus: {0}")]
    Corpus(String),
    /// A tensor operation failed.
    #[error("candle: {0}")]
    Candle(#[from] candle_core::Error),
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A configuration that cannot be run.
    #[error("config: {0}")]
    Config(String),
}

/// This crate's result type.
pub type Result<T> = std::result::Result<T, Error>;

/// SplitMix64 (Steele, Lea, Flood 2014): a small seeded generator; the same seed gives
/// the same stream on every machine.
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1) with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// Uniform in 0..n (n ≥ 1), by rejection (no modulo bias).
    pub fn below(&mut self, n: u64) -> u64 {
        let zone = u64::MAX - (u64::MAX % n);
        loop {
            let x = self.next_u64();
            if x < zone {
                return x % n;
            }
        }
    }
    /// A standard normal draw (Box–Muller; uses two uniforms).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.next_f64();
        let u2 = self.next_f64();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}
