//! An estate's applied moves judged (`docs/outcomes.md`), for every
//! reader of them: the outcomes answer (`GET …/outcomes`), the
//! calibration the Why of new advice quotes (`GET …/advice?why=true`),
//! and the notification sent when an applied move delivered less than
//! half of its prediction or made things worse (after each driver pass).
//!
//! The judging is the engine's (`berth_engine::outcome`); this gathers
//! what it judges — the estate's move events, the document each move
//! replaced, the estate now — from the store.

use std::sync::Arc;

use berth_engine::outcome::{Applied, Event, Member, Report, Status, CALIBRATION_MIN};
use berth_engine::{estate, Estate, Format, Policy};
use serde_json::{json, Value};

use crate::cache::Cache;
use crate::db::Db;
use crate::error::{ApiError, ApiResult};
use crate::estates::loaded_estate;
use crate::store;

/// What the engine judges an estate's moves from.
pub struct Inputs {
    pub events: Vec<Event>,
    /// The document each move's write replaced, by write id (ascending).
    pub documents: Vec<(i64, String)>,
    pub after: Arc<Estate>,
    pub policy: Policy,
}

impl Inputs {
    /// Each write's estate before it, loaded (`None`: the document no
    /// longer loads, which the engine says as the step's error).
    fn befores(&self) -> Vec<(i64, Option<Estate>)> {
        self.documents
            .iter()
            .map(|(w, d)| (*w, estate::load(d, Format::Json).ok()))
            .collect()
    }

    /// The report's bytes as the engine's front end writes them.
    pub fn bytes(&self, now: i64) -> String {
        berth_engine::front::outcomes(
            &self.events,
            &self.befores(),
            &self.after,
            &self.policy,
            now,
            self.policy.outcome_settle_s,
        )
    }

    /// The report, typed.
    pub fn report(&self, now: i64) -> Report {
        berth_engine::outcome::report(
            &self.events,
            &self.befores(),
            &self.after,
            &self.policy,
            now,
            self.policy.outcome_settle_s,
        )
    }
}

/// Everything the engine needs to judge estate `id`'s moves.
pub async fn inputs(db: &Db, cache: &Cache, id: &str) -> ApiResult<Inputs> {
    let (_, after, policy) = loaded_estate(db, cache, id).await?;
    let rows = store::move_events(db, id).await?;
    let mut documents: Vec<(i64, String)> = Vec::new();
    for r in &rows {
        if let Err(at) = documents.binary_search_by(|(w, _)| w.cmp(&r.move_id)) {
            if let Some(d) = store::move_before_document(db, r.move_id).await? {
                documents.insert(at, (r.move_id, d));
            }
        }
    }
    let events = rows
        .into_iter()
        .map(|r| Event {
            id: r.id,
            write: r.move_id,
            member: Member {
                service: r.service,
                from: r.from,
                to: r.to,
            },
            moved_at: r.moved_at,
            noticed_by: r.noticed_by,
            basis: r.basis,
            identity: r.identity,
            snapshot: r.snapshot_id,
            advised_at: r.advised_at,
            scenario: r.scenario,
            prediction: r.prediction,
        })
        .collect();
    Ok(Inputs {
        events,
        documents,
        after,
        policy,
    })
}

/// Run `f` on the estate's inputs off the async threads (the engine
/// loads every document a move replaced and recomputes predictions).
async fn judged<T: Send + 'static>(
    db: &Db,
    cache: &Cache,
    id: &str,
    f: impl FnOnce(&Inputs) -> T + Send + 'static,
) -> ApiResult<T> {
    let inputs = inputs(db, cache, id).await?;
    tokio::task::spawn_blocking(move || f(&inputs))
        .await
        .map_err(|e| ApiError::Internal(format!("outcomes task: {e}")))
}

/// The report's bytes at `now` (`GET …/outcomes`).
pub async fn report_bytes(db: &Db, cache: &Cache, id: &str, now: i64) -> ApiResult<String> {
    judged(db, cache, id, move |i| i.bytes(now)).await
}

