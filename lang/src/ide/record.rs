//! What elaboration computed for each binding, kept for the editor.
//!
//! Elaboration runs a kernel once per instance, a helper once per call and an unrolled loop body
//! once per trip, so one name may be bound to many values: the recorder keeps each distinct one
//! (up to [`MAX_VALUES`]) with the kernel instance or host function it was computed in. The
//! recorder is elaboration's [`Observer`]; the compiler's path elaborates with none.

use super::describe::{describe, ValueInfo};
use crate::elab::{Observer, Value};
use crate::span::Span;
use std::collections::HashMap;

/// Distinct values kept per binding; an unrolled loop of 64 trips binds its variable 64 times.
pub const MAX_VALUES: usize = 8;

/// One value a binding took.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundValue {
    /// Where it was computed: `kernel instance `fill_1``, `host `run``; `None` for `const` items.
    pub context: Option<String>,
    pub value: ValueInfo,
}

/// The values of one binding.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BoundValues {
    pub values: Vec<BoundValue>,
    /// More distinct values were bound than are kept.
    pub truncated: bool,
}

#[derive(Default)]
pub(crate) struct Recorder {
    /// The host function or kernel instance being elaborated, innermost last (a launch elaborates
    /// its kernel in the middle of its host function).
    context: Vec<String>,
    /// The values bound at each name's span (a parameter, a pattern, a loop variable, a `const`).
    pub(crate) bindings: HashMap<Span, BoundValues>,
    /// The instances (cubin symbols) made of each kernel, by the span of its name.
    pub(crate) instances: HashMap<Span, Vec<String>>,
}

impl Observer for Recorder {
    fn binding(&mut self, at: Span, v: &Value) {
        let entry = self.bindings.entry(at).or_default();
        let bound = BoundValue { context: self.context.last().cloned(), value: describe(v) };
        if entry.values.contains(&bound) {
            return;
        }
        if entry.values.len() < MAX_VALUES {
            entry.values.push(bound);
        } else {
            entry.truncated = true;
        }
    }

    fn enter_instance(&mut self, kernel: Span, symbol: &str) {
        self.instances.entry(kernel).or_default().push(symbol.to_string());
        self.context.push(format!("kernel instance `{symbol}`"));
    }

    fn enter_host(&mut self, name: &str) {
        self.context.push(format!("host `{name}`"));
    }

    fn leave(&mut self) {
        self.context.pop();
    }
}
