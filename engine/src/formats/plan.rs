//! Change plans (`docs/plans.md`): a selection of moves written for the
//! people and the tools that carry them out.
//!
//! A plan is made from an estate, a policy, `now` and a [`Selection`]:
//!
//! - [`Selection::Advice`]: every recommended move, in order;
//! - [`Selection::Services`]: the recommended moves of the services named;
//! - [`Selection::Scenario`]: the moves a what-if scenario makes (its
//!   `move` steps and the placements of its evacuations).
//!
//! Each move carries its gain and terms, confidence, deciding facts with
//! their age, and the flip conditions the Why computes (`why.rs`); the plan
//! carries the totals before and after, the estate version and the policy
//! digest. It is then written as JSON ([`Plan`]), Markdown for a pull
//! request or a ticket ([`markdown`]), or as manifests for the
//! multi-cluster controllers that do the moving ([`karmada`], [`ocm`]).
//!
//! Where the numbers come from, so nothing is computed twice in two ways:
//! advice moves carry the advice's own numbers and the explanation of
//! their step (`why::explain`); a scenario's moves are evaluated by the
//! same cost expressions on the scenario's evolving placement, and carry
//! flip conditions only where the scenario is, up to that move, exactly
//! the recommended sequence (elsewhere the engine's flip conditions, which
//! are about *its* decision, do not apply, and the move says so).

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;

use crate::advise::{self, Advice};
use crate::cost::{self, Ctx, State, Terms, Totals};
use crate::estate::{Estate, EstateError, Workload};
use crate::fact::{Class, FactRef};
use crate::numfmt::signed;
use crate::policy::Policy;
use crate::whatif::{self, Scenario, Warning};
use crate::why::Flip;

/// The plan result's schema.
pub const SCHEMA: u64 = 1;

/// Which moves a plan holds.
#[derive(Clone, Debug, PartialEq)]
pub enum Selection {
    /// Every recommended move of the advice.
    Advice,
    /// The recommended moves of these services (ids), in advice order.
    Services(Vec<String>),
    /// The moves of a what-if scenario.
    Scenario(Scenario),
}

/// The forms a plan is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Json,
    Markdown,
    Karmada,
    Ocm,
}

impl Format {
    pub const ALL: [Format; 4] = [Format::Json, Format::Markdown, Format::Karmada, Format::Ocm];

    pub fn as_str(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Markdown => "markdown",
            Format::Karmada => "karmada",
            Format::Ocm => "ocm",
        }
    }

    pub fn parse(s: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.as_str() == s)
    }

    /// The media type of the bytes written in this form.
    pub fn media_type(self) -> &'static str {
        match self {
            Format::Json => "application/json",
            Format::Markdown => "text/markdown; charset=utf-8",
            Format::Karmada | Format::Ocm => "application/yaml",
        }
    }

    /// The usual file name ending of this form.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Markdown => "md",
            Format::Karmada | Format::Ocm => "yaml",
        }
    }

    /// The file name of a plan of estate `id` in this form, as the API's
    /// attachment and the page's download name it: `ID-plan.md`,
    /// `ID-plan.json`, `ID-karmada.yaml`, `ID-ocm.yaml` (characters of an
    /// id that do not belong in a file name become `-`).
    pub fn file_name(self, id: &str) -> String {
        let stem: String = id
            .chars()
            .map(|c| {
                if matches!(c, '/' | ':' | '@' | '"' | '\\') {
                    '-'
                } else {
                    c
                }
            })
            .collect();
        let what = match self {
            Format::Json | Format::Markdown => "plan",
            Format::Karmada => "karmada",
            Format::Ocm => "ocm",
        };
        format!("{stem}-{what}.{}", self.extension())
    }
}

/// What a plan holds, as named in it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SelectionInfo {
    /// `advice`, `services` or `scenario`.
    pub kind: &'static str,
    /// The services asked for (`services`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub services: Option<Vec<String>>,
    /// The scenario's name (`scenario`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
}

/// A change plan.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Plan {
    pub schema: u64,
    /// The estate's name.
    pub estate: String,
    pub estate_version: String,
    pub policy_digest: String,
    /// Evaluation time, RFC 3339.
    pub now: String,
    pub selection: SelectionInfo,
    pub totals_before: Totals,
    /// The totals once the plan's moves are made (and only those).
    pub totals_after: Totals,
    /// `totals_after − totals_before`.
    pub change: Totals,
    pub moves: Vec<PlanMove>,
    /// Every Kubernetes workload a move of the plan changes, once, with
    /// every copy of it in the estate and the clusters it runs in after
    /// the plan: what the Karmada and OCM manifests place (one object per
    /// workload). In the order of their first moved service's id; empty
    /// when no moved service names its workload.
    pub workloads: Vec<PlanWorkload>,
    /// A scenario's warnings (constraints it breaks, capacity verdicts);
    /// empty for advice.
    pub warnings: Vec<Warning>,
    /// How to read the numbers, where a selection changes their meaning.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// For each move, the number of its step as the pages, the text output
    /// and the notifications number the advice's recommendations
    /// (`text::steps`: a compound step's members share one number); `None`
    /// for a scenario's moves, numbered by the scenario. Not published
    /// (the JSON keeps `advice_step`, the engine's own sequence): the
    /// Markdown reads it so its numbers are the page's.
    #[serde(skip)]
    pub step_numbers: Vec<Option<usize>>,
}

/// One move of a plan.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PlanMove {
    /// 1-based position in the plan.
    pub step: usize,
    pub service: String,
    pub from: String,
    pub to: String,
    /// The advice's step of this move, when it is a recommended move.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub advice_step: Option<usize>,
    /// The Kubernetes object the service is, when the estate says
    /// (`workload`, or a Kubernetes import's `source`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workload: Option<Workload>,
    /// Points; the sum of `terms`.
    pub gain: f64,
    /// The gain the move had to reach to be recommended.
    pub bar: f64,
    /// Class of the weakest deciding fact.
    pub confidence: Class,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    pub terms: Terms,
    /// Every deciding fact (value, class, source, age), sorted by key.
    pub facts: Vec<FactRef>,
    /// The flip condition of each deciding fact, aligned with `facts`;
    /// empty when the move has none (see `note`).
    pub flips: Vec<Flip>,
    /// Facts outside `facts` whose value alone could change the decision.
    pub other_flips: Vec<Flip>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// For a member of a compound step: the group's Why (its summary, each
    /// member alone, and where the group stops clearing its bar).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<crate::why::GroupWhy>,
}

