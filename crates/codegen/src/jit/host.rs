//! The JIT host side: runtime helpers linked into JIT code (printing, the
//! per-thread stack floor and spare tape), and which `extern`s `adc run`
//! resolves against the math library.

use adc_ir::{ScalarType, Type};
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
pub(super) mod stack_floor {
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
