//! Which of a checkpointed loop's captures its segment makes again
//! instead of taking them as parameters.

use adc_ir::{Function, InstData, Type, Value};

/// Splits the loop's captures into values passed to the segment and values
/// it makes again from them (in the order to make them): constants, and
/// floats computed by pure arithmetic from constants and integers (`h =
/// 2.0 / double(s)`). The segment's optimisations then see a loop's
/// constant start and step (counters replayed instead of taped, loops
/// unrolled and versioned), as in the plain loop, and its derivative does
/// not treat such a float as an active input: as a parameter it would be
/// differentiated (tape pushes and an adjoint returned for nothing). Each
/// is defined before the loop, so making it again computes what the
/// caller computed (a division that would trap has trapped there).
pub(super) fn remade_captures(g: &Function, captures: Vec<Value>) -> (Vec<Value>, Vec<Value>) {
    let mut passed = Vec::new();
    let mut remade = Vec::new();
    for v in captures {
        let ty = g.dfg.value_type(v);
        let worth = constant_inst(g, v) || matches!(ty, Type::Scalar(t) if t.is_float());
        if worth && remakeable(g, v, 0) {
            remake(g, v, &mut passed, &mut remade);
        } else if !passed.contains(&v) {
            passed.push(v);
        }
    }
    (passed, remade)
}

/// True when `v` is a `const`.
fn constant_inst(g: &Function, v: Value) -> bool {
    matches!(crate::defs::def_data(g, v), Some(InstData::Const { .. }))
}

/// Whether `v` is pure scalar arithmetic (at most 8 deep) whose leaves are
/// constants and non-float scalars.
fn remakeable(g: &Function, v: Value, depth: usize) -> bool {
    let Some(data) = crate::defs::def_data(g, v) else {
        return false;
    };
    // Pure operations and divisions (which would have trapped before the
    // loop already); the operand types below leave out arrays and pairs.
    let arithmetic = data.is_pure() || matches!(data, InstData::Binary { .. });
    let mut ok = arithmetic && depth < 8;
    data.for_each_arg(|a| {
        ok = ok
            && match g.dfg.value_type(a) {
                Type::Scalar(t) if !t.is_float() => true,
                Type::Scalar(_) => remakeable(g, a, depth + 1),
                _ => false,
            };
    });
    ok
}

/// Appends `v` to `remade` after what it needs: its arguments that are
/// remade themselves (floats and constants) or else passed.
fn remake(g: &Function, v: Value, passed: &mut Vec<Value>, remade: &mut Vec<Value>) {
    if remade.contains(&v) {
        return;
    }
    let data = crate::defs::def_data(g, v)
        .expect("invariant: remakeable values have a defining instruction");
    data.for_each_arg(|a| {
        let float = matches!(g.dfg.value_type(a), Type::Scalar(t) if t.is_float());
        if float || constant_inst(g, a) {
            remake(g, a, passed, remade);
        } else if !passed.contains(&a) {
            passed.push(a);
        }
    });
    remade.push(v);
}