/// One Kubernetes workload a plan changes: one template for the
/// multi-cluster controllers, whatever the number of its copies.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PlanWorkload {
    /// As its first service (by id) names it.
    pub workload: Workload,
    /// Every cluster a copy of it runs in after the plan (the copies that
    /// stay and the destinations of those that move), in cluster id
    /// order, each once.
    pub clusters: Vec<String>,
    /// Every service of the estate that is this workload, in id order.
    pub copies: Vec<PlanCopy>,
}

/// One copy of a workload: where it runs before and after the plan.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PlanCopy {
    pub service: String,
    pub from: String,
    /// The same as `from` for a copy the plan does not move (or moves
    /// back).
    pub to: String,
}

/// The workloads `moves` change (see [`Plan::workloads`]): the final
/// placement of the moves made in order, grouped by the Kubernetes object
/// each service is (`copies.rs`).
fn plan_workloads(estate: &Estate, moves: &[PlanMove]) -> Vec<PlanWorkload> {
    let mut at: Vec<usize> = estate.services.iter().map(|s| s.cluster).collect();
    for m in moves {
        let s = estate.service_index(&m.service).expect("planned service");
        at[s] = estate.cluster_index(&m.to).expect("planned cluster");
    }
    let moved = |s: usize| at[s] != estate.services[s].cluster;
    let copies = crate::copies::copies(estate);
    // Each group once, at its first moved service (index = id order).
    let mut seen = vec![false; copies.groups.len()];
    let mut order: Vec<usize> = Vec::new();
    for s in (0..estate.services.len()).filter(|&s| moved(s)) {
        if let Some(g) = copies.of[s].filter(|&g| !seen[g]) {
            seen[g] = true;
            order.push(g);
        }
    }
    order
        .into_iter()
        .map(|g| {
            let group = &copies.groups[g];
            let mut clusters: Vec<usize> = group.services.iter().map(|&s| at[s]).collect();
            clusters.sort_unstable();
            clusters.dedup();
            PlanWorkload {
                workload: group.workload.clone(),
                clusters: clusters
                    .into_iter()
                    .map(|c| estate.clusters[c].id.clone())
                    .collect(),
                copies: group
                    .services
                    .iter()
                    .map(|&s| PlanCopy {
                        service: estate.services[s].id.clone(),
                        from: estate.clusters[estate.services[s].cluster].id.clone(),
                        to: estate.clusters[at[s]].id.clone(),
                    })
                    .collect(),
            }
        })
        .collect()
}

/// Why a plan cannot be made (an unknown or unmoved service), or a
/// manifest cannot be written (a name the estate lacks): the input it is
/// about and the words. `path` is a JSON pointer into that input when one
/// applies.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PlanError {
    /// `services`, `scenario` or `estate`.
    #[serde(skip)]
    pub input: &'static str,
    pub path: String,
    pub line: Option<usize>,
    pub message: String,
}

fn error(input: &'static str, path: String, message: String) -> PlanError {
    PlanError {
        input,
        path,
        line: None,
        message,
    }
}

/// Make the plan of `selection`.
pub fn plan(
    estate: &Estate,
    policy: &Policy,
    now: i64,
    selection: &Selection,
) -> Result<Plan, Vec<PlanError>> {
    let advice = crate::advise(estate, policy, now);
    let why = crate::explain(estate, policy, now, &advice);
    match selection {
        Selection::Advice => Ok(from_advice(estate, policy, now, &advice, &why, None)),
        Selection::Services(ids) => {
            let mut errors = Vec::new();
            for (i, id) in ids.iter().enumerate() {
                if ids[..i].contains(id) {
                    errors.push(error(
                        "services",
                        format!("/{i}"),
                        format!("service {id:?} is named twice"),
                    ));
                } else if estate.service_index(id).is_none() {
                    errors.push(error(
                        "services",
                        format!("/{i}"),
                        format!("no service {id:?} in estate {:?}", estate.name),
                    ));
                } else if !advice.moves.iter().any(|m| &m.service == id) {
                    errors.push(error(
                        "services",
                        format!("/{i}"),
                        format!(
                            "service {id:?} has no recommended move (the advice moves {}); a what-if scenario can plan any move",
                            moved_list(&advice)
                        ),
                    ));
                }
            }
            if ids.is_empty() {
                errors.push(error(
                    "services",
                    String::new(),
                    "name at least one service, or none at all for every recommended move".into(),
                ));
            }
            if !errors.is_empty() {
                return Err(errors);
            }
            // A compound step moves as one: naming one member plans the
            // whole group (a member alone may raise the cost).
            let mut with_groups = ids.clone();
            for m in &advice.moves {
                if let Some(g) = m.group.as_ref().filter(|_| ids.contains(&m.service)) {
                    for s in &g.services {
                        if !with_groups.contains(s) {
                            with_groups.push(s.clone());
                        }
                    }
                }
            }
            Ok(from_advice(
                estate,
                policy,
                now,
                &advice,
                &why,
                Some(&with_groups),
            ))
        }
        Selection::Scenario(scenario) => {
            from_scenario(estate, policy, now, &advice, &why, scenario).map_err(|errors| {
                errors
                    .into_iter()
                    .map(|e: EstateError| PlanError {
                        input: "scenario",
                        path: e.path,
                        line: e.line,
                        message: e.message,
                    })
                    .collect()
            })
        }
    }
}

