//! `berth-example-decider`: a small external decider, as a working example
//! of the contract in `docs/decider-webhook.openapi.yaml` and a peer for
//! the tests (`server/tests/webhook_contract.rs`).
//!
//! ```sh
//! BERTH_DECIDER_SECRET=whsec_… berth-example-decider --listen 127.0.0.1:8700
//! ```
//!
//! It prints the address it bound on the first line of stdout (so
//! `--listen 127.0.0.1:0` picks a free port and tells you which), then
//! answers `POST` on any path:
//!
//! 1. With a secret configured, it verifies `Berth-Signature` with Berth's
//!    reference verifier (5 minutes' tolerance either way) and answers 401
//!    `{"error", "message"}` if the signature is missing, malformed, stale
//!    or wrong. Without a secret it accepts unsigned requests.
//! 2. It parses the schema-1 request (`decider::parse_request`: size,
//!    depth, schema number, counts, string lengths) and answers 400 if it
//!    is not one.
//! 3. It proposes moves with the heuristic of [`propose`] and answers 200
//!    `{"proposals": [...]}`.
//!
//! The secret can be given with `--secret`, but the environment variable
//! `BERTH_DECIDER_SECRET` keeps it out of the process list.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use clap::Parser;
use serde_json::json;

use berth::external::signing::{self, Secret};
use berth_engine::decider::{self, DeciderResponse, Proposal};
use berth_engine::request::DeciderRequest;

#[derive(Parser)]
#[command(
    name = "berth-example-decider",
    about = "An example external decider for Berth: verifies signed requests and proposes moves"
)]
struct Args {
    /// Address to listen on; port 0 picks a free one. The bound address is
    /// printed on the first line of stdout.
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// The shared secret (`whsec_…`) registered with Berth. Without one,
    /// requests are not verified.
    #[arg(long, env = "BERTH_DECIDER_SECRET", hide_env_values = true)]
    secret: Option<String>,
    /// Largest accepted distance between the signature's timestamp and
    /// this host's clock, seconds, in either direction.
    #[arg(long, default_value_t = signing::DEFAULT_TOLERANCE_S)]
    tolerance_s: i64,
}

struct Config {
    secret: Option<Secret>,
    tolerance_s: i64,
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let secret = match args.secret.as_deref().map(Secret::parse).transpose() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("berth-example-decider: --secret / BERTH_DECIDER_SECRET: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let listener = match tokio::net::TcpListener::bind(args.listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!(
                "berth-example-decider: cannot listen on {}: {e}",
                args.listen
            );
            return std::process::ExitCode::from(1);
        }
    };
    let addr = listener
        .local_addr()
        .expect("a bound listener has an address");
    // The first line of stdout is the address, for whoever started us.
    println!("{addr}");
    match &secret {
        Some(s) => eprintln!("verifying Berth-Signature with secret {}", s.fingerprint()),
        None => eprintln!("no secret configured: requests are not verified"),
    }
    let config = Arc::new(Config {
        secret,
        tolerance_s: args.tolerance_s,
    });
    let app = Router::new()
        .fallback(handle)
        // The request limit of `decider::parse_request`, so a large estate
        // is judged by it rather than cut off by axum's 2 MB default.
        .layer(DefaultBodyLimit::max(decider::MAX_REQUEST_BYTES))
        .with_state(config);
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    if let Err(e) = axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
    {
        eprintln!("berth-example-decider: {e}");
        return std::process::ExitCode::from(1);
    }
    std::process::ExitCode::SUCCESS
}

fn error(status: StatusCode, code: &str, message: String) -> Response {
    eprintln!("{} {code}: {message}", status.as_u16());
    (status, Json(json!({"error": code, "message": message}))).into_response()
}

