//! `soil-eval` is the Soil interpreter: it resolves definitions into an IR
//! with slot-indexed locals and index-resolved globals, builtins, constructors
//! and fields ([`Program::compile`]), implements every prelude value exactly
//! once, runs calls over one value stack with tail calls, a depth limit and
//! structured [`RuntimePanic`]s, and implements contract §8.6 injection
//! ([`Program::run_json`]). Effects go only through the [`World`]'s capability
//! ports. It depends on `soil-syntax` (the tree it compiles) and `soil-rt`
//! (values, types, JSON); never on the type checker or anything above.

mod builtins;
mod codes;
mod compile;
mod ir;
mod liveness;
mod machine;
mod panic;
mod program;
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
