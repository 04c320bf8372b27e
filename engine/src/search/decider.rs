//! Deciders (SPEC §9): anything that proposes moves, scored on equal
//! footing.
//!
//! A decider is given the schema-1 request ([`crate::request`]) and answers
//! with proposals `{serviceId, to, reason}`. Whatever produced them — a
//! built-in ([`Baseline`], [`HeaviestTalker`]) or an external service whose
//! reply arrives as untrusted bytes ([`parse_response`]) — every proposal
//! goes through the same validation and the same cost function in
//! [`score`]:
//!
//! 1. malformed items are refused one by one (`malformed`), never the batch;
//! 2. unknown service (`unknown_service`);
//! 3. a service already named by an earlier proposal (`proposed_twice`):
//!    only a service's first proposal counts, whether it was accepted or
//!    refused, so a decider cannot spray destinations until one sticks;
//! 4. unknown cluster (`unknown_cluster`);
//! 5. already there (`already_there`);
//! 6. static hard constraints of SPEC §4 (`local_volumes`, `pinned`,
//!    `cluster_draining`, `cluster_down`, `jurisdiction`, `trust_zone`,
//!    `tier`), first code reported, every message listed;
//! 7. fit against the placement *so far* (`no_room_cpu`, `no_room_memory`,
//!    `cant_tell` with the fact named): only a certified fit is accepted.
//!
//! Accepted proposals are applied in the decider's order on one
//! [`State`], so each is scored after the ones before it. An accepted move
//! need not clear the bars of SPEC §5: a decider may propose a bad move, and
//! it is scored as such (possibly negative) and said so per move.
//!
//! The reply is bounded before it is trusted: body size, JSON nesting depth
//! (checked on the raw bytes *before* deserialising, so a deeply nested
//! body cannot exhaust the stack), number of proposals and string lengths.
//! `docs/deciders.md` is the user-facing account of all of this.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::constraints::{self, Code, Fit};
use crate::cost::{self, Ctx, State, Term, Terms, Totals};
use crate::estate::{format_time, Estate};
use crate::fact::Class;
use crate::json_shape::describe;
use crate::numfmt::signed;
use crate::policy::Policy;
pub use crate::proposal::{Decider, Decision, Proposal};
use crate::request::{self, DeciderRequest};

mod body;
mod scoring;
pub use body::{check_depth, parse_request, parse_response};
use scoring::*;
pub use scoring::{score, Accepted, DeciderResult, Refused};

/// Largest reply body accepted, bytes (4 MiB): 10,000 proposals of three
/// 256-byte strings fit with room to spare.
pub const MAX_BODY_BYTES: usize = 4 << 20;
/// Most proposals in one reply. More than any estate has services to move.
pub const MAX_PROPOSALS: usize = 10_000;
/// Longest `serviceId`, `to` or `reason`, bytes (UTF-8). Ids in an estate
/// file are at most 128 characters; reasons are one line for a person.
pub const MAX_STRING_BYTES: usize = 256;
/// Deepest JSON nesting (arrays and objects) in a reply. The reply needs 3
/// (`{"proposals": [{...}]}`); 8 leaves room for additive extra fields.
pub const MAX_DEPTH: usize = 8;
/// Largest request body [`parse_request`] accepts, bytes (64 MiB).
pub const MAX_REQUEST_BYTES: usize = 64 << 20;
/// Most clusters, services and flows [`parse_request`] accepts.
pub const MAX_REQUEST_CLUSTERS: usize = 10_000;
pub const MAX_REQUEST_SERVICES: usize = 200_000;
pub const MAX_REQUEST_FLOWS: usize = 2_000_000;

/// The canonical reply shape, `{"proposals": [...]}`. [`parse_response`]
/// also accepts a bare list of proposals.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeciderResponse {
    pub proposals: Vec<Proposal>,
}

