//! The prelude reference (docs/prelude.md) as data beside the prelude's table:
//! each value's meaning, cost and example live here, its signature and effect
//! come from [`PRELUDE`], and [`prelude_reference`] renders the document. A
//! golden test keeps docs/prelude.md equal to the rendering, so the table, the
//! doc and its examples (run by soil-eval's tests) cannot drift apart.

use crate::prelude::{PRELUDE, prelude_names};

/// One prelude value's entry in the reference.
pub struct BuiltinDoc {
    pub name: &'static str,
    /// What it means, in one or a few sentences (Markdown).
    pub meaning: &'static str,
    /// Its cost in big-O, in the notation of §1 of the reference.
    pub cost: &'static str,
    pub example: Example,
}

/// An example: an expression and the value it evaluates to (soil-eval's tests
/// evaluate `expr == result`), or, for values that need a capability, a
/// definition (soil-eval's tests compile it).
pub enum Example {
    Value {
        expr: &'static str,
        result: &'static str,
    },
    Definition(&'static str),
}

/// A numbered section of the reference: prose, then its values.
pub struct DocSection {
    pub title: &'static str,
    pub intro: &'static str,
    pub builtins: &'static [BuiltinDoc],
}

const fn value(
    name: &'static str,
    meaning: &'static str,
    cost: &'static str,
    expr: &'static str,
    result: &'static str,
) -> BuiltinDoc {
    BuiltinDoc {
        name,
        meaning,
        cost,
        example: Example::Value { expr, result },
    }
}

const fn definition(
    name: &'static str,
    meaning: &'static str,
    cost: &'static str,
    source: &'static str,
) -> BuiltinDoc {
    BuiltinDoc {
        name,
        meaning,
        cost,
        example: Example::Definition(source),
    }
}

/// The reference, section by section. Every prelude value appears in exactly
/// one section ([`reference_problems`] says which do not).
pub const PRELUDE_DOCS: &[DocSection] = &[
    DocSection {
        title: "Reading this reference",
        intro: "\
Every value of the prelude is listed once, under a numbered heading, with its
signature (as held in `soil_types::PRELUDE`), its effect, its cost, what it means
and an example. Examples read `expression` then `-- value`: the expression
evaluates to the value (the interpreter's tests run every one of them).

Effect is the row of the call: *none* (pure), `Panic` (the call may fail with a
`runtime-panic`), a capability (`Fs`, `Clock`, `Stdout`), or `e`: whatever the
function passed in performs.

Costs are worst-case time in big-O, with `n` the length of the list (or the number
of characters of the string) argument, `m` the number of entries of a map, and
`k` the length of the second list or string; a cost marked *expected* is the
average over the hashing of a map's keys (§10). Comparing, hashing or showing
values costs the size of the values involved; it is taken as O(1) for numbers. Where a cost says
*uniquely held*, it is the cost of the cost model of §14: an update of a list or
map that nothing else refers to happens in place, otherwise the value is copied
first. A root definition with the name of a prelude value shadows it in that
root; a local binding shadows both.",
        builtins: &[],
    },
    DocSection {
        title: "Types",
        intro: "\
The prelude declares these types (besides the builtin `I64`, `U64`, `F64`,
`Bool`, `Utf8`, `Unit`, `List a` and `Map k v`):

```soil
TYPES
```

`Option` and `Result` are the only ways a prelude value reports absence or
failure without a panic. `Ordering` is what `compare` returns. `IoError` is what
the file capability reports. `Fs`, `Clock` and `Stdout` are opaque capability
tokens: a definition can use a capability only if it receives its token as a
parameter (soil0-cli §8.6 says how a run is given them).",
        builtins: &[],
    },
    DocSection {
        title: "Comparison",
        intro: "\
Every value without a function inside it has a place in one total structural
order, the order behind `compare`, `==`, `<`, map keys and sorting: numbers by
value (for `F64`, `-inf < ... < -0.0 < 0.0 < ... < inf < nan`, and `nan == nan`),
strings by code point, lists and tuples element by element (a prefix first),
records field by field in declaration order, sum values by the order of their
variants in the declaration, then by payload.",
        builtins: &[
            value(
                "compare",
                "The order of `a` and `b` in the total structural order.",
                "O(size of `a` and `b`)",
                "compare [1, 2] [1, 3]",
                "Less",
            ),
            value(
                "min",
                "The smaller of `a` and `b` (`a` when they are equal).",
                "O(size of `a` and `b`)",
                "min 3 (-2)",
                "-2",
            ),
            value(
                "max",
                "The larger of `a` and `b` (`a` when they are equal).",
                "O(size of `a` and `b`)",
                "max \"pear\" \"apple\"",
                "\"pear\"",
            ),
        ],
    },
    DocSection {
        title: "Lists",
        intro: "\
A list is a view `[start, end)` of a shared array, so length, indexing, `take`,
`drop`, `slice` and the pattern `[x, ..rest]` never copy elements (a view keeps
its whole array alive). List literals are `[1, 2, 3]`; `xs ++ ys` concatenates
(§9). Positions count from 0.",
        builtins: &[
            value(
                "len",
                "The number of elements of `xs`.",
                "O(1)",
                "len [3, 1, 2]",
                "3",
            ),
            value(
                "at",
                "The element at position `i`; panics when `i` is negative or not less than `len xs`.",
                "O(1)",
                "at [10, 20, 30] 1",
                "20",
            ),
            value(
                "get",
                "The element at position `i`, or `None` when there is none.",
                "O(1)",
                "get [10, 20, 30] 3",
                "None",
            ),
            value(
                "first",
                "The first element, or `None` for `[]`.",
                "O(1)",
                "first [10, 20]",
                "Some 10",
            ),
            value(
                "last",
                "The last element, or `None` for `[]`.",
                "O(1)",
                "last [10, 20]",
                "Some 20",
            ),
            value(
                "push",
                "`xs` with `x` added at the end.",
                "amortized O(1) when `xs` is uniquely held; O(n) otherwise",
                "push [1, 2] 3",
                "[1, 2, 3]",
            ),
            value(
                "append",
                "The elements of `xs` followed by those of `ys`: the same as `xs ++ ys`.",
                "amortized O(k) when `xs` is uniquely held, O(n) when only `ys` is; O(n + k) otherwise",
                "append [1, 2] [3]",
                "[1, 2, 3]",
            ),
            value(
                "concat",
                "The lists of `xss` joined in order.",
                "O(total length)",
                "concat [[1], [], [2, 3]]",
                "[1, 2, 3]",
            ),
            value(
                "reverse",
                "The elements of `xs` in reverse order.",
                "O(n)",
                "reverse [1, 2, 3]",
                "[3, 2, 1]",
            ),
            value(
                "range",
                "The integers from `from` up to but not including `to` (`[]` when `to <= from`). \
Panics when the list would have more than 100,000,000 elements.",
                "O(to - from)",
                "range 2 5",
                "[2, 3, 4]",
            ),
            value(
                "take",
                "The first `n` elements (all of them when `n >= len xs`, none when `n <= 0`).",
                "O(1)",
                "take 2 [1, 2, 3]",
                "[1, 2]",
            ),
            value(
                "drop",
                "All but the first `n` elements (clamped like `take`).",
                "O(1)",
                "drop 2 [1, 2, 3]",
                "[3]",
            ),
            value(
                "slice",
                "The elements at positions `from` up to but not including `to`, both clamped to `[0, len xs]`; \
`[]` when `to <= from`.",
                "O(1)",
                "slice [0, 1, 2, 3, 4] 1 3",
                "[1, 2]",
            ),
            value(
                "zip",
                "Pairs of elements at the same position; as long as the shorter list.",
                "O(min(n, k))",
                "zip [1, 2, 3] [\"a\", \"b\"]",
                "[(1, \"a\"), (2, \"b\")]",
            ),
            value(
                "enumerate",
                "Each element paired with its position.",
                "O(n)",
                "enumerate [\"a\", \"b\"]",
                "[(0, \"a\"), (1, \"b\")]",
            ),
            value(
                "map",
                "`f` applied to each element, in order.",
                "O(n) calls of `f`",
                "map (\\x -> x * 10) [1, 2]",
                "[10, 20]",
            ),
            value(
                "filter",
                "The elements for which `keep` is true, in order.",
                "O(n) calls of `keep`",
                "filter (\\x -> x % 2 == 0) [1, 2, 3, 4]",
                "[2, 4]",
            ),
            value(
                "fold",
                "Combines the elements from the left: `fold step init [a, b]` is `step (step init a) b`. \
The accumulator is passed on, not shared, so `push`, `map_insert` and `++` on it (also inside a \
tuple or record accumulator taken apart by a pattern) update it in place (§14).",
                "O(n) calls of `step`",
                "fold (\\total x -> total + x) 0 [1, 2, 3]",
                "6",
            ),
            value(
                "any",
                "Whether `test` holds for some element (stops at the first).",
                "O(n) calls of `test`",
                "any (\\x -> x > 2) [1, 2, 3]",
                "true",
            ),
            value(
                "all",
                "Whether `test` holds for every element (stops at the first that fails); true for `[]`.",
                "O(n) calls of `test`",
                "all (\\x -> x > 2) [1, 2, 3]",
                "false",
            ),
            value(
                "find",
                "The first element for which `test` holds.",
                "O(n) calls of `test`",
                "find (\\x -> x > 1) [1, 2, 3]",
                "Some 2",
            ),
            value(
                "minimum",
                "The least element (the first of equal ones); panics on `[]`.",
                "O(n)",
                "minimum [3, 1, 2]",
                "1",
            ),
            value(
                "maximum",
                "The greatest element (the first of equal ones); panics on `[]`.",
                "O(n)",
                "maximum [3, 1, 2]",
                "3",
            ),
            value(
                "sum_i64",
                "The sum of the elements (wrapping on overflow, like `+`); 0 for `[]`.",
                "O(n)",
                "sum_i64 [1, 2, 3]",
                "6",
            ),
            value(
                "sum_f64",
                "The sum of the elements, added from the left; 0.0 for `[]`.",
                "O(n)",
                "sum_f64 [0.5, 0.25]",
                "0.75",
            ),
        ],
    },
    DocSection {
        title: "Sorting",
        intro: "\
Both sorts are stable (equal elements keep their order) and use the total
structural order of §3, so they sort any list whose elements have no function
inside. To sort descending, sort and `reverse`, or sort by a key that reverses
the order (`\\x -> 0 - x`). `take k (sort_list xs)` and `take k (sort_list_by
key xs)` select the first `k` without sorting the rest: O(n) comparisons (and
`n` calls of `key`), then O(k log k).",
        builtins: &[
            value(
                "sort_list",
                "The elements of `xs` in ascending order.",
                "O(n log n) comparisons",
                "sort_list [3, 1, 2]",
                "[1, 2, 3]",
            ),
            value(
                "sort_list_by",
                "The elements of `xs` in ascending order of `key x`; `key` is called once per element.",
                "O(n) calls of `key`, then O(n log n) comparisons of keys",
                "sort_list_by (\\w -> str_len w) [\"pear\", \"fig\", \"apple\"]",
                "[\"fig\", \"pear\", \"apple\"]",
            ),
        ],
    },
    DocSection {
        title: "Strings",
        intro: "\
`Utf8` is a sequence of Unicode scalar values: lengths, positions and slices
count characters, not bytes. String literals are `\"...\"`; `s ++ t`
concatenates (§9), in place when `s` is uniquely held (§14). A string of at
most seven bytes is held in the value itself; the longer pieces `split`,
`lines`, `trim` and `str_slice` return are views of the string they were cut
from, so cutting copies nothing (a view keeps its whole text alive, as a list
view keeps its array).",
        builtins: &[
            value(
                "str_len",
                "The number of characters of `s`.",
                "O(n)",
                "str_len \"héllo\"",
                "5",
            ),
            value(
                "str_slice",
                "The characters at positions `from` up to but not including `to`, clamped like `slice`.",
                "O(to)",
                "str_slice \"soil\" 1 3",
                "\"oi\"",
            ),
            value(
                "split",
                "The parts of `s` between occurrences of `sep`; `[s]` when `sep` is empty.",
                "O(n)",
                "split \"a,b,,c\" \",\"",
                "[\"a\", \"b\", \"\", \"c\"]",
            ),
            value(
                "join",
                "The parts with `sep` between each two.",
                "O(total length)",
                "join \", \" [\"a\", \"b\"]",
                "\"a, b\"",
            ),
            value(
                "trim",
                "`s` without leading and trailing white space.",
                "O(n)",
                "trim \"  soil \\n\"",
                "\"soil\"",
            ),
            value(
                "lines",
                "The lines of `s`, split at `\\n` or `\\r\\n`; a final line ending adds no empty line.",
                "O(n)",
                "lines \"a\\nb\\n\"",
                "[\"a\", \"b\"]",
            ),
            value(
                "chars",
                "The characters of `s`, each a one-character `Utf8`.",
                "O(n)",
                "chars \"abc\"",
                "[\"a\", \"b\", \"c\"]",
            ),
            value(
                "str_contains",
                "Whether `needle` occurs in `s` (the empty string occurs in every string).",
                "O(n + k)",
                "str_contains \"trellis\" \"ell\"",
                "true",
            ),
            value(
                "starts_with",
                "Whether `s` begins with `prefix`.",
                "O(k)",
                "starts_with \"trellis\" \"tre\"",
                "true",
            ),
            value(
                "ends_with",
                "Whether `s` ends with `suffix`.",
                "O(k)",
                "ends_with \"trellis\" \"lis\"",
                "true",
            ),
            value(
                "replace",
                "`s` with every occurrence of `from` replaced by `to`, left to right; `s` when `from` is empty.",
                "O(n + length of the result)",
                "replace \"a-b-c\" \"-\" \"+\"",
                "\"a+b+c\"",
            ),
            value(
                "to_upper",
                "`s` in upper case (Unicode case mapping; a character may become several).",
                "O(n)",
                "to_upper \"Soil\"",
                "\"SOIL\"",
            ),
            value(
                "to_lower",
                "`s` in lower case (Unicode case mapping).",
                "O(n)",
                "to_lower \"Soil\"",
                "\"soil\"",
            ),
            value(
                "parse_i64",
                "The integer `s` spells in decimal (an optional sign, then digits, nothing else); \
`None` otherwise or when it does not fit in `I64`.",
                "O(n)",
                "parse_i64 \"-42\"",
                "Some (-42)",
            ),
            value(
                "parse_f64",
                "The number `s` spells (decimal or exponent form, `inf`, `nan`); `None` otherwise.",
                "O(n)",
                "parse_f64 \"2.5e1\"",
                "Some 25.0",
            ),
            value(
                "show",
                "`x` as text: its canonical JSON encoding (soil0-cli §8.6); `\"<function>\"` for a function.",
                "O(size of `x`)",
                "show [1, 2]",
                "\"[1,2]\"",
            ),
        ],
    },
    DocSection {
        title: "Characters",
        intro: "\
A character is a one-character `Utf8` (what `chars` returns). The classes hold
for a non-empty string all of whose characters are in the class, so they also
test whole words.",
        builtins: &[
            value(
                "is_alpha",
                "Whether `s` is non-empty and every character of it is alphabetic (Unicode `Alphabetic`).",
                "O(n)",
                "map is_alpha [\"a\", \"É\", \"1\", \"\"]",
                "[true, true, false, false]",
            ),
            value(
                "is_digit",
                "Whether `s` is non-empty and every character of it is an ASCII digit `0`–`9`.",
                "O(n)",
                "map is_digit [\"7\", \"42\", \"x\", \"\"]",
                "[true, true, false, false]",
            ),
            value(
                "is_space",
                "Whether `s` is non-empty and every character of it is white space (Unicode `White_Space`).",
                "O(n)",
                "map is_space [\" \", \"\\t\\n\", \"a \"]",
                "[true, true, false]",
            ),
            value(
                "code_point",
                "The Unicode code point of `c` when `c` is exactly one character; `None` otherwise.",
                "O(1)",
                "code_point \"A\"",
                "Some 65",
            ),
            value(
                "from_code_point",
                "The one-character string with code point `n`; `None` when `n` is not a Unicode scalar value \
(negative, a surrogate, or above `0x10FFFF`).",
                "O(1)",
                "from_code_point 97",
                "Some \"a\"",
            ),
        ],
    },
    DocSection {
        title: "Numbers",
        intro: "\
`I64` and `U64` arithmetic wraps on overflow; `F64` is IEEE 754 double
precision. There are no implicit conversions: convert with the values below.",
        builtins: &[
            value(
                "nan",
                "The `F64` not-a-number (equal to itself under the total order).",
                "O(1)",
                "is_nan nan",
                "true",
            ),
            value(
                "infinity",
                "The `F64` positive infinity; `-infinity` is the negative one.",
                "O(1)",
                "is_finite infinity",
                "false",
            ),
            value(
                "to_f64",
                "`n` as the nearest `F64`.",
                "O(1)",
                "to_f64 3",
                "3.0",
            ),
            value(
                "truncate",
                "`x` with its fraction dropped (toward zero), as an `I64`; `None` when that does not \
fit in `I64` (including `nan` and the infinities).",
                "O(1)",
                "truncate (-2.7)",
                "Some (-2)",
            ),
            value(
                "to_u64",
                "`n` as a `U64`; `None` when `n` is negative.",
                "O(1)",
                "to_u64 7",
                "Some 7u",
            ),
            value(
                "u64_to_i64",
                "`n` as an `I64`; `None` when `n` is above `9223372036854775807`.",
                "O(1)",
                "u64_to_i64 7u",
                "Some 7",
            ),
            value("abs", "The absolute value of `x`.", "O(1)", "abs (-1.5)", "1.5"),
            value(
                "abs_i64",
                "The absolute value of `n` (wrapping: the least `I64` is its own absolute value).",
                "O(1)",
                "abs_i64 (-3)",
                "3",
            ),
            value(
                "floor",
                "The greatest integral `F64` not above `x`.",
                "O(1)",
                "floor (-1.5)",
                "-2.0",
            ),
            value(
                "ceil",
                "The least integral `F64` not below `x`.",
                "O(1)",
                "ceil 1.25",
                "2.0",
            ),
            value(
                "sqrt",
                "The square root of `x` (`nan` for a negative `x`).",
                "O(1)",
                "sqrt 6.25",
                "2.5",
            ),
            value(
                "is_nan",
                "Whether `x` is not a number.",
                "O(1)",
                "is_nan (0.0 / 0.0)",
                "true",
            ),
            value(
                "is_finite",
                "Whether `x` is neither infinite nor `nan`.",
                "O(1)",
                "is_finite (1.0 / 0.0)",
                "false",
            ),
        ],
    },
    DocSection {
        title: "Operators",
        intro: "\
Operators are not prelude values but their meaning and cost belong here.

| Operator | Operands | Meaning | Cost |
| --- | --- | --- | --- |
| `+ - *` | two `I64`, two `U64` or two `F64` | arithmetic; integers wrap on overflow, two's complement, never panicking (the largest `I64` plus 1 is the least, -2^63; `0 - 1` on `U64` is 2^64 - 1) | O(1) |
| `/` | likewise | integers: the quotient rounded toward zero (`-7 / 2 == -3`), panics on division by zero; the one quotient that overflows, the least `I64` (-2^63) divided by `-1`, wraps to the least `I64` itself; `F64`: IEEE division (`1.0 / 0.0` is `infinity`) | O(1) |
| `%` | likewise | integers: the remainder with the sign of the dividend (`-7 % 2 == -1`), panics on zero; the least `I64` `% -1` is `0`; `F64`: IEEE remainder | O(1) |
| unary `-` | `I64` or `F64` | negation, wrapping: the negation of the least `I64` is itself | O(1) |
| `++` | two `List a` | concatenation: see `append` in §4 (`[x] ++ acc` prepends in amortized O(1) when `acc` is uniquely held) | as `append` |
| `++` | two `Utf8` | concatenation | amortized O(k) when the left string is uniquely held; O(n + k) otherwise |
| `== != < <= > >=` | two values of one type without functions | the total structural order of §3 | O(size of the operands) |
| `and or not` | `Bool` | logic; `and` and `or` evaluate their right operand only when needed | O(1) |",
        builtins: &[],
    },
    DocSection {
        title: "Maps",
        intro: "\
`Map k v` is a finite map ordered by the total structural order of its keys
(§3); `map_keys`, `map_values` and `map_to_list` list entries in ascending key
order. Maps have no literal: build them from `map_empty` or `map_from_list`.

A map is a hash table: finding, adding, replacing or removing a key costs
expected O(1), plus hashing the key (the size of the key, as comparing it
would). Its ascending order is sorted when it is first read after keys were
added or removed (O(m log m)) and kept until the keys change again, so listing
a map again, or replacing values in it, costs no sort. `==`, `compare`, `show`
and the canonical JSON read a map in that order too. No program can observe
the table's own order.",
        builtins: &[
            value(
                "map_empty",
                "The map without entries.",
                "O(1)",
                "map_size map_empty",
                "0",
            ),
            value(
                "map_insert",
                "`m` with `key` mapped to `value` (replacing any earlier value). Note the argument order: \
key, value, then the map, so `fold` steps read `map_insert k v acc`.",
                "expected O(1) when `m` is uniquely held; O(m) otherwise",
                "map_to_list (map_insert \"b\" 2 (map_insert \"a\" 1 map_empty))",
                "[(\"a\", 1), (\"b\", 2)]",
            ),
            value(
                "map_get",
                "The value of `key`, or `None`.",
                "expected O(1); taken apart at once (`unwrap_or (map_get k m) d`, `match map_get k m with | Some v -> ... | None -> ...`) it builds no `Option` (§14)",
                "map_get \"a\" (map_from_list [(\"a\", 1)])",
                "Some 1",
            ),
            value(
                "map_remove",
                "`m` without `key` (`m` itself when the key is absent).",
                "expected O(1) when `m` is uniquely held or lacks `key`; O(m) otherwise",
                "map_size (map_remove \"a\" (map_from_list [(\"a\", 1)]))",
                "0",
            ),
            value(
                "map_has",
                "Whether `key` has a value in `m`.",
                "expected O(1)",
                "map_has \"z\" (map_from_list [(\"a\", 1)])",
                "false",
            ),
            value(
                "map_size",
                "The number of entries.",
                "O(1)",
                "map_size (map_from_list [(\"a\", 1), (\"a\", 2)])",
                "1",
            ),
            value(
                "map_keys",
                "The keys, ascending.",
                "O(m log m) on the first ordered read since keys were added or removed; O(m) after",
                "map_keys (map_from_list [(2, \"b\"), (1, \"a\")])",
                "[1, 2]",
            ),
            value(
                "map_values",
                "The values, in ascending order of their keys.",
                "O(m log m) on the first ordered read since keys were added or removed; O(m) after",
                "map_values (map_from_list [(2, \"b\"), (1, \"a\")])",
                "[\"a\", \"b\"]",
            ),
            value(
                "map_to_list",
                "The entries as `(key, value)` pairs, ascending by key.",
                "O(m log m) on the first ordered read since keys were added or removed; O(m) after",
                "map_to_list (map_from_list [(2, \"b\"), (1, \"a\")])",
                "[(1, \"a\"), (2, \"b\")]",
            ),
            value(
                "map_from_list",
                "The map of the pairs; a later pair for the same key wins.",
                "expected O(n)",
                "map_get 1 (map_from_list [(1, \"a\"), (1, \"b\")])",
                "Some \"b\"",
            ),
        ],
    },
    DocSection {
        title: "Option and Result",
        intro: "\
`match` takes `Option` and `Result` values apart; these cover the common cases.",
        builtins: &[
            value(
                "unwrap_or",
                "The value inside `Some`, or `default` for `None`.",
                "O(1)",
                "unwrap_or (parse_i64 \"x\") 0",
                "0",
            ),
            value(
                "option_map",
                "`Some (f x)` for `Some x`; `None` for `None`.",
                "O(1) plus one call of `f`",
                "option_map (\\x -> x + 1) (Some 1)",
                "Some 2",
            ),
            value(
                "result_map",
                "`Ok (f x)` for `Ok x`; an `Err` unchanged.",
                "O(1) plus one call of `f`",
                "result_map (\\x -> x + 1) (Ok 1)",
                "Ok 2",
            ),
            value(
                "and_then",
                "`f x` for `Ok x` (a second step that may fail); an `Err` unchanged.",
                "O(1) plus one call of `f`",
                "and_then (\\x -> if x > 0 then Ok x else Err \"not positive\") (Ok 0)",
                "Err \"not positive\"",
            ),
        ],
    },
    DocSection {
        title: "Capabilities",
        intro: "\
These values touch the world, and only through a capability token their caller
passes in; a definition that calls one declares the effect in its signature.
Paths are relative to the run's file-system root (soil0-cli §8.6).",
        builtins: &[
            definition(
                "read_text",
                "The contents of the file at `path`, or the `IoError` that prevented reading it.",
                "O(size of the file)",
                "word_count : (fs : Fs) -> (path : Utf8) ->{Fs} Result I64 IoError\n\
word_count fs path = result_map (\\text -> len (split text \" \")) (read_text fs path)",
            ),
            definition(
                "write_text",
                "Replaces the file at `path` with `text` (creating it), or reports the `IoError`.",
                "O(length of `text`)",
                "save : (fs : Fs) -> (lines : List Utf8) ->{Fs} Result Unit IoError\n\
save fs lines = write_text fs \"out.txt\" (join \"\\n\" lines)",
            ),
            definition(
                "now_seconds",
                "The current time in whole seconds since the Unix epoch.",
                "O(1)",
                "elapsed : (clock : Clock) -> (since : I64) ->{Clock} I64\n\
elapsed clock since = now_seconds clock - since",
            ),
            definition(
                "print_line",
                "Writes `line` and a line break to standard output.",
                "O(length of `line`)",
                "greet : (out : Stdout) -> (name : Utf8) ->{Stdout} Unit\n\
greet out name = print_line out (\"hello, \" ++ name)",
            ),
        ],
    },
    DocSection {
        title: "Panics",
        intro: "\
A panic ends the run with a `runtime-panic` and the chain of definitions that
led to it. Prefer `Option` and `Result`; panic only where the caller broke a
documented precondition.",
        builtins: &[value(
            "panic",
            "Never returns: fails the run with `message`. Its result type is any type, so it fits \
any branch.",
            "O(1)",
            "if 1 < 2 then 0 else panic \"unreachable\"",
            "0",
        )],
    },
    DocSection {
        title: "The cost model",
        intro: "\
Soil values are immutable, yet updates of lists and maps run in place when that
cannot be observed: when the value being updated is *uniquely held*, nothing
else (no other variable, data structure or closure) refers to it.

- The last read of a variable moves its value instead of sharing it, so in
  `push acc x`, `acc ++ ys`, `[x] ++ acc` or `map_insert k v m` an accumulator
  that is read for the last time is uniquely held.
- A variable is released as soon as it is dead: at the start of each branch of
  an `if` or `match` arm where it is not read again, and a pattern variable that
  is never read is not bound at all.
- A tuple, record or variant that is taken apart by a pattern (`let (acc, n) =
  state in ...`, `match state with | (acc, n) -> ...`, `let S { items, count } =
  s in ...`) and is dead afterwards gives its fields away: they are moved out,
  not copied, so a list or map inside stays uniquely held. Likewise `r.field` of a
  record read for the last time moves the field out, and `{ r with items = push
  r.items x }` fetches the old `items` out of `r` before computing the new one
  when `r` is a local that dies there (and the new values read `r` only through
  its fields).
- `fold` passes the accumulator from one step to the next without keeping a
  copy, and `map`, `filter` and `fold` hand each element of a uniquely held
  list to their function by value (`map` and `filter` build their result in
  that list's storage), so lists and maps inside the elements stay uniquely
  held too.
- Strings follow the same rule: `acc ++ s` appends to a uniquely held `acc`
  in place (amortized O(length of `s`)), so building a text piece by piece in
  a `fold` is linear.

So `fold (\\state x -> let (acc, n) = state in (push acc x, n + 1)) ([], 0) xs`
is O(n) in all, as is a loop that prepends with `[x] ++ acc`. A list or map that
is still shared when it is updated (kept in another variable that is read
later, captured by a closure, or stored in another value) is copied first: O(n)
for that update.

`take`, `drop`, `slice` and `[x, ..rest]` are O(1) views of their list's storage
(a view keeps that storage alive); a view that is the only holder of its storage
is updated in place like any list, a shared one is copied.

`unwrap_or (map_get k m) d`, the lookup of a count or a default, runs as one
lookup that does not build the `Option` in between, and so does `match map_get
k m with | Some v -> ... | None -> ...` (the two arms in either order, the
`None` arm possibly `_`, no guard): `v` is bound to the value found, also
when the `Option` is first named (`let found = map_get k m in match found
with ...`, `found` read nowhere else). Any other
`match` of an `Option` with just those two arms is decided by its tag, the
payload moved out when nothing else holds it; `map_has k m` looks its key up
the same way. `option_map` given a lambda (`option_map (\\x -> e) o`) is the
`match` it means, the lambda's body run with no call, and `unwrap_or
(option_map (\\x -> e) o) d` with a literal or a local variable for `d` builds no
`Option` at all, so `unwrap_or (option_map (\\c -> c + 1) (map_get k m)) 1`
is one lookup too. `concat (map f xs)` empties
each list `f` makes into the result as it is made: O(total length), with one of
`f`'s lists held at a time instead of all of them.

A predicate given to `filter`, `any`, `all` or `find` that compares its
argument with a constant (`\\w -> w != \"\"`, `\\n -> n > 0`) is decided on each
element where it lies, with no call: O(size of the constant) per element, as
`==` is. So is one that compares its argument's length with an integer
(`\\w -> str_len w > 0`, `\\l -> len l >= 2`): O(characters) and O(1), as
`str_len` and `len` are.",
        builtins: &[],
    },
];

/// The prelude's `type` declarations, one per line.
fn type_declarations() -> Vec<&'static str> {
    PRELUDE
        .lines()
        .filter(|line| line.starts_with("type "))
        .collect()
}

/// The signature line of prelude value `name`.
fn signature(name: &str) -> Option<&'static str> {
    PRELUDE.lines().find(|line| {
        line.strip_prefix(name)
            .is_some_and(|rest| rest.starts_with(" : "))
    })
}

