//! Sending observations to a Berth server (`POST
//! /api/estates/{id}/observations`), for `berth import prometheus` and
//! `berth agent`: one attempt, the retry loop around it (exponential
//! backoff with jitter, `Retry-After` honoured), and leaving out flows
//! whose services the estate does not have.
//!
//! The token is kept in a [`Secret`]: it is never printed, logged or shown
//! by `Debug`, and its header is marked sensitive.

use std::collections::BTreeSet;
use std::time::Duration;

use berth_api::endpoint::{self, ApiPath};
use berth_api::{
    ClusterRecord, FactUpdate, KubernetesImportRequest, ManifestFile, ObservationBatch, ProbeRecord,
};
use reqwest::header::{HeaderValue, AUTHORIZATION, RETRY_AFTER};
use reqwest::StatusCode;
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::sync::watch;

use crate::prom_client::{check_url, error_chain};
use crate::retry::{parse_retry_after, Backoff};

/// A bearer token that does not show itself.
#[derive(Clone)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: String) -> Secret {
        Secret(s)
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(…)")
    }
}

/// How long one request to Berth may take. A batch of 50,000 observations
/// is applied in well under a second; 30 s covers a busy server and a slow
/// link without leaving an agent hanging on a dead connection.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The server's answer to an accepted batch, and another cluster's agent
/// it names (the API's [`berth_api::ObservationAnswer`] and
/// [`berth_api::ProbePeer`]).
pub use berth_api::{ObservationAnswer as Answer, ProbePeer as Peer};

/// One item of a 422's `details.errors` (the API's [`berth_api::InputError`]).
pub use berth_api::InputError as Refusal;

/// Why a batch did not land.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SubmitError {
    /// 422: the batch is invalid; nothing was applied.
    Invalid {
        message: String,
        errors: Vec<Refusal>,
    },
    /// 409: this batch id was used before with a different body.
    Conflict(String),
    /// Refused in a way retrying cannot change: a wrong token (401), a
    /// token without the right (403), no such estate (404), a malformed
    /// request (400), too large (413).
    Refused { status: u16, message: String },
    /// Worth retrying: no connection, a timeout, 429, or a 5xx.
    Transient {
        status: Option<u16>,
        message: String,
        retry_after: Option<Duration>,
    },
    /// A stop was asked for while waiting to retry.
    Stopped,
}

impl std::fmt::Display for SubmitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SubmitError::Invalid { message, errors } => {
                write!(f, "refused as invalid (422): {message}")?;
                for e in errors {
                    write!(f, "\n  {}: {}", e.path, e.message)?;
                }
                Ok(())
            }
            SubmitError::Conflict(m) => write!(f, "conflict (409): {m}"),
            SubmitError::Refused { status, message } => write!(f, "refused ({status}): {message}"),
            SubmitError::Transient {
                status: Some(s),
                message,
                ..
            } => write!(f, "server unavailable ({s}): {message}"),
            SubmitError::Transient {
                status: None,
                message,
                ..
            } => write!(f, "{message}"),
            SubmitError::Stopped => write!(f, "stopped before the batch landed"),
        }
    }
}

/// A Berth server, a token and the estate observations are for.
#[derive(Clone, Debug)]
pub struct BerthClient {
    http: reqwest::Client,
    server: String,
    token: Secret,
    pub estate: String,
    /// The cluster record sent with every batch (`berth agent
    /// --create-cluster`): the server creates the cluster from it when the
    /// estate has none of that id, and ignores it otherwise.
    cluster_record: Option<ClusterRecord>,
    /// Where this agent answers round-trip probes (`berth agent
    /// --probe-listen`), sent with every batch; the answer names the
    /// peers'.
    probe: Option<ProbeRecord>,
}

