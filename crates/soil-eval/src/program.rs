//! The entry points: compile definitions into a [`Program`], call a
//! definition with values, or run it from JSON arguments with contract §8.6
//! injection semantics ([`Program::run_json`]).

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use soil_rt::{RtType, TypeEnv, Value, decode_args, encode, prelude as ids};
use soil_syntax::ast;
use trellis_diag::{Diagnostic, LineIndex, TextRange};

use crate::codes::EvalCode;
use crate::compile::{DefCompiler, FileRef, Globals, Output};
use crate::ir::{Code, CodeId, Const, DefId};
use crate::machine::Machine;
use crate::panic::RuntimePanic;
use crate::types::rt_type;
use crate::world::World;

/// The native stack of the evaluation thread [`with_eval_stack`] starts.
/// Virtual memory: only the pages deep recursion touches are committed.
pub const EVAL_STACK_BYTES: usize = 256 * 1024 * 1024;
/// The stack evaluation may use on a thread it did not start (a test thread
/// has 2 MiB): deep recursion there ends in `depth-limit` sooner.
const FOREIGN_STACK_BUDGET: usize = 1024 * 1024;
/// Headroom kept below the evaluation thread's stack size.
const STACK_MARGIN: usize = 16 * 1024 * 1024;

/// The default nested-call limit.
pub const DEFAULT_MAX_DEPTH: u32 = 10_000;

thread_local! {
    static ON_EVAL_STACK: Cell<bool> = const { Cell::new(false) };
}

/// Bytes of native stack one run may use on the current thread.
pub(crate) fn stack_budget() -> usize {
    if ON_EVAL_STACK.get() {
        EVAL_STACK_BYTES - STACK_MARGIN
    } else {
        FOREIGN_STACK_BUDGET
    }
}

/// Runs `f` on a thread with an [`EVAL_STACK_BYTES`] stack, so evaluation can
/// recurse to the depth limit without overflowing; a tree-walking interpreter
/// uses several native frames per Soil call. Already on such a thread (or if a
/// thread cannot be started), `f` runs here, with a smaller stack budget.
pub fn with_eval_stack<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    if ON_EVAL_STACK.get() {
        return f();
    }
    let job = Mutex::new(Some(f));
    let spawned = std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("soil-eval".into())
            .stack_size(EVAL_STACK_BYTES)
            .spawn_scoped(scope, || {
                ON_EVAL_STACK.set(true);
                let f = job.lock().ok().and_then(|mut slot| slot.take());
                f.map(|f| f())
            });
        match handle {
            Ok(handle) => match handle.join() {
                Ok(result) => result,
                Err(payload) => std::panic::resume_unwind(payload),
            },
            Err(_) => None,
        }
    });
    match spawned {
        Some(result) => result,
        None => {
            let f = job.into_inner().ok().flatten();
            match f {
                Some(f) => f(),
                // The job ran but produced nothing: impossible, as it always
                // returns `Some`; run nothing twice.
                None => std::panic::resume_unwind(Box::new("evaluation job lost")),
            }
        }
    }
}

/// One definition handed to [`Program::compile`].
#[derive(Clone, Debug)]
pub struct Definition {
    /// The definition's name (`median`, or `_helper` for a private helper).
    pub name: String,
    /// Its module (`csvstats`), making `csvstats::median` resolve.
    pub module: Option<String>,
    /// The file its spans point into (reported in panics and diagnostics).
    pub file: Option<String>,
    /// That file's text, to render spans as lines and columns.
    pub text: Option<Arc<str>>,
    /// The declared signature: parameter types for [`Program::run_json`].
    pub signature: Option<ast::Type>,
    pub equation: Arc<ast::Equation>,
    /// Guards checked on entry to every call.
    pub requires: Vec<Clause>,
    /// Guards checked on exit, with `result` bound to the return value.
    pub ensures: Vec<Clause>,
}

/// A requires/ensures predicate over the definition's parameters.
#[derive(Clone, Debug)]
pub struct Clause {
    pub label: String,
    pub predicate: ast::Expr,
    pub file: Option<String>,
    pub text: Option<Arc<str>>,
}

