//! The hash form (spec §9.1): the canonical printer run with a binder
//! environment that numbers local binding sites `%0, %1, ...` in pre-order and
//! prints each occurrence as its binder's number, so renaming a local or
//! reformatting never changes an item's hash input.

/// The local binders in scope while printing one item, innermost last.
#[derive(Debug, Default)]
pub(crate) struct BinderEnv {
    next: u32,
    scope: Vec<(String, u32)>,
}

impl BinderEnv {
    /// The next number in pre-order.
    pub(crate) fn fresh(&mut self) -> u32 {
        let number = self.next;
        self.next += 1;
        number
    }

    pub(crate) fn push(&mut self, name: String, number: u32) {
        self.scope.push((name, number));
    }

    pub(crate) fn lookup(&self, name: &str) -> Option<u32> {
        self.scope
            .iter()
            .rev()
            .find(|(bound, _)| bound == name)
            .map(|&(_, number)| number)
    }

    pub(crate) fn mark(&self) -> usize {
        self.scope.len()
    }

    pub(crate) fn reset(&mut self, mark: usize) {
        self.scope.truncate(mark);
    }
}