fn moved_list(advice: &Advice) -> String {
    if advice.moves.is_empty() {
        return "no service".into();
    }
    advice
        .moves
        .iter()
        .map(|m| m.service.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn from_advice(
    estate: &Estate,
    policy: &Policy,
    now: i64,
    advice: &Advice,
    why: &[crate::MoveWhy],
    only: Option<&Vec<String>>,
) -> Plan {
    // Only recommended moves: a move resting on guesses is listed apart
    // by the advice and is never part of a plan to carry out.
    let recommended = advice.moves.iter().filter(|m| m.is_recommended()).count();
    let chosen: Vec<usize> = (0..advice.moves.len())
        .filter(|&k| advice.moves[k].is_recommended())
        .filter(|&k| only.is_none_or(|ids| ids.contains(&advice.moves[k].service)))
        .collect();
    let all = chosen.len() == recommended;
    let moves: Vec<PlanMove> = chosen
        .iter()
        .enumerate()
        .map(|(i, &k)| {
            let m = &advice.moves[k];
            let w = &why[k];
            let service = estate
                .service_index(&m.service)
                .expect("advice of this estate");
            PlanMove {
                step: i + 1,
                service: m.service.clone(),
                from: m.from.clone(),
                to: m.to.clone(),
                advice_step: Some(m.step),
                workload: estate.services[service].workload_ref(),
                gain: m.gain,
                bar: m.bar,
                confidence: m.confidence,
                evidence: m.evidence.clone(),
                terms: m.terms,
                facts: m.facts.clone(),
                flips: w.flips.clone(),
                other_flips: w.other_flips.clone(),
                note: w.note.clone(),
                group: w.group.clone(),
            }
        })
        .collect();
    let numbered = crate::text::steps(&advice.moves);
    let step_numbers: Vec<Option<usize>> = chosen
        .iter()
        .map(|k| {
            numbered
                .iter()
                .find(|s| s.moves.contains(k))
                .and_then(|s| s.number)
        })
        .collect();
    let totals_after = if all {
        advice.totals_after
    } else {
        totals_after_moves(estate, policy, now, &moves)
    };
    Plan {
        schema: SCHEMA,
        estate: advice.estate.clone(),
        estate_version: advice.estate_version.clone(),
        policy_digest: advice.policy_digest.clone(),
        now: advice.now.clone(),
        selection: SelectionInfo {
            kind: if only.is_some() { "services" } else { "advice" },
            services: only.cloned(),
            scenario: None,
        },
        totals_before: advice.totals_before,
        totals_after,
        change: Totals::change(&advice.totals_before, &totals_after),
        workloads: plan_workloads(estate, &moves),
        moves,
        warnings: Vec::new(),
        step_numbers,
        note: (!all).then(|| {
            "each move's gain, confidence and flip conditions are those of its step in the recommended sequence (advice_step), after the recommended moves before it; the totals after are those of the selected moves alone".to_string()
        }),
    }
}

fn from_scenario(
    estate: &Estate,
    policy: &Policy,
    now: i64,
    advice: &Advice,
    why: &[crate::MoveWhy],
    scenario: &Scenario,
) -> Result<Plan, Vec<EstateError>> {
    let projection =
        whatif::project_with_version(estate, &advice.estate_version, policy, now, scenario)?;
    let ctx = Ctx::new(estate, policy, now);
    let mut state = State::initial(estate);
    // While the scenario is exactly the recommended sequence so far, the
    // explanation of the advice's next step applies to its next move.
    let mut on_advice = true;
    let mut moves = Vec::with_capacity(projection.moves.len());
    for (i, pm) in projection.moves.iter().enumerate() {
        let s = estate
            .service_index(&pm.service)
            .expect("projected service");
        let to = estate.cluster_index(&pm.to).expect("projected cluster");
        let terms = cost::move_terms(&ctx, &state, s, to);
        let facts = cost::deciding_facts(&ctx, &state, s, to);
        let current_cost = state.current_cost(&ctx, s);
        let recommended = advice
            .moves
            .get(i)
            .filter(|m| on_advice && m.service == pm.service && m.from == pm.from && m.to == pm.to);
        on_advice = recommended.is_some();
        let (flips, other_flips, note, advice_step) = match recommended {
            Some(m) => {
                let w = &why[m.step - 1];
                (
                    w.flips.clone(),
                    w.other_flips.clone(),
                    w.note.clone(),
                    Some(m.step),
                )
            }
            None => (
                Vec::new(),
                Vec::new(),
                Some(not_recommended_note(advice, pm)),
                None,
            ),
        };
        moves.push(PlanMove {
            step: i + 1,
            service: pm.service.clone(),
            from: pm.from.clone(),
            to: pm.to.clone(),
            advice_step,
            workload: estate.services[s].workload_ref(),
            gain: terms.gain(),
            bar: cost::bar(&ctx, current_cost),
            confidence: cost::confidence(&facts),
            evidence: advise::evidence_words(&facts),
            terms,
            facts,
            flips,
            other_flips,
            note,
            group: None,
        });
        state.apply(&ctx, s, to);
    }
    Ok(Plan {
        schema: SCHEMA,
        estate: projection.estate,
        estate_version: projection.estate_version,
        policy_digest: projection.policy_digest,
        now: projection.now,
        selection: SelectionInfo {
            kind: "scenario",
            services: None,
            scenario: Some(projection.scenario),
        },
        totals_before: projection.before,
        totals_after: projection.after,
        change: projection.change,
        workloads: plan_workloads(estate, &moves),
        step_numbers: vec![None; moves.len()],
        moves,
        warnings: projection.warnings,
        note: Some(
            "a scenario is applied as written: moves are evaluated in its order on its placement, and carry flip conditions only while it follows the recommended sequence".to_string(),
        ),
    })
}

fn not_recommended_note(advice: &Advice, pm: &whatif::ProjectedMove) -> String {
    match advice
        .moves
        .iter()
        .find(|m| m.service == pm.service && m.to == pm.to)
    {
        Some(m) => format!(
            "recommended at step {} of the advice, after other moves than this scenario's: no flip conditions for this place in the scenario",
            m.step
        ),
        None => "not a recommended move: the engine computes flip conditions for its own decisions only".to_string(),
    }
}

// ---- totals of a subset ------------------------------------------------

/// The totals after making `moves` (in their order) from the estate as
/// it is: a subset of the advice's moves, made alone.
fn totals_after_moves(estate: &Estate, policy: &Policy, now: i64, moves: &[PlanMove]) -> Totals {
    let ctx = Ctx::new(estate, policy, now);
    let mut state = State::initial(estate);
    for m in moves {
        let s = estate.service_index(&m.service).expect("planned service");
        let to = estate.cluster_index(&m.to).expect("planned cluster");
        state.apply(&ctx, s, to);
    }
    state.totals(&ctx)
}

// ---- Markdown ----------------------------------------------------------

/// A table cell: `|` escaped, line breaks as spaces.
fn cell(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}

/// An age in words: `45 s`, `12 min`, `3 h 5 min`, `2 d 4 h`.
pub fn age(s: i64) -> String {
    match s {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min", s / 60),
        s if s < 86_400 => format!("{} h {} min", s / 3600, s % 3600 / 60),
        s => format!("{} d {} h", s / 86_400, s % 86_400 / 3600),
    }
}

fn value(v: Option<f64>) -> String {
    match v {
        Some(v) => format!("{}", (v * 1000.0).round() / 1000.0),
        None => "unknown".into(),
    }
}

fn totals_line(t: &Totals) -> String {
    let terms: Vec<String> = t
        .iter()
        .map(|(term, v)| format!("{} {v:.1}", term.label()))
        .collect();
    format!(
        "cost {:.1} ({}); cross-site traffic {:.1} MB/s",
        t.cost,
        terms.join(", "),
        t.cross_site_mb_s
    )
}

/// The change as a saving, in the one sign convention of every page and
/// export (issue 34): points saved are positive, points added negative;
/// traffic is said as less or more. (The JSON's `change` stays
/// after − before, a difference, as documented in docs/plans.md.)
fn saving_line(t: &Totals) -> String {
    let terms: Vec<String> = t
        .iter()
        .map(|(term, v)| format!("{} {}", term.label(), signed(-v)))
        .collect();
    let mb = t.cross_site_mb_s;
    let traffic = if mb <= 0.0 {
        format!("{:.1} MB/s less cross-site traffic", -mb)
    } else {
        format!("{mb:.1} MB/s more cross-site traffic")
    };
    format!(
        "{} points ({}); {traffic}",
        signed(-t.cost),
        terms.join(", ")
    )
}

fn workload_words(w: &Option<Workload>) -> String {
    match w {
        Some(w) => format!(
            "`{} {}/{}`{}",
            w.kind,
            w.namespace,
            w.name,
            w.api_version()
                .map(|v| format!(" ({v})"))
                .unwrap_or_default()
        ),
        None => {
            "not named in the estate (set `workload` on the service to export manifests)".into()
        }
    }
}

/// The plan as Markdown, for a pull request or a ticket.
pub fn markdown(p: &Plan) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Change plan: {}\n", p.estate);
    let selection = match p.selection.kind {
        "advice" => format!("every recommended move ({})", p.moves.len()),
        "services" => format!(
            "the recommended moves of {}",
            p.selection
                .services
                .as_deref()
                .unwrap_or_default()
                .iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => format!(
            "what-if scenario \"{}\"",
            p.selection.scenario.as_deref().unwrap_or_default()
        ),
    };
    let _ = writeln!(out, "- Estate version: `{}`", p.estate_version);
    let _ = writeln!(out, "- Policy digest: `{}`", p.policy_digest);
    let _ = writeln!(out, "- Evaluated at: {}", p.now);
    let _ = writeln!(out, "- Selection: {selection}");
    let _ = writeln!(out, "- Before: {}", totals_line(&p.totals_before));
    let _ = writeln!(out, "- After: {}", totals_line(&p.totals_after));
    let _ = writeln!(out, "- Saving: {}", saving_line(&p.change));
    if let Some(n) = &p.note {
        let _ = writeln!(out, "\n> Note: {n}.");
    }
    let _ = writeln!(out, "\n## Moves\n");
    if p.moves.is_empty() {
        let _ = writeln!(out, "No move: staying put is best.");
    } else {
        let _ = writeln!(out, "| # | Service | From → To | Gain | Confidence |");
        let _ = writeln!(out, "|---|---|---|---|---|");
        for (n, members) in md_steps(p) {
            let ms: Vec<&PlanMove> = members.iter().map(|&i| &p.moves[i]).collect();
            let services: Vec<String> = ms.iter().map(|m| format!("`{}`", m.service)).collect();
            let ways: Vec<String> = ms
                .iter()
                .map(|m| format!("`{}` → `{}`", m.from, m.to))
                .collect();
            // A compound step's gain and confidence are the group's.
            let (gain, confidence) = match (&ms[0].group, ms.len()) {
                (Some(g), 2..) => (
                    g.gain,
                    ms.iter()
                        .map(|m| m.confidence)
                        .max()
                        .unwrap_or(ms[0].confidence),
                ),
                _ => (ms[0].gain, ms[0].confidence),
            };
            let _ = writeln!(
                out,
                "| {n} | {} | {} | {} | {} |",
                services.join(" + "),
                ways.join("; "),
                signed(gain),
                confidence.as_str()
            );
        }
    }
    for (n, members) in md_steps(p) {
        if members.len() > 1 {
            let ms: Vec<&PlanMove> = members.iter().map(|&i| &p.moves[i]).collect();
            let names: Vec<String> = ms.iter().map(|m| format!("`{}`", m.service)).collect();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let g = ms[0].group.as_ref();
            let _ = writeln!(
                out,
                "\n### {n}. Move {} together: {} points\n",
                crate::text::and_list(&names),
                signed(g.map_or(0.0, |g| g.gain))
            );
            if let Some(g) = g {
                let _ = writeln!(out, "One step: {}", g.summary);
                for f in &g.flips {
                    let _ = writeln!(out, "- {}", f.sentence);
                }
            }
            for m in ms {
                move_section(&mut out, m, None);
            }
        } else {
            move_section(&mut out, &p.moves[members[0]], Some(n));
        }
    }
    workloads_section(&mut out, &p.workloads);
    if !p.warnings.is_empty() {
        let _ = writeln!(out, "\n## Warnings\n");
        for w in &p.warnings {
            let step = w.step.map(|s| format!("step {s}: ")).unwrap_or_default();
            let _ = writeln!(out, "- `{}` {step}{}", w.code.as_str(), w.message);
        }
    }
    let _ = writeln!(
        out,
        "\n---\nWritten by Berth from estate version `{}` and policy `{}`. Berth moves nothing: apply the moves with the tools that do (`berth plan export --format karmada|ocm`).",
        p.estate_version, p.policy_digest
    );
    out
}

/// The workloads the plan changes: one line each, with the clusters the
/// manifests place it on and every copy.
fn workloads_section(out: &mut String, workloads: &[PlanWorkload]) {
    if workloads.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n## Kubernetes workloads\n");
    let _ = writeln!(
        out,
        "One manifest per workload (`berth plan export --format karmada|ocm`), placing it on every cluster a copy of it runs in after the plan.\n"
    );
    let _ = writeln!(out, "| Workload | Runs in after the plan | Copies |");
    let _ = writeln!(out, "|---|---|---|");
    for w in workloads {
        let clusters: Vec<String> = w.clusters.iter().map(|c| format!("`{c}`")).collect();
        let copies: Vec<String> = w
            .copies
            .iter()
            .map(|c| {
                if c.from == c.to {
                    format!("`{}` stays on `{}`", c.service, c.from)
                } else {
                    format!("`{}` `{}` → `{}`", c.service, c.from, c.to)
                }
            })
            .collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            cell(&workload_words(&Some(w.workload.clone()))),
            clusters.join(", "),
            cell(&copies.join("; "))
        );
    }
}

/// The plan's moves as numbered steps: `(number, indices into moves)`.
/// An advice plan numbers them as the pages do (`Plan::step_numbers`, a
/// compound step's members together under one number); a scenario's
/// moves are numbered in its order.
fn md_steps(p: &Plan) -> Vec<(usize, Vec<usize>)> {
    let mut out: Vec<(usize, Vec<usize>)> = Vec::new();
    for (i, m) in p.moves.iter().enumerate() {
        match p.step_numbers.get(i).copied().flatten() {
            Some(n) => match out.last_mut() {
                Some((last, members)) if *last == n => members.push(i),
                _ => out.push((n, vec![i])),
            },
            None => out.push((m.step, vec![i])),
        }
    }
    out
}

/// One move's section: a heading of its own (`### N.`) for a single
/// step; under its compound step's heading (`####`, no number) for a
/// member.
fn move_section(out: &mut String, m: &PlanMove, number: Option<usize>) {
    match number {
        Some(n) => {
            let _ = writeln!(
                out,
                "\n### {n}. `{}`: `{}` → `{}`\n",
                m.service, m.from, m.to
            );
        }
        None => {
            let _ = writeln!(out, "\n#### `{}`: `{}` → `{}`\n", m.service, m.from, m.to);
        }
    }
    let terms: Vec<String> = m
        .terms
        .iter()
        .map(|(t, v)| format!("{} {}", t.label(), signed(v)))
        .collect();
    let _ = writeln!(
        out,
        "- Gain: {} points (bar {:.1}): {}",
        signed(m.gain),
        m.bar,
        terms.join(", ")
    );
    let _ = writeln!(
        out,
        "- Confidence: {} (the weakest deciding fact)",
        m.confidence.as_str()
    );
    if let Some(e) = &m.evidence {
        let _ = writeln!(out, "- {e}");
    }
    if m.advice_step.is_some() {
        let _ = writeln!(out, "- Recommended by the advice");
    }
    let _ = writeln!(out, "- Workload: {}", workload_words(&m.workload));
    if let Some(n) = &m.note {
        let _ = writeln!(out, "- Note: {n}");
    }
    let _ = writeln!(out, "\nDeciding facts:\n");
    let _ = writeln!(out, "| Fact | Value | Class | Source | Age |");
    let _ = writeln!(out, "|---|---|---|---|---|");
    for f in &m.facts {
        let class = if f.class == f.stored_class {
            f.class.as_str().to_string()
        } else {
            format!("{} (stored {})", f.class.as_str(), f.stored_class.as_str())
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            cell(&f.fact),
            value(f.value),
            class,
            cell(&f.source),
            age(f.age_s)
        );
    }
    if number.is_none() && m.group.is_some() {
        let _ = writeln!(
            out,
            "\nPart of the compound step above: alone it is not recommended."
        );
    }
    let flips: Vec<&Flip> = m.flips.iter().chain(&m.other_flips).collect();
    if !flips.is_empty() {
        let _ = writeln!(out, "\nFlip conditions (one fact at a time):\n");
        for f in flips {
            for s in &f.sentences {
                let _ = writeln!(out, "- {}: {}", f.fact, s);
            }
        }
    }
}

// ---- manifests ----------------------------------------------------------

/// Label every manifest carries.
pub const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "berth");
/// Prefix of the annotations that say which plan wrote a manifest.
pub const ANNOTATION_PREFIX: &str = "berth.dev/";

