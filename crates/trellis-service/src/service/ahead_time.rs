//! How long the daemon's thread that asks ahead worked on the changes the next
//! request reports (design §7.10). Its answers are that request's work done
//! early, so `timings.ahead_us` counts them beside the request's own time; a
//! request that waited for them counts the time both spent once, since the
//! waiting and the answering are the same stretch.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The stretches the thread that asks ahead worked since the last request
/// took them; shared between the service and the thread.
#[derive(Clone, Default)]
pub(crate) struct AheadClock(Arc<Mutex<Stretches>>);

#[derive(Default)]
struct Stretches {
    /// Finished stretches, summed.
    done: Duration,
    /// The stretch under way: its start, and its end once it ended.
    current: Option<(Instant, Option<Instant>)>,
}

impl AheadClock {
    /// Starts a stretch now (the change is being applied); the thread ends it
    /// once it has answered.
    pub(crate) fn start(&self) -> AheadStretch {
        let now = Instant::now();
        let mut stretches = self.lock();
        if let Some((start, end)) = stretches.current.take() {
            stretches.done += end.unwrap_or(now).saturating_duration_since(start);
        }
        stretches.current = Some((now, None));
        AheadStretch(self.clone())
    }

    /// The time worked ahead since the last request that took it, apart from
    /// what overlaps `request` (its start and end); a stretch still under way
    /// counts up to the request's end.
    pub(crate) fn take_for(&self, (start, end): (Instant, Instant)) -> Duration {
        let mut stretches = self.lock();
        let mut worked = std::mem::take(&mut stretches.done);
        if let Some((ahead_start, ahead_end)) = stretches.current.take() {
            let ahead_end = ahead_end.unwrap_or(end);
            let overlap = ahead_end
                .min(end)
                .saturating_duration_since(ahead_start.max(start));
            worked += ahead_end.saturating_duration_since(ahead_start) - overlap;
        }
        worked
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Stretches> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A stretch of work ahead under way; [`AheadStretch::end`] ends it.
pub(crate) struct AheadStretch(AheadClock);

impl AheadStretch {
    pub(crate) fn end(self) {
        let now = Instant::now();
        let mut stretches = self.0.lock();
        if let Some((_, end @ None)) = &mut stretches.current {
            *end = Some(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// Stretches are set by hand: (start, end) offsets from one instant.
    fn clock(done: Duration, current: Option<(u64, Option<u64>)>, base: Instant) -> AheadClock {
        let at = |ms: u64| base + MS * ms as u32;
        let clock = AheadClock::default();
        *clock.lock() = Stretches {
            done,
            current: current.map(|(start, end)| (at(start), end.map(at))),
        };
        clock
    }

    #[test]
    fn work_ahead_counts_once_beside_the_request_that_waited_for_it() {
        let base = Instant::now();
        let request = |start: u32, end: u32| (base + MS * start, base + MS * end);
        // Answered before the request came: both count.
        assert_eq!(
            clock(MS, Some((0, Some(2))), base).take_for(request(5, 6)),
            3 * MS
        );
        // The request waited from 1 ms for answers done at 3: the overlap once.
        assert_eq!(
            clock(Duration::ZERO, Some((0, Some(3))), base).take_for(request(1, 4)),
            MS
        );
        // Still answering when the request ended: up to its end.
        assert_eq!(
            clock(Duration::ZERO, Some((0, None)), base).take_for(request(2, 5)),
            2 * MS
        );
        // Taken: the next request finds nothing.
        let taken = clock(MS, Some((0, Some(1))), base);
        taken.take_for(request(2, 3));
        assert_eq!(taken.take_for(request(4, 5)), Duration::ZERO);
    }

    #[test]
    fn a_stretch_ends_once_and_a_new_one_keeps_the_last() {
        let clock = AheadClock::default();
        let first = clock.start();
        first.end();
        let second = clock.start();
        let stretches = clock.lock();
        assert!(stretches.current.is_some_and(|(_, end)| end.is_none()));
        drop(stretches);
        second.end();
        assert!(clock.lock().current.is_some_and(|(_, end)| end.is_some()));
    }
}
