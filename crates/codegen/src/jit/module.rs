//! `JitModule`: compiled code, its functions' signatures, and the checked
//! calling interface (`JitModule::call`, and `invoke` under the typed
//! handles of `typed.rs`).

use super::host::stack_floor;
use adc_ir::{Constant, Param, ParamMode, ScalarType, Type};
use std::collections::BTreeMap;
use std::fmt;

/// An array argument, written back in place by the callee when writable.
#[derive(Clone, Debug, PartialEq)]
pub enum ArrayValue {
    /// `bool[]`.
    Bool(Vec<bool>),
    /// `int[]`.
    I64(Vec<i64>),
    /// `float[]`.
    F32(Vec<f32>),
    /// `double[]`.
    F64(Vec<f64>),
}

impl ArrayValue {
    /// The element type.
    ///
    /// ```
    /// # use adc_codegen::ArrayValue;
    /// # use adc_ir::ScalarType;
    /// assert_eq!(ArrayValue::I64(vec![1, 2]).elem(), ScalarType::I64);
    /// assert_eq!(ArrayValue::Bool(vec![]).elem(), ScalarType::Bool);
    /// ```
    pub fn elem(&self) -> ScalarType {
        match self {
            ArrayValue::Bool(_) => ScalarType::Bool,
            ArrayValue::I64(_) => ScalarType::I64,
            ArrayValue::F32(_) => ScalarType::F32,
            ArrayValue::F64(_) => ScalarType::F64,
        }
    }

    /// The number of elements.
    ///
    /// ```
    /// # use adc_codegen::ArrayValue;
    /// assert_eq!(ArrayValue::F32(vec![1.0, 2.0, 3.0]).len(), 3);
    /// ```
    pub fn len(&self) -> usize {
        match self {
            ArrayValue::Bool(v) => v.len(),
            ArrayValue::I64(v) => v.len(),
            ArrayValue::F32(v) => v.len(),
            ArrayValue::F64(v) => v.len(),
        }
    }

    /// True when the array has no elements.
    ///
    /// ```
    /// # use adc_codegen::ArrayValue;
    /// assert!(ArrayValue::F64(vec![]).is_empty());
    /// assert!(!ArrayValue::Bool(vec![false]).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn as_mut_ptr(&mut self) -> u64 {
        match self {
            ArrayValue::Bool(v) => v.as_mut_ptr() as u64,
            ArrayValue::I64(v) => v.as_mut_ptr() as u64,
            ArrayValue::F32(v) => v.as_mut_ptr() as u64,
            ArrayValue::F64(v) => v.as_mut_ptr() as u64,
        }
    }
}

/// One argument: a scalar (for by-value and `inout`/`out` scalar
/// parameters; the latter are updated after the call) or an array.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgValue {
    /// A scalar, converted to the parameter's type as at a call.
    Scalar(Constant),
    /// An array, of the parameter's element type.
    Array(ArrayValue),
}

/// Why a call, or making a typed handle, failed.
#[derive(Clone, Debug, PartialEq)]
pub enum CallError {
    /// The module defines no function of that name.
    UnknownFunction(String),
    /// The number of arguments of a call differs from the number of parameters.
    ArgumentCount {
        /// The function's parameters.
        expected: usize,
        /// The arguments given.
        found: usize,
    },
    /// Argument `index` (from 0) of a call does not fit its parameter.
    ArgumentType {
        /// The argument's position.
        index: usize,
        /// What the parameter takes, in words.
        expected: String,
    },
    /// A typed handle's Rust types (`JitModule::typed`) do not make the
    /// function's signature; both are written in `.ad` syntax.
    Signature {
        /// The function.
        function: String,
        /// Its signature: `double f(double[] x, int n)`.
        expected: String,
        /// The one the handle's types ask for, without parameter names.
        found: String,
    },
    /// A runtime error of docs/arrays.md#runtime-errors: `what at file:line:col`.
    Runtime(String),
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::UnknownFunction(n) => write!(f, "no function `{n}`"),
            CallError::ArgumentCount { expected, found } => {
                write!(f, "expected {expected} arguments, found {found}")
            }
            CallError::ArgumentType { index, expected } => {
                write!(f, "argument {index}: expected {expected}")
            }
            CallError::Signature {
                function,
                expected,
                found,
            } => write!(
                f,
                "`{function}` is `{expected}`; the handle's types make it `{found}`"
            ),
            CallError::Runtime(m) => write!(f, "runtime error: {m}"),
        }
    }
}

impl std::error::Error for CallError {}

