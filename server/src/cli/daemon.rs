//! The long-running commands: `berth serve` (the server, `berth::serve`)
//! and `berth agent` (`berth::agent`), each checking its options, then
//! running until SIGTERM or Ctrl-C.

use std::process::ExitCode;
use std::time::Duration;

use super::args::{AgentArgs, Command, ServeArgs};
use super::common::{runtime, Failure};
use super::import::mesh_setup;

pub fn serve(command: Command) -> ExitCode {
    let Command::Serve(ServeArgs {
        listen,
        database_url,
        data_dir,
        no_seed,
        secure_cookies,
        trust_forwarded_for,
        max_connections,
        secret_key_file,
        decider_allow,
        driver_every_s,
        no_driver,
        history_retention_days,
        site_root,
        sample_at,
        public_url,
        header_timeout_s,
        body_timeout_s,
        keep_alive_timeout_s,
        max_http_connections,
        max_connections_per_client,
        result_cache_mib,
        max_result_mib,
        engine_runs_per_minute,
    }) = command
    else {
        unreachable!("serve() is called with Command::Serve")
    };
    berth::serve::init_logging();
    let admin_token = std::env::var("BERTH_ADMIN_TOKEN")
        .ok()
        .filter(|t| !t.is_empty());
    if admin_token.as_ref().is_some_and(|t| t.len() < 32) {
        eprintln!(
            "BERTH_ADMIN_TOKEN: at least 32 characters, please (e.g. `openssl rand -hex 32`)"
        );
        return ExitCode::from(2);
    }
    let sample_at = match sample_at
        .as_deref()
        .map(|t| (t, berth_engine::estate::parse_time(t)))
    {
        None => None,
        Some((_, Some(t))) => Some(t),
        Some((t, None)) => {
            eprintln!("--sample-at {t:?}: not an RFC 3339 time (e.g. 2026-11-30T04:05:00Z)");
            return ExitCode::from(2);
        }
    };
    let public_url = match public_url.as_deref().map(berth::auth::public_origin) {
        None => None,
        Some(Ok(origin)) => Some(origin),
        Some(Err(e)) => {
            eprintln!("--public-url {e}");
            return ExitCode::from(2);
        }
    };
    let site = berth::site::Site::resolve(site_root.as_deref());
    match site.problem() {
        // Said at start, before anything else: the operator sees it in the
        // terminal or the pod log, and every page shows it too.
        Some(problem) => tracing::warn!("web application: {problem}"),
        None => tracing::info!("web application {}", site.describe()),
    }
    let opts = berth::serve::ServeOptions {
        listen,
        database_url,
        data_dir,
        admin_token,
        seed: !no_seed,
        sample_at,
        max_connections,
        // Read here, passed on, and never printed.
        secret_key: std::env::var("BERTH_SECRET_KEY")
            .ok()
            .filter(|k| !k.is_empty()),
        secret_key_file,
        decider_allow,
        driver_every_s: if no_driver {
            None
        } else {
            Some(driver_every_s.max(1))
        },
        history_retention_days,
        net: berth::listen::NetLimits {
            header_timeout: Duration::from_secs(header_timeout_s),
            body_timeout: Duration::from_secs(body_timeout_s),
            keep_alive_idle: Duration::from_secs(keep_alive_timeout_s),
            max_connections: max_http_connections.map(|n| n.min(usize::MAX as u64) as usize),
            max_connections_per_client: max_connections_per_client
                .map(|n| n.min(usize::MAX as u64) as usize),
        },
        config: berth::Config {
            secure_cookies,
            trust_forwarded_for,
            public_url,
            site,
            result_cache_bytes: (result_cache_mib as usize) << 20,
            max_result_bytes: (max_result_mib as usize) << 20,
            engine_runs_per_minute,
            ..berth::Config::default()
        },
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(berth::serve::run(opts)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("berth serve: {e}");
            ExitCode::from(2)
        }
    }
}

