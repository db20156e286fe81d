//! `trellis-agent` is the lowering loop (design §4.9, trellis-daemon §2):
//! `trellis lower` queues definitions, and the daemon lowers up to `--jobs N`
//! of them at once, callee-first: a scheduler thread starts each on a worker
//! thread of its own once its callees have landed (`schedule` holds the rules,
//! `queue` the state and the threads). A job is: the pre-flight → the
//! bundle → the provider's agent, talking to the job only through `trellis _mcp`
//! → the outcome (green, partial, failed, question, invalidated). The runner
//! holds the service lock only for the quick steps between the agent's calls,
//! never while the agent thinks, so no client's request waits on a running job.
//! It owns the queue (`queue`, `schedule`), the providers and their configuration
//! (`providers`), the agents' processes (`agent`, `claude`), the jail (`jail`),
//! a jailed agent's job socket (`job_socket`) and its one way out to the network
//! (`forwarder` outside the jail, `relay` inside), the scripted provider's
//! playbook runner (`script`) and the task prompt (`prompt`); what a job's tools answer,
//! and the job records themselves, are the service's. It must not depend on the
//! `trellis` binary: the binary's command line, rendering and accept loop sit
//! above it.
//!
//! Workspace dependencies: `trellis-diag`, `trellis-lock` (the lock a lowering
//! reads), `trellis-db`, `trellis-rpc` (the daemon's error type and the job
//! socket's server), `trellis-mcp` (the tool names a playbook and the jail's
//! allow-list use), `trellis-skill` (the skill an agent is given) and
//! `trellis-service` (the service a job runs against: pre-flight, gate, locks,
//! triage, f.log and callee-first order).

#![allow(
    clippy::disallowed_methods,
    reason = "the host's lowering loop: it owns the agents' processes, their jail and scratch directories (design §2)"
)]

pub mod agent;
pub mod claude;
pub mod forwarder;
pub mod jail;
pub mod job_socket;
pub mod prompt;
pub mod providers;
pub mod queue;
pub mod relay;
pub mod schedule;
pub mod script;

pub use queue::{Lowering, Requeue};
