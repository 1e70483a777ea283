//! The sparse-pattern construction (sparse.md §3, the project's reconstruction of
//! Likhosherstov–Choromanski–Weller): draw a sign matrix S from a seed, fix
//! W_Q = (1/d)[I; 0] and W_K = [0; I], and for a target A build logits B, input
//! X = [BS, S] and attention M = row-softmax(X W_Q W_Kᵀ Xᵀ). Untrusted
//! construction code: what it produces is certified by the kernel.

pub mod construct;
pub mod dimension;
pub mod sample;
pub mod target;
