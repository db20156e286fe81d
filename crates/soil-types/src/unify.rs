//! The substitution and unifier: types by Hindley–Milner unification with an occurs
//! check, effect rows as sets with flexible row variables absorbing the difference.

use std::borrow::Cow;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::ty::{Row, RowVar, Scheme, Ty};

/// How many arguments a chain of applications may give a function whose type
/// it infers ([`Subst::applied_result`]): twice as many as one application or
/// a signature can have.
pub(crate) const MAX_APPLIED: u32 = 2 * soil_syntax::MAX_NESTING;

/// How many arrows of a function's spine an instantiation widens
/// ([`Subst::instantiate`]): as many as a signature can have.
const OPENED_ARROWS: u32 = soil_syntax::MAX_NESTING;

/// Why two types did not unify.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum UnifyError {
    Mismatch,
    Infinite,
    /// A row on one side carries a label the other side cannot absorb.
    Effect {
        label: String,
    },
}

/// All flexible type and row variables of one definition's check.
#[derive(Default)]
pub(crate) struct Subst {
    tys: Vec<Option<Ty>>,
    rows: Vec<Option<Row>>,
    /// Per type variable made as the result of applying an unknown function
    /// ([`Subst::applied_result`]): how many arguments the chain of
    /// applications that made it had taken. Zero for every other variable.
    applied: Vec<u32>,
    /// While a trial runs ([`Subst::trial`]): each binding it made, with the value
    /// it replaced, so the trial can be undone in time proportional to its own
    /// work rather than by copying the whole substitution.
    trail: Option<Vec<Undo>>,
}

/// One binding a trial made, and what was there before.
enum Undo {
    Ty(u32, Option<Ty>),
    Row(u32, Option<Row>),
}

impl Subst {
    pub(crate) fn fresh(&mut self) -> Ty {
        self.tys.push(None);
        self.applied.push(0);
        Ty::Var(self.tys.len() as u32 - 1)
    }

    pub(crate) fn fresh_row_var(&mut self) -> RowVar {
        self.rows.push(None);
        RowVar::Flex(self.rows.len() as u32 - 1)
    }

    pub(crate) fn fresh_row(&mut self) -> Row {
        Row::var(self.fresh_row_var())
    }

    /// A fresh variable for the result of applying the unknown function
    /// `function` (an unbound variable) to one more argument, or `None` when
    /// the chain of applications it ends would pass [`MAX_APPLIED`] arguments.
    /// Applications chained through parentheses or `let` (`let g = f a in g b`)
    /// extend one arrow type without bound; past a few hundred arrows every
    /// walk over it (unifying, resolving, generalizing, printing) risks the
    /// stack, and each use of the function copies them.
    pub(crate) fn applied_result(&mut self, function: &Ty) -> Option<Ty> {
        let taken = match function {
            Ty::Var(id) => self.applied.get(*id as usize).copied().unwrap_or(0),
            _ => 0,
        };
        if taken >= MAX_APPLIED {
            return None;
        }
        let result = self.fresh();
        if let Some(slot) = self.applied.last_mut() {
            *slot = taken + 1;
        }
        Some(result)
    }

    /// The type with every bound variable replaced, recursively.
    pub(crate) fn resolve(&self, ty: &Ty) -> Ty {
        match ty {
            Ty::Var(id) => match self.tys.get(*id as usize) {
                Some(Some(bound)) => self.resolve(bound),
                _ => ty.clone(),
            },
            Ty::Gen(_) | Ty::Rigid(_) => ty.clone(),
            Ty::Con(name, args) => Ty::Con(
                name.clone(),
                args.iter().map(|arg| self.resolve(arg)).collect(),
            ),
            Ty::Tuple(elements) => Ty::Tuple(elements.iter().map(|e| self.resolve(e)).collect()),
            Ty::Fun(param, row, result) => Ty::Fun(
                Box::new(self.resolve(param)),
                self.resolve_row(row),
                Box::new(self.resolve(result)),
            ),
        }
    }

    /// Only the outermost variable chain followed: enough to see the head.
    pub(crate) fn shallow(&self, ty: &Ty) -> Ty {
        self.head(ty).clone()
    }

    /// [`Subst::shallow`] of a type the caller owns: a type that is not a
    /// variable comes back as it is, uncopied (copying a long arrow at every
    /// argument made applying it quadratic).
    pub(crate) fn shallow_owned(&self, ty: Ty) -> Ty {
        match ty {
            Ty::Var(_) => self.shallow(&ty),
            other => other,
        }
    }

