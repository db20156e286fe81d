//! `soil-rt` owns what a running Soil program is made of: the compact runtime
//! [`Value`] (Rc-shared, O(1) list views, unboxed scalars, short strings inline
//! and longer ones as views of a shared text, [`Str`]), the runtime type
//! descriptors ([`RtType`], [`TypeEnv`]) that give records and sums their names,
//! the F64 total order and the structural [`compare`] behind `==`, `<`, sorting
//! and map keys (with [`hash_value`], consistent with it, behind the hashed
//! [`MapValue`]), and the ONE canonical JSON codec ([`encode`], [`decode`]).
//! It depends only on `trellis-diag` (and the external `rustc-hash`): never on
//! the parser, the checker or the interpreter. Function values are opaque here ([`Function`]); the interpreter
//! defines what they are, so this crate never calls back into it.

#![cfg_attr(test, allow(clippy::disallowed_methods, reason = "tests use files"))]

mod codes;
mod json;
mod map;
/// The span-keeping JSON reader under the codec, for other crates that must point
/// at the exact place in a JSON document (lock files).
pub use json::parse as json_tree;
mod order;
mod text;
mod types;
mod value;

pub use codes::{ALL_CODES, JsonCode};
pub use json::{decode, decode_args, encode, encode_into, format_f64, write_string};
pub use map::MapValue;
pub use order::{compare, compare_quick, equal, f64_total_cmp, hash_value};
pub use text::Str;
pub use types::{
    FieldDecl, Payload, PayloadDecl, RtType, Shape, ShapeId, TypeBody, TypeDecl, TypeEnv, TypeId,
    VariantDecl, prelude,
};
pub use value::{Function, Key, List, Value, Values, copied_elements, map_for_update};