impl BerthClient {
    pub fn new(server: &str, token: Secret, estate: &str) -> Result<BerthClient, String> {
        let server = check_url("--server", server)?;
        if token.0.trim().is_empty() {
            return Err("--token: empty".into());
        }
        // A header value cannot hold control characters; say so here
        // rather than at the first request (and without echoing it).
        if HeaderValue::from_str(&format!("Bearer {}", token.0)).is_err() {
            return Err(
                "--token: not a valid token (it holds characters a header cannot carry)".into(),
            );
        }
        let http = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            // The token goes with every request: never to wherever a
            // redirect points (issue 37).
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot build an HTTP client: {e}"))?;
        Ok(BerthClient {
            http,
            server,
            token,
            estate: estate.to_string(),
            cluster_record: None,
            probe: None,
        })
    }

    /// Send this agent's probe address (`cluster`, `address`) with every
    /// batch.
    pub fn with_probe(mut self, cluster: &str, address: &str) -> BerthClient {
        self.probe = Some(ProbeRecord {
            cluster: cluster.to_string(),
            address: address.to_string(),
        });
        self
    }

    /// Send `record` (a cluster as the estate file has it, less its facts)
    /// with every batch.
    pub fn with_cluster_record(mut self, record: ClusterRecord) -> BerthClient {
        self.cluster_record = Some(record);
        self
    }

    fn auth(&self) -> HeaderValue {
        let mut v =
            HeaderValue::from_str(&format!("Bearer {}", self.token.0)).expect("checked in new()");
        v.set_sensitive(true);
        v
    }

    /// The URL of `path` (built by its endpoint's declaration, which
    /// percent-encodes the estate id) on this client's server.
    fn url(&self, path: &ApiPath) -> String {
        format!("{}{path}", self.server)
    }

    /// The estate's services (ids, clusters, import sources), when the token may read the estate
    /// (viewer or above); `None` for an agent token, which may only post
    /// observations.
    pub async fn estate_services(&self) -> Result<Option<crate::import::Directory>, SubmitError> {
        let resp = self
            .http
            .get(self.url(&endpoint::export_estate_file(&self.estate)))
            .header(AUTHORIZATION, self.auth())
            .send()
            .await
            .map_err(|e| connection_error(&self.server, e))?;
        let status = resp.status();
        if status == StatusCode::FORBIDDEN {
            return Ok(None);
        }
        let retry_after = retry_after(resp.headers());
        let body = resp
            .bytes()
            .await
            .map_err(|e| connection_error(&self.server, e))?;
        if !status.is_success() {
            return Err(error_of(status, &body, retry_after));
        }
        let doc: Value = serde_json::from_slice(&body).map_err(|e| SubmitError::Refused {
            status: status.as_u16(),
            message: format!("the estate file is not JSON: {e}"),
        })?;
        Ok(Some(crate::import::Directory::from_estate(&doc)))
    }

    /// Import Kubernetes manifests (`List` documents read from the API)
    /// into one cluster of the estate, once: the server parses and merges
    /// them as for `berth import kubernetes --server` and answers with
    /// its report. Needs an operator token (or `may_sync_services`).
    pub async fn import_kubernetes(
        &self,
        cluster: &str,
        files: &[(String, String)],
        incomplete: bool,
    ) -> Result<berth_api::ImportAnswer, SubmitError> {
        let body = KubernetesImportRequest {
            cluster: cluster.to_string(),
            files: ManifestFile::all(files),
            // A live cluster holds objects no one checked: one that
            // cannot be understood is reported and kept, not a reason
            // to leave the others stale.
            skip_invalid: true,
            dry_run: false,
            incomplete,
        };
        let path = endpoint::import_kubernetes(&self.estate);
        let (status, retry_after, bytes) = self.post_json(&path, &body).await?;
        if !status.is_success() {
            return Err(error_of(status, &bytes, retry_after));
        }
        serde_json::from_slice(&bytes).map_err(|e| SubmitError::Refused {
            status: status.as_u16(),
            message: unreadable_answer(&self.url(&path), "the import was", &e, &bytes),
        })
    }

