//! Expressions (spec §5) by precedence climbing over the table of spec §8, and the
//! predicate-only operators of spec §11.

use crate::ast::{
    BinOp, Expr, ExprKind, FieldInit, Ident, LetBinder, LetExpr, Literal, MatchArm, UnaryOp,
};
use crate::codes::SyntaxCode;
use crate::lexer::{TokenKind, decode_string};

use super::{NameSet, PResult, Parser};

/// Precedence levels of spec §8, lowest first.
pub(crate) mod level {
    pub const LOWEST: u8 = 0;
    pub const IMPLIES: u8 = 1;
    pub const OR: u8 = 2;
    pub const AND: u8 = 3;
    pub const NOT: u8 = 4;
    pub const COMPARE: u8 = 5;
    pub const CONCAT: u8 = 6;
    pub const ADD: u8 = 7;
    pub const MUL: u8 = 8;
    pub const NEG: u8 = 9;
    pub const APP: u8 = 10;
    pub const POSTFIX: u8 = 11;
    pub const ATOM: u8 = 12;
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Assoc {
    Left,
    Right,
    Non,
}

/// The infix operators: what a token means, its level and associativity.
fn infix(kind: TokenKind) -> Option<(Option<BinOp>, u8, Assoc)> {
    use TokenKind::*;
    Some(match kind {
        Implies => (None, level::IMPLIES, Assoc::Right),
        Or => (Some(BinOp::Or), level::OR, Assoc::Left),
        And => (Some(BinOp::And), level::AND, Assoc::Left),
        EqEq => (Some(BinOp::Eq), level::COMPARE, Assoc::Non),
        NotEq => (Some(BinOp::Ne), level::COMPARE, Assoc::Non),
        Lt => (Some(BinOp::Lt), level::COMPARE, Assoc::Non),
        Le => (Some(BinOp::Le), level::COMPARE, Assoc::Non),
        Gt => (Some(BinOp::Gt), level::COMPARE, Assoc::Non),
        Ge => (Some(BinOp::Ge), level::COMPARE, Assoc::Non),
        Is => (None, level::COMPARE, Assoc::Non),
        PlusPlus => (Some(BinOp::Concat), level::CONCAT, Assoc::Right),
        Plus => (Some(BinOp::Add), level::ADD, Assoc::Left),
        Minus => (Some(BinOp::Sub), level::ADD, Assoc::Left),
        Star => (Some(BinOp::Mul), level::MUL, Assoc::Left),
        Slash => (Some(BinOp::Div), level::MUL, Assoc::Left),
        Percent => (Some(BinOp::Rem), level::MUL, Assoc::Left),
        _ => return None,
    })
}

impl Parser<'_> {
    pub(super) fn expr(&mut self) -> PResult<Expr> {
        self.expr_at(level::LOWEST)
    }

    /// An expression whose infix operators all bind at `min_level` or tighter.
    fn expr_at(&mut self, min_level: u8) -> PResult<Expr> {
        self.enter()?;
        let start = self.start();
        let entered = self.nesting;
        let mut lhs = self.prefix()?;
        while let Some((op, op_level, assoc)) = infix(self.peek()) {
            if op_level < min_level {
                break;
            }
            let op_token = self.current();
            if op.is_none() && !self.predicate_mode {
                return Err(self.error(
                    SyntaxCode::PredicateOnlyOperator,
                    op_token.range(),
                    format!(
                        "`{}` is only allowed in predicates (requires, ensures, invariant and property bodies)",
                        self.text_of(op_token)
                    ),
                ));
            }
            self.bump();
            // Each fold deepens the tree by one, like a recursive call.
            self.enter()?;
            let kind = match (op, op_token.kind) {
                (None, TokenKind::Is) => {
                    let pattern = self.pattern()?;
                    ExprKind::Is {
                        expr: Box::new(lhs),
                        pattern: Box::new(pattern),
                    }
                }
                (None, _) => {
                    let rhs = self.expr_at(op_level)?;
                    ExprKind::Implies {
                        lhs: Box::new(lhs),
                        rhs: Box::new(rhs),
                    }
                }
                (Some(op), _) => {
                    let rhs_level = if assoc == Assoc::Right {
                        op_level
                    } else {
                        op_level + 1
                    };
                    let rhs = self.expr_at(rhs_level)?;
                    ExprKind::Binary {
                        op,
                        lhs: Box::new(lhs),
                        rhs: Box::new(rhs),
                    }
                }
            };
            lhs = Expr {
                kind,
                span: self.span_from(start),
            };
            if assoc == Assoc::Non
                && let Some((_, next_level, _)) = infix(self.peek())
                && next_level == op_level
            {
                let next = self.current();
                return Err(self.error(
                    SyntaxCode::NonAssociativeOperator,
                    next.range(),
                    format!(
                        "comparisons do not chain: parenthesise `{}` or join the tests with `and`",
                        self.text_of(next)
                    ),
                ));
            }
        }
        self.nesting = entered - 1;
        Ok(lhs)
    }