/// The effect row of a call: the row on the signature's last arrow when that
/// arrow is outside every parenthesis (the arrows inside are an argument's).
fn effect(signature: &str) -> String {
    let mut depth = 0i32;
    let mut last_arrow = None;
    let bytes = signature.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'(' => depth += 1,
            b')' => depth -= 1,
            b'-' if depth == 0 && bytes.get(i + 1) == Some(&b'>') => last_arrow = Some(i + 2),
            _ => {}
        }
    }
    let row = last_arrow
        .and_then(|at| signature[at..].strip_prefix('{'))
        .and_then(|rest| rest.split_once('}'))
        .map(|(row, _)| row.trim());
    match row {
        None | Some("") => "none".to_owned(),
        Some("e") => "`e`, whatever its function argument performs".to_owned(),
        Some(row) => format!("`{row}`"),
    }
}

/// What keeps the reference from describing the prelude: values the table has
/// and the reference lacks, entries that name no prelude value, duplicates.
pub fn reference_problems() -> Vec<String> {
    let names = prelude_names();
    let mut problems = Vec::new();
    let documented: Vec<&str> = PRELUDE_DOCS
        .iter()
        .flat_map(|s| s.builtins.iter().map(|b| b.name))
        .collect();
    for name in &names {
        match documented.iter().filter(|d| **d == name.as_str()).count() {
            0 => problems.push(format!("`{name}` is not in the prelude reference")),
            1 => {}
            n => problems.push(format!(
                "`{name}` appears {n} times in the prelude reference"
            )),
        }
    }
    for name in &documented {
        if !names.iter().any(|n| n == name) {
            problems.push(format!(
                "the prelude reference documents `{name}`, which the prelude does not have"
            ));
        }
    }
    problems
}

