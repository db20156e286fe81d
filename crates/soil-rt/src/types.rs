//! Runtime type descriptors: enough of each declaration to name fields and
//! variants and to decode JSON type-directed.

use std::collections::HashMap;

/// Index of a type declaration in a [`TypeEnv`].
pub type TypeId = u32;
/// Index of a record shape (a nominal record's fields, or an inline-record
/// variant payload's fields) in a [`TypeEnv`].
pub type ShapeId = u32;

/// A type at run time. Type variables of a declaration are `Param(i)` inside
/// that declaration and are substituted by the arguments of `Named`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RtType {
    Unit,
    Bool,
    I64,
    U64,
    F64,
    Utf8,
    List(Box<RtType>),
    Map(Box<RtType>, Box<RtType>),
    Tuple(Vec<RtType>),
    Named(TypeId, Vec<RtType>),
    /// The `i`-th parameter of the enclosing declaration.
    Param(u32),
    /// A function type: values exist at run time but have no JSON form.
    Func,
}

impl RtType {
    /// This type with `Param(i)` replaced by `args[i]` (unknown params stay).
    pub fn subst(&self, args: &[RtType]) -> RtType {
        match self {
            RtType::Param(i) => args.get(*i as usize).cloned().unwrap_or(RtType::Param(*i)),
            RtType::List(t) => RtType::List(Box::new(t.subst(args))),
            RtType::Map(k, v) => RtType::Map(Box::new(k.subst(args)), Box::new(v.subst(args))),
            RtType::Tuple(ts) => RtType::Tuple(ts.iter().map(|t| t.subst(args)).collect()),
            RtType::Named(id, ts) => RtType::Named(*id, ts.iter().map(|t| t.subst(args)).collect()),
            other => other.clone(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldDecl {
    pub name: String,
    pub ty: RtType,
}

/// The fields of a record, in declaration order, and the declaration owning it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    pub owner: TypeId,
    pub fields: Vec<FieldDecl>,
}

impl Shape {
    pub fn field_index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Payload {
    None,
    Positional(RtType),
    Record(ShapeId),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VariantDecl {
    pub name: String,
    pub payload: Payload,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TypeBody {
    /// Declared but not yet defined, or a capability (`Fs`, `Clock`, `Stdout`).
    Opaque,
    Record(ShapeId),
    Sum(Vec<VariantDecl>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeDecl {
    pub name: String,
    pub params: Vec<String>,
    pub body: TypeBody,
}

/// A variant's payload as given to [`TypeEnv::define_sum`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PayloadDecl {
    None,
    Positional(RtType),
    Record(Vec<FieldDecl>),
}

/// The ids of the prelude's declarations, fixed in every [`TypeEnv`].
pub mod prelude {
    use super::TypeId;
    pub const OPTION: TypeId = 0;
    pub const RESULT: TypeId = 1;
    pub const ORDERING: TypeId = 2;
    pub const IO_ERROR: TypeId = 3;
    pub const FS: TypeId = 4;
    pub const CLOCK: TypeId = 5;
    pub const STDOUT: TypeId = 6;
    /// Variant indices (declaration order).
    pub const NONE: u32 = 0;
    pub const SOME: u32 = 1;
    pub const OK: u32 = 0;
    pub const ERR: u32 = 1;
    pub const LESS: u32 = 0;
    pub const EQUAL: u32 = 1;
    pub const GREATER: u32 = 2;
    pub const NOT_FOUND: u32 = 0;
    pub const PERMISSION_DENIED: u32 = 1;
    pub const IO_FAILURE: u32 = 2;
}

/// All type declarations of a program, the prelude's first.
#[derive(Clone, Debug)]
pub struct TypeEnv {
    decls: Vec<TypeDecl>,
    shapes: Vec<Shape>,
    by_name: HashMap<String, TypeId>,
    variants_by_name: HashMap<String, (TypeId, u32)>,
}

impl Default for TypeEnv {
    fn default() -> Self {
        Self::new()
    }
}

impl TypeEnv {
    /// An environment holding the prelude's types (ids in [`prelude`]).
    pub fn new() -> TypeEnv {
        let mut env = TypeEnv {
            decls: Vec::new(),
            shapes: Vec::new(),
            by_name: HashMap::new(),
            variants_by_name: HashMap::new(),
        };
        let a = || RtType::Param(0);
        let e = || RtType::Param(1);
        let option = env.declare("Option", &["a"]);
        env.define_sum(
            option,
            vec![
                ("None".into(), PayloadDecl::None),
                ("Some".into(), PayloadDecl::Positional(a())),
            ],
        );
        let result = env.declare("Result", &["a", "e"]);
        env.define_sum(
            result,
            vec![
                ("Ok".into(), PayloadDecl::Positional(a())),
                ("Err".into(), PayloadDecl::Positional(e())),
            ],
        );
        let ordering = env.declare("Ordering", &[]);
        env.define_sum(
            ordering,
            ["Less", "Equal", "Greater"]
                .iter()
                .map(|n| (n.to_string(), PayloadDecl::None))
                .collect(),
        );
        let io_error = env.declare("IoError", &[]);
        let path = || FieldDecl {
            name: "path".into(),
            ty: RtType::Utf8,
        };
        env.define_sum(
            io_error,
            vec![
                ("NotFound".into(), PayloadDecl::Record(vec![path()])),
                ("PermissionDenied".into(), PayloadDecl::Record(vec![path()])),
                (
                    "IoFailure".into(),
                    PayloadDecl::Record(vec![
                        path(),
                        FieldDecl {
                            name: "message".into(),
                            ty: RtType::Utf8,
                        },
                    ]),
                ),
            ],
        );
        env.declare("Fs", &[]);
        env.declare("Clock", &[]);
        env.declare("Stdout", &[]);
        debug_assert_eq!(env.lookup("Stdout"), Some(prelude::STDOUT));
        env
    }

    /// Declares a type (opaque until defined) and returns its id. Declaring
    /// every type before defining any lets declarations refer to each other.
    /// Re-declaring a name returns the existing id.
    pub fn declare(&mut self, name: &str, params: &[&str]) -> TypeId {
        if let Some(id) = self.lookup(name) {
            return id;
        }
        let id = self.decls.len() as TypeId;
        self.decls.push(TypeDecl {
            name: name.to_owned(),
            params: params.iter().map(|p| p.to_string()).collect(),
            body: TypeBody::Opaque,
        });
        self.by_name.insert(name.to_owned(), id);
        id
    }

    pub fn define_record(&mut self, id: TypeId, fields: Vec<FieldDecl>) {
        let shape = self.add_shape(id, fields);
        if let Some(decl) = self.decls.get_mut(id as usize) {
            decl.body = TypeBody::Record(shape);
        }
    }

    pub fn define_sum(&mut self, id: TypeId, variants: Vec<(String, PayloadDecl)>) {
        let mut decls = Vec::with_capacity(variants.len());
        for (tag, (name, payload)) in variants.into_iter().enumerate() {
            let payload = match payload {
                PayloadDecl::None => Payload::None,
                PayloadDecl::Positional(t) => Payload::Positional(t),
                PayloadDecl::Record(fields) => Payload::Record(self.add_shape(id, fields)),
            };
            self.variants_by_name
                .entry(name.clone())
                .or_insert((id, tag as u32));
            decls.push(VariantDecl { name, payload });
        }
        if let Some(decl) = self.decls.get_mut(id as usize) {
            decl.body = TypeBody::Sum(decls);
        }
    }

    fn add_shape(&mut self, owner: TypeId, fields: Vec<FieldDecl>) -> ShapeId {
        self.shapes.push(Shape { owner, fields });
        (self.shapes.len() - 1) as ShapeId
    }

    pub fn lookup(&self, name: &str) -> Option<TypeId> {
        self.by_name.get(name).copied()
    }

    pub fn decl(&self, id: TypeId) -> Option<&TypeDecl> {
        self.decls.get(id as usize)
    }

    pub fn shape(&self, id: ShapeId) -> Option<&Shape> {
        self.shapes.get(id as usize)
    }

    pub fn decls(&self) -> impl Iterator<Item = (TypeId, &TypeDecl)> {
        self.decls.iter().enumerate().map(|(i, d)| (i as TypeId, d))
    }

    pub fn shapes(&self) -> impl Iterator<Item = (ShapeId, &Shape)> {
        self.shapes
            .iter()
            .enumerate()
            .map(|(i, s)| (i as ShapeId, s))
    }

    /// The declaration and index of the variant called `name` (constructor
    /// names are unique across a program's sums; the first declaration wins).
    pub fn variant(&self, name: &str) -> Option<(TypeId, u32)> {
        self.variants_by_name.get(name).copied()
    }

    pub fn variant_decl(&self, ty: TypeId, tag: u32) -> Option<&VariantDecl> {
        match &self.decl(ty)?.body {
            TypeBody::Sum(variants) => variants.get(tag as usize),
            _ => None,
        }
    }

    /// The shape of a nominal record type.
    pub fn record_shape(&self, ty: TypeId) -> Option<ShapeId> {
        match self.decl(ty)?.body {
            TypeBody::Record(shape) => Some(shape),
            _ => None,
        }
    }

    /// A human name for a type, for messages (`List (Option I64)`).
    pub fn display(&self, ty: &RtType) -> String {
        match ty {
            RtType::Unit => "Unit".into(),
            RtType::Bool => "Bool".into(),
            RtType::I64 => "I64".into(),
            RtType::U64 => "U64".into(),
            RtType::F64 => "F64".into(),
            RtType::Utf8 => "Utf8".into(),
            RtType::List(t) => format!("List {}", self.display_arg(t)),
            RtType::Map(k, v) => format!("Map {} {}", self.display_arg(k), self.display_arg(v)),
            RtType::Tuple(ts) => {
                let parts: Vec<String> = ts.iter().map(|t| self.display(t)).collect();
                format!("({})", parts.join(", "))
            }
            RtType::Named(id, args) => {
                let name = self.decl(*id).map_or("?", |d| d.name.as_str()).to_owned();
                let mut out = name;
                for a in args {
                    out.push(' ');
                    out.push_str(&self.display_arg(a));
                }
                out
            }
            RtType::Param(i) => format!("t{i}"),
            RtType::Func => "function".into(),
        }
    }

    fn display_arg(&self, ty: &RtType) -> String {
        let text = self.display(ty);
        let atomic = match ty {
            RtType::List(_) | RtType::Map(..) => false,
            RtType::Named(_, args) => args.is_empty(),
            _ => true,
        };
        if atomic { text } else { format!("({text})") }
    }
}
