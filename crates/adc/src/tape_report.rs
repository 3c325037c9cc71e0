//! `adc tape` (docs/derivatives.md#checkpointing): what each reverse derivative's tape
//! stores, read off the IR after every pass but `unroll-inner` (its copies
//! of a loop's body push what four iterations push; the tape is the same).
//!
//! Every `tape.push` on tape 0 of a function is one entry: the value's
//! source location (the instruction that computed it; the push's own when
//! the value is a block parameter), its type and bytes per execution, and
//! the natural loops around the push, outermost first, by source line. A
//! pushed constant or `bool` is a branch record (which edge the primal part
//! took; an `i64` edge index of a join of three or more is counted as a
//! value); a
//! pushed array is a copy of an argument a non-inlined call may change (the
//! report counts its 16-byte handle; the copy itself takes `len * 8`
//! bytes more). Each loop gets the bytes one iteration pushes outside its
//! inner loops; each call of another taping function (a callee that is not
//! inlined: its forward half on this tape in split mode, its own tape in
//! joint mode) the bytes it pushes per call outside its loops. Reported functions: the reverse derivatives the file asks for,
//! and every function they call that pushes on a tape (the forward halves
//! of split-mode callees, derivatives of checkpointed segments and
//! callees).
//!
//! [`driver::tape_reports`](crate::driver::tape_reports) makes the reports
//! of a source file; [`render_text`] and [`render_json`] print them as
//! `adc tape` and `adc tape --json` do.
//!
//! ```
//! let src = "[autodiff_reverse(dprod, Duplicated, Active)]
//! double prod(double[] x) {
//!     double p = 1.0;
//!     for (int i = 0; i < len(x); i++) p *= x[i];
//!     return p;
//! }";
//! let reports = adc::driver::tape_reports("prod.ad", src, &adc::CompileOptions::default()).expect("compiles");
//! let text = adc::tape_report::render_text(&reports);
//! assert!(text.starts_with("dprod: 1 entries, 0 bytes per call outside loops\n"));
//! assert!(text.contains("loop at line 4: 8 bytes per iteration"));
//! ```

use adc_ir::dom::DomTree;
use adc_ir::{Block, Function, InstData, Module, Span, Type, ValueDef};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// One stored value or branch record: where it is computed, its type,
/// its kind (`value`, `branch` or `array copy`), its bytes per execution,
/// and the loops that repeat it.
///
/// ```
/// let src = "[autodiff_reverse(dprod, Duplicated, Active)]
/// double prod(double[] x) {
///     double p = 1.0;
///     for (int i = 0; i < len(x); i++) p *= x[i];
///     return p;
/// }";
/// let reports = adc::driver::tape_reports("prod.ad", src, &adc::CompileOptions::default()).expect("compiles");
/// let entry = &reports[0].entries[0];
/// assert_eq!(entry.location, "prod.ad:4:5");
/// assert_eq!((entry.kind, entry.ty.as_str(), entry.bytes), ("value", "f64", 8));
/// assert_eq!(entry.loops, [4]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub location: String,
    pub ty: String,
    pub kind: &'static str,
    pub bytes: u32,
    /// Source lines of the loops around the push, outermost first.
    pub loops: Vec<u32>,
}

/// A loop of a derivative's forward sweep: its source line and the bytes
/// one iteration stores (outside its inner loops).
///
/// ```
/// let src = "[autodiff_reverse(dprod, Duplicated, Active)]
/// double prod(double[] x) {
///     double p = 1.0;
///     for (int i = 0; i < len(x); i++) {
///         p *= x[i];
///     }
///     return p;
/// }";
/// let reports = adc::driver::tape_reports("prod.ad", src, &adc::CompileOptions::default()).expect("compiles");
/// let loops = &reports[0].loops;
/// assert_eq!(loops.len(), 1);
/// // The product before each multiplication: one f64 per iteration.
/// assert_eq!((loops[0].line, loops[0].bytes_per_iteration), (4, 8));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct LoopBytes {
    pub line: u32,
    pub bytes_per_iteration: u32,
    /// The loop runs the segments of a `[checkpoint]` or `[checkpoint(K)]`
    /// loop: one of its iterations is a segment of the source loop's
    /// iterations (K, or a growing number under `[checkpoint]`), and its
    /// bytes are stored once per segment.
    pub per_segment: bool,
}

