//! `--emit-header`: C declarations of an object file's exported functions
//! that compile warning-free as C99 and as C++ (docs/embedding.md#the-c-signature-of-a-function), whatever
//! the functions and parameters are called.
//!
//! - Parameter names only document the signature: a name that is a C or
//!   C++ keyword, an alternative token (`and`, `not`), a macro of the
//!   included headers or of the C library (`NULL`, `errno`, `complex`,
//!   anything in capitals, `linux` and `unix`, which `cc`'s GNU modes
//!   predefine), or
//!   reserved (`__x`, `_X`: the leading underscores go), gets
//!   a `_` appended, and names
//!   never repeat within a declaration (adc's own `x_len`, `d_x`, `seed`
//!   included).
//! - A tuple result's struct is `NAME_result`, made unique against every
//!   function and struct name of the header.
//! - A function named like a C++-only keyword is declared for C only
//!   (`#ifndef __cplusplus`), `std` too (C++'s namespace), `asm` for ISO C
//!   only (a GNU C keyword); one named like a C keyword or type
//!   (`char`, `long`) cannot be declared and gets a comment instead.
//! - A function named like a macro (`linux`, `unix`, or in capitals:
//!   `INT64_MAX`) is declared between `#pragma push_macro` / `#undef` /
//!   `#pragma pop_macro`; one named like a reserved identifier (`__x`,
//!   `_X`: perhaps a predefined macro such as `__cplusplus`) gets a
//!   comment instead. A builtin's name of another signature (`printf`)
//!   is declared with GCC's and Clang's mismatch warning silenced.
//! - `main` is not exported at all (a C program has its own); `static`
//!   functions and adc's internal ones are not part of the interface.

use crate::translate::c_abi::c_type;
use adc_ir::{Module, Type};
use std::collections::BTreeSet;

mod words;
use words::*;

/// Whether `name` is a C99 or GNU math function (or another GNU builtin):
/// its declaration is left out of C++ (as a C++ keyword's is) and wrapped
/// in the builtin-mismatch pragmas in C.
fn math_like(name: &str) -> bool {
    let base = |n: &str| MATH_BASES.contains(&n) || GNU_BUILTINS.contains(&n);
    base(name)
        || name
            .strip_suffix('f')
            .or_else(|| name.strip_suffix('l'))
            .is_some_and(base)
        || name.strip_suffix("_r").is_some_and(|n| {
            n.strip_suffix('f')
                .or_else(|| n.strip_suffix('l'))
                .is_some_and(|n| base(&format!("{n}_r")))
        })
}

/// Around a declaration: no warning for a function whose name a compiler
/// knows as a builtin of another signature.
const BUILTIN_MISMATCH_OFF: &str = "#if defined(__clang__)\n#pragma clang diagnostic push\n#pragma clang diagnostic ignored \"-Wincompatible-library-redeclaration\"\n#elif defined(__GNUC__)\n#pragma GCC diagnostic push\n#pragma GCC diagnostic ignored \"-Wbuiltin-declaration-mismatch\"\n#endif\n";
const BUILTIN_MISMATCH_ON: &str = "#if defined(__clang__)\n#pragma clang diagnostic pop\n#elif defined(__GNUC__)\n#pragma GCC diagnostic pop\n#endif\n";

/// A name written like a macro (capitals, digits, `_`; `INT64_MAX`), which
/// an included header may define.
fn macro_like(name: &str) -> bool {
    name.bytes().any(|c| c.is_ascii_uppercase())
        && name
            .bytes()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_')
}

