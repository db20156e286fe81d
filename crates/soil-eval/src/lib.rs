//! `soil-eval` is the Soil interpreter: it resolves definitions into an IR
//! with slot-indexed locals and index-resolved globals, builtins, constructors
//! and fields ([`Program::compile`]), implements every prelude value exactly
//! once, runs calls over one value stack with tail calls, a depth limit and
//! structured [`RuntimePanic`]s, and implements contract §8.6 injection
//! ([`Program::run_json`]). Effects go only through the [`World`]'s capability
//! ports. It depends on `soil-syntax` (the tree it compiles) and `soil-rt`
//! (values, types, JSON); never on the type checker or anything above.
//!
//! Runtime rules callers can observe (beyond the prelude semantics):
//! - Calls in tail position replace the caller's frame: loops written as tail
//!   recursion run in constant depth and do not count toward the depth limit,
//!   and a replaced definition drops out of a panic's chain. Definitions with
//!   requires/ensures clauses are always called normally (their ensures run on
//!   exit with `result` bound).
//! - The last read of a local moves it, a local is released where it dies
//!   (the start of a branch that no longer reads it), and a tuple, record,
//!   variant or list that nothing else holds gives its parts away when a
//!   pattern takes it apart (or a record update replaces a field its new
//!   value reads), so accumulators (`push acc x`, `acc ++ ys`,
//!   `[x] ++ acc`, `map_insert k v m`), also inside tuple and record state,
//!   update uniquely owned values in place; values remain immutable to the
//!   program (the cost model of docs/prelude.md §14).
//! - Deep recursion ends in `depth-limit` (default [`DEFAULT_MAX_DEPTH`]
//!   nested calls, [`Program::with_max_depth`]) or when the native stack
//!   budget runs out, whichever comes first; [`Program::run_json`] runs on a
//!   dedicated [`EVAL_STACK_BYTES`] thread so the budget never binds first.
//! - Some nests of prelude calls compile to one fused builtin that skips the
//!   intermediate value: `unwrap_or (map_get k m) d` (no `Option` built),
//!   `take n (sort_list xs)` and `take n (sort_list_by key xs)` (the first n
//!   selected, not the whole list sorted). Their arguments are evaluated in
//!   the nest's order and their results are the nest's; `push`,
//!   `map_insert` and the fused lookup are evaluated straight from their
//!   argument expressions rather than through the stack.
//! - `option_map (\x -> e) o`, and `unwrap_or (option_map (\x -> e) o) d`
//!   with a literal or local `d`, compile to the `match` they mean, the
//!   lambda's body in the caller's frame (compile/options.rs): a
//!   panic inside it names the caller, not a `(lambda)` frame, and under
//!   `unwrap_or` a call ending the body is in tail position, as in the match
//!   written out. `let x = e in match x with | Some .. | None .. end`, `x`
//!   read nowhere else, is the match of `e` itself.
//! - `split s ""` is `[s]`; `replace s "" t` is `s`; `range` refuses more than
//!   100,000,000 elements with a panic; `show` of a function is `"<function>"`.
//!
//! Workspace dependencies: `trellis-diag`, `soil-syntax`, `soil-rt`.

#![cfg_attr(test, allow(clippy::disallowed_methods, reason = "tests use files"))]

mod builtins;
mod codes;
mod compile;
mod field_reuse;
mod ir;
mod liveness;
mod loops;
mod machine;
mod operators;
mod panic;
mod patterns;
mod program;
mod rests;
mod source;
mod types;
pub mod world;

pub use builtins::prelude_value_names;
pub use codes::EvalCode;
pub use panic::RuntimePanic;
pub use program::{
    Clause, DEFAULT_MAX_DEPTH, Definition, EVAL_STACK_BYTES, ParamKind, Program, RunError,
    capability_value, with_eval_stack,
};
pub use source::program_from_source;
pub use types::{rt_type, type_env_from_decls};
pub use world::World;
