//! The `soil0` binary: a thin shell over `soil0::cli` that owns the process
//! concerns (arguments, stdout, exit status, panics).

use std::io::{self, Write};
use std::process::ExitCode;

/// Parsing and the database allocate many small nodes; mimalloc measured
/// clearly faster than the system allocator on exactly that workload.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // A bug must still produce one JSON document, never a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let message = format!("soil0 internal error: {info}");
        let _ = writeln!(
            io::stdout(),
            "{}",
            soil0::cli::internal_error_document(&message)
        );
    }));
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        soil0::cli::run(&args, &soil0::cli::OsHost, &mut out).and_then(|code| {
            out.flush()?;
            Ok(code)
        })
    }));
    match result {
        Ok(Ok(code)) => ExitCode::from(code),
        // The reader went away (`soil0 print f | head`): nothing left to say.
        Ok(Err(error)) if error.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Ok(Err(_)) => ExitCode::from(soil0::cli::EXIT_PROBLEMS),
        Err(_) => {
            // The hook has printed the error document; drop unflushed output so it
            // stays the only document.
            let _ = out.into_parts();
            ExitCode::from(soil0::cli::EXIT_INTERNAL)
        }
    }
}