/// How a parameter is supplied by [`Program::run_json`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// Filled from the World: `Fs`, `Clock` or `Stdout`.
    Capability(soil_rt::TypeId),
    /// Decoded from the JSON argument array.
    Data(RtType),
}

pub(crate) struct Def {
    pub name: String,
    pub code: CodeId,
    pub arity: u32,
    pub file: Option<u32>,
    pub params: Option<Vec<ParamKind>>,
    pub holes: Vec<(String, TextRange)>,
    pub refs: Vec<DefId>,
}

/// Why a call did not produce a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// The call was refused before running (unknown definition, unfilled hole,
    /// bad arguments, undecodable JSON).
    Refused(Vec<Diagnostic>),
    /// The program ran and panicked.
    Panic(RuntimePanic),
}

/// A compiled, immutable program: `Send + Sync`, reusable for many calls.
pub struct Program {
    /// Shared: a host compiling many programs against one root's types builds
    /// them once, not once per program.
    pub(crate) types: Arc<TypeEnv>,
    pub(crate) codes: Vec<Code>,
    pub(crate) defs: Vec<Def>,
    pub(crate) consts: Vec<Const>,
    pub(crate) max_depth: u32,
    files: Vec<(String, Option<Arc<str>>)>,
    by_name: HashMap<String, DefId>,
}

