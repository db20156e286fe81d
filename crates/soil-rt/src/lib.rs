//! `soil-rt` owns what a running Soil program is made of: the compact runtime
//! [`Value`] (Rc-shared, O(1) list views, unboxed scalars), the runtime type
//! descriptors ([`RtType`], [`TypeEnv`]) that give records and sums their names,
//! the F64 total order and the structural [`compare`] behind `==`, `<`, sorting
//! and map keys, and the ONE canonical JSON codec ([`encode`], [`decode`]).
//! It depends only on `trellis-diag`: never on the parser, the checker or the
//! interpreter. Function values are opaque here ([`Function`]); the interpreter
//! defines what they are, so this crate never calls back into it.

#![cfg_attr(test, allow(clippy::disallowed_methods, reason = "tests use files"))]

mod codes;
mod json;
/// The span-keeping JSON reader under the codec, for other crates that must point
/// at the exact place in a JSON document (lock files).
pub use json::parse as json_tree;
mod order;
mod types;
mod value;

pub use codes::{ALL_CODES, JsonCode};
pub use json::{decode, decode_args, encode, encode_into, format_f64, write_string};
pub use order::{compare, f64_total_cmp};
pub use types::{
    FieldDecl, Payload, PayloadDecl, RtType, Shape, ShapeId, TypeBody, TypeDecl, TypeEnv, TypeId,
    VariantDecl, prelude,
};
pub use value::{Function, Key, List, MapValue, Value, copied_elements, map_for_update};
