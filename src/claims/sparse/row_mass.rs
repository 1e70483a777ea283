//! Placeholder (not registered yet): being implemented.

use crate::claims::Ctx;
use crate::outcome::Outcome;
use crate::spec::FieldError;
use serde::{Deserialize, Serialize};

/// Parameters (none yet).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

impl crate::spec::Params for Params {
    fn validate(&self) -> Result<(), FieldError> {
        Ok(())
    }
}

/// Not implemented yet: inconclusive.
pub fn run(_p: &Params, _ctx: &Ctx) -> Outcome {
    let mut o = Outcome::new();
    o.declare_inconclusive("not implemented yet");
    o
}