/// The calibration in words at `now`, as the Why of new advice quotes it
/// (`docs/outcomes.md`, "Calibration"), with its parts (by kind of step,
/// by class of the deciding facts) in words; `None` with fewer than three
/// judged advised or planned steps. Without that many move events there
/// cannot be that many steps, and nothing is judged.
pub async fn calibration(
    db: &Db,
    cache: &Cache,
    id: &str,
    now: i64,
) -> ApiResult<Option<(String, Vec<String>)>> {
    let advised = store::move_events(db, id)
        .await?
        .iter()
        .filter(|e| e.basis != "unadvised")
        .count();
    if advised < CALIBRATION_MIN {
        return Ok(None);
    }
    judged(db, cache, id, move |i| {
        let r = i.report(now);
        let parts = r.calibration_parts.into_iter().map(|p| p.line).collect();
        r.calibration_line.map(|line| (line, parts))
    })
    .await
}

/// The event type of an outcome notification's webhook body.
pub const OUTCOME_EVENT_TYPE: &str = "berth.outcome";

/// Below this share of its predicted gain an applied advised (or planned)
/// step is reported: a half is where "the advice overstated this move"
/// stops being a matter of noisy measurements (the calibration's middle
/// half is the place for smaller misses), and it is the line.
pub const SHORT_OF_PREDICTION: f64 = 0.5;

/// Why an applied step is news: it made things worse (observed gain at
/// the demand before the move below zero: its round trips and crossings
/// cost points), or, held to a prediction (advised, planned or a
/// what-if's), it delivered less than
/// [`SHORT_OF_PREDICTION`] of a positive prediction. `None` for a step
/// not yet observed, and for one that held.
pub fn shortfall(a: &Applied) -> Option<&'static str> {
    let o = a.outcome.as_ref()?;
    if o.status != Status::Observed {
        return None;
    }
    let ob = o.observed.as_ref()?;
    if ob.gain_at_demand_before < 0.0 {
        return Some("made things worse");
    }
    // Held to a prediction made before the move: the advice's, a planned
    // review's, or a saved what-if's.
    let advised = a.basis != "unadvised";
    match ob.ratio {
        Some(r) if advised && o.predicted_gain > 0.0 && r < SHORT_OF_PREDICTION => {
            Some("delivered less than half of its prediction")
        }
        _ => None,
    }
}

/// The identity an outcome notification is queued under: apart from the
/// step's recommendations (`outcome:` cannot start a service id), so a
/// step's outcome is sent once per channel beside its recommendation.
pub fn notification_identity(a: &Applied) -> String {
    format!("outcome:{}", a.identity)
}

/// The webhook event for applied step `a` of estate `meta`, judged at
/// `now`: Standard Webhooks' `{type, timestamp, data}` like a
/// recommendation's, with what was predicted and what was observed.
pub fn event(meta: &store::EstateMeta, a: &Applied, verdict: &str, now: i64) -> Value {
    let o = a.outcome.as_ref();
    let ob = o.and_then(|o| o.observed.as_ref());
    let moves: Vec<Value> = a
        .identity
        .split('+')
        .filter_map(|t| {
            let mut p = t.split('|');
            Some(json!({"service": p.next()?, "from": p.next()?, "to": p.next()?}))
        })
        .collect();
    json!({
        "type": OUTCOME_EVENT_TYPE,
        "timestamp": estate::format_time(now),
        "data": {
            "estate": meta.id,
            "estate_name": meta.name,
            "identity": a.identity,
            "basis": a.basis,
            "kind": a.kind,
            "verdict": verdict,
            "moved_at": o.map(|o| o.moved_at.clone()),
            "predicted_gain": o.map(|o| o.predicted_gain),
            "observed_gain": ob.map(|b| b.gain_at_demand_before),
            "observed_gain_at_demand_after": ob.map(|b| b.gain_at_demand_after),
            "ratio": ob.and_then(|b| b.ratio),
            "confidence": ob.map(|b| b.confidence.as_str()),
            "moves": moves,
            "link": format!("/?estate={}", meta.id),
        }
    })
}

