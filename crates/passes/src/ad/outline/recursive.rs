//! Recursive checkpointing, for `[checkpoint]` without an interval: the
//! recursive driver that keeps a long segment's tape logarithmic. (Not
//! split mode, which is `ad/split.rs`; the driver's name ends in `_split`
//! because it splits a segment's iterations into pieces.)
//!
//! `__adc_segN_f_split(state.., captures.., len)` has the segment
//! function's signature and meaning (run at most `len` iterations, same
//! status and results) but is itself `[checkpoint]` and runs
//!
//! ```text
//! len <= LEAF:  the segment function's body (inlined: taped, not run again)
//! otherwise:    up to PIECES calls of itself on ceil(len / PIECES)
//!               iterations each, stopping at the first nonzero status
//! ```
//!
//! Each level of the recursion is a loop over at most `PIECES` checkpointed
//! calls, so a reverse sweep through `len` iterations holds at most
//! `PIECES` states per level, `log_PIECES(len / LEAF)` levels, and the tape
//! of one leaf (`LEAF` iterations); each level runs its iterations once
//! more in the reverse sweep. This is k-ary recursive checkpointing (the
//! online, trip-count-oblivious relative of revolve): with the caller's
//! segments growing by `PIECES` each time, the whole loop's memory grows
//! with the logarithm of its trip count.

use super::segment::{branch, emit, int, jump, to};
use adc_ir::{BinaryOp, CmpCond, FuncId, Function, InstData, Linkage, Module, Span, Type, Value};

/// Iterations a leaf runs taped.
pub(super) const LEAF: i64 = 1024;
/// Pieces each level splits its iterations into.
pub(super) const PIECES: i64 = 64;

/// Adds the split driver of segment function `seg` to `module`.
/// `nstate` is the number of loop-carried values (the segment's first
/// parameters and the results after its status).
pub(super) fn build_recursive(
    module: &mut Module,
    seg: FuncId,
    nstate: usize,
    span: Span,
) -> FuncId {
    let s = module.func(seg);
    let mut r = Function::new(
        format!("{}_split", s.name),
        s.params.clone(),
        s.returns.clone(),
        Linkage::Export,
    );
    r.checkpoint = true;
    let returns = s.returns.clone();
    let self_id = FuncId::new(module.funcs.len());
    let entry = r.dfg.make_block();
    r.layout.push(entry);
    let inputs: Vec<Value> = s
        .params
        .iter()
        .map(|p| r.dfg.append_block_param(entry, p.ty))
        .collect();
    let (len, fixed) = inputs
        .split_last()
        .expect("invariant: a segment function takes its length last");
    let len = *len;
    let (state, captures) = fixed.split_at(nstate);
    // len <= LEAF: the segment itself.
    let leaf = r.dfg.make_block();
    let split = r.dfg.make_block();
    r.layout.extend([leaf, split]);
    let limit = int(&mut r, entry, LEAF, span);
    let small = emit(
        &mut r,
        entry,
        InstData::Cmp {
            cond: CmpCond::Le,
            args: [len, limit],
        },
        &[Type::BOOL],
        span,
    )[0];
    branch(
        &mut r,
        entry,
        small,
        to(leaf, vec![]),
        to(split, vec![]),
        span,
    );
    let call = r.append_inst(
        leaf,
        InstData::Call {
            func: seg,
            args: inputs.clone(),
        },
        &returns,
        span,
    );
    let rets = r.dfg.inst_results(call).to_vec();
    r.append_inst(leaf, InstData::Return { args: rets }, &[], span);
    // The leaf's iterations are taped by this function's own derivative:
    // a call of the (checkpointed) segment would run them once more.
    crate::opt::inline::inline_call(&mut r, module, leaf, call);
    // Otherwise: pieces of ceil(len / PIECES) iterations.
    let pieces = int(&mut r, split, PIECES, span);
    let minus_one = int(&mut r, split, PIECES - 1, span);
    let rounded = emit(
        &mut r,
        split,
        InstData::Binary {
            op: BinaryOp::Add,
            args: [len, minus_one],
        },
        &[Type::I64],
        span,
    )[0];
    let piece = emit(
        &mut r,
        split,
        InstData::Binary {
            op: BinaryOp::Div,
            args: [rounded, pieces],
        },
        &[Type::I64],
        span,
    )[0];
    let head = r.dfg.make_block();
    let body = r.dfg.make_block();
    let done = r.dfg.make_block();
    let out = r.dfg.make_block();
    r.layout.extend([head, body, done, out]);
    jump(
        &mut r,
        split,
        head,
        state.iter().copied().chain([len]).collect(),
        span,
    );
    let st: Vec<Value> = state
        .iter()
        .map(|v| {
            let ty = r.dfg.value_type(*v);
            r.dfg.append_block_param(head, ty)
        })
        .collect();
    let remaining = r.dfg.append_block_param(head, Type::I64);
    let zero = int(&mut r, head, 0, span);
    let more = emit(
        &mut r,
        head,
        InstData::Cmp {
            cond: CmpCond::Gt,
            args: [remaining, zero],
        },
        &[Type::BOOL],
        span,
    )[0];
    branch(&mut r, head, more, to(body, vec![]), to(done, vec![]), span);
    let this = emit(
        &mut r,
        body,
        InstData::Binary {
            op: BinaryOp::Min,
            args: [piece, remaining],
        },
        &[Type::I64],
        span,
    )[0];
    let args: Vec<Value> = st.iter().chain(captures).copied().chain([this]).collect();
    let results = emit(
        &mut r,
        body,
        InstData::Call {
            func: self_id,
            args,
        },
        &returns,
        span,
    );
    let left = emit(
        &mut r,
        body,
        InstData::Binary {
            op: BinaryOp::Sub,
            args: [remaining, this],
        },
        &[Type::I64],
        span,
    )[0];
    let zero_b = int(&mut r, body, 0, span);
    let again = emit(
        &mut r,
        body,
        InstData::Cmp {
            cond: CmpCond::Eq,
            args: [results[0], zero_b],
        },
        &[Type::BOOL],
        span,
    )[0];
    let back: Vec<Value> = results[1..1 + nstate]
        .iter()
        .copied()
        .chain([left])
        .collect();
    branch(
        &mut r,
        body,
        again,
        to(head, back),
        to(out, results.clone()),
        span,
    );
    // All pieces ran: status 0 and the state reached.
    let mut rets = vec![int(&mut r, done, 0, span)];
    rets.extend(&st);
    for ty in returns.iter().skip(rets.len()) {
        let z = super::zero_of(&mut r, done, *ty, span)
            .expect("invariant: segment results are scalars or arrays (zero_of accepted them for the segment)");
        rets.push(z);
    }
    r.append_inst(done, InstData::Return { args: rets }, &[], span);
    let passed: Vec<Value> = returns
        .iter()
        .map(|ty| r.dfg.append_block_param(out, *ty))
        .collect();
    r.append_inst(out, InstData::Return { args: passed }, &[], span);
    let id = module.push(r);
    debug_assert_eq!(
        id, self_id,
        "the split driver is the module's next function"
    );
    id
}
