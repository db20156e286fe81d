//! The pages a daemon's heap lives on. The binary's allocator is built without
//! transparent huge pages (`no_thp`): a thin client's heap is a few hundred
//! kilobytes, and a 2 MiB page it barely touched would cost every command its
//! zeroing; a load faulted onto huge pages was slower here too (design §7.15).
//! But a daemon that has loaded a root holds hundreds of megabytes of small
//! nodes that an edit reads all over, and after a pause the processor has
//! forgotten their 4 KiB translations: at 20,000 definitions, a third of a
//! prose edit's answer after half a second of idleness went to them.

use std::ops::Range;
use std::os::unix::fs::FileExt;

/// Asks the kernel to gather the loaded root's part of the allocator's arena
/// into transparent huge pages (`MADV_HUGEPAGE` over its dense 2 MiB ranges,
/// which the kernel's `khugepaged` then collapses in the background). Called
/// by the daemon after each answer on the scale of the root and after the
/// load behind stored answers, off the answer's path: the load itself keeps
/// the 4 KiB pages it faults in faster, what a later command adds (an
/// `adopt`'s memos) is gathered after it, and what the root's data does not
/// fill stays on 4 KiB pages — a connection's buffers and a thread's heap,
/// which come and go, would otherwise each hold a whole 2 MiB page (hostile
/// clients doubled the daemon's growth), and the collapse would fill every
/// sparse range. A few milliseconds of reading the page map.
pub fn back_loaded_heap_with_huge_pages() {
    let probe = Box::new(0u64);
    if let Some(arena) = anonymous_span_holding(std::ptr::from_ref::<u64>(&probe) as usize) {
        advise_dense_ranges(&arena);
    }
}

/// A 2 MiB range of the mapping is dense when at least this share of its
/// pages is present: the collapse then adds at most a quarter of it.
const DENSE_QUARTERS: usize = 3;

/// Advises the dense ranges of `mapping` huge pages (adjacent ones as one
/// range) and returns those the kernel took the advice for. Without `/proc`
/// or huge pages it advises nothing, and nothing else changes — the pages are
/// a speed, never a meaning.
fn advise_dense_ranges(mapping: &Range<usize>) -> Vec<Range<usize>> {
    (dense_ranges(mapping).unwrap_or_default().into_iter())
        .filter(|range| {
            #[expect(unsafe_code, reason = "madvise is the kernel's only way to ask")]
            // SAFETY: the range is this process's own memory, read from its
            // map (a range unmapped since is refused, ENOMEM); MADV_HUGEPAGE
            // changes how its pages are backed, never their contents or
            // whether they are mapped.
            let advised = unsafe {
                libc::madvise(
                    range.start as *mut libc::c_void,
                    range.len(),
                    libc::MADV_HUGEPAGE,
                )
            };
            advised == 0
        })
        .collect()
}

/// The huge-page-aligned ranges of `mapping` whose pages are mostly present,
/// read from `/proc/self/pagemap` (bit 63 of a page's entry: present).
fn dense_ranges(mapping: &Range<usize>) -> Option<Vec<Range<usize>>> {
    #[expect(unsafe_code, reason = "sysconf is the C library's")]
    // SAFETY: sysconf reads a constant of the system and takes no pointer.
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok()?;
    let huge = huge_page_size()?;
    let pages_per_huge = huge.checked_div(page)?;
    let pagemap = std::fs::File::open("/proc/self/pagemap").ok()?;
    let mut entries = vec![0u8; pages_per_huge * 8];
    let mut dense: Vec<Range<usize>> = Vec::new();
    let mut start = mapping.start.next_multiple_of(huge);
    while start + huge <= mapping.end {
        pagemap
            .read_exact_at(&mut entries, (start / page * 8) as u64)
            .ok()?;
        let present = (entries.chunks_exact(8))
            .filter(|entry| entry[7] & 0x80 != 0)
            .count();
        if present * 4 >= pages_per_huge * DENSE_QUARTERS {
            match dense.last_mut() {
                Some(last) if last.end == start => last.end += huge,
                _ => dense.push(start..start + huge),
            }
        }
        start += huge;
    }
    Some(dense)
}

/// The size of a transparent huge page, `None` on a kernel without them.
pub fn huge_page_size() -> Option<usize> {
    std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The span of private, writable, anonymous memory of this process around
/// `address`: the mapping that holds it with its neighbours of the same kind
/// that touch it. The allocator reserves its arena as one mapping, and an
/// earlier advice split it into several (one per advised range).
fn anonymous_span_holding(address: usize) -> Option<Range<usize>> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let anonymous: Vec<Range<usize>> = maps.lines().filter_map(anonymous_writable).collect();
    let at = anonymous
        .iter()
        .position(|range| range.contains(&address))?;
    let touching = |pair: &[Range<usize>]| pair[0].end == pair[1].start;
    let first = at
        - (anonymous[..=at].windows(2).rev())
            .take_while(|pair| touching(pair))
            .count();
    let last = at
        + (anonymous[at..].windows(2))
            .take_while(|pair| touching(pair))
            .count();
    Some(anonymous[first].start..anonymous[last].end)
}