/// A manifest as a tree, members in the order written. Manifests are
/// built as this rather than through a serialiser so that their bytes
/// depend on nothing but this file: member order is the order written
/// here, and every string is double-quoted, so no YAML reader (1.1 or
/// 1.2) takes a time, a digest of digits or a `+12.4` for anything but
/// text.
#[derive(Clone, Debug)]
enum Node {
    Map(Vec<(String, Node)>),
    List(Vec<Node>),
    Str(String),
    Int(i64),
}

fn map<K: Into<String>>(members: Vec<(K, Node)>) -> Node {
    Node::Map(members.into_iter().map(|(k, v)| (k.into(), v)).collect())
}

fn text(s: impl Into<String>) -> Node {
    Node::Str(s.into())
}

fn strings(m: &BTreeMap<String, String>) -> Node {
    Node::Map(
        m.iter()
            .map(|(k, v)| (k.clone(), text(v.clone())))
            .collect(),
    )
}

/// A double-quoted YAML scalar: JSON's string escapes are YAML's.
fn quoted(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialise")
}

/// A key written plain when it is a Kubernetes-style name (letters,
/// digits, `-`, `.`, `_`, `/`, starting with a letter), else quoted.
fn key(k: &str) -> String {
    let plain = k.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '/'));
    if plain {
        k.to_string()
    } else {
        quoted(k)
    }
}

