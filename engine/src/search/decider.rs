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
// Parsing untrusted bodies.

/// Fail if `bytes` nest arrays/objects deeper than `max`. A linear scan of
/// the raw bytes that skips string contents; no recursion, no allocation.
pub fn check_depth(bytes: &[u8], max: usize) -> Result<(), BodyError> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let (mut line, mut line_start) = (1usize, 0usize);
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'\n' => {
                line += 1;
                line_start = i + 1;
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return Err(BodyError::TooDeep {
                        max,
                        line,
                        column: i - line_start + 1,
                    });
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// UTF-8 first, so that a body in another encoding is named as such
/// rather than as a syntax error at its first byte.
fn check_utf8(bytes: &[u8]) -> Result<(), BodyError> {
    std::str::from_utf8(bytes).map(|_| ()).map_err(|e| {
        let before = &bytes[..e.valid_up_to()];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = before.len()
            - before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1)
            + 1;
        BodyError::NotJson {
            line,
            column,
            message: format!(
                "the body is not UTF-8 (invalid byte at line {line}, column {column})"
            ),
        }
    })
}

/// A serde_json error as a body error; `what` names the expected shape.
fn json_error(e: serde_json::Error, what: &str) -> BodyError {
    match e.classify() {
        serde_json::error::Category::Data => BodyError::WrongShape {
            message: format!("not {what}: {e}"),
        },
        _ => BodyError::NotJson {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        },
    }
}

/// The items of a reply, at most [`MAX_PROPOSALS`] kept; `total` counts
/// them all (the rest are skipped without being stored).
struct Items {
    items: Vec<Value>,
    total: usize,
}

fn read_items<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<Items, A::Error> {
    let mut items = Vec::new();
    while items.len() < MAX_PROPOSALS {
        match seq.next_element::<Value>()? {
            Some(v) => items.push(v),
            None => {
                let total = items.len();
                return Ok(Items { items, total });
            }
        }
    }
    let mut total = items.len();
    while seq.next_element::<IgnoredAny>()?.is_some() {
        total += 1;
    }
    Ok(Items { items, total })
}

struct ItemsVisitor;

impl<'de> Visitor<'de> for ItemsVisitor {
    type Value = Items;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("`proposals` to be a list of proposals")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Items, A::Error> {
        read_items(seq)
    }
}

impl<'de> Deserialize<'de> for Items {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Items, D::Error> {
        d.deserialize_seq(ItemsVisitor)
    }
}

struct BodyVisitor;

