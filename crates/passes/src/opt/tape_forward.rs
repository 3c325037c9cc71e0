//! `tape-forward`: a `tape.pop` that undoes a `tape.push` of the same block
//! (same tape, nothing in between that touches a tape or calls) is the
//! pushed value; both go. Where the forward sweep turns into the reverse
//! sweep, the last block's pushes are popped right away (`simplify-cfg`
//! joins the two blocks), and this keeps those values in registers.
//!
//! Assumes: verified input. Guarantees: verified output, same behaviour:
//! tapes are stacks, so the pop returns the matched push's value, and the
//! stack is as it was once both are gone. Anything else that reads or
//! moves a tape (`tape.read`, `lend`, `reclaim`, `adopt`, `give`) or may
//! (a call) ends the matching.

use adc_ir::{Function, Inst, InstData, Value};
use std::collections::{BTreeMap, BTreeSet};

pub fn run(func: &mut Function) -> bool {
    let mut dead: BTreeSet<Inst> = BTreeSet::new();
    let mut same: BTreeMap<Value, Value> = BTreeMap::new();
    for &b in &func.layout {
        // Pushes not yet popped, newest last: (tape, value, push).
        let mut pending: Vec<(u8, Value, Inst)> = Vec::new();
        for &i in &func.dfg.block(b).insts {
            match func.dfg.inst(i) {
                InstData::TapePush { value, tape } => pending.push((*tape, *value, i)),
                InstData::TapePop { tape } => {
                    let result = func.dfg.inst_results(i)[0];
                    // The newest push on this tape (each tape is a stack
                    // of its own).
                    match pending.iter().rposition(|p| p.0 == *tape) {
                        Some(k)
                            if func.dfg.value_type(pending[k].1) == func.dfg.value_type(result) =>
                        {
                            let (_, value, push) = pending.remove(k);
                            same.insert(result, value);
                            dead.insert(push);
                            dead.insert(i);
                        }
                        // A pop of something pushed before this block.
                        _ => pending.retain(|p| p.0 != *tape),
                    }
                }
                InstData::TapeRead { .. }
                | InstData::TapeLend
                | InstData::TapeReclaim { .. }
                | InstData::TapeAdopt { .. }
                | InstData::TapeGive { .. }
                | InstData::Call { .. } => pending.clear(),
                _ => (),
            }
        }
    }
    if dead.is_empty() {
        return false;
    }
    crate::rewrite::remove_insts(func, &dead);
    crate::rewrite::substitute(func, &same);
    true
}