    /// `POST` `body` to `path` with the token: the status,
    /// its `Retry-After` and the answer's bytes; only a connection that
    /// fails is an error here.
    async fn post_json(
        &self,
        path: &ApiPath,
        body: &impl Serialize,
    ) -> Result<(StatusCode, Option<Duration>, bytes::Bytes), SubmitError> {
        let resp = self
            .http
            .post(self.url(path))
            .header(AUTHORIZATION, self.auth())
            .json(body)
            .send()
            .await
            .map_err(|e| connection_error(&self.server, e))?;
        let status = resp.status();
        let retry_after = retry_after(resp.headers());
        let bytes = resp
            .bytes()
            .await
            .map_err(|e| connection_error(&self.server, e))?;
        Ok((status, retry_after, bytes))
    }

    /// The batch of `observations` under `batch_id`, with this client's
    /// cluster record and probe address.
    pub fn batch(&self, batch_id: &str, observations: Vec<FactUpdate>) -> ObservationBatch {
        ObservationBatch {
            batch_id: batch_id.to_string(),
            observations,
            cluster: self.cluster_record.clone(),
            probe: self.probe.clone(),
        }
    }

    /// Post one batch, once.
    pub async fn post_once(&self, batch: &ObservationBatch) -> Result<Answer, SubmitError> {
        let path = endpoint::post_observations(&self.estate);
        let (status, retry_after, bytes) = self.post_json(&path, batch).await?;
        if status.is_success() {
            return serde_json::from_slice(&bytes).map_err(|e| SubmitError::Refused {
                status: status.as_u16(),
                message: unreadable_answer(&self.url(&path), "the batch was", &e, &bytes),
            });
        }
        Err(error_of(status, &bytes, retry_after))
    }
}

/// An accepted request whose answer is not the API's type: where it went,
/// that `done` (so it is not sent again blindly), what did not parse, and
/// the start of what came back.
fn unreadable_answer(url: &str, done: &str, e: &serde_json::Error, bytes: &[u8]) -> String {
    format!(
        "{url}: {done} accepted, but its answer is not understood ({e}): {}",
        String::from_utf8_lossy(bytes)
            .chars()
            .take(200)
            .collect::<String>()
    )
}

fn connection_error(server: &str, e: reqwest::Error) -> SubmitError {
    SubmitError::Transient {
        status: None,
        message: format!("cannot reach {server}: {}", error_chain(&e.without_url())),
        retry_after: None,
    }
}

/// An error answer, classified. Berth's errors are `{error, message,
/// details}`; anything else (a proxy's page) is shown briefly.
fn error_of(status: StatusCode, body: &[u8], retry_after: Option<Duration>) -> SubmitError {
    let parsed = std::str::from_utf8(body)
        .ok()
        .and_then(berth_api::ErrorBody::parse);
    let message = parsed
        .as_ref()
        .map(|b| b.message.clone())
        .unwrap_or_else(|| {
            let text: String = String::from_utf8_lossy(body).chars().take(200).collect();
            if text.trim().is_empty() {
                status
                    .canonical_reason()
                    .unwrap_or("no message")
                    .to_string()
            } else {
                text
            }
        });
    match status {
        StatusCode::UNPROCESSABLE_ENTITY => SubmitError::Invalid {
            message,
            errors: parsed
                .as_ref()
                .map(berth_api::ErrorBody::input_errors)
                .unwrap_or_default(),
        },
        StatusCode::CONFLICT => SubmitError::Conflict(message),
        StatusCode::TOO_MANY_REQUESTS => SubmitError::Transient {
            status: Some(status.as_u16()),
            message,
            retry_after,
        },
        s if s.is_server_error() => SubmitError::Transient {
            status: Some(s.as_u16()),
            message,
            retry_after,
        },
        s => SubmitError::Refused {
            status: s.as_u16(),
            message,
        },
    }
}

/// `Retry-After`: seconds, or an HTTP date (`retry::parse_retry_after`).
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let v = headers.get(RETRY_AFTER)?.to_str().ok()?;
    parse_retry_after(v, std::time::SystemTime::now())
}