fn reserved(name: &str) -> bool {
    let b = name.as_bytes();
    C_WORDS.contains(&name)
        || GNU_MACROS.contains(&name)
        || STD_MACROS.contains(&name)
        || CXX_WORDS.contains(&name)
        || name.starts_with("__")
        || (b.len() > 1 && b[0] == b'_' && b[1].is_ascii_uppercase())
        // A macro, by convention; `N_` (what `N` becomes) is not one.
        || (!name.ends_with('_')
            && name
                .bytes()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_'))
}

/// `name` without its leading underscores (`p` if nothing else is left),
/// so that appending `_` makes any reserved name legal: `_X` and `__x`
/// stay reserved whatever follows.
fn unprefixed(name: String) -> String {
    let b = name.as_bytes();
    if !(name.starts_with("__") || (b.len() > 1 && b[0] == b'_' && b[1].is_ascii_uppercase())) {
        return name;
    }
    let rest = name.trim_start_matches('_');
    if rest.is_empty() || rest.starts_with(|c: char| c.is_ascii_digit()) {
        format!("p{rest}")
    } else {
        rest.to_string()
    }
}

/// The header for `module`'s exported functions, with include guard `guard`.
///
/// ```
/// let ir = adc_ir::parse_module("func @twice(x: f64) -> f64 {
/// block0(v0: f64):
///     v1: f64 = add v0, v0
///     return v1
/// }").unwrap();
/// adc_ir::verify(&ir).unwrap();
/// let header = adc_codegen::c_header(&ir, "TWICE_H");
/// assert!(header.contains("#ifndef TWICE_H"));
/// assert!(header.contains("double twice(double x);"));
/// ```
pub fn c_header(module: &Module, guard: &str) -> String {
    let mut out = format!("/* Generated by adc. */\n#ifndef {guard}\n#define {guard}\n\n#include <stdbool.h>\n#include <stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" {{\n#endif\n\n");
    let exported: Vec<&adc_ir::Function> = module
        .funcs
        .iter()
        .filter(|f| {
            !f.is_import()
                && !f.layout.is_empty()
                && f.linkage != adc_ir::Linkage::Static
                && !f.name.starts_with("__adc_")
                && f.name != "main"
        })
        .collect();
    // Struct names must not take a function's name, nor each other's.
    let mut taken: BTreeSet<String> = exported.iter().map(|f| f.name.clone()).collect();
    for f in exported {
        let ret = match f.returns.as_slice() {
            [] => "void".to_string(),
            [t] => c_type(t.elem()).to_string(),
            many => {
                let mut name = unprefixed(format!("{}_result", f.name));
                while reserved(&name) || !taken.insert(name.clone()) {
                    name.push('_');
                }
                let fields: Vec<String> = many
                    .iter()
                    .enumerate()
                    .map(|(i, t)| format!("{} _{i};", c_type(t.elem())))
                    .collect();
                out.push_str(&format!(
                    "typedef struct {name} {{ {} }} {name};\n",
                    fields.join(" ")
                ));
                name
            }
        };
        let decl = format!("{ret} {}({});\n", f.name, params(f));
        let n = f.name.as_bytes();
        let c_reserved =
            f.name.starts_with("__") || (n.len() > 1 && n[0] == b'_' && n[1].is_ascii_uppercase());
        if c_reserved && !C_WORDS.contains(&f.name.as_str()) {
            out.push_str(&format!(
                "/* `{}` is reserved to the C implementation (it may be a predefined macro) and is not declared here; its symbol is `{}`. */\n",
                f.name, f.name
            ));
        } else if C_WORDS.contains(&f.name.as_str()) {
            out.push_str(&format!(
                "/* `{}` (a C keyword or type name) cannot be declared here; its symbol is `{}`. */\n",
                f.name, f.name
            ));
        } else if f.name == "asm" {
            // A keyword of C++ and of GNU C (GCC's and Clang's default
            // dialects), not of ISO C (`-std=c99` defines __STRICT_ANSI__).
            out.push_str(&format!(
                "#if !defined(__cplusplus) && (!defined(__GNUC__) || defined(__STRICT_ANSI__)) /* `asm` is a GNU C and C++ keyword */\n{decl}#endif\n"
            ));
        } else if f.name == "std" {
            out.push_str(&format!(
                "#ifndef __cplusplus /* `std` is the C++ library's namespace */\n{decl}#endif\n"
            ));
        } else if CXX_WORDS.contains(&f.name.as_str()) {
            out.push_str(&format!(
                "#ifndef __cplusplus /* `{}` is a C++ keyword */\n{decl}#endif\n",
                f.name
            ));
        } else if GNU_MACROS.contains(&f.name.as_str()) || macro_like(&f.name) {
            // `cc`'s default mode defines `linux` as 1; the pragmas (GCC,
            // Clang and MSVC know them) keep the user's macro as it was.
            let n = &f.name;
            out.push_str(&format!(
                "#pragma push_macro(\"{n}\")\n#undef {n}\n{decl}#pragma pop_macro(\"{n}\")\n"
            ));
        } else if math_like(&f.name) {
            out.push_str(&format!(
                "#ifndef __cplusplus /* `{}` is a C library builtin */\n{BUILTIN_MISMATCH_OFF}{decl}{BUILTIN_MISMATCH_ON}#endif\n",
                f.name
            ));
        } else if C_BUILTINS.contains(&f.name.as_str()) {
            // GCC and Clang know the name as a builtin of another
            // signature and warn; the name is the module's own.
            out.push_str(&format!(
                "{BUILTIN_MISMATCH_OFF}{decl}{BUILTIN_MISMATCH_ON}"
            ));
        } else {
            out.push_str(&decl);
        }
    }
    out.push_str("\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
    out
}

/// The parameter list of `f`'s C declaration.
fn params(f: &adc_ir::Function) -> String {
    let mut used = BTreeSet::new();
    let mut fresh = |base: String| {
        let mut name = unprefixed(base);
        while reserved(&name) || !used.insert(name.clone()) {
            name.push('_');
        }
        name
    };
    // The parameters' own names first, then the lengths' names.
    let names: Vec<String> = f.params.iter().map(|p| fresh(p.name.clone())).collect();
    let params: Vec<String> = f
        .params
        .iter()
        .zip(&names)
        .map(|(p, n)| match p.ty {
            Type::Scalar(s) => format!("{} {n}", c_type(s)),
            Type::Ref(s) => format!("{} *{n}", c_type(s)),
            // Invariant: verified signatures have no dpair (codegen's input is verified).
            Type::Pair(_) => unreachable!("a dpair in a signature"),
            Type::Array(s) => {
                let constness = if p.mode == adc_ir::ParamMode::In {
                    "const "
                } else {
                    ""
                };
                let len = fresh(format!("{n}_len"));
                format!("{constness}{} *{n}, int64_t {len}", c_type(s))
            }
        })
        .collect();
    if params.is_empty() {
        "void".to_string()
    } else {
        params.join(", ")
    }
}