impl<'de> Visitor<'de> for BodyVisitor {
    type Value = Items;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of proposals or an object {\"proposals\": [...]}")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Items, A::Error> {
        read_items(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Items, A::Error> {
        let mut items = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == "proposals" {
                if items.is_some() {
                    return Err(de::Error::custom("`proposals` appears twice"));
                }
                items = Some(map.next_value::<Items>()?);
            } else {
                // Unknown top-level fields are allowed: fields are additive.
                map.next_value::<IgnoredAny>()?;
            }
        }
        items.ok_or_else(|| de::Error::custom("the reply object has no `proposals` list"))
    }
}

/// Parse an external decider's reply: `{"proposals": [...]}` or a bare
/// `[...]` of `{serviceId, to, reason}` items.
///
/// The body as a whole is refused (an `Err`) only when it is too large,
/// too deeply nested, not JSON, not one of the two shapes, or has more than
/// [`MAX_PROPOSALS`] items. Each item that is not a well-formed proposal
/// (not an object, a missing, non-string, empty or overlong `serviceId` or
/// `to`, a non-string or overlong `reason`) becomes a
/// [`RawProposal::Malformed`] and is refused on its own by [`score`].
/// Unknown fields of an item are ignored (fields are additive).
pub fn parse_response(bytes: &[u8]) -> Result<Vec<RawProposal>, ResponseError> {
    if bytes.len() > MAX_BODY_BYTES {
        return Err(BodyError::TooLarge {
            max: MAX_BODY_BYTES,
        });
    }
    let bytes = strip_bom(bytes);
    check_utf8(bytes)?;
    check_depth(bytes, MAX_DEPTH)?;
    let what = "a decider reply";
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let items = de
        .deserialize_any(BodyVisitor)
        .map_err(|e| json_error(e, what))?;
    de.end().map_err(|e| json_error(e, what))?;
    if items.total > MAX_PROPOSALS {
        return Err(BodyError::TooMany {
            what: "proposals",
            count: items.total,
            max: MAX_PROPOSALS,
        });
    }
    Ok(items.items.iter().map(item).collect())
}

/// Parse a schema-1 request, as a decider written against this crate
/// would: the same size and depth checks before deserialising, then the
/// schema number, the counts and every string's length.
pub fn parse_request(bytes: &[u8]) -> Result<DeciderRequest, BodyError> {
    if bytes.len() > MAX_REQUEST_BYTES {
        return Err(BodyError::TooLarge {
            max: MAX_REQUEST_BYTES,
        });
    }
    let bytes = strip_bom(bytes);
    check_utf8(bytes)?;
    check_depth(bytes, MAX_DEPTH)?;
    let r: DeciderRequest = crate::strict::from_slice(bytes)
        .map_err(|e| json_error(e, "a schema-1 decider request"))?;
    if r.schema != 1 {
        return Err(BodyError::WrongShape {
            message: format!("schema {} is not supported; expected 1", r.schema),
        });
    }
    for (what, count, max) in [
        ("clusters", r.clusters.len(), MAX_REQUEST_CLUSTERS),
        ("services", r.services.len(), MAX_REQUEST_SERVICES),
        ("flows", r.flows.len(), MAX_REQUEST_FLOWS),
    ] {
        if count > max {
            return Err(BodyError::TooMany { what, count, max });
        }
    }
    let mut strings: Vec<(&str, &str)> = vec![
        ("estate", &r.estate),
        ("estate_version", &r.estate_version),
        ("policy_digest", &r.policy_digest),
        ("now", &r.now),
    ];
    for c in &r.clusters {
        for s in [&c.id, &c.site, &c.tier, &c.trust_zone, &c.health] {
            strings.push(("a cluster field", s));
        }
    }
    for l in &r.links {
        for s in [&l.a, &l.b, &l.derivation] {
            strings.push(("a link field", s));
        }
    }
    for p in &r.paths {
        for s in [&p.a, &p.b] {
            strings.push(("a path field", s));
        }
    }
    for s in &r.services {
        if s.candidates.len() + s.cant_tell.len() > r.clusters.len() {
            return Err(BodyError::WrongShape {
                message: format!("service {:?} lists more clusters than exist", cut(&s.id)),
            });
        }
        for v in [&s.id, &s.owner, &s.cluster, &s.mobility] {
            strings.push(("a service field", v));
        }
        for v in s.candidates.iter().chain(&s.cant_tell) {
            strings.push(("a service's cluster list", v));
        }
    }
    for f in &r.flows {
        for s in [&f.from, &f.to] {
            strings.push(("a flow end", s));
        }
    }
    if let Some((what, s)) = strings.iter().find(|(_, s)| s.len() > MAX_STRING_BYTES) {
        return Err(BodyError::WrongShape {
            message: format!(
                "{what} is {} bytes long; at most {MAX_STRING_BYTES} are accepted",
                s.len()
            ),
        });
    }
    Ok(r)
}

/// A string for display, cut to the limit at a character boundary.
fn cut(s: &str) -> String {
    if s.len() <= MAX_STRING_BYTES {
        return s.to_string();
    }
    let mut end = MAX_STRING_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Spellings of `serviceId` a decider might plausibly send by mistake.
const SERVICE_ID_MISSPELLINGS: [&str; 5] = [
    "service_id",
    "serviceID",
    "serviceid",
    "service-id",
    "service",
];

/// One string field of an item: `(valid value, what to show)`.
fn string_field(
    obj: &Map<String, Value>,
    key: &str,
    required: bool,
    problems: &mut Vec<String>,
) -> (Option<String>, Option<String>) {
    match obj.get(key) {
        None | Some(Value::Null) => {
            if required {
                let hint = if key == "serviceId" {
                    SERVICE_ID_MISSPELLINGS
                        .iter()
                        .find(|k| obj.contains_key(**k))
                } else {
                    None
                };
                match hint {
                    Some(k) => {
                        problems.push(format!(
                            "missing `serviceId` (found `{k}`; the field is spelled `serviceId`)"
                        ));
                        let shown = obj.get(*k).and_then(Value::as_str).map(cut);
                        return (None, shown);
                    }
                    None => problems.push(format!("missing `{key}`")),
                }
            }
            (None, None)
        }
        Some(Value::String(s)) => {
            if s.len() > MAX_STRING_BYTES {
                problems.push(format!(
                    "`{key}` is {} bytes long; at most {MAX_STRING_BYTES} are accepted",
                    s.len()
                ));
                (None, Some(cut(s)))
            } else if required && s.trim().is_empty() {
                problems.push(format!("`{key}` is empty"));
                (None, Some(s.clone()))
            } else {
                (Some(s.clone()), Some(s.clone()))
            }
        }
        Some(v) => {
            problems.push(format!("`{key}` must be a string, got {}", describe(v)));
            (None, None)
        }
    }
}

fn item(v: &Value) -> RawProposal {
    let Some(obj) = v.as_object() else {
        return RawProposal::Malformed {
            service_id: None,
            to: None,
            reason: None,
            message: format!(
                "expected an object {{\"serviceId\", \"to\", \"reason\"}}, got {}",
                describe(v)
            ),
        };
    };
    let mut problems = Vec::new();
    let (service_id, shown_service) = string_field(obj, "serviceId", true, &mut problems);
    let (to, shown_to) = string_field(obj, "to", true, &mut problems);
    let (reason, shown_reason) = string_field(obj, "reason", false, &mut problems);
    match (service_id, to, problems.is_empty()) {
        (Some(service_id), Some(to), true) => RawProposal::Valid(Proposal {
            service_id,
            to,
            reason: reason.unwrap_or_default(),
        }),
        _ => RawProposal::Malformed {
            service_id: shown_service,
            to: shown_to,
            reason: shown_reason,
            message: problems.join("; "),
        },
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
// Scoring.

/// How a decider's proposals fared.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeciderResult {
    /// Items in the reply, valid or not.
    pub proposals: usize,
    pub accepted_count: usize,
    pub refused_count: usize,
    /// Refusals per code, in code order.
    pub refused_by_code: BTreeMap<Code, usize>,
    /// Accepted moves whose gain does not clear the bars of SPEC §5 (the
    /// baseline would not have suggested them); some may be negative.
    pub below_bar_count: usize,
    /// Estate cost before − after − copy cost of the accepted moves, points.
    pub projected_gain: f64,
    /// Points paid once for copying the accepted moves' data.
    pub copy_cost: f64,
    /// Cross-site traffic after − before, MB/s (negative: less traffic).
    pub cross_site_mb_s_change: f64,
    /// The weakest confidence over the accepted moves; `null` when none.
    pub weakest_confidence: Option<Class>,
    /// The estate after every accepted move.
    pub totals_after: Totals,
    /// In the order applied.
    pub accepted: Vec<Accepted>,
    /// Proposals that were refused, in reply order.
    pub refused: Vec<Refused>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "AcceptedProposal"))]
pub struct Accepted {
    /// Position in the decider's reply (0-based).
    pub index: usize,
    /// 1-based position among the accepted moves: the order applied.
    pub step: usize,
    pub service: String,
    pub from: String,
    pub to: String,
    /// Points, after the moves before it; the sum of `terms`.
    pub gain: f64,
    /// The service's cost before this move.
    pub current_cost: f64,
    /// The gain the move would need to clear both bars.
    pub bar: f64,
    /// Does the gain clear both bars? An accepted move need not.
    pub clears_bars: bool,
    /// The verdict on the gain, in words.
    pub verdict: String,
    /// Class of the weakest deciding fact.
    pub confidence: Class,
    /// Plain words when the weakest deciding facts are guesses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    pub terms: Terms,
    /// The decider's reason.
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "RefusedProposal"))]
pub struct Refused {
    /// Position in the decider's reply (0-based).
    pub index: usize,
    /// As proposed (`null` when the item had none readable).
    #[serde(rename = "serviceId")]
    pub service_id: Option<String>,
    pub to: Option<String>,
    pub reason: Option<String>,
    pub code: Code,
    pub message: String,
    /// For `cant_tell`: the fact that is missing or too uncertain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fact: Option<String>,
}