/// The range of a line of `/proc/self/maps` that maps private, writable,
/// anonymous memory (`rw-p`, no file), the kind the allocator's arena is.
fn anonymous_writable(line: &str) -> Option<Range<usize>> {
    let mut fields = line.split_whitespace();
    let (start, end) = fields.next()?.split_once('-')?;
    let permissions = fields.next()?;
    let file = fields.nth(3);
    if permissions != "rw-p" || file.is_some() {
        return None;
    }
    Some(usize::from_str_radix(start, 16).ok()?..usize::from_str_radix(end, 16).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HUGE: usize = 2 << 20;

    /// A fresh anonymous mapping of `huge_pages` 2 MiB ranges (plus one, to
    /// align them), every `stride`-th page of range `i` touched when
    /// `touched(i)`.
    fn mapping(huge_pages: usize, touched: impl Fn(usize) -> Option<usize>) -> Range<usize> {
        let len = (huge_pages + 1) * HUGE;
        #[expect(unsafe_code, reason = "a mapping the test controls page by page")]
        // SAFETY: a private anonymous mapping of our own, written only
        // within its bounds, never unmapped while the test reads it (it
        // lives until the process ends).
        unsafe {
            let at = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(at, libc::MAP_FAILED);
            let start = (at as usize).next_multiple_of(HUGE);
            for i in 0..huge_pages {
                if let Some(stride) = touched(i) {
                    for page in (0..HUGE).step_by(4096 * stride) {
                        *((start + i * HUGE + page) as *mut u8) = 1;
                    }
                }
            }
            start..start + huge_pages * HUGE
        }
    }

    fn huge_pages_available() -> bool {
        let available = huge_page_size().is_some();
        if !available {
            eprintln!("skipped: this kernel has no transparent huge pages");
        }
        available
    }

    /// Full ranges are advised, adjacent ones as one; a range a quarter
    /// touched and an untouched one are not. The kernel lists the advice
    /// among the mapping's flags (`hg`).
    #[test]
    fn the_dense_ranges_are_advised_and_the_sparse_ones_are_not() {
        if !huge_pages_available() {
            return;
        }
        // Ranges 0 and 1 full, 2 a quarter touched, 3 untouched, 4 full.
        let touched = |i: usize| match i {
            0 | 1 | 4 => Some(1),
            2 => Some(4),
            _ => None,
        };
        let m = mapping(5, touched);
        let advised = advise_dense_ranges(&m);
        let expected = [m.start..m.start + 2 * HUGE, m.start + 4 * HUGE..m.end];
        assert_eq!(advised, expected);
        for range in &advised {
            assert!(flags_of(range.start).contains(&"hg".to_owned()));
        }
        assert!(!flags_of(m.start + 2 * HUGE).contains(&"hg".to_owned()));
    }

    /// A mapping split by an earlier advice is still one span, and the span
    /// ends where memory of another kind begins. The split is made by an
    /// advice every kernel takes (`MADV_DONTFORK`, a flag on the range as
    /// `MADV_HUGEPAGE` is), so the test runs with or without huge pages.
    #[test]
    fn the_arena_s_span_holds_the_pieces_an_advice_split_it_into() {
        let m = mapping(4, |_| Some(1));
        #[expect(unsafe_code, reason = "splitting the test's own mapping")]
        // SAFETY: both ranges lie inside the test's own mapping; neither call
        // changes its contents, and the last range is only read from then on.
        unsafe {
            let second = (m.start + HUGE) as *mut libc::c_void;
            assert_eq!(libc::madvise(second, HUGE, libc::MADV_DONTFORK), 0);
            let fourth = (m.start + 3 * HUGE) as *mut libc::c_void;
            assert_eq!(libc::mprotect(fourth, HUGE, libc::PROT_READ), 0);
        }
        let span = anonymous_span_holding(m.start + HUGE / 2).expect("mapped");
        assert!(span.start <= m.start, "{span:x?} begins inside {m:x?}");
        assert_eq!(span.end, m.start + 3 * HUGE, "{span:x?} in {m:x?}");
    }

    /// The `VmFlags` of the mapping that starts at `start`.
    fn flags_of(start: usize) -> Vec<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps is readable");
        let header = format!("{start:x}-");
        let entry = smaps
            .split_inclusive('\n')
            .skip_while(|line| !line.starts_with(&header))
            .find_map(|line| line.strip_prefix("VmFlags:"))
            .expect("the mapping has flags");
        entry.split_whitespace().map(str::to_owned).collect()
    }
}