/// The retry schedule. Delays double from `base` up to `ceiling`, each
/// drawn uniformly from its upper half (jitter, so agents that failed
/// together do not retry together), and are never shorter than the
/// server's `Retry-After`.
#[derive(Clone, Copy, Debug)]
pub struct RetryPolicy {
    /// The delays between attempts ([`BACKOFF`]).
    pub backoff: Backoff,
    /// Stop retrying once this much time has passed since the first
    /// attempt (a retry already waiting past it is not started).
    pub give_up_after: Duration,
    /// Retry when the server cannot be reached at all (an agent: yes; a
    /// person at a terminal would rather know at once).
    pub retry_unreachable: bool,
}

/// First retry delay: long enough for a restarting server to come back,
/// short enough that a blip costs a second.
pub const BACKOFF_BASE: Duration = Duration::from_secs(1);
/// Longest delay between retries: after a minute of doubling, waiting
/// longer only delays recovery once the server is back.
pub const BACKOFF_CEILING: Duration = Duration::from_secs(60);

/// The clients' schedule: doubling from [`BACKOFF_BASE`] to
/// [`BACKOFF_CEILING`], jittered, and the server's `Retry-After` honoured
/// whole (the retry window, `give_up_after`, bounds the wait instead).
pub const BACKOFF: Backoff = Backoff {
    base: BACKOFF_BASE,
    ceiling: BACKOFF_CEILING,
    jitter: true,
    asked_at_most: None,
};

/// A uniform random number in [0, 1) from the operating system.
pub fn unit_random() -> f64 {
    let mut b = [0u8; 8];
    if getrandom::fill(&mut b).is_err() {
        return 0.5;
    }
    // 53 bits: the precision of an f64 mantissa.
    (u64::from_le_bytes(b) >> 11) as f64 / (1u64 << 53) as f64
}

/// Sleep, or return `true` early when a stop is asked for. A dropped
/// sender also counts as a stop: nobody could ask any more.
pub async fn sleep_or_stop(d: Duration, stop: &mut watch::Receiver<bool>) -> bool {
    if *stop.borrow() {
        return true;
    }
    tokio::select! {
        _ = tokio::time::sleep(d) => false,
        _ = stop.wait_for(|s| *s) => true,
    }
}

/// A flow observation the server refused because a service is not in the
/// estate: left out of the batch, reported.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Pruned {
    pub fact: String,
    pub from: String,
    pub to: String,
    /// The service ids the server refused (`from`, `to` or both).
    pub refused: Vec<String>,
    pub message: String,
}

/// The outcome of [`deliver`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// The batch id finally used (the original, or with `-pruned`).
    pub batch_id: String,
    /// `None` when nothing was left to send after pruning.
    pub answer: Option<Answer>,
    pub sent: usize,
    pub pruned: Vec<Pruned>,
    /// Requests made, first attempt included.
    pub attempts: u32,
}

/// The observations a 422 refused only because the estate lacks what
/// they name — a service or cluster of a flow (`/observations/{i}/from`,
/// `/to`, `/from_cluster`, `/to_cluster` of a `flow_*` fact), an end of a
/// round trip (`/a`, `/b` of `rtt_ms`: a mesh or a probe tool knows
/// clusters the estate does not track), a service a mesh covered
/// (`/service`, `/cluster` of `traffic`) — or `None` when anything else was
/// refused too: then the batch is wrong, not merely ahead of the estate.
pub fn prunable(errors: &[Refusal], observations: &[FactUpdate]) -> Option<BTreeSet<usize>> {
    let mut out = BTreeSet::new();
    for e in errors {
        let rest = e.path.strip_prefix("/observations/")?;
        let (i, field) = rest.split_once('/')?;
        let i: usize = i.parse().ok()?;
        let fact = observations.get(i)?.fact.as_str();
        let flow_end = fact.starts_with("flow_")
            && matches!(field, "from" | "to" | "from_cluster" | "to_cluster");
        let rtt_end = fact == "rtt_ms" && matches!(field, "a" | "b");
        // A mesh covering a workload the estate does not have yet.
        let covered = fact == "traffic" && matches!(field, "service" | "cluster");
        if !(flow_end || rtt_end || covered) {
            return None;
        }
        out.insert(i);
    }
    (!out.is_empty()).then_some(out)
}

