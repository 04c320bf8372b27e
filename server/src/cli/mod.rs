//! The commands of the `berth` binary, by family: [`engine`] (the engine
//! on files), [`bench`] (the decider benchmark), [`import`] (importers run here), [`remote`] (imports into a
//! running server), [`daemon`] (`serve`, `agent`). [`args`] is the command
//! line; [`common`] what they share.

pub mod args;
pub mod bench;
pub mod common;
pub mod daemon;
pub mod engine;
pub mod import;
pub mod remote;

use args::{Command, ImportFrom};
use common::Failure;
use import::{import_kubernetes, import_prometheus, ImportPrometheus};
use remote::{import_estate_remote, import_kubernetes_remote};

/// A command that prints its result and ends (not `serve`, not `agent`).
pub fn run(command: Command) -> Result<String, Failure> {
    match command {
        Command::Import {
            from:
                ImportFrom::Kubernetes {
                    cluster,
                    into,
                    output,
                    remote,
                    skip_invalid,
                    namespace,
                    dry_run,
                    api,
                    kube,
                    files,
                },
        } => {
            let api = (api || kube.named()).then_some(&kube);
            match into {
                Some(into) => import_kubernetes(
                    &cluster,
                    &into,
                    output.as_deref(),
                    berth::import::kubernetes::Options {
                        skip_invalid,
                        namespace,
                    },
                    &files,
                    api,
                ),
                None => {
                    import_kubernetes_remote(&remote, &cluster, skip_invalid, dry_run, &files, api)
                }
            }
        }
        Command::Import {
            from:
                ImportFrom::Prometheus {
                    server,
                    token,
                    estate,
                    url,
                    file,
                    mesh,
                    dry_run,
                },
        } => import_prometheus(ImportPrometheus {
            server,
            token,
            estate,
            url,
            file,
            mesh,
            dry_run,
        }),
        Command::Import {
            from:
                ImportFrom::Estate {
                    remote,
                    create,
                    file,
                },
        } => import_estate_remote(&remote, create, &file),
        Command::BenchDeciders {
            suite,
            responses,
            kubernetes,
            policy,
            now,
            json,
            markdown,
        } => bench::run(bench::Bench {
            suite,
            kubernetes,
            responses,
            policy,
            now,
            output: match (json, markdown) {
                (true, _) => bench::Output::Json,
                (_, true) => bench::Output::Markdown,
                _ => bench::Output::Text,
            },
        }),
        Command::Outcomes {
            estate,
            server,
            token,
            now,
            format,
        } => remote::outcomes(server, token, &estate, now.as_deref(), format),
        other => engine::run(other),
    }
}
