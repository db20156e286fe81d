//! From env.json and program.json to a checked, compiled program: the first
//! step every running command shares (soil0-cli §8.6 item 1).

use std::collections::HashMap;

use soil_eval::{Clause, Definition, Program, rt_type, type_env_from_decls};
use soil_rt::RtType;
use soil_syntax::ast;
use soil_types::ClauseKind;
use trellis_diag::Diagnostic;

use crate::Source;

/// A program that decoded, checked without errors and compiled: ready to run.
pub struct Loaded {
    pub program: Program,
    /// The checked definitions, in program order (signatures, parameter names).
    definitions: Vec<soil_types::Definition>,
    /// The interpreter's file key of each embedded text → the file diagnostics
    /// name (§3) and the text's JSON path in program.json.
    texts: HashMap<String, (String, String)>,
    /// program.json's name, for the note naming an embedded text's JSON path;
    /// `None` for a program read from `.soil` files, whose texts are the files.
    program_file: Option<String>,
    /// Each typed hole the check found, with the definition holding it: what
    /// an `unfilled-hole` reached at run time reports (its goal, its scope).
    holes: Vec<(String, soil_types::HoleFact)>,
}

/// Decodes both documents, checks the whole program and compiles it. Any
/// decoding or check error refuses it, with every diagnostic (environment
/// first, then definitions in program order).
pub fn load(env: Source<'_>, program: Source<'_>) -> Result<Loaded, Vec<Diagnostic>> {
    let decoded_env = soil_types::decode_env(env.text, env.name);
    let decoded_program = soil_types::decode_program(program.text, program.name);
    let (checked_env, checked_program) = match (decoded_env, decoded_program) {
        (Ok(e), Ok(p)) => (e, p),
        (e, p) => {
            let mut errors = e.err().unwrap_or_default();
            errors.extend(p.err().unwrap_or_default());
            return Err(errors);
        }
    };
    load_checked(&checked_env, checked_program, Some(program.name))
}

/// A program a host assembled itself (a root's database), checked and
/// compiled as [`load`] does with decoded documents. Diagnostics name the
/// files and spans of the sources the definitions carry, with no note naming
/// an embedded JSON text.
pub fn load_program(
    env: &soil_types::Env,
    definitions: impl IntoIterator<Item = soil_types::Definition>,
) -> Result<Loaded, Vec<Diagnostic>> {
    let program = soil_types::Program {
        definitions: definitions.into_iter().collect(),
        ..soil_types::Program::default()
    };
    load_checked(env, program, None)
}

/// Checks a decoded program against its environment and compiles it: the rest
/// of [`load`], shared with programs read from `.soil` files (`program_file`
/// `None`, [`crate::sources`]).
pub(crate) fn load_checked(
    checked_env: &soil_types::Env,
    checked_program: soil_types::Program,
    program_file: Option<&str>,
) -> Result<Loaded, Vec<Diagnostic>> {
    let facts = soil_types::check_program(checked_env, &checked_program).into_result()?;
    let holes = facts
        .into_iter()
        .flat_map(|facts| {
            let definition = facts.definition;
            facts
                .holes
                .into_iter()
                .map(move |hole| (definition.clone(), hole))
        })
        .collect();
    let types = type_env_from_decls(checked_env.types.iter().map(|t| &t.node))?;
    let mut texts = HashMap::new();
    let definitions: Vec<Definition> = checked_program
        .definitions
        .iter()
        .enumerate()
        .map(|(index, definition)| {
            eval_definition(
                index,
                definition,
                program_file.unwrap_or_default(),
                &mut texts,
            )
        })
        .collect();
    let compiled = Program::compile(types, definitions)?;
    Ok(Loaded {
        program: compiled,
        definitions: checked_program.definitions,
        texts,
        program_file: program_file.map(str::to_owned),
        holes,
    })
}

