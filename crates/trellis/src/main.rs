//! The `trellis` binary: parse the command line, then either serve (`daemon run`)
//! or act as a client of the root's daemon. `main` only maps the outcome to an exit
//! code; everything else lives in [`trellis::cli`].

#![allow(
    clippy::disallowed_methods,
    reason = "the host: it owns the file system, the environment and processes (design §2)"
)]

use std::process::ExitCode;

/// Parsing and the database allocate many small nodes; mimalloc measured
/// clearly faster than the system allocator on exactly that workload.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let run = || match trellis::args::from_os(std::env::args_os().skip(1)) {
        Ok(args) => trellis::cli::run(&args),
        Err(error) => {
            eprintln!("trellis: {error}");
            ExitCode::from(2)
        }
    };
    // The command runs on a thread with a stack as deep as a root's longest
    // call chain may need (`trellis_db::QUERY_STACK_BYTES`); the main
    // thread's is what the shell's limit gave it. Run here if the system
    // refuses the thread.
    match trellis_db::spawn_query_thread("trellis", run) {
        Ok(command) => command
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
        Err(_) => run(),
    }
}
