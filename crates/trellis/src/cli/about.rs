//! `trellis help`, `version`, `spec` and `skill`: answered from what is compiled
//! into this binary, with no root and no daemon.

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
        _ => return None,
    })
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
