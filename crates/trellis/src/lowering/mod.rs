//! The lowering loop (design §4.9, trellis-daemon §2): `trellis lower` queues
//! definitions, and one job-runner thread in the daemon lowers them one at a
//! time, callee-first. A job is: the pre-flight → the bundle → the provider's
//! agent, talking to the job only through `trellis _mcp` → the outcome (green,
//! partial, failed, question, invalidated). The runner holds the service lock
//! only for the quick steps between the agent's calls, never while the agent
//! thinks, so no client's request waits on a running job.

pub mod agent;
pub mod claude;
pub mod jail;
pub mod job_socket;
pub mod prompt;
pub mod providers;
pub mod queue;
pub mod script;

pub use queue::Lowering;
