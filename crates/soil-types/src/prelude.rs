//! The builtin prelude (docs/prelude.md) as Soil source: the single source of builtin
//! types and value signatures, parsed once with soil-syntax.

use std::sync::OnceLock;

use rustc_hash::FxHashMap;
use soil_syntax::ast;

use crate::env::{RowMember, TypeEnv};
use crate::error::TypeError;
use crate::hints::Hints;
use crate::ty::{RowVar, Scheme, Ty};

/// The prelude. `soil-eval` implements every value named here; both crates test
/// that the name sets agree (see [`prelude_names`]).
pub const PRELUDE: &str = r#"-- Soil prelude: builtin types and the signatures of builtin values.
type Option a = None | Some a

type Result a e = Ok a | Err e

type Ordering = Less | Equal | Greater

type IoError = NotFound { path : Utf8 } | PermissionDenied { path : Utf8 } | IoFailure { path : Utf8, message : Utf8 }

type Fs

type Clock

type Stdout

nan : F64

infinity : F64

panic : (message : Utf8) ->{Panic} a

compare : (a : a) -> (b : a) -> Ordering

min : (a : a) -> (b : a) -> a

max : (a : a) -> (b : a) -> a

len : (xs : List a) -> I64

at : (xs : List a) -> (i : I64) ->{Panic} a

get : (xs : List a) -> (i : I64) -> Option a

first : (xs : List a) -> Option a

last : (xs : List a) -> Option a

push : (xs : List a) -> (x : a) -> List a

append : (xs : List a) -> (ys : List a) -> List a

concat : (xss : List (List a)) -> List a

reverse : (xs : List a) -> List a

range : (from : I64) -> (to : I64) -> List I64

take : (n : I64) -> (xs : List a) -> List a

drop : (n : I64) -> (xs : List a) -> List a

slice : (xs : List a) -> (from : I64) -> (to : I64) -> List a

zip : (xs : List a) -> (ys : List b) -> List (a, b)

enumerate : (xs : List a) -> List (I64, a)

map : (f : a ->{e} b) -> (xs : List a) ->{e} List b

filter : (keep : a ->{e} Bool) -> (xs : List a) ->{e} List a

fold : (step : b -> a ->{e} b) -> (init : b) -> (xs : List a) ->{e} b

any : (test : a ->{e} Bool) -> (xs : List a) ->{e} Bool

all : (test : a ->{e} Bool) -> (xs : List a) ->{e} Bool

find : (test : a ->{e} Bool) -> (xs : List a) ->{e} Option a

minimum : (xs : List a) ->{Panic} a

maximum : (xs : List a) ->{Panic} a

sum_i64 : (xs : List I64) -> I64

sum_f64 : (xs : List F64) -> F64

sort_list : (xs : List a) -> List a

sort_list_by : (key : a ->{e} k) -> (xs : List a) ->{e} List a

str_len : (s : Utf8) -> I64

str_slice : (s : Utf8) -> (from : I64) -> (to : I64) -> Utf8

split : (s : Utf8) -> (sep : Utf8) -> List Utf8

join : (sep : Utf8) -> (parts : List Utf8) -> Utf8

trim : (s : Utf8) -> Utf8

lines : (s : Utf8) -> List Utf8

chars : (s : Utf8) -> List Utf8

is_alpha : (s : Utf8) -> Bool

is_digit : (s : Utf8) -> Bool

is_space : (s : Utf8) -> Bool

code_point : (c : Utf8) -> Option I64

from_code_point : (n : I64) -> Option Utf8

str_contains : (s : Utf8) -> (needle : Utf8) -> Bool

starts_with : (s : Utf8) -> (prefix : Utf8) -> Bool

ends_with : (s : Utf8) -> (suffix : Utf8) -> Bool

replace : (s : Utf8) -> (from : Utf8) -> (to : Utf8) -> Utf8

to_upper : (s : Utf8) -> Utf8

to_lower : (s : Utf8) -> Utf8

parse_i64 : (s : Utf8) -> Option I64

parse_f64 : (s : Utf8) -> Option F64

show : (x : a) -> Utf8

to_f64 : (n : I64) -> F64

truncate : (x : F64) -> Option I64

to_u64 : (n : I64) -> Option U64

u64_to_i64 : (n : U64) -> Option I64

abs : (x : F64) -> F64

abs_i64 : (n : I64) -> I64

floor : (x : F64) -> F64

ceil : (x : F64) -> F64

sqrt : (x : F64) -> F64

