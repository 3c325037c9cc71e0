//! Compiles `src/kernels.ad` into a static library with Rust bindings.
fn main() {
    adc_build::Build::new()
        .file("src/kernels.ad")
        .compile("kernels")
        .unwrap_or_else(|e| panic!("{e}"));
}
