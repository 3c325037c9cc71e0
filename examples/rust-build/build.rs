//! Compiles `src/kernels.ad` and `src/scale.ad` into one static library
//! with Rust bindings.
fn main() {
    adc_build::Build::new()
        .file("src/kernels.ad")
        .file("src/scale.ad")
        .compile("kernels")
        .unwrap_or_else(|e| panic!("{e}"));
}
