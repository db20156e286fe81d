//! Operators: arithmetic and comparisons with fast paths for `I64` and `F64`,
//! and conditions decided without building intermediate `Bool` values.

use std::cmp::Ordering;

use soil_rt::{Value, compare, equal, f64_total_cmp};
use trellis_diag::TextRange;

use crate::codes::EvalCode;
use crate::ir::{Expr, Op, Slot};
use crate::machine::{Machine, Res};

impl Op {
    /// `==`, `!=`, `<`, `<=`, `>`, `>=`: the operators [`Op::holds`] decides.
    pub(crate) fn is_comparison(self) -> bool {
        matches!(self, Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge)
    }

    /// Whether comparison `self` holds for operands ordered `order`.
    #[inline(always)]
    pub(crate) fn holds(self, order: Ordering) -> bool {
        match self {
            Op::Eq => order == Ordering::Equal,
            Op::Ne => order != Ordering::Equal,
            Op::Lt => order == Ordering::Less,
            Op::Le => order != Ordering::Greater,
            Op::Gt => order == Ordering::Greater,
            _ => order != Ordering::Less,
        }
    }
}

/// Integer arithmetic `x <op> y`, when it cannot fail (the general path
/// reports division by zero). Agrees with [`Machine::binary`].
#[inline(always)]
pub(crate) fn i64_arith(op: Op, x: i64, y: i64) -> Option<i64> {
    match op {
        Op::Add => Some(x.wrapping_add(y)),
        Op::Sub => Some(x.wrapping_sub(y)),
        Op::Mul => Some(x.wrapping_mul(y)),
        Op::Div if y != 0 => Some(x.wrapping_div(y)),
        Op::Rem if y != 0 => Some(x.wrapping_rem(y)),
        _ => None,
    }
}

/// `x <op> y` on integers, arithmetic or comparison, when it cannot fail.
#[inline(always)]
pub(crate) fn i64_op(op: Op, x: i64, y: i64) -> Option<Value> {
    if op.is_comparison() {
        Some(Value::Bool(op.holds(x.cmp(&y))))
    } else {
        i64_arith(op, x, y).map(Value::I64)
    }
}

/// A number operand read in place ([`Machine::peek_number`]).
#[derive(Clone, Copy)]
enum Number {
    I64(i64),
    F64(f64),
}