/// One item of a reply after parsing: a well-formed proposal, or an item
/// that is not one (refused on its own with code `malformed`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RawProposal {
    Valid(Proposal),
    Malformed {
        /// What could be read of the item, for the refusal row (strings
        /// longer than the limit are cut, marked with `…`).
        service_id: Option<String>,
        to: Option<String>,
        reason: Option<String>,
        message: String,
    },
}

impl From<Proposal> for RawProposal {
    fn from(p: Proposal) -> RawProposal {
        RawProposal::Valid(p)
    }
}

/// Why a whole body was not accepted. Individually malformed proposals are
/// not errors of the body: they are refused one by one by [`score`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BodyError {
    /// Larger than the limit.
    TooLarge { max: usize },
    /// Nested deeper than the limit (found at 1-based `line`, `column`).
    TooDeep {
        max: usize,
        line: usize,
        column: usize,
    },
    /// Not JSON (or not UTF-8).
    NotJson {
        line: usize,
        column: usize,
        message: String,
    },
    /// JSON, but not the expected shape.
    WrongShape { message: String },
    /// More items than the limit.
    TooMany {
        what: &'static str,
        count: usize,
        max: usize,
    },
}

/// The error type of [`parse_response`].
pub type ResponseError = BodyError;

impl BodyError {
    /// Stable code, for the comparison's error entry.
    pub fn code(&self) -> &'static str {
        match self {
            BodyError::TooLarge { .. } => "too_large",
            BodyError::TooDeep { .. } => "too_deep",
            BodyError::NotJson { .. } => "not_json",
            BodyError::WrongShape { .. } => "wrong_shape",
            BodyError::TooMany { .. } => "too_many",
        }
    }
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BodyError::TooLarge { max } => {
                write!(f, "the body is larger than the limit of {max} bytes")
            }
            BodyError::TooDeep { max, line, column } => write!(
                f,
                "JSON nested deeper than {max} levels (line {line}, column {column})"
            ),
            BodyError::NotJson { message, .. } => write!(f, "not valid JSON: {message}"),
            BodyError::WrongShape { message } => write!(f, "{message}"),
            BodyError::TooMany { what, count, max } => {
                write!(f, "{count} {what}; at most {max} are accepted")
            }
        }
    }
}

impl std::error::Error for BodyError {}

/// A decider that produced no usable reply: its entry in the comparison
/// carries this instead of the result members.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeciderError {
    /// For the reply itself: `too_large`, `too_deep`, `not_json`,
    /// `wrong_shape`, `too_many`. From the caller: the CLI's `unreadable`
    /// (a reply file it could not read), and the server's call to a
    /// registered decider: `media_type` (a `2xx` whose `Content-Type` is
    /// not JSON; not read), `deferred` (it answered `429` or `503`; try
    /// later), `busy` (not called: every outbound slot stayed taken for
    /// the whole timeout), `timeout`, `blocked` (its host resolves to an
    /// address the server may not reach; see `--decider-allow`),
    /// `redirect` (never followed), `unreachable`, `http_status` (any other
    /// non-`2xx`), `disabled`, `no_secret_key`, `secret_unusable`,
    /// `bad_url`, `request_too_large` (not called: the stored URL or the
    /// request cannot be sent).
    #[cfg_attr(
        feature = "schema",
        schemars(extend("enum" = [
            "too_large", "not_json", "too_deep", "wrong_shape", "too_many", "unreadable",
            "media_type", "deferred", "busy", "timeout", "blocked", "redirect", "unreachable",
            "http_status", "bad_url", "request_too_large", "disabled", "no_secret_key",
            "secret_unusable"
        ]))
    )]
    pub code: String,
    /// What happened. Whatever it quotes of what the decider sent is an
    /// excerpt of at most 512 bytes, control and invisible format
    /// characters escaped as `\u{…}`, a cut one ending `…(N bytes)`.
    pub message: String,
}

impl From<BodyError> for DeciderError {
    fn from(e: BodyError) -> DeciderError {
        DeciderError {
            code: e.code().to_string(),
            message: e.to_string(),
        }
    }
}

