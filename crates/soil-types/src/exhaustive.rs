//! Exhaustiveness and redundancy of `match` (and irrefutability of `let`
//! patterns): the usefulness algorithm over a pattern matrix, with witnesses.

use crate::env::{Payload, TypeBody, TypeEnv};

/// A pattern reduced to what matching can distinguish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Pat {
    Wild,
    Ctor(Ctor, Vec<Pat>),
}

/// A head constructor. Lists are `Nil` and `Cons(head, tail)`; a record (or an
/// inline-record variant) has its fields as arguments in declaration order.
#[derive(Clone, Debug, PartialEq, Eq)]
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
        let Some((head, rest)) = q.split_first() else {
            return if rows.is_empty() {
                Some(Vec::new())
            } else {
                None
            };
        };
        match head {
            Pat::Ctor(ctor, args) => {
                let specialized = self.specialize(rows, ctor);
                let mut q2 = args.clone();
                q2.extend(rest.iter().cloned());
                let witness = self.useful(&specialized, &q2)?;
                Some(self.rebuild(ctor, witness))
            }
            Pat::Wild => {
                let mut present: Vec<Ctor> = Vec::new();
                for row in rows {
                    if let Some(Pat::Ctor(ctor, _)) = row.first()
                        && !present.contains(ctor)
                    {
                        present.push(ctor.clone());
                    }
                }
                let all = present.first().and_then(|sample| self.all_ctors(sample));
                match all {
                    Some(all) if all.iter().all(|c| present.contains(c)) => {
                        for ctor in &all {
                            let specialized = self.specialize(rows, ctor);
                            let mut q2 = vec![Pat::Wild; self.arity(ctor)];
                            q2.extend(rest.iter().cloned());
                            if let Some(witness) = self.useful(&specialized, &q2) {
                                return Some(self.rebuild(ctor, witness));
                            }
                        }
                        None
                    }
                    all => {
                        let defaults: Vec<Vec<Pat>> = rows
                            .iter()
                            .filter(|row| matches!(row.first(), Some(Pat::Wild)))
                            .map(|row| row[1..].to_vec())
                            .collect();
                        let mut witness = self.useful(&defaults, rest)?;
                        let missing = all
                            .and_then(|all| all.into_iter().find(|c| !present.contains(c)))
                            .map(|ctor| {
                                let arity = self.arity(&ctor);
                                Pat::Ctor(ctor, vec![Pat::Wild; arity])
                            })
                            .unwrap_or(Pat::Wild);
                        witness.insert(0, missing);
                        Some(witness)
                    }
                }
            }
        }
    }

    fn specialize(&self, rows: &[Vec<Pat>], ctor: &Ctor) -> Vec<Vec<Pat>> {
        let arity = self.arity(ctor);
        rows.iter()
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

    fn rebuild(&self, ctor: &Ctor, mut witness: Vec<Pat>) -> Vec<Pat> {
        let arity = self.arity(ctor).min(witness.len());
        let rest = witness.split_off(arity);
        let mut out = vec![Pat::Ctor(ctor.clone(), witness)];
        out.extend(rest);
        out
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