/// A function of a `JitModule`: its name and signature.
#[derive(Clone, Debug)]
pub struct JitFunction {
    /// The function's name.
    pub name: String,
    /// Its parameters: name, IR type and mode (`in`, `inout`, `out`).
    pub params: Vec<Param>,
    /// Its result types (none for `void`, several for a tuple).
    pub returns: Vec<Type>,
    entry: usize,
    c_abi: usize,
}

impl JitFunction {
    pub(crate) fn new(f: &adc_ir::Function, entry: *const u8, c_abi: *const u8) -> JitFunction {
        JitFunction {
            name: f.name.clone(),
            params: f.params.clone(),
            returns: f.returns.clone(),
            entry: entry as usize,
            c_abi: c_abi as usize,
        }
    }
}

/// Compiled code; functions may be called from several threads at once.
pub struct JitModule {
    module: Option<cranelift_jit::JITModule>,
    funcs: BTreeMap<String, JitFunction>,
}

// SAFETY: after `finalize_definitions` the module's code and data are
// immutable; calls share nothing but that read-only memory (each call has
// its own runtime context), and the module is only mutated by `Drop`.
unsafe impl Send for JitModule {}
unsafe impl Sync for JitModule {}

impl Drop for JitModule {
    fn drop(&mut self) {
        if let Some(m) = self.module.take() {
            // SAFETY: no pointer into the module outlives it: `JitFunction`s
            // hold addresses only usable through `&JitModule`.
            unsafe { m.free_memory() };
        }
    }
}

fn scalar_bits(c: Constant) -> u64 {
    match c {
        Constant::Bool(b) => b as u64,
        Constant::I64(i) => i as u64,
        Constant::F32(x) => x.to_bits() as u64,
        Constant::F64(x) => x.to_bits(),
    }
}

fn scalar_from_bits(t: ScalarType, bits: u64) -> Constant {
    match t {
        ScalarType::Bool => Constant::Bool(bits & 0xff != 0),
        ScalarType::I64 => Constant::I64(bits as i64),
        ScalarType::F32 => Constant::F32(f32::from_bits(bits as u32)),
        ScalarType::F64 => Constant::F64(f64::from_bits(bits)),
    }
}

fn type_desc(p: &Param) -> String {
    match p.ty {
        Type::Scalar(s) | Type::Ref(s) => format!("a `{s}` scalar"),
        Type::Array(s) => format!("an array of `{s}`"),
        // Invariant: verified signatures have no dpair (codegen's input is verified).
        Type::Pair(_) => unreachable!("a dpair in a signature"),
    }
}

impl JitModule {
    pub(crate) fn new(
        module: cranelift_jit::JITModule,
        funcs: BTreeMap<String, JitFunction>,
    ) -> JitModule {
        JitModule {
            module: Some(module),
            funcs,
        }
    }

    /// The function `name` with its signature, if the module defines it.
    ///
    /// ```
    /// # use adc_codegen::{ArgValue, ArrayValue, CallError};
    /// # use adc_ir::{Constant, ScalarType, Type};
    /// # let ir = adc_ir::parse_module("func @twice(x: f64) -> f64 {\n\
    /// #     block0(v0: f64):\n v1: f64 = add v0, v0\n return v1\n }\n\
    /// #     func @fill(out ys: arr<f64>, k: f64) {\n\
    /// #     block0(v0: arr<f64>, v1: f64):\n v2: i64 = const 0\n store v0, v2, v1\n return\n }").unwrap();
    /// # adc_ir::verify(&ir).unwrap();
    /// # let jit = adc_codegen::jit(&ir, &|_| "f.ad:1:1".to_string(), &[]).unwrap();
    /// // `jit` holds `double twice(double x) { return x + x; }` and
    /// // `void fill(out double[] ys, double k) { ys[0] = k; }`, compiled.
    /// let twice = jit.function("twice").expect("defined");
    /// assert_eq!(twice.params[0].ty, Type::F64);
    /// assert_eq!(twice.returns, [Type::F64]);
    /// assert!(jit.function("thrice").is_none());
    /// ```
    pub fn function(&self, name: &str) -> Option<&JitFunction> {
        self.funcs.get(name)
    }