/// The event in one sentence, for Slack and Teams.
pub fn sentence(ev: &Value) -> String {
    let d = &ev["data"];
    let moves = d["moves"]
        .as_array()
        .map(|ms| {
            ms.iter()
                .map(|m| {
                    format!(
                        "{} from {} to {}",
                        m["service"].as_str().unwrap_or(""),
                        m["from"].as_str().unwrap_or(""),
                        m["to"].as_str().unwrap_or("")
                    )
                })
                .collect::<Vec<_>>()
                .join(", with ")
        })
        .unwrap_or_default();
    let ratio = d["ratio"]
        .as_f64()
        .map(|r| format!(" ({:.0} %)", r * 100.0))
        .unwrap_or_default();
    format!(
        "The move of {moves} {}: it was predicted to gain {:.1} points and was observed to gain {:.1}{ratio} at the demand before the move ({:.1} at today's), resting on {} facts.",
        d["verdict"].as_str().unwrap_or(""),
        d["predicted_gain"].as_f64().unwrap_or(0.0),
        d["observed_gain"].as_f64().unwrap_or(0.0),
        d["observed_gain_at_demand_after"].as_f64().unwrap_or(0.0),
        d["confidence"].as_str().unwrap_or("unknown"),
    )
}

/// The bytes a channel of `kind` is sent for outcome event `ev`: the
/// event itself to a webhook; one mrkdwn text to Slack; one Adaptive Card
/// to Teams.
pub fn body_for(kind: &str, ev: &Value) -> String {
    let d = &ev["data"];
    let name = d["estate_name"].as_str().unwrap_or("");
    let link = d["link"].as_str().unwrap_or("");
    match berth_api::ChannelKind::parse(kind) {
        Some(berth_api::ChannelKind::Slack) => {
            let esc = |s: &str| {
                s.replace('&', "&amp;")
                    .replace('<', "&lt;")
                    .replace('>', "&gt;")
            };
            json!({"text": format!(
                "*Berth: an applied move fell short* in estate *{}*. {} See {}",
                esc(name),
                esc(&sentence(ev)),
                esc(link)
            )})
            .to_string()
        }
        Some(berth_api::ChannelKind::Teams) => json!({
            "type": "message",
            "attachments": [{
                "contentType": "application/vnd.microsoft.card.adaptive",
                "contentUrl": null,
                "content": {
                    "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
                    "type": "AdaptiveCard",
                    "version": "1.4",
                    "body": [
                        {"type": "TextBlock", "text": format!("Berth: an applied move fell short in {name}"),
                         "weight": "Bolder", "size": "Medium", "wrap": true},
                        {"type": "TextBlock", "text": sentence(ev), "wrap": true},
                        {"type": "FactSet", "facts": [
                            {"title": "Estate", "value": d["estate"]},
                            {"title": "Where", "value": link},
                        ]}
                    ],
                }
            }]
        })
        .to_string(),
        Some(berth_api::ChannelKind::Webhook) | None => ev.to_string(),
    }
}

/// Queue, for every enabled channel whose `min_gain` the step's
/// predicted gain reaches, one notification per applied step that fell
/// short ([`shortfall`]) as judged at `now`. Once per (channel, step):
/// the delivery is keyed by [`notification_identity`] and the estate
/// version the step's last move wrote, which never changes. Run after
/// each driver pass, under its lock; the notification cursors are left
/// alone (they are about recommendations).
pub async fn enqueue_notifications(db: &Db, cache: &Cache, now: i64) -> ApiResult<usize> {
    let channels: Vec<store::ChannelRow> = store::list_channels(db)
        .await?
        .into_iter()
        .filter(|c| c.enabled)
        .collect();
    if channels.is_empty() {
        return Ok(0);
    }
    let mut queued = 0;
    for meta in store::list_estates(db).await? {
        let versions: Vec<(i64, i64)> = store::move_events(db, &meta.id)
            .await?
            .iter()
            .map(|e| (e.id, e.estate_version))
            .collect();
        if versions.is_empty() {
            continue;
        }
        let report = judged(db, cache, &meta.id, move |i| i.report(now)).await?;
        for a in &report.applied {
            let Some(verdict) = shortfall(a) else {
                continue;
            };
            let version = a
                .events
                .iter()
                .filter_map(|id| versions.iter().find(|(e, _)| e == id).map(|(_, v)| *v))
                .max()
                .unwrap_or(meta.version);
            let predicted = a.outcome.as_ref().map_or(0.0, |o| o.predicted_gain);
            let ev = event(&meta, a, verdict, now);
            for ch in channels.iter().filter(|c| predicted.abs() >= c.min_gain) {
                let identity = notification_identity(a);
                let message_id = crate::random::new_webhook_id();
                let body = body_for(&ch.kind, &ev);
                queued += store::enqueue_outcome_delivery(
                    db,
                    &ch.name,
                    &meta.id,
                    version,
                    store::NewDelivery {
                        identity: &identity,
                        message_id: &message_id,
                        body: &body,
                    },
                    now,
                )
                .await?;
            }
        }
    }
    Ok(queued)
}

