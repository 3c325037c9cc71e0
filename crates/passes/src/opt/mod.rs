//! The optimisations: `PASSES` run to a fixed point, then the
//! `LATE_PASSES`, the `LOOP_SHAPE_PASSES` and the `FINAL_PASSES` once
//! each, in turn (each followed by the fixed point again if it changed
//! anything), and last the `SCHEDULE_PASSES`. Between the fixed point and the late passes, `inline` and
//! `fast-path` (which read the module's callees) run on every function,
//! then `specialize` on the module; between the `SCALAR_PASSES` (run on
//! every function first) and the loop-shape passes, `inline::run_untaped`.
//! The derivative passes (`ad`) use these; nothing here uses them.

pub mod bce;
pub mod block_params;
pub mod carry;
pub mod const_fold;
pub mod contract;
pub mod copy_loops;
pub mod cse;
pub mod dce;
pub mod dead_outputs;
pub mod diamond_cse;
pub mod early_loads;
pub mod fast_path;
pub mod hoist;
pub mod indvars;
pub mod inline;
pub mod jam;
pub mod licm;
pub mod mem2reg;
pub mod negate;
pub mod promote;
pub mod promote_fixed;
pub mod rle;
pub mod rotate;
pub mod simplify_cfg;
pub mod sink;
pub mod specialize;
pub mod sroa;
pub mod tape_forward;
pub mod tape_promote;
pub mod unroll;
pub mod unroll_inner;
pub mod unroll_region;
pub mod unswitch;
pub mod version;
pub mod zero_skip;

use adc_ir::{Function, Module};

/// A pass over one function; returns whether it changed anything.
pub type FuncPass = fn(&mut Function) -> bool;

/// The ordinary optimisations by name, as `adc` and the filetests run them.
pub const PASSES: &[(&str, FuncPass)] = &[
    ("block-params", block_params::run),
    ("const-fold", const_fold::run),
    ("negate", negate::run),
    ("cse", cse::run),
    ("diamond-cse", diamond_cse::run),
    ("hoist", hoist::run),
    ("tape-forward", tape_forward::run),
    ("rle", rle::run),
    ("dce", dce::run),
    ("simplify-cfg", simplify_cfg::run),
    ("bce", bce::run),
    ("licm", licm::run),
    ("mem2reg", mem2reg::run),
    ("indvars", indvars::run),
];

/// Passes the `opt` stage runs once after the fixed point of `PASSES`, and
/// derivative code does not run on its source (the derivative passes do
/// not know what they make).
pub const LATE_PASSES: &[(&str, FuncPass)] = &[
    ("unroll", unroll::run),
    ("unroll-region", unroll_region::run),
    ("copy-loops", copy_loops::run),
    ("carry", carry::run),
    ("promote", promote::run),
    ("promote-fixed", promote_fixed::run),
];

/// Run once after the fixed point that follows `LATE_PASSES` (whose
/// `unroll` leaves indices that `const-fold` makes constant), before the
/// loop-shape passes, which take no loop with stack slots in it: the fixed
/// point's `mem2reg` turns `sroa`'s slots into values in between.
pub const SCALAR_PASSES: &[(&str, FuncPass)] =
    &[("sroa", sroa::run), ("tape-promote", tape_promote::run)];

/// Passes that copy and reshape loops for the machine code, run once after
/// the fixed point that follows `LATE_PASSES` (first `early-loads`, which
/// needs the untaped derivatives inlined and moves loads, not loops): `version` needs a loop
/// `unroll` emptied of inner loops cleaned up to its two-block pattern
/// first (ba's projection:
/// the point loop once its three-element loops are unrolled).
pub const LOOP_SHAPE_PASSES: &[(&str, FuncPass)] = &[
    ("early-loads", early_loads::run),
    ("version", version::run),
    ("rotate", rotate::run),
    ("zero-skip", zero_skip::run),
    ("jam", jam::run),
    ("unroll-inner", unroll_inner::run),
];

/// Passes the `opt` stage runs last, once, after the fixed point that
/// follows the late passes (`unswitch` needs the tests `version` adds
/// hoisted by `licm` first); then the fixed point again if they changed
/// anything.
pub const FINAL_PASSES: &[(&str, FuncPass)] = &[("unswitch", unswitch::run)];

/// Passes that only reorder instructions within blocks for the machine
/// code, run last, once, with no fixed point after them (which does not
/// undo their order, but has nothing left to do).
pub const SCHEDULE_PASSES: &[(&str, FuncPass)] = &[("sink", sink::run)];

/// Passes the `final` stage runs after `opt` only when asked to (their
/// results differ from the program's in rounding): `contract`.
pub const OPT_IN_PASSES: &[(&str, FuncPass)] = &[("contract", contract::run)];

/// `contract` on every function with a body: each float multiply used
/// only by an add or subtract fused with it (see [`contract`]).
pub fn contract_module(module: &mut Module) {
    for func in module.funcs.iter_mut().filter(|f| !f.layout.is_empty()) {
        contract::run(func);
    }
}

