//! Certificates: the format is the kernel's ([`attncheck_kernel::certificate`]);
//! this module re-exports it so that `crate::certificate::…` keeps resolving.

pub use attncheck_kernel::certificate::*;
