//! Pattern matching: `match` arm selection, guards, and binding a value's
//! parts into frame slots.

use std::cmp::Ordering;

use soil_rt::{Value, f64_total_cmp};
use trellis_diag::TextRange;

use crate::ir::{Arm, Expr, Pat};
use crate::machine::{Machine, Res};

impl Machine<'_> {
    /// Evaluates a `match` scrutinee and selects the arm. A pair literal
    /// matched only by pair patterns (`match (a, b) with | (p, q) -> ...`) is
    /// never built: its two values are matched directly.
    pub(crate) fn scrutinize<'e>(
        &mut self,
        scrutinee: &Expr,
        arms: &'e [Arm],
        base: usize,
        span: TextRange,
    ) -> Res<&'e Expr> {
        let pairs_only = |arm: &Arm| match &arm.pattern {
            Pat::Tuple(patterns) => patterns.len() == 2,
            Pat::Wild => true,
            _ => false,
        };
        if let Expr::Tuple(items) = scrutinee
            && let [first, second] = &items[..]
            && arms.iter().all(pairs_only)
        {
            let a = self.operand(first, base)?;
            let b = self.operand(second, base)?;
            for arm in arms {
                let fits = match &arm.pattern {
                    Pat::Tuple(ps) => {
                        self.matches(&ps[0], &a, base) && self.matches(&ps[1], &b, base)
                    }
                    _ => true,
                };
                if fits && self.guard_passes(arm, base)? {
                    return Ok(&arm.body);
                }
            }
            let error = self.type_error("no `match` arm matched (the match is not exhaustive)");
            return Err(self.locate(error, span));
        }
        let v = self.eval(scrutinee, base)?;
        self.select_arm(arms, &v, base, span)
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

    pub(crate) fn select_arm<'e>(
        &mut self,
        arms: &'e [Arm],
        v: &Value,
        base: usize,
        span: TextRange,
    ) -> Res<&'e Expr> {
        for arm in arms {
            if self.matches(&arm.pattern, v, base) && self.guard_passes(arm, base)? {
                return Ok(&arm.body);
            }
        }
        let error = self.type_error("no `match` arm matched (the match is not exhaustive)");
        Err(self.locate(error, span))
    }

    pub(crate) fn matches(&mut self, pattern: &Pat, v: &Value, base: usize) -> bool {
        match (pattern, v) {
            (Pat::Wild, _) => true,
            (Pat::Bind(slot), _) => {
                self.stack[base + *slot as usize] = v.clone();
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
                    self.stack[base + *slot as usize] = Value::List(list.skip(elements.len()));
                }
                true
            }
            _ => false,
        }
    }
}
