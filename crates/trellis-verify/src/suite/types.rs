//! The root's type declarations, prepared once for every suite of a run.

use std::sync::Arc;

use soil_rt::TypeEnv;
use soil_types::{DeclaredEnv, Env};
use trellis_diag::Diagnostic;

/// The root's type declarations as a suite reads them: declared for the
/// checker (a suite's property and clause wrappers are checked with its
/// program) and built for the runner (its compiles and its expect bundle).
/// Both take time in proportion to the declarations, and one suite reads them
/// several times, so a host prepares them once per root and hands every
/// definition's suite the same ones: prepared per suite, testing N definitions
/// of a root with T types cost N × T (design §7.11).
#[derive(Clone, Debug)]
pub struct SuiteTypes {
    declared: DeclaredEnv,
    runtime: Result<Arc<TypeEnv>, Vec<Diagnostic>>,
}

impl SuiteTypes {
    pub fn of(env: &Env) -> SuiteTypes {
        SuiteTypes {
            declared: DeclaredEnv::of(env),
            runtime: soil_eval::type_env_from_decls(env.types.iter().map(|t| &t.node))
                .map(Arc::new),
        }
    }

    /// What a suite's program is checked against.
    pub fn declared(&self) -> &DeclaredEnv {
        &self.declared
    }

    /// What a suite's programs are compiled against, or the declarations'
    /// own problems.
    pub fn runtime(&self) -> Result<&Arc<TypeEnv>, &[Diagnostic]> {
        self.runtime.as_ref().map_err(Vec::as_slice)
    }

    /// [`SuiteTypes::runtime`] for a reader that reports the declarations'
    /// problems elsewhere: `None` when they have some.
    pub fn runtime_env(&self) -> Option<&TypeEnv> {
        self.runtime.as_deref().ok()
    }
}