/// The text of `o`'s member `name` (the fact or one of its ids), if it
/// has one: what a refusal's path names.
fn member<'a>(o: &'a FactUpdate, name: &str) -> Option<&'a str> {
    match name {
        "fact" => Some(&o.fact),
        "service" => o.service.as_deref(),
        "cluster" => o.cluster.as_deref(),
        "a" => o.a.as_deref(),
        "b" => o.b.as_deref(),
        "from" => o.from.as_deref(),
        "to" => o.to.as_deref(),
        "from_cluster" => o.from_cluster.as_deref(),
        "to_cluster" => o.to_cluster.as_deref(),
        "class" => o.class.as_deref(),
        "source" => o.source.as_deref(),
        "observed_at" => o.observed_at.as_deref(),
        _ => None,
    }
}

/// Send a batch until it lands, is refused, the policy gives up, or a stop
/// is asked for. A 422 that refuses only flows with services the estate
/// lacks is answered by sending the rest once more as `{batch_id}-pruned`
/// (a new id: the body differs; the same id each time, so that resend is
/// idempotent too). `on_retry` hears of every failure about to be
/// retried, and the delay.
pub async fn deliver(
    client: &BerthClient,
    batch_id: &str,
    observations: Vec<FactUpdate>,
    policy: RetryPolicy,
    stop: &mut watch::Receiver<bool>,
    mut on_retry: impl FnMut(&SubmitError, Duration),
) -> Result<Delivery, (SubmitError, Vec<Pruned>)> {
    let started = tokio::time::Instant::now();
    let mut batch = client.batch(batch_id, observations);
    let mut pruned = Vec::new();
    let mut attempts = 0u32;
    let mut retry = 0u32;
    loop {
        // Nothing to say — unless the batch carries a probe address, which
        // is worth registering (and brings back the peers') on its own.
        if batch.observations.is_empty() && batch.probe.is_none() {
            return Ok(Delivery {
                batch_id: batch.batch_id,
                answer: None,
                sent: 0,
                pruned,
                attempts,
            });
        }
        attempts += 1;
        let err = match client.post_once(&batch).await {
            Ok(answer) => {
                return Ok(Delivery {
                    batch_id: batch.batch_id,
                    answer: Some(answer),
                    sent: batch.observations.len(),
                    pruned,
                    attempts,
                })
            }
            Err(e) => e,
        };
        match &err {
            SubmitError::Invalid { errors, .. } if pruned.is_empty() => {
                let Some(drop) = prunable(errors, &batch.observations) else {
                    return Err((err, pruned));
                };
                for &i in &drop {
                    let o = &batch.observations[i];
                    let s = |k: &str| member(o, k).unwrap_or("").to_string();
                    let prefix = format!("/observations/{i}/");
                    let mine: Vec<(&str, &str)> = errors
                        .iter()
                        .filter_map(|e| Some((e.path.strip_prefix(&prefix)?, e.message.as_str())))
                        .collect();
                    let mut refused: Vec<String> = mine.iter().map(|(field, _)| s(field)).collect();
                    refused.dedup();
                    let (from, to) = match s("fact").as_str() {
                        "rtt_ms" => ("a", "b"),
                        "traffic" => ("service", "cluster"),
                        _ => ("from", "to"),
                    };
                    pruned.push(Pruned {
                        fact: s("fact"),
                        from: s(from),
                        to: s(to),
                        refused,
                        message: mine.iter().map(|(_, m)| *m).collect::<Vec<_>>().join("; "),
                    });
                }
                batch.observations = std::mem::take(&mut batch.observations)
                    .into_iter()
                    .enumerate()
                    .filter(|(i, _)| !drop.contains(i))
                    .map(|(_, o)| o)
                    .collect();
                batch.batch_id.push_str("-pruned");
            }
            SubmitError::Transient {
                status,
                retry_after,
                ..
            } if status.is_some() || policy.retry_unreachable => {
                let delay = policy.backoff.delay(retry, *retry_after, unit_random());
                retry += 1;
                if started.elapsed() + delay > policy.give_up_after {
                    return Err((err, pruned));
                }
                on_retry(&err, delay);
                if sleep_or_stop(delay, stop).await {
                    return Err((SubmitError::Stopped, pruned));
                }
            }
            _ => return Err((err, pruned)),
        }
    }
}