/// docs/prelude.md.
pub fn prelude_reference() -> String {
    let mut out = String::from(
        "# The Soil prelude\n\n\
The values every Soil program can use without defining them: their signatures,\n\
effects, meaning, cost and an example each. This document is generated from the\n\
prelude's table (`crates/soil-types/src/prelude.rs`, with the prose in\n\
`prelude_doc.rs` beside it); a test fails when the two disagree, and\n\
`UPDATE_EXPECT=1 cargo test -p soil-types --test prelude_doc` rewrites it.\n",
    );
    let types = type_declarations().join("\n\n");
    for (i, section) in PRELUDE_DOCS.iter().enumerate() {
        let number = i + 1;
        out.push_str(&format!("\n## {number}. {}\n\n", section.title));
        out.push_str(&section.intro.replace("TYPES", &types));
        out.push('\n');
        for (j, builtin) in section.builtins.iter().enumerate() {
            let signature = signature(builtin.name).unwrap_or("(not in the prelude)");
            out.push_str(&format!(
                "\n### {number}.{} `{}`\n\n```soil\n{signature}\n```\n\n",
                j + 1,
                builtin.name
            ));
            out.push_str(&format!(
                "Effect: {}. Cost: {}.\n\n{}\n\n",
                effect(signature),
                builtin.cost,
                builtin.meaning
            ));
            match &builtin.example {
                Example::Value { expr, result } => {
                    out.push_str(&format!("```soil\n{expr}\n-- {result}\n```\n"));
                }
                Example::Definition(source) => {
                    out.push_str(&format!("```soil\n{source}\n```\n"));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effects_are_read_from_the_outermost_arrow() {
        assert_eq!(effect("len : (xs : List a) -> I64"), "none");
        assert_eq!(
            effect("at : (xs : List a) -> (i : I64) ->{Panic} a"),
            "`Panic`"
        );
        assert!(effect("map : (f : a ->{e} b) -> (xs : List a) ->{e} List b").starts_with("`e`"));
        assert_eq!(
            effect("fold : (step : b -> a ->{e} b) -> (init : b) -> (xs : List a) -> b"),
            "none"
        );
    }
}
