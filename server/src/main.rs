//! `berth`: the command line. The offline commands that run the engine on
//! files (SPEC §15: validate, advise, preview, compare, whatif, place), the
//! importers (`import kubernetes`, `import prometheus`), `serve`, the
//! server (`berth::serve`), and `agent`, which feeds a server
//! (`berth::agent`). This file parses the command line and dispatches;
//! the commands are in `cli/`, by family.
//!
//! This crate is the only one that touches the filesystem and the clock:
//! it reads files, resolves `now`, times deciders, and hands text to the
//! pure engine.

mod cli;

use std::process::ExitCode;
use std::sync::atomic::Ordering;

use clap::Parser;

use cli::args::{Cli, Command};
use cli::common::INCOMPLETE;

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::Serve { .. } = cli.command {
        return cli::daemon::serve(cli.command);
    }
    if let Command::Agent { .. } = cli.command {
        return cli::daemon::agent(cli.command);
    }
    match cli::run(cli.command) {
        Ok(out) => {
            print!("{out}");
            if INCOMPLETE.load(Ordering::Relaxed) {
                ExitCode::from(3)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(f) => {
            for line in f.lines {
                eprintln!("{line}");
            }
            ExitCode::from(f.code)
        }
    }
}
