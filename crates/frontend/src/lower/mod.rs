//! Lowering: name resolution, type checking and SSA construction in one walk.
//!
//! Mutable locals become SSA values with the simplest correct construction:
//! every join block (loop header, loop exit, `if` merge, short-circuit merge)
//! takes one parameter per variable in scope that the body may assign after
//! its declaration (`fixed`), and every jump passes the variables' current
//! values. The `opt` stage removes the redundant ones.
//! Local arrays are heap arrays held in hidden per-declaration variables,
//! freed when the declaration runs again and at every `return`.
//!
//! Guarantees: when no error diagnostic is produced, the module verifies.

mod alias;
mod attrs;
mod call;
mod expr;
mod fixed;
mod items;
mod names;
mod place;
mod signature;
mod stmt;

use crate::ast::*;
use crate::diag::Diagnostic;
use adc_ir::{Block, BlockCall, Constant, Function, InstData, ScalarType, Span, Type, Value};
pub use attrs::{COLD_OPTION, MAX_WIDTH, SETS_OPTION};
pub(crate) use call::{HESSIAN_LEN, JACOBIAN_LEN, SPARSE_HESSIAN_LEN, SPARSE_LEN};
pub(crate) use items::const_values;
pub use items::lower_program;
use items::Globals;
pub use names::{function_name_error, reserved_function_name, C_RUNTIME};
use signature::RetTy;

type VarId = usize;

#[derive(Clone, Debug)]
enum Binding {
    /// A scalar local (or by-value parameter) held in SSA variable `var`.
    Local {
        var: VarId,
        ty: ScalarType,
        is_const: bool,
    },
    /// An `inout`/`out` scalar parameter: a reference.
    Ref {
        value: Value,
        ty: ScalarType,
    },
    /// An array parameter, or a local array held in hidden variable `var`.
    Array {
        source: ArraySource,
        elem: ScalarType,
        writable: bool,
    },
    Const(Constant),
}

/// A name in scope. Names whose reads are tracked (`decl` set: scalar
/// locals, by-value parameters, local arrays, read-only array
/// parameters) are warned about when their scope closes unread.
struct Bound {
    name: String,
    binding: Binding,
    /// Where it was declared and what it is ("variable", "parameter").
    decl: Option<(Span, &'static str)>,
    read: std::cell::Cell<bool>,
}

#[derive(Clone, Copy, Debug)]
enum ArraySource {
    Param(Value),
    Local(VarId),
}

#[derive(Clone, Debug)]
struct Join {
    block: Block,
    vars: Vec<VarId>,
}

struct LoopTargets {
    continue_to: Join,
    break_to: Join,
}

pub(crate) struct FnLowerer<'g> {
    globals: &'g Globals,
    diags: &'g mut Vec<Diagnostic>,
    func: Function,
    ret: RetTy,
    scopes: Vec<Vec<Bound>>,
    /// Where each name in scope is bound, innermost last: (scope, index in
    /// it). Lookups take constant time however many names a block has.
    names: std::collections::HashMap<String, Vec<(usize, usize)>>,
    var_types: Vec<Type>,
    var_values: Vec<Option<Value>>,
    /// Per variable: it keeps its first value wherever it is in scope
    /// (`fixed`), so no join takes a parameter for it.
    var_fixed: Vec<bool>,
    /// The names the body may assign (`fixed::assigned_names`); `None`:
    /// every name.
    assigned: Option<std::collections::HashSet<String>>,
    /// A variable called fixed was written: the function is lowered
    /// again with `assigned` `None` (`fixed`'s guarantee, checked).
    fixed_written: bool,
    live: Vec<VarId>,
    cur: Block,
    loops: Vec<LoopTargets>,
    /// `[checkpoint(K)]` / `[checkpoint]` read before the loop statement
    /// being lowered (K, or 0 for the compiler's choice): its header gets
    /// the marker.
    loop_checkpoint: Option<u32>,
    /// Each local array declaration's hidden variable, with the span of
    /// the declaration that identifies it.
    array_sites: Vec<(VarId, Span)>,
    span: Span,
}