/// A call of another function that stores on a tape (a callee that is
/// not inlined): where, and the bytes it stores per call outside its
/// loops.
///
/// ```
/// let src = "[checkpoint]
/// double prod(double[] x) {
///     double p = 1.0;
///     for (int i = 0; i < len(x); i++) p *= x[i];
///     return p;
/// }
/// [autodiff_reverse(dg, Duplicated, Active)]
/// double g(double[] x) { return 2.0 * prod(x); }";
/// let reports = adc::driver::tape_reports("g.ad", src, &adc::CompileOptions::default()).expect("compiles");
/// let dg = reports.iter().find(|r| r.function == "dg").expect("reported");
/// assert_eq!(dg.calls.len(), 1);
/// assert!(dg.calls[0].location.starts_with("g.ad:8:"));
/// assert_eq!(dg.calls[0].bytes_per_call, 0);
/// // The checkpointed callee's own derivative has its report.
/// assert!(reports.iter().any(|r| r.calls.is_empty() && r.loops.len() == 1));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct CallBytes {
    pub callee: String,
    pub location: String,
    pub bytes_per_call: u32,
}

/// What one function's tape stores: its entries, its loops and its calls
/// of other taping functions.
///
/// ```
/// let src = "[autodiff_reverse(dsq, Active, Active)] double sq(double x) { return x * x; }";
/// let reports = adc::driver::tape_reports("sq.ad", src, &adc::CompileOptions::default()).expect("compiles");
/// assert_eq!(reports.len(), 1);
/// assert_eq!(reports[0].function, "dsq");
/// // Without loops or branches, the reverse sweep needs nothing stored.
/// assert!(reports[0].entries.is_empty() && reports[0].loops.is_empty());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub function: String,
    pub entries: Vec<Entry>,
    pub loops: Vec<LoopBytes>,
    pub calls: Vec<CallBytes>,
}

/// The reports of `requested` (reverse derivatives named in the source)
/// and of every other function of `module` that pushes on a tape.
// Not part of the library API: `driver::tape_reports` is.
#[doc(hidden)]
pub fn reports(
    module: &Module,
    requested: &[String],
    locate: &dyn Fn(Span) -> String,
    line_of: &dyn Fn(Span) -> Option<u32>,
) -> Vec<Report> {
    let tapes = |f: &Function| {
        f.layout.iter().any(|b| {
            f.dfg
                .block(*b)
                .insts
                .iter()
                .any(|i| matches!(f.dfg.inst(*i), InstData::TapePush { tape: 0, .. }))
        })
    };
    // Functions the requested derivatives call, directly or not.
    let mut reachable: BTreeSet<usize> = BTreeSet::new();
    let mut work: Vec<usize> = module
        .funcs
        .iter()
        .enumerate()
        .filter(|(_, f)| requested.contains(&f.name))
        .map(|(k, _)| k)
        .collect();
    while let Some(k) = work.pop() {
        if !reachable.insert(k) {
            continue;
        }
        let f = &module.funcs[k];
        for b in &f.layout {
            for i in &f.dfg.block(*b).insts {
                if let InstData::Call { func, .. } = f.dfg.inst(*i) {
                    work.push(func.index());
                }
            }
        }
    }
    let chosen: Vec<&Function> = module
        .funcs
        .iter()
        .enumerate()
        .filter(|(k, f)| {
            !f.layout.is_empty()
                && reachable.contains(k)
                && (requested.contains(&f.name) || tapes(f))
        })
        .map(|(_, f)| f)
        .collect();
    // Bytes per call outside loops, for the call sites.
    let mut first: Vec<Report> = chosen
        .iter()
        .map(|f| report(module, f, locate, line_of))
        .collect();
    let per_call: BTreeMap<String, u32> = first
        .iter()
        .map(|r| {
            let flat = r
                .entries
                .iter()
                .filter(|e| e.loops.is_empty())
                .map(|e| e.bytes)
                .sum();
            (r.function.clone(), flat)
        })
        .collect();
    for (r, f) in first.iter_mut().zip(&chosen) {
        for &b in &f.layout {
            for &i in &f.dfg.block(b).insts {
                if let InstData::Call { func, .. } = f.dfg.inst(i) {
                    let callee = &module.func(*func).name;
                    if let Some(&bytes) = per_call.get(callee) {
                        r.calls.push(CallBytes {
                            callee: callee.clone(),
                            location: locate(f.span(i)),
                            bytes_per_call: bytes,
                        });
                    }
                }
            }
        }
    }
    first
}