// ---------------------------------------------------------------------------
// The decider interface and the built-ins.

/// The sequential recommender of SPEC §6 ([`crate::advise`]) as a decider:
/// its proposals are the recommended moves, in order. It needs the estate,
/// policy and evaluation time the request was built from, so it holds them.
pub struct Baseline<'a> {
    pub estate: &'a Estate,
    pub policy: &'a Policy,
    pub now: i64,
}

impl Decider for Baseline<'_> {
    fn name(&self) -> &str {
        "baseline"
    }
    fn decide(&self, _request: &DeciderRequest) -> Vec<Proposal> {
        crate::advise(self.estate, self.policy, self.now)
            .moves
            .into_iter()
            // Moves resting on guesses are listed apart, not recommended.
            .filter(|m| m.is_recommended())
            .map(|m| Proposal {
                reason: format!(
                    "step {}: gain {} points (bar {}), confidence {}",
                    m.step,
                    signed(m.gain),
                    constraints::round2(m.bar),
                    m.confidence.as_str()
                ),
                service_id: m.service,
                to: m.to,
            })
            .collect()
    }
}

/// The naive foil of SPEC §9: move each service to the cluster of the peer
/// it talks to most.
///
/// For every service that has at least one flow, in service id order: the
/// peer with the largest flow weight summed over both directions (unknown
/// weights count 0; ties go to the smaller peer id; a best of 0 proposes
/// nothing), and a proposal only if that peer's cluster differs from the
/// service's. It deliberately ignores mobility, constraints, capacity and
/// the other flows, and it does not see its own earlier proposals: that is
/// what makes it a foil, and why many of its proposals are refused.
pub struct HeaviestTalker;

impl Decider for HeaviestTalker {
    fn name(&self) -> &str {
        "heaviest-talker"
    }
    fn decide(&self, request: &DeciderRequest) -> Vec<Proposal> {
        let cluster_of: BTreeMap<&str, &str> = request
            .services
            .iter()
            .map(|s| (s.id.as_str(), s.cluster.as_str()))
            .collect();
        let mut talk: BTreeMap<&str, BTreeMap<&str, f64>> = BTreeMap::new();
        for f in &request.flows {
            let w = f.weight.value.filter(|w| w.is_finite() && *w > 0.0);
            let w = w.unwrap_or(0.0);
            *talk
                .entry(f.from.as_str())
                .or_default()
                .entry(f.to.as_str())
                .or_default() += w;
            *talk
                .entry(f.to.as_str())
                .or_default()
                .entry(f.from.as_str())
                .or_default() += w;
        }
        let mut out = Vec::new();
        // `cluster_of` iterates in id order whatever the request's order.
        for (&service, &here) in &cluster_of {
            let Some(peers) = talk.get(service) else {
                continue;
            };
            let mut best: Option<(&str, f64)> = None;
            for (&peer, &w) in peers {
                if peer != service && best.is_none_or(|(_, b)| w > b) {
                    best = Some((peer, w));
                }
            }
            let Some((peer, w)) = best.filter(|&(_, w)| w > 0.0) else {
                continue;
            };
            let Some(&there) = cluster_of.get(peer) else {
                continue;
            };
            if there != here {
                out.push(Proposal {
                    service_id: service.to_string(),
                    to: there.to_string(),
                    reason: format!(
                        "heaviest peer {peer} (weight {} over both directions) runs on {there}",
                        constraints::round2(w)
                    ),
                });
            }
        }
        out
    }
}

/// The built-in deciders, in the order they are compared.
pub fn builtins<'a>(
    estate: &'a Estate,
    policy: &'a Policy,
    now: i64,
) -> Vec<Box<dyn Decider + 'a>> {
    vec![
        Box::new(Baseline {
            estate,
            policy,
            now,
        }),
        Box::new(HeaviestTalker),
        Box::new(crate::optimum::decider::Optimum {
            estate,
            policy,
            now,
            capped: false,
        }),
        Box::new(crate::optimum::decider::Optimum {
            estate,
            policy,
            now,
            capped: true,
        }),
        Box::new(crate::optimum::decider::LocalSearch {
            estate,
            policy,
            now,
        }),
    ]
}