    /// The end of `ty`'s variable chain, borrowed.
    fn head<'t>(&'t self, ty: &'t Ty) -> &'t Ty {
        let mut current = ty;
        while let Ty::Var(id) = current {
            match self.tys.get(*id as usize) {
                Some(Some(bound)) => current = bound,
                _ => break,
            }
        }
        current
    }

    /// The head of `ty` without copying it unless it is a bound variable's.
    fn head_cow<'t>(&self, ty: &'t Ty) -> Cow<'t, Ty> {
        match ty {
            Ty::Var(_) => Cow::Owned(self.shallow(ty)),
            _ => Cow::Borrowed(ty),
        }
    }

    fn set_ty(&mut self, var: u32, ty: Ty) {
        if let Some(slot) = self.tys.get_mut(var as usize) {
            let old = slot.replace(ty);
            if let Some(trail) = &mut self.trail {
                trail.push(Undo::Ty(var, old));
            }
        }
    }

    fn set_row(&mut self, var: u32, row: Row) {
        if let Some(slot) = self.rows.get_mut(var as usize) {
            let old = slot.replace(row);
            if let Some(trail) = &mut self.trail {
                trail.push(Undo::Row(var, old));
            }
        }
    }

    /// Runs `attempt` on the substitution and then undoes every binding and
    /// variable it made, whatever it returned: how a diagnosis tries a
    /// unification without committing it. Not reentrant.
    pub(crate) fn trial<T>(&mut self, attempt: impl FnOnce(&mut Subst) -> T) -> T {
        let (tys, rows) = (self.tys.len(), self.rows.len());
        self.trail = Some(Vec::new());
        let result = attempt(self);
        for undo in self.trail.take().unwrap_or_default().into_iter().rev() {
            match undo {
                Undo::Ty(var, old) => self.tys[var as usize] = old,
                Undo::Row(var, old) => self.rows[var as usize] = old,
            }
        }
        self.tys.truncate(tys);
        self.applied.truncate(tys);
        self.rows.truncate(rows);
        result
    }

    /// The row flattened: bound row variables replaced by their rows.
    pub(crate) fn resolve_row(&self, row: &Row) -> Row {
        let mut out = Row {
            labels: row.labels.clone(),
            vars: Default::default(),
        };
        let mut pending: Vec<RowVar> = row.vars.iter().copied().collect();
        let mut seen = Seen::default();
        while let Some(var) = pending.pop() {
            if !seen.insert(var) {
                continue;
            }
            match var {
                RowVar::Flex(id) => match self.rows.get(id as usize) {
                    Some(Some(bound)) => {
                        out.labels.extend(bound.labels.iter().cloned());
                        pending.extend(bound.vars.iter().copied());
                    }
                    _ => {
                        out.vars.insert(var);
                    }
                },
                RowVar::Gen(_) => {
                    out.vars.insert(var);
                }
            }
        }
        out
    }

    /// [`Subst::resolve_row`], first rebinding each bound variable of `row` to
    /// its own flattened row where that still goes through other bound
    /// variables (path compression; the substitution means the same). A row
    /// unified again and again, as the rows of a local function used at every
    /// element of a long list are, otherwise gains one link of a chain of
    /// bindings per use, and flattening it at each use walks the whole chain:
    /// quadratic in the uses.
    pub(crate) fn resolve_row_compressing(&mut self, row: &Row) -> Row {
        for var in row.vars.iter().filter_map(|var| flex(*var)) {
            let Some(bound) = self.bound_row(var) else {
                continue;
            };
            let chained = bound
                .vars
                .iter()
                .any(|inner| flex(*inner).is_some_and(|id| self.bound_row(id).is_some()));
            if chained {
                let mut flat = self.resolve_row(&bound.clone());
                flat.vars.remove(&RowVar::Flex(var));
                self.set_row(var, flat);
            }
        }
        self.resolve_row(row)
    }

    pub(crate) fn bind_row(&mut self, var: u32, row: Row) {
        let mut row = self.resolve_row_compressing(&row);
        row.vars.remove(&RowVar::Flex(var));
        self.set_row(var, row);
    }

    /// The row a flexible variable is bound to, if any.
    pub(crate) fn bound_row(&self, var: u32) -> Option<&Row> {
        self.rows.get(var as usize).and_then(Option::as_ref)
    }

    pub(crate) fn unify(&mut self, a: &Ty, b: &Ty) -> Result<(), UnifyError> {
        let a = self.head_cow(a);
        let b = self.head_cow(b);
        match (&*a, &*b) {
            (Ty::Var(x), Ty::Var(y)) if x == y => Ok(()),
            (Ty::Var(x), other) | (other, Ty::Var(x)) => {
                if self.occurs(*x, other) {
                    return Err(UnifyError::Infinite);
                }
                self.set_ty(*x, other.clone());
                Ok(())
            }
            (Ty::Rigid(x), Ty::Rigid(y)) if x == y => Ok(()),
            (Ty::Gen(x), Ty::Gen(y)) if x == y => Ok(()),
            (Ty::Con(x, xs), Ty::Con(y, ys)) if x == y && xs.len() == ys.len() => {
                for (x, y) in xs.iter().zip(ys) {
                    self.unify(x, y)?;
                }
                Ok(())
            }
            (Ty::Tuple(xs), Ty::Tuple(ys)) if xs.len() == ys.len() => {
                for (x, y) in xs.iter().zip(ys) {
                    self.unify(x, y)?;
                }
                Ok(())
            }
            (Ty::Fun(p1, r1, q1), Ty::Fun(p2, r2, q2)) => {
                self.unify(p1, p2)?;
                self.unify_rows(r1, r2)?;
                self.unify(q1, q2)
            }
            _ => Err(UnifyError::Mismatch),
        }
    }

    /// Whether `var` occurs in `ty`, bound variables followed in place.
    fn occurs(&self, var: u32, ty: &Ty) -> bool {
        match self.head(ty) {
            Ty::Var(id) => *id == var,
            Ty::Gen(_) | Ty::Rigid(_) => false,
            Ty::Con(_, args) | Ty::Tuple(args) => args.iter().any(|arg| self.occurs(var, arg)),
            Ty::Fun(param, _, result) => self.occurs(var, param) || self.occurs(var, result),
        }
    }

    /// Set unification: members present on one side only must be absorbed by a
    /// flexible variable of the other side. When only one side has flexible
    /// variables, the first takes the other side's extra members and the rest
    /// become empty.
    pub(crate) fn unify_rows(&mut self, a: &Row, b: &Row) -> Result<(), UnifyError> {
        // The same row on both sides (the arrows an instantiation left
        // unopened, say) unifies as it is, without the sets built below.
        if a == b {
            return Ok(());
        }
        let a = self.resolve_row_compressing(a);
        let b = self.resolve_row_compressing(b);
        if a == b {
            return Ok(());
        }
        let only = |x: &Row, y: &Row| Row {
            labels: x.labels.difference(&y.labels).cloned().collect(),
            vars: x.vars.difference(&y.vars).copied().collect(),
        };
        let only_a = only(&a, &b);
        let only_b = only(&b, &a);
        let common: Vec<u32> = a
            .vars
            .intersection(&b.vars)
            .copied()
            .filter_map(flex)
            .collect();
        let flex_a: Vec<u32> = only_a.vars.iter().copied().filter_map(flex).collect();
        let flex_b: Vec<u32> = only_b.vars.iter().copied().filter_map(flex).collect();
        let fixed = |row: &Row, tail: Option<u32>| Row {
            labels: row.labels.clone(),
            vars: row
                .vars
                .iter()
                .copied()
                .filter(|var| Some(*var) != tail.map(RowVar::Flex))
                .collect(),
        };
        let rigid_part = |row: &Row| Row {
            labels: row.labels.clone(),
            vars: row
                .vars
                .iter()
                .copied()
                .filter(|var| matches!(var, RowVar::Gen(_)))
                .collect(),
        };
        match (flex_a.first().copied(), flex_b.first().copied()) {
            (Some(ta), Some(tb)) => {
                let shared = self.fresh_row();
                let mut for_a = fixed(&only_b, Some(tb));
                for_a.union(&shared);
                let mut for_b = fixed(&only_a, Some(ta));
                for_b.union(&shared);
                self.bind_row(ta, for_a);
                self.bind_row(tb, for_b);
                Ok(())
            }
            (Some(ta), None) => {
                self.absorb_into_common(&rigid_part(&only_a), &common)?;
                for extra in &flex_a[1..] {
                    self.bind_row(*extra, Row::empty());
                }
                self.bind_row(ta, only_b);
                Ok(())
            }
            (None, Some(tb)) => {
                self.absorb_into_common(&rigid_part(&only_b), &common)?;
                for extra in &flex_b[1..] {
                    self.bind_row(*extra, Row::empty());
                }
                self.bind_row(tb, only_a);
                Ok(())
            }
            (None, None) => {
                let mut extra = only_a;
                extra.union(&only_b);
                self.absorb_into_common(&extra, &common)
            }
        }
    }

    /// Members present on one side only, with no tail on the other side to take
    /// them, can still be covered by a variable both sides share.
    fn absorb_into_common(&mut self, extra: &Row, common: &[u32]) -> Result<(), UnifyError> {
        if extra.labels.is_empty() && extra.vars.is_empty() {
            return Ok(());
        }
        match common.first() {
            Some(&shared) => {
                let mut row = extra.clone();
                row.union(&self.fresh_row());
                self.bind_row(shared, row);
                Ok(())
            }
            None => Err(UnifyError::Effect {
                label: extra
                    .labels
                    .iter()
                    .next()
                    .cloned()
                    .unwrap_or_else(|| "an effect variable".to_owned()),
            }),
        }
    }

    /// A fresh copy of the scheme's type. Every arrow on the result spine gets a
    /// fresh row variable added: a function with row r may be used wherever a row
    /// containing r is expected (subsumption). Parameter positions are untouched,
    /// which keeps the widening sound.
    pub(crate) fn instantiate(&mut self, scheme: &Scheme) -> Ty {
        let mut tys = FxHashMap::default();
        let mut rows = FxHashMap::default();
        let ty = self.copy_generic(&scheme.ty, &mut tys, &mut rows);
        self.open_spine(ty, OPENED_ARROWS)
    }

    /// Opens the first `arrows` arrows of the spine (see [`Subst::instantiate`]).
    /// Each use of a function copies what it opens, so the opening stops at
    /// [`OPENED_ARROWS`]: no signature has more arrows (types nest at most as
    /// deep, soil-syntax-spec §7.3), while a local applied in a chain of
    /// applications can have thousands, and copying them all at every use made
    /// a body of such uses quadratic. Arrows past it keep their own rows.
    fn open_spine(&mut self, ty: Ty, arrows: u32) -> Ty {
        if arrows == 0 {
            return ty;
        }
        let head = match &ty {
            Ty::Var(_) if matches!(self.head(&ty), Ty::Fun(..)) => self.shallow(&ty),
            _ => ty,
        };
        match head {
            Ty::Fun(param, mut row, result) => {
                row.vars.insert(self.fresh_row_var());
                let result = self.open_spine(*result, arrows - 1);
                Ty::Fun(param, row, Box::new(result))
            }
            other => other,
        }
    }

    fn copy_generic(
        &mut self,
        ty: &Ty,
        tys: &mut FxHashMap<u32, Ty>,
        rows: &mut FxHashMap<u32, RowVar>,
    ) -> Ty {
        match ty {
            Ty::Gen(id) => tys.entry(*id).or_insert_with(|| self.fresh()).clone(),
            Ty::Var(_) | Ty::Rigid(_) => ty.clone(),
            Ty::Con(name, args) => Ty::Con(
                name.clone(),
                args.iter()
                    .map(|arg| self.copy_generic(arg, tys, rows))
                    .collect(),
            ),
            Ty::Tuple(elements) => Ty::Tuple(
                elements
                    .iter()
                    .map(|e| self.copy_generic(e, tys, rows))
                    .collect(),
            ),
            Ty::Fun(param, row, result) => {
                let param = self.copy_generic(param, tys, rows);
                let mut fresh_row = Row {
                    labels: row.labels.clone(),
                    vars: Default::default(),
                };
                for var in &row.vars {
                    match var {
                        RowVar::Gen(id) => {
                            let var = *rows.entry(*id).or_insert_with(|| self.fresh_row_var());
                            fresh_row.vars.insert(var);
                        }
                        RowVar::Flex(_) => {
                            fresh_row.vars.insert(*var);
                        }
                    }
                }
                let result = self.copy_generic(result, tys, rows);
                Ty::Fun(Box::new(param), fresh_row, Box::new(result))
            }
        }
    }

    /// Free flexible type and row variables of a resolved type.
    pub(crate) fn free_vars(&self, ty: &Ty, tys: &mut Vec<u32>, rows: &mut Vec<u32>) {
        collect_free(&self.resolve(ty), tys, rows);
    }

    pub(crate) fn free_row_vars(&self, row: &Row, rows: &mut Vec<u32>) {
        for var in self.resolve_row(row).flex_vars() {
            if !rows.contains(&var) {
                rows.push(var);
            }
        }
    }
}

