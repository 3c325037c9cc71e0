//! The JIT host side: runtime helpers linked into JIT code, and the checked
//! calling interface of `JitModule`.

use adc_ir::{Constant, Param, ParamMode, ScalarType, Type};
use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;

fn print_sep(first: i8) {
    if first == 0 {
        let _ = std::io::stdout().write_all(b" ");
    }
}

extern "C" fn print_f64(x: f64, first: i8) {
    print_sep(first);
    let _ = write!(std::io::stdout(), "{}", adc_ir::inst::fmt_f64(x));
}

extern "C" fn print_f32(x: f32, first: i8) {
    print_sep(first);
    let _ = write!(std::io::stdout(), "{}", adc_ir::inst::fmt_f32(x));
}

extern "C" fn print_i64(x: i64, first: i8) {
    print_sep(first);
    let _ = write!(std::io::stdout(), "{x}");
}

extern "C" fn print_bool(x: i8, first: i8) {
    print_sep(first);
    let _ = write!(std::io::stdout(), "{}", x != 0);
}

extern "C" fn print_end() {
    let mut out = std::io::stdout();
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

/// The lowest stack address JIT code called from this thread may reach:
/// the end of the thread's stack plus a margin (256 KiB, or a quarter of a
/// smaller stack) for the host functions
/// compiled code calls (printing, allocation) and for the frame that finds
/// it is too deep. Below it, compiled code stops with a runtime error
/// instead of running into the guard page. Zero, meaning unchecked, where
/// the stack cannot be found.
mod stack_floor {
    use std::cell::Cell;

    const MARGIN: u64 = 256 << 10;

    thread_local! {
        static FLOOR: Cell<Option<u64>> = const { Cell::new(None) };
    }

    pub(crate) fn get() -> u64 {
        FLOOR.with(|floor| {
            if let Some(f) = floor.get() {
                return f;
            }
            // A small stack keeps three quarters of itself.
            let f = query().map_or(0, |(low, size)| low + MARGIN.min(size / 4));
            floor.set(Some(f));
            f
        })
    }

    #[cfg(target_os = "linux")]
    /// The lowest address and the size of this thread's stack.
    fn query() -> Option<(u64, u64)> {
        // SAFETY: the attribute object is initialised by pthread_getattr_np
        // before it is read, and destroyed once.
        unsafe {
            let mut attr: libc::pthread_attr_t = std::mem::zeroed();
            if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
                return None;
            }
            let mut low: *mut libc::c_void = std::ptr::null_mut();
            let mut size: libc::size_t = 0;
            let ok = libc::pthread_attr_getstack(&attr, &mut low, &mut size) == 0;
            libc::pthread_attr_destroy(&mut attr);
            (ok && !low.is_null()).then_some((low as u64, size as u64))
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn query() -> Option<(u64, u64)> {
        None
    }
}

/// Derivative tapes of JIT code come from these two instead of `realloc`
/// and `free`: each thread keeps its largest freed tape (up to
/// `MAX_SPARE_TAPE` bytes) for the next derivative call to start with, so
/// repeated gradients do not map and fault in fresh pages every time. A
/// tape is still owned by one call while it runs; the spare is per thread.
mod tape_cache {
    use std::cell::Cell;
    use std::ffi::c_void;
    use std::ptr::null_mut;

    /// 64 MiB of capacity; malloc's usable size of a 64 MiB block is a
    /// little larger (page rounding), hence the 64 KiB of slack.
    const MAX_SPARE_TAPE: usize = (64 << 20) + (64 << 10);

    /// Frees the spare when its thread ends.
    struct Spare(Cell<*mut c_void>);

    impl Drop for Spare {
        fn drop(&mut self) {
            // SAFETY: the spare came from malloc and nothing else holds it.
            unsafe { libc::free(self.0.get()) }
        }
    }

    thread_local! {
        static SPARE: Spare = const { Spare(Cell::new(null_mut())) };
    }

    #[cfg(target_os = "linux")]
    fn usable_size(p: *mut c_void) -> usize {
        // SAFETY: p is a live malloc allocation.
        unsafe { libc::malloc_usable_size(p) }
    }

    #[cfg(not(target_os = "linux"))]
    fn usable_size(_: *mut c_void) -> usize {
        0
    }

    /// `realloc(old, bytes)`, except that it starts from the thread's spare
    /// tape when `old` is null and the spare is large enough, and never
    /// shrinks.
    pub(super) extern "C" fn tape_realloc(old: *mut c_void, bytes: i64) -> *mut c_void {
        let bytes = bytes.max(0) as usize;
        // Memory is overcommitted: a runaway tape would be granted address
        // space and the process killed by the kernel while filling it,
        // instead of stopping with "out of memory for the derivative tape"
        // (null): a tape may take at most half the physical memory.
        if bytes > max_tape_bytes() {
            return null_mut();
        }
        // A spare is larger than the capacity the caller knows of: growing
        // within it keeps the buffer (realloc would shrink it first).
        if !old.is_null() && usable_size(old) >= bytes {
            return old;
        }
        if old.is_null() {
            let spare = SPARE
                .try_with(|s| s.0.replace(null_mut()))
                .unwrap_or(null_mut());
            if !spare.is_null() {
                if usable_size(spare) >= bytes {
                    return spare;
                }
                // SAFETY: the spare came from malloc and is no longer cached.
                unsafe { libc::free(spare) };
            }
        }
        // SAFETY: old is null or a live tape from this allocator.
        unsafe { libc::realloc(old, bytes) }
    }

    /// Half the machine's physical memory (no limit where it is unknown).
    fn max_tape_bytes() -> usize {
        static MAX: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        *MAX.get_or_init(|| {
            // SAFETY: sysconf has no preconditions.
            let (pages, size) = unsafe {
                (
                    libc::sysconf(libc::_SC_PHYS_PAGES),
                    libc::sysconf(libc::_SC_PAGESIZE),
                )
            };
            if pages <= 0 || size <= 0 {
                return usize::MAX;
            }
            (pages as usize).saturating_mul(size as usize) / 2
        })
    }

    /// Keeps the larger of `p` and the current spare; frees the other.
    pub(super) extern "C" fn tape_free(p: *mut c_void) {
        if p.is_null() {
            return;
        }
        let size = usable_size(p);
        let keep = size > 0 && size <= MAX_SPARE_TAPE;
        let drop_now = if keep {
            SPARE
                .try_with(|s| {
                    let old = s.0.get();
                    if old.is_null() || usable_size(old) < size {
                        s.0.set(p);
                        old
                    } else {
                        p
                    }
                })
                .unwrap_or(p)
        } else {
            p
        };
        // SAFETY: drop_now came from malloc and is not cached.
        unsafe { libc::free(drop_now) }
    }
}

// Keeps the C math library linked so the JIT's dlsym lookup finds it.
#[link(name = "m")]
unsafe extern "C" {
    fn lgamma(x: f64) -> f64;
}

pub(crate) fn runtime_symbols() -> Vec<(&'static str, *const u8)> {
    vec![
        ("adc_rt_print_f64", print_f64 as *const u8),
        ("adc_rt_print_f32", print_f32 as *const u8),
        ("adc_rt_print_i64", print_i64 as *const u8),
        ("adc_rt_print_bool", print_bool as *const u8),
        ("adc_rt_print_end", print_end as *const u8),
        ("lgamma", lgamma as *const u8),
        ("adc_rt_tape_realloc", tape_cache::tape_realloc as *const u8),
        ("adc_rt_tape_free", tape_cache::tape_free as *const u8),
    ]
}

/// True when `f` declares one of the math library's functions that write
/// through pointers with exactly its C signature (docs/embedding.md#the-c-signature-of-a-function: an
/// `out`/`inout` scalar is a pointer): `double modf(double x, out double
/// ip)`, `void sincos(double x, out double s, out double c)` and their
/// `float` forms. Those resolve under `adc run` as the other math
/// functions do.
pub(crate) fn pointer_math_declared_exactly(f: &adc_ir::Function) -> bool {
    let by_ref = |t: ScalarType| Type::Ref(t);
    let (params, returns): (Vec<Type>, Vec<Type>) = match f.name.as_str() {
        "modf" => (vec![Type::F64, by_ref(ScalarType::F64)], vec![Type::F64]),
        "modff" => (vec![Type::F32, by_ref(ScalarType::F32)], vec![Type::F32]),
        "sincos" => (
            vec![Type::F64, by_ref(ScalarType::F64), by_ref(ScalarType::F64)],
            vec![],
        ),
        "sincosf" => (
            vec![Type::F32, by_ref(ScalarType::F32), by_ref(ScalarType::F32)],
            vec![],
        ),
        _ => return false,
    };
    f.params.iter().map(|p| p.ty).eq(params) && f.returns == returns
}

/// True when the C math library defines `name` (docs/cli.md: an
/// `extern` resolves under `adc run` against the math library and the
/// host's symbols, not against the rest of the C library, whose `free` or
/// `memset` declared with another signature would corrupt memory).
pub(crate) fn c_symbol_exists(name: &str) -> bool {
    // Math functions that write through a pointer (or read a string): no
    // `.ad` declaration matches their C signature, and a wrong one lets
    // them write anywhere.
    const THROUGH_POINTERS: &[&str] = &[
        "frexp",
        "frexpf",
        "frexpl",
        "modf",
        "modff",
        "modfl",
        "remquo",
        "remquof",
        "remquol",
        "sincos",
        "sincosf",
        "sincosl",
        "lgamma_r",
        "lgammaf_r",
        "lgammal_r",
        "gamma_r",
        "gammaf_r",
        "nan",
        "nanf",
        "nanl",
        "nexttowardl",
        "fegetenv",
        "fesetenv",
        "feholdexcept",
        "feupdateenv",
        "fegetexceptflag",
        "fesetexceptflag",
        "strtod",
        "strtof",
    ];
    if THROUGH_POINTERS.contains(&name) {
        return false;
    }
    let Ok(c) = std::ffi::CString::new(name) else {
        return false;
    };
    // SAFETY: dlopen with RTLD_NOLOAD only looks up a library this process
    // has loaded (libm, linked above); dlsym and dladdr only read their
    // arguments and fill `info`.
    unsafe {
        let libm = libc::dlopen(c"libm.so.6".as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD);
        if libm.is_null() {
            return false;
        }
        // Searches libm first, then its dependencies (the C library):
        // where the address lies tells which one defines it.
        let addr = libc::dlsym(libm, c.as_ptr());
        let mut info: libc::Dl_info = std::mem::zeroed();
        let in_libm = !addr.is_null()
            && libc::dladdr(addr, &mut info) != 0
            && !info.dli_fname.is_null()
            && std::ffi::CStr::from_ptr(info.dli_fname)
                .to_bytes()
                .rsplit(|&b| b == b'/')
                .next()
                .is_some_and(|file| file.starts_with(b"libm.") || file.starts_with(b"libm-"));
        libc::dlclose(libm);
        in_libm
    }
}

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
    /// The number of arguments differs from the number of parameters.
    ArgumentCount {
        /// The function's parameters.
        expected: usize,
        /// The arguments given.
        found: usize,
    },
    /// Argument `index` (from 0) does not fit its parameter.
    ArgumentType {
        /// The argument's position.
        index: usize,
        /// What the parameter takes, in words.
        expected: String,
    },
    /// A typed handle's result types differ from the function's.
    ResultType {
        /// The function's result types.
        expected: String,
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
            CallError::ResultType { expected } => write!(f, "the results are {expected}"),
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
    // and the stack floor (`translate::CTX_STACK_FLOOR`).
    let mut ctx: [u64; 3] = [0, 0, stack_floor::get()];
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
        let text = String::from_utf8_lossy(bytes);
        let text = text
            .trim_end()
            .trim_start_matches("runtime error: ")
            .to_string();
        return Err(CallError::Runtime(text));
    }
    Ok(())
}