    /// Prefix operators and the open-ended forms (`let`, `if`, `match`, `\`), then
    /// application.
    fn prefix(&mut self) -> PResult<Expr> {
        let start = self.start();
        match self.peek() {
            TokenKind::Not => {
                self.bump();
                let operand = self.expr_at(level::COMPARE)?;
                Ok(Expr {
                    kind: ExprKind::Unary {
                        op: UnaryOp::Not,
                        operand: Box::new(operand),
                    },
                    span: self.span_from(start),
                })
            }
            TokenKind::Minus => {
                let folds_into_literal =
                    matches!(self.peek_at(1), TokenKind::Int | TokenKind::Float)
                        && self.peek_at(2) != TokenKind::Dot;
                self.bump();
                if folds_into_literal {
                    let literal = self.literal_token(true, start)?;
                    return Ok(Expr {
                        kind: ExprKind::Literal(literal),
                        span: self.span_from(start),
                    });
                }
                let operand = self.app()?;
                Ok(Expr {
                    kind: ExprKind::Unary {
                        op: UnaryOp::Neg,
                        operand: Box::new(operand),
                    },
                    span: self.span_from(start),
                })
            }
            TokenKind::Let => self.let_expr(),
            TokenKind::If => self.if_expr(),
            TokenKind::Match => self.match_expr(),
            TokenKind::Backslash => self.lambda(),
            _ => self.app(),
        }
    }

    /// Whether the next token can start an application argument.
    fn at_atom_start(&self) -> bool {
        use TokenKind::*;
        match self.peek() {
            Upper | Int | UInt | Float | Str | Hole | True | False | LParen | LBracket | LBrace => {
                true
            }
            Lower => !self.at_item_start(0),
            _ => false,
        }
    }

    /// `f x y`: a postfix expression applied to postfix arguments.
    fn app(&mut self) -> PResult<Expr> {
        let start = self.start();
        let func = self.postfix()?;
        if !self.at_atom_start() {
            return Ok(func);
        }
        // `f a b` is `(f a) b`: each argument counts one level, as each fold
        // of a left-associative operator does, so no application's type is
        // more than MAX_NESTING arrows long (the checker walks such types).
        let entered = self.nesting;
        let mut args = Vec::new();
        while self.at_atom_start() {
            self.enter_counting("arguments in one application")?;
            args.push(self.postfix()?);
        }
        // A tree lives as long as its file's parse and every equation taken
        // from it: a list grown by pushing keeps up to three spare 80-byte
        // slots, a tenth of the Soil trees at 20,000 definitions.
        args.shrink_to_fit();
        self.nesting = entered;
        Ok(Expr {
            kind: ExprKind::App {
                func: Box::new(func),
                args,
            },
            span: self.span_from(start),
        })
    }

    /// An atom followed by `.field` accesses.
    fn postfix(&mut self) -> PResult<Expr> {
        let start = self.start();
        let entered = self.nesting;
        let mut expr = self.atom()?;
        while self.eat(TokenKind::Dot).is_some() {
            self.enter()?;
            let field = self.expect(TokenKind::Lower, "naming a field after `.`")?;
            let field = self.ident(field);
            expr = Expr {
                kind: ExprKind::Field {
                    record: Box::new(expr),
                    field,
                },
                span: self.span_from(start),
            };
        }
        self.nesting = entered;
        Ok(expr)
    }

    fn atom(&mut self) -> PResult<Expr> {
        use TokenKind::*;
        let start = self.start();
        let kind = match self.peek() {
            Int | UInt | Float | Str | True | False => {
                ExprKind::Literal(self.literal_token(false, start)?)
            }
            Lower if self.at_item_start(0) => {
                return Err(
                    self.unexpected("an expression (this looks like the start of the next item)")
                );
            }
            Lower if self.peek_at(1) == ColonColon => {
                let module = self.bump();
                let module = self.ident(module);
                self.bump();
                let name = self.expect(Lower, "after `::`")?;
                ExprKind::Qualified {
                    module,
                    name: self.ident(name),
                }
            }
            Lower => {
                let token = self.bump();
                ExprKind::Var(self.ident(token))
            }
            Upper if self.at_record_literal() => {
                let name = self.bump();
                let name = self.ident(name);
                let fields = self.braced_fields()?;
                ExprKind::Record { name, fields }
            }
            Upper => {
                let token = self.bump();
                ExprKind::Constructor(self.ident(token))
            }
            Hole => {
                let token = self.bump();
                let name = Ident {
                    text: self.text_of(token)[1..].to_owned(),
                    span: trellis_diag::TextRange::new(token.start + 1, token.end),
                };
                ExprKind::Hole(name)
            }
            LParen => return self.paren(),
            LBracket => {
                let open = self.open_bracket();
                let mut elements = Vec::new();
                if !self.at(RBracket) {
                    loop {
                        elements.push(self.expr()?);
                        if self.eat(Comma).is_none() {
                            break;
                        }
                    }
                }
                self.close_bracket(open, RBracket)?;
                elements.shrink_to_fit();
                ExprKind::List(elements)
            }
            LBrace => {
                let open = self.open_bracket();
                let record = self.expr()?;
                self.expect(
                    With,
                    "after the record in a functional update `{ r with field = e }`",
                )?;
                let fields = self.field_inits()?;
                self.close_bracket(open, RBrace)?;
                ExprKind::Update {
                    record: Box::new(record),
                    fields,
                }
            }
            Let | If | Match | Backslash => return self.prefix(),
            _ => return Err(self.unexpected("an expression")),
        };
        Ok(Expr {
            kind,
            span: self.span_from(start),
        })
    }