/// The row variables one flattening has expanded. A flattening usually meets a
/// handful, so a short list searched in place serves until it grows; past that a
/// hash set keeps each test O(1), so a row built up through thousands of bound
/// variables flattens in time linear in them (a list alone made it quadratic,
/// and checking a long application cubic: issue 41).
#[derive(Default)]
struct Seen {
    few: Vec<RowVar>,
    many: FxHashSet<RowVar>,
}

impl Seen {
    const FEW: usize = 16;

    /// Whether `var` is new (and now recorded).
    fn insert(&mut self, var: RowVar) -> bool {
        if self.many.is_empty() {
            if self.few.contains(&var) {
                return false;
            }
            if self.few.len() < Self::FEW {
                self.few.push(var);
                return true;
            }
            self.many.extend(self.few.drain(..));
        }
        self.many.insert(var)
    }
}

fn flex(var: RowVar) -> Option<u32> {
    match var {
        RowVar::Flex(id) => Some(id),
        RowVar::Gen(_) => None,
    }
}

fn collect_free(ty: &Ty, tys: &mut Vec<u32>, rows: &mut Vec<u32>) {
    match ty {
        Ty::Var(id) => {
            if !tys.contains(id) {
                tys.push(*id);
            }
        }
        Ty::Gen(_) | Ty::Rigid(_) => {}
        Ty::Con(_, args) | Ty::Tuple(args) => {
            for arg in args {
                collect_free(arg, tys, rows);
            }
        }
        Ty::Fun(param, row, result) => {
            collect_free(param, tys, rows);
            for var in row.flex_vars() {
                if !rows.contains(&var) {
                    rows.push(var);
                }
            }
            collect_free(result, tys, rows);
        }
    }
}