is_nan : (x : F64) -> Bool

is_finite : (x : F64) -> Bool

map_empty : Map k v

map_insert : (key : k) -> (value : v) -> (m : Map k v) -> Map k v

map_get : (key : k) -> (m : Map k v) -> Option v

map_remove : (key : k) -> (m : Map k v) -> Map k v

map_has : (key : k) -> (m : Map k v) -> Bool

map_size : (m : Map k v) -> I64

map_keys : (m : Map k v) -> List k

map_values : (m : Map k v) -> List v

map_to_list : (m : Map k v) -> List (k, v)

map_from_list : (entries : List (k, v)) -> Map k v

unwrap_or : (o : Option a) -> (default : a) -> a

option_map : (f : a ->{e} b) -> (o : Option a) ->{e} Option b

result_map : (f : a ->{e} b) -> (r : Result a x) ->{e} Result b x

and_then : (f : a ->{e} Result b x) -> (r : Result a x) ->{e} Result b x

read_text : (fs : Fs) -> (path : Utf8) ->{Fs} Result Utf8 IoError

write_text : (fs : Fs) -> (path : Utf8) -> (text : Utf8) ->{Fs} Result Unit IoError

now_seconds : (clock : Clock) ->{Clock} I64

print_line : (out : Stdout) -> (line : Utf8) ->{Stdout} Unit
"#;

/// The parsed prelude: its types registered in a base environment and each
/// value's type scheme.
pub(crate) struct Prelude {
    pub env: TypeEnv,
    pub values: FxHashMap<String, Scheme>,
    pub names: Vec<String>,
}

pub(crate) fn prelude() -> &'static Prelude {
    static PRELUDE_CACHE: OnceLock<Prelude> = OnceLock::new();
    PRELUDE_CACHE.get_or_init(|| build().0)
}

/// The names of every prelude value, in declaration order.
pub fn prelude_names() -> Vec<String> {
    prelude().names.clone()
}

/// The prelude and any parse or lowering problems (a broken prelude is a bug; the
/// tests keep the list empty).
fn build() -> (Prelude, Vec<String>) {
    let (file, diagnostics) = soil_syntax::parse_file(PRELUDE);
    let mut problems: Vec<String> = diagnostics
        .iter()
        .map(|d| format!("{}: {}", d.code, d.message))
        .collect();
    let mut env = TypeEnv::with_builtins();
    let decls: Vec<&ast::TypeDecl> = file
        .items
        .iter()
        .filter_map(|item| match item {
            ast::Item::TypeDecl(decl) => Some(decl),
            _ => None,
        })
        .collect();
    for errors in env.declare(&decls) {
        problems.extend(errors.into_iter().map(|e| e.message));
    }
    let mut values = FxHashMap::default();
    let mut names = Vec::new();
    for item in &file.items {
        if let ast::Item::Signature(signature) = item {
            let mut errors = Vec::new();
            let scheme = scheme_of(&env, &signature.ty, &mut errors, &Hints::default());
            problems.extend(errors.into_iter().map(|e| e.message));
            names.push(signature.name.text.clone());
            values.insert(signature.name.text.clone(), scheme);
        }
    }
    (Prelude { env, values, names }, problems)
}

/// The scheme of a declared type: every type and row variable quantified.
pub(crate) fn scheme_of(
    env: &TypeEnv,
    ty: &ast::Type,
    errors: &mut Vec<TypeError>,
    hints: &Hints,
) -> Scheme {
    // Numbered in order of first mention, found by name in constant time.
    let mut type_vars: FxHashMap<String, u32> = FxHashMap::default();
    let mut row_vars: FxHashMap<String, u32> = FxHashMap::default();
    let number = |vars: &mut FxHashMap<String, u32>, name: &str| match vars.get(name) {
        Some(index) => *index,
        None => {
            let index = vars.len() as u32;
            vars.insert(name.to_owned(), index);
            index
        }
    };
    let mut vars = |name: &str| Some(Ty::Gen(number(&mut type_vars, name)));
    let mut rows = |name: &str| Some(RowMember::Flex(RowVar::Gen(number(&mut row_vars, name))));
    Scheme {
        ty: env.lower(ty, &mut vars, &mut rows, errors, hints),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prelude_parses_and_lowers_cleanly() {
        assert_eq!(build().1, Vec::<String>::new());
        assert_eq!(prelude().names.len(), prelude().values.len());
        assert!(prelude().names.iter().any(|n| n == "print_line"));
    }
}