async fn handle(
    State(config): State<Arc<Config>>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if method != Method::POST {
        return error(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            format!("a decider is called with POST, not {method}"),
        );
    }
    if let Some(secret) = &config.secret {
        // A header that is not visible ASCII is read as empty: refused as
        // missing rather than guessed at.
        let header = headers
            .get(signing::BERTH_SIGNATURE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        if let Err(e) = signing::verify_berth(header, &body, secret, now, config.tolerance_s) {
            return error(StatusCode::UNAUTHORIZED, e.code(), e.to_string());
        }
    }
    let request = match decider::parse_request(&body) {
        Ok(r) => r,
        Err(e) => return error(StatusCode::BAD_REQUEST, e.code(), e.to_string()),
    };
    let proposals = propose(&request);
    eprintln!(
        "200: {} proposals for estate {:?}",
        proposals.len(),
        request.estate
    );
    Json(DeciderResponse { proposals }).into_response()
}

/// The heuristic: *move a service to the site most of its traffic goes
/// to.*
///
/// For each movable service with legal candidates, in the request's (id)
/// order: sum the flow weight between it and each peer (both directions;
/// an unknown weight counts 0) by the site the peer runs in *now*. If the
/// site with the largest sum (ties: smaller site id) is not the service's
/// own, propose the candidate cluster in that site with the most free CPU
/// left (ties: smaller cluster id). Free CPU and memory are reduced by each
/// proposal's requests, so two proposals do not count on the same room;
/// this is a rough guard, and Berth checks every fit again with its
/// margins. Services with no flows, or already in their busiest site, or
/// with no candidate there, get no proposal.
///
/// It deliberately ignores that peers may move too, RTT, data to copy and
/// every cost Berth weighs: an example to compare against, not a rival.
pub fn propose(r: &DeciderRequest) -> Vec<Proposal> {
    let site_of_cluster: BTreeMap<&str, &str> = r
        .clusters
        .iter()
        .map(|c| (c.id.as_str(), c.site.as_str()))
        .collect();
    let cluster_of_service: BTreeMap<&str, &str> = r
        .services
        .iter()
        .map(|s| (s.id.as_str(), s.cluster.as_str()))
        .collect();
    // Free (cpu, memory) per cluster; unknown counts as none.
    let mut free: BTreeMap<&str, (f64, f64)> = r
        .clusters
        .iter()
        .map(|c| {
            (
                c.id.as_str(),
                (
                    c.cpu_free.value.unwrap_or(0.0),
                    c.memory_free_gib.value.unwrap_or(0.0),
                ),
            )
        })
        .collect();
    // Flow weight per service, per peer site, both directions.
    let mut weight: BTreeMap<&str, BTreeMap<&str, f64>> = BTreeMap::new();
    for f in &r.flows {
        if f.from == f.to {
            continue;
        }
        let w = f.weight.value.unwrap_or(0.0).max(0.0);
        for (me, peer) in [(&f.from, &f.to), (&f.to, &f.from)] {
            let site = cluster_of_service
                .get(peer.as_str())
                .and_then(|c| site_of_cluster.get(c));
            if let Some(site) = site {
                *weight
                    .entry(me.as_str())
                    .or_default()
                    .entry(site)
                    .or_default() += w;
            }
        }
    }
    let mut proposals = Vec::new();
    for s in &r.services {
        if s.mobility != "movable" || s.candidates.is_empty() {
            continue;
        }
        let Some(by_site) = weight.get(s.id.as_str()) else {
            continue;
        };
        let total: f64 = by_site.values().sum();
        // BTreeMap order is site id order, so on a tie the first (smaller)
        // site is kept.
        let Some((&best, &best_w)) =
            by_site
                .iter()
                .fold(None, |acc: Option<(&&str, &f64)>, (k, v)| match acc {
                    Some((_, bw)) if *bw >= *v => acc,
                    _ => Some((k, v)),
                })
        else {
            continue;
        };
        let here = site_of_cluster.get(s.cluster.as_str()).copied();
        if total <= 0.0 || best_w <= 0.0 || here == Some(best) {
            continue;
        }
        let (cpu, mem) = (s.cpu.unwrap_or(0.0), s.memory_gib.unwrap_or(0.0));
        let to = s
            .candidates
            .iter()
            .filter(|c| site_of_cluster.get(c.as_str()) == Some(&best))
            .filter_map(|c| free.get(c.as_str()).map(|&room| (c, room)))
            .filter(|(_, (fc, fm))| *fc >= cpu && *fm >= mem)
            .fold(
                None,
                |acc: Option<(&String, f64)>, (c, (fc, _))| match acc {
                    Some((_, bc)) if bc >= fc => acc,
                    _ => Some((c, fc)),
                },
            );
        let Some((to, _)) = to else {
            continue;
        };
        if let Some(room) = free.get_mut(to.as_str()) {
            room.0 -= cpu;
            room.1 -= mem;
        }
        let share = 100.0 * best_w / total;
        let reason = format!(
            "{share:.0}% of its flow weight is with services in site {best}; {to} has the most free CPU there"
        );
        proposals.push(Proposal {
            service_id: s.id.clone(),
            to: to.clone(),
            reason: cut(reason, decider::MAX_STRING_BYTES),
        });
    }
    proposals
}

/// `s` cut to at most `max` bytes, at a character boundary (long ids could
/// push a reason past the reply's string limit).
fn cut(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}