    /// `Upper {` begins a record literal when the brace holds field inits (`}`, or a
    /// name followed by `=`, `,` or `}`); otherwise the brace is a functional update
    /// passed as an argument.
    fn at_record_literal(&self) -> bool {
        use TokenKind::*;
        self.peek_at(1) == LBrace
            && (self.peek_at(2) == RBrace
                || (self.peek_at(2) == Lower && matches!(self.peek_at(3), Equals | Comma | RBrace)))
    }

    /// `( )`, `(e)`, `(e : T)`, `(a, b, ...)`.
    fn paren(&mut self) -> PResult<Expr> {
        let start = self.start();
        let open = self.open_bracket();
        if self.at(TokenKind::RParen) {
            self.close_bracket(open, TokenKind::RParen)?;
            return Ok(Expr {
                kind: ExprKind::Literal(Literal::Unit),
                span: self.span_from(start),
            });
        }
        let first = self.expr()?;
        let kind = match self.peek() {
            TokenKind::Colon => {
                self.bump();
                let ty = self.ty()?;
                ExprKind::Annot {
                    expr: Box::new(first),
                    ty,
                }
            }
            TokenKind::Comma => {
                let mut elements = vec![first];
                while self.eat(TokenKind::Comma).is_some() {
                    elements.push(self.expr()?);
                }
                elements.shrink_to_fit();
                ExprKind::Tuple(elements)
            }
            _ => first.kind,
        };
        self.close_bracket(open, TokenKind::RParen)?;
        Ok(Expr {
            kind,
            span: self.span_from(start),
        })
    }

    /// `{ field = e, pun, ... }` after a record name.
    fn braced_fields(&mut self) -> PResult<Vec<FieldInit>> {
        let open = self.open_bracket();
        let fields = if self.at(TokenKind::RBrace) {
            Vec::new()
        } else {
            self.field_inits()?
        };
        self.close_bracket(open, TokenKind::RBrace)?;
        Ok(fields)
    }

    /// One or more `field = e` or `field` separated by commas.
    fn field_inits(&mut self) -> PResult<Vec<FieldInit>> {
        let mut fields = Vec::new();
        let mut names = NameSet::default();
        loop {
            let start = self.start();
            let name = self.expect(TokenKind::Lower, "naming a field")?;
            let repeated = !names.insert(self.text_of(name));
            let name = self.ident(name);
            self.check_new_field(repeated, &name)?;
            let value = if self.eat(TokenKind::Equals).is_some() {
                Some(self.expr()?)
            } else {
                None
            };
            fields.push(FieldInit {
                name,
                value,
                span: self.span_from(start),
            });
            if self.eat(TokenKind::Comma).is_none() {
                fields.shrink_to_fit();
                return Ok(fields);
            }
        }
    }

