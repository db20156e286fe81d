//! env.json and program.json (soil0-cli §6, §7) decoded into [`Env`] and
//! [`Program`], and check facts encoded as the §8.4 document.

use serde_json::{Map, Value, json};
use soil_syntax::ast;
use trellis_diag::{Diagnostic, TextRange};

use crate::codes::Code;
use crate::program::{
    Allow, CheckFacts, Clause, ClauseKind, Definition, Env, Located, Program, SourceText,
};

/// Decodes env.json (soil0-cli §6). `file` names the document in diagnostics.
pub fn decode_env(text: &str, file: &str) -> Result<Env, Vec<Diagnostic>> {
    let reader = Reader {
        file,
        code: Code::BadEnv,
    };
    let root: Value = serde_json::from_str(text)
        .map_err(|e| vec![*reader.error("$", format!("not JSON: {e}"))])?;
    let root_obj = reader
        .object(&root, "$", &["types"])
        .map_err(|d| vec![*d])?;
    let types = reader
        .array(
            reader.field(root_obj, "types", "$").map_err(|d| vec![*d])?,
            "$.types",
        )
        .map_err(|d| vec![*d])?;
    let mut env = Env::default();
    let mut errors = Vec::new();
    for (index, value) in types.iter().enumerate() {
        let path = format!("$.types[{index}]");
        match reader.type_decl(value, &path) {
            Ok(decl) => env.types.push(Located {
                node: decl,
                source: SourceText::unlocated(Some(file.to_owned())),
            }),
            Err(error) => errors.push(*error),
        }
    }
    if errors.is_empty() {
        Ok(env)
    } else {
        Err(errors)
    }
}

/// Decodes program.json (soil0-cli §7). Syntax errors in the embedded Soil texts
/// are returned as the parser's diagnostics, located in that text and naming the
/// definition's `file` (or `program.json` when it has none).
pub fn decode_program(text: &str, file: &str) -> Result<Program, Vec<Diagnostic>> {
    let reader = Reader {
        file,
        code: Code::BadProgram,
    };
    let root: Value = serde_json::from_str(text)
        .map_err(|e| vec![*reader.error("$", format!("not JSON: {e}"))])?;
    let root_obj = reader
        .object(&root, "$", &["definitions"])
        .map_err(|d| vec![*d])?;
    let definitions = reader
        .array(
            reader
                .field(root_obj, "definitions", "$")
                .map_err(|d| vec![*d])?,
            "$.definitions",
        )
        .map_err(|d| vec![*d])?;
    let mut program = Program::default();
    let mut errors = Vec::new();
    for (index, value) in definitions.iter().enumerate() {
        let path = format!("$.definitions[{index}]");
        match reader.definition(value, &path) {
            Ok(definition) => program.definitions.push(definition),
            Err(mut found) => errors.append(&mut found),
        }
    }
    if errors.is_empty() {
        Ok(program)
    } else {
        Err(errors)
    }
}

