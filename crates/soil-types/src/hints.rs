//! Repair hints for a newcomer's commonest mistakes: the nearest known name to a
//! misspelled one ("did you mean `to_lower`?"), found by edit distance over the
//! names in scope — values, types and constructors alike. Pure string work; the checker decides what is in scope.

use std::cell::Cell;

/// How many edit distances one check may compute for hints. A hint costs a
/// distance per candidate of about the right length; a file of thousands of
/// misspellings among thousands of names would otherwise spend time in
/// proportion to their product. A quarter of a million distances between short
/// names is some tens of milliseconds, and hints for hundreds of misspellings
/// among a thousand names; past it, messages come without hints. Each check
/// (and each declaration of an environment) has its own allowance, so what a
/// check reports never depends on what ran before it.
const DISTANCE_BUDGET: usize = 250_000;

/// One check's hint finder, with what is left of its [`DISTANCE_BUDGET`].
pub(crate) struct Hints {
    left: Cell<usize>,
}

impl Default for Hints {
    fn default() -> Hints {
        Hints {
            left: Cell::new(DISTANCE_BUDGET),
        }
    }
}

impl Hints {
    /// A finder that finds nothing, for findings nobody will read.
    pub(crate) fn none() -> Hints {
        Hints { left: Cell::new(0) }
    }

    /// The candidate nearest to `name` by edit distance (transpositions count
    /// as one edit), if it is close enough to be a likely misspelling: at most
    /// one edit for names of three or four characters, two up to eight, three
    /// beyond, none for one or two (every short name is near every other). Ties
    /// go to the candidate that sorts first, so the hint is deterministic. Once
    /// the budget is spent, none.
    pub(crate) fn closest<'a>(
        &self,
        name: &str,
        candidates: impl IntoIterator<Item = &'a str>,
    ) -> Option<&'a str> {
        let name: Vec<char> = name.chars().collect();
        let limit = match name.len() {
            0..=2 => return None,
            3..=4 => 1,
            5..=8 => 2,
            _ => 3,
        };
        let mut best: Option<(usize, &str)> = None;
        let mut scratch = Scratch::default();
        for candidate in candidates {
            // Lengths further apart than the limit cannot be near: skipped
            // without a distance (and so without spending the budget).
            let length = candidate.chars().count();
            if length.abs_diff(name.len()) > limit {
                continue;
            }
            let left = self.left.get();
            if left == 0 {
                return None;
            }
            self.left.set(left - 1);
            let Some(d) = bounded_distance(&name, candidate, limit, &mut scratch) else {
                continue;
            };
            if d == 0 {
                continue;
            }
            if best.is_none_or(|(bd, bc)| (d, candidate) < (bd, bc)) {
                best = Some((d, candidate));
            }
        }
        best.map(|(_, candidate)| candidate)
    }
}

/// [`Hints::closest`] with a budget of its own, for a single lookup.
#[cfg(test)]
pub(crate) fn closest<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    Hints::default().closest(name, candidates)
}

/// `; did you mean `name`?` for a near name, else nothing.
pub(crate) fn did_you_mean(near: Option<&str>) -> String {
    near.map(|name| format!("; did you mean `{name}`?"))
        .unwrap_or_default()
}

/// Optimal string alignment distance: insertions, deletions, substitutions and
/// transpositions of adjacent characters.
#[cfg(test)]
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    bounded_distance(&a, b, usize::MAX, &mut Scratch::default()).unwrap_or(usize::MAX)
}

/// Buffers [`bounded_distance`] reuses from one candidate to the next.
#[derive(Default)]
struct Scratch {
    chars: Vec<char>,
    cells: Vec<usize>,
}

/// The optimal string alignment distance from `a` to `b` if it is at most
/// `limit`, else `None`, computed row by row and given up as soon as whole rows
/// exceed the limit.
fn bounded_distance(a: &[char], b: &str, limit: usize, scratch: &mut Scratch) -> Option<usize> {
    scratch.chars.clear();
    scratch.chars.extend(b.chars());
    let b = &scratch.chars;
    let width = b.len() + 1;
    scratch.cells.clear();
    scratch.cells.resize((a.len() + 1) * width, 0);
    let d = &mut scratch.cells;
    for i in 0..=a.len() {
        d[i * width] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(width) {
        *cell = j;
    }
    for i in 1..=a.len() {
        let mut row_min = d[i * width];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * width + j] + 1)
                .min(d[i * width + j - 1] + 1)
                .min(d[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * width + j - 2] + 1);
            }
            d[i * width + j] = best;
            row_min = row_min.min(best);
        }
        // A transposition reaches back two rows, so a row over the limit
        // ends the search only when the row before it was over too.
        if row_min > limit && i > 1 && d[(i - 1) * width..i * width].iter().all(|&c| c > limit) {
            return None;
        }
    }
    let found = d[a.len() * width + b.len()];
    (found <= limit).then_some(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_names_are_suggested_and_far_ones_are_not() {
        let names = ["to_lower", "to_upper", "trim", "len", "filter"];
        assert_eq!(closest("to_lowr", names), Some("to_lower"));
        assert_eq!(closest("lne", names), Some("len"));
        assert_eq!(closest("fitler", names), Some("filter"));
        assert_eq!(closest("median", names), None);
        assert_eq!(closest("len", names), None);
        assert_eq!(distance("kitten", "sitting"), 3);
    }
}
