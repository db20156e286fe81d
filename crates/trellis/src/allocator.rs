//! What the process asks of its allocator beyond allocating: huge pages for
//! a one-shot command that loads a root, and the free pages an idle daemon
//! hands back (design §7.15).
//!
//! The binary's allocator is mimalloc built without transparent huge pages:
//! most runs of `trellis` are thin clients of a daemon, and a client that
//! touched a few kilobytes of each 2 MiB page would zero all of it. A
//! `--no-daemon` command loads the root and touches hundreds of megabytes,
//! where 4 KiB pages cost one fault each (about 90,000 at 20,000
//! definitions): with huge pages its cold `check` takes 7% less time. It
//! exits without freeing what it built. A daemon does not opt in: it frees
//! and hands back pages in small ranges, each splitting a huge page, and its
//! first `check` measured slower with them (0.95-1.0 s against 1.1-1.5 s at
//! 20,000 definitions) and its resident set larger.

#![expect(unsafe_code, reason = "mimalloc's and the kernel's C entry points")]

/// Asks the kernel for transparent huge pages over the memory mimalloc has
/// reserved: its arena, a gigabyte of address space reserved at the first
/// allocation, in which a root's load fits up to far past 20,000
/// definitions (memory past it comes from arenas reserved later, with small
/// pages). Where the kernel's setting is `madvise` (the default of many
/// distributions) this is what grants them; under `always` it changes
/// nothing, under `never` the kernel ignores it. mimalloc names no arena it
/// reserved itself, so the mapping is the one that holds a fresh allocation.
/// Once per process; a no-op off Linux or when anything is not as expected.
pub fn prefer_huge_pages() {
    #[cfg(target_os = "linux")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            let probe = Box::new(0u64);
            let at = std::ptr::from_ref::<u64>(&probe) as usize;
            let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
                return;
            };
            let Some((start, end)) = maps.lines().find_map(|line| mapping_holding(line, at)) else {
                return;
            };
            // SAFETY: the range is one whole mapping of this process; the
            // advice changes how its pages are backed, never what they hold.
            // A refusal (a kernel without huge pages) leaves it as it was.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        });
    }
}

/// The range of a `/proc/self/maps` line (`start-end perms ...`, hexadecimal)
/// when it holds the address `at`.
#[cfg(target_os = "linux")]
fn mapping_holding(line: &str, at: usize) -> Option<(usize, usize)> {
    let range = line.split_whitespace().next()?;
    let (start, end) = range.split_once('-')?;
    let start = usize::from_str_radix(start, 16).ok()?;
    let end = usize::from_str_radix(end, 16).ok()?;
    (start <= at && at < end).then_some((start, end))
}

/// Hands the pages the allocator holds free back to the system. mimalloc
/// purges a freed page a second after it is freed, but only when an
/// allocation comes by to do it, and an idle daemon makes none: without this
/// it would hold the peak of its last long answer (a first load's parse
/// trees, freed by the tidy once it is out) until the next request. A few
/// milliseconds, off the answer's path.
pub fn return_free_pages() {
    // SAFETY: mi_collect takes no pointer and may run on any thread at any
    // time; without mimalloc as the global allocator (tests) it tidies an
    // empty heap.
    unsafe {
        libmimalloc_sys::mi_collect(true);
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::mapping_holding;

    #[test]
    fn a_mapping_holds_the_addresses_from_its_start_up_to_its_end() {
        let line = "20000000000-20040000000 rw-p 00000000 00:00 0";
        let range = Some((0x200_0000_0000, 0x200_4000_0000));
        assert_eq!(mapping_holding(line, 0x200_0000_0000), range);
        assert_eq!(mapping_holding(line, 0x200_3fff_ffff), range);
        assert_eq!(mapping_holding(line, 0x200_4000_0000), None);
        assert_eq!(mapping_holding(line, 0x1ff_ffff_ffff), None);
        assert_eq!(mapping_holding("", 0), None);
        assert_eq!(mapping_holding("zz-10 rw-p", 1), None);
    }

    #[test]
    fn the_allocators_memory_is_found_in_this_process() {
        let probe = Box::new(0u64);
        let at = std::ptr::from_ref::<u64>(&probe) as usize;
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let found = maps.lines().find_map(|line| mapping_holding(line, at));
        assert!(found.is_some_and(|(start, end)| start <= at && at < end));
    }
}
