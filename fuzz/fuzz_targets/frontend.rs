//! Any text through the frontend: parsing, checking, lowering, then (when it
//! compiles) every derivative and optimisation stage, the verifier, the IR
//! text round trip, and Cranelift (an object file, so nothing runs). Bad
//! input must give diagnostics, never a panic.
#![no_main]

use adc::driver::{self, Stage};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    match driver::frontend("fuzz.ad", source, &adc::CompileOptions::default()) {
        Ok(mut module) => {
            if driver::run_stages(&mut module, Stage::Final).is_ok() {
                adc_ir::verify(&module).expect("every stage keeps the module verified");
                let text = module.to_string();
                let reparsed = adc_ir::parse_module(&text).expect("printed IR parses");
                assert_eq!(reparsed.to_string(), text, "IR text round-trips");
                // Codegen errors (an unresolved extern, say) are values.
                let _ = adc_codegen::object(&module, &|_| String::new());
            }
        }
        Err(failure) => {
            // Rendering the diagnostics must not panic either.
            let _ = failure.to_string();
        }
    }
});