// ---------------------------------------------------------------------------
// Comparison.

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum DeciderKind {
    Builtin,
    External,
}

/// An external decider's reply, already read and parsed by the caller.
#[derive(Clone, Debug, PartialEq)]
pub struct External {
    pub name: String,
    pub response: Result<Vec<RawProposal>, DeciderError>,
    /// How long the caller waited for the reply (e.g. the HTTP call), in
    /// milliseconds; `None` when the reply was not fetched live (a file).
    pub run_time_ms: Option<f64>,
}

/// One decider in a comparison: its result, or why it has none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeciderEntry {
    pub name: String,
    pub kind: DeciderKind,
    /// Wall time of `decide`, measured by the caller (the engine has no
    /// clock); `null` when not measured, e.g. a reply read from a file.
    pub run_time_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<DeciderError>,
    /// What a built-in says about its run as a whole (what the reference
    /// deciders proved, or why they did not run); absent when nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(flatten)]
    pub result: Option<DeciderResult>,
}

/// Deciders compared on equal footing (`docs/deciders.md`, "Scoring"):
/// every decider's moves scored from the same estate, with the same
/// policy, at the same time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Comparison {
    pub estate: String,
    pub estate_version: String,
    pub policy_digest: String,
    /// Evaluation time, RFC 3339.
    pub now: String,
    /// The estate before any move: every decider starts from here.
    pub totals_before: Totals,
    /// Built-ins first, then the external replies in the order given.
    pub deciders: Vec<DeciderEntry>,
}

/// Run the built-ins and score the external replies. Run times are `null`:
/// see [`compare_timed`].
pub fn compare(estate: &Estate, policy: &Policy, now: i64, externals: &[External]) -> Comparison {
    compare_timed(estate, policy, now, externals, &mut |run| {
        run();
        None
    })
}

/// [`compare`], with each built-in's `decide` run inside `stopwatch`, which
/// runs the closure it is given and returns the milliseconds it took. The
/// caller owns the clock; the engine never reads one.
pub fn compare_timed(
    estate: &Estate,
    policy: &Policy,
    now: i64,
    externals: &[External],
    stopwatch: &mut dyn FnMut(&mut dyn FnMut()) -> Option<f64>,
) -> Comparison {
    let ctx = Ctx::new(estate, policy, now);
    let request = request::build(estate, policy, now);
    let mut deciders = Vec::new();
    for d in builtins(estate, policy, now) {
        let mut decision = Decision {
            proposals: Vec::new(),
            note: None,
        };
        let run_time_ms = stopwatch(&mut || decision = d.decide_noted(&request));
        let raw: Vec<RawProposal> = decision
            .proposals
            .into_iter()
            .map(RawProposal::Valid)
            .collect();
        deciders.push(DeciderEntry {
            name: d.name().to_string(),
            kind: DeciderKind::Builtin,
            run_time_ms,
            error: None,
            note: decision.note,
            result: Some(score_in(&ctx, &raw)),
        });
    }
    for e in externals {
        let (error, result) = match &e.response {
            Ok(raw) => (None, Some(score_in(&ctx, raw))),
            Err(err) => (Some(err.clone()), None),
        };
        deciders.push(DeciderEntry {
            name: e.name.clone(),
            kind: DeciderKind::External,
            run_time_ms: e.run_time_ms,
            error,
            note: None,
            result,
        });
    }
    Comparison {
        estate: estate.name.clone(),
        estate_version: request.estate_version,
        policy_digest: request.policy_digest,
        now: format_time(now),
        totals_before: State::initial(estate).totals(&ctx),
        deciders,
    }
}
