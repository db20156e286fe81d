//! Pattern matching: `match` arm selection, guards, and binding a value's
//! parts into frame slots. A matched value that nothing else holds gives its
//! parts away (they are moved into the slots, not cloned), so taking a tuple,
//! record, variant or `[x, ..rest]` apart keeps the lists and maps inside it
//! uniquely held; see liveness.rs for when a value is dead after its match.

use std::cmp::Ordering;
use std::rc::Rc;

use soil_rt::{Value, f64_total_cmp};
use trellis_diag::TextRange;

use crate::ir::{Arm, Expr, MatchKind, NO_SLOT, Pat, Slot};
use crate::liveness::bound_slots;
use crate::machine::{Machine, Res, option_payload};

impl Machine<'_> {
    /// Evaluates a `match` scrutinee and selects the arm. A pair literal
    /// matched only by pair patterns (`match (a, b) with | (p, q) -> ...`) is
    /// never built: its two values are matched directly.
    pub(crate) fn scrutinize<'e>(
        &mut self,
        scrutinee: &Expr,
        arms: &'e [Arm],
        kind: MatchKind,
        base: usize,
        span: TextRange,
    ) -> Res<&'e Expr> {
        match (kind, scrutinee) {
            (MatchKind::Lists, Expr::Local(slot)) => {
                let at = base + *slot as usize;
                if let Value::List(list) = &self.stack[at] {
                    let len = list.len();
                    return self.select_list_arm(arms, at, len, base, span);
                }
            }
            (MatchKind::Pairs, Expr::Tuple(items)) if items.len() == 2 => {
                let a = self.operand(&items[0], base)?;
                let b = self.operand(&items[1], base)?;
                return self.select_pair_arm(arms, a, b, base, span);
            }
            _ => {}
        }
        let v = self.operand(scrutinee, base)?;
        self.select_arm(arms, v, base, span)
    }

    fn select_pair_arm<'e>(
        &mut self,
        arms: &'e [Arm],
        a: Value,
        b: Value,
        base: usize,
        span: TextRange,
    ) -> Res<&'e Expr> {
        for arm in arms {
            let Pat::Tuple(ps) = &arm.pattern else {
                if self.guard_passes(arm, base)? {
                    return Ok(&arm.body);
                }
                continue;
            };
            if arm.guard.is_none() {
                if self.fits(&ps[0], &a) && self.fits(&ps[1], &b) {
                    self.bind_owned(&ps[0], a, base);
                    self.bind_owned(&ps[1], b, base);
                    return Ok(&arm.body);
                }
                continue;
            }
            if self.matches(&ps[0], &a, base)
                && self.matches(&ps[1], &b, base)
                && self.guard_passes(arm, base)?
            {
                return Ok(&arm.body);
            }
            self.unbind(&arm.pattern, base);
        }
        let error = self.type_error("no `match` arm matched (the match is not exhaustive)");
        Err(self.locate(error, span))
    }

    /// `match` on an `Option` with the arms `Some x` and `None`
    /// ([`MatchKind::SomeOrNone`]): decided by its tag, `x` bound to the
    /// payload (moved out when nothing else holds it). `match map_get key m
    /// with` never builds the `Option`: the key is looked up and the value
    /// found bound straight away, as `unwrap_or (map_get key m) d` does.
    #[inline(always)]
    pub(crate) fn select_some_or_none<'e>(
        &mut self,
        scrutinee: &Expr,
        arms: &'e [Arm],
        [some, none]: [u8; 2],
        payload: Slot,
        base: usize,
        span: TextRange,
    ) -> Res<&'e Expr> {
        let found = match scrutinee {
            Expr::CallBuiltin { builtin, args, .. }
                if *builtin == self.map_get_builtin
                    && let [key, map] = &**args =>
            {
                self.map_get_direct(key, map, span, base)?
            }
            _ => match option_payload(self.operand(scrutinee, base)?) {
                Ok(found) => found,
                Err(other) => return self.select_arm(arms, other, base, span),
            },
        };
        let Some(value) = found else {
            return Ok(&arms[none as usize].body);
        };
        if payload == NO_SLOT {
            value.release();
        } else {
            self.set(base + payload as usize, value);
        }
        Ok(&arms[some as usize].body)
    }

    /// `match xs with | [] -> ... | [x, ..rest] -> ...` on a list local
    /// ([`MatchKind::EmptyOrCons`]: the arms `[empty, cons]`, the slots
    /// `head` and `rest` bind), decided by its length and bound in place:
    /// from the slot when the list is read again later (`x` cloned, `rest` a
    /// view), taken out of it on its last read (`x` moved out of storage
    /// nothing else holds). `None` when the local is not a list (the general
    /// path reports it).
    #[inline(always)]
    pub(crate) fn select_empty_or_cons<'e>(
        &mut self,
        scrutinee: &Expr,
        arms: &'e [Arm],
        [empty, cons]: [u8; 2],
        head: Slot,
        rest: Slot,
        base: usize,
    ) -> Option<&'e Expr> {
        let (at, moved) = match scrutinee {
            Expr::Local(slot) => (base + *slot as usize, false),
            Expr::LocalMove(slot) => (base + *slot as usize, true),
            _ => return None,
        };
        let Value::List(list) = &self.stack[at] else {
            return None;
        };
        if list.is_empty() {
            if moved {
                self.set(at, Value::Unit);
            }
            return Some(&arms[empty as usize].body);
        }
        if moved {
            let Value::List(mut list) = std::mem::replace(&mut self.stack[at], Value::Unit) else {
                return None;
            };
            if head != NO_SLOT {
                let x = list.take_at(0);
                self.set(base + head as usize, x);
            }
            if rest != NO_SLOT {
                self.set(base + rest as usize, Value::List(list.into_skip(1)));
            }
        } else {
            if head != NO_SLOT {
                let x = self.list_element(at, 0);
                self.set(base + head as usize, x);
            }
            if rest != NO_SLOT {
                let rest_list = match &self.stack[at] {
                    Value::List(list) => list.skip(1),
                    _ => soil_rt::List::empty(),
                };
                self.set(base + rest as usize, Value::List(rest_list));
            }
        }
        Some(&arms[cons as usize].body)
    }

    /// Arm selection for a list that stays in its slot (`match xs with | []
    /// -> ... | [x, ..rest] -> ...` where `xs` is read again later): the
    /// arms' elements and rests are read from the slot, never a copy of the
    /// list taken apart (the same values: a list the slot still holds is
    /// shared, so its parts would have been cloned anyway). `len` is the
    /// length of the list at `at`; the arms are [`MatchKind::Lists`] arms.
    #[inline(always)]
    fn select_list_arm<'e>(
        &mut self,
        arms: &'e [Arm],
        at: usize,
        len: usize,
        base: usize,
        span: TextRange,
    ) -> Res<&'e Expr> {
        for arm in arms {
            let Pat::List { elements, rest } = &arm.pattern else {
                continue;
            };
            let fits = match rest {
                None => len == elements.len(),
                Some(_) => len >= elements.len(),
            };
            if !fits {
                continue;
            }
            for (i, p) in elements.iter().enumerate() {
                if let Pat::Bind(slot) = p {
                    let x = self.list_element(at, i);
                    self.set(base + *slot as usize, x);
                }
            }
            if let Some(Some(slot)) = rest {
                let rest = match &self.stack[at] {
                    Value::List(list) => list.skip(elements.len()),
                    _ => soil_rt::List::empty(),
                };
                self.set(base + *slot as usize, Value::List(rest));
            }
            return Ok(&arm.body);
        }
        self.no_arm_matched(span)
    }

    /// Element `i` of the list in slot `at` (which has it), cloned.
    #[inline(always)]
    fn list_element(&self, at: usize, i: usize) -> Value {
        match &self.stack[at] {
            Value::List(list) => match list.get(i) {
                // Scalars copy without the general clone.
                Some(Value::F64(x)) => Value::F64(*x),
                Some(Value::I64(n)) => Value::I64(*n),
                Some(other) => other.clone(),
                None => Value::Unit,
            },
            _ => Value::Unit,
        }
    }

    #[cold]
    fn no_arm_matched<T>(&self, span: TextRange) -> Res<T> {
        let error = self.type_error("no `match` arm matched (the match is not exhaustive)");
        Err(self.locate(error, span))
    }

    fn guard_passes(&mut self, arm: &Arm, base: usize) -> Res<bool> {
        match &arm.guard {
            None => Ok(true),
            Some(guard) => match self.eval(guard, base)? {
                Value::Bool(b) => Ok(b),
                other => {
                    Err(self.type_error(format!("a guard needs Bool, found {}", other.kind())))
                }
            },
        }
    }

    /// The first arm whose pattern matches `v` and whose guard holds. An arm
    /// without a guard is chosen on the pattern alone and takes `v` apart by
    /// moving; an arm with one binds clones (`v` is still needed if its guard
    /// fails) and clears them again when it fails.
    pub(crate) fn select_arm<'e>(
        &mut self,
        arms: &'e [Arm],
        v: Value,
        base: usize,
        span: TextRange,
    ) -> Res<&'e Expr> {
        for arm in arms {
            if arm.guard.is_none() {
                if self.fits(&arm.pattern, &v) {
                    match (&arm.pattern, v) {
                        (Pat::List { elements, rest }, Value::List(list)) => {
                            self.bind_list(elements, rest, list, base)
                        }
                        (pattern, v) => self.bind_owned(pattern, v, base),
                    }
                    return Ok(&arm.body);
                }
                continue;
            }
            if self.matches(&arm.pattern, &v, base) && self.guard_passes(arm, base)? {
                return Ok(&arm.body);
            }
            self.unbind(&arm.pattern, base);
        }
        let error = self.type_error("no `match` arm matched (the match is not exhaustive)");
        Err(self.locate(error, span))
    }

    /// Clears the slots an arm that was not taken may have bound.
    fn unbind(&mut self, pattern: &Pat, base: usize) {
        bound_slots(pattern, &mut |slot| {
            self.set(base + slot as usize, Value::Unit);
        });
    }

    /// Whether `v` matches `pattern`, binding nothing. The commonest
    /// patterns (`[]`, `[x, ..rest]`, a tuple or constructor of variables)
    /// are decided here inline; the rest in [`Self::fits_deep`].
    #[inline(always)]
    pub(crate) fn fits(&self, pattern: &Pat, v: &Value) -> bool {
        match (pattern, v) {
            (Pat::Wild | Pat::Bind(_), _) => true,
            (Pat::List { elements, rest }, Value::List(list))
                if elements.iter().all(irrefutable) =>
            {
                match rest {
                    None => list.len() == elements.len(),
                    Some(_) => list.len() >= elements.len(),
                }
            }
            _ => self.fits_deep(pattern, v),
        }
    }

    fn fits_deep(&self, pattern: &Pat, v: &Value) -> bool {
        match (pattern, v) {
            (Pat::Wild | Pat::Bind(_), _) => true,
            (Pat::Unit, Value::Unit) => true,
            (Pat::Bool(a), Value::Bool(b)) => a == b,
            (Pat::I64(a), Value::I64(b)) => a == b,
            (Pat::U64(a), Value::U64(b)) => a == b,
            (Pat::F64(a), Value::F64(b)) => f64_total_cmp(*a, *b) == Ordering::Equal,
            (Pat::Str(a), Value::Str(b)) => **a == **b,
            (
                Pat::Variant { ty, tag, payload },
                Value::Variant {
                    ty: vt,
                    tag: vg,
                    payload: vp,
                },
            ) => {
                tag == vg
                    && ty == vt
                    && match (payload, vp) {
                        (None, _) => true,
                        (Some(p), Some(inner)) => irrefutable(p) || self.fits(p, inner),
                        (Some(_), None) => false,
                    }
            }
            (Pat::Record { fields }, Value::Record(_, values)) => {
                fields.iter().all(|(i, p)| match values.get(*i as usize) {
                    Some(field) => irrefutable(p) || self.fits(p, field),
                    None => false,
                })
            }
            (Pat::Tuple(patterns), Value::Tuple(values)) => {
                patterns.len() == values.len()
                    && patterns
                        .iter()
                        .zip(values.iter())
                        .all(|(p, x)| self.fits(p, x))
            }
            (Pat::List { elements, rest }, Value::List(list)) => {
                let fits = match rest {
                    None => list.len() == elements.len(),
                    Some(_) => list.len() >= elements.len(),
                };
                fits && elements
                    .iter()
                    .zip(list.iter())
                    .all(|(p, x)| irrefutable(p) || self.fits(p, x))
            }
            _ => false,
        }
    }

    /// Binds the parts of `v`, which [`Self::fits`] `pattern`. Parts of a
    /// tuple, record, variant or list that nothing else holds are moved out;
    /// parts of a shared one are cloned.
    pub(crate) fn bind_owned(&mut self, pattern: &Pat, v: Value, base: usize) {
        match (pattern, v) {
            (Pat::Bind(slot), v) => self.set(base + *slot as usize, v),
            (Pat::Tuple(patterns), Value::Tuple(mut values)) => match Rc::get_mut(&mut values) {
                Some(owned) => {
                    for (p, x) in patterns.iter().zip(owned.iter_mut()) {
                        if binds(p) {
                            self.bind_owned(p, std::mem::replace(x, Value::Unit), base);
                        }
                    }
                }
                None => {
                    for (p, x) in patterns.iter().zip(values.iter()) {
                        if binds(p) {
                            self.bind_owned(p, x.clone(), base);
                        }
                    }
                }
            },
            (Pat::Record { fields }, Value::Record(_, mut values)) => {
                match Rc::get_mut(&mut values) {
                    Some(owned) => {
                        for (i, p) in fields.iter() {
                            if binds(p) {
                                let x = std::mem::replace(&mut owned[*i as usize], Value::Unit);
                                self.bind_owned(p, x, base);
                            }
                        }
                    }
                    None => {
                        for (i, p) in fields.iter() {
                            if binds(p) {
                                self.bind_owned(p, values[*i as usize].clone(), base);
                            }
                        }
                    }
                }
            }
            (
                Pat::Variant {
                    payload: Some(p), ..
                },
                Value::Variant {
                    payload: Some(inner),
                    ..
                },
            ) if binds(p) => {
                let inner = Rc::try_unwrap(inner).unwrap_or_else(|shared| (*shared).clone());
                self.bind_owned(p, inner, base);
            }
            (Pat::List { elements, rest }, Value::List(list)) => {
                self.bind_list(elements, rest, list, base)
            }
            _ => {}
        }
    }

    /// [`Self::bind_owned`] for a list pattern (`[x, ..rest]` above all),
    /// inlined into arm selection: the element and the rest go straight into
    /// their slots, not through a returned temporary.
    #[inline(always)]
    fn bind_list(
        &mut self,
        elements: &[Pat],
        rest: &Option<Option<crate::ir::Slot>>,
        mut list: soil_rt::List,
        base: usize,
    ) {
        for (i, p) in elements.iter().enumerate() {
            match p {
                Pat::Bind(slot) => {
                    let x = list.take_at(i);
                    self.set(base + *slot as usize, x);
                }
                p if binds(p) => {
                    let x = list.take_at(i);
                    self.bind_owned(p, x, base);
                }
                _ => {}
            }
        }
        if let Some(Some(slot)) = rest {
            let rest = list.into_skip(elements.len());
            self.set(base + *slot as usize, Value::List(rest));
        }
    }

    /// Whether `v` matches `pattern`, binding clones of its parts as it goes
    /// (a failed match may leave some bound: see [`Self::unbind`]).
    pub(crate) fn matches(&mut self, pattern: &Pat, v: &Value, base: usize) -> bool {
        match (pattern, v) {
            (Pat::Wild, _) => true,
            (Pat::Bind(slot), _) => {
                self.set(base + *slot as usize, v.clone());
                true
            }
            (Pat::Unit, Value::Unit) => true,
            (Pat::Bool(a), Value::Bool(b)) => a == b,
            (Pat::I64(a), Value::I64(b)) => a == b,
            (Pat::U64(a), Value::U64(b)) => a == b,
            (Pat::F64(a), Value::F64(b)) => f64_total_cmp(*a, *b) == Ordering::Equal,
            (Pat::Str(a), Value::Str(b)) => **a == **b,
            (
                Pat::Variant { ty, tag, payload },
                Value::Variant {
                    ty: vt,
                    tag: vg,
                    payload: vp,
                },
            ) => {
                tag == vg
                    && ty == vt
                    && match (payload, vp) {
                        (None, _) => true,
                        (Some(p), Some(inner)) => self.matches(p, inner, base),
                        (Some(_), None) => false,
                    }
            }
            (Pat::Record { fields }, Value::Record(_, values)) => {
                fields.iter().all(|(i, p)| match values.get(*i as usize) {
                    Some(field) => self.matches(p, field, base),
                    None => false,
                })
            }
            (Pat::Tuple(patterns), Value::Tuple(values)) => {
                patterns.len() == values.len()
                    && patterns
                        .iter()
                        .zip(values.iter())
                        .all(|(p, x)| self.matches(p, x, base))
            }
            (Pat::List { elements, rest }, Value::List(list)) => {
                let fits = match rest {
                    None => list.len() == elements.len(),
                    Some(_) => list.len() >= elements.len(),
                };
                if !fits
                    || !elements
                        .iter()
                        .zip(list.iter())
                        .all(|(p, x)| self.matches(p, x, base))
                {
                    return false;
                }
                if let Some(Some(slot)) = rest {
                    self.set(
                        base + *slot as usize,
                        Value::List(list.skip(elements.len())),
                    );
                }
                true
            }
            _ => false,
        }
    }
}

/// Whether `pattern` matches every value (of its type) without looking.
#[inline(always)]
fn irrefutable(pattern: &Pat) -> bool {
    matches!(pattern, Pat::Wild | Pat::Bind(_))
}

/// Whether matching `pattern` binds any slot (a part it binds nothing from
/// is neither moved nor cloned).
fn binds(pattern: &Pat) -> bool {
    match pattern {
        Pat::Bind(_) => true,
        Pat::Variant { payload, .. } => payload.is_some(),
        Pat::Record { .. } | Pat::Tuple(_) | Pat::List { .. } => true,
        _ => false,
    }
}