/// `berth agent`: check the options, then run until SIGTERM or Ctrl-C.
pub fn agent(command: Command) -> ExitCode {
    let Command::Agent(AgentArgs {
        target,
        prometheus,
        interval,
        cluster,
        capacity_file,
        capacity_command,
        probe_listen,
        probe_address,
        rtt_from,
        kubernetes,
        kube,
        new_cluster,
        mesh,
    }) = command
    else {
        unreachable!("agent() is called with Command::Agent")
    };
    let agent_user_agent = berth::kube_source::user_agent("agent", &target.estate);
    let setup = || -> Result<(berth::agent::AgentOptions, bool), Failure> {
        use berth::agent::CapacitySource;
        let interval = berth::agent::parse_interval(&interval).map_err(Failure::usage)?;
        let capacity = match (capacity_file, capacity_command) {
            (Some(f), _) => Some(CapacitySource::File(f)),
            (None, Some(c)) => Some(CapacitySource::Command(c)),
            (None, None) => None,
        };
        let kubernetes = kubernetes || kube.named();
        if kubernetes && cluster.is_none() {
            return Err(Failure::usage(
                "--kubernetes (or --context, --kubeconfig) needs --cluster C: the estate cluster the API describes".into(),
            ));
        }
        if kubernetes && capacity.is_some() {
            return Err(Failure::usage(
                "--kubernetes measures the free capacity itself: leave out --capacity-file and --capacity-command".into(),
            ));
        }
        let (reading, mapping) = mesh_setup(mesh)?;
        let rtt_from = rtt_from
            .as_deref()
            .map(berth::import::rtt::RttSource::parse)
            .transpose()
            .map_err(Failure::usage)?;
        let mut client = berth::submit::BerthClient::new(
            &target.server,
            berth::submit::Secret::new(target.token),
            &target.estate,
        )
        .map_err(Failure::usage)?;
        if prometheus.is_none() && capacity.is_none() && !kubernetes && probe_listen.is_none() {
            return Err(Failure::usage(
                "nothing to report: give --prometheus URL, --kubernetes, or --cluster C with --capacity-file F, --capacity-command CMD or --probe-listen IP:PORT".into(),
            ));
        }
        let probe = match &probe_listen {
            None => None,
            Some(listen) => {
                let setup = berth::agent::ProbeSetup::bind(listen, probe_address.as_deref())
                    .map_err(Failure::usage)?;
                client = client.with_probe(
                    cluster
                        .as_deref()
                        .expect("clap: --probe-listen requires --cluster"),
                    &setup.advertised,
                );
                Some(setup)
            }
        };
        if let Some(record) = new_cluster.record(cluster.as_deref()) {
            client = client.with_cluster_record(record);
        }
        Ok(berth::agent::AgentOptions {
            client,
            prometheus: match &prometheus {
                Some(url) => {
                    Some(berth::prom_client::PromClient::new(url).map_err(Failure::usage)?)
                }
                None => None,
            },
            reading,
            mapping,
            interval,
            cluster,
            capacity,
            probe,
            rtt_from,
            kubernetes: None,
        })
        .map(|o| (o, kubernetes))
    };
    let run = || -> Result<(), Failure> {
        let (mut opts, kubernetes) = setup()?;
        berth::serve::init_logging();
        let rt = runtime()?;
        if kubernetes {
            // Connecting reads the kubeconfig (or the pod's service
            // account): a wrong path or context ends the agent at once.
            let source = rt
                .block_on(berth::kube_source::KubeSource::connect(
                    kube.kubeconfig.as_deref(),
                    kube.context.as_deref(),
                    kube.page_size,
                    agent_user_agent.clone(),
                ))
                .map_err(Failure::usage)?;
            opts.kubernetes = Some(source);
        }
        rt.block_on(async {
            let (tx, rx) = tokio::sync::watch::channel(false);
            tokio::spawn(async move {
                berth::serve::stop_requested().await;
                tracing::info!("stop requested");
                let _ = tx.send(true);
            });
            berth::agent::run(opts, rx).await;
        });
        Ok(())
    };
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            for line in f.lines {
                eprintln!("{line}");
            }
            ExitCode::from(f.code)
        }
    }
}
