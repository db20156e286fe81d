//! Repair hints for a newcomer's commonest mistakes: the nearest known name to a
//! misspelled one ("did you mean `to_lower`?"), found by edit distance over the
//! names in scope — values, types and constructors alike. Pure string work; the checker decides what is in scope.

/// The candidate nearest to `name` by edit distance (transpositions count as
/// one edit), if it is close enough to be a likely misspelling: at most one
/// edit for names of three or four characters, two up to eight, three beyond,
/// none for one or two (every short name is near every other). Ties go
/// to the candidate that sorts first, so the hint is deterministic.
pub(crate) fn closest<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = match name.chars().count() {
        0..=2 => 0,
        3..=4 => 1,
        5..=8 => 2,
        _ => 3,
    };
    candidates
        .into_iter()
        .filter(|candidate| *candidate != name)
        .map(|candidate| (distance(name, candidate), candidate))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, candidate)| candidate)
}

/// `; did you mean `name`?` for a near name, else nothing.
pub(crate) fn did_you_mean(near: Option<&str>) -> String {
    near.map(|name| format!("; did you mean `{name}`?"))
        .unwrap_or_default()
}

/// Optimal string alignment distance: insertions, deletions, substitutions and
/// transpositions of adjacent characters.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for i in 0..=a.len() {
        d[i * width] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(width) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * width + j] + 1)
                .min(d[i * width + j - 1] + 1)
                .min(d[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * width + j - 2] + 1);
            }
            d[i * width + j] = best;
        }
    }
    d[a.len() * width + b.len()]
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