    /// A literal token; `negative` when a `-` at `start` folds into it.
    pub(super) fn literal_token(&mut self, negative: bool, start: u32) -> PResult<Literal> {
        let token = self.bump();
        let text = self.text_of(token);
        let range = self.span_from(start);
        let well_formed_digits = |digits: &str| digits.bytes().all(|b| b.is_ascii_digit());
        match token.kind {
            TokenKind::Int => {
                // A malformed number was already reported by the lexer.
                if !well_formed_digits(text) {
                    return Ok(Literal::Int(0));
                }
                let magnitude = text.parse::<u64>().ok();
                let value = match (magnitude, negative) {
                    (Some(m), false) => i64::try_from(m).ok(),
                    (Some(m), true) if m <= 1 << 63 => Some((m as i64).wrapping_neg()),
                    _ => None,
                };
                match value {
                    Some(value) => Ok(Literal::Int(value)),
                    None => Err(self.error(
                        SyntaxCode::InvalidNumber,
                        range,
                        "integer literal out of range for I64 (use a `u` suffix for U64)",
                    )),
                }
            }
            TokenKind::UInt => {
                let digits = &text[..text.len() - 1];
                if !well_formed_digits(digits) {
                    return Ok(Literal::UInt(0));
                }
                match digits.parse::<u64>() {
                    Ok(value) => Ok(Literal::UInt(value)),
                    Err(_) => Err(self.error(
                        SyntaxCode::InvalidNumber,
                        range,
                        "integer literal out of range for U64",
                    )),
                }
            }
            TokenKind::Float => match text.parse::<f64>() {
                Ok(value) if value.is_finite() => {
                    let value = if negative { -value } else { value };
                    Ok(Literal::Float(value.to_bits()))
                }
                Ok(_) => Err(self.error(
                    SyntaxCode::InvalidNumber,
                    range,
                    "float literal overflows F64 (use the prelude's `infinity`)",
                )),
                Err(_) => Ok(Literal::Float(0f64.to_bits())),
            },
            TokenKind::Str => Ok(Literal::Str(decode_string(text))),
            TokenKind::True => Ok(Literal::Bool(true)),
            TokenKind::False => Ok(Literal::Bool(false)),
            _ => Err(self.error(
                SyntaxCode::UnexpectedToken,
                token.range(),
                "expected a literal",
            )),
        }
    }

    fn let_expr(&mut self) -> PResult<Expr> {
        let start = self.start();
        self.bump();
        let binder = if self.at(TokenKind::Lower) && self.peek_at(1) == TokenKind::Equals {
            let token = self.bump();
            LetBinder::Var(self.ident(token))
        } else if self.at(TokenKind::Lower)
            && self.item_start[self.pos]
            && self.peek_at(1) != TokenKind::Colon
        {
            let token = self.bump();
            let name = self.ident(token);
            let params = self.params()?;
            LetBinder::Function { name, params }
        } else {
            LetBinder::Pattern(self.pattern()?)
        };
        self.expect(TokenKind::Equals, "after the `let` binder")?;
        let value = self.expr()?;
        self.expect(TokenKind::In, "after the `let` value")?;
        let body = self.expr()?;
        Ok(Expr {
            kind: ExprKind::Let(Box::new(LetExpr {
                binder,
                value,
                body,
            })),
            span: self.span_from(start),
        })
    }

    fn if_expr(&mut self) -> PResult<Expr> {
        let start = self.start();
        self.bump();
        let cond = self.expr()?;
        self.expect(TokenKind::Then, "after the `if` condition")?;
        let then_branch = self.expr()?;
        self.expect(TokenKind::Else, "(every `if` has an `else`)")?;
        let else_branch = self.expr()?;
        Ok(Expr {
            kind: ExprKind::If {
                cond: Box::new(cond),
                then_branch: Box::new(then_branch),
                else_branch: Box::new(else_branch),
            },
            span: self.span_from(start),
        })
    }

    fn match_expr(&mut self) -> PResult<Expr> {
        let start = self.start();
        self.bump();
        let scrutinee = self.expr()?;
        self.expect(TokenKind::With, "after the `match` scrutinee")?;
        self.eat(TokenKind::Pipe);
        let mut arms = Vec::new();
        loop {
            let arm_start = self.start();
            let pattern = self.pattern()?;
            let guard = if self.eat(TokenKind::If).is_some() {
                Some(self.expr()?)
            } else {
                None
            };
            self.expect(TokenKind::Arrow, "after the arm's pattern")?;
            let body = self.expr()?;
            arms.push(MatchArm {
                pattern,
                guard,
                body,
                span: self.span_from(arm_start),
            });
            if self.eat(TokenKind::Pipe).is_some() {
                continue;
            }
            if self.eat(TokenKind::End).is_some() {
                break;
            }
            let range = self.current().range();
            return Err(self.error(
                SyntaxCode::MissingEnd,
                range,
                "expected `|` starting another arm or `end` closing the `match`",
            ));
        }
        arms.shrink_to_fit();
        Ok(Expr {
            kind: ExprKind::Match {
                scrutinee: Box::new(scrutinee),
                arms,
            },
            span: self.span_from(start),
        })
    }

    fn lambda(&mut self) -> PResult<Expr> {
        let start = self.start();
        self.bump();
        let params = self.params()?;
        if params.is_empty() {
            return Err(self.unexpected("a parameter name or `_` after `\\`"));
        }
        self.expect(TokenKind::Arrow, "after the lambda's parameters")?;
        let body = self.expr()?;
        Ok(Expr {
            kind: ExprKind::Lambda {
                params,
                body: Box::new(body),
            },
            span: self.span_from(start),
        })
    }
}
