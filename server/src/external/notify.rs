//! Notifications (docs/notifications.md): after each driver pass, every
//! recommendation that clears a channel's thresholds is queued for that
//! channel once per estate version, and due deliveries are sent through
//! the one door out ([`super::forward::Forwarder`]), retried with backoff.
//!
//! Three kinds of channel: `webhook` (a JSON event signed like a decider
//! call, `Berth-Signature` and Standard Webhooks headers), `slack` and
//! `teams` (their incoming webhooks' own message shapes).
//!
//! Deduplication is the database's: a delivery row is unique per
//! (channel, estate, identity, estate version), so a recommendation seen
//! by many passes, or by a policy change that leaves the estate's version
//! alone, is queued once. Each (channel, estate) keeps a cursor — the
//! version and policy whose advice it last looked at — so a pass looks at
//! an estate's advice only when it changed, or when a channel is new or
//! was changed (its cursors are dropped then).
//!
//! Everything here runs inside the driver's pass, under its lock, so two
//! replicas never send the same delivery at once.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use berth_api::ChannelKind;
use berth_engine::advise::Move;
use berth_engine::fact::Class;
use berth_engine::Advice;
use bytes::Bytes;
use serde::Serialize;
use serde_json::{json, Value};

use super::forward::{self, ForwardError};
use super::{signing, Handles, Outbound};
use crate::error::ApiError;
use crate::retry::Backoff;
use crate::store::{self, ChannelRow, DueDelivery, EstateMeta};

/// The event type of the signed webhook's body.
pub const EVENT_TYPE: &str = "berth.recommendation";

/// How long one attempt may take in all. 10 s: Slack and Teams answer
/// within a second or two, and a receiver that needs longer should queue
/// the event and answer at once; a pass with many sends stays well under
/// the driver's minute.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);

/// First retry delay. 30 s: a receiver that is restarting is back by
/// then, and a blip costs half a minute rather than the whole schedule.
pub const BASE_RETRY_S: i64 = 30;

/// Longest delay between attempts. An hour: a receiver down for a
/// maintenance window is tried again soon after it ends.
pub const MAX_RETRY_S: i64 = 3600;

/// Attempts before a delivery is given up (marked `failed`, still listed
/// on Health). 10: the nine waits between them (30 s doubling, capped at
/// an hour) span about three hours of outage — past that the
/// recommendation is stale news, and the next estate version queues it
/// again if it still holds.
pub const MAX_ATTEMPTS: i64 = 10;

/// Deliveries sent per pass at most. 32: twice the forwarder's cap on
/// concurrent calls, so a pass sends in at most two waves of
/// [`SEND_TIMEOUT`] even when every receiver hangs; the rest wait for the
/// next pass, in the order they became due.
const SENDS_PER_PASS: i64 = 32;

/// The highest `min_gain` accepted, points: far above any gain an estate
/// produces (the policy's bars are in the tens), so a typo of a few
/// extra digits is caught rather than silencing a channel for good.
pub const MAX_MIN_GAIN: f64 = 1_000_000.0;

/// A channel name: what people type and see on Health and in URLs, with
/// the rules of decider names (lower-case letters, digits, `-`, `_`, `.`,
/// starting with a letter or digit, at most
/// [`super::MAX_NAME_CHARS`]).
pub fn check_name(name: &str) -> Result<(), String> {
    let max = super::MAX_NAME_CHARS;
    if name.is_empty() || name.chars().count() > max {
        return Err(format!("a channel name must be 1 to {max} characters"));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_.".contains(c))
    {
        return Err(format!(
            "{name:?}: a channel name may hold only lower-case letters, digits, '-', '_' and '.'"
        ));
    }
    if !name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit()) {
        return Err(format!(
            "{name:?}: a channel name must start with a lower-case letter or a digit"
        ));
    }
    Ok(())
}

pub fn check_kind(kind: &str) -> Result<(), String> {
    if ChannelKind::parse(kind).is_some() {
        Ok(())
    } else {
        Err(format!(
            "{:?}: the kind must be one of {}",
            super::excerpt(kind),
            ChannelKind::names()
        ))
    }
}

pub fn check_min_gain(g: f64) -> Result<(), String> {
    if g.is_finite() && (0.0..=MAX_MIN_GAIN).contains(&g) {
        Ok(())
    } else {
        Err(format!(
            "{g}: the minimum gain must be from 0 to {MAX_MIN_GAIN} points"
        ))
    }
}

