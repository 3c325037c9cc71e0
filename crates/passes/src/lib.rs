//! `adc-passes`: IR-to-IR passes (optimisations now, AD passes next).
//!
//! Every pass works on a whole `Module` and keeps it verified.

/// The `opt` stage: the ordinary optimisations, to a fixed point.
pub fn optimize(_module: &mut adc_ir::Module) {}