#[cfg(test)]
mod tests {
    use super::*;
    use berth_engine::cost::Terms;
    use berth_engine::fact::Class;
    use berth_engine::outcome::{Observed, Outcome};

    fn applied(basis: &str, predicted: f64, observed: f64) -> Applied {
        let ratio = (predicted != 0.0).then(|| observed / predicted);
        Applied {
            identity: "a|c1|c2".into(),
            basis: basis.into(),
            kind: "single".into(),
            noticed_by: "kubernetes_import".into(),
            events: vec![1],
            snapshot: None,
            advised_at: None,
            scenario: None,
            predicted_confidence: Class::Measured,
            predicted_facts: Vec::new(),
            outcome: Some(Outcome {
                status: Status::Observed,
                members: Vec::new(),
                moved_at: "2026-11-30T04:00:00Z".into(),
                settles_at: "2026-11-30T05:00:00Z".into(),
                predicted_gain: predicted,
                predicted_terms: Terms::from_fn(|_| 0.0),
                waiting_for: Vec::new(),
                observed: Some(Observed {
                    round_trip_at_demand_before: observed,
                    round_trip_at_demand_after: observed,
                    cross_site_at_demand_before: 0.0,
                    cross_site_at_demand_after: 0.0,
                    cross_site_mb_s_before: 0.0,
                    cross_site_mb_s_after: 0.0,
                    headroom_before: 0.0,
                    headroom_after: 0.0,
                    headroom: 0.0,
                    copy: 0.0,
                    gain_at_demand_before: observed,
                    gain_at_demand_after: observed,
                    ratio,
                    confidence: Class::Reported,
                    facts_before: Vec::new(),
                    facts_after: Vec::new(),
                }),
                flows: Vec::new(),
                notes: Vec::new(),
            }),
            error: None,
        }
    }

    #[test]
    fn short_steps_are_news_and_held_ones_are_not() {
        assert_eq!(shortfall(&applied("advised", 10.0, 6.0)), None);
        assert_eq!(shortfall(&applied("advised", 10.0, 5.0)), None);
        assert_eq!(
            shortfall(&applied("advised", 10.0, 4.9)),
            Some("delivered less than half of its prediction")
        );
        assert_eq!(
            shortfall(&applied("planned", 10.0, -1.0)),
            Some("made things worse")
        );
        // Not advised: held to no promise, news only when it cost points.
        assert_eq!(shortfall(&applied("unadvised", 10.0, 1.0)), None);
        assert_eq!(
            shortfall(&applied("unadvised", -30.0, -38.0)),
            Some("made things worse")
        );
        let mut waiting = applied("advised", 10.0, 1.0);
        waiting.outcome.as_mut().unwrap().status = Status::Waiting;
        assert_eq!(shortfall(&waiting), None);
    }

    #[test]
    fn the_sentence_says_predicted_and_observed() {
        let meta = store::EstateMeta {
            id: "est".into(),
            name: "Est".into(),
            version: 1,
            content_digest: String::new(),
            policy_digest: String::new(),
            created_at: 0,
            updated_at: 0,
        };
        let a = applied("advised", 10.0, 3.0);
        let ev = event(&meta, &a, shortfall(&a).unwrap(), 0);
        assert_eq!(ev["type"], OUTCOME_EVENT_TYPE);
        assert_eq!(ev["data"]["moves"][0]["to"], "c2");
        assert_eq!(
            sentence(&ev),
            "The move of a from c1 to c2 delivered less than half of its prediction: it was predicted to gain 10.0 points and was observed to gain 3.0 (30 %) at the demand before the move (3.0 at today's), resting on reported facts."
        );
        let slack: Value = serde_json::from_str(&body_for("slack", &ev)).unwrap();
        assert!(slack["text"]
            .as_str()
            .unwrap()
            .starts_with("*Berth: an applied move fell short* in estate *Est*. The move of a"));
    }
}