/// The interpreter's view of one checked definition. Every embedded text (the
/// equation, each clause) gets its own file key: the interpreter tells texts
/// apart by file name, and in program.json the equation and the clauses of a
/// definition share one `file` while their spans are relative to different
/// strings (§3). [`Loaded::present`] maps the keys back.
fn eval_definition(
    index: usize,
    definition: &soil_types::Definition,
    program_file: &str,
    texts: &mut HashMap<String, (String, String)>,
) -> Definition {
    let mut key = |file: &Option<String>, path: String| -> Option<String> {
        let key = format!("\u{0}{index}{}", path);
        let shown = file.clone().unwrap_or_else(|| program_file.to_owned());
        texts.insert(
            key.clone(),
            (shown, format!("$.definitions[{index}]{path}")),
        );
        Some(key)
    };
    let (module, name) = match definition.name.rsplit_once("::") {
        Some((module, name)) => (Some(module.to_owned()), name.to_owned()),
        None => (None, definition.name.clone()),
    };
    let mut requires = Vec::new();
    let mut ensures = Vec::new();
    for (position, c) in definition.clauses.iter().enumerate() {
        let clause = Clause {
            label: c.label.clone(),
            predicate: c.predicate.node.clone(),
            file: key(
                &c.predicate.source.file,
                format!(".clauses[{position}].predicate"),
            ),
            text: c.predicate.source.text.clone(),
        };
        match c.kind {
            ClauseKind::Requires => requires.push(clause),
            ClauseKind::Ensures => ensures.push(clause),
        }
    }
    Definition {
        name,
        module,
        file: key(&definition.equation.source.file, ".equation".to_owned()),
        text: definition.equation.source.text.clone(),
        signature: definition.signature.as_ref().map(|s| s.node.ty.clone()),
        equation: definition.equation.node.clone(),
        requires,
        ensures,
    }
}

/// One parameter of a definition as a caller sees it.
pub(crate) struct ParamInfo {
    /// The signature's parameter name, else the equation's variable, else `#i`.
    pub name: String,
    /// The declared type's text, canonical.
    pub ty: String,
}

impl Loaded {
    fn definition(&self, name: &str) -> Option<&soil_types::Definition> {
        self.definitions
            .iter()
            .find(|d| d.name == name)
            .or_else(|| {
                // Bare names resolve like the interpreter's: the first with that last segment.
                self.definitions
                    .iter()
                    .find(|d| d.name.rsplit("::").next() == Some(name))
            })
    }

    /// The parameters of `name` (as many as its equation takes), when it has a signature.
    pub(crate) fn params(&self, name: &str) -> Option<Vec<ParamInfo>> {
        let definition = self.definition(name)?;
        let signature = definition.signature.as_ref()?;
        let mut ty = &signature.node.ty;
        let mut out = Vec::new();
        for (i, param) in definition.equation.node.params.iter().enumerate() {
            let ast::TypeKind::Function(function) = &ty.kind else {
                break;
            };
            let name = function
                .param_name
                .as_ref()
                .map(|n| n.text.clone())
                .or_else(|| param_var(param))
                .unwrap_or_else(|| format!("#{i}"));
            out.push(ParamInfo {
                name,
                ty: soil_syntax::print_type(&function.param),
            });
            ty = &function.result;
        }
        Some(out)
    }

    /// The runtime type of `name`'s result, when it is known and has no type
    /// variables (a value of an unknown type cannot be decoded).
    pub(crate) fn result_type(&self, name: &str) -> Result<RtType, String> {
        let definition = self
            .definition(name)
            .ok_or_else(|| format!("no definition is named `{name}`"))?;
        let signature = definition
            .signature
            .as_ref()
            .ok_or_else(|| format!("`{name}` has no signature"))?;
        let mut ty = &signature.node.ty;
        for _ in &definition.equation.node.params {
            match &ty.kind {
                ast::TypeKind::Function(function) => ty = &function.result,
                _ => return Err(format!("the signature of `{name}` has too few arrows")),
            }
        }
        let mut vars = Vec::new();
        let result = rt_type(self.program.types(), ty, &[], &mut vars)?;
        if !vars.is_empty() {
            return Err(format!(
                "the result type `{}` of `{name}` has type variables",
                soil_syntax::print_type(ty)
            ));
        }
        Ok(result)
    }
}

