//! The rules of several jobs at once (design §4.9): which queued entry starts
//! next, what an entry waits on, whom a callee that did not land holds, and the
//! caps over one request's jobs together. The queue (`queue`) owns the state,
//! the threads and the events; this module only answers questions about them,
//! so each rule is tested here without a daemon or an agent.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::providers::Totals;

/// The most jobs one request may run at once (`--jobs`): each is an agent's
/// process group and a database of its own in the daemon.
pub const MAX_JOBS: usize = 64;

/// How many jobs run at once when a request does not say: one per core, at
/// most four — the agents mostly wait on their models, but every tool call and
/// gate takes the daemon's service lock and a core.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(4)
}

/// What the scheduler reads of a queued entry.
pub struct Queued<'a> {
    /// The queue key (`module::name`, or a triage's key).
    pub key: &'a str,
    /// The definition the entry works on: two entries of one subject never run
    /// at once.
    pub subject: &'a str,
    /// Queue keys that must land first.
    pub waits_on: &'a BTreeSet<String>,
    /// Its request's `--jobs`.
    pub limit: usize,
}

/// What it reads of a running entry.
pub struct Active<'a> {
    pub subject: &'a str,
    /// False while a finished job waits for its turn to land: it has no agent
    /// and must not keep one from starting.
    pub holds_slot: bool,
}

/// The index (in queue order) of the first entry that may start now: nothing
/// it waits on is unlanded, its request's limit has a free slot, and nothing
/// of its subject runs.
pub fn next_to_start(queue: &[Queued<'_>], running: &[Active<'_>]) -> Option<usize> {
    let busy = running.iter().filter(|active| active.holds_slot).count();
    queue.iter().position(|entry| {
        entry.waits_on.is_empty()
            && busy < entry.limit
            && !running.iter().any(|active| active.subject == entry.subject)
    })
}

/// What each definition of a callee-first `ordered` batch waits on: the
/// definitions it may call that are queued or running already (`in_queue`), or
/// come before it in the batch. A callee after it (a cycle, broken by the
/// order) is not waited on, so the waits never form a cycle.
pub fn batch_waits(
    ordered: &[String],
    may_call: &BTreeMap<String, BTreeSet<String>>,
    in_queue: &BTreeSet<String>,
) -> Vec<BTreeSet<String>> {
    ordered
        .iter()
        .enumerate()
        .map(|(position, def)| {
            let earlier = &ordered[..position];
            may_call
                .get(def)
                .into_iter()
                .flatten()
                .filter(|callee| in_queue.contains(*callee) || earlier.contains(callee))
                .cloned()
                .collect()
        })
        .collect()
}

/// Whom `ended` holds when it ends without landing (failed, asked, held):
/// every queued entry that waits on it, and on those, transitively — each with
/// the key it waited on. `queue` is `(key, waits_on)` in queue order.
pub fn held_by(queue: &[(&str, &BTreeSet<String>)], ended: &str) -> Vec<(usize, String)> {
    let mut held: Vec<(usize, String)> = Vec::new();
    let mut frontier = vec![ended.to_owned()];
    while let Some(callee) = frontier.pop() {
        for (index, (key, waits_on)) in queue.iter().enumerate() {
            if waits_on.contains(&callee) && !held.iter().any(|(i, _)| *i == index) {
                held.push((index, callee.clone()));
                frontier.push((*key).to_owned());
            }
        }
    }
    held.sort();
    held
}

/// One request's jobs together, for its total caps (`Totals`): what the jobs
/// that ended spent, and what each running one has spent so far.
pub struct Batch {
    pub totals: Totals,
    started: Instant,
    spent: Mutex<Spent>,
}

#[derive(Default)]
struct Spent {
    ended_turns: u64,
    ended_cost: f64,
    /// By job id: tool calls and cost so far.
    live: BTreeMap<String, (u64, f64)>,
}

impl Spent {
    fn turns(&self) -> u64 {
        self.ended_turns + self.live.values().map(|(turns, _)| turns).sum::<u64>()
    }

    fn cost(&self) -> f64 {
        self.ended_cost + self.live.values().map(|(_, cost)| cost).sum::<f64>()
    }
}

impl Batch {
    pub fn new(totals: Totals) -> Batch {
        Batch {
            totals,
            started: Instant::now(),
            spent: Mutex::new(Spent::default()),
        }
    }

    fn spent(&self) -> std::sync::MutexGuard<'_, Spent> {
        self.spent.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A running job's spending so far.
    pub fn note(&self, job: &str, turns: u32, cost_usd: f64) {
        self.spent()
            .live
            .insert(job.to_owned(), (u64::from(turns), cost_usd));
    }

    /// A job ended: what it spent is final.
    pub fn end(&self, job: &str, turns: u32, cost_usd: f64) {
        let mut spent = self.spent();
        spent.live.remove(job);
        spent.ended_turns += u64::from(turns);
        spent.ended_cost += cost_usd;
    }

    /// When the total wall clock runs out, if there is one.
    pub fn deadline(&self) -> Option<Instant> {
        self.totals
            .wall_clock_s
            .map(|seconds| self.started + Duration::from_secs(seconds))
    }

    /// The tool calls a job starting now may make: its own cap, or what the
    /// total leaves when that is less.
    pub fn turns_for_next(&self, own: u32) -> u32 {
        match self.totals.turns {
            None => own,
            Some(total) => {
                let left = total.saturating_sub(self.spent().turns());
                own.min(u32::try_from(left).unwrap_or(u32::MAX))
            }
        }
    }

