//! A unified line diff, for showing a person how a spec moved: the write-back an
//! answer made, or what changed since a question was asked (trellis-daemon
//! §8.2). Specs are small and edits local, so the lines both texts share at
//! their start and end are set aside and a longest common subsequence is
//! computed over what is left; past [`MAX_CELLS`] of that table the middle is
//! shown as replaced whole rather than spending quadratic memory on a diff a
//! person would not read anyway.

/// The largest LCS table computed (lines left × lines right), about 16 MiB.
const MAX_CELLS: usize = 4_000_000;

/// Lines of unchanged context around each change.
const CONTEXT: usize = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Same,
    Removed,
    Added,
}

/// `old` → `new` as a unified diff (`---`/`+++` headers, `@@` hunks with three
/// lines of context); the empty string when the texts are equal. A last line
/// without a newline is marked as `diff` marks it.
pub fn unified(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    if old == new {
        return String::new();
    }
    let (a, b): (Vec<&str>, Vec<&str>) = (
        old.split_inclusive('\n').collect(),
        new.split_inclusive('\n').collect(),
    );
    let script = edit_script(&a, &b);
    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    // Each entry: the op, and the line's index in `a` (Same, Removed) or `b` (Added).
    let changes: Vec<usize> = script
        .iter()
        .enumerate()
        .filter(|(_, (op, _))| *op != Op::Same)
        .map(|(at, _)| at)
        .collect();
    let mut at = 0;
    while at < changes.len() {
        // A hunk runs from CONTEXT before its first change to CONTEXT after its
        // last, merging changes whose contexts touch.
        let first = changes[at];
        let mut last = first;
        while at + 1 < changes.len() && changes[at + 1] <= last + 2 * CONTEXT + 1 {
            at += 1;
            last = changes[at];
        }
        at += 1;
        let start = first.saturating_sub(CONTEXT);
        let end = (last + CONTEXT + 1).min(script.len());
        let hunk = &script[start..end];
        // Line numbers where the hunk starts on each side: count the lines of
        // each side that come before it.
        let before = &script[..start];
        let a_start = before.iter().filter(|(op, _)| *op != Op::Added).count();
        let b_start = before.iter().filter(|(op, _)| *op != Op::Removed).count();
        let a_len = hunk.iter().filter(|(op, _)| *op != Op::Added).count();
        let b_len = hunk.iter().filter(|(op, _)| *op != Op::Removed).count();
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            range(a_start, a_len),
            range(b_start, b_len)
        ));
        for &(op, index) in hunk {
            let (mark, line) = match op {
                Op::Same => (' ', a[index]),
                Op::Removed => ('-', a[index]),
                Op::Added => ('+', b[index]),
            };
            out.push(mark);
            out.push_str(line);
            if !line.ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
    out
}

/// A hunk's range as `diff -u` prints it: `start,len` (1-based), or for an
/// empty range the line before it.
fn range(start: usize, len: usize) -> String {
    match len {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{len}", start + 1),
    }
}

/// The lines of `a` and `b` in order as kept, removed or added, removals of a
/// change before its additions.
fn edit_script(a: &[&str], b: &[&str]) -> Vec<(Op, usize)> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (middle_a, middle_b) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut script: Vec<(Op, usize)> = (0..prefix).map(|i| (Op::Same, i)).collect();
    let (n, m) = (middle_a.len(), middle_b.len());
    if n.saturating_mul(m) > MAX_CELLS {
        script.extend((0..n).map(|i| (Op::Removed, prefix + i)));
        script.extend((0..m).map(|j| (Op::Added, prefix + j)));
    } else {
        // lcs[i][j]: the longest common subsequence of middle_a[i..] and middle_b[j..].
        let width = m + 1;
        let mut lcs = vec![0u32; (n + 1) * width];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[i * width + j] = if middle_a[i] == middle_b[j] {
                    lcs[(i + 1) * width + j + 1] + 1
                } else {
                    lcs[(i + 1) * width + j].max(lcs[i * width + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            if i < n && j < m && middle_a[i] == middle_b[j] {
                script.push((Op::Same, prefix + i));
                i += 1;
                j += 1;
            } else if i < n && (j == m || lcs[(i + 1) * width + j] >= lcs[i * width + j + 1]) {
                script.push((Op::Removed, prefix + i));
                i += 1;
            } else {
                script.push((Op::Added, prefix + j));
                j += 1;
            }
        }
    }
    script.extend((0..suffix).map(|k| (Op::Same, a.len() - suffix + k)));
    script
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    #[test]
    fn equal_texts_have_no_diff() {
        assert_eq!(unified("a\nb\n", "a\nb\n", "a", "b"), "");
    }

    #[test]
    fn an_appended_section_is_one_hunk_with_context() {
        let old = "1\n2\n3\n4\n5\n";
        let new = "1\n2\n3\n4\n5\n\n## C\n";
        expect![[r#"
            --- a/f.tr
            +++ b/f.tr
            @@ -3,3 +3,5 @@
             3
             4
             5
            +
            +## C
        "#]]
        .assert_eq(&unified(old, new, "a/f.tr", "b/f.tr"));
    }

    #[test]
    fn distant_changes_are_separate_hunks_and_near_ones_merge() {
        let old: String = (1..=20).map(|i| format!("{i}\n")).collect();
        let new: String = (1..=20)
            .filter(|&i| i != 18)
            .map(|i| match i {
                2 => "two\n".to_owned(),
                4 => "four\n".to_owned(),
                i => format!("{i}\n"),
            })
            .collect();
        expect![[r#"
            --- old
            +++ new
            @@ -1,7 +1,7 @@
             1
            -2
            +two
             3
            -4
            +four
             5
             6
             7
            @@ -15,6 +15,5 @@
             15
             16
             17
            -18
             19
             20
        "#]]
        .assert_eq(&unified(&old, &new, "old", "new"));
    }

    #[test]
    fn a_missing_final_newline_is_marked_and_an_empty_side_is_line_zero() {
        expect![[r#"
            --- old
            +++ new
            @@ -0,0 +1 @@
            +only
            \ No newline at end of file
        "#]]
        .assert_eq(&unified("", "only", "old", "new"));
    }

    #[test]
    fn a_middle_too_large_for_the_table_is_shown_replaced_whole() {
        let old: String = (0..2_100).map(|i| format!("a{i}\n")).collect();
        let new: String = (0..2_100).map(|i| format!("b{i}\n")).collect();
        let diff = unified(&old, &new, "old", "new");
        assert!(diff.starts_with("--- old\n+++ new\n@@ -1,2100 +1,2100 @@\n-a0\n"));
        assert_eq!(diff.lines().filter(|l| l.starts_with('-')).count(), 2_101);
    }
}