fn bytes_of(ty: Type) -> u32 {
    match ty {
        Type::Scalar(s) => s.size(),
        Type::Array(_) => 16,
        Type::Ref(_) => 8,
        Type::Pair(s) => 2 * s.size(),
    }
}

/// The natural loops of `f`: header and body blocks.
fn natural_loops(f: &Function) -> Vec<(Block, BTreeSet<Block>)> {
    let dom = DomTree::new(f);
    let mut preds: BTreeMap<Block, Vec<Block>> = BTreeMap::new();
    for &b in &f.layout {
        for s in f.successors(b) {
            preds.entry(s).or_default().push(b);
        }
    }
    let mut loops: BTreeMap<Block, BTreeSet<Block>> = BTreeMap::new();
    for &b in &f.layout {
        for h in f.successors(b) {
            if !dom.dominates(h, b) {
                continue;
            }
            let body = loops.entry(h).or_insert_with(|| [h].into_iter().collect());
            let mut work = vec![b];
            while let Some(x) = work.pop() {
                if body.insert(x) {
                    work.extend(preds.get(&x).into_iter().flatten().copied());
                }
            }
        }
    }
    loops.into_iter().collect()
}

fn report(
    module: &Module,
    f: &Function,
    locate: &dyn Fn(Span) -> String,
    line_of: &dyn Fn(Span) -> Option<u32>,
) -> Report {
    let loops = natural_loops(f);
    let dom = DomTree::new(f);
    // A loop's line: the first defined span in its header (its condition),
    // or, when `opt`'s `rotate` moved the condition to the end of the
    // iteration, the branch that goes back from a latch, if earlier.
    let line = |h: Block| -> u32 {
        let head = f
            .dfg
            .block(h)
            .insts
            .iter()
            .find_map(|i| line_of(f.span(*i)));
        let rotated = f
            .layout
            .iter()
            .filter(|&&b| dom.dominates(h, b) && f.successors(b).contains(&h))
            .filter_map(|&b| f.terminator(b))
            .filter(|&t| matches!(f.dfg.inst(t), adc_ir::InstData::Branch { .. }))
            .filter_map(|t| line_of(f.span(t)))
            .min();
        head.into_iter().chain(rotated).min().unwrap_or(0)
    };
    let mut entries = Vec::new();
    let mut per_loop: BTreeMap<usize, u32> = BTreeMap::new();
    for &b in &f.layout {
        // Loops around `b`, outermost (largest) first.
        let mut around: Vec<usize> = (0..loops.len())
            .filter(|k| loops[*k].1.contains(&b))
            .collect();
        around.sort_by_key(|k| std::cmp::Reverse(loops[*k].1.len()));
        for &i in &f.dfg.block(b).insts {
            let InstData::TapePush { value, tape: 0 } = f.dfg.inst(i) else {
                continue;
            };
            let ty = f.dfg.value_type(*value);
            let (span, kind) = match f.dfg.value_def(*value) {
                ValueDef::Result(d, _) => {
                    let kind = match f.dfg.inst(d) {
                        InstData::Const { .. } => "branch",
                        InstData::ArrayCopy { .. } => "array copy",
                        _ if ty == Type::BOOL => "branch",
                        _ => "value",
                    };
                    let s = f.span(d);
                    (if s.is_defined() { s } else { f.span(i) }, kind)
                }
                // Edge indices of two-way joins are `bool`s.
                _ if ty == Type::BOOL => (f.span(i), "branch"),
                _ => (f.span(i), "value"),
            };
            // A push the passes made without a source location (an edge
            // index of a join they built) is reported at the nearest
            // instruction of its block that has one, or at the attribute.
            let span = if span.is_defined() {
                span
            } else {
                f.dfg
                    .block(b)
                    .insts
                    .iter()
                    .map(|k| f.span(*k))
                    .find(|s| s.is_defined())
                    .unwrap_or(f.deriv_span)
            };
            let bytes = bytes_of(ty);
            if let Some(&inner) = around.last() {
                *per_loop.entry(inner).or_default() += bytes;
            }
            entries.push(Entry {
                location: locate(span),
                ty: ty.to_string(),
                kind,
                bytes,
                loops: around.iter().map(|k| line(loops[*k].0)).collect(),
            });
        }
    }
    // Loops that push nothing (those of the reverse sweep, say) are left out.
    let pushing: BTreeSet<usize> = (0..loops.len())
        .filter(|k| {
            loops[*k].1.iter().any(|b| {
                f.dfg
                    .block(*b)
                    .insts
                    .iter()
                    .any(|i| matches!(f.dfg.inst(*i), InstData::TapePush { tape: 0, .. }))
            })
        })
        .collect();
    let loops = loops
        .iter()
        .enumerate()
        .filter(|(k, _)| pushing.contains(k))
        .map(|(k, (h, body))| LoopBytes {
            line: line(*h),
            bytes_per_iteration: per_loop.get(&k).copied().unwrap_or(0),
            per_segment: body.iter().any(|b| {
                f.dfg.block(*b).insts.iter().any(|i| {
                    matches!(f.dfg.inst(*i), InstData::Call { func, .. }
                        if module.func(*func).name.contains("__adc_seg"))
                })
            }),
        })
        .collect();
    Report {
        function: f.name.clone(),
        entries,
        loops,
        calls: Vec::new(),
    }
}

