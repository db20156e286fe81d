//! From env.json and program.json to a checked, compiled program: the first
//! step every running command shares (soil0-cli §8.6 item 1).

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
    soil_types::check_program(&checked_env, &checked_program).into_result()?;
    let types = type_env_from_decls(checked_env.types.iter().map(|t| &t.node))?;
    let definitions: Vec<Definition> = checked_program
        .definitions
        .iter()
        .map(eval_definition)
        .collect();
    let program = Program::compile(types, definitions)?;
    Ok(Loaded {
        program,
        definitions: checked_program.definitions,
    })
}

/// The interpreter's view of one checked definition.
fn eval_definition(definition: &soil_types::Definition) -> Definition {
    let (module, name) = match definition.name.rsplit_once("::") {
        Some((module, name)) => (Some(module.to_owned()), name.to_owned()),
        None => (None, definition.name.clone()),
    };
    let clauses = |kind: ClauseKind| -> Vec<Clause> {
        definition
            .clauses
            .iter()
            .filter(|c| c.kind == kind)
            .map(|c| Clause {
                label: c.label.clone(),
                predicate: c.predicate.node.clone(),
                file: c.predicate.source.file.clone(),
                text: c.predicate.source.text.clone(),
            })
            .collect()
    };
    Definition {
        name,
        module,
        file: definition.equation.source.file.clone(),
        text: definition.equation.source.text.clone(),
        signature: definition.signature.as_ref().map(|s| s.node.ty.clone()),
        equation: definition.equation.node.clone(),
        requires: clauses(ClauseKind::Requires),
        ensures: clauses(ClauseKind::Ensures),
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
        self.definitions.iter().find(|d| d.name == name).or_else(|| {
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
                "the result type `{}` of `{name}` has type variables, so an expected value cannot be decoded",
                soil_syntax::print_type(ty)
            ));
        }
        Ok(result)
    }
}

fn param_var(param: &ast::Param) -> Option<String> {
    match param {
        ast::Param::Named(ident) => Some(ident.text.clone()),
        ast::Param::Wildcard(_) => None,
    }
}
