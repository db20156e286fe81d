//! The evaluator: walks the resolved IR over one value stack of slot frames,
//! with tail calls replacing the current frame, a nested-call limit and a
//! stack budget so deep recursion ends in a structured panic.

use std::any::Any;
use std::rc::Rc;

use soil_rt::prelude as ids;
use soil_rt::{Function, Key, List, MapValue, Value, equal, map_for_update};
use trellis_diag::TextRange;

use crate::builtins::{BUILTINS, BuiltinId};
use crate::codes::EvalCode;
use crate::ir::{
    ClauseIr, Code, CodeId, Const, DefId, Expr, Handoff, MatchKind, Op, Prefetch, Slot,
};
use crate::operators::i64_arith;
use crate::panic::{RuntimePanic, collapse_chain};
use crate::program::Program;
use crate::world::World;

pub(crate) type Res<T> = Result<T, Box<RuntimePanic>>;

/// What a function value is. Opaque to `soil-rt`, which only stores it.
pub(crate) enum Callable {
    Closure {
        code: CodeId,
        captures: Box<[Value]>,
    },
    Global(DefId),
    Builtin(BuiltinId),
    /// A constructor with a positional payload, used as a function.
    Constructor {
        ty: u32,
        tag: u32,
    },
    Partial {
        func: Value,
        args: Box<[Value]>,
    },
}

impl Function for Callable {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn describe(&self) -> String {
        match self {
            Callable::Closure { .. } => "closure".into(),
            Callable::Global(_) => "definition".into(),
            Callable::Builtin(b) => BUILTINS[*b as usize].name.into(),
            Callable::Constructor { .. } => "constructor".into(),
            Callable::Partial { .. } => "partial application".into(),
        }
    }
}

/// A function value resolved once by [`Machine::prepare`]: a closure that
/// takes exactly the arguments it will be given is entered without
/// inspecting the value again on every call.
pub(crate) struct Prepared<'f> {
    f: &'f Value,
    closure: Option<(CodeId, &'f [Value])>,
    /// The closure's frame is exactly its arguments: nothing to set up.
    bare: bool,
    /// The body of a bare closure that is one plain expression.
    leaf: Option<&'f Expr>,
    /// A bare lambda of one parameter whose body compares it, or its
    /// length, with a constant (`\w -> w != ""`, `\n -> n > 0`, `\w ->
    /// str_len w > 0`): decided on the argument where it lies
    /// ([`Machine::test`]).
    comparison: Option<Comparison>,
}

/// What a predicate lambda's body compares its parameter (slot 0) with.
#[derive(Clone, Copy)]
pub(crate) enum Comparison {
    /// `==` (`equal`) or `!=` with one of the program's constants, by index,
    /// either way round.
    Constant { equal: bool, constant: u32 },
    /// `parameter <op> literal` of an `I64`, `op` a comparison.
    I64 { op: Op, literal: i64 },
    /// `str_len parameter <op> literal` (`text`) or `len parameter <op>
    /// literal`: the length compared, counted where the value lies.
    Length { text: bool, op: Op, literal: i64 },
}

impl Prepared<'_> {
    pub(crate) fn comparison(&self) -> Option<Comparison> {
        self.comparison
    }
}

