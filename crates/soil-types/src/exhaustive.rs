//! Exhaustiveness and redundancy of `match` (and irrefutability of `let`
//! patterns): the usefulness algorithm over a pattern matrix, with witnesses.

use std::rc::Rc;

use rustc_hash::FxHashMap;

use crate::env::{Payload, TypeBody, TypeEnv};

/// A pattern reduced to what matching can distinguish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Pat {
    Wild,
    Ctor(Ctor, Vec<Pat>),
}

/// A head constructor. Lists are `Nil` and `Cons(head, tail)`; a record (or an
/// inline-record variant) has its fields as arguments in declaration order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Ctor {
    Variant {
        ty: String,
        index: usize,
    },
    Record {
        ty: String,
    },
    Tuple(usize),
    Nil,
    Cons,
    Bool(bool),
    Unit,
    /// A literal of a type with unboundedly many values: never a complete set.
    Lit(String),
}

pub(crate) struct Matrix<'a> {
    pub env: &'a TypeEnv,
}

impl Matrix<'_> {
    fn arity(&self, ctor: &Ctor) -> usize {
        match ctor {
            Ctor::Variant { ty, index } => {
                match self.env.variants(ty).and_then(|v| v.get(*index)) {
                    Some(variant) => match &variant.payload {
                        Payload::None => 0,
                        Payload::Positional(_) => 1,
                        Payload::Record(fields) => fields.len(),
                    },
                    None => 0,
                }
            }
            Ctor::Record { ty } => match self.env.get(ty).map(|info| &info.body) {
                Some(TypeBody::Record(fields)) => fields.len(),
                _ => 0,
            },
            Ctor::Tuple(n) => *n,
            Ctor::Cons => 2,
            Ctor::Nil | Ctor::Bool(_) | Ctor::Unit | Ctor::Lit(_) => 0,
        }
    }

    /// Every constructor of the type `sample` belongs to, when that set is finite.
    fn all_ctors(&self, sample: &Ctor) -> Option<Vec<Ctor>> {
        match sample {
            Ctor::Variant { ty, .. } => Some(
                (0..self.env.variants(ty)?.len())
                    .map(|index| Ctor::Variant {
                        ty: ty.clone(),
                        index,
                    })
                    .collect(),
            ),
            Ctor::Record { .. } | Ctor::Tuple(_) | Ctor::Unit => Some(vec![sample.clone()]),
            Ctor::Nil | Ctor::Cons => Some(vec![Ctor::Nil, Ctor::Cons]),
            Ctor::Bool(_) => Some(vec![Ctor::Bool(true), Ctor::Bool(false)]),
            Ctor::Lit(_) => None,
        }
    }

    /// A value vector matched by `q` and by no row of `rows`, if there is one.
    pub(crate) fn useful(&self, rows: &[Vec<Pat>], q: &[Pat]) -> Option<Vec<Pat>> {
        let rows = rows.iter().map(|row| Columns::of(row.clone())).collect();
        let mut witness = self.useful_rev(rows, Columns::of(q.to_vec()))?;
        witness.reverse();
        Some(witness)
    }

    /// [`Matrix::useful`], with the witness's columns last to first so each
    /// step adds its own with a push. A column of `_` (the default matrix) and
    /// a constructor's expansion each leave one smaller problem, so they are
    /// taken in a loop, with what each owes the witness kept in `owed`, rather
    /// than by a call each: a wide record's pattern is thousands of columns,
    /// and a frame a column overflowed the stack. Only a column whose
    /// constructors are all present branches, and recurses.
    fn useful_rev(&self, mut rows: Vec<Columns>, mut q: Columns) -> Option<Vec<Pat>> {
        let mut owed: Vec<Owed> = Vec::new();
        let witness = loop {
            if rows.is_empty() {
                // Nothing covers `q`, so `q` itself is the witness: what the
                // steps would rebuild column by column.
                break Some(q.rest().iter().rev().cloned().collect());
            }
            let Some((head, rest)) = q.rest().split_first() else {
                break None;
            };
            match head {
                Pat::Ctor(ctor, args) => {
                    let specialized = self.specialize(rows.iter().map(Columns::rest), ctor);
                    let mut next = args.clone();
                    next.extend(rest.iter().cloned());
                    owed.push(Owed::Rebuild(ctor.clone()));
                    rows = specialized.into_iter().map(Columns::of).collect();
                    q = Columns::of(next);
                }
                Pat::Wild => match self.split_wild(&rows, rest) {
                    Split::Complete(found) => break found,
                    Split::Default { missing, wild } => {
                        owed.push(Owed::Column(missing));
                        rows = wild
                            .into_iter()
                            .map(|index| rows[index].skip_one())
                            .collect();
                        q = q.skip_one();
                    }
                },
            }
        };
        let mut witness = witness?;
        for step in owed.into_iter().rev() {
            match step {
                Owed::Column(missing) => witness.push(missing),
                Owed::Rebuild(ctor) => witness = self.rebuild_rev(&ctor, witness),
            }
        }
        Some(witness)
    }

    /// A `_` column of `rows` (`q`'s head, `rest` after it): when the rows'
    /// heads name every constructor of their type, the answer of trying each
    /// (found by recursion); otherwise the default matrix's rows and the
    /// constructor it misses (`_` when the set is open or empty).
    fn split_wild(&self, rows: &[Columns], rest: &[Pat]) -> Split {
        // The rows by head constructor, in order of first appearance: found
        // once, so a match over a type of many constructors costs time in
        // proportion to its arms, not their square.
        let mut heads: FxHashMap<&Ctor, Vec<usize>> = FxHashMap::default();
        let mut present: Vec<&Ctor> = Vec::new();
        let mut wild: Vec<usize> = Vec::new();
        for (index, row) in rows.iter().enumerate() {
            match row.rest().first() {
                Some(Pat::Ctor(ctor, _)) => heads
                    .entry(ctor)
                    .or_insert_with(|| {
                        present.push(ctor);
                        Vec::new()
                    })
                    .push(index),
                Some(Pat::Wild) => wild.push(index),
                None => {}
            }
        }
        let all = present.first().and_then(|sample| self.all_ctors(sample));
        match all {
            Some(all) if all.iter().all(|c| heads.contains_key(c)) => {
                for ctor in &all {
                    let headed = heads.get(ctor).map_or(&[][..], Vec::as_slice);
                    let picked = merged(headed, &wild).map(|index| rows[index].rest());
                    let specialized = self.specialize(picked, ctor);
                    let mut next = vec![Pat::Wild; self.arity(ctor)];
                    next.extend(rest.iter().cloned());
                    let specialized = specialized.into_iter().map(Columns::of).collect();
                    if let Some(witness) = self.useful_rev(specialized, Columns::of(next)) {
                        return Split::Complete(Some(self.rebuild_rev(ctor, witness)));
                    }
                }
                Split::Complete(None)
            }
            all => {
                let missing = all
                    .and_then(|all| all.into_iter().find(|c| !heads.contains_key(c)))
                    .map(|ctor| {
                        let arity = self.arity(&ctor);
                        Pat::Ctor(ctor, vec![Pat::Wild; arity])
                    })
                    .unwrap_or(Pat::Wild);
                Split::Default { missing, wild }
            }
        }
    }

    fn specialize<'r>(
        &self,
        rows: impl IntoIterator<Item = &'r [Pat]>,
        ctor: &Ctor,
    ) -> Vec<Vec<Pat>> {
        let arity = self.arity(ctor);
        rows.into_iter()
            .filter_map(|row| {
                let (head, rest) = row.split_first()?;
                let mut out = match head {
                    Pat::Ctor(c, args) if c == ctor => args.clone(),
                    Pat::Ctor(..) => return None,
                    Pat::Wild => vec![Pat::Wild; arity],
                };
                out.extend(rest.iter().cloned());
                Some(out)
            })
            .collect()
    }

    /// A reversed witness's first `arity` columns (its last entries) folded
    /// into one `ctor` pattern.
    fn rebuild_rev(&self, ctor: &Ctor, mut witness: Vec<Pat>) -> Vec<Pat> {
        let arity = self.arity(ctor).min(witness.len());
        let mut args = witness.split_off(witness.len() - arity);
        args.reverse();
        witness.push(Pat::Ctor(ctor.clone(), args));
        witness
    }

    /// Soil pattern text for a witness, e.g. `Some _`, `[_, ..]`, `BadCell { .. }`.
    pub(crate) fn print(&self, pat: &Pat) -> String {
        match pat {
            Pat::Wild => "_".to_owned(),
            Pat::Ctor(ctor, args) => match ctor {
                Ctor::Variant { ty, index } => {
                    let Some(variant) = self.env.variants(ty).and_then(|v| v.get(*index)) else {
                        return "_".to_owned();
                    };
                    match &variant.payload {
                        Payload::None => variant.name.clone(),
                        Payload::Positional(_) => {
                            let inner =
                                args.first().map(|a| self.print_atom(a)).unwrap_or_default();
                            format!("{} {inner}", variant.name)
                        }
                        Payload::Record(fields) => {
                            let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
                            format!("{} {}", variant.name, self.print_fields(&names, args))
                        }
                    }
                }
                Ctor::Record { ty } => {
                    let names: Vec<&str> = match self.env.get(ty).map(|info| &info.body) {
                        Some(TypeBody::Record(fields)) => {
                            fields.iter().map(|(n, _)| n.as_str()).collect()
                        }
                        _ => Vec::new(),
                    };
                    format!("{ty} {}", self.print_fields(&names, args))
                }
                Ctor::Tuple(_) => {
                    let parts: Vec<String> = args.iter().map(|a| self.print(a)).collect();
                    format!("({})", parts.join(", "))
                }
                Ctor::Nil => "[]".to_owned(),
                Ctor::Cons => {
                    let mut elements = Vec::new();
                    let mut current = pat;
                    let tail = loop {
                        match current {
                            Pat::Ctor(Ctor::Cons, parts) if parts.len() == 2 => {
                                elements.push(self.print(&parts[0]));
                                current = &parts[1];
                            }
                            Pat::Ctor(Ctor::Nil, _) => break None,
                            other => break Some(self.print(other)),
                        }
                    };
                    match tail {
                        None => format!("[{}]", elements.join(", ")),
                        Some(tail) if tail == "_" => format!("[{}, ..]", elements.join(", ")),
                        Some(tail) => format!("[{}, ..{tail}]", elements.join(", ")),
                    }
                }
                Ctor::Bool(value) => value.to_string(),
                Ctor::Unit => "()".to_owned(),
                Ctor::Lit(text) => text.clone(),
            },
        }
    }

    fn print_atom(&self, pat: &Pat) -> String {
        let text = self.print(pat);
        let compound = matches!(
            pat,
            Pat::Ctor(Ctor::Variant { .. } | Ctor::Record { .. }, _)
        ) && text.contains(' ');
        if compound { format!("({text})") } else { text }
    }

    fn print_fields(&self, names: &[&str], args: &[Pat]) -> String {
        let shown: Vec<String> = names
            .iter()
            .zip(args)
            .filter(|(_, arg)| **arg != Pat::Wild)
            .map(|(name, arg)| format!("{name} = {}", self.print(arg)))
            .collect();
        let mut parts = shown.clone();
        if shown.len() < names.len() {
            parts.push("..".to_owned());
        }
        format!("{{ {} }}", parts.join(", "))
    }
}