    /// Every function of the module, by name in alphabetical order.
    ///
    /// ```
    /// # use adc_codegen::{ArgValue, ArrayValue, CallError};
    /// # use adc_ir::{Constant, ScalarType, Type};
    /// # let ir = adc_ir::parse_module("func @twice(x: f64) -> f64 {\n\
    /// #     block0(v0: f64):\n v1: f64 = add v0, v0\n return v1\n }\n\
    /// #     func @fill(out ys: arr<f64>, k: f64) {\n\
    /// #     block0(v0: arr<f64>, v1: f64):\n v2: i64 = const 0\n store v0, v2, v1\n return\n }").unwrap();
    /// # adc_ir::verify(&ir).unwrap();
    /// # let jit = adc_codegen::jit(&ir, &|_| "f.ad:1:1".to_string(), &[]).unwrap();
    /// // `jit` holds `double twice(double x) { return x + x; }` and
    /// // `void fill(out double[] ys, double k) { ys[0] = k; }`, compiled.
    /// let names: Vec<&str> = jit.functions().map(|f| f.name.as_str()).collect();
    /// assert_eq!(names, ["fill", "twice"]);
    /// ```
    pub fn functions(&self) -> impl Iterator<Item = &JitFunction> {
        self.funcs.values()
    }

    /// The C-ABI entry point of `name` (docs/embedding.md#the-c-signature-of-a-function). Transmute it to the
    /// matching `extern "C" fn` type; a runtime error inside it prints the
    /// message and exits the process with status 3.
    ///
    /// ```
    /// # use adc_codegen::{ArgValue, ArrayValue, CallError};
    /// # use adc_ir::{Constant, ScalarType, Type};
    /// # let ir = adc_ir::parse_module("func @twice(x: f64) -> f64 {\n\
    /// #     block0(v0: f64):\n v1: f64 = add v0, v0\n return v1\n }\n\
    /// #     func @fill(out ys: arr<f64>, k: f64) {\n\
    /// #     block0(v0: arr<f64>, v1: f64):\n v2: i64 = const 0\n store v0, v2, v1\n return\n }").unwrap();
    /// # adc_ir::verify(&ir).unwrap();
    /// # let jit = adc_codegen::jit(&ir, &|_| "f.ad:1:1".to_string(), &[]).unwrap();
    /// // `jit` holds `double twice(double x) { return x + x; }` and
    /// // `void fill(out double[] ys, double k) { ys[0] = k; }`, compiled.
    /// let ptr = jit.raw_function("twice").expect("defined");
    /// // SAFETY: the C signature of `double twice(double x)`; `jit` outlives the call.
    /// let twice: extern "C" fn(f64) -> f64 = unsafe { std::mem::transmute(ptr) };
    /// assert_eq!(twice(1.25), 2.5);
    /// assert!(jit.raw_function("thrice").is_none());
    /// ```
    pub fn raw_function(&self, name: &str) -> Option<*const u8> {
        self.funcs.get(name).map(|f| f.c_abi as *const u8)
    }