impl Comparison {
    /// The comparison `body` is, if it is one of the above.
    fn of(body: &Expr) -> Option<Comparison> {
        match body {
            Expr::LocalOpI64 {
                op,
                slot: 0,
                literal,
                literal_first: false,
                ..
            } if op.is_comparison() => Some(Comparison::I64 {
                op: *op,
                literal: *literal,
            }),
            Expr::Binary { op, lhs, rhs, .. }
                if op.is_comparison()
                    && let (Expr::CallBuiltin { builtin, args, .. }, Expr::I64(literal)) =
                        (&**lhs, &**rhs)
                    && let [Expr::Local(0) | Expr::LocalMove(0)] = &args[..] =>
            {
                let text = match BUILTINS[*builtin as usize].name {
                    "str_len" => true,
                    "len" => false,
                    _ => return None,
                };
                Some(Comparison::Length {
                    text,
                    op: *op,
                    literal: *literal,
                })
            }
            Expr::Binary { op, lhs, rhs, .. } => {
                let equal = match op {
                    Op::Eq => true,
                    Op::Ne => false,
                    _ => return None,
                };
                let parameter = |expr: &Expr| matches!(expr, Expr::Local(0) | Expr::LocalMove(0));
                match (&**lhs, &**rhs) {
                    (side, Expr::Const(constant)) | (Expr::Const(constant), side)
                        if parameter(side) =>
                    {
                        Some(Comparison::Constant {
                            equal,
                            constant: *constant,
                        })
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// The payload of an `Option` (`Ok(None)` for `None`), moved out when
/// nothing else holds it; `Err` hands back a value that is no `Option`.
#[inline(always)]
pub(crate) fn option_payload(value: Value) -> Result<Option<Value>, Value> {
    match value {
        Value::Variant {
            ty: ids::OPTION,
            tag: ids::SOME,
            payload: Some(inner),
        } => Ok(Some(
            Rc::try_unwrap(inner).unwrap_or_else(|shared| (*shared).clone()),
        )),
        Value::Variant {
            ty: ids::OPTION,
            tag: ids::NONE,
            payload: None,
        } => Ok(None),
        other => Err(other),
    }
}

/// The value `key` maps to in `entries`, cloned out; the key is given back
/// without the general drop when it holds no count (the counting loops'
/// one lookup, shared by `map_get` and `map_has`; the fused `unwrap_or (map_get k m) d`
/// keeps its own, which measured faster as written there).
#[inline(always)]
fn look_up(entries: &MapValue, key: Value) -> Option<Value> {
    let key = Key(key);
    let found = entries.get(&key).map(quick_clone);
    key.0.release();
    found
}

/// A clone of `value`, numbers without the general clone.
#[inline(always)]
fn quick_clone(value: &Value) -> Value {
    match value {
        Value::I64(n) => Value::I64(*n),
        Value::F64(x) => Value::F64(*x),
        other => other.clone(),
    }
}

pub(crate) fn func_value(callable: Callable) -> Value {
    Value::Func(Rc::new(callable))
}

pub(crate) struct Machine<'a> {
    pub(crate) program: &'a Program,
    pub(crate) world: &'a mut World,
    pub(crate) stack: Vec<Value>,
    pub(crate) consts: Vec<Value>,
    /// Per code, its closure value once built, if it captures nothing.
    closures: Vec<Option<Value>>,
    /// The codes being evaluated, innermost last (tail calls replace the top).
    chain: Vec<CodeId>,
    max_depth: u32,
    /// The `push` builtin, evaluated inline (the accumulator of most loops).
    push_builtin: BuiltinId,
    /// The map lookup and update of a counting loop, evaluated straight from
    /// their argument expressions ([`Self::eval_builtin`]).
    map_get_or_builtin: BuiltinId,
    map_insert_builtin: BuiltinId,
    /// `map_get`, looked up without its `Option` when a `match` takes it
    /// apart at once ([`MatchKind::SomeOrNone`]).
    pub(crate) map_get_builtin: BuiltinId,
    /// `map_has`, which looks its key up as `map_get` does.
    map_has_builtin: BuiltinId,
    /// Evaluation stops when the native stack pointer goes below this address.
    stack_floor: usize,
}

/// The address of a local: where the native stack currently is.
#[inline(always)]
fn stack_position() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

impl<'a> Machine<'a> {
    pub(crate) fn new(program: &'a Program, world: &'a mut World) -> Machine<'a> {
        let consts = program
            .consts
            .iter()
            .map(|c| match c {
                Const::Str(s) => Value::str(s),
            })
            .collect();
        Machine {
            program,
            world,
            stack: Vec::with_capacity(1024),
            consts,
            closures: vec![None; program.codes.len()],
            chain: Vec::new(),
            max_depth: program.max_depth,
            push_builtin: crate::builtins::lookup("push").unwrap_or(BuiltinId::MAX),
            map_get_or_builtin: crate::builtins::fused_map_get_or(),
            map_insert_builtin: crate::builtins::lookup("map_insert").unwrap_or(BuiltinId::MAX),
            map_get_builtin: crate::builtins::lookup("map_get").unwrap_or(BuiltinId::MAX),
            map_has_builtin: crate::builtins::lookup("map_has").unwrap_or(BuiltinId::MAX),
            stack_floor: stack_position().saturating_sub(crate::program::stack_budget()),
        }
    }

    // ----- errors -------------------------------------------------------

    /// A panic carrying the current chain of definitions.
    pub(crate) fn fail(&self, code: EvalCode, message: impl Into<String>) -> Box<RuntimePanic> {
        let mut panic = RuntimePanic::new(code, message);
        let program = self.program;
        panic.chain = collapse_chain(
            self.chain
                .iter()
                .map(|c| program.codes[*c as usize].name.as_str()),
        );
        panic
    }

    pub(crate) fn type_error(&self, message: impl Into<String>) -> Box<RuntimePanic> {
        self.fail(EvalCode::RuntimeTypeError, message)
    }

    /// Gives a panic without a location the span of the expression being
    /// evaluated in the current code.
    pub(crate) fn locate(
        &self,
        mut panic: Box<RuntimePanic>,
        span: TextRange,
    ) -> Box<RuntimePanic> {
        if panic.span.is_none() {
            panic.span = Some(span);
            panic.file = self
                .chain
                .last()
                .and_then(|c| self.program.code_file(*c))
                .map(str::to_owned);
        }
        panic
    }

    /// [`Self::locate`] for a span in the file of code `code`.
    fn locate_in(
        &self,
        mut panic: Box<RuntimePanic>,
        span: TextRange,
        code: CodeId,
    ) -> Box<RuntimePanic> {
        if panic.span.is_none() {
            panic.span = Some(span);
            panic.file = self.program.code_file(code).map(str::to_owned);
        }
        panic
    }

    // ----- calls ----------------------------------------------------------

    #[inline]
    fn enter(&mut self, code: CodeId) -> Res<()> {
        if self.chain.len() >= self.max_depth as usize {
            return Err(self.fail(
                EvalCode::DepthLimit,
                format!(
                    "recursion depth limit of {} nested calls exceeded",
                    self.max_depth
                ),
            ));
        }
        if stack_position() < self.stack_floor {
            return Err(self.fail(EvalCode::DepthLimit, "evaluation stack budget exhausted"));
        }
        self.chain.push(code);
        Ok(())
    }

    /// Runs `code` on the frame at `base` whose arguments are already pushed.
    fn invoke(
        &mut self,
        code_id: CodeId,
        base: usize,
        closure: Option<(&[Value], &Value)>,
    ) -> Res<Value> {
        let program = self.program;
        self.setup_frame(&program.codes[code_id as usize], base, closure);
        self.run_frame(code_id, base)
    }

    /// Runs `code_id` on its frame at `base` (arguments and captures in
    /// place): enters the chain, evaluates the body, drops the frame.
    /// Inlined into its callers so a call costs one native frame.
    #[inline(always)]
    fn run_frame(&mut self, code_id: CodeId, base: usize) -> Res<Value> {
        self.enter(code_id)?;
        let result = self.run(code_id, base);
        self.chain.pop();
        self.release_frame(base);
        result
    }

    /// Truncates the stack to `base`, releasing what the slots above hold.
    /// Most slots of a finished frame hold scalars or short strings or were
    /// moved out, and are forgotten here without a call to the general drop
    /// glue.
    #[inline(always)]
    fn release_frame(&mut self, base: usize) {
        while self.stack.len() > base {
            match self.stack.pop() {
                Some(value) if !value.holds_no_count() => drop(value),
                other => std::mem::forget(other),
            }
        }
    }

    #[inline]
    fn setup_frame(&mut self, code: &Code, base: usize, closure: Option<(&[Value], &Value)>) {
        let end = base + code.frame_size as usize;
        // A frame of only parameters (a small lambda) is complete already.
        if self.stack.len() != end {
            self.stack.resize_with(end, || Value::Unit);
        }
        if let Some((captures, me)) = closure {
            for (slot, value) in code.capture_slots.iter().zip(captures) {
                self.set(base + *slot as usize, value.clone());
            }
            if let Some(slot) = code.self_slot {
                self.set(base + slot as usize, me.clone());
            }
        }
    }

    /// Evaluates the body of the code on top of the chain, looping on tail
    /// calls instead of recursing (the frame is replaced in place).
    #[inline(always)]
    fn run(&mut self, mut code_id: CodeId, base: usize) -> Res<Value> {
        let program: &'a Program = self.program;
        let clauses = program.codes[code_id as usize].clauses.as_deref();
        if let Some(clauses) = clauses {
            self.check_clauses(&clauses.requires, base, EvalCode::RequiresViolated)?;
            let result = self.eval(&program.codes[code_id as usize].body, base)?;
            self.stack[base + clauses.result_slot as usize] = result.clone();
            self.check_clauses(&clauses.ensures, base, EvalCode::EnsuresViolated)?;
            return Ok(result);
        }
        let mut expr = &program.codes[code_id as usize].body;
        loop {
            match expr {
                Expr::If { .. }
                | Expr::Let { .. }
                | Expr::LetPattern { .. }
                | Expr::Match { .. }
                | Expr::Release { .. } => {
                    expr = self.step_control(expr, base)?;
                }
                Expr::CallGlobal { def, args, span } => {
                    let target = program.defs[*def as usize].code;
                    if program.codes[target as usize].clauses.is_some() {
                        return self.eval(expr, base);
                    }
                    self.push_args(args, base)?;
                    self.replace_frame(base, args.len());
                    code_id = target;
                    if let Err(e) = self.retarget(code_id) {
                        return Err(self.locate(e, *span));
                    }
                    let code = &program.codes[code_id as usize];
                    self.setup_frame(code, base, None);
                    expr = &code.body;
                }
                Expr::Call {
                    func,
                    args,
                    loop_plan,
                    span,
                } => {
                    let code = &program.codes[code_id as usize];
                    if let Some(plan) = loop_plan
                        && let Expr::Local(slot) | Expr::LocalMove(slot) = **func
                        && matches!(self.stack[base + slot as usize], Value::Func(_))
                    {
                        // A local loop (`go` calling itself last): the frame
                        // is reused where it is, the callee being this code,
                        // and the self slot keeps the closure. Unless the
                        // callee's read is a move, an argument reads the
                        // closure too, and may move it out of its slot.
                        let me = match **func {
                            Expr::Local(_) => Some(self.stack[base + slot as usize].clone()),
                            _ => None,
                        };
                        self.loop_args(args, plan, base, slot)?;
                        if let Some(me) = me {
                            self.set(base + slot as usize, me);
                        }
                        // The same code on the same frame: the chain and the
                        // native stack are as they were, nothing to check.
                        expr = &code.body;
                        continue;
                    }
                    let f = self.operand(func, base)?;
                    let tail_target = match &f {
                        Value::Func(callable) => match callable.as_any().downcast_ref::<Callable>()
                        {
                            Some(Callable::Closure { code, .. })
                                if program.codes[*code as usize].arity as usize == args.len()
                                    && program.codes[*code as usize].clauses.is_none() =>
                            {
                                Some(*code)
                            }
                            _ => None,
                        },
                        _ => None,
                    };
                    let Some(target) = tail_target else {
                        let top = self.stack.len();
                        self.push_args(args, base)?;
                        let result = self.call_value(&f, top);
                        return result.map_err(|e| self.locate(e, *span));
                    };
                    self.push_args(args, base)?;
                    self.replace_frame(base, args.len());
                    code_id = target;
                    if let Err(e) = self.retarget(code_id) {
                        return Err(self.locate(e, *span));
                    }
                    let code = &program.codes[code_id as usize];
                    let captures: &[Value] = match &f {
                        Value::Func(callable) => match callable.as_any().downcast_ref::<Callable>()
                        {
                            Some(Callable::Closure { captures, .. }) => captures,
                            _ => &[],
                        },
                        _ => &[],
                    };
                    self.setup_frame(code, base, Some((captures, &f)));
                    expr = &code.body;
                }
                _ => return self.operand(expr, base),
            }
        }
    }

    /// A tail call: the current code is replaced on the chain (depth unchanged).
    fn retarget(&mut self, code: CodeId) -> Res<()> {
        if stack_position() < self.stack_floor {
            return Err(self.fail(EvalCode::DepthLimit, "evaluation stack budget exhausted"));
        }
        if let Some(top) = self.chain.last_mut() {
            *top = code;
        }
        Ok(())
    }

    fn push_args(&mut self, args: &[Expr], base: usize) -> Res<()> {
        for arg in args {
            // A local is copied or moved straight from its slot to the top:
            // through `operand`'s `Result` it would be written in pieces and
            // read back whole, which stalls store forwarding on every push.
            match arg {
                Expr::LocalMove(slot) => {
                    let v = std::mem::replace(&mut self.stack[base + *slot as usize], Value::Unit);
                    self.stack.push(v);
                }
                Expr::Local(slot) => {
                    let v = self.stack[base + *slot as usize].clone();
                    self.stack.push(v);
                }
                _ => {
                    let v = self.operand(arg, base)?;
                    self.stack.push(v);
                }
            }
        }
        Ok(())
    }

    /// Moves the `n` values on top of the stack down to `base`, dropping the
    /// frame that was there.
    fn replace_frame(&mut self, base: usize, n: usize) {
        let top = self.stack.len() - n;
        self.stack.drain(base..top);
    }

    /// The arguments of a local loop's call to itself become the parameters
    /// of its frame at `base`, each as `plan` says (see [`Handoff`]); its
    /// other slots but `self_slot` are cleared (what they held is released
    /// now, as when the frame is rebuilt). Inlined into the tail loop: it is
    /// the whole of a loop step's call.
    #[inline(always)]
    fn loop_args(
        &mut self,
        args: &[Expr],
        plan: &[Handoff],
        base: usize,
        self_slot: Slot,
    ) -> Res<()> {
        let top = self.stack.len();
        for (i, (arg, handoff)) in args.iter().zip(plan).enumerate() {
            match handoff {
                Handoff::Stays => {}
                Handoff::Direct => match arg {
                    // `rest` into `xs`: a slot-to-slot move.
                    Expr::LocalMove(from) => {
                        let v =
                            std::mem::replace(&mut self.stack[base + *from as usize], Value::Unit);
                        self.set(base + i, v);
                    }
                    _ => self.store_operand(arg, base, base + i)?,
                },
                Handoff::Appends => self.append_in_place(arg, base, base + i)?,
                Handoff::Advances(skip) => match &mut self.stack[base + i] {
                    Value::List(list) => list.advance(*skip as usize),
                    _ => self.store_operand(arg, base, base + i)?,
                },
                Handoff::Deferred => {
                    let v = self.operand(arg, base)?;
                    self.stack.push(v);
                }
            }
        }
        if self.stack.len() > top {
            for (i, handoff) in plan.iter().enumerate().rev() {
                if *handoff == Handoff::Deferred
                    && let Some(v) = self.stack.pop()
                {
                    self.set(base + i, v);
                }
            }
        }
        // Liveness has mostly emptied them already (last reads move, dead
        // locals are released): only what still holds a count is dropped.
        // A planned loop captures nothing: its self slot follows the
        // parameters, its locals follow that.
        if let Some(locals) = self.stack.get_mut(base + self_slot as usize + 1..top) {
            for slot in locals {
                if !slot.holds_no_count() {
                    *slot = Value::Unit;
                }
            }
        }
        Ok(())
    }

    /// [`Handoff::Appends`]: `arg` is `push xs x` with `xs` the list in slot
    /// `at` (moved there): `x` is pushed onto it in the slot (a local `x`
    /// moved straight from its slot).
    #[inline(always)]
    fn append_in_place(&mut self, arg: &Expr, base: usize, at: usize) -> Res<()> {
        let Expr::CallBuiltin {
            args: push_args,
            span,
            ..
        } = arg
        else {
            return self.store_operand(arg, base, at);
        };
        let x = match &push_args[1] {
            Expr::LocalMove(slot) => {
                std::mem::replace(&mut self.stack[base + *slot as usize], Value::Unit)
            }
            item => self.operand(item, base)?,
        };
        if let Value::List(list) = &mut self.stack[at] {
            list.push_mut(x);
            return Ok(());
        }
        self.push_onto_non_list(at, x, *span)
    }

    /// [`Self::append_in_place`] on a slot that holds no list: the builtin
    /// reports it.
    #[cold]
    #[inline(never)]
    fn push_onto_non_list(&mut self, at: usize, x: Value, span: TextRange) -> Res<()> {
        let new_base = self.stack.len();
        let xs = self.take(at, 0);
        self.stack.push(xs);
        self.stack.push(x);
        let pushed = self
            .call_builtin(self.push_builtin, new_base)
            .map_err(|e| self.locate(e, span))?;
        self.set(at, pushed);
        Ok(())
    }

    fn check_clauses(&mut self, clauses: &[ClauseIr], base: usize, code: EvalCode) -> Res<()> {
        for clause in clauses {
            // The clause is on the chain while it runs (a panic inside it names
            // it), and off it when its verdict is reported.
            self.enter(clause.code)?;
            let verdict = self.eval(&clause.expr, base);
            self.chain.pop();
            let name = &self.program.codes[clause.code as usize].name;
            match verdict? {
                Value::Bool(true) => {}
                Value::Bool(false) => {
                    let error = self.fail(code, format!("{name} does not hold"));
                    return Err(self.locate_in(error, clause.span, clause.code));
                }
                other => {
                    return Err(
                        self.type_error(format!("{name} produced {}, not a Bool", other.kind()))
                    );
                }
            }
        }
        Ok(())
    }

    /// Calls a function value on the arguments at `stack[base..]`; leaves the
    /// stack truncated to `base`.
    pub(crate) fn call_value(&mut self, f: &Value, base: usize) -> Res<Value> {
        let nargs = self.stack.len() - base;
        let callable = match f {
            Value::Func(callable) => callable.as_any().downcast_ref::<Callable>(),
            _ => None,
        };
        let Some(callable) = callable else {
            self.stack.truncate(base);
            return Err(self.type_error(format!("applied a {}, which is not a function", f.kind())));
        };
        let program = self.program;
        let arity = match callable {
            Callable::Closure { code, .. } => program.codes[*code as usize].arity as usize,
            Callable::Global(def) => {
                program.codes[program.defs[*def as usize].code as usize].arity as usize
            }
            Callable::Builtin(b) => BUILTINS[*b as usize].arity as usize,
            Callable::Constructor { .. } => 1,
            Callable::Partial { func, args } => {
                let saved: Vec<Value> = args.to_vec();
                self.stack.splice(base..base, saved);
                return self.call_value(func, base);
            }
        };
        if nargs < arity {
            let args: Box<[Value]> = self.stack.drain(base..).collect();
            return Ok(func_value(Callable::Partial {
                func: f.clone(),
                args,
            }));
        }
        let extra: Vec<Value> = if nargs > arity {
            self.stack.drain(base + arity..).collect()
        } else {
            Vec::new()
        };
        let result = match callable {
            Callable::Closure { code, captures } => self.invoke(*code, base, Some((captures, f))),
            Callable::Global(def) => self.invoke(program.defs[*def as usize].code, base, None),
            Callable::Builtin(b) => self.call_builtin(*b, base),
            Callable::Constructor { ty, tag } => {
                let payload = self.take(base, 0);
                self.stack.truncate(base);
                Ok(Value::variant(*ty, *tag, Some(payload)))
            }
            Callable::Partial { .. } => Err(self.type_error("nested partial application")),
        }?;
        if extra.is_empty() {
            return Ok(result);
        }
        let base = self.stack.len();
        self.stack.extend(extra);
        self.call_value(&result, base)
    }

    fn call_builtin(&mut self, builtin: BuiltinId, base: usize) -> Res<Value> {
        let result = (BUILTINS[builtin as usize].run)(self, base);
        self.release_frame(base);
        result
    }

    /// Resolves `f` once for a builtin that calls it with `nargs` arguments
    /// on every element (`map`, `filter`, `fold`, ...).
    pub(crate) fn prepare<'f>(&self, f: &'f Value, nargs: usize) -> Prepared<'f>
    where
        'a: 'f,
    {
        let closure = match f {
            Value::Func(callable) => match callable.as_any().downcast_ref::<Callable>() {
                Some(Callable::Closure { code, captures })
                    if self.program.codes[*code as usize].arity as usize == nargs =>
                {
                    Some((*code, &captures[..]))
                }
                _ => None,
            },
            _ => None,
        };
        // A lambda whose frame is just its parameters (nothing captured, no
        // self, no locals, no clauses) runs on the arguments as pushed; if
        // its body is one expression with no control flow and no call in
        // tail position (`w != ""`, `map_insert w (...) acc`), that
        // expression is evaluated without the tail-call loop of `run`.
        let program: &'a Program = self.program;
        let bare = closure.is_some_and(|(code, _)| {
            let code = &program.codes[code as usize];
            code.frame_size as usize == nargs
                && code.capture_slots.is_empty()
                && code.self_slot.is_none()
                && code.clauses.is_none()
        });
        let leaf = match closure {
            Some((code, _)) if bare => {
                let body = &program.codes[code as usize].body;
                (!matches!(
                    body,
                    Expr::If { .. }
                        | Expr::Let { .. }
                        | Expr::LetPattern { .. }
                        | Expr::Match { .. }
                        | Expr::Release { .. }
                        | Expr::CallGlobal { .. }
                        | Expr::Call { .. }
                ))
                .then_some(body)
            }
            _ => None,
        };
        let comparison = leaf.filter(|_| nargs == 1).and_then(Comparison::of);
        Prepared {
            f,
            closure,
            bare,
            leaf,
            comparison,
        }
    }

    /// Calls `f` on the arguments at `stack[base..]`, as [`Self::call_value`]
    /// does, entering a prepared closure directly.
    #[inline]
    pub(crate) fn call_prepared(&mut self, f: &Prepared<'_>, base: usize) -> Res<Value> {
        match f.closure {
            Some((code, _)) if let Some(body) = f.leaf => {
                self.enter(code)?;
                let result = self.operand(body, base);
                self.chain.pop();
                self.release_frame(base);
                result
            }
            Some((code, _)) if f.bare => self.run_frame(code, base),
            Some((code, captures)) => self.invoke(code, base, Some((captures, f.f))),
            None => self.call_value(f.f, base),
        }
    }

    /// [`Self::call_prepared`] on the one argument `arg`, moved in.
    #[inline]
    pub(crate) fn apply_prepared(&mut self, f: &Prepared<'_>, arg: Value) -> Res<Value> {
        let base = self.stack.len();
        self.stack.push(arg);
        self.call_prepared(f, base)
    }

    /// Whether `comparison` holds of `value`; `None` when it cannot be told
    /// here (a value of another kind, which the call then reports).
    pub(crate) fn decide(&self, comparison: Comparison, value: &Value) -> Option<bool> {
        match comparison {
            Comparison::Constant {
                equal: wanted,
                constant,
            } => Some(equal(value, self.consts.get(constant as usize)?) == wanted),
            Comparison::I64 { op, literal } => match value {
                Value::I64(n) => Some(op.holds(n.cmp(&literal))),
                _ => None,
            },
            Comparison::Length { text, op, literal } => {
                let length = match value {
                    Value::Str(s) if text => s.as_str().chars().count(),
                    Value::List(xs) if !text => xs.len(),
                    _ => return None,
                };
                Some(op.holds((length as i64).cmp(&literal)))
            }
        }
    }

    /// Applies a function value to `args` (used by higher-order builtins).
    pub(crate) fn apply(&mut self, f: &Value, args: &[Value]) -> Res<Value> {
        let base = self.stack.len();
        self.stack.extend_from_slice(args);
        self.call_value(f, base)
    }

    /// Calls definition `def` with `args` from outside the program.
    pub(crate) fn call_def(&mut self, def: DefId, args: Vec<Value>) -> Res<Value> {
        let base = self.stack.len();
        self.stack.extend(args);
        let code = self.program.defs[def as usize].code;
        self.invoke(code, base, None)
    }

    /// Stores `value` in stack slot `at` (see [`Value::store`]).
    #[inline(always)]
    pub(crate) fn set(&mut self, at: usize, value: Value) {
        Value::store(&mut self.stack[at], value);
    }

    /// Takes argument `i` of a builtin whose arguments start at `base`.
    pub(crate) fn take(&mut self, base: usize, i: usize) -> Value {
        std::mem::replace(&mut self.stack[base + i], Value::Unit)
    }

    // ----- expressions --------------------------------------------------

    /// A saturated call of a definition (the commonest call). Argument
    /// evaluation and the callee's body loop are inlined here, so a recursive
    /// definition costs one native frame per call plus its body's operators.
    #[inline(never)]
    fn call_global(
        &mut self,
        def: DefId,
        args: &[Expr],
        span: TextRange,
        base: usize,
    ) -> Res<Value> {
        let code = self.program.defs[def as usize].code;
        // The callee's frame is allocated first and the arguments evaluated
        // straight into it (calls inside them build their frames above it).
        // The filler is an `I64` so `store_operand` writes integers in place.
        let new_base = self.stack.len();
        let frame_size = self.program.codes[code as usize].frame_size as usize;
        self.stack
            .resize_with(new_base + frame_size.max(args.len()), || Value::I64(0));
        for (i, arg) in args.iter().enumerate() {
            self.store_operand(arg, base, new_base + i)?;
        }
        self.run_frame(code, new_base)
            .map_err(|e| self.locate(e, span))
    }

    /// Evaluates an argument into stack slot `at`. Integer leaves are
    /// written in place: a `Value` moved through a `Result` temporary is
    /// copied in pieces, and reading those back stalls store forwarding.
    #[inline(always)]
    fn store_operand(&mut self, arg: &Expr, base: usize, at: usize) -> Res<()> {
        let quick = match arg {
            Expr::I64(n) => Some(*n),
            Expr::Local(slot) | Expr::LocalMove(slot) => match self.stack[base + *slot as usize] {
                Value::I64(n) => Some(n),
                _ => None,
            },
            Expr::LocalOpI64 {
                op, slot, literal, ..
            } => match self.stack[base + *slot as usize] {
                Value::I64(x) => i64_arith(*op, x, *literal),
                _ => None,
            },
            _ => None,
        };
        match quick {
            Some(n) => {
                // The slot holds the frame's `I64` filler: only the payload is
                // written (an assignment would build the value in a temporary).
                match &mut self.stack[at] {
                    Value::I64(slot) => *slot = n,
                    other => *other = Value::I64(n),
                }
                Ok(())
            }
            None => self.store_general(arg, base, at),
        }
    }

    /// [`Self::store_operand`] for any argument; kept apart so the integer
    /// path is not merged into this one's copy through a temporary.
    #[inline(never)]
    fn store_general(&mut self, arg: &Expr, base: usize, at: usize) -> Res<()> {
        let value = self.operand(arg, base)?;
        self.set(at, value);
        Ok(())
    }

    /// [`Self::eval`] with the leaves (locals, literals) handled inline: most
    /// operands and arguments are leaves, and a recursive call per leaf would
    /// dominate small functions.
    #[inline(always)]
    pub(crate) fn operand(&mut self, expr: &Expr, base: usize) -> Res<Value> {
        match expr {
            Expr::Local(slot) => Ok(match &self.stack[base + *slot as usize] {
                // Scalars copy without the general clone.
                Value::I64(n) => Value::I64(*n),
                Value::F64(x) => Value::F64(*x),
                other => other.clone(),
            }),
            Expr::LocalMove(slot) => Ok(std::mem::replace(
                &mut self.stack[base + *slot as usize],
                Value::Unit,
            )),
            Expr::I64(n) => Ok(Value::I64(*n)),
            Expr::F64(x) => Ok(Value::F64(*x)),
            Expr::Const(i) => Ok(self.consts[*i as usize].clone()),
            Expr::LocalOpI64 {
                op,
                slot,
                moved,
                literal,
                literal_first,
                span,
            } => self.local_op(*op, *slot, (*moved, *literal_first), *literal, *span, base),
            Expr::Binary { op, lhs, rhs, span } => self.eval_binary(*op, lhs, rhs, *span, base),
            Expr::CallGlobal { def, args, span } => self.call_global(*def, args, *span, base),
            Expr::CallBuiltin {
                builtin,
                args,
                span,
            } if *builtin == self.push_builtin && args.len() == 2 => {
                self.eval_push(&args[0], &args[1], *span, base)
            }
            Expr::CallBuiltin {
                builtin,
                args,
                span,
            } => self.eval_builtin(*builtin, args, *span, base),
            _ => self.eval(expr, base),
        }
    }

    /// A saturated builtin call, out of the large frame of [`Self::eval`]
    /// (a builtin call per step is the common loop body: a lookup, an insert).
    #[inline(never)]
    fn eval_builtin(
        &mut self,
        builtin: BuiltinId,
        args: &[Expr],
        span: TextRange,
        base: usize,
    ) -> Res<Value> {
        if let [key, map, default] = args
            && builtin == self.map_get_or_builtin
        {
            return self.eval_map_get_or(key, map, default, span, base);
        }
        if let [key, value, map] = args
            && builtin == self.map_insert_builtin
        {
            return self.eval_map_insert(key, value, map, span, base);
        }
        if let [key, map] = args
            && builtin == self.map_has_builtin
        {
            return Ok(Value::Bool(
                self.map_get_direct(key, map, span, base)?.is_some(),
            ));
        }
        self.eval_builtin_on_stack(builtin, args, span, base)
    }

    /// [`Self::eval_builtin`] for every other builtin: the arguments pushed,
    /// the builtin called on them. Apart, so the dispatch above stays small
    /// enough to hand its result straight through.
    #[inline(never)]
    fn eval_builtin_on_stack(
        &mut self,
        builtin: BuiltinId,
        args: &[Expr],
        span: TextRange,
        base: usize,
    ) -> Res<Value> {
        let new_base = self.stack.len();
        self.push_args(args, base)?;
        self.call_builtin(builtin, new_base)
            .map_err(|e| self.locate(e, span))
    }

    /// `unwrap_or (map_get key map) default` (the fused builtin) without the
    /// trip through the stack: the arguments are evaluated in order, as for
    /// any call, and the value found is cloned out of the map.
    #[inline(never)]
    fn eval_map_get_or(
        &mut self,
        key: &Expr,
        map: &Expr,
        default: &Expr,
        span: TextRange,
        base: usize,
    ) -> Res<Value> {
        let key = self.operand(key, base)?;
        // A map in a local, with a default that reads no local (a literal or
        // a constant), is looked into where it is: no count taken and given
        // back.
        if let (Expr::Local(slot), Expr::I64(_) | Expr::F64(_) | Expr::Const(_) | Expr::Unit) =
            (map, default)
            && let Value::Map(entries) = &self.stack[base + *slot as usize]
        {
            let key = Key(key);
            let found = entries.get(&key).map(quick_clone);
            key.0.release();
            return match found {
                Some(value) => Ok(value),
                None => self.operand(default, base),
            };
        }
        let map = self.operand(map, base)?;
        let default = self.operand(default, base)?;
        if let Value::Map(entries) = &map {
            let key = Key(key);
            let found = match entries.get(&key) {
                Some(value) => {
                    default.release();
                    value.clone()
                }
                None => default,
            };
            key.0.release();
            drop(map);
            return Ok(found);
        }
        self.call_builtin_on(self.map_get_or_builtin, [key, map, default], span)
    }

    /// `map_get key map` straight from its argument expressions, evaluated
    /// in order, without the `Option`: the value `key` maps to, cloned out of
    /// the map. A map in a local is looked into where it is, no count taken
    /// and given back. A `map` that is no map goes to the builtin, which
    /// reports it.
    #[inline(never)]
    pub(crate) fn map_get_direct(
        &mut self,
        key: &Expr,
        map: &Expr,
        span: TextRange,
        base: usize,
    ) -> Res<Option<Value>> {
        let key = self.operand(key, base)?;
        if let Expr::Local(slot) = map
            && let Value::Map(entries) = &self.stack[base + *slot as usize]
        {
            return Ok(look_up(entries, key));
        }
        let map = self.operand(map, base)?;
        let Value::Map(entries) = &map else {
            let reported = self.call_builtin_on(self.map_get_builtin, [key, map], span)?;
            return Ok(option_payload(reported).ok().flatten());
        };
        let found = look_up(entries, key);
        drop(map);
        Ok(found)
    }

    /// `map_insert key value map` without the trip through the stack: a map
    /// moved out of its last read is updated in place, as the builtin does.
    #[inline(never)]
    fn eval_map_insert(
        &mut self,
        key: &Expr,
        value: &Expr,
        map: &Expr,
        span: TextRange,
        base: usize,
    ) -> Res<Value> {
        let key = self.operand(key, base)?;
        let value = self.operand(value, base)?;
        match self.operand(map, base)? {
            Value::Map(mut entries) => {
                if let Some(old) = map_for_update(&mut entries).insert(Key(key), value) {
                    old.release();
                }
                Ok(Value::Map(entries))
            }
            other => self.call_builtin_on(self.map_insert_builtin, [key, value, other], span),
        }
    }

    /// Calls `builtin` on `args` already evaluated (the general path of the
    /// builtins evaluated inline, which reports what does not fit).
    #[cold]
    pub(crate) fn call_builtin_on<const N: usize>(
        &mut self,
        builtin: BuiltinId,
        args: [Value; N],
        span: TextRange,
    ) -> Res<Value> {
        let new_base = self.stack.len();
        self.stack.extend(args);
        self.call_builtin(builtin, new_base)
            .map_err(|e| self.locate(e, span))
    }

    /// `push xs x` without a trip through the stack, the builtin table or
    /// the large frame of [`Self::eval`] (the accumulator of most loops).
    #[inline(never)]
    fn eval_push(&mut self, list: &Expr, item: &Expr, span: TextRange, base: usize) -> Res<Value> {
        let xs = self.operand(list, base)?;
        let x = self.operand(item, base)?;
        if let Value::List(xs) = xs {
            return Ok(Value::List(xs.push(x)));
        }
        let new_base = self.stack.len();
        self.stack.push(xs);
        self.stack.push(x);
        self.call_builtin(self.push_builtin, new_base)
            .map_err(|e| self.locate(e, span))
    }

    pub(crate) fn eval(&mut self, expr: &Expr, base: usize) -> Res<Value> {
        let program: &'a Program = self.program;
        match expr {
            Expr::Unit => Ok(Value::Unit),
            Expr::Bool(b) => Ok(Value::Bool(*b)),
            Expr::I64(n) => Ok(Value::I64(*n)),
            Expr::U64(n) => Ok(Value::U64(*n)),
            Expr::F64(x) => Ok(Value::F64(*x)),
            Expr::Const(i) => Ok(self.consts[*i as usize].clone()),
            Expr::Local(slot) => Ok(self.stack[base + *slot as usize].clone()),
            Expr::LocalMove(slot) => Ok(std::mem::replace(
                &mut self.stack[base + *slot as usize],
                Value::Unit,
            )),
            Expr::RestOf { slot, skip, moved } => {
                let at = base + *slot as usize;
                let skip = *skip as usize;
                if *moved {
                    match std::mem::replace(&mut self.stack[at], Value::Unit) {
                        Value::List(list) => Ok(Value::List(list.into_skip(skip))),
                        other => Err(self.type_error(format!("the rest of a {}", other.kind()))),
                    }
                } else {
                    match &self.stack[at] {
                        Value::List(list) => Ok(Value::List(list.skip(skip))),
                        other => Err(self.type_error(format!("the rest of a {}", other.kind()))),
                    }
                }
            }
            Expr::Global(def) => {
                let code = program.defs[*def as usize].code;
                if program.codes[code as usize].arity == 0 {
                    let base = self.stack.len();
                    self.invoke(code, base, None)
                } else {
                    Ok(func_value(Callable::Global(*def)))
                }
            }
            Expr::Builtin(b) => {
                if BUILTINS[*b as usize].arity == 0 {
                    let base = self.stack.len();
                    self.call_builtin(*b, base)
                } else {
                    Ok(func_value(Callable::Builtin(*b)))
                }
            }
            Expr::ConstructorFn { ty, tag } => {
                Ok(func_value(Callable::Constructor { ty: *ty, tag: *tag }))
            }
            Expr::CallGlobal { def, args, span } => self.call_global(*def, args, *span, base),
            Expr::CallBuiltin {
                builtin,
                args,
                span,
            } => {
                if *builtin == self.push_builtin
                    && let [list, item] = &args[..]
                {
                    return self.eval_push(list, item, *span, base);
                }
                self.eval_builtin(*builtin, args, *span, base)
            }
            Expr::Call {
                func, args, span, ..
            } => {
                let f = self.eval(func, base)?;
                let new_base = self.stack.len();
                self.push_args(args, base)?;
                self.call_value(&f, new_base)
                    .map_err(|e| self.locate(e, *span))
            }
            Expr::Closure { code, captures } if captures.is_empty() => {
                // A closure that captures nothing is the same value every
                // time it is built (`let go ... in go [] xs ys` in a merge):
                // built once per run, then shared.
                let cached = &mut self.closures[*code as usize];
                Ok(cached
                    .get_or_insert_with(|| {
                        func_value(Callable::Closure {
                            code: *code,
                            captures: Box::new([]),
                        })
                    })
                    .clone())
            }
            Expr::Closure { code, captures } => {
                let captured: Box<[Value]> = captures
                    .iter()
                    .map(|s| self.stack[base + *s as usize].clone())
                    .collect();
                Ok(func_value(Callable::Closure {
                    code: *code,
                    captures: captured,
                }))
            }
            Expr::Let { .. }
            | Expr::LetPattern { .. }
            | Expr::If { .. }
            | Expr::Match { .. }
            | Expr::Release { .. } => self.eval_control(expr, base),
            Expr::Binary { op, lhs, rhs, span } => self.eval_binary(*op, lhs, rhs, *span, base),
            Expr::LocalOpI64 { .. } => self.operand(expr, base),
            Expr::And(lhs, rhs) => match self.eval(lhs, base)? {
                Value::Bool(false) => Ok(Value::Bool(false)),
                Value::Bool(true) => self.eval(rhs, base),
                other => Err(self.type_error(format!("`and` needs Bool, found {}", other.kind()))),
            },
            Expr::Or(lhs, rhs) => match self.eval(lhs, base)? {
                Value::Bool(true) => Ok(Value::Bool(true)),
                Value::Bool(false) => self.eval(rhs, base),
                other => Err(self.type_error(format!("`or` needs Bool, found {}", other.kind()))),
            },
            Expr::Not(e) => match self.eval(e, base)? {
                Value::Bool(b) => Ok(Value::Bool(!b)),
                other => Err(self.type_error(format!("`not` needs Bool, found {}", other.kind()))),
            },
            Expr::Neg(e, span) => match self.eval(e, base)? {
                Value::I64(n) => Ok(Value::I64(n.wrapping_neg())),
                Value::F64(x) => Ok(Value::F64(-x)),
                other => {
                    let error = self.type_error(format!("cannot negate {}", other.kind()));
                    Err(self.locate(error, *span))
                }
            },
            Expr::Variant { ty, tag, payload } => {
                let payload = match payload {
                    Some(p) => Some(Rc::new(self.eval(p, base)?)),
                    None => None,
                };
                Ok(Value::Variant {
                    ty: *ty,
                    tag: *tag,
                    payload,
                })
            }
            Expr::Record { shape, fields } => {
                let values = self.eval_all(fields, base)?;
                Ok(Value::Record(*shape, Rc::from(values)))
            }
            Expr::Field {
                record,
                candidates,
                name,
                span,
            } => {
                let r = self.eval(record, base)?;
                let index = match &r {
                    Value::Record(shape, fields) => candidates
                        .iter()
                        .find(|(s, _)| s == shape)
                        .map(|(_, i)| *i as usize)
                        .filter(|i| *i < fields.len()),
                    _ => None,
                };
                match (index, r) {
                    // A record nothing else holds (its last read) gives the
                    // field away, so a list or map in it stays uniquely held.
                    (Some(i), Value::Record(_, mut fields)) => Ok(match Rc::get_mut(&mut fields) {
                        Some(fields) => std::mem::replace(&mut fields[i], Value::Unit),
                        None => fields[i].clone(),
                    }),
                    (_, r) => {
                        let error =
                            self.type_error(format!("a {} has no field `{name}`", r.kind()));
                        Err(self.locate(error, *span))
                    }
                }
            }
            Expr::Update {
                record,
                fields,
                prefetch,
                span,
            } => {
                if let Some(prefetch) = prefetch {
                    self.prefetch(prefetch, base)
                        .map_err(|e| self.locate(e, *span))?;
                }
                let r = self.eval(record, base)?;
                let Value::Record(shape, mut values) = r else {
                    let error = self.type_error(format!("cannot update fields of a {}", r.kind()));
                    return Err(self.locate(error, *span));
                };
                let mut values: Vec<Value> = match Rc::get_mut(&mut values) {
                    Some(owned) => owned
                        .iter_mut()
                        .map(|v| std::mem::replace(v, Value::Unit))
                        .collect(),
                    None => values.to_vec(),
                };
                for update in fields {
                    let v = self.eval(&update.value, base)?;
                    match update.candidates.iter().find(|(s, _)| *s == shape) {
                        Some((_, i)) if (*i as usize) < values.len() => values[*i as usize] = v,
                        _ => {
                            let error = self
                                .type_error(format!("this record has no field `{}`", update.name));
                            return Err(self.locate(error, *span));
                        }
                    }
                }
                Ok(Value::Record(shape, Rc::from(values)))
            }
            Expr::List(items) => Ok(Value::List(List::from_vec(self.eval_all(items, base)?))),
            Expr::Tuple(items) => Ok(Value::Tuple(self.build_tuple(items, base)?)),
            Expr::Is(e, pattern) => {
                let v = self.eval(e, base)?;
                Ok(Value::Bool(self.matches(pattern, &v, base)))
            }
            Expr::Hole(name, span) => {
                let error = self.fail(
                    EvalCode::UnfilledHole,
                    format!("reached the unfilled hole ?{name}"),
                );
                Err(self.locate(error, *span))
            }
        }
    }

    /// One step into `if`, `let` or `match`: evaluates the condition, binding or
    /// scrutinee and returns the expression to continue with. Shared by the tail
    /// loop of [`Self::run`] and [`Self::eval_control`], so both descend alike.
    #[inline(always)]
    fn step_control<'e>(&mut self, expr: &'e Expr, base: usize) -> Res<&'e Expr> {
        match expr {
            Expr::If {
                cond,
                then_branch,
                else_branch,
            } => {
                let holds = match self.quick_condition(cond, base) {
                    Some(holds) => holds,
                    None => self.condition(cond, base)?,
                };
                Ok(if holds { then_branch } else { else_branch })
            }
            Expr::Let { slot, value, body } => {
                let v = self.eval(value, base)?;
                self.set(base + *slot as usize, v);
                Ok(body)
            }
            Expr::LetPattern {
                pattern,
                value,
                body,
                span,
            } => {
                let v = self.eval(value, base)?;
                if !self.fits(pattern, &v) {
                    let error = self.type_error("a `let` pattern did not match");
                    return Err(self.locate(error, *span));
                }
                self.bind_owned(pattern, v, base);
                Ok(body)
            }
            Expr::Release { slots, body } => {
                for slot in slots.iter() {
                    self.set(base + *slot as usize, Value::Unit);
                }
                Ok(body)
            }
            Expr::Match {
                scrutinee,
                arms,
                kind,
                span,
            } => {
                if let MatchKind::EmptyOrCons {
                    empty,
                    cons,
                    head,
                    rest,
                } = *kind
                    && let Some(arm) =
                        self.select_empty_or_cons(scrutinee, arms, [empty, cons], head, rest, base)
                {
                    return Ok(arm);
                }
                if let MatchKind::SomeOrNone {
                    some,
                    none,
                    payload,
                } = *kind
                {
                    return self.select_some_or_none(
                        scrutinee,
                        arms,
                        [some, none],
                        payload,
                        base,
                        *span,
                    );
                }
                self.scrutinize(scrutinee, arms, *kind, base, *span)
            }
            other => Ok(other),
        }
    }

    /// `let`, `if`, `match` outside tail position.
    fn eval_control(&mut self, expr: &Expr, base: usize) -> Res<Value> {
        let mut expr = expr;
        loop {
            match expr {
                Expr::If { .. }
                | Expr::Let { .. }
                | Expr::LetPattern { .. }
                | Expr::Match { .. }
                | Expr::Release { .. } => {
                    expr = self.step_control(expr, base)?;
                }
                _ => return self.operand(expr, base),
            }
        }
    }

    /// Fetches the replaced fields an update's new values read into their
    /// slots: moved out of the record when it may be ([`Prefetch::take`]) and
    /// nothing else holds it, cloned otherwise.
    fn prefetch(&mut self, prefetch: &Prefetch, base: usize) -> Res<()> {
        for field in prefetch.fields.iter() {
            let source = &mut self.stack[base + prefetch.source as usize];
            let Value::Record(shape, values) = source else {
                // Not a record: the update itself reports it.
                return Ok(());
            };
            let shape = *shape;
            let index = field
                .candidates
                .iter()
                .find(|(s, _)| *s == shape)
                .map(|(_, i)| *i as usize)
                .filter(|i| *i < values.len());
            let Some(index) = index else {
                let name = &field.name;
                return Err(self.type_error(format!("this record has no field `{name}`")));
            };
            let value = match Rc::get_mut(values) {
                Some(owned) if prefetch.take => std::mem::replace(&mut owned[index], Value::Unit),
                _ => values[index].clone(),
            };
            self.stack[base + field.slot as usize] = value;
        }
        Ok(())
    }

    fn eval_all(&mut self, items: &[Expr], base: usize) -> Res<Vec<Value>> {
        let mut values = Vec::with_capacity(items.len());
        for item in items {
            values.push(self.operand(item, base)?);
        }
        Ok(values)
    }

    /// A tuple in one allocation for the common small sizes.
    fn build_tuple(&mut self, items: &[Expr], base: usize) -> Res<Rc<[Value]>> {
        Ok(match items {
            [a, b] => {
                let a = self.operand(a, base)?;
                let b = self.operand(b, base)?;
                Rc::new([a, b])
            }
            [a, b, c] => {
                let a = self.operand(a, base)?;
                let b = self.operand(b, base)?;
                let c = self.operand(c, base)?;
                Rc::new([a, b, c])
            }
            _ => Rc::from(self.eval_all(items, base)?),
        })
    }
}
