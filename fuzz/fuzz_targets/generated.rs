//! Random valid programs from the differential tester's generator
//! (`tests/it/difftest/gen.rs`), seeded by the fuzzer's input, through every
//! derivative and optimisation stage, the JIT, and the tester's oracles
//! (reverse against forward, forward against central differences, the four
//! second-order compositions, the IR interpreter after every stage). A failing oracle, a compile error or a panic
//! is a crash.
#![no_main]

#[path = "../../tests/it/difftest/gen.rs"]
#[allow(dead_code)]
mod gen;
#[path = "../../tests/it/difftest/interp.rs"]
mod interp;
#[path = "../../tests/it/difftest/oracle.rs"]
#[allow(dead_code)]
mod oracle;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // FNV-1a of the input: any bytes name a program.
    let seed = data
        .iter()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3));
    let program = gen::generate(seed);
    let second = oracle::second_order(seed);
    let points = oracle::points(seed, program.alen);
    if let oracle::Outcome::Fail { oracle, detail } = oracle::check(&program, second, &points) {
        panic!(
            "oracle `{oracle}` fails on seed {seed}:\n{detail}\n{}",
            oracle::module(&program, second)
        );
    }
});