impl Program {
    /// Resolves `definitions` against `types` (which includes the prelude's
    /// types). Assumes a type-checked program but never panics on one that is
    /// not: unresolvable names and malformed constructs are diagnostics.
    pub fn compile(
        types: impl Into<Arc<TypeEnv>>,
        definitions: Vec<Definition>,
    ) -> Result<Program, Vec<Diagnostic>> {
        let types = types.into();
        let mut files: Vec<(String, Option<Arc<str>>)> = Vec::new();
        let mut intern = |file: &Option<String>, text: &Option<Arc<str>>| -> FileRef {
            let name = file.as_ref()?;
            let index = match files.iter().position(|(f, _)| f == name) {
                Some(i) => {
                    if files[i].1.is_none() {
                        files[i].1 = text.clone();
                    }
                    i
                }
                None => {
                    files.push((name.clone(), text.clone()));
                    files.len() - 1
                }
            };
            Some((index as u32, name.clone(), files[index].1.clone()))
        };
        let mut errors = Vec::new();
        let mut globals = Globals::new(&types);
        let mut by_name = HashMap::new();
        for (i, def) in definitions.iter().enumerate() {
            let full = match &def.module {
                Some(module) => format!("{module}::{}", def.name),
                None => def.name.clone(),
            };
            if globals.defs.insert(full.clone(), i as DefId).is_some() {
                errors.push(Diagnostic::new(
                    EvalCode::DuplicateDefinition.code(),
                    format!("`{full}` is defined more than once"),
                ));
            }
            globals.defs.entry(def.name.clone()).or_insert(i as DefId);
            by_name.insert(full, i as DefId);
            by_name.entry(def.name.clone()).or_insert(i as DefId);
            globals.arities.push(def.equation.params.len() as u32);
        }
        let mut out = Output::default();
        let mut defs = Vec::with_capacity(definitions.len());
        for def in &definitions {
            let file = intern(&def.file, &def.text);
            let requires: Vec<_> = def
                .requires
                .iter()
                .map(|c| (c.label.clone(), &c.predicate, intern(&c.file, &c.text)))
                .collect();
            let ensures: Vec<_> = def
                .ensures
                .iter()
                .map(|c| (c.label.clone(), &c.predicate, intern(&c.file, &c.text)))
                .collect();
            let mut compiler = DefCompiler::new(
                &globals,
                &mut out,
                &def.name,
                def.module.clone(),
                file.clone(),
            );
            let code = if requires.is_empty() && ensures.is_empty() {
                compiler
                    .function(&def.name, &def.equation.params, None, &def.equation.body)
                    .0
            } else {
                compiler.definition_with_clauses(
                    &def.equation.params,
                    &def.equation.body,
                    &requires,
                    &ensures,
                )
            };
            let holes = std::mem::take(&mut compiler.holes);
            let refs = std::mem::take(&mut compiler.refs);
            let params = def
                .signature
                .as_ref()
                .map(|sig| param_kinds(&types, sig, def.equation.params.len()));
            let params = match params {
                Some(Ok(params)) => Some(params),
                Some(Err(message)) => {
                    errors.push(Diagnostic::new(
                        EvalCode::InvalidProgram.code(),
                        format!("the signature of `{}`: {message}", def.name),
                    ));
                    None
                }
                None => None,
            };
            defs.push(Def {
                name: def.name.clone(),
                code,
                arity: def.equation.params.len() as u32,
                file: file.map(|(index, _, _)| index),
                params,
                holes,
                refs,
            });
        }
        errors.append(&mut out.errors);
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Program {
            types,
            codes: out.codes,
            defs,
            consts: out.consts,
            max_depth: DEFAULT_MAX_DEPTH,
            files,
            by_name,
        })
    }

    /// This program with a different nested-call limit.
    pub fn with_max_depth(mut self, max_depth: u32) -> Program {
        self.max_depth = max_depth;
        self
    }

    pub fn types(&self) -> &TypeEnv {
        &self.types
    }

    /// How [`Self::run_json`] fills each parameter of `name`, if it has a signature.
    pub fn params(&self, name: &str) -> Option<&[ParamKind]> {
        let def = self.by_name.get(name)?;
        self.defs[*def as usize].params.as_deref()
    }

    pub(crate) fn code_file(&self, code: CodeId) -> Option<&str> {
        let file = self.codes.get(code as usize)?.file?;
        self.files.get(file as usize).map(|(name, _)| name.as_str())
    }

    /// The definition `name` (`median` or `csvstats::median`), refusing
    /// unknown names. A definition with holes runs: a hole refuses the run
    /// only when evaluation reaches it (`unfilled-hole`, at the hole, with the
    /// call chain), so a partial lowering can be tried on the inputs it covers
    /// (soil-syntax-spec §10). Callers that must not run partial code at all
    /// (test suites) ask [`Self::holes_reached_by`] first.
    fn runnable(&self, name: &str) -> Result<DefId, RunError> {
        match self.by_name.get(name) {
            Some(&def) => Ok(def),
            None => Err(RunError::Refused(vec![Diagnostic::new(
                EvalCode::UnknownDefinition.code(),
                format!("no definition is named `{name}`"),
            )])),
        }
    }

    /// One `unfilled-hole` diagnostic per hole in `def` or any definition it reaches.
    pub fn holes_reached_by(&self, name: &str) -> Vec<Diagnostic> {
        self.by_name
            .get(name)
            .map_or_else(Vec::new, |def| self.unfilled_holes(*def))
    }

    fn unfilled_holes(&self, root: DefId) -> Vec<Diagnostic> {
        let mut seen = vec![false; self.defs.len()];
        let mut queue = vec![root];
        let mut found = Vec::new();
        while let Some(def) = queue.pop() {
            if std::mem::replace(&mut seen[def as usize], true) {
                continue;
            }
            let d = &self.defs[def as usize];
            for (hole, span) in &d.holes {
                let mut diagnostic = Diagnostic::new(
                    EvalCode::UnfilledHole.code(),
                    format!(
                        "`{}` cannot run: `{}` contains the unfilled hole ?{hole}",
                        self.defs[root as usize].name, d.name
                    ),
                );
                if let Some((file, text)) = d.file.and_then(|f| self.files.get(f as usize)) {
                    diagnostic = diagnostic.with_file(file.clone());
                    if let Some(text) = text {
                        diagnostic = diagnostic.with_span(LineIndex::new(text).span(text, *span));
                    }
                }
                found.push(diagnostic);
            }
            queue.extend(d.refs.iter().copied());
        }
        found
    }

    /// Calls definition `name` with `args` (capability parameters take the
    /// capability token values from [`capability_value`]). Runs on the current
    /// thread: wrap in [`with_eval_stack`] for the full depth limit.
    pub fn call(&self, name: &str, args: Vec<Value>, world: &mut World) -> Result<Value, RunError> {
        let def = self.runnable(name)?;
        let arity = self.defs[def as usize].arity as usize;
        if args.len() != arity {
            return Err(RunError::Refused(vec![Diagnostic::new(
                EvalCode::BadArguments.code(),
                format!("`{name}` takes {arity} arguments, {} given", args.len()),
            )]));
        }
        let mut machine = Machine::new(self, world);
        machine
            .call_def(def, args)
            .map_err(|panic| RunError::Panic(*panic))
    }

    /// Contract §8.6: runs `name` with its capability parameters (by declared
    /// type `Fs`, `Clock`, `Stdout`) filled from `world` in order and the
    /// remaining parameters decoded positionally from the JSON array
    /// `json_args`; returns the canonical JSON of the result. Runs on an
    /// evaluation thread ([`with_eval_stack`]).
    pub fn run_json(
        &self,
        name: &str,
        json_args: &str,
        world: &mut World,
    ) -> Result<String, RunError> {
        let def = self.runnable(name)?;
        let Some(params) = self.defs[def as usize].params.as_ref() else {
            return Err(RunError::Refused(vec![Diagnostic::new(
                EvalCode::BadArguments.code(),
                format!("`{name}` has no signature, so its arguments cannot be decoded"),
            )]));
        };
        let data_types: Vec<RtType> = params
            .iter()
            .filter_map(|p| match p {
                ParamKind::Data(ty) => Some(ty.clone()),
                ParamKind::Capability(_) => None,
            })
            .collect();
        with_eval_stack(|| {
            let decoded = decode_args(json_args, &data_types, &self.types)
                .map_err(|d| RunError::Refused(vec![d]))?;
            let mut decoded = decoded.into_iter();
            let args: Vec<Value> = params
                .iter()
                .map(|p| match p {
                    ParamKind::Capability(ty) => capability_value(*ty),
                    ParamKind::Data(_) => decoded.next().unwrap_or(Value::Unit),
                })
                .collect();
            let mut machine = Machine::new(self, world);
            let result = machine
                .call_def(def, args)
                .map_err(|panic| RunError::Panic(*panic))?;
            Ok(encode(&result, &self.types))
        })
    }

    /// A panic as a diagnostic with its span rendered against the file text
    /// the program was given.
    pub fn panic_diagnostic(&self, panic: &RuntimePanic) -> Diagnostic {
        let text = panic
            .file
            .as_ref()
            .and_then(|f| self.files.iter().find(|(name, _)| name == f))
            .and_then(|(_, text)| text.as_deref());
        panic.to_diagnostic(text)
    }
}

/// The token value passed for a capability parameter (`Fs`, `Clock`, `Stdout`).
pub fn capability_value(ty: soil_rt::TypeId) -> Value {
    Value::variant(ty, 0, None)
}

/// How each of the first `arity` parameters of `signature` is supplied.
fn param_kinds(
    types: &TypeEnv,
    signature: &ast::Type,
    arity: usize,
) -> Result<Vec<ParamKind>, String> {
    let mut kinds = Vec::with_capacity(arity);
    let mut ty = signature;
    let mut vars = Vec::new();
    while kinds.len() < arity {
        let ast::TypeKind::Function(function) = &ty.kind else {
            return Err(format!("it declares fewer than {arity} parameters"));
        };
        let param = rt_type(types, &function.param, &[], &mut vars)?;
        kinds.push(match param {
            RtType::Named(id, _) if matches!(id, ids::FS | ids::CLOCK | ids::STDOUT) => {
                ParamKind::Capability(id)
            }
            other => ParamKind::Data(other),
        });
        ty = &function.result;
    }
    Ok(kinds)
}
