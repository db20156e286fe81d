//! The hash form (spec §9.1): the canonical printer run with a binder
//! environment that numbers local binding sites `%0, %1, ...` in pre-order and
//! prints each occurrence as its binder's number, so renaming a local or
//! reformatting never changes an item's hash input. The printer walks in text
//! order (a `let` binder is numbered before its value but in scope only after it),
//! so it keeps its own walk and shares the scope table with `visit`.

use crate::visit::{Scope, ScopeMark};

/// The local binders in scope while printing one item, innermost last.
#[derive(Debug, Default)]
pub(crate) struct BinderEnv {
    next: u32,
    scope: Scope<u32>,
}

impl BinderEnv {
    /// The next number in pre-order.
    pub(crate) fn fresh(&mut self) -> u32 {
        let number = self.next;
        self.next += 1;
        number
    }

    pub(crate) fn push(&mut self, name: String, number: u32) {
        self.scope.bind(name, number);
    }

    pub(crate) fn lookup(&self, name: &str) -> Option<u32> {
        self.scope.lookup(name).copied()
    }

    pub(crate) fn mark(&self) -> ScopeMark {
        self.scope.mark()
    }

    pub(crate) fn reset(&mut self, mark: ScopeMark) {
        self.scope.reset(mark);
    }
}