/// The `opt` stage: every pass, repeated until nothing changes (bounded);
/// then small callees are inlined (the rules of `inline`: not
/// recursive, at most 400 instructions, no `[checkpoint]` or custom
/// derivative; tape-free generated forward derivatives too) and the caller
/// optimised again; calls that stay calls with constant integer arguments
/// call clones specialised on them (`specialize`), each optimised; then
/// the late, loop-shape and final passes in turn,
/// each followed by the fixed point again if it changed anything.
pub fn optimize(module: &mut Module) {
    optimize_except(module, &[]);
}

/// `optimize` without the late, loop-shape or final passes named in `skip`: `adc tape`
/// leaves out `unroll-inner`, whose four copies of a loop's body would
/// report one iteration as four, and `unswitch`, whose two versions of a
/// loop would report its pushes twice (the tape's contents are the same
/// either way).
pub fn optimize_except(module: &mut Module, skip: &[&str]) {
    for func in module.funcs.iter_mut().filter(|f| !f.layout.is_empty()) {
        optimize_function(func);
    }
    // Split-mode halves with a fast path get their continuations
    // (`fast-path`), which the loop below rewrites with the other callers.
    let conts = if skip.contains(&"fast-path") {
        Vec::new()
    } else {
        fast_path::add_conts(module)
    };
    for &id in &conts {
        optimize_function(module.func_mut(id));
    }
    // Small callees are inlined (`inline`'s rules), from their
    // optimised bodies; the caller is optimised again.
    let callees = module.clone();
    let recursive = crate::callgraph::Recursive::of(&callees);
    for func in module.funcs.iter_mut().filter(|f| !f.layout.is_empty()) {
        let inlined = inline::run(func, &callees, &recursive);
        // Calls that stay calls: a callee's early return is computed in
        // the caller (`fast-path`).
        let fast = !skip.contains(&"fast-path") && fast_path::run(func, &callees);
        if inlined || fast {
            optimize_function(func);
        }
    }
    for id in fast_path::drop_dead_params(module, &conts) {
        optimize_function(module.func_mut(id));
    }
    if !skip.contains(&"specialize") {
        specialize_calls(module);
    }
    // Calls writing scratch their callers never read call clones that do
    // not write it (`dead-outputs`), each optimised.
    if !skip.contains(&"dead-outputs") {
        for id in dead_outputs::run(module) {
            optimize_function(module.func_mut(id));
        }
    }
    let run_passes = |func: &mut Function, passes: &[(&str, FuncPass)]| {
        let mut changed = false;
        for (name, pass) in passes {
            if !skip.contains(name) {
                changed |= pass(func);
            }
        }
        if changed {
            optimize_function(func);
        }
    };
    let kept_tape = inline::kept_tape(module);
    for func in module.funcs.iter_mut().filter(|f| !f.layout.is_empty()) {
        run_passes(func, LATE_PASSES);
        run_passes(func, SCALAR_PASSES);
    }
    // Derivatives `tape-promote` freed of their tape are inlined
    // (`inline::run_untaped`), from their bodies as the late passes left them.
    let untaped = module.clone();
    let recursive = crate::callgraph::Recursive::of(&untaped);
    for func in module.funcs.iter_mut().filter(|f| !f.layout.is_empty()) {
        if !skip.contains(&"inline") && inline::run_untaped(func, &kept_tape, &untaped, &recursive)
        {
            optimize_function(func);
        }
        for passes in [LOOP_SHAPE_PASSES, FINAL_PASSES] {
            run_passes(func, passes);
        }
        for (name, pass) in SCHEDULE_PASSES {
            if !skip.contains(name) {
                pass(func);
            }
        }
    }
}

/// Calls that stay calls, with constant integer arguments, call clones
/// specialised on them (`specialize`), each optimised; a clone's own calls
/// get the same in the next round (at most `SPECIALIZE_ROUNDS`, all
/// within one `specialize::Budget`).
fn specialize_calls(module: &mut Module) {
    const SPECIALIZE_ROUNDS: usize = 3;
    let mut callers: Option<Vec<adc_ir::FuncId>> = None;
    let mut budget = specialize::Budget::default();
    for _ in 0..SPECIALIZE_ROUNDS {
        let clones = specialize::run(module, callers.as_deref(), &mut budget);
        if clones.is_empty() {
            break;
        }
        for &id in &clones {
            optimize_function(module.func_mut(id));
        }
        callers = Some(clones);
    }
}

/// `PASSES` in rounds until a round changes nothing (at most 8 rounds).
/// A pass that changed nothing, run again on the same function, changes
/// nothing (every pass is a deterministic function of the IR and reports
/// every change): within a round, a pass that has run since the last
/// change without changing anything is skipped, which gives the same IR
/// as running it.
pub fn optimize_function(func: &mut Function) {
    // `clean[k]`: `PASSES[k]` has run since the last change and changed nothing.
    let mut clean = [false; PASSES.len()];
    for _ in 0..8 {
        let mut changed = false;
        for (k, (_, pass)) in PASSES.iter().enumerate() {
            if clean[k] {
                continue;
            }
            if pass(func) {
                changed = true;
                clean = [false; PASSES.len()];
            } else {
                clean[k] = true;
            }
        }
        if !changed {
            break;
        }
    }
}