    /// Calls `name` with checked arguments. Writable arrays and `inout`/`out`
    /// scalars in `args` hold the callee's results afterwards. Returns the
    /// result values (none for `void`, several for a tuple). Scalars
    /// convert as the language converts them at a call (an `int` to a
    /// `double` parameter, ...).
    ///
    /// ```
    /// # use adc_codegen::{ArgValue, ArrayValue, CallError};
    /// # use adc_ir::{Constant, ScalarType, Type};
    /// # let ir = adc_ir::parse_module("func @twice(x: f64) -> f64 {\n\
    /// #     block0(v0: f64):\n v1: f64 = add v0, v0\n return v1\n }\n\
    /// #     func @fill(out ys: arr<f64>, k: f64) {\n\
    /// #     block0(v0: arr<f64>, v1: f64):\n v2: i64 = const 0\n store v0, v2, v1\n return\n }").unwrap();
    /// # adc_ir::verify(&ir).unwrap();
    /// # let jit = adc_codegen::jit(&ir, &|_| "f.ad:1:1".to_string(), &[]).unwrap();
    /// // `jit` holds `double twice(double x) { return x + x; }` and
    /// // `void fill(out double[] ys, double k) { ys[0] = k; }`, compiled.
    /// let mut args = [ArgValue::Scalar(Constant::F64(1.5))];
    /// assert_eq!(jit.call("twice", &mut args), Ok(vec![Constant::F64(3.0)]));
    /// let mut args = [ArgValue::Scalar(Constant::I64(2))];
    /// assert_eq!(jit.call("twice", &mut args), Ok(vec![Constant::F64(4.0)]));
    ///
    /// let mut args = [ArgValue::Array(ArrayValue::F64(vec![0.0, 0.0])), ArgValue::Scalar(Constant::F64(7.0))];
    /// assert_eq!(jit.call("fill", &mut args), Ok(vec![]));
    /// assert_eq!(args[0], ArgValue::Array(ArrayValue::F64(vec![7.0, 0.0])));
    ///
    /// let mut args = [ArgValue::Array(ArrayValue::F64(vec![])), ArgValue::Scalar(Constant::F64(7.0))];
    /// assert!(matches!(jit.call("fill", &mut args), Err(CallError::Runtime(_))));
    /// ```
    pub fn call(&self, name: &str, args: &mut [ArgValue]) -> Result<Vec<Constant>, CallError> {
        let f = self
            .funcs
            .get(name)
            .ok_or_else(|| CallError::UnknownFunction(name.to_string()))?;
        if args.len() != f.params.len() {
            return Err(CallError::ArgumentCount {
                expected: f.params.len(),
                found: args.len(),
            });
        }
        // Coerce scalars exactly as the language would at a call.
        for (i, (p, a)) in f.params.iter().zip(args.iter_mut()).enumerate() {
            let bad = || CallError::ArgumentType {
                index: i,
                expected: type_desc(p),
            };
            match (p.ty, &*a) {
                (Type::Scalar(s) | Type::Ref(s), ArgValue::Scalar(c)) => {
                    let c = match (s, *c) {
                        (ScalarType::F64, Constant::F32(x)) => Constant::F64(x as f64),
                        (ScalarType::F64, Constant::I64(x)) => Constant::F64(x as f64),
                        (ScalarType::F32, Constant::F64(x)) => Constant::F32(x as f32),
                        (ScalarType::F32, Constant::I64(x)) => Constant::F32(x as f32),
                        (s, c) if c.ty() == s => c,
                        _ => return Err(bad()),
                    };
                    *a = ArgValue::Scalar(c);
                }
                (Type::Array(s), ArgValue::Array(arr)) if arr.elem() == s => (),
                _ => return Err(bad()),
            }
        }
        let mut ref_cells: Vec<u64> = vec![0; args.len()];
        let mut slots: Vec<u64> = Vec::new();
        for (i, (p, a)) in f.params.iter().zip(args.iter_mut()).enumerate() {
            match (p.ty, a) {
                (Type::Scalar(_), ArgValue::Scalar(c)) => slots.push(scalar_bits(*c)),
                (Type::Ref(_), ArgValue::Scalar(c)) => {
                    ref_cells[i] = scalar_bits(*c);
                    slots.push(&mut ref_cells[i] as *mut u64 as u64);
                }
                (Type::Array(_), ArgValue::Array(arr)) => {
                    let len = arr.len() as u64;
                    slots.push(arr.as_mut_ptr());
                    slots.push(len);
                }
                _ => {
                    return Err(CallError::ArgumentType {
                        index: i,
                        expected: type_desc(p),
                    })
                }
            }
        }
        // One 8-byte slot per (scalar) result; at least one so the pointer is valid.
        let mut rets: Vec<u64> = vec![0; f.returns.len().max(1)];
        // SAFETY: `slots` holds one valid word per expanded parameter
        // (array pointers borrowed from `args` for the duration of the call,
        // reference cells in `ref_cells`), checked against `f`'s signature.
        unsafe { invoke(f, &slots, &mut rets)? };
        for (i, (p, a)) in f.params.iter().zip(args.iter_mut()).enumerate() {
            if let (Type::Ref(s), ArgValue::Scalar(c)) = (p.ty, a) {
                if p.mode != ParamMode::In {
                    *c = scalar_from_bits(s, ref_cells[i]);
                }
            }
        }
        Ok(f.returns
            .iter()
            .enumerate()
            .map(|(i, t)| scalar_from_bits(t.elem(), rets[i]))
            .collect())
    }