/// Validate and score one decider's proposals on the estate as it is.
pub fn score(
    estate: &Estate,
    policy: &Policy,
    now: i64,
    proposals: &[RawProposal],
) -> DeciderResult {
    score_in(&Ctx::new(estate, policy, now), proposals)
}

fn verdict(gain: f64, bar: f64) -> (bool, String) {
    let g = signed(gain);
    let b = constraints::round2(bar);
    if gain >= bar && gain > 0.0 {
        (
            true,
            format!("worth it: gain {g} clears the bar of {b} points"),
        )
    } else if gain > 0.0 {
        (
            false,
            format!("below the bar: gain {g} is less than the {b} points a move must gain; the baseline would stay put"),
        )
    } else if gain == 0.0 {
        (false, "no gain: the estate costs the same after it".into())
    } else {
        (
            false,
            format!("harmful: gain {g}; the estate costs more after this move"),
        )
    }
}

fn score_in(ctx: &Ctx, proposals: &[RawProposal]) -> DeciderResult {
    let estate = ctx.estate;
    let mut state = State::initial(estate);
    let before = state.totals(ctx);
    // Per service: index of the first proposal naming it, and whether it
    // was accepted (filled in once known).
    let mut first: Vec<Option<(usize, bool)>> = vec![None; estate.services.len()];
    let mut accepted: Vec<Accepted> = Vec::new();
    let mut refused: Vec<Refused> = Vec::new();
    let mut copy_cost = 0.0;
    for (index, raw) in proposals.iter().enumerate() {
        let p = match raw {
            RawProposal::Malformed {
                service_id,
                to,
                reason,
                message,
            } => {
                refused.push(Refused {
                    index,
                    service_id: service_id.clone(),
                    to: to.clone(),
                    reason: reason.clone(),
                    code: Code::Malformed,
                    message: message.clone(),
                    fact: None,
                });
                continue;
            }
            RawProposal::Valid(p) => p,
        };
        let mut refuse = |code: Code, message: String, fact: Option<String>| {
            refused.push(Refused {
                index,
                service_id: Some(p.service_id.clone()),
                to: Some(p.to.clone()),
                reason: Some(p.reason.clone()),
                code,
                message,
                fact,
            })
        };
        let Some(s) = estate.service_index(&p.service_id) else {
            refuse(
                Code::UnknownService,
                format!("there is no service {:?} in this estate", p.service_id),
                None,
            );
            continue;
        };
        if let Some((k, was_accepted)) = first[s] {
            let RawProposal::Valid(earlier) = &proposals[k] else {
                unreachable!("only valid proposals are recorded");
            };
            let outcome = if was_accepted { "accepted" } else { "refused" };
            let message = if earlier.to == p.to {
                format!(
                    "repeats the proposal at index {k} ({} to {}, {outcome}); a service is answered once",
                    p.service_id, p.to
                )
            } else {
                format!(
                    "{} was already proposed at index {k} (to {}, {outcome}); only a service's first proposal counts",
                    p.service_id, earlier.to
                )
            };
            refuse(Code::ProposedTwice, message, None);
            continue;
        }
        first[s] = Some((index, false));
        let Some(c) = estate.cluster_index(&p.to) else {
            refuse(
                Code::UnknownCluster,
                format!("there is no cluster {:?} in this estate", p.to),
                None,
            );
            continue;
        };
        let from = state.placement[s];
        if from == c {
            refuse(
                Code::AlreadyThere,
                format!("{} already runs on {}", p.service_id, p.to),
                None,
            );
            continue;
        }
        let r = constraints::static_refusals(estate, s, c);
        if let Some(head) = r.first() {
            let messages: Vec<&str> = r.iter().map(|r| r.message.as_str()).collect();
            refuse(head.code, messages.join("; "), None);
            continue;
        }
        match state.fit(ctx, s, c) {
            Fit::Fits => {}
            Fit::DoesNotFit { refusal } => {
                refuse(
                    refusal.code,
                    format!(
                        "{} does not fit on {}: {}",
                        p.service_id, p.to, refusal.message
                    ),
                    None,
                );
                continue;
            }
            Fit::CantTell { fact, message } => {
                refuse(
                    Code::CantTell,
                    format!(
                        "can't tell whether {} fits on {}: {message}",
                        p.service_id, p.to
                    ),
                    Some(fact),
                );
                continue;
            }
        }
        let current_cost = state.current_cost(ctx, s);
        let bar = cost::bar(ctx, current_cost);
        let t = cost::move_terms(ctx, &state, s, c);
        // Show a term that is zero as 0, not -0 (adding +0.0 changes
        // nothing else); `gain` is their sum, as in the advice.
        let terms = t.map(|v| v + 0.0);
        let gain = terms.gain();
        let facts = cost::deciding_facts(ctx, &state, s, c);
        let (clears_bars, verdict) = verdict(gain, bar);
        accepted.push(Accepted {
            index,
            step: accepted.len() + 1,
            service: p.service_id.clone(),
            from: estate.clusters[from].id.clone(),
            to: p.to.clone(),
            gain,
            current_cost,
            bar,
            clears_bars,
            verdict,
            confidence: cost::confidence(&facts),
            evidence: crate::advise::evidence_words(&facts),
            terms,
            reason: p.reason.clone(),
        });
        copy_cost -= terms[Term::Copy];
        state.apply(ctx, s, c);
        first[s] = Some((index, true));
    }
    let after = state.totals(ctx);
    let mut refused_by_code = BTreeMap::new();
    for r in &refused {
        *refused_by_code.entry(r.code).or_insert(0) += 1;
    }
    DeciderResult {
        proposals: proposals.len(),
        accepted_count: accepted.len(),
        refused_count: refused.len(),
        refused_by_code,
        below_bar_count: accepted.iter().filter(|a| !a.clears_bars).count(),
        projected_gain: before.cost - after.cost - copy_cost,
        copy_cost,
        cross_site_mb_s_change: after.cross_site_mb_s - before.cross_site_mb_s,
        weakest_confidence: crate::fact::weakest(accepted.iter().map(|a| a.confidence)),
        totals_after: after,
        accepted,
        refused,
    }
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
