//! Checking time grows about linearly with the input (issue 41): a generous
//! bound on the ratio between two sizes of each hostile shape, measured in one
//! run, not a wall-clock figure (the figures are `check_bench`'s). One test in
//! its own binary, so no other test of the suite runs beside its clock; the
//! clock is the thread's own CPU time, so a machine busy with other work (a
//! build, another suite) slows both sides alike instead of whichever one it
//! happens to overlap, and a shape over its bound is measured once more
//! before it fails: noise does not repeat, a quadratic walk (five times over
//! the bound) does.

#![allow(clippy::disallowed_methods, reason = "tests read the clock")]

#[path = "../../soil-syntax/tests/common/hostile.rs"]
mod hostile;
mod support;

use std::time::Duration;

use hostile::Shape;
use support::file_check::check_file;

/// The CPU time this thread has used, from the system's per-thread clock
/// (Linux's `/proc/thread-self/schedstat` moves in scheduler ticks, too
/// coarse for a run of a millisecond).
#[expect(unsafe_code, reason = "clock_gettime has no safe binding in std")]
fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through the pointer, which
    // points at the live local above.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    assert_eq!(status, 0, "the thread's CPU clock");
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// How long `work` took on the thread's CPU clock.
fn timed(work: impl FnOnce()) -> Duration {
    let start = thread_cpu_time();
    work();
    thread_cpu_time().saturating_sub(start)
}

/// The best of `runs` timings of checking `text` (parse included).
fn best_time(text: &str, runs: usize) -> Duration {
    (0..runs)
        .map(|_| timed(|| drop(check_file(text))))
        .min()
        .expect("at least one run")
}

/// The input grows sixteenfold, from 4 to 64 KB: linear checking takes about
/// 16 times as long, a quadratic walk 256 times (the cubic one of issue 41,
/// 4,096).
const SMALL: usize = 4_000;
const LARGE: usize = 64_000;

/// The bound on the ratio, as a multiple of the size ratio: three times
/// linear, for a shared machine and an allocator whose cost per byte is not
/// constant either (a debug build's ratio between 8 and 32 KB reached 2.6
/// times linear on linear code), and still five times under quadratic at 16x.
const SLACK: f64 = 3.2;

/// The sizes a shape is measured at. Applications chained through
/// parentheses give a local function as many arrows as a chain may
/// (256 arguments, `MAX_APPLIED` in `unify.rs`), and each later use of it unifies
/// them all: linear in the uses, but some 200 µs each in a release build, so
/// it is measured from 8 to 24 KB (a debug build's 64 KB takes half a
/// minute). Its first 4 KB are the chain itself, so at 8 KB the uses are
/// already the greater part.
fn sizes(shape: Shape) -> (usize, usize) {
    match shape {
        Shape::ChainedApplications => (8_000, 24_000),
        _ => (SMALL, LARGE),
    }
}

/// The time of checking `shape` at both sizes, their ratio, and its bound.
fn ratio(shape: Shape) -> (Duration, Duration, f64, f64) {
    let (small_size, large_size) = sizes(shape);
    let small = best_time(&shape.text(small_size), 3);
    let large = best_time(&shape.text(large_size), 2);
    let bound = SLACK * large_size as f64 / small_size as f64;
    (
        small,
        large,
        large.as_secs_f64() / small.as_secs_f64().max(1e-4),
        bound,
    )
}

/// Whether a measured pair grew faster than its bound allows. Pairs that
/// finish in under 10 ms at the larger size measure the machine more than the
/// checker and are not judged.
fn over_bound((_, large, ratio, bound): (Duration, Duration, f64, f64)) -> bool {
    large > Duration::from_millis(10) && ratio > bound
}

#[test]
fn checking_time_grows_about_linearly() {
    let shapes = [
        Shape::WideApplications,
        Shape::KnownWideApplications,
        Shape::UnknownNames,
        Shape::HugeRecord,
        Shape::HugeSum,
        Shape::HugeList,
        Shape::HugeRow,
        Shape::UnclosedThenDefinitions,
        Shape::ManyParameters,
        Shape::ChainedApplications,
    ];
    let mut report = Vec::new();
    let mut failed = Vec::new();
    for shape in shapes {
        let mut measured = ratio(shape);
        if over_bound(measured) {
            measured = ratio(shape);
        }
        let (small, large, ratio, bound) = measured;
        report.push(format!(
            "{:<26} {:>9.2?} {:>9.2?} {ratio:.1}x (bound {bound:.0}x)",
            shape.name(),
            small,
            large
        ));
        if over_bound(measured) {
            failed.push(shape.name());
        }
    }
    eprintln!("{}", report.join("\n"));
    assert!(
        failed.is_empty(),
        "superlinear: {failed:?}\n{}",
        report.join("\n")
    );
}
