//! `trellis _relay --listen ADDR --socket PATH -- PROGRAM ARGS…` (design
//! §4.9.1): the jail's end of its one way out. The jail has a network namespace
//! of its own, whose loopback no host port is on; the relay, started inside it
//! before the agent, listens on `ADDR` there (the address the jail's
//! `HTTPS_PROXY`/`HTTP_PROXY` name), runs the agent as its child and passes each
//! connection, byte for byte, over the Unix socket `PATH` bound into the jail to
//! the daemon's forwarder (`forwarder`), which decides what is reached.
//!
//! The relay decides nothing: it runs as the agent, in the agent's jail, so
//! whatever it would check the agent could skip by speaking to `PATH` itself.
//! It exits with the agent's status (128 + the signal when one ended it), so the
//! runner reads the agent's own ending.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitCode};

/// Connections relayed at once; more wait in the listener's backlog.
const LIVE: usize = 64;

/// Runs `_relay`; `args` follow the command name.
pub fn run(args: &[String]) -> ExitCode {
    let Some(split) = args.iter().position(|arg| arg == "--") else {
        return usage("_relay needs -- PROGRAM ARGS after its options");
    };
    let (options, program) = (&args[..split], &args[split + 1..]);
    let (mut listen, mut socket) = (None, None);
    let mut rest = options.iter();
    while let Some(arg) = rest.next() {
        let slot = match arg.as_str() {
            "--listen" => &mut listen,
            "--socket" => &mut socket,
            other => return usage(&format!("unexpected argument {other:?}")),
        };
        match rest.next() {
            Some(value) => *slot = Some(value.clone()),
            None => return usage(&format!("{arg} needs a value")),
        }
    }
    let (Some(listen), Some(socket), Some((program, program_args))) =
        (listen, socket, program.split_first())
    else {
        return usage("_relay needs --listen ADDR --socket PATH -- PROGRAM ARGS");
    };
    let listener = match TcpListener::bind(&listen) {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("trellis _relay: cannot listen on {listen}: {error}");
            return ExitCode::from(2);
        }
    };
    std::thread::spawn(move || relay(&listener, &socket));
    let status = Command::new(program).args(program_args).status();
    match status {
        Ok(status) => match (status.code(), status.signal()) {
            (Some(code), _) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
            (None, Some(signal)) => ExitCode::from(u8::try_from(128 + signal).unwrap_or(1)),
            (None, None) => ExitCode::FAILURE,
        },
        Err(error) => {
            eprintln!("trellis _relay: cannot start {program}: {error}");
            ExitCode::from(2)
        }
    }
}

fn usage(message: &str) -> ExitCode {
    eprintln!("trellis _relay: {message}");
    ExitCode::from(2)
}

fn relay(listener: &TcpListener, socket: &str) {
    let live = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        while live.load(std::sync::atomic::Ordering::SeqCst) >= LIVE {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let Ok(outside) = UnixStream::connect(socket) else {
            // The forwarder is gone (the job is ending): drop the connection.
            continue;
        };
        live.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let live = std::sync::Arc::clone(&live);
        std::thread::spawn(move || {
            splice(stream, outside);
            live.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        });
    }
}

/// Copies both ways until both are done; a direction's end is passed on as a
/// half-close, so a request body's end still reaches the far side.
fn splice(tcp: TcpStream, unix: UnixStream) {
    let (Ok(tcp_reading), Ok(unix_writing)) = (tcp.try_clone(), unix.try_clone()) else {
        return;
    };
    let up = std::thread::spawn(move || {
        pump(tcp_reading, unix_writing, |s| s.shutdown(Shutdown::Write))
    });
    pump(unix, tcp, |s| s.shutdown(Shutdown::Write));
    let _ = up.join();
}

fn pump<R: Read, W: Write>(mut from: R, mut to: W, half_close: impl Fn(&W) -> io::Result<()>) {
    let _ = io::copy(&mut from, &mut to);
    let _ = half_close(&to);
}