impl Machine<'_> {
    /// The commonest conditions (`n < 2` on an `I64` local, `x <= y` on
    /// number locals) decided without a call; `None` sends anything else to
    /// [`Self::condition`].
    #[inline(always)]
    pub(crate) fn quick_condition(&self, cond: &Expr, base: usize) -> Option<bool> {
        match cond {
            Expr::LocalOpI64 {
                op, slot, literal, ..
            } if op.is_comparison() => match &self.stack[base + *slot as usize] {
                Value::I64(x) => Some(op.holds(x.cmp(literal))),
                _ => None,
            },
            // `x <= y` on number locals and literals: read where they are,
            // neither cloned nor moved (a scalar left in a slot it was moved
            // from holds nothing anyone needs released).
            Expr::Binary { op, lhs, rhs, .. } if op.is_comparison() => {
                let order = match (self.peek_number(lhs, base)?, self.peek_number(rhs, base)?) {
                    (Number::I64(x), Number::I64(y)) => x.cmp(&y),
                    (Number::F64(x), Number::F64(y)) => f64_total_cmp(x, y),
                    _ => return None,
                };
                Some(op.holds(order))
            }
            _ => None,
        }
    }

    /// The number a local or literal operand holds, without evaluating it.
    #[inline(always)]
    fn peek_number(&self, operand: &Expr, base: usize) -> Option<Number> {
        match operand {
            Expr::Local(slot) | Expr::LocalMove(slot) => match &self.stack[base + *slot as usize] {
                Value::I64(n) => Some(Number::I64(*n)),
                Value::F64(x) => Some(Number::F64(*x)),
                _ => None,
            },
            Expr::I64(n) => Some(Number::I64(*n)),
            Expr::F64(x) => Some(Number::F64(*x)),
            _ => None,
        }
    }

    /// The value a local or constant operand holds, read where it is.
    #[inline(always)]
    fn peek_value(&self, operand: &Expr, base: usize) -> Option<&Value> {
        match operand {
            Expr::Local(slot) | Expr::LocalMove(slot) => Some(&self.stack[base + *slot as usize]),
            Expr::Const(i) => self.consts.get(*i as usize),
            _ => None,
        }
    }

    /// `==` or `!=` of two locals or constants (`w != ""`), decided on the
    /// values where they are: nothing is cloned, and a local whose read was
    /// its last is released as the move would have released it.
    #[inline(always)]
    fn peek_equality(&mut self, op: Op, lhs: &Expr, rhs: &Expr, base: usize) -> Option<bool> {
        if !matches!(op, Op::Eq | Op::Ne) {
            return None;
        }
        let same = equal(self.peek_value(lhs, base)?, self.peek_value(rhs, base)?);
        for operand in [lhs, rhs] {
            if let Expr::LocalMove(slot) = operand {
                self.set(base + *slot as usize, Value::Unit);
            }
        }
        Some(same == (op == Op::Eq))
    }

    /// A Bool-valued expression: comparisons of integers and floats, `and`,
    /// `or`, `not` decided without building intermediate values.
    pub(crate) fn condition(&mut self, expr: &Expr, base: usize) -> Res<bool> {
        match expr {
            Expr::LocalOpI64 {
                op, slot, literal, ..
            } if op.is_comparison() => {
                let order = match &self.stack[base + *slot as usize] {
                    Value::I64(x) => x.cmp(literal),
                    other => compare(other, &Value::I64(*literal)),
                };
                Ok(op.holds(order))
            }
            Expr::Binary { op, lhs, rhs, .. } if op.is_comparison() => {
                if let Some(holds) = self.peek_equality(*op, lhs, rhs, base) {
                    return Ok(holds);
                }
                let a = self.operand(lhs, base)?;
                let b = self.operand(rhs, base)?;
                let order = match (&a, &b) {
                    (Value::I64(x), Value::I64(y)) => x.cmp(y),
                    (Value::F64(x), Value::F64(y)) => f64_total_cmp(*x, *y),
                    _ if matches!(op, Op::Eq | Op::Ne) => {
                        return Ok(equal(&a, &b) == (*op == Op::Eq));
                    }
                    _ => compare(&a, &b),
                };
                Ok(op.holds(order))
            }
            Expr::And(lhs, rhs) => Ok(self.condition(lhs, base)? && self.condition(rhs, base)?),
            Expr::Or(lhs, rhs) => Ok(self.condition(lhs, base)? || self.condition(rhs, base)?),
            Expr::Not(inner) => Ok(!self.condition(inner, base)?),
            _ => {
                match self.operand(expr, base)? {
                    Value::Bool(b) => Ok(b),
                    other => Err(self
                        .type_error(format!("expected a Bool condition, found {}", other.kind()))),
                }
            }
        }
    }

    /// A binary operator; integer and float arithmetic and comparisons skip
    /// the general dispatch. Kept out of [`Self::eval`] so hot arithmetic does
    /// not pay for the large frame of the general evaluator.
    #[inline(never)]
    pub(crate) fn eval_binary(
        &mut self,
        op: Op,
        lhs: &Expr,
        rhs: &Expr,
        span: TextRange,
        base: usize,
    ) -> Res<Value> {
        if let Some(holds) = self.peek_equality(op, lhs, rhs, base) {
            return Ok(Value::Bool(holds));
        }
        let a = self.operand(lhs, base)?;
        let b = self.operand(rhs, base)?;
        let quick = match (op, &a, &b) {
            (Op::Add, Value::I64(x), Value::I64(y)) => Value::I64(x.wrapping_add(*y)),
            (Op::Sub, Value::I64(x), Value::I64(y)) => Value::I64(x.wrapping_sub(*y)),
            (Op::Mul, Value::I64(x), Value::I64(y)) => Value::I64(x.wrapping_mul(*y)),
            (Op::Lt, Value::I64(x), Value::I64(y)) => Value::Bool(x < y),
            (Op::Le, Value::I64(x), Value::I64(y)) => Value::Bool(x <= y),
            (Op::Add, Value::F64(x), Value::F64(y)) => Value::F64(x + y),
            (Op::Sub, Value::F64(x), Value::F64(y)) => Value::F64(x - y),
            (Op::Mul, Value::F64(x), Value::F64(y)) => Value::F64(x * y),
            (Op::Lt, Value::F64(x), Value::F64(y)) => Value::Bool(f64_total_cmp(*x, *y).is_lt()),
            (Op::Le, Value::F64(x), Value::F64(y)) => Value::Bool(f64_total_cmp(*x, *y).is_le()),
            (Op::Eq, Value::Str(x), Value::Str(y)) => Value::Bool(x == y),
            (Op::Ne, Value::Str(x), Value::Str(y)) => Value::Bool(x != y),
            _ => return self.binary(op, a, b).map_err(|e| self.locate(e, span)),
        };
        // Numbers and short strings are let go without the drop glue.
        a.release();
        b.release();
        Ok(quick)
    }

    /// [`Expr::LocalOpI64`] as a value. Out of line: inlined into
    /// [`Machine::operand`], its integer results would be merged with the
    /// other leaves' into one temporary copied in pieces, slowing them all.
    #[inline(never)]
    pub(crate) fn local_op(
        &mut self,
        op: Op,
        slot: Slot,
        (moved, literal_first): (bool, bool),
        literal: i64,
        span: TextRange,
        base: usize,
    ) -> Res<Value> {
        let index = base + slot as usize;
        if let Value::I64(x) = self.stack[index]
            && let Some(value) = i64_op(op, x, literal)
        {
            return Ok(value);
        }
        let a = if moved {
            std::mem::replace(&mut self.stack[index], Value::Unit)
        } else {
            self.stack[index].clone()
        };
        let (a, b) = if literal_first {
            (Value::I64(literal), a)
        } else {
            (a, Value::I64(literal))
        };
        self.binary(op, a, b).map_err(|e| self.locate(e, span))
    }

    fn binary(&self, op: Op, a: Value, b: Value) -> Res<Value> {
        use Value::{F64, I64, U64};
        if op == Op::Concat {
            return match (a, b) {
                (Value::List(x), Value::List(y)) => Ok(Value::List(x.concat(y))),
                // The left side grows in place when nothing else holds it.
                (Value::Str(x), Value::Str(y)) if x.is_empty() => Ok(Value::Str(y)),
                (Value::Str(x), Value::Str(y)) => Ok(Value::Str(x.concat(&y))),
                (a, b) => Err(self.type_error(format!(
                    "`++` does not apply to {} and {}",
                    a.kind(),
                    b.kind()
                ))),
            };
        }
        let value = match (op, &a, &b) {
            (Op::Add, I64(x), I64(y)) => I64(x.wrapping_add(*y)),
            (Op::Sub, I64(x), I64(y)) => I64(x.wrapping_sub(*y)),
            (Op::Mul, I64(x), I64(y)) => I64(x.wrapping_mul(*y)),
            (Op::Div | Op::Rem, I64(_), I64(0)) | (Op::Div | Op::Rem, U64(_), U64(0)) => {
                return Err(self.fail(EvalCode::RuntimePanic, "division by zero"));
            }
            (Op::Div, I64(x), I64(y)) => I64(x.wrapping_div(*y)),
            (Op::Rem, I64(x), I64(y)) => I64(x.wrapping_rem(*y)),
            (Op::Add, U64(x), U64(y)) => U64(x.wrapping_add(*y)),
            (Op::Sub, U64(x), U64(y)) => U64(x.wrapping_sub(*y)),
            (Op::Mul, U64(x), U64(y)) => U64(x.wrapping_mul(*y)),
            (Op::Div, U64(x), U64(y)) => U64(x / y),
            (Op::Rem, U64(x), U64(y)) => U64(x % y),
            (Op::Add, F64(x), F64(y)) => F64(x + y),
            (Op::Sub, F64(x), F64(y)) => F64(x - y),
            (Op::Mul, F64(x), F64(y)) => F64(x * y),
            (Op::Div, F64(x), F64(y)) => F64(x / y),
            (Op::Rem, F64(x), F64(y)) => F64(x % y),
            (Op::Lt, F64(x), F64(y)) => Value::Bool(f64_total_cmp(*x, *y) == Ordering::Less),
            (Op::Le, F64(x), F64(y)) => Value::Bool(f64_total_cmp(*x, *y) != Ordering::Greater),
            (Op::Lt, I64(x), I64(y)) => Value::Bool(x < y),
            (Op::Le, I64(x), I64(y)) => Value::Bool(x <= y),
            (Op::Gt, I64(x), I64(y)) => Value::Bool(x > y),
            (Op::Ge, I64(x), I64(y)) => Value::Bool(x >= y),
            (Op::Eq, I64(x), I64(y)) => Value::Bool(x == y),
            (Op::Ne, I64(x), I64(y)) => Value::Bool(x != y),
            (Op::Eq, _, _) => Value::Bool(equal(&a, &b)),
            (Op::Ne, _, _) => Value::Bool(!equal(&a, &b)),
            (Op::Lt, _, _) => Value::Bool(compare(&a, &b) == Ordering::Less),
            (Op::Le, _, _) => Value::Bool(compare(&a, &b) != Ordering::Greater),
            (Op::Gt, _, _) => Value::Bool(compare(&a, &b) == Ordering::Greater),
            (Op::Ge, _, _) => Value::Bool(compare(&a, &b) != Ordering::Less),
            _ => {
                return Err(self.type_error(format!(
                    "operator {op:?} does not apply to {} and {}",
                    a.kind(),
                    b.kind()
                )));
            }
        };
        Ok(value)
    }
}
