//! A reference interpreter for verified IR, written for clarity rather
//! than speed. Tests run it next to the JIT: the two must agree.
//!
//! Semantics match codegen: wrapping integers, C comparisons, saturating
//! float-to-int conversion, `min(a, b) = b < a ? b : a`, runtime checks
//! reported as `InterpError::Runtime` with the instruction's span. Math
//! functions come from Rust's std and the `libm` crate (for `erf`, `erfc`
//! and `lgamma`), so results may differ from the C library in the last bit;
//! `call_with_math` lets the caller supply some of them (a test comparing
//! with compiled code passes the C library's, so that a program whose
//! rounding errors grow a millionfold still agrees).
//!
//! A `slot` is one cell per instruction and call, zeroed each time it
//! executes, as in a compiled frame; the cells are emptied when the call
//! returns, so a reference to one used later is a runtime error.

mod memory;
mod ops;

use ops::math;
pub use ops::{binary, compare, convert};

use crate::entity::{Span, Value};
use crate::function::{Function, Module, ValueDef};
use crate::inst::{BinaryOp, Constant, InstData, MathFunc, UnaryOp};
use crate::types::{ScalarType, Type};
use std::borrow::Cow;

/// An argument: a scalar, or an array (also used for `inout`/`out` scalars,
/// as a one-element array). Arrays are written back.
#[derive(Clone, Debug, PartialEq)]
pub enum InterpArg {
    Scalar(Constant),
    Array(Vec<Constant>),
}

#[derive(Clone, Debug, PartialEq)]
pub enum InterpError {
    Runtime { what: Cow<'static, str>, span: Span },
    OutOfFuel,
    Unsupported(String),
}

#[derive(Clone, Copy, Debug)]
enum Val {
    S(Constant),
    /// Elements `off..off + len` of memory object `id` (a view when
    /// not the whole object).
    Arr(usize, usize, usize),
    Ref(usize, usize),
    Pair(Constant, Constant),
}

/// Math functions the caller computes instead (`None`: the interpreter's).
pub type MathOverride<'a> = &'a dyn Fn(MathFunc, &[Constant]) -> Option<Constant>;

struct Machine<'m> {
    module: &'m Module,
    math: Option<MathOverride<'m>>,
    memory: Vec<Vec<Constant>>,
    fuel: u64,
    /// Tapes lent by `tape.lend`, by handle, while a callee has them.
    saved_tapes: Vec<Option<Vec<(Vec<Val>, usize)>>>,
    /// Per active call, innermost last: its `slot` instructions' cells.
    /// They are emptied when the call returns, so that a reference kept
    /// past it is an error, not a read of stale memory.
    frames: Vec<Vec<(crate::entity::Inst, usize)>>,
}

/// Calls `name` with `args`, with at most `fuel` instructions executed.
pub fn call(
    module: &Module,
    name: &str,
    args: &mut [InterpArg],
    fuel: u64,
) -> Result<Vec<Constant>, InterpError> {
    call_with_math(module, name, args, fuel, None)
}

/// `call`, with math functions from `math` where it answers.
pub fn call_with_math<'m>(
    module: &'m Module,
    name: &str,
    args: &mut [InterpArg],
    fuel: u64,
    math: Option<MathOverride<'m>>,
) -> Result<Vec<Constant>, InterpError> {
    let id = module
        .find(name)
        .ok_or_else(|| InterpError::Unsupported(format!("no function `{name}`")))?;
    let mut m = Machine {
        module,
        math,
        memory: Vec::new(),
        fuel,
        saved_tapes: Vec::new(),
        frames: Vec::new(),
    };
    let func = module.func(id);
    let mut vals = Vec::new();
    let mut arrays = Vec::new();
    for (p, a) in func.params.iter().zip(args.iter()) {
        match (p.ty, a) {
            (Type::Scalar(_), InterpArg::Scalar(c)) => vals.push(Val::S(*c)),
            (Type::Array(_), InterpArg::Array(xs)) => {
                m.memory.push(xs.clone());
                arrays.push(m.memory.len() - 1);
                vals.push(Val::Arr(m.memory.len() - 1, 0, xs.len()));
            }
            (Type::Ref(_), InterpArg::Scalar(c)) => {
                m.memory.push(vec![*c]);
                arrays.push(m.memory.len() - 1);
                vals.push(Val::Ref(m.memory.len() - 1, 0));
            }
            _ => {
                return Err(InterpError::Unsupported(format!(
                    "argument for `{}` has the wrong kind",
                    p.name
                )))
            }
        }
    }
    let result = m.run(func, vals)?;
    // Arrays and `inout`/`out` scalars: copy back in parameter order.
    let mut k = 0;
    for (p, a) in func.params.iter().zip(args.iter_mut()) {
        match (p.ty, a) {
            (Type::Array(_), InterpArg::Array(xs)) => {
                *xs = m.memory[arrays[k]].clone();
                k += 1;
            }
            (Type::Ref(_), InterpArg::Scalar(c)) => {
                *c = m.memory[arrays[k]][0];
                k += 1;
            }
            _ => (),
        }
    }
    Ok(result)
}