/// Block-style YAML of a map at `indent`.
fn emit(out: &mut String, node: &Node, indent: usize) {
    let pad = " ".repeat(indent);
    match node {
        Node::Map(members) => {
            for (k, v) in members {
                match v {
                    Node::Map(m) if !m.is_empty() => {
                        let _ = writeln!(out, "{pad}{}:", key(k));
                        emit(out, v, indent + 2);
                    }
                    Node::List(l) if !l.is_empty() => {
                        let _ = writeln!(out, "{pad}{}:", key(k));
                        emit(out, v, indent);
                    }
                    _ => {
                        let _ = writeln!(out, "{pad}{}: {}", key(k), scalar(v));
                    }
                }
            }
        }
        Node::List(items) => {
            for item in items {
                match item {
                    Node::Map(m) if !m.is_empty() => {
                        // `- first: …` then the other members under it.
                        let mut first = String::new();
                        emit(&mut first, item, indent + 2);
                        let _ = write!(out, "{pad}- {}", &first[indent + 2..]);
                    }
                    Node::List(l) if !l.is_empty() => {
                        let _ = writeln!(out, "{pad}-");
                        emit(out, item, indent + 2);
                    }
                    _ => {
                        let _ = writeln!(out, "{pad}- {}", scalar(item));
                    }
                }
            }
        }
        _ => {
            let _ = writeln!(out, "{pad}{}", scalar(node));
        }
    }
}

