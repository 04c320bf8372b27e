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

mod manifests;
mod markdown;
pub use manifests::{karmada, ocm, ANNOTATION_PREFIX, MANAGED_BY, OCM_NAME_LABEL};
pub use markdown::{age, markdown};

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
    use super::markdown::cell;
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