impl Machine<'_> {
    /// The (array, index) of an in-bounds element, or `None`.
    fn element(&self, array: Val, index: Constant) -> Option<(usize, usize)> {
        match (array, index) {
            (Val::Arr(id, off, len), Constant::I64(i)) if i >= 0 && (i as usize) < len => {
                Some((id, off + i as usize))
            }
            _ => None,
        }
    }

    fn run(&mut self, func: &Function, params: Vec<Val>) -> Result<Vec<Constant>, InterpError> {
        self.frames.push(Vec::new());
        let result = self.run_frame(func, params);
        let frame = self
            .frames
            .pop()
            .expect("invariant: pushed above, and calls pop what they push");
        for (_, id) in frame {
            self.memory[id] = Vec::new();
        }
        result
    }

    fn run_frame(
        &mut self,
        func: &Function,
        params: Vec<Val>,
    ) -> Result<Vec<Constant>, InterpError> {
        let mut env: Vec<Option<Val>> = vec![None; func.dfg.num_values()];
        // This call's tapes, one per level: pushed at the back, popped at
        // the back, read from the front (`read` is the forward replay of
        // `unzip`).
        let mut tapes: Vec<(Vec<Val>, usize)> = Vec::new();
        let Some(mut block) = func.entry_block() else {
            return Err(InterpError::Unsupported("empty function".into()));
        };
        for (v, x) in func.dfg.block_params(block).iter().zip(params) {
            env[v.index()] = Some(x);
        }
        loop {
            let mut next = None;
            for &inst in &func.dfg.block(block).insts {
                if self.fuel == 0 {
                    return Err(InterpError::OutOfFuel);
                }
                self.fuel -= 1;
                let span = func.span(inst);
                let fail = |what: &'static str| {
                    Err(InterpError::Runtime {
                        what: what.into(),
                        span,
                    })
                };
                let results = func.dfg.inst_results(inst);
                let result_ty = results.first().map(|r| func.dfg.value_type(*r));
                let out: Option<Val> = match func.dfg.inst(inst) {
                    InstData::Const { value } => Some(Val::S(*value)),
                    InstData::Unary { op, arg } => Some(Val::S(match (op, scalar(&env, *arg)) {
                        (UnaryOp::Not, Constant::Bool(b)) => Constant::Bool(!b),
                        (UnaryOp::NoDiff, c) => c,
                        (_, Constant::I64(x)) => Constant::I64(x.wrapping_neg()),
                        (_, Constant::F32(x)) => Constant::F32(-x),
                        (_, Constant::F64(x)) => Constant::F64(-x),
                        (_, c) => c,
                    })),
                    InstData::Binary { op, args } => {
                        let (a, b) = (scalar(&env, args[0]), scalar(&env, args[1]));
                        if let (BinaryOp::Div | BinaryOp::Rem, Constant::I64(0)) = (op, b) {
                            return fail("division by zero");
                        }
                        Some(Val::S(binary(*op, a, b)))
                    }
                    InstData::Cmp { cond, args } => Some(Val::S(Constant::Bool(compare(
                        *cond,
                        scalar(&env, args[0]),
                        scalar(&env, args[1]),
                    )))),
                    InstData::Select { cond, args } => {
                        let c = matches!(scalar(&env, *cond), Constant::Bool(true));
                        Some(get(&env, if c { args[0] } else { args[1] }))
                    }
                    InstData::Convert { arg } => Some(Val::S(convert(
                        scalar(&env, *arg),
                        result_ty
                            .and_then(|t| t.scalar())
                            .unwrap_or(ScalarType::F64),
                    ))),
                    InstData::Math { func: mf, args } => {
                        let xs: Vec<Constant> = args.iter().map(|a| scalar(&env, *a)).collect();
                        let given = self.math.and_then(|f| f(*mf, &xs));
                        Some(Val::S(given.unwrap_or_else(|| math(*mf, &xs))))
                    }
                    InstData::Call { func: callee, args } => {
                        let callee = self.module.func(*callee);
                        if callee.is_import() {
                            return Err(InterpError::Unsupported(format!(
                                "extern `{}`",
                                callee.name
                            )));
                        }
                        let vals = args.iter().map(|a| get(&env, *a)).collect();
                        let rets = self.run(callee, vals)?;
                        for (r, c) in results.iter().zip(rets) {
                            env[r.index()] = Some(Val::S(c));
                        }
                        None
                    }
                    InstData::ArrayLen { .. }
                    | InstData::Load { .. }
                    | InstData::ElemRef { .. }
                    | InstData::Store { .. }
                    | InstData::ArrayNew { .. }
                    | InstData::ArrayFree { .. }
                    | InstData::ArrayNull
                    | InstData::RefLoad { .. }
                    | InstData::RefStore { .. }
                    | InstData::Slot
                    | InstData::Print { .. }
                    | InstData::DeferFree { .. }
                    | InstData::LoopCheckpoint { .. }
                    | InstData::ArrayCopy { .. }
                    | InstData::ArrayView { .. }
                    | InstData::AliasCheck { .. }
                    | InstData::LenCheck { .. }
                    | InstData::CopyRange { .. } => self.memory_inst(func, inst, &env)?,
                    InstData::PairMake { args } => {
                        Some(Val::Pair(scalar(&env, args[0]), scalar(&env, args[1])))
                    }
                    InstData::PairPrimal { pair } | InstData::PairDiff { pair } => {
                        match (get(&env, *pair), func.dfg.inst(inst)) {
                            (Val::Pair(p, _), InstData::PairPrimal { .. }) => Some(Val::S(p)),
                            (Val::Pair(_, d), _) => Some(Val::S(d)),
                            _ => None,
                        }
                    }
                    InstData::TapePush { .. }
                    | InstData::TapePop { .. }
                    | InstData::TapeLend
                    | InstData::TapeReclaim { .. }
                    | InstData::TapeAdopt { .. }
                    | InstData::TapeGive { .. }
                    | InstData::TapeRead { .. } => self.tape_inst(func, inst, &env, &mut tapes)?,
                    InstData::Jump { dest } => {
                        next = Some((
                            dest.block,
                            dest.args.iter().map(|a| get(&env, *a)).collect::<Vec<_>>(),
                        ));
                        None
                    }
                    InstData::Branch {
                        cond,
                        then_dest,
                        else_dest,
                    } => {
                        let dest = if matches!(scalar(&env, *cond), Constant::Bool(true)) {
                            then_dest
                        } else {
                            else_dest
                        };
                        next = Some((
                            dest.block,
                            dest.args.iter().map(|a| get(&env, *a)).collect::<Vec<_>>(),
                        ));
                        None
                    }
                    InstData::Return { args } => {
                        return Ok(args.iter().map(|a| scalar(&env, *a)).collect())
                    }
                };
                if let (Some(v), Some(r)) = (out, results.first()) {
                    env[r.index()] = Some(v);
                }
            }
            let Some((b, args)) = next else {
                return Err(InterpError::Unsupported("block without terminator".into()));
            };
            for (p, a) in func.dfg.block_params(b).iter().zip(args) {
                debug_assert!(matches!(func.dfg.value_def(*p), ValueDef::Param(..)));
                env[p.index()] = Some(a);
            }
            block = b;
        }
    }
}

/// A value the verified IR defined before this use.
fn get(env: &[Option<Val>], v: Value) -> Val {
    env[v.index()].expect("invariant: verified IR defines before use")
}

/// A scalar value (an array or pair reads as `false`, never met in
/// verified IR).
fn scalar(env: &[Option<Val>], v: Value) -> Constant {
    match get(env, v) {
        Val::S(c) => c,
        _ => Constant::Bool(false),
    }
}

/// This call's tape of level `k`, made on first use.
fn level(tapes: &mut Vec<(Vec<Val>, usize)>, k: u8) -> &mut (Vec<Val>, usize) {
    let k = usize::from(k);
    if tapes.len() <= k {
        tapes.resize_with(k + 1, Default::default);
    }
    &mut tapes[k]
}