/// Replaces the chosen flexible variables of a resolved type by `Gen` variables.
pub(crate) fn generalize(ty: &Ty, tys: &[u32], rows: &[u32]) -> Scheme {
    fn go(ty: &Ty, tys: &[u32], rows: &[u32]) -> Ty {
        match ty {
            Ty::Var(id) if tys.contains(id) => Ty::Gen(*id),
            Ty::Var(_) | Ty::Gen(_) | Ty::Rigid(_) => ty.clone(),
            Ty::Con(name, args) => Ty::Con(
                name.clone(),
                args.iter().map(|a| go(a, tys, rows)).collect(),
            ),
            Ty::Tuple(elements) => Ty::Tuple(elements.iter().map(|e| go(e, tys, rows)).collect()),
            Ty::Fun(param, row, result) => {
                let row = Row {
                    labels: row.labels.clone(),
                    vars: row
                        .vars
                        .iter()
                        .map(|var| match var {
                            RowVar::Flex(id) if rows.contains(id) => RowVar::Gen(*id),
                            other => *other,
                        })
                        .collect(),
                };
                Ty::Fun(
                    Box::new(go(param, tys, rows)),
                    row,
                    Box::new(go(result, tys, rows)),
                )
            }
        }
    }
    Scheme {
        ty: go(ty, tys, rows),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_rows_absorb_labels_and_closed_rows_refuse_them() {
        let mut subst = Subst::default();
        let open = {
            let mut row = Row::label("Panic");
            row.union(&subst.fresh_row());
            row
        };
        let mut closed = Row::label("Panic");
        closed.labels.insert("Fs".into());
        subst.unify_rows(&open, &closed).expect("tail absorbs Fs");
        assert_eq!(subst.resolve_row(&open), closed);
        let pure = Row::empty();
        assert_eq!(
            subst.unify_rows(&closed, &pure),
            Err(UnifyError::Effect { label: "Fs".into() })
        );
    }

    #[test]
    fn occurs_check_reports_infinite_types() {
        let mut subst = Subst::default();
        let var = subst.fresh();
        let list = Ty::Con("List".into(), vec![var.clone()]);
        assert_eq!(subst.unify(&var, &list), Err(UnifyError::Infinite));
    }
}