    /// The total cap a running job must stop at now (`total turn`, `total
    /// wall-clock`, `total cost`), if one is reached.
    pub fn reached(&self, now: Instant) -> Option<&'static str> {
        let spent = self.spent();
        if self.totals.turns.is_some_and(|cap| spent.turns() >= cap) {
            Some("total turn")
        } else if self.deadline().is_some_and(|deadline| now >= deadline) {
            Some("total wall-clock")
        } else if self.totals.cost_usd.is_some_and(|cap| spent.cost() > cap) {
            Some("total cost")
        } else {
            None
        }
    }

    /// The total cap that keeps a queued job from starting, if one is spent:
    /// as [`Batch::reached`], and a cost total met exactly is spent too.
    pub fn spent_out(&self, now: Instant) -> Option<&'static str> {
        let at_cost = {
            let spent = self.spent();
            self.totals.cost_usd.is_some_and(|cap| spent.cost() >= cap)
        };
        self.reached(now)
            .or_else(|| at_cost.then_some("total cost"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(keys: &[&str]) -> BTreeSet<String> {
        keys.iter().map(|key| (*key).to_owned()).collect()
    }

    #[test]
    fn the_first_ready_entry_starts_when_its_limit_has_a_free_slot() {
        let none = set(&[]);
        let on_a = set(&["m::a"]);
        let queue = [
            Queued {
                key: "m::b",
                subject: "m::b",
                waits_on: &on_a,
                limit: 4,
            },
            Queued {
                key: "m::c",
                subject: "m::c",
                waits_on: &none,
                limit: 2,
            },
        ];
        let running = |holds: &[bool]| -> Vec<Active<'static>> {
            holds
                .iter()
                .map(|&holds_slot| Active {
                    subject: "m::a",
                    holds_slot,
                })
                .collect()
        };
        // b waits on a; c is ready and has a slot of its two.
        assert_eq!(next_to_start(&queue, &running(&[true])), Some(1));
        // Two slots taken: c waits for one.
        assert_eq!(next_to_start(&queue, &running(&[true, true])), None);
        // A job waiting to land holds no slot.
        assert_eq!(next_to_start(&queue, &running(&[true, false])), Some(1));
        // Nothing of a subject that runs starts beside it.
        let same = [Queued {
            key: "m::a (module:x)",
            subject: "m::a",
            waits_on: &none,
            limit: 4,
        }];
        assert_eq!(next_to_start(&same, &running(&[false])), None);
    }

    #[test]
    fn a_batch_waits_on_earlier_callees_and_queued_ones_never_later_ones() {
        let may_call: BTreeMap<String, BTreeSet<String>> = [
            ("m::a", set(&["m::b", "m::x"])),
            ("m::b", set(&["m::a", "m::q", "m::unqueued"])),
        ]
        .into_iter()
        .map(|(def, calls)| (def.to_owned(), calls))
        .collect();
        let ordered = vec!["m::a".to_owned(), "m::b".to_owned()];
        let waits = batch_waits(&ordered, &may_call, &set(&["m::q"]));
        // a's callee b comes after it (a cycle): not waited on.
        assert_eq!(waits, vec![set(&[]), set(&["m::a", "m::q"])]);
    }

    #[test]
    fn an_ending_that_did_not_land_holds_its_callers_transitively() {
        let (on_a, on_b, on_c, none) = (set(&["m::a"]), set(&["m::b"]), set(&["m::c"]), set(&[]));
        let queue = [
            ("m::b", &on_a),
            ("m::z", &none),
            ("m::c", &on_b),
            ("m::d", &on_c),
        ];
        assert_eq!(
            held_by(&queue, "m::a"),
            vec![
                (0, "m::a".to_owned()),
                (2, "m::b".to_owned()),
                (3, "m::c".to_owned())
            ]
        );
        assert_eq!(held_by(&queue, "m::z"), vec![]);
    }

    #[test]
    fn totals_count_ended_and_running_jobs_together() {
        let batch = Batch::new(Totals {
            turns: Some(10),
            wall_clock_s: None,
            cost_usd: Some(1.0),
        });
        let now = Instant::now();
        assert_eq!(batch.turns_for_next(30), 10);
        batch.note("job-1", 4, 0.25);
        batch.note("job-2", 3, 0.25);
        assert_eq!(batch.turns_for_next(30), 3);
        assert_eq!(batch.reached(now), None);
        batch.end("job-1", 5, 0.5);
        // 5 ended + 3 running = 8 calls; 0.75 USD.
        assert_eq!(batch.turns_for_next(2), 2);
        batch.note("job-2", 5, 0.5);
        assert_eq!(batch.reached(now), Some("total turn"));
        let costly = Batch::new(Totals {
            cost_usd: Some(1.0),
            ..Totals::default()
        });
        costly.end("job-1", 1, 1.0);
        assert_eq!(costly.reached(now), None, "a cost met is not exceeded");
        assert_eq!(costly.spent_out(now), Some("total cost"));
        let timed = Batch::new(Totals {
            wall_clock_s: Some(5),
            ..Totals::default()
        });
        assert_eq!(
            timed.reached(now + Duration::from_secs(6)),
            Some("total wall-clock")
        );
        assert_eq!(Batch::new(Totals::default()).spent_out(now), None);
    }
}