impl<'g> FnLowerer<'g> {
    fn error(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    fn ins(&mut self, data: InstData, results: &[Type]) -> Vec<Value> {
        let inst = self.func.append_inst(self.cur, data, results, self.span);
        self.func.dfg.inst_results(inst).to_vec()
    }

    fn ins1(&mut self, data: InstData, ty: Type) -> Value {
        self.ins(data, &[ty])[0]
    }

    fn constant(&mut self, c: Constant) -> Value {
        self.ins1(InstData::Const { value: c }, Type::Scalar(c.ty()))
    }

    fn zero(&mut self, ty: ScalarType) -> Value {
        self.constant(Constant::zero(ty))
    }

    /// What `name` is bound to; counts as a read of it.
    fn lookup(&self, name: &str) -> Option<Binding> {
        if let Some(b) = self.bound(name) {
            b.read.set(true);
            return Some(b.binding.clone());
        }
        self.globals.consts.get(name).map(|c| Binding::Const(*c))
    }

    /// What `name` is bound to, as the target of an assignment (not a read).
    fn lookup_for_write(&self, name: &str) -> Option<Binding> {
        if let Some(b) = self.bound(name) {
            return Some(b.binding.clone());
        }
        self.globals.consts.get(name).map(|c| Binding::Const(*c))
    }

    /// The innermost binding of `name` in scope, with its scope's depth.
    fn bound_at(&self, name: &str) -> Option<(usize, &Bound)> {
        let &(s, i) = self.names.get(name)?.last()?;
        Some((s, &self.scopes[s][i]))
    }

    fn bound(&self, name: &str) -> Option<&Bound> {
        self.bound_at(name).map(|(_, b)| b)
    }

    /// W0001 for each tracked name of `scope` never read.
    fn warn_unread(&mut self, scope: Vec<Bound>) {
        for b in scope {
            let Some((span, what)) = b.decl else { continue };
            if b.read.get() || b.name.starts_with('_') {
                continue;
            }
            self.diags.push(
                Diagnostic::warning("W0001", format!("unused {what} `{}`", b.name), span)
                    .with_note(format!(
                        "its value is never read; if that is intended, name it `_{}`",
                        b.name
                    )),
            );
        }
    }

    /// E0116 for a name nothing binds, with the closest visible name.
    fn unknown_name(&self, name: &str, span: Span) -> Diagnostic {
        let visible = self
            .scopes
            .iter()
            .flatten()
            .map(|b| b.name.as_str())
            .chain(self.globals.consts.keys().map(String::as_str));
        let d = Diagnostic::error("E0116", format!("cannot find `{name}` in this scope"), span);
        if self.globals.funcs.contains_key(name) {
            return d.with_help(format!("`{name}` is a function: call it, `{name}(...)`"));
        }
        attrs::with_suggestion(d, name, visible)
    }

    /// E0126 for a call of a function that does not exist, with the
    /// closest function or built-in.
    fn unknown_function(&self, name: &str, span: Span) -> Option<Diagnostic> {
        // The attribute that would have made it was reported already.
        if self.globals.failed.contains(name) {
            return None;
        }
        let known = self
            .globals
            .funcs
            .keys()
            .map(String::as_str)
            .chain(["len", "print", "min", "max"])
            .chain(
                adc_ir::MathFunc::ALL
                    .iter()
                    .filter(|m| m.in_source())
                    .map(|m| m.name()),
            );
        let d = Diagnostic::error("E0126", format!("cannot find function `{name}`"), span);
        Some(attrs::with_suggestion(d, name, known))
    }

    /// Binds `name` in the innermost scope; `decl` makes it a name whose
    /// reads are tracked (see `Bound`).
    fn bind(&mut self, name: &str, binding: Binding, decl: Option<(Span, &'static str)>) {
        if let Some((span, "variable")) = decl {
            self.check_redeclaration(name, span);
        }
        let depth = self.scopes.len() - 1;
        let scope = self
            .scopes
            .last_mut()
            .expect("invariant: a function scope is open");
        self.names
            .entry(name.to_string())
            .or_default()
            .push((depth, scope.len()));
        scope.push(Bound {
            name: name.to_string(),
            binding,
            decl,
            read: std::cell::Cell::new(false),
        });
    }

    /// A local declared again in the same block is an error, as in C;
    /// the function body's outermost block shares its scope with the
    /// parameters (scope 0). Inner blocks may hide outer names.
    fn check_redeclaration(&mut self, name: &str, span: Span) {
        let n = self.scopes.len();
        let Some((depth, earlier)) = self.bound_at(name) else {
            return;
        };
        // The same block, or the body's outermost block (scope 1) and the
        // parameters (scope 0).
        if !(depth + 1 == n || (n == 2 && depth == 0)) {
            return;
        }
        let what = match earlier.decl {
            Some((_, what)) => what,
            None => "parameter",
        };
        let mut d = Diagnostic::error(
            "E0205",
            format!("`{name}` is already declared in this block"),
            span,
        )
        .with_note("an inner block may declare the name again, hiding this one");
        if let Some((at, _)) = earlier.decl {
            d = d.with_label(at, format!("the {what} `{name}` is declared here"));
        }
        self.error(d);
    }

    /// A variable that joins carry (its value may differ between edges).
    fn new_var(&mut self, ty: Type, init: Value) -> VarId {
        self.var_types.push(ty);
        self.var_values.push(Some(init));
        self.var_fixed.push(false);
        let id = self.var_types.len() - 1;
        self.live.push(id);
        id
    }

    /// The variable of the local or by-value parameter `name`: fixed
    /// (in no join) when the body never assigns `name`.
    fn new_named_var(&mut self, ty: Type, init: Value, name: &str) -> VarId {
        let id = self.new_var(ty, init);
        self.var_fixed[id] = self.assigned.as_ref().is_some_and(|a| !a.contains(name));
        id
    }

    fn var(&self, var: VarId) -> Value {
        self.var_values[var].expect("invariant: a live variable has a value")
    }

    fn set_var(&mut self, var: VarId, v: Value) {
        self.fixed_written |= self.var_fixed[var];
        self.var_values[var] = Some(v);
    }

    /// Puts back the variables' values saved before a branch. Variables
    /// declared in the branch keep their ids (they are out of scope now);
    /// the saved list is shorter by them.
    fn restore_values(&mut self, mut saved: Vec<Option<Value>>) {
        saved.resize(self.var_values.len().max(saved.len()), None);
        self.var_values = saved;
    }

    fn push_scope(&mut self) -> usize {
        self.scopes.push(Vec::new());
        self.live.len()
    }

    fn pop_scope(&mut self, live_len: usize) {
        if let Some(scope) = self.scopes.pop() {
            for b in &scope {
                if let Some(at) = self.names.get_mut(&b.name) {
                    at.pop();
                }
            }
            self.warn_unread(scope);
        }
        self.live.truncate(live_len);
    }

    /// A block with one parameter per live variable not fixed (plus
    /// `extra`).
    fn new_join(&mut self, extra: &[Type]) -> Join {
        let block = self.func.dfg.make_block();
        self.func.layout.push(block);
        let vars: Vec<VarId> = self
            .live
            .iter()
            .copied()
            .filter(|&v| !self.var_fixed[v])
            .collect();
        for &v in &vars {
            let ty = self.var_types[v];
            self.func.dfg.append_block_param(block, ty);
        }
        for ty in extra {
            self.func.dfg.append_block_param(block, *ty);
        }
        Join { block, vars }
    }

    /// Ends the current block with `br cond` into two fresh blocks,
    /// returned as (then, else).
    fn branch_two_ways(&mut self, cond: Value) -> (Block, Block) {
        let then_block = self.plain_block();
        let else_block = self.plain_block();
        let to = |block| BlockCall {
            block,
            args: vec![],
        };
        self.ins(
            InstData::Branch {
                cond,
                then_dest: to(then_block),
                else_dest: to(else_block),
            },
            &[],
        );
        (then_block, else_block)
    }

    fn plain_block(&mut self) -> Block {
        let block = self.func.dfg.make_block();
        self.func.layout.push(block);
        block
    }

    fn call_args(&self, join: &Join, extra: &[Value]) -> BlockCall {
        let mut args: Vec<Value> = join.vars.iter().map(|v| self.var(*v)).collect();
        args.extend_from_slice(extra);
        BlockCall {
            block: join.block,
            args,
        }
    }

    /// Emits a terminator and continues in a fresh (unreachable) block.
    fn terminate(&mut self, data: InstData) {
        self.ins(data, &[]);
        self.cur = self.plain_block();
    }

    fn jump(&mut self, join: &Join, extra: &[Value]) {
        let dest = self.call_args(join, extra);
        self.terminate(InstData::Jump { dest });
    }

    /// Continues in `join`, its parameters becoming the variables' values.
    fn enter(&mut self, join: &Join) -> Vec<Value> {
        self.cur = join.block;
        let params = self.func.dfg.block_params(join.block).to_vec();
        for (i, &v) in join.vars.iter().enumerate() {
            self.set_var(v, params[i]);
        }
        params[join.vars.len()..].to_vec()
    }

    fn free_local_arrays(&mut self) {
        for (site, _) in self.array_sites.clone() {
            let a = self.var(site);
            self.ins(InstData::ArrayFree { array: a }, &[]);
        }
    }
}

pub(crate) fn scalar_of(b: BaseType) -> ScalarType {
    match b {
        BaseType::Double => ScalarType::F64,
        BaseType::Float => ScalarType::F32,
        BaseType::Int => ScalarType::I64,
        BaseType::Bool => ScalarType::Bool,
    }
}

pub(crate) fn type_name(t: ScalarType) -> &'static str {
    match t {
        ScalarType::Bool => "bool",
        ScalarType::I64 => "int",
        ScalarType::F32 => "float",
        ScalarType::F64 => "double",
    }
}

/// What the callee of an expression that should make a tuple tells about
/// its result, before the call is lowered.
enum TupleSource {
    /// A function of the program that returns a tuple of these types: the
    /// call's own errors (its arguments) are reported where it is lowered,
    /// so its result has these types even then.
    Tuple(Vec<ScalarType>),
    /// A function that does not exist (or whose generating attribute was
    /// rejected): the call reports it.
    Unknown,
    /// Anything else: a function returning no tuple, a built-in, no call.
    NotTuple,
}

impl FnLowerer<'_> {
    fn tuple_source(&self, e: &Expr) -> TupleSource {
        let ExprKind::Call(callee, _) = &e.kind else {
            return TupleSource::NotTuple;
        };
        match self.globals.funcs.get(&callee.name) {
            Some(sig) => match &sig.ret {
                RetTy::Tuple(ts) => TupleSource::Tuple(ts.clone()),
                _ => TupleSource::NotTuple,
            },
            None if names::is_builtin(&callee.name) => TupleSource::NotTuple,
            None => TupleSource::Unknown,
        }
    }
}
