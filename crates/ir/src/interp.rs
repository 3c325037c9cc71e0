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

use crate::entity::{Span, Value};
use crate::function::{Function, Module, ValueDef};
use crate::inst::{BinaryOp, CmpCond, Constant, InstData, MathFunc, UnaryOp};
use crate::types::{ScalarType, Type};

/// An argument: a scalar, or an array (also used for `inout`/`out` scalars,
/// as a one-element array). Arrays are written back.
#[derive(Clone, Debug, PartialEq)]
pub enum InterpArg {
    Scalar(Constant),
    Array(Vec<Constant>),
}

#[derive(Clone, Debug, PartialEq)]
pub enum InterpError {
    Runtime { what: &'static str, span: Span },
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

fn f64_of(c: Constant) -> f64 {
    match c {
        Constant::F64(x) => x,
        Constant::F32(x) => x as f64,
        Constant::I64(x) => x as f64,
        Constant::Bool(b) => b as i64 as f64,
    }
}

fn math(func: MathFunc, args: &[Constant]) -> Constant {
    if let [Constant::I64(x)] = args {
        return Constant::I64(x.wrapping_abs());
    }
    let x = f64_of(args[0]);
    let y = args.get(1).map(|c| f64_of(*c)).unwrap_or(0.0);
    let r = match func {
        MathFunc::Sin => x.sin(),
        MathFunc::Cos => x.cos(),
        MathFunc::Tan => x.tan(),
        MathFunc::Asin => x.asin(),
        MathFunc::Acos => x.acos(),
        MathFunc::Atan => x.atan(),
        MathFunc::Atan2 => x.atan2(y),
        MathFunc::Sinh => x.sinh(),
        MathFunc::Cosh => x.cosh(),
        MathFunc::Tanh => x.tanh(),
        MathFunc::Exp => x.exp(),
        MathFunc::Expm1 => x.exp_m1(),
        MathFunc::Log => x.ln(),
        MathFunc::Log1p => x.ln_1p(),
        MathFunc::Log2 => x.log2(),
        MathFunc::Log10 => x.log10(),
        MathFunc::Sqrt => x.sqrt(),
        MathFunc::Cbrt => x.cbrt(),
        MathFunc::Pow => x.powf(y),
        MathFunc::Hypot => x.hypot(y),
        MathFunc::Abs => x.abs(),
        MathFunc::Floor => x.floor(),
        MathFunc::Ceil => x.ceil(),
        MathFunc::Round => x.round(),
        MathFunc::Trunc => x.trunc(),
        MathFunc::Fmod => x % y,
        MathFunc::Erf => libm::erf(x),
        MathFunc::Erfc => libm::erfc(x),
        MathFunc::Lgamma => libm::lgamma(x),
    };
    match args[0] {
        Constant::F32(_) => Constant::F32(r as f32),
        _ => Constant::F64(r),
    }
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
        let mut env: Vec<Option<Val>> = vec![None; func.dfg.num_values()];
        // This call's tapes, one per level: pushed at the back, popped at
        // the back, read from the front (`read` is the forward replay of
        // `unzip`).
        let mut tapes: Vec<(Vec<Val>, usize)> = Vec::new();
        fn level(tapes: &mut Vec<(Vec<Val>, usize)>, k: u8) -> &mut (Vec<Val>, usize) {
            let k = usize::from(k);
            if tapes.len() <= k {
                tapes.resize_with(k + 1, Default::default);
            }
            &mut tapes[k]
        }
        let Some(mut block) = func.entry_block() else {
            return Err(InterpError::Unsupported("empty function".into()));
        };
        for (v, x) in func.dfg.block_params(block).iter().zip(params) {
            env[v.index()] = Some(x);
        }
        let get = |env: &Vec<Option<Val>>, v: Value| {
            env[v.index()].expect("invariant: verified IR defines before use")
        };
        let scalar = |env: &Vec<Option<Val>>, v: Value| match get(env, v) {
            Val::S(c) => c,
            _ => Constant::Bool(false),
        };
        loop {
            let mut next = None;
            for &inst in &func.dfg.block(block).insts {
                if self.fuel == 0 {
                    return Err(InterpError::OutOfFuel);
                }
                self.fuel -= 1;
                let span = func.span(inst);
                let fail = |what| Err(InterpError::Runtime { what, span });
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
                    InstData::ArrayLen { array } => match get(&env, *array) {
                        Val::Arr(_, _, len) => Some(Val::S(Constant::I64(len as i64))),
                        _ => None,
                    },
                    InstData::Load { array, index, .. } | InstData::ElemRef { array, index } => {
                        let Some((id, i)) = self.element(get(&env, *array), scalar(&env, *index))
                        else {
                            return fail("index out of bounds");
                        };
                        match func.dfg.inst(inst) {
                            InstData::Load { .. } => Some(Val::S(self.memory[id][i])),
                            _ => Some(Val::Ref(id, i)),
                        }
                    }
                    InstData::Store {
                        array,
                        index,
                        value,
                        ..
                    } => {
                        let Some((id, i)) = self.element(get(&env, *array), scalar(&env, *index))
                        else {
                            return fail("index out of bounds");
                        };
                        self.memory[id][i] = scalar(&env, *value);
                        None
                    }
                    InstData::ArrayNew { len } => {
                        let Constant::I64(n) = scalar(&env, *len) else {
                            return fail("bad length");
                        };
                        if n < 0 {
                            return fail("negative array length");
                        }
                        let elem = result_ty.map(|t| t.elem()).unwrap_or(ScalarType::F64);
                        if n > 1 << 32 {
                            return fail("out of memory");
                        }
                        self.memory.push(vec![Constant::zero(elem); n as usize]);
                        Some(Val::Arr(self.memory.len() - 1, 0, n as usize))
                    }
                    InstData::ArrayFree { .. } => None,
                    InstData::ArrayNull => {
                        self.memory.push(Vec::new());
                        Some(Val::Arr(self.memory.len() - 1, 0, 0))
                    }
                    InstData::RefLoad { ptr } => match get(&env, *ptr) {
                        Val::Ref(id, i) => Some(Val::S(self.memory[id][i])),
                        _ => None,
                    },
                    InstData::RefStore { ptr, value } => {
                        if let Val::Ref(id, i) = get(&env, *ptr) {
                            self.memory[id][i] = scalar(&env, *value);
                        }
                        None
                    }
                    InstData::Slot => {
                        let elem = result_ty.map(|t| t.elem()).unwrap_or(ScalarType::F64);
                        self.memory.push(vec![Constant::zero(elem)]);
                        Some(Val::Ref(self.memory.len() - 1, 0))
                    }
                    InstData::Print { .. }
                    | InstData::DeferFree { .. }
                    | InstData::LoopCheckpoint { .. } => None,
                    InstData::ArrayCopy { array } => match get(&env, *array) {
                        Val::Arr(id, off, len) => {
                            self.memory.push(self.memory[id][off..off + len].to_vec());
                            Some(Val::Arr(self.memory.len() - 1, 0, len))
                        }
                        _ => None,
                    },
                    InstData::ArrayView { array, lo, hi } => {
                        match (get(&env, *array), scalar(&env, *lo), scalar(&env, *hi)) {
                            (Val::Arr(id, off, len), Constant::I64(lo), Constant::I64(hi))
                                if 0 <= lo && lo <= hi && hi as usize <= len =>
                            {
                                Some(Val::Arr(id, off + lo as usize, (hi - lo) as usize))
                            }
                            _ => return fail("array view out of bounds"),
                        }
                    }
                    InstData::AliasCheck { args } => match (get(&env, args[0]), get(&env, args[1]))
                    {
                        (Val::Arr(a, a0, an), Val::Arr(b, b0, bn))
                            if a == b && an > 0 && bn > 0 && a0 < b0 + bn && b0 < a0 + an =>
                        {
                            return fail("arguments alias")
                        }
                        _ => None,
                    },
                    InstData::LenCheck { args } => match (get(&env, args[0]), get(&env, args[1])) {
                        (Val::Arr(_, _, a), Val::Arr(_, _, b)) if a != b => {
                            return fail("shadow length differs from its primal's")
                        }
                        _ => None,
                    },
                    InstData::CopyRange {
                        dst,
                        dst_index,
                        src,
                        src_index,
                        count,
                    } => {
                        let int = |v: Value| match scalar(&env, v) {
                            Constant::I64(x) => x,
                            _ => 0,
                        };
                        let (Val::Arr(d, doff, dlen), Val::Arr(s, soff, slen)) =
                            (get(&env, *dst), get(&env, *src))
                        else {
                            return fail("copyrange of non-arrays");
                        };
                        let (di, si, n) = (int(*dst_index), int(*src_index), int(*count));
                        if n > 0 {
                            let in_bounds = |start: i64, len: usize| {
                                start >= 0 && start.checked_add(n).is_some_and(|e| e <= len as i64)
                            };
                            if !in_bounds(di, dlen) || !in_bounds(si, slen) {
                                return fail("index out of bounds");
                            }
                            let (di, si, n) = (doff + di as usize, soff + si as usize, n as usize);
                            let part = self.memory[s][si..si + n].to_vec();
                            self.memory[d][di..di + n].copy_from_slice(&part);
                        }
                        None
                    }
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
                    InstData::TapePush { value, tape } => {
                        let v = get(&env, *value);
                        level(&mut tapes, *tape).0.push(v);
                        None
                    }
                    InstData::TapePop { tape } => match level(&mut tapes, *tape).0.pop() {
                        Some(v) => Some(v),
                        None => {
                            return Err(InterpError::Unsupported("pop of an empty tape".into()))
                        }
                    },
                    InstData::TapeLend => {
                        self.saved_tapes.push(Some(std::mem::take(&mut tapes)));
                        Some(Val::S(Constant::I64(self.saved_tapes.len() as i64 - 1)))
                    }
                    InstData::TapeReclaim { handle } | InstData::TapeAdopt { handle } => {
                        let lent = match scalar(&env, *handle) {
                            Constant::I64(h) => {
                                self.saved_tapes.get_mut(h as usize).and_then(Option::take)
                            }
                            _ => None,
                        };
                        match lent {
                            Some(t) => tapes = t,
                            None => {
                                return Err(InterpError::Unsupported(
                                    "a tape handle that holds no tape".into(),
                                ))
                            }
                        }
                        None
                    }
                    InstData::TapeGive { handle } => {
                        let slot = match scalar(&env, *handle) {
                            Constant::I64(h) => self.saved_tapes.get_mut(h as usize),
                            _ => None,
                        };
                        match slot {
                            Some(s) if s.is_none() => *s = Some(std::mem::take(&mut tapes)),
                            _ => {
                                return Err(InterpError::Unsupported(
                                    "a tape given back to a handle that holds one".into(),
                                ))
                            }
                        }
                        None
                    }
                    InstData::TapeRead { tape } => match level(&mut tapes, *tape) {
                        (values, front) if *front < values.len() => {
                            *front += 1;
                            Some(values[*front - 1])
                        }
                        _ => return Err(InterpError::Unsupported("read past the tape".into())),
                    },
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

/// Binary operation semantics (integer division by zero is the caller's check).
pub fn binary(op: BinaryOp, a: Constant, b: Constant) -> Constant {
    use Constant::*;
    macro_rules! float {
        ($x:expr, $y:expr) => {
            match op {
                BinaryOp::Add => $x + $y,
                BinaryOp::Sub => $x - $y,
                BinaryOp::Mul => $x * $y,
                BinaryOp::Div => $x / $y,
                BinaryOp::Rem => $x % $y,
                BinaryOp::MulZ => {
                    if $x == 0.0 {
                        0.0
                    } else {
                        $x * $y
                    }
                }
                BinaryOp::DivZ => {
                    if $x == 0.0 {
                        0.0
                    } else {
                        $x / $y
                    }
                }
                // C's `fmin`/`fmax`: a NaN operand is ignored.
                BinaryOp::Min => {
                    if $y < $x || $x.is_nan() {
                        $y
                    } else {
                        $x
                    }
                }
                BinaryOp::Max => {
                    if $y > $x || $x.is_nan() {
                        $y
                    } else {
                        $x
                    }
                }
            }
        };
    }
    match (a, b) {
        (I64(x), I64(y)) => I64(match op {
            BinaryOp::Add => x.wrapping_add(y),
            BinaryOp::Sub => x.wrapping_sub(y),
            BinaryOp::Mul | BinaryOp::MulZ => x.wrapping_mul(y),
            // The verifier rejects an integer `divz`.
            BinaryOp::Div | BinaryOp::DivZ => x.wrapping_div(y),
            BinaryOp::Rem => x.wrapping_rem(y),
            BinaryOp::Min => x.min(y),
            BinaryOp::Max => x.max(y),
        }),
        (F64(x), F64(y)) => F64(float!(x, y)),
        (F32(x), F32(y)) => F32(float!(x, y)),
        (a, _) => a,
    }
}

/// Comparison semantics: ordered except `ne`, as in C.
pub fn compare(cond: CmpCond, a: Constant, b: Constant) -> bool {
    let ord = match (a, b) {
        (Constant::I64(x), Constant::I64(y)) => x.partial_cmp(&y),
        (Constant::F64(x), Constant::F64(y)) => x.partial_cmp(&y),
        (Constant::F32(x), Constant::F32(y)) => x.partial_cmp(&y),
        (Constant::Bool(x), Constant::Bool(y)) => x.partial_cmp(&y),
        _ => None,
    };
    use std::cmp::Ordering::*;
    match (cond, ord) {
        (CmpCond::Ne, None) => true,
        (_, None) => false,
        (CmpCond::Eq, Some(o)) => o == Equal,
        (CmpCond::Ne, Some(o)) => o != Equal,
        (CmpCond::Lt, Some(o)) => o == Less,
        (CmpCond::Le, Some(o)) => o != Greater,
        (CmpCond::Gt, Some(o)) => o == Greater,
        (CmpCond::Ge, Some(o)) => o != Less,
    }
}

/// Conversion semantics: float to int truncates and saturates, NaN to 0.
pub fn convert(c: Constant, to: ScalarType) -> Constant {
    use Constant::*;
    match (c, to) {
        (c, t) if c.ty() == t => c,
        (I64(x), ScalarType::F64) => F64(x as f64),
        (I64(x), ScalarType::F32) => F32(x as f32),
        (F64(x), ScalarType::I64) => I64(x as i64),
        (F32(x), ScalarType::I64) => I64(x as i64),
        (F32(x), ScalarType::F64) => F64(x as f64),
        (F64(x), ScalarType::F32) => F32(x as f32),
        (Bool(b), ScalarType::I64) => I64(b as i64),
        (Bool(b), ScalarType::F64) => F64(b as i64 as f64),
        (Bool(b), ScalarType::F32) => F32(b as i64 as f32),
        (I64(x), ScalarType::Bool) => Bool(x != 0),
        (F64(x), ScalarType::Bool) => Bool(x != 0.0),
        (F32(x), ScalarType::Bool) => Bool(x != 0.0),
        (c, _) => c,
    }
}