/// The report as text, one derivative after the other (what `adc tape`
/// prints).
///
/// ```
/// let src = "[autodiff_reverse(dsq, Active, Active)] double sq(double x) { return x * x; }";
/// let reports = adc::driver::tape_reports("sq.ad", src, &adc::CompileOptions::default()).expect("compiles");
/// assert_eq!(
///     adc::tape_report::render_text(&reports),
///     "dsq: 0 entries, 0 bytes per call outside loops\n"
/// );
/// ```
pub fn render_text(reports: &[Report]) -> String {
    let mut out = String::new();
    for r in reports {
        let flat: u32 = r
            .entries
            .iter()
            .filter(|e| e.loops.is_empty())
            .map(|e| e.bytes)
            .sum();
        let _ = writeln!(
            out,
            "{}: {} entries, {flat} bytes per call outside loops",
            r.function,
            r.entries.len()
        );
        for e in &r.entries {
            let loops = if e.loops.is_empty() {
                String::new()
            } else {
                let lines: Vec<String> = e.loops.iter().map(|l| format!("line {l}")).collect();
                format!(" x loops at {}", lines.join(", "))
            };
            let _ = writeln!(
                out,
                "  {:<24} {:<10} {:<10} {:>3} B{loops}",
                e.location, e.kind, e.ty, e.bytes
            );
        }
        for l in &r.loops {
            let per = if l.per_segment {
                "segment of the checkpointed loop"
            } else {
                "iteration"
            };
            let _ = writeln!(
                out,
                "  loop at line {}: {} bytes per {per} (inner loops not counted)",
                l.line, l.bytes_per_iteration
            );
        }
        for c in &r.calls {
            let _ = writeln!(
                out,
                "  call of {} at {}: {} bytes per call, outside its loops",
                c.callee, c.location, c.bytes_per_call
            );
        }
    }
    out
}

/// The report as one JSON object (what `adc tape --json` prints; the
/// format is in `docs/cli.md`).
///
/// ```
/// let src = "[autodiff_reverse(dsq, Active, Active)] double sq(double x) { return x * x; }";
/// let reports = adc::driver::tape_reports("sq.ad", src, &adc::CompileOptions::default()).expect("compiles");
/// let json = adc::tape_report::render_json(&reports);
/// assert_eq!(json["derivatives"][0]["function"], "dsq");
/// assert_eq!(json["derivatives"][0]["entries"].as_array().map(Vec::len), Some(0));
/// ```
pub fn render_json(reports: &[Report]) -> serde_json::Value {
    use serde_json::json;
    let derivs: Vec<serde_json::Value> = reports
        .iter()
        .map(|r| {
            json!({
                "function": r.function,
                "entries": r.entries.iter().map(|e| json!({
                    "location": e.location, "type": e.ty, "kind": e.kind,
                    "bytes": e.bytes, "loops": e.loops,
                })).collect::<Vec<_>>(),
                "loops": r.loops.iter().map(|l| json!({
                    "line": l.line, "bytes_per_iteration": l.bytes_per_iteration,
                    "per_segment": l.per_segment,
                })).collect::<Vec<_>>(),
                "calls": r.calls.iter().map(|c| json!({
                    "callee": c.callee, "location": c.location, "bytes_per_call": c.bytes_per_call,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({ "derivatives": derivs })
}
