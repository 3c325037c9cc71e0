//! `unzip`: placeholder.
use crate::ad::AdError;
use adc_ir::Function;
pub fn run(_func: &mut Function) -> Result<(), AdError> {
    Ok(())
}
