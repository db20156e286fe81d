//! The checker's internal types and effect rows, and their Soil-style printing.

use std::collections::{BTreeMap, BTreeSet};

/// A type during inference. Builtin and declared types alike are `Con` (nominal);
/// `Unit` is `Con("Unit")`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Ty {
    /// A flexible unification variable.
    Var(u32),
    /// A variable quantified by a [`Scheme`]; replaced on instantiation.
    Gen(u32),
    /// A declared type variable of the signature under check: equal only to itself.
    Rigid(String),
    Con(String, Vec<Ty>),
    Tuple(Vec<Ty>),
    /// An arrow with the row of effects performed when it is applied.
    Fun(Box<Ty>, Row, Box<Ty>),
}

impl Ty {
    pub(crate) fn con(name: &str) -> Ty {
        Ty::Con(name.to_owned(), Vec::new())
    }

    pub(crate) fn fun(param: Ty, row: Row, result: Ty) -> Ty {
        Ty::Fun(Box::new(param), row, Box::new(result))
    }

    pub(crate) fn contains_function(&self) -> bool {
        match self {
            Ty::Fun(..) => true,
            Ty::Con(_, args) | Ty::Tuple(args) => args.iter().any(Ty::contains_function),
            Ty::Var(_) | Ty::Gen(_) | Ty::Rigid(_) => false,
        }
    }
}

/// A row variable: flexible during inference, or quantified in a scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum RowVar {
    Flex(u32),
    Gen(u32),
}

/// An effect row: a set of labels (`Panic`, `Fs`, ...) plus declared row variables
/// of the signature under check (lower-case names, which behave like labels), and a
/// set of row variables standing for "whatever else". The row is their union.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Row {
    pub labels: BTreeSet<String>,
    pub vars: BTreeSet<RowVar>,
}

impl Row {
    pub(crate) fn empty() -> Row {
        Row::default()
    }

    pub(crate) fn label(label: &str) -> Row {
        let mut row = Row::default();
        row.labels.insert(label.to_owned());
        row
    }

    pub(crate) fn var(var: RowVar) -> Row {
        let mut row = Row::default();
        row.vars.insert(var);
        row
    }

    pub(crate) fn union(&mut self, other: &Row) {
        self.labels.extend(other.labels.iter().cloned());
        self.vars.extend(other.vars.iter().copied());
    }

    pub(crate) fn flex_vars(&self) -> Vec<u32> {
        self.vars
            .iter()
            .filter_map(|var| match var {
                RowVar::Flex(id) => Some(*id),
                RowVar::Gen(_) => None,
            })
            .collect()
    }
}

/// A polymorphic type: `Gen` variables (types and rows) are instantiated afresh at
/// every use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Scheme {
    pub ty: Ty,
}

impl Scheme {
    pub(crate) fn mono(ty: Ty) -> Scheme {
        Scheme { ty }
    }
}

/// Gives unnamed variables stable printable names in order of first appearance:
/// `_1`, `_2`, ... by default (they cannot clash with declared variables), or
/// `a`, `b`, ... for quantified variables and `e`, `e1`, ... for quantified row
/// variables when printing a whole inferred signature.
#[derive(Default)]
pub(crate) struct VarNames {
    names: BTreeMap<(u8, u32), String>,
    letters: bool,
    types_named: usize,
    rows_named: usize,
}

impl VarNames {
    pub(crate) fn letters() -> VarNames {
        VarNames {
            letters: true,
            ..VarNames::default()
        }
    }

    fn name(&mut self, kind: u8, id: u32) -> String {
        if let Some(name) = self.names.get(&(kind, id)) {
            return name.clone();
        }
        let name = match (self.letters, kind) {
            (true, 1) => {
                let n = self.types_named;
                self.types_named += 1;
                let letter = (b'a' + (n % 26) as u8) as char;
                if n < 26 {
                    letter.to_string()
                } else {
                    format!("{letter}{}", n / 26)
                }
            }
            (true, 2) => {
                let n = self.rows_named;
                self.rows_named += 1;
                if n == 0 {
                    "e".to_owned()
                } else {
                    format!("e{n}")
                }
            }
            _ => format!("_{}", self.names.len() + 1),
        };
        self.names.insert((kind, id), name.clone());
        name
    }
}

/// Prints a (resolved) type in canonical Soil type syntax. Unresolved flexible row
/// variables are omitted: they stand for "no further effects known".
pub(crate) fn print_ty(ty: &Ty, names: &mut VarNames) -> String {
    let mut out = String::new();
    write_ty(ty, names, &mut out);
    out
}

fn write_ty(ty: &Ty, names: &mut VarNames, out: &mut String) {
    match ty {
        Ty::Var(id) => out.push_str(&names.name(0, *id)),
        Ty::Gen(id) => out.push_str(&names.name(1, *id)),
        Ty::Rigid(name) => out.push_str(name),
        Ty::Con(name, args) => {
            out.push_str(name);
            for arg in args {
                out.push(' ');
                write_atom(arg, names, out);
            }
        }
        Ty::Tuple(elements) => {
            out.push('(');
            for (index, element) in elements.iter().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                write_ty(element, names, out);
            }
            out.push(')');
        }
        Ty::Fun(param, row, result) => {
            if matches!(**param, Ty::Fun(..)) {
                out.push('(');
                write_ty(param, names, out);
                out.push(')');
            } else {
                write_ty(param, names, out);
            }
            out.push_str(" ->");
            let mut shown: Vec<String> = row.labels.iter().cloned().collect();
            for var in &row.vars {
                if let RowVar::Gen(id) = var {
                    shown.push(names.name(2, *id));
                }
            }
            if !shown.is_empty() {
                out.push('{');
                out.push_str(&shown.join(", "));
                out.push('}');
            }
            out.push(' ');
            write_ty(result, names, out);
        }
    }
}

fn write_atom(ty: &Ty, names: &mut VarNames, out: &mut String) {
    let needs_parens = match ty {
        Ty::Con(_, args) => !args.is_empty(),
        Ty::Fun(..) => true,
        _ => false,
    };
    if needs_parens {
        out.push('(');
        write_ty(ty, names, out);
        out.push(')');
    } else {
        write_ty(ty, names, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_in_soil_syntax() {
        let list_f64 = Ty::Con("List".into(), vec![Ty::con("F64")]);
        let callback = Ty::fun(Ty::Var(7), Row::label("Panic"), Ty::con("Bool"));
        let ty = Ty::fun(
            callback,
            Row::empty(),
            Ty::fun(
                list_f64,
                Row::label("Panic"),
                Ty::Con(
                    "Option".into(),
                    vec![Ty::Tuple(vec![Ty::Var(7), Ty::Rigid("a".into())])],
                ),
            ),
        );
        assert_eq!(
            print_ty(&ty, &mut VarNames::default()),
            "(_1 ->{Panic} Bool) -> List F64 ->{Panic} Option (_1, a)"
        );
    }
}