/// One definition's §8.4 document.
pub fn facts_json(facts: &CheckFacts) -> Value {
    json!({
        "definition": facts.definition,
        "signature": facts.signature,
        "row": facts.row,
        "checks": {
            "clauses": facts.clauses.iter().map(|clause| json!({
                "kind": clause.kind.as_str(),
                "label": clause.label,
                "assurance": clause.assurance,
            })).collect::<Vec<_>>(),
            "termination": facts.termination,
            "holes": facts.holes.iter().map(|hole| json!({
                "name": hole.name,
                "goal": hole.goal,
                "scope": hole.scope.iter().map(|entry| json!({
                    "name": entry.name,
                    "type": entry.ty,
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        },
    })
}

/// The whole-program check document `{"definitions":[CheckFacts]}`, compact.
pub fn check_document(facts: &[CheckFacts]) -> String {
    let value = json!({ "definitions": facts.iter().map(facts_json).collect::<Vec<_>>() });
    value.to_string()
}

/// `soil0 check` as one call (soil0-cli §8.2): decodes both documents, checks,
/// and returns the output document — the §8.4 `CheckFacts` of `definition`, or
/// `{"definitions":[…]}` for the whole program — or every diagnostic.
pub fn check_json(
    env_json: &str,
    env_file: &str,
    program_json: &str,
    program_file: &str,
    definition: Option<&str>,
) -> Result<String, Vec<Diagnostic>> {
    let env = decode_env(env_json, env_file);
    let program = decode_program(program_json, program_file);
    let (env, program) = match (env, program) {
        (Ok(env), Ok(program)) => (env, program),
        (env, program) => {
            let mut errors = env.err().unwrap_or_default();
            errors.extend(program.err().unwrap_or_default());
            return Err(errors);
        }
    };
    let report = crate::check_program(&env, &program);
    match definition {
        Some(name) => match report.for_definition(name) {
            Some(outcome) => outcome.map(|facts| facts_json(&facts).to_string()),
            None => Err(vec![
                Diagnostic::new(
                    Code::UnknownDefinition.as_str(),
                    format!("the program has no definition `{name}`"),
                )
                .with_file(program_file.to_owned()),
            ]),
        },
        None => report.into_result().map(|facts| check_document(&facts)),
    }
}

struct Reader<'a> {
    file: &'a str,
    code: Code,
}

/// Internal results box the diagnostic: it is large and errors are rare.
type Decoded<T> = Result<T, Box<Diagnostic>>;

impl Reader<'_> {
    fn error(&self, path: &str, message: impl Into<String>) -> Box<Diagnostic> {
        Box::new(
            Diagnostic::new(self.code.as_str(), format!("{path}: {}", message.into()))
                .with_file(self.file.to_owned()),
        )
    }

    fn object<'v>(
        &self,
        value: &'v Value,
        path: &str,
        keys: &[&str],
    ) -> Decoded<&'v Map<String, Value>> {
        let object = value
            .as_object()
            .ok_or_else(|| self.error(path, "expected an object"))?;
        if let Some(extra) = object.keys().find(|key| !keys.contains(&key.as_str())) {
            return Err(self.error(path, format!("unknown field `{extra}`")));
        }
        Ok(object)
    }

    fn field<'v>(
        &self,
        object: &'v Map<String, Value>,
        key: &str,
        path: &str,
    ) -> Decoded<&'v Value> {
        object
            .get(key)
            .ok_or_else(|| self.error(path, format!("missing field `{key}`")))
    }

    fn string(&self, value: &Value, path: &str) -> Decoded<String> {
        value
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| self.error(path, "expected a string"))
    }

    fn array<'v>(&self, value: &'v Value, path: &str) -> Decoded<&'v Vec<Value>> {
        value
            .as_array()
            .ok_or_else(|| self.error(path, "expected an array"))
    }

    fn string_field(&self, object: &Map<String, Value>, key: &str, path: &str) -> Decoded<String> {
        self.string(self.field(object, key, path)?, &format!("{path}.{key}"))
    }

    /// The tr-grammar §7 `Option` encoding: `{"tag":"None"}` or
    /// `{"tag":"Some","value":v}`.
    fn option<'v>(&self, value: &'v Value, path: &str) -> Decoded<Option<&'v Value>> {
        let object = self.object(value, path, &["tag", "value"])?;
        match self.string_field(object, "tag", path)?.as_str() {
            "None" if object.len() == 1 => Ok(None),
            "Some" => Ok(Some(self.field(object, "value", path)?)),
            "None" => Err(self.error(path, "`None` carries no `value`")),
            other => Err(self.error(&format!("{path}.tag"), format!("unknown tag `{other}`"))),
        }
    }

    fn parse_type(&self, text: &str, path: &str) -> Decoded<ast::Type> {
        let (ty, diagnostics) = soil_syntax::parse_type(text);
        match (ty, diagnostics.first()) {
            (Some(ty), None) => Ok(ty),
            (_, Some(first)) => {
                let error = self.error(path, format!("`{text}` is not a type: {}", first.message));
                Err(Box::new(
                    error.with_note(format!("syntax code: {}", first.code)),
                ))
            }
            (None, None) => Err(self.error(path, format!("`{text}` is not a type"))),
        }
    }

    fn ident(&self, text: String) -> ast::Ident {
        ast::Ident {
            text,
            span: TextRange::default(),
        }
    }

    fn fields(&self, value: &Value, path: &str) -> Decoded<Vec<ast::FieldDecl>> {
        let mut out = Vec::new();
        for (index, field) in self.array(value, path)?.iter().enumerate() {
            let field_path = format!("{path}[{index}]");
            let object = self.object(field, &field_path, &["name", "ty"])?;
            let name = self.string_field(object, "name", &field_path)?;
            let ty_text = self.string_field(object, "ty", &field_path)?;
            let ty = self.parse_type(&ty_text, &format!("{field_path}.ty"))?;
            out.push(ast::FieldDecl {
                name: self.ident(name),
                ty,
                span: TextRange::default(),
            });
        }
        Ok(out)
    }

    fn type_decl(&self, value: &Value, path: &str) -> Decoded<ast::TypeDecl> {
        let object = self.object(value, path, &["name", "params", "body"])?;
        let name = self.string_field(object, "name", path)?;
        let params = self
            .array(
                self.field(object, "params", path)?,
                &format!("{path}.params"),
            )?
            .iter()
            .enumerate()
            .map(|(i, p)| {
                self.string(p, &format!("{path}.params[{i}]"))
                    .map(|t| self.ident(t))
            })
            .collect::<Decoded<Vec<_>>>()?;
        let body_path = format!("{path}.body");
        let body_value = self.field(object, "body", path)?;
        let body_object = body_value
            .as_object()
            .ok_or_else(|| self.error(&body_path, "expected an object"))?;
        let tag = self.string_field(body_object, "tag", &body_path)?;
        let body = match tag.as_str() {
            "Record" => {
                let body_object = self.object(body_value, &body_path, &["tag", "fields"])?;
                ast::TypeDeclBody::Record(self.fields(
                    self.field(body_object, "fields", &body_path)?,
                    &format!("{body_path}.fields"),
                )?)
            }
            "Sum" => {
                let body_object = self.object(body_value, &body_path, &["tag", "variants"])?;
                let variants_path = format!("{body_path}.variants");
                let mut variants = Vec::new();
                for (index, variant) in self
                    .array(
                        self.field(body_object, "variants", &body_path)?,
                        &variants_path,
                    )?
                    .iter()
                    .enumerate()
                {
                    variants.push(self.variant(variant, &format!("{variants_path}[{index}]"))?);
                }
                ast::TypeDeclBody::Sum(variants)
            }
            "Opaque" => {
                self.object(body_value, &body_path, &["tag"])?;
                ast::TypeDeclBody::Opaque
            }
            other => {
                return Err(self.error(
                    &format!("{body_path}.tag"),
                    format!("unknown tag `{other}`"),
                ));
            }
        };
        Ok(ast::TypeDecl {
            name: self.ident(name),
            params,
            body,
            span: TextRange::default(),
        })
    }

    /// `VariantD = { name, payload : Option Utf8, fields : Option (List FieldD) }`;
    /// `fields` may be absent (a v1.1 document) and means `None` (§13.5).
    fn variant(&self, value: &Value, path: &str) -> Decoded<ast::Variant> {
        let object = self.object(value, path, &["name", "payload", "fields"])?;
        let name = self.string_field(object, "name", path)?;
        let payload_path = format!("{path}.payload");
        let payload = match self.option(self.field(object, "payload", path)?, &payload_path)? {
            Some(text) => {
                let text = self.string(text, &format!("{payload_path}.value"))?;
                Some(self.parse_type(&text, &format!("{payload_path}.value"))?)
            }
            None => None,
        };
        let fields_path = format!("{path}.fields");
        let fields = match object.get("fields") {
            None => None,
            Some(value) => match self.option(value, &fields_path)? {
                Some(list) => Some(self.fields(list, &format!("{fields_path}.value"))?),
                None => None,
            },
        };
        let payload = match (payload, fields) {
            (None, None) => ast::VariantPayload::None,
            (Some(ty), None) => ast::VariantPayload::Positional(ty),
            (None, Some(fields)) => ast::VariantPayload::Record(fields),
            (Some(_), Some(_)) => {
                return Err(self.error(path, "`payload` and `fields` are mutually exclusive"));
            }
        };
        Ok(ast::Variant {
            name: self.ident(name),
            payload,
            span: TextRange::default(),
        })
    }

    fn definition(&self, value: &Value, path: &str) -> Result<Definition, Vec<Diagnostic>> {
        let one = |d: Box<Diagnostic>| vec![*d];
        let object = self
            .object(
                value,
                path,
                &["name", "file", "signature", "equation", "clauses", "allow"],
            )
            .map_err(one)?;
        let name = self.string_field(object, "name", path).map_err(one)?;
        let file = match self
            .option(
                self.field(object, "file", path).map_err(one)?,
                &format!("{path}.file"),
            )
            .map_err(one)?
        {
            Some(value) => Some(
                self.string(value, &format!("{path}.file.value"))
                    .map_err(one)?,
            ),
            None => None,
        };
        let source_file = file.clone().unwrap_or_else(|| self.file.to_owned());
        let signature_path = format!("{path}.signature");
        let signature = match self
            .option(
                self.field(object, "signature", path).map_err(one)?,
                &signature_path,
            )
            .map_err(one)?
        {
            Some(value) => {
                let text = self
                    .string(value, &format!("{signature_path}.value"))
                    .map_err(one)?;
                let (signature, diagnostics) = soil_syntax::parse_signature(&text);
                let source = SourceText::new(Some(source_file.clone()), &text);
                match signature {
                    Some(signature) if diagnostics.is_empty() => Some(Located {
                        node: signature,
                        source,
                    }),
                    _ => return Err(in_file(diagnostics, &source_file, &signature_path, self)),
                }
            }
            None => None,
        };
        let equation_path = format!("{path}.equation");
        let equation_text = self.string_field(object, "equation", path).map_err(one)?;
        let (parsed, diagnostics) = soil_syntax::parse_file(&equation_text);
        if !diagnostics.is_empty() {
            return Err(in_file(diagnostics, &source_file, &equation_path, self));
        }
        let equation = match parsed.items.as_slice() {
            [ast::Item::Equation(equation)] => equation.clone(),
            _ => {
                return Err(vec![
                    *self.error(&equation_path, "expected exactly one equation item"),
                ]);
            }
        };
        let equation = Located {
            node: equation,
            source: SourceText::new(Some(source_file.clone()), &equation_text),
        };
        let mut clauses = Vec::new();
        let clauses_path = format!("{path}.clauses");
        for (index, clause) in self
            .array(
                self.field(object, "clauses", path).map_err(one)?,
                &clauses_path,
            )
            .map_err(one)?
            .iter()
            .enumerate()
        {
            let clause_path = format!("{clauses_path}[{index}]");
            let clause_object = self
                .object(clause, &clause_path, &["kind", "label", "predicate"])
                .map_err(one)?;
            let kind = match self
                .string_field(clause_object, "kind", &clause_path)
                .map_err(one)?
                .as_str()
            {
                "requires" => ClauseKind::Requires,
                "ensures" => ClauseKind::Ensures,
                other => {
                    return Err(vec![*self.error(
                        &format!("{clause_path}.kind"),
                        format!("expected \"requires\" or \"ensures\", found {other:?}"),
                    )]);
                }
            };
            let label = self
                .string_field(clause_object, "label", &clause_path)
                .map_err(one)?;
            let text = self
                .string_field(clause_object, "predicate", &clause_path)
                .map_err(one)?;
            let (predicate, diagnostics) = soil_syntax::parse_predicate(&text);
            let predicate = match predicate {
                Some(predicate) if diagnostics.is_empty() => predicate,
                _ => {
                    return Err(in_file(
                        diagnostics,
                        &source_file,
                        &format!("{clause_path}.predicate"),
                        self,
                    ));
                }
            };
            clauses.push(Clause {
                kind,
                label,
                predicate: Located {
                    node: predicate,
                    source: SourceText::new(Some(source_file.clone()), &text),
                },
            });
        }
        let mut allow = Vec::new();
        let allow_path = format!("{path}.allow");
        for (index, entry) in self
            .array(self.field(object, "allow", path).map_err(one)?, &allow_path)
            .map_err(one)?
            .iter()
            .enumerate()
        {
            let entry_path = format!("{allow_path}[{index}]");
            let entry_object = self
                .object(entry, &entry_path, &["hatch", "reason"])
                .map_err(one)?;
            allow.push(Allow {
                hatch: self
                    .string_field(entry_object, "hatch", &entry_path)
                    .map_err(one)?,
                reason: self
                    .string_field(entry_object, "reason", &entry_path)
                    .map_err(one)?,
            });
        }
        Ok(Definition {
            name,
            signature,
            equation,
            clauses,
            allow,
        })
    }
}

/// Syntax diagnostics of an embedded text, naming where it came from.
fn in_file(
    diagnostics: Vec<Diagnostic>,
    file: &str,
    path: &str,
    reader: &Reader,
) -> Vec<Diagnostic> {
    if diagnostics.is_empty() {
        return vec![*reader.error(path, "could not be parsed")];
    }
    diagnostics
        .into_iter()
        .map(|d| {
            d.in_file(file)
                .with_note(format!("in program.json at {path}"))
        })
        .collect()
}