/// A row of the matrix (or the vector tested): its patterns from `from` on.
/// Shared, so a default matrix is its rows' tails without copying them.
#[derive(Clone)]
struct Columns {
    patterns: Rc<[Pat]>,
    from: usize,
}

impl Columns {
    fn of(patterns: Vec<Pat>) -> Columns {
        Columns {
            patterns: patterns.into(),
            from: 0,
        }
    }

    fn rest(&self) -> &[Pat] {
        &self.patterns[self.from..]
    }

    fn skip_one(&self) -> Columns {
        Columns {
            patterns: self.patterns.clone(),
            from: self.from + 1,
        }
    }
}

/// What a step of [`Matrix::useful_rev`] owes the witness found after it.
enum Owed {
    /// The column it took as `_`: this pattern.
    Column(Pat),
    /// The constructor it expanded: fold its arguments back into it.
    Rebuild(Ctor),
}

/// How a `_` column goes on ([`Matrix::split_wild`]).
enum Split {
    Complete(Option<Vec<Pat>>),
    Default { missing: Pat, wild: Vec<usize> },
}

/// The indices of two ascending lists, merged in ascending order.
pub(crate) fn merged<'i>(a: &'i [usize], b: &'i [usize]) -> impl Iterator<Item = usize> + 'i {
    let (mut i, mut j) = (0, 0);
    std::iter::from_fn(move || {
        let take_a = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => x < y,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return None,
        };
        if take_a {
            i += 1;
            Some(a[i - 1])
        } else {
            j += 1;
            Some(b[j - 1])
        }
    })
}
