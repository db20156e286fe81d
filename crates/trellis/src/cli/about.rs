//! `trellis help`, `version`, `spec`, `skill` and `cache keygen`: answered from
//! what is compiled into this binary (and, for a key, the system's randomness),
//! with no root and no daemon.

use std::process::ExitCode;

use crate::args::{self, Command};
use crate::render;

/// Answers one of these commands; `None` for any other.
pub fn run(command: &Command) -> Option<ExitCode> {
    Some(match command {
        Command::Help => {
            print!("{}", args::USAGE);
            ExitCode::SUCCESS
        }
        Command::Version => {
            println!("trellis {}", trellis_service::identity::VERSION);
            ExitCode::SUCCESS
        }
        // Served from the docs compiled into this binary.
        Command::Spec { reference } => spec(reference),
        Command::Skill { hash } => {
            // The skill is a function of this binary, never of a root.
            if *hash {
                println!("{}", trellis_skill::skill_hash());
            } else {
                print!("{}", trellis_skill::skill());
            }
            ExitCode::SUCCESS
        }
        Command::CacheKeygen => cache_keygen(),
        _ => return None,
    })
}

/// A new Ed25519 key pair for the shared result cache (design §12.3), its seed
/// from the system's randomness.
fn cache_keygen() -> ExitCode {
    use std::io::Read;
    let mut seed = [0u8; 32];
    let read =
        std::fs::File::open("/dev/urandom").and_then(|mut random| random.read_exact(&mut seed));
    if let Err(error) = read {
        eprintln!("error: cannot read /dev/urandom: {error}");
        return ExitCode::FAILURE;
    }
    let key = trellis_cache::signing::WriterKey::from_seed(seed);
    println!("secret: {}", key.written_secret());
    println!("public: {}", key.public().written());
    println!(
        "(the secret goes to the trusted writer only, as TRELLIS_CACHE_SIGNING_KEY; the \
         public key into soil.toml's [cache] trusted_keys)"
    );
    ExitCode::SUCCESS
}

fn spec(reference: &str) -> ExitCode {
    match trellis_context::spec_section(reference) {
        Ok(section) => {
            println!("{}", section.text);
            ExitCode::SUCCESS
        }
        Err(diagnostic) => {
            render::diagnostics(&mut std::io::stderr(), std::slice::from_ref(&diagnostic));
            ExitCode::FAILURE
        }
    }
}