impl Loaded {
    /// A diagnostic from the interpreter as the contract shows it: the file its
    /// span points into named as in program.json, with a note naming the
    /// embedded string's JSON path (§3), and the call chain qualified.
    pub(crate) fn present(&self, mut diagnostic: Diagnostic) -> Diagnostic {
        if let Some((file, path)) = diagnostic.file.as_ref().and_then(|key| self.texts.get(key)) {
            diagnostic.file = Some(file.clone());
            if let Some(program_file) = &self.program_file {
                diagnostic = diagnostic.with_note(format!("in {program_file} at {path}"));
            }
        }
        let diagnostic = self.qualify_chain(diagnostic);
        self.with_hole_goal(diagnostic)
    }

    /// An `unfilled-hole` reached at run time with what the check knows of the
    /// hole: its goal type and the definition holding it in the message, the
    /// names in scope as a note — what `check` shows for it (§8.4).
    fn with_hole_goal(&self, mut diagnostic: Diagnostic) -> Diagnostic {
        if diagnostic.code != soil_eval::EvalCode::UnfilledHole.code() {
            return diagnostic;
        }
        let Some(name) = diagnostic
            .message
            .strip_prefix("reached the unfilled hole ?")
            .map(str::to_owned)
        else {
            return diagnostic;
        };
        // The innermost frame of the chain is the definition running the hole.
        let innermost = diagnostic.notes.iter().rev().find_map(|note| {
            let (depth, entry) = note.message.split_once(" in ")?;
            depth
                .starts_with('#')
                .then(|| entry.split(' ').next().unwrap_or(entry).to_owned())
        });
        let named: Vec<&(String, soil_types::HoleFact)> = self
            .holes
            .iter()
            .filter(|(_, hole)| hole.name == name)
            .collect();
        let found = named
            .iter()
            .find(|(definition, _)| Some(definition) == innermost.as_ref())
            .or(if named.len() == 1 {
                named.first()
            } else {
                None
            });
        let Some((definition, hole)) = found else {
            return diagnostic;
        };
        diagnostic.message = format!(
            "reached the unfilled hole ?{name} in {definition}, whose goal is `{}`",
            hole.goal
        );
        if !hole.scope.is_empty() {
            let scope: Vec<String> = hole
                .scope
                .iter()
                .map(|entry| format!("{} : {}", entry.name, entry.ty))
                .collect();
            diagnostic = diagnostic.with_note(format!("in scope: {}", scope.join(", ")));
        }
        diagnostic
    }

    /// The interpreter names chain entries by a definition's last segment
    /// (`#0 in median`, `#1 in median (lambda)`); §8.6 promises `module::name`.
    /// Each entry whose leading name is the last segment of exactly one
    /// definition is qualified; anything else is left as it is.
    fn qualify_chain(&self, mut diagnostic: Diagnostic) -> Diagnostic {
        for note in &mut diagnostic.notes {
            let Some((depth, entry)) = note.message.split_once(" in ") else {
                continue;
            };
            if !depth.starts_with('#') {
                continue;
            }
            let (head, tail) = entry.split_at(entry.find(' ').unwrap_or(entry.len()));
            if head.contains("::") {
                continue;
            }
            let mut owners = self
                .definitions
                .iter()
                .filter(|d| d.name.rsplit("::").next() == Some(head));
            if let (Some(owner), None) = (owners.next(), owners.next()) {
                note.message = format!("{depth} in {}{tail}", owner.name);
            }
        }
        diagnostic
    }
}

fn param_var(param: &ast::Param) -> Option<String> {
    match param {
        ast::Param::Named(ident) => Some(ident.text.clone()),
        ast::Param::Wildcard(_) => None,
    }
}
