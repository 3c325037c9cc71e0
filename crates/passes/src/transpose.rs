//! `transpose`: placeholder.
use crate::ad::AdError;
use adc_ir::{FuncId, Module};
pub fn run(_module: &mut Module, _id: FuncId) -> Result<(), AdError> {
    Ok(())
}