pub fn check_min_confidence(c: &str) -> Result<(), String> {
    match Class::parse(c) {
        Some(_) => Ok(()),
        None => Err(format!(
            "{:?}: the minimum confidence must be one of {}",
            super::excerpt(c),
            Class::ALL.map(|c| c.as_str()).join(", ")
        )),
    }
}

/// Advice the driver computed in this pass, by estate id: handed over so
/// that the engine is not run twice for the same snapshot.
pub struct Fresh {
    pub version: i64,
    pub policy_digest: String,
    pub advice: Arc<Advice>,
}

/// What the notification step of one pass did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub queued: usize,
    pub delivered: usize,
    pub retrying: usize,
    pub failed: usize,
}

/// The moves of `advice` a channel is sent: one per recommendation (a
/// compound step once, at its first member; never a move whose evidence
/// is too weak to recommend), whose gain is at least the
/// channel's `min_gain` and whose confidence is the channel's
/// `min_confidence` or better (a compound step counts with the group's
/// gain and confidence), and whose identity is not in `hidden` —
/// recommendations people dismissed or snoozed. Indices into
/// `advice.moves`, in step order.
pub fn eligible(advice: &Advice, channel: &ChannelRow, hidden: &BTreeSet<String>) -> Vec<usize> {
    // A stored class that no longer parses lets nothing through rather
    // than everything.
    let Some(min_class) = Class::parse(&channel.min_confidence) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, m) in advice.moves.iter().enumerate() {
        // A move the evidence cannot back is shown apart on the pages and
        // is no recommendation (`Move::evidence`); a compound step
        // carries the group's words on every member.
        if m.evidence.is_some() {
            continue;
        }
        let (gain, confidence) = match &m.group {
            None => (m.gain, m.confidence),
            Some(g) if g.steps.first() == Some(&m.step) => (g.gain, g.confidence),
            // A later member: its group was considered at the first.
            Some(_) => continue,
        };
        // Classes order best first: `Measured < Guessed`.
        if gain < channel.min_gain || confidence > min_class {
            continue;
        }
        if hidden.contains(&berth_engine::review::identity(&advice.moves, i)) {
            continue;
        }
        out.push(i);
    }
    out
}

/// The moves one recommendation consists of: the move itself, or every
/// member of its compound step, in the order they are applied.
fn members(moves: &[Move], i: usize) -> Vec<&Move> {
    match &moves[i].group {
        None => vec![&moves[i]],
        Some(g) => g
            .steps
            .iter()
            .filter_map(|s| moves.iter().find(|m| m.step == *s))
            .collect(),
    }
}

/// Where the recommendation is shown: the Placement page on its estate
/// (a path; Berth does not know the address people reach it at).
fn link(estate: &str) -> String {
    format!("/?estate={estate}")
}

/// Numbers in messages: one decimal, as the pages show points.
fn points(x: f64) -> String {
    format!("{x:.1}")
}

/// The signed webhook's event: Standard Webhooks' `{type, timestamp,
/// data}` envelope around the recommendation.
pub fn event(meta: &EstateMeta, advice: &Advice, i: usize, now: i64) -> Value {
    let m = &advice.moves[i];
    let (gain, confidence) = match &m.group {
        None => (m.gain, m.confidence),
        Some(g) => (g.gain, g.confidence),
    };
    let moves: Vec<Value> = members(&advice.moves, i)
        .iter()
        .map(|m| {
            json!({
                "step": m.step,
                "service": m.service,
                "from": m.from,
                "to": m.to,
                "gain": m.gain,
                "confidence": m.confidence.as_str(),
            })
        })
        .collect();
    json!({
        "type": EVENT_TYPE,
        "timestamp": berth_engine::estate::format_time(now),
        "data": {
            "estate": meta.id,
            "estate_name": meta.name,
            "estate_version": meta.version,
            "content_digest": meta.content_digest,
            "policy_digest": meta.policy_digest,
            "evaluated_at": advice.now,
            "identity": berth_engine::review::identity(&advice.moves, i),
            "gain": gain,
            "confidence": confidence.as_str(),
            "moves": moves,
            "link": link(&meta.id),
        }
    })
}