/// A batch id from what identifies a batch: always 1–128 characters,
/// whatever the parts.
pub fn batch_id(prefix: &str, parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        // A separator no part contains, so ("ab","c") ≠ ("a","bc").
        h.update([0u8]);
    }
    // 128 bits: collisions between distinct batches are not a concern.
    format!("{prefix}-{}", &hex::encode(h.finalize())[..32])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            backoff: BACKOFF,
            give_up_after: Duration::from_secs(600),
            retry_unreachable: true,
        }
    }

    #[test]
    fn backoff_doubles_to_the_ceiling_with_jitter_in_the_upper_half() {
        let p = policy();
        let secs = |a, u| p.backoff.delay(a, None, u).as_secs_f64();
        assert_eq!(secs(0, 0.0), 0.5);
        assert_eq!(secs(0, 0.999_999), 0.9999995);
        assert_eq!(secs(1, 0.0), 1.0);
        assert_eq!(secs(3, 0.0), 4.0);
        assert_eq!(secs(6, 0.0), 30.0);
        assert_eq!(secs(7, 0.0), 30.0);
        assert_eq!(secs(40, 1.0), 60.0);
        // Retry-After wins when it is longer, never when shorter.
        assert_eq!(
            p.backoff
                .delay(0, Some(Duration::from_secs(7)), 0.0)
                .as_secs(),
            7
        );
        assert_eq!(
            p.backoff
                .delay(6, Some(Duration::from_secs(7)), 1.0)
                .as_secs(),
            60
        );
    }

    #[test]
    fn only_unknown_service_refusals_of_flows_are_prunable() {
        let flow = |fact: &str| FactUpdate {
            fact: fact.into(),
            from: Some("a".into()),
            to: Some("x".into()),
            ..FactUpdate::default()
        };
        let obs = vec![
            flow("flow_weight"),
            FactUpdate {
                fact: "cpu_free".into(),
                cluster: Some("c".into()),
                ..FactUpdate::default()
            },
            flow("flow_mb_s"),
        ];
        let r = |p: &str| Refusal {
            path: p.into(),
            line: None,
            message: "no service".into(),
            file: None,
            document: None,
            object: None,
        };
        assert_eq!(
            prunable(&[r("/observations/0/to"), r("/observations/2/to")], &obs),
            Some(BTreeSet::from([0, 2]))
        );
        assert_eq!(prunable(&[r("/observations/1/cluster")], &obs), None);
        assert_eq!(
            prunable(&[r("/observations/0/to"), r("/observations/0/value")], &obs),
            None
        );
        assert_eq!(prunable(&[r("/batch_id")], &obs), None);
        assert_eq!(prunable(&[], &obs), None);
    }

    #[test]
    fn batch_ids_are_stable_bounded_and_unambiguous() {
        let a = batch_id("agent", &["sample", "c-fra-1", "2026-11-30T04:05:00Z"]);
        assert_eq!(
            a,
            batch_id("agent", &["sample", "c-fra-1", "2026-11-30T04:05:00Z"])
        );
        assert_ne!(
            a,
            batch_id("agent", &["sample", "c-fra-1", "2026-11-30T04:06:00Z"])
        );
        assert_ne!(batch_id("x", &["ab", "c"]), batch_id("x", &["a", "bc"]));
        assert_eq!(a.len(), "agent-".len() + 32);
    }

    #[test]
    fn the_token_does_not_show_in_debug() {
        let c = BerthClient::new(
            "http://127.0.0.1:1",
            Secret::new("berth_s3cret".into()),
            "e",
        )
        .unwrap();
        assert!(!format!("{c:?}").contains("s3cret"));
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let mut h = reqwest::header::HeaderMap::new();
        h.insert(RETRY_AFTER, HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert(
            RETRY_AFTER,
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&h), Some(Duration::ZERO));
        h.insert(RETRY_AFTER, HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h), None);
    }
}