fn scalar(node: &Node) -> String {
    match node {
        Node::Str(s) => quoted(s),
        Node::Int(i) => i.to_string(),
        Node::Map(_) => "{}".into(),
        Node::List(_) => "[]".into(),
    }
}

/// The label every Open Cluster Management `ManagedCluster` carries with
/// its own name (set by the registration agent).
pub const OCM_NAME_LABEL: &str = "name";

/// One moved copy of a workload, as its manifest names it.
struct Moved<'a> {
    service: &'a str,
    from: usize,
    to: usize,
    gain: f64,
    confidence: Class,
}

/// One workload of the plan and what its manifest needs: the clusters it
/// runs in after the plan and the copies the plan moves.
struct Target<'a> {
    workload: &'a Workload,
    api_version: String,
    /// Cluster indices, ascending, each once.
    clusters: Vec<usize>,
    /// Its copies the plan moves, in service id order.
    moved: Vec<Moved<'a>>,
    /// Every copy after the plan: `frontend on c-3, c-2/frontend on c-2`.
    copies: String,
}

/// `service "a"` or `services "a", "b"`: who a manifest problem is about.
fn who(services: &[&str]) -> String {
    let quoted: Vec<String> = services.iter().map(|s| format!("{s:?}")).collect();
    if quoted.len() == 1 {
        format!("service {}", quoted[0])
    } else {
        format!("services {}", quoted.join(", "))
    }
}

