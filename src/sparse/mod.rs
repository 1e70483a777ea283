//! The sparse-pattern construction (sparse.md §3, the project's reconstruction of
//! Likhosherstov–Choromanski–Weller): draw a sign matrix S from a seed, fix
//! W_Q = (1/d)[I; 0] and W_K = [0; I], and for a target A build logits B, input
//! X = [BS, S] and attention M = row-softmax(X W_Q W_Kᵀ Xᵀ). Untrusted
//! construction code: what it produces is certified by the kernel.

pub mod construct;
pub mod dimension;
pub mod sample;
pub mod target;

/// Errors of `sparse construct`'s inputs: a target file that cannot be read or
/// parsed, or an option out of range. The application maps both to exit code 2
/// (`From<Error> for app::Error`), so this layer never names the application's type.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The target file could not be read (its path and the reason).
    #[error(transparent)]
    Spec(#[from] crate::spec::SpecError),
    /// A malformed target file or option: the message names the file and line, or the option.
    #[error("{0}")]
    Usage(String),
    /// A `sparse construct` certificate whose statement cannot be rebuilt from its
    /// hints and target (a missing or malformed hint, a target that does not match).
    #[error("{0}")]
    Rebuild(String),
}