    /// Calls `name` with its arguments already laid out as words, for
    /// bindings that pass memory they own without copying it (the Python
    /// package passes NumPy arrays in place): one word per parameter as
    /// the C ABI passes it (a scalar's bits, zero-extended; a pointer for
    /// an `inout`/`out` scalar; an array's pointer, then its length).
    /// `rets` receives one word per result (a scalar's bits) and needs
    /// room for at least one. A runtime error is `CallError::Runtime`,
    /// as from [`JitModule::call`]; a wrong number of words is
    /// `CallError::ArgumentCount` (counting words).
    ///
    /// ```
    /// # use adc_codegen::{ArgValue, ArrayValue, CallError};
    /// # use adc_ir::{Constant, ScalarType, Type};
    /// # let ir = adc_ir::parse_module("func @twice(x: f64) -> f64 {\n\
    /// #     block0(v0: f64):\n v1: f64 = add v0, v0\n return v1\n }\n\
    /// #     func @fill(out ys: arr<f64>, k: f64) {\n\
    /// #     block0(v0: arr<f64>, v1: f64):\n v2: i64 = const 0\n store v0, v2, v1\n return\n }").unwrap();
    /// # adc_ir::verify(&ir).unwrap();
    /// # let jit = adc_codegen::jit(&ir, &|_| "f.ad:1:1".to_string(), &[]).unwrap();
    /// // `jit` holds `double twice(double x) { return x + x; }` and
    /// // `void fill(out double[] ys, double k) { ys[0] = k; }`, compiled.
    /// let mut ys = [0.0f64; 2];
    /// let slots = [ys.as_mut_ptr() as u64, 2, 7.0f64.to_bits()];
    /// let mut rets = [0u64];
    /// // SAFETY: `fill`'s words: a writable array of 2 `double`s, then a `double`.
    /// unsafe { jit.call_words("fill", &slots, &mut rets) }.expect("runs");
    /// assert_eq!(ys, [7.0, 0.0]);
    /// // SAFETY: as above, with an empty array (a runtime error, reported).
    /// let empty = [ys.as_mut_ptr() as u64, 0, 7.0f64.to_bits()];
    /// assert!(matches!(unsafe { jit.call_words("fill", &empty, &mut rets) }, Err(CallError::Runtime(_))));
    /// ```
    ///
    /// # Safety
    /// The words must fit `name`'s parameters: every pointer valid for the
    /// whole call and pointing at values of the parameter's element type
    /// (an array's at as many as its length word says), writable where the
    /// parameter is `inout`/`out`; and writable arrays must not overlap any
    /// other array argument (the aliasing rule of docs/arrays.md, which
    /// this call does not check).
    pub unsafe fn call_words(
        &self,
        name: &str,
        slots: &[u64],
        rets: &mut [u64],
    ) -> Result<(), CallError> {
        let f = self
            .funcs
            .get(name)
            .ok_or_else(|| CallError::UnknownFunction(name.to_string()))?;
        let words: usize = f
            .params
            .iter()
            .map(|p| if matches!(p.ty, Type::Array(_)) { 2 } else { 1 })
            .sum();
        if slots.len() != words || rets.len() < f.returns.len().max(1) {
            return Err(CallError::ArgumentCount {
                expected: words,
                found: slots.len(),
            });
        }
        // SAFETY: the caller vouches for the words (see above); their
        // number and `rets`' room were checked against `f`'s signature.
        unsafe { invoke(f, slots, rets) }
    }
}

/// Calls `f`'s entry trampoline with `slots` (one word per expanded
/// parameter: scalars' bits, array pointer then length, reference
/// pointers) and `rets` (one word per result, at least one); a runtime
/// error comes back as `CallError::Runtime`.
///
/// # Safety
/// `slots` must match `f`'s parameters: every pointer valid for the call,
/// writable where the parameter is `inout`/`out`, and pointing at values of
/// the parameter's element type; `rets` must have room for every result.
pub(crate) unsafe fn invoke(
    f: &JitFunction,
    slots: &[u64],
    rets: &mut [u64],
) -> Result<(), CallError> {
    // The context: message pointer and length (set by a failing check),
    // the stack floor (`translate::CTX_STACK_FLOOR`), and up to two
    // numbers a failing length check names, each with where it goes in
    // the message (`translate::CTX_ERROR_NEEDED`).
    let mut ctx: [u64; 7] = [0, 0, stack_floor::get(), 0, 0, 0, 0];
    type Entry = unsafe extern "C" fn(*mut u64, *const u64, *mut u64);
    // SAFETY: `entry` is the finalized `__adc_entry_NAME` trampoline with
    // exactly this signature (the caller vouches for the slots), and the
    // module outlives the call (`f` is borrowed from it).
    unsafe {
        let entry: Entry = std::mem::transmute::<usize, Entry>(f.entry);
        entry(ctx.as_mut_ptr(), slots.as_ptr(), rets.as_mut_ptr());
    }
    if ctx[0] != 0 {
        // SAFETY: a failing check stores a pointer and length of a message
        // in the module's read-only data, alive with the module.
        let bytes = unsafe { std::slice::from_raw_parts(ctx[0] as *const u8, ctx[1] as usize) };
        let mut text = String::from_utf8_lossy(bytes).into_owned();
        // The second number first: its offset is past the first's.
        for (n, at) in [(ctx[5], ctx[6]), (ctx[3], ctx[4])] {
            if at != 0 && text.is_char_boundary(at as usize) {
                text.insert_str(at as usize, &(n as i64).to_string());
            }
        }
        let text = text
            .trim_end()
            .trim_start_matches("runtime error: ")
            .to_string();
        return Err(CallError::Runtime(text));
    }
    Ok(())
}