/// Each workload the plan changes once ([`Plan::workloads`]), in that
/// order: the clusters every copy of it runs in after the plan, and the
/// copies that move (each at its last destination; a scenario may move a
/// service twice, and one that ends where it started moves nothing). Every
/// name a manifest needs is checked, every problem reported with the
/// service or cluster and the field; so is a moved service that names no
/// workload, and two workloads whose manifests would share one name.
fn targets<'a>(
    estate: &Estate,
    p: &'a Plan,
    controller: &str,
    cluster_name: impl Fn(&crate::estate::Cluster) -> (&str, &'static str),
) -> Result<Vec<Target<'a>>, Vec<PlanError>> {
    let mut last: BTreeMap<&str, &PlanMove> = BTreeMap::new();
    for m in &p.moves {
        last.insert(&m.service, m);
    }
    let cluster = |id: &str| estate.cluster_index(id).expect("planned cluster");
    let mut errors = Vec::new();
    // Every cluster a manifest places a workload on (the destinations, and
    // where the copies that stay run) is named in it, by the controller's
    // name for it; the clusters left are only named in annotations, where
    // any text will do.
    let home = |service: &str| {
        let s = estate.service_index(service).expect("planned service");
        estate.services[s].cluster
    };
    let placed: std::collections::BTreeSet<usize> = last
        .iter()
        .map(|(service, m)| (home(service), cluster(&m.to)))
        .filter(|(from, to)| from != to)
        .map(|(_, to)| to)
        .chain(
            p.workloads
                .iter()
                .flat_map(|w| w.clusters.iter().map(|c| cluster(c))),
        )
        .collect();
    for c in placed {
        let cluster = &estate.clusters[c];
        let (name, field) = cluster_name(cluster);
        if let Some(problem) = crate::k8s::label_problem(name) {
            errors.push(error(
                "estate",
                String::new(),
                format!(
                    "cluster {:?}: {problem}; a {controller} manifest names clusters by it: set `{field}` on the cluster to its name in {controller}",
                    cluster.id
                ),
            ));
        }
    }
    // A moved service the estate names no workload for has no manifest.
    for (service, m) in &last {
        let copy = p
            .workloads
            .iter()
            .flat_map(|w| &w.copies)
            .find(|c| c.service == *service);
        if home(service) != cluster(&m.to) && copy.is_none() {
            errors.push(error(
                "estate",
                String::new(),
                format!(
                    "service {service:?}: a {controller} manifest selects the Kubernetes object the service is, and the estate does not say which: set `workload` ({{\"kind\", \"namespace\", \"name\"}}) on the service, or import it with `berth import kubernetes`"
                ),
            ));
        }
    }
    let mut out = Vec::new();
    let mut names: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (i, pw) in p.workloads.iter().enumerate() {
        let workload = &pw.workload;
        let moved: Vec<Moved> = pw
            .copies
            .iter()
            .filter(|c| c.from != c.to)
            .map(|c| {
                let m = last[c.service.as_str()];
                Moved {
                    service: &c.service,
                    from: cluster(&c.from),
                    to: cluster(&c.to),
                    gain: m.gain,
                    confidence: m.confidence,
                }
            })
            .collect();
        let services: Vec<&str> = moved.iter().map(|m| m.service).collect();
        let clusters: Vec<usize> = pw.clusters.iter().map(|c| cluster(c)).collect();
        let Some(api_version) = workload.api_version().map(str::to_string) else {
            errors.push(error(
                "estate",
                String::new(),
                format!(
                    "{}: workload kind {:?} has no default API version: set `workload.api_version`",
                    who(&services),
                    workload.kind
                ),
            ));
            continue;
        };
        // A source-derived workload has not been through the loader's
        // checks of `workload`.
        let problems = [
            ("kind", crate::k8s::kind_problem(&workload.kind)),
            ("namespace", crate::k8s::label_problem(&workload.namespace)),
            ("name", crate::k8s::subdomain_problem(&workload.name)),
        ];
        let mut ok = true;
        for (field, problem) in problems {
            if let Some(problem) = problem {
                ok = false;
                errors.push(error(
                    "estate",
                    String::new(),
                    format!("{}: workload {field}: {problem}", who(&services)),
                ));
            }
        }
        let object = object_name(workload);
        if ok && crate::k8s::subdomain_problem(&object).is_some() {
            ok = false;
            errors.push(error(
                "estate",
                String::new(),
                format!(
                    "{}: the manifest name {object:?} would be longer than 253 characters: shorten the workload name",
                    who(&services)
                ),
            ));
        }
        // One name, one object: two workloads whose manifests would share
        // a name (kinds alike but for case, or one kind in two API groups)
        // would replace each other when applied.
        if ok {
            if let Some(&j) = names.get(&(workload.namespace.clone(), object.clone())) {
                ok = false;
                let first = &p.workloads[j];
                errors.push(error(
                    "estate",
                    String::new(),
                    format!(
                        "{}: workload {} ({}) and workload {} ({}) would both be written as {controller} manifests named {}/{object}, and the later would replace the earlier: set `workload` on the services so that each names its own object",
                        who(&services),
                        crate::copies::words(workload),
                        api_version,
                        crate::copies::words(&first.workload),
                        first.workload.api_version().unwrap_or("no API version"),
                        workload.namespace
                    ),
                ));
            } else {
                names.insert((workload.namespace.clone(), object), i);
            }
        }
        if ok {
            let copies: Vec<String> = pw
                .copies
                .iter()
                .map(|c| format!("{} on {}", c.service, c.to))
                .collect();
            out.push(Target {
                workload,
                api_version,
                clusters,
                moved,
                copies: copies.join(", "),
            });
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// `berth-<kind>-<name>`, kind in lower case: unique per workload in its
/// namespace.
fn object_name(w: &Workload) -> String {
    format!("berth-{}-{}", w.kind.to_ascii_lowercase(), w.name)
}

fn metadata(
    p: &Plan,
    estate: &Estate,
    t: &Target,
    cluster_name: &dyn Fn(usize) -> String,
    extra: &[(&str, String)],
) -> Node {
    let a = |k: &str| format!("{ANNOTATION_PREFIX}{k}");
    // One entry per moved copy, in the same order in each annotation.
    let each = |f: &dyn Fn(&Moved) -> String, sep: &str| -> String {
        t.moved.iter().map(f).collect::<Vec<_>>().join(sep)
    };
    let mut annotations = BTreeMap::from([
        (a("estate"), p.estate.clone()),
        (a("estate-version"), p.estate_version.clone()),
        (a("policy-digest"), p.policy_digest.clone()),
        (a("evaluated-at"), p.now.clone()),
        (a("service"), each(&|m| m.service.to_string(), ", ")),
        (
            a("move"),
            each(
                &|m| {
                    format!(
                        "{} -> {} ({} -> {})",
                        estate.clusters[m.from].id,
                        estate.clusters[m.to].id,
                        cluster_name(m.from),
                        cluster_name(m.to)
                    )
                },
                "; ",
            ),
        ),
        (a("gain"), each(&|m| signed(m.gain), "; ")),
        (
            a("confidence"),
            each(&|m| m.confidence.as_str().to_string(), "; "),
        ),
        (a("copies"), t.copies.clone()),
    ]);
    for (k, v) in extra {
        annotations.insert(a(k), v.clone());
    }
    map(vec![
        ("name", text(object_name(t.workload))),
        ("namespace", text(t.workload.namespace.clone())),
        ("labels", map(vec![(MANAGED_BY.0, text(MANAGED_BY.1))])),
        ("annotations", strings(&annotations)),
    ])
}

fn selector(t: &Target) -> Node {
    map(vec![
        ("apiVersion", text(t.api_version.clone())),
        ("kind", text(t.workload.kind.clone())),
        ("namespace", text(t.workload.namespace.clone())),
        ("name", text(t.workload.name.clone())),
    ])
}

fn document(api_version: &str, kind: &str, metadata: Node, spec: Node) -> Node {
    map(vec![
        ("apiVersion", text(api_version)),
        ("kind", text(kind)),
        ("metadata", metadata),
        ("spec", spec),
    ])
}

fn yaml_docs(docs: &[Node], p: &Plan, controller: &str) -> String {
    let mut out = format!(
        "# {controller} manifests written by Berth for estate {}, version {}, policy {}, at {}.\n# Apply them where {controller} runs; Berth moves nothing itself.\n",
        quoted(&p.estate), p.estate_version, p.policy_digest, p.now
    );
    for d in docs {
        out.push_str("---\n");
        emit(&mut out, d, 0);
    }
    out
}

fn names(v: Vec<String>) -> Node {
    Node::List(v.into_iter().map(text).collect())
}

/// Karmada manifests: per workload the plan changes, one
/// `PropagationPolicy` that places its template on every cluster a copy
/// of it runs in after the plan (cluster affinity by name: the copies that
/// stay and the destinations), and one `OverridePolicy` that annotates the
/// workload on each destination with the cluster(s) its copy came from and
/// the plan, so whoever looks at the member cluster sees why it is there.
/// Multi-document YAML.
pub fn karmada(estate: &Estate, p: &Plan) -> Result<String, Vec<PlanError>> {
    let name = |c: usize| estate.clusters[c].karmada_name().to_string();
    let targets = targets(estate, p, "Karmada", |c| {
        (c.karmada_name(), "karmada_cluster")
    })?;
    let mut docs = Vec::new();
    for t in &targets {
        docs.push(document(
            "policy.karmada.io/v1alpha1",
            "PropagationPolicy",
            metadata(p, estate, t, &name, &[]),
            map(vec![
                ("resourceSelectors", Node::List(vec![selector(t)])),
                (
                    "placement",
                    map(vec![(
                        "clusterAffinity",
                        map(vec![(
                            "clusterNames",
                            names(t.clusters.iter().map(|&c| name(c)).collect()),
                        )]),
                    )]),
                ),
            ]),
        ));
        // One rule per destination, in cluster id order; two copies that
        // land on one cluster are one object there, moved from both.
        let mut from: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for m in &t.moved {
            let left = from.entry(m.to).or_default();
            if !left.contains(&m.from) {
                left.push(m.from);
            }
        }
        let rules: Vec<Node> = from
            .into_iter()
            .map(|(to, mut left)| {
                left.sort_unstable();
                let left: Vec<String> = left.into_iter().map(name).collect();
                let value = BTreeMap::from([
                    (format!("{ANNOTATION_PREFIX}moved-from"), left.join(", ")),
                    (
                        format!("{ANNOTATION_PREFIX}plan"),
                        format!("{}@{}", p.estate_version, p.policy_digest),
                    ),
                ]);
                map(vec![
                    (
                        "targetCluster",
                        map(vec![("clusterNames", names(vec![name(to)]))]),
                    ),
                    (
                        "overriders",
                        map(vec![(
                            "annotationsOverrider",
                            Node::List(vec![map(vec![
                                ("operator", text("add")),
                                ("value", strings(&value)),
                            ])]),
                        )]),
                    ),
                ])
            })
            .collect();
        docs.push(document(
            "policy.karmada.io/v1alpha1",
            "OverridePolicy",
            metadata(p, estate, t, &name, &[]),
            map(vec![
                ("resourceSelectors", Node::List(vec![selector(t)])),
                ("overrideRules", Node::List(rules)),
            ]),
        ));
    }
    Ok(yaml_docs(&docs, p, "Karmada"))
}

/// Open Cluster Management manifests: per workload the plan changes, one
/// `Placement` (in the workload's namespace, which must be bound to a
/// cluster set holding those clusters) that selects exactly the clusters
/// a copy of it runs in after the plan, by their `name` label, as many as
/// there are. Multi-document YAML.
pub fn ocm(estate: &Estate, p: &Plan) -> Result<String, Vec<PlanError>> {
    let name = |c: usize| estate.clusters[c].ocm_name().to_string();
    let targets = targets(estate, p, "Open Cluster Management", |c| {
        (c.ocm_name(), "ocm_cluster")
    })?;
    let docs: Vec<Node> = targets
        .iter()
        .map(|t| {
            let workload = format!(
                "{} {} {}/{}",
                t.api_version, t.workload.kind, t.workload.namespace, t.workload.name
            );
            let selector = map(vec![(
                "labelSelector",
                map(vec![(
                    "matchExpressions",
                    Node::List(vec![map(vec![
                        ("key", text(OCM_NAME_LABEL)),
                        ("operator", text("In")),
                        (
                            "values",
                            names(t.clusters.iter().map(|&c| name(c)).collect()),
                        ),
                    ])]),
                )]),
            )]);
            document(
                "cluster.open-cluster-management.io/v1beta1",
                "Placement",
                metadata(p, estate, t, &name, &[("workload", workload)]),
                map(vec![
                    ("numberOfClusters", Node::Int(t.clusters.len() as i64)),
                    (
                        "predicates",
                        Node::List(vec![map(vec![("requiredClusterSelector", selector)])]),
                    ),
                ]),
            )
        })
        .collect();
    Ok(yaml_docs(&docs, p, "Open Cluster Management"))
}

/// The plan written in `format`.
pub fn write(estate: &Estate, p: &Plan, format: Format) -> Result<String, Vec<PlanError>> {
    match format {
        Format::Json => Ok(crate::json_shape::to_bytes(p)),
        Format::Markdown => Ok(markdown(p)),
        Format::Karmada => karmada(estate, p),
        Format::Ocm => ocm(estate, p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_as_words() {
        assert_eq!(age(0), "0 s");
        assert_eq!(age(59), "59 s");
        assert_eq!(age(60), "1 min");
        assert_eq!(age(3_599), "59 min");
        assert_eq!(age(3_660), "1 h 1 min");
        assert_eq!(age(90_000), "1 d 1 h");
    }

    #[test]
    fn cells_escape_pipes() {
        assert_eq!(cell("a|b\nc"), "a\\|b c");
    }

    #[test]
    fn formats_round_trip() {
        for f in Format::ALL {
            assert_eq!(Format::parse(f.as_str()), Some(f));
        }
        assert_eq!(Format::parse("yaml"), None);
        assert_eq!(Format::Markdown.file_name("sample"), "sample-plan.md");
        assert_eq!(Format::Ocm.file_name("eu/shop:1"), "eu-shop-1-ocm.yaml");
    }

    #[test]
    fn source_names_the_workload() {
        let w = Workload::from_source("kubernetes:eu/c-fra-2/shop/Deployment/cart").unwrap();
        assert_eq!(
            (w.namespace.as_str(), w.kind.as_str(), w.name.as_str()),
            ("shop", "Deployment", "cart")
        );
        assert_eq!(w.api_version(), Some("apps/v1"));
        let d = Workload::from_source("kubernetes:c-fra-1//StatefulSet/db").unwrap();
        assert_eq!(d.namespace, "default");
        assert_eq!(Workload::from_source("agent:c-fra-1"), None);
        assert_eq!(Workload::from_source("kubernetes:c/ns/Deployment/"), None);
    }
}
