//! The pages a daemon's heap lives on. The binary's allocator is built without
//! transparent huge pages (`no_thp`): a thin client's heap is a few hundred
//! kilobytes, and a 2 MiB page it barely touched would cost every command its
//! zeroing; a load faulted onto huge pages was slower here too (design §7.15).
//! But a daemon that has loaded a root holds hundreds of megabytes of small
//! nodes that an edit reads all over, and after a pause the processor has
//! forgotten their 4 KiB translations: at 20,000 definitions, a third of a
//! prose edit's answer after half a second of idleness went to them.

use std::sync::Once;

/// Asks the kernel, once, to back the allocator's arena with transparent huge
/// pages from now on (`MADV_HUGEPAGE`): what the daemon allocates next is
/// faulted in 2 MiB at a time, and the kernel's background collapse
/// (`khugepaged`) gathers what is already there, a few megabytes a second.
/// Called by the daemon once its first answer on the scale of the root is
/// out, so the load itself keeps the 4 KiB pages it faults in faster.
pub fn back_arena_with_huge_pages() {
    static ADVISED: Once = Once::new();
    ADVISED.call_once(|| {
        advise_arena();
    });
}

/// Advises the mapping that holds a fresh heap allocation: the allocator's
/// first arena, where a daemon's heap lives (an arena reserved later, for a
/// heap past its first gibibyte, keeps 4 KiB pages). Returns the mapping if
/// the kernel took the advice: without `/proc` or huge pages it does not, and
/// nothing else changes — the pages are a speed, never a meaning.
fn advise_arena() -> Option<std::ops::Range<usize>> {
    let probe = Box::new(0u64);
    let mapping = mapping_holding(std::ptr::from_ref::<u64>(&probe) as usize)?;
    #[expect(unsafe_code, reason = "madvise is the kernel's only way to ask")]
    // SAFETY: the range is one whole mapping of this process, read from its
    // own map; MADV_HUGEPAGE changes how its pages are backed, never their
    // contents or whether they are mapped.
    let advised = unsafe {
        libc::madvise(
            mapping.start as *mut libc::c_void,
            mapping.len(),
            libc::MADV_HUGEPAGE,
        )
    };
    (advised == 0).then_some(mapping)
}

/// The range of the mapping of this process that holds `address`.
fn mapping_holding(address: usize) -> Option<std::ops::Range<usize>> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines().find_map(|line| {
        let (start, end) = line.split_once(' ')?.0.split_once('-')?;
        let range = usize::from_str_radix(start, 16).ok()?..usize::from_str_radix(end, 16).ok()?;
        range.contains(&address).then_some(range)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The advice lands on the mapping a fresh allocation was made in: the
    /// kernel lists it among the mapping's flags (`hg`), where it has huge
    /// pages to give.
    #[test]
    fn the_heap_s_mapping_is_advised_huge_pages() {
        if !std::path::Path::new("/sys/kernel/mm/transparent_hugepage/enabled").exists() {
            eprintln!("skipped: this kernel has no transparent huge pages");
            return;
        }
        let mapping = advise_arena().expect("the kernel takes the advice");
        assert!(flags_of(&mapping).contains(&"hg".to_owned()));
    }

    /// The `VmFlags` of the mapping that starts at `mapping.start`.
    fn flags_of(mapping: &std::ops::Range<usize>) -> Vec<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps is readable");
        let header = format!("{:x}-", mapping.start);
        let entry = smaps
            .split_inclusive('\n')
            .skip_while(|line| !line.starts_with(&header))
            .find_map(|line| line.strip_prefix("VmFlags:"))
            .expect("the mapping has flags");
        entry.split_whitespace().map(str::to_owned).collect()
    }
}
