//! The budgeted packer (trellis-daemon §5), pure: given the bundle's units in
//! priority order it keeps the longest prefix whose estimate fits the budget.
//! Tokens are estimated as bytes/4 (impl plan §8.10). The never-drop units
//! (spec, decisions, tests) must fit or the result is `budget-too-small`; the
//! first droppable unit that does not fit drops with everything after it, so the
//! packed set and the estimate grow monotonically with the budget. A unit is
//! dropped whole: one callee file, or one example pair.

use trellis_diag::Diagnostic;

use crate::pieces::BundleFile;

/// The tiers in priority order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tier {
    Spec,
    Tests,
    Previous,
    Reference,
    /// What the definition uses (`callees/`).
    Callees,
    /// The rest of what it could call (`callable/`).
    Callable,
    Examples,
    ModuleProse,
}

impl Tier {
    /// Whether the packer may drop this tier (§4.2, §4.5, §5).
    pub fn droppable(self) -> bool {
        !matches!(self, Tier::Spec | Tier::Tests)
    }

    pub fn name(self) -> &'static str {
        match self {
            Tier::Spec => "spec",
            Tier::Tests => "tests",
            Tier::Previous => "previous soil",
            Tier::Reference => "reference",
            Tier::Callees => "callee signatures",
            Tier::Callable => "callable signatures",
            Tier::Examples => "corpus examples",
            Tier::ModuleProse => "module prose",
        }
    }
}

/// What the packer packs or drops as one: a file, or an example pair.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Unit {
    pub tier: Tier,
    pub files: Vec<BundleFile>,
}

impl Unit {
    pub fn bytes(&self) -> usize {
        self.files.iter().map(|file| file.text.len()).sum()
    }
}

/// A dropped file and why (bundle.json `dropped`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Dropped {
    pub item: String,
    pub reason: String,
}

/// The packer's decision, before the manifest is rendered.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Packing {
    pub packed: Vec<BundleFile>,
    pub dropped: Vec<Dropped>,
    /// Tokens of the packed files (the manifest is added by the caller).
    pub tokens: u64,
}

/// Tokens for `bytes` (bytes/4, rounded up so any content costs something).
pub fn tokens(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4)
}

pub const REASON_OVER_BUDGET: &str = "over budget";
pub const REASON_AFTER: &str = "after over budget";

/// Packs `units` (already in priority order) into `budget` tokens.
pub fn pack(units: &[Unit], budget: u64) -> Result<Packing, Diagnostic> {
    let required: u64 = units
        .iter()
        .filter(|unit| !unit.tier.droppable())
        .map(|unit| tokens(unit.bytes()))
        .sum();
    if required > budget {
        let names: Vec<&str> = units
            .iter()
            .filter(|unit| !unit.tier.droppable())
            .flat_map(|unit| unit.files.iter().map(|file| file.path.as_str()))
            .collect();
        let names = match names.split_last() {
            Some((last, [])) => (*last).to_owned(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
            None => String::new(),
        };
        return Err(Diagnostic::new(
            "budget-too-small",
            format!(
                "a budget of {budget} tokens cannot hold the files that are never dropped: \
                 {names} need about {required} tokens"
            ),
        )
        .with_note(format!(
            "bundle.json, the manifest, is never dropped either but is not counted against \
             the budget, since it lists what was packed: --budget {required} or more packs \
             these (trellis-daemon §5)"
        )));
    }
    let mut packing = Packing {
        packed: Vec::new(),
        dropped: Vec::new(),
        tokens: 0,
    };
    let mut over = false;
    for unit in units {
        let cost = tokens(unit.bytes());
        if unit.tier.droppable() && (over || packing.tokens + cost > budget) {
            let reason = if over {
                REASON_AFTER
            } else {
                REASON_OVER_BUDGET
            };
            over = true;
            packing
                .dropped
                .extend(unit.files.iter().map(|file| Dropped {
                    item: file.path.clone(),
                    reason: reason.to_owned(),
                }));
            continue;
        }
        packing.tokens += cost;
        packing.packed.extend(unit.files.iter().cloned());
    }
    Ok(packing)
}

/// A bundle path is relative, `/`-separated, and never leaves the bundle: no
/// empty, `.` or `..` component, no leading `/`, no `\`. The check `read_context`
/// applies to what an agent asks for (`bundle-path`).
pub fn check_bundle_path(path: &str) -> Result<(), Diagnostic> {
    let escapes = path.is_empty()
        || path.starts_with('/')
        || path.contains('\\')
        || path
            .split('/')
            .any(|part| part.is_empty() || part == "." || part == "..");
    if escapes {
        Err(Diagnostic::new(
            "bundle-path",
            format!("`{path}` is not a path inside the bundle (relative, `/`-separated, no `..`)"),
        ))
    } else {
        Ok(())
    }
}