/// `&`, `<` and `>` escaped as Slack's mrkdwn asks (they start links and
/// mentions); everything else is literal.
fn slack_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// One line per moved service: `svc` from `a` to `b`.
fn move_lines(ev: &Value, code: impl Fn(&str) -> String) -> Vec<String> {
    ev["data"]["moves"]
        .as_array()
        .map(|ms| {
            ms.iter()
                .map(|m| {
                    format!(
                        "{} from {} to {}",
                        code(m["service"].as_str().unwrap_or("")),
                        code(m["from"].as_str().unwrap_or("")),
                        code(m["to"].as_str().unwrap_or("")),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A Slack incoming-webhook message: `{"text": …}` in mrkdwn.
pub fn slack_message(ev: &Value) -> Value {
    let d = &ev["data"];
    let lines = move_lines(ev, |s| format!("`{}`", slack_escape(s)));
    let text = format!(
        "*Berth recommends* for estate *{}* (version {}): move {}.\nGain {} points, confidence {}. See {}",
        slack_escape(d["estate_name"].as_str().unwrap_or("")),
        d["estate_version"],
        lines.join(", and "),
        points(d["gain"].as_f64().unwrap_or(0.0)),
        d["confidence"].as_str().unwrap_or(""),
        slack_escape(d["link"].as_str().unwrap_or("")),
    );
    json!({ "text": text })
}

/// A Microsoft Teams incoming-webhook message: one Adaptive Card (the
/// format Teams workflows' "post to a channel when a webhook request is
/// received" takes) with the moves and a fact set.
pub fn teams_message(ev: &Value) -> Value {
    let d = &ev["data"];
    let mut body = vec![json!({
        "type": "TextBlock",
        "text": format!("Berth recommends: {}", d["estate_name"].as_str().unwrap_or("")),
        "weight": "Bolder",
        "size": "Medium",
        "wrap": true,
    })];
    for line in move_lines(ev, |s| s.to_string()) {
        body.push(json!({"type": "TextBlock", "text": format!("Move {line}"), "wrap": true}));
    }
    body.push(json!({
        "type": "FactSet",
        "facts": [
            {"title": "Estate", "value": d["estate"]},
            {"title": "Version", "value": d["estate_version"].to_string()},
            {"title": "Gain", "value": format!("{} points", points(d["gain"].as_f64().unwrap_or(0.0)))},
            {"title": "Confidence", "value": d["confidence"]},
            {"title": "Where", "value": d["link"]},
        ]
    }));
    json!({
        "type": "message",
        "attachments": [{
            "contentType": "application/vnd.microsoft.card.adaptive",
            "contentUrl": null,
            "content": {
                "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
                "type": "AdaptiveCard",
                "version": "1.4",
                "body": body,
            }
        }]
    })
}

/// The bytes a channel of `kind` is sent for event `ev`.
pub fn body_for(kind: &str, ev: &Value) -> String {
    match ChannelKind::parse(kind) {
        Some(ChannelKind::Slack) => slack_message(ev).to_string(),
        Some(ChannelKind::Teams) => teams_message(ev).to_string(),
        Some(ChannelKind::Webhook) | None => ev.to_string(),
    }
}

/// The doubling delay before attempt `attempts + 1` (after `attempts`
/// failed ones, 1-based), capped, and never shorter than a `Retry-After`
/// the receiver sent (itself capped, so a receiver cannot park a delivery
/// for a year).
pub fn retry_delay(attempts: i64, retry_after: Option<Duration>) -> i64 {
    REDELIVERY.delay_s(attempts, retry_after)
}

/// The redelivery schedule: [`BASE_RETRY_S`] doubling to
/// [`MAX_RETRY_S`], no jitter (one server sends), a receiver's
/// `Retry-After` held to the same ceiling.
const REDELIVERY: Backoff = Backoff {
    base: Duration::from_secs(BASE_RETRY_S as u64),
    ceiling: Duration::from_secs(MAX_RETRY_S as u64),
    jitter: false,
    asked_at_most: Some(Duration::from_secs(MAX_RETRY_S as u64)),
};

/// The vault's associated data for a channel's secret: distinct from
/// every decider's name (those cannot hold `:`).
pub fn vault_name(channel: &str) -> String {
    format!("channel:{channel}")
}

/// The notification step of a pass at `now`: queue what is new, then send
/// what is due.
pub async fn after_pass(
    state: &Handles,
    now: i64,
    fresh: &BTreeMap<String, Fresh>,
) -> Result<Summary, ApiError> {
    let mut queued = enqueue(state, now, fresh).await?;
    // Applied moves that fell short of their prediction (docs/outcomes.md).
    queued += crate::outcomes::enqueue_notifications(&state.db, &state.cache, now).await?;
    let mut summary = deliver_due(state, now).await?;
    summary.queued = queued;
    Ok(summary)
}

/// Queue each enabled channel's eligible recommendations from every
/// estate's newest advice it has not looked at yet. Only a snapshot of
/// the estate's current version and policy is looked at: an older one is
/// about to be replaced by the driver.
async fn enqueue(
    state: &Handles,
    now: i64,
    fresh: &BTreeMap<String, Fresh>,
) -> Result<usize, ApiError> {
    let channels: Vec<ChannelRow> = store::list_channels(&state.db)
        .await?
        .into_iter()
        .filter(|c| c.enabled)
        .collect();
    if channels.is_empty() {
        return Ok(0);
    }
    let cursors: BTreeMap<(String, String), (i64, String)> = store::notify_cursors(&state.db)
        .await?
        .into_iter()
        .map(|(c, e, v, p)| ((c, e), (v, p)))
        .collect();
    let heads = store::snapshot_heads(&state.db).await?;
    let metas: BTreeMap<String, EstateMeta> = store::list_estates(&state.db)
        .await?
        .into_iter()
        .map(|m| (m.id.clone(), m))
        .collect();
    let mut queued = 0;
    for (estate, version, policy_digest, evaluated_at) in heads {
        let Some(meta) = metas.get(&estate) else {
            continue;
        };
        if meta.version != version || meta.policy_digest != policy_digest {
            continue;
        }
        let at = (version, policy_digest.clone());
        let behind: Vec<&ChannelRow> = channels
            .iter()
            .filter(|c| cursors.get(&(c.name.clone(), estate.clone())) != Some(&at))
            .collect();
        if behind.is_empty() {
            continue;
        }
        let advice = match fresh.get(&estate) {
            Some(f) if f.version == version && f.policy_digest == policy_digest => f.advice.clone(),
            _ => match advice_at(state, &estate, meta, evaluated_at).await? {
                Some(a) => a,
                None => continue,
            },
        };
        // What people dismissed or snoozed, and that still holds at this
        // pass (docs/reviews.md): the same recommendations the pages hide.
        let hidden = crate::reviews::hidden_identities(&state.db, &estate, &advice, now).await?;
        for ch in behind {
            let picked = eligible(&advice, ch, &hidden);
            let made: Vec<(String, String, String)> = picked
                .iter()
                .map(|&i| {
                    let ev = event(meta, &advice, i, now);
                    (
                        berth_engine::review::identity(&advice.moves, i),
                        signing::new_webhook_id(),
                        body_for(&ch.kind, &ev),
                    )
                })
                .collect();
            let rows: Vec<store::NewDelivery> = made
                .iter()
                .map(|(identity, id, body)| store::NewDelivery {
                    identity,
                    message_id: id,
                    body,
                })
                .collect();
            queued += store::enqueue_deliveries(
                &state.db,
                &ch.name,
                &estate,
                version,
                &policy_digest,
                &rows,
                now,
            )
            .await?;
        }
    }
    Ok(queued)
}

/// The advice of the snapshot at `evaluated_at`, computed again (the
/// engine is deterministic: same estate, policy and time, same advice),
/// for a channel that joined after the driver made it. `None` if the
/// estate changed or went meanwhile.
async fn advice_at(
    state: &Handles,
    id: &str,
    meta: &EstateMeta,
    evaluated_at: i64,
) -> Result<Option<Arc<Advice>>, ApiError> {
    let (now_meta, estate, policy) =
        match crate::estates::loaded_estate(&state.db, &state.cache, id).await {
            Ok(l) => l,
            Err(ApiError::NotFound(_)) => return Ok(None),
            Err(e) => return Err(e),
        };
    if now_meta.version != meta.version || now_meta.policy_digest != meta.policy_digest {
        return Ok(None);
    }
    let advice =
        tokio::task::spawn_blocking(move || berth_engine::advise(&estate, &policy, evaluated_at))
            .await
            .map_err(|e| ApiError::Internal(format!("advice task for notifications: {e}")))?;
    Ok(Some(Arc::new(advice)))
}

/// Why one attempt did not deliver.
struct Miss {
    http_status: Option<u16>,
    retry_after: Option<Duration>,
    message: String,
    /// Retrying cannot help (a 4xx other than 408 and 429): give up now.
    permanent: bool,
}

/// A forwarder error in words about a notification receiver (the
/// forwarder's own words are about deciders).
fn describe(e: &ForwardError) -> String {
    match e {
        ForwardError::BadUrl(why) => format!("the channel's URL cannot be used: {why}"),
        ForwardError::Blocked { host, addr, reason } => format!(
            "refused to contact `{host}` at {addr} ({reason}): receivers may only be at public \
             addresses, or at loopback or private ones an administrator allowed (--decider-allow)"
        ),
        ForwardError::Resolve(why) => format!("could not resolve the receiver's host: {why}"),
        ForwardError::Connect(why) => format!("could not connect to the receiver: {why}"),
        ForwardError::Tls(why) => format!("the TLS handshake with the receiver failed: {why}"),
        ForwardError::Timeout => format!(
            "the receiver did not answer completely within {} s",
            SEND_TIMEOUT.as_secs()
        ),
        ForwardError::Redirect { status } => format!(
            "the receiver answered with a redirect ({status}); redirects are never followed, \
             so configure the final URL"
        ),
        ForwardError::RequestTooLarge { size, limit } => {
            format!("the message is {size} bytes, over the limit of {limit}; nothing was sent")
        }
        ForwardError::ResponseTooLarge { limit } => {
            format!("the receiver's reply is over {limit} bytes; reading stopped there")
        }
        ForwardError::Busy { limit } => {
            format!("not sent: all {limit} outbound slots stayed busy for the whole timeout")
        }
        ForwardError::Http(why) => format!("the HTTP exchange with the receiver failed: {why}"),
    }
}

fn miss(message: String) -> Miss {
    Miss {
        http_status: None,
        retry_after: None,
        message,
        permanent: false,
    }
}

/// One attempt of `d` to channel `ch`, signed (for a webhook) at the wall
/// clock's `sign_at`: receivers check the timestamp against their own.
async fn attempt(
    out: &Outbound,
    ch: &ChannelRow,
    d: &DueDelivery,
    sign_at: i64,
) -> Result<u16, Miss> {
    let mut headers: Vec<(&'static str, String)> = Vec::new();
    if ch.kind == ChannelKind::Webhook.as_str() {
        let Some(sealed) = &ch.secret_sealed else {
            return Err(miss(format!(
                "channel {:?} has no secret; rotate one with POST /api/notification-channels/{}/secret",
                ch.name, ch.name
            )));
        };
        let Some(vault) = &out.vault else {
            return Err(miss(
                "this server has no secret key to open the channel's secret; start it with \
                 BERTH_SECRET_KEY or --secret-key-file"
                    .into(),
            ));
        };
        let secret = vault
            .open(&vault_name(&ch.name), sealed)
            .map_err(|e| e.to_string())
            .and_then(|t| signing::Secret::parse(&t).map_err(|e| e.to_string()))
            .map_err(|e| miss(format!("the channel's secret cannot be used: {e}")))?;
        let sig = signing::sign(
            &[&secret],
            &d.delivery.message_id,
            sign_at,
            d.body.as_bytes(),
        );
        headers.push((signing::BERTH_SIGNATURE, sig.berth_signature));
        headers.push((signing::WEBHOOK_ID, sig.webhook_id));
        headers.push((signing::WEBHOOK_TIMESTAMP, sig.webhook_timestamp));
        headers.push((signing::WEBHOOK_SIGNATURE, sig.webhook_signature));
    }
    let body = Bytes::from(d.body.clone());
    let reply = out
        .forwarder
        .post(&ch.url, &headers, body, SEND_TIMEOUT)
        .await
        .map_err(|e| miss(describe(&e)))?;
    let said = if reply.body.is_empty() {
        String::new()
    } else {
        format!("; it said: {}", super::excerpt_bytes(&reply.body))
    };
    match forward::outcome(reply.status, reply.retry_after) {
        forward::Outcome::Accepted => Ok(reply.status),
        forward::Outcome::Deferred { retry_after } => Err(Miss {
            http_status: Some(reply.status),
            retry_after,
            message: format!(
                "the receiver answered {}: busy, try later{said}",
                reply.status
            ),
            permanent: false,
        }),
        forward::Outcome::Redirect { status } | forward::Outcome::Failed { status } => Err(Miss {
            http_status: Some(status),
            retry_after: None,
            message: format!("the receiver answered HTTP {status}{said}"),
            permanent: (400..500).contains(&status) && status != 408,
        }),
    }
}

/// Send every delivery due at `now` (at most [`SENDS_PER_PASS`]), all at
/// once, and record each attempt: delivered, pending again after
/// [`retry_delay`], or failed after [`MAX_ATTEMPTS`] (or at once when
/// retrying cannot help). The driver calls it from each pass; tests call
/// it with a later `now` to step through the schedule.
pub async fn deliver_due(state: &Handles, now: i64) -> Result<Summary, ApiError> {
    let due = store::due_deliveries(&state.db, now, SENDS_PER_PASS).await?;
    let mut summary = Summary::default();
    if due.is_empty() {
        return Ok(summary);
    }
    let channels: BTreeMap<String, ChannelRow> = store::list_channels(&state.db)
        .await?
        .into_iter()
        .map(|c| (c.name.clone(), c))
        .collect();
    let sign_at = crate::clock::now_s();
    let mut set = tokio::task::JoinSet::new();
    for d in due {
        let Some(ch) = channels.get(&d.delivery.channel).cloned() else {
            // Deleted since: its deliveries went with it.
            continue;
        };
        if !ch.enabled {
            // Kept pending: sent when the channel is enabled again.
            continue;
        }
        let out = state.outbound.clone();
        set.spawn(async move {
            let r = attempt(&out, &ch, &d, sign_at).await;
            (d, r)
        });
    }
    let mut done = Vec::new();
    while let Some(j) = set.join_next().await {
        done.push(j.map_err(|e| ApiError::Internal(format!("notification task: {e}")))?);
    }
    // Recorded in id order, whatever order the answers came in.
    done.sort_by_key(|(d, _)| d.delivery.id);
    for (d, r) in done {
        let attempts = d.delivery.attempts + 1;
        let (status, next, http_status, error) = match &r {
            Ok(s) => ("delivered", None, Some(i64::from(*s)), String::new()),
            Err(m) => {
                let give_up = m.permanent || attempts >= MAX_ATTEMPTS;
                let next = (!give_up).then(|| now + retry_delay(attempts, m.retry_after));
                (
                    if give_up { "failed" } else { "pending" },
                    next,
                    m.http_status.map(i64::from),
                    m.message.chars().take(500).collect(),
                )
            }
        };
        match status {
            "delivered" => summary.delivered += 1,
            "failed" => summary.failed += 1,
            _ => summary.retrying += 1,
        }
        if status != "delivered" {
            tracing::warn!(
                channel = %d.delivery.channel,
                estate = %d.delivery.estate,
                identity = %d.delivery.identity,
                attempts,
                error = %error,
                "notification not delivered"
            );
        }
        store::record_attempt(
            &state.db,
            d.delivery.id,
            &store::Attempt {
                status,
                at: now,
                next_attempt_at: next,
                http_status,
                error: &error,
            },
        )
        .await?;
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_double_to_the_ceiling_and_honour_retry_after_within_it() {
        let delays: Vec<i64> = (1..=9).map(|a| retry_delay(a, None)).collect();
        assert_eq!(delays, [30, 60, 120, 240, 480, 960, 1920, 3600, 3600]);
        assert_eq!(retry_delay(1, Some(Duration::from_secs(300))), 300);
        assert_eq!(retry_delay(4, Some(Duration::from_secs(5))), 240);
        assert_eq!(
            retry_delay(1, Some(Duration::from_secs(86_400 * 365))),
            3600
        );
    }

    #[test]
    fn slack_text_escapes_what_mrkdwn_would_read_as_markup() {
        assert_eq!(slack_escape("a<b>&c"), "a&lt;b&gt;&amp;c");
        let ev = json!({"data": {
            "estate_name": "Shop <prod>", "estate_version": 3, "gain": 12.34,
            "confidence": "measured", "link": "/?estate=shop",
            "moves": [{"service": "cart", "from": "fra", "to": "par"}]
        }});
        let text = slack_message(&ev)["text"].as_str().unwrap().to_string();
        assert!(text.contains("*Shop &lt;prod&gt;* (version 3)"), "{text}");
        assert!(text.contains("`cart` from `fra` to `par`"), "{text}");
        assert!(
            text.contains("Gain 12.3 points, confidence measured"),
            "{text}"
        );
    }
}
