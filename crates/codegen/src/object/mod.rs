//! Object files for `adc compile`: the module compiled with position-
//! independent code, plus what an object file carries instead of the JIT's
//! host (`print.rs`: printing through libc; `tape_spare.rs`: the spare
//! tape kept between calls), and the C header of its exported functions
//! (`header/`).

pub(crate) mod header;
pub(crate) mod print;
pub(crate) mod tape_spare;

use crate::compile::{build, isa};
use crate::{CodegenError, Locate};

/// Compiles a verified module to a relocatable object file.
///
/// ```
/// let ir = adc_ir::parse_module("func @twice(x: f64) -> f64 {
/// block0(v0: f64):
///     v1: f64 = add v0, v0
///     return v1
/// }").unwrap();
/// adc_ir::verify(&ir).unwrap();
/// let object = adc_codegen::object(&ir, &|_| String::new()).unwrap();
/// assert!(object.starts_with(b"\x7fELF"));
/// ```
pub fn object(ir: &adc_ir::Module, locate: Locate<'_>) -> Result<Vec<u8>, CodegenError> {
    let builder = cranelift_object::ObjectBuilder::new(
        isa(true)?,
        "adc",
        cranelift_module::default_libcall_names(),
    )?;
    let mut m = cranelift_object::ObjectModule::new(builder);
    build(&mut m, ir, locate, false, true)?;
    m.finish()
        .emit()
        .map_err(|e| CodegenError::Backend(e.to_string()))
}
