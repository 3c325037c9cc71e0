//! Module-wide symbols the translator refers to: each IR function's
//! Cranelift id, the interned runtime-error messages, and the module's
//! helpers (tape growth, `copyrange`).

use crate::CodegenError;
use cranelift_module::{DataDescription, DataId, FuncId, Module};
use std::collections::BTreeMap;

/// Module-wide symbols: the Cranelift id of each IR function (internal
/// implementation, or the import for an `extern`) and interned messages.
pub(crate) struct Symbols {
    /// `None` for an internal function no other function reaches
    /// (`compile::unreached_internals`): it has no body and no caller.
    func_ids: Vec<Option<FuncId>>,
    messages: BTreeMap<String, DataId>,
    /// What grows and frees derivative tapes: `realloc`/`free` in object
    /// files, the runtime's per-thread cache in the JIT.
    pub tape_alloc: (&'static str, &'static str),
    /// `__adc_tape_grow` (`tape_lowering.rs`), when some function has a tape.
    pub tape_grow: Option<FuncId>,
    /// `__adc_copy` (`copy.rs`), when some function has a `copyrange`.
    pub copy: Option<FuncId>,
}

impl Symbols {
    /// The symbols of a module whose functions are `func_ids`, with no
    /// message and no helper declared yet.
    pub(crate) fn new(
        func_ids: Vec<Option<FuncId>>,
        tape_alloc: (&'static str, &'static str),
    ) -> Symbols {
        Symbols {
            func_ids,
            messages: BTreeMap::new(),
            tape_alloc,
            tape_grow: None,
            copy: None,
        }
    }

    /// The Cranelift id of IR function `index`.
    pub(crate) fn func(&self, index: usize) -> FuncId {
        // Only unreached internal functions have none, and nothing that is
        // translated (a body, a wrapper, a caller) refers to them.
        self.func_ids[index].expect("a reached function is declared")
    }

    pub(crate) fn message<M: Module>(
        &mut self,
        m: &mut M,
        text: &str,
    ) -> Result<DataId, CodegenError> {
        if let Some(id) = self.messages.get(text) {
            return Ok(*id);
        }
        let id = m.declare_anonymous_data(false, false)?;
        let mut desc = DataDescription::new();
        desc.define(text.as_bytes().to_vec().into_boxed_slice());
        m.define_data(id, &desc)?;
        self.messages.insert(text.to_string(), id);
        Ok(id)
    }
}
