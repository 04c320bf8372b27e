//! The engine's JSON front end: the one place where engine results become
//! bytes.
//!
//! Every caller that shows or sends an engine result — the server's
//! result routes, the CLI's `--format json`, `engine-wasm` and the web
//! application — calls a function of this module and writes what it
//! returns, unchanged. Nothing else serialises an engine result, so the
//! same estate, policy, time and request give the same bytes everywhere
//! (checked by `server/tests/parity_bytes.rs`: server = CLI = WebAssembly).
//!
//! The form is compact JSON with the members in the order the result
//! types declare them (serde's struct order; no map in between that would
//! sort them).
//!
//! Two levels:
//! - **typed** (`advice`, `advice_why`, `preview`, `place`, `whatif`,
//!   `compare`): for a caller that already holds the loaded [`Estate`] and
//!   [`Policy`] (the server keeps parsed estates cached);
//! - **text** (`*_text`): inputs as text, every input read before any is
//!   refused, so one call reports the errors of all of them; errors come
//!   back as a JSON array of [`errors_json`], each tagged with the input it
//!   is about (`estate`, `policy`, `scenario`, `service`, `responses`).

use serde::de::{Deserializer as _, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::decider::{self, External};
use crate::estate::{EstateError, Format};
use crate::whatif::{self, Scenario, ScenarioError};
use crate::{advise::Advice, why::MoveWhy, Estate, Policy};

pub use crate::json_shape::to_bytes;

/// `advise --why` (and `GET …/advice?why=true`): the advice's members,
/// then `why`, one explanation per move.
#[derive(Serialize)]
struct AdviceWithWhy<'a> {
    #[serde(flatten)]
    advice: &'a Advice,
    why: &'a [MoveWhy],
}

// ---- typed level -------------------------------------------------------

/// The advice (`berth advise`, `GET …/advice`).
pub fn advice(estate: &Estate, policy: &Policy, now: i64) -> String {
    to_bytes(&crate::advise(estate, policy, now))
}

/// Advice with every move explained.
pub fn advice_why(estate: &Estate, policy: &Policy, now: i64) -> String {
    let advice = crate::advise(estate, policy, now);
    let why = crate::explain(estate, policy, now, &advice);
    advice_why_of(&advice, &why)
}

/// The bytes of advice already computed and its explanations (a page that
/// shows the moves first and explains them after).
pub fn advice_why_of(advice: &Advice, why: &[MoveWhy]) -> String {
    to_bytes(&AdviceWithWhy { advice, why })
}

/// The decider request, schema 1 (`berth preview`, `GET …/preview`).
pub fn preview(estate: &Estate, policy: &Policy, now: i64) -> String {
    to_bytes(&crate::request::build(estate, policy, now))
}

/// The advice history of stored snapshots (`GET …/history`,
/// `docs/history.md`): the series, oldest first, and what changed between
/// the two newest.
pub fn history(snapshots: &[crate::history::Snapshot]) -> String {
    to_bytes(&crate::history::history(snapshots))
}

/// An estate's applied moves, each judged against what was measured after
/// it, and the calibration (`GET …/outcomes`, `docs/outcomes.md`).
pub fn outcomes(
    events: &[crate::outcome::Event],
    befores: &[(i64, Option<Estate>)],
    after: &Estate,
    policy: &Policy,
    now: i64,
    settle_s: i64,
) -> String {
    to_bytes(&crate::outcome::report(
        events, befores, after, policy, now, settle_s,
    ))
}

/// Every cluster ranked for one service; `Err` names an unknown service.
pub fn place(estate: &Estate, policy: &Policy, now: i64, service: &str) -> Result<String, String> {
    crate::place::place(estate, policy, now, service).map(|p| to_bytes(&p))
}

/// The what-if projection of a scenario's text. Errors carry their JSON
/// pointer and, where the text lets us know, their line.
pub fn whatif(
    estate: &Estate,
    policy: &Policy,
    now: i64,
    scenario_text: &str,
) -> Result<String, Vec<ScenarioError>> {
    let version = crate::export::version(estate);
    whatif_with_version(estate, &version, policy, now, scenario_text)
}

/// [`whatif`] for a caller that keeps the estate's version digest (it
/// costs more than a projection to recompute).
pub fn whatif_with_version(
    estate: &Estate,
    estate_version: &str,
    policy: &Policy,
    now: i64,
    scenario_text: &str,
) -> Result<String, Vec<ScenarioError>> {
    whatif_projection(estate, estate_version, policy, now, scenario_text).map(|p| to_bytes(&p))
}

/// The projection [`whatif_with_version`] writes, before it becomes bytes:
/// for a caller that shows it (the web's What-if page reads its fields),
/// with the same located errors.
pub fn whatif_projection(
    estate: &Estate,
    estate_version: &str,
    policy: &Policy,
    now: i64,
    scenario_text: &str,
) -> Result<whatif::Projection, Vec<ScenarioError>> {
    let located = |mut errors: Vec<ScenarioError>| {
        whatif::locate_errors(&mut errors, scenario_text);
        errors
    };
    let scenario = Scenario::from_json_checked(scenario_text, estate).map_err(located)?;
    whatif::project_with_version(estate, estate_version, policy, now, &scenario).map_err(located)
}

/// The built-in deciders and the external replies, scored on equal
/// footing. `stopwatch` runs what it is given and returns the milliseconds
/// it took (`None` where there is no clock: the engine never reads one).
pub fn compare(
    estate: &Estate,
    policy: &Policy,
    now: i64,
    externals: &[External],
    stopwatch: &mut dyn FnMut(&mut dyn FnMut()) -> Option<f64>,
) -> String {
    to_bytes(&decider::compare_timed(
        estate, policy, now, externals, stopwatch,
    ))
}

/// A stopwatch for [`compare`] that times nothing.
pub fn no_clock(run: &mut dyn FnMut()) -> Option<f64> {
    run();
    None
}

/// A change plan in `format` (`berth plan export`, `GET …/plan`): JSON
/// (the [`crate::plan::Plan`]), Markdown, or Karmada / Open Cluster
/// Management manifests as multi-document YAML. Errors name the input they
/// are about (`PlanError::input`).
pub fn plan(
    estate: &Estate,
    policy: &Policy,
    now: i64,
    selection: &crate::plan::Selection,
    format: crate::plan::Format,
) -> Result<String, Vec<crate::plan::PlanError>> {
    let p = crate::plan::plan(estate, policy, now, selection)?;
    crate::plan::write(estate, &p, format)
}

/// The services of a plan's `services` input: ids separated by commas
/// (spaces around them ignored); empty = none named.
pub fn plan_services(services: &str) -> Vec<String> {
    services
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Estate (and scenario) errors as the API's 422 items: the JSON pointer
/// (`/` for the whole document), the line where known, the message.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ErrorItem {
    pub path: String,
    pub line: Option<usize>,
    pub message: String,
}

pub fn error_items(errors: &[EstateError]) -> Vec<ErrorItem> {
    errors
        .iter()
        .map(|e| ErrorItem {
            path: if e.path.is_empty() {
                "/".into()
            } else {
                e.path.clone()
            },
            line: e.line,
            message: e.message.clone(),
        })
        .collect()
}

// ---- text level --------------------------------------------------------

/// Errors of the inputs of one call, each tagged with `"input"`.
pub type Errors = Vec<Value>;

fn tagged<E: Serialize>(input: &str, errors: &[E]) -> Errors {
    errors
        .iter()
        .map(|e| {
            let mut v = serde_json::to_value(e).expect("errors serialise");
            if let Value::Object(m) = &mut v {
                m.insert("input".into(), Value::String(input.into()));
            }
            v
        })
        .collect()
}

/// The bytes of a list of input errors (what the text level returns
/// instead of a result).
pub fn errors_json(errors: &Errors) -> String {
    to_bytes(errors)
}

/// An error at a JSON pointer of an input's text (no line yet).
fn at(path: String, message: String) -> ScenarioError {
    ScenarioError {
        path,
        line: None,
        message,
    }
}

fn both<A, B>(a: Result<A, Errors>, b: Result<B, Errors>) -> Result<(A, B), Errors> {
    match (a, b) {
        (Ok(a), Ok(b)) => Ok((a, b)),
        (a, b) => Err(a
            .err()
            .unwrap_or_default()
            .into_iter()
            .chain(b.err().unwrap_or_default())
            .collect()),
    }
}

/// An estate file's text (JSON or YAML, told apart by a look at it).
pub fn read_estate(estate_text: &str) -> Result<Estate, Errors> {
    crate::load(estate_text, Format::sniff(estate_text)).map_err(|e| tagged("estate", &e))
}

/// A policy's JSON; `""` (or only spaces) is the default policy.
pub fn read_policy(policy_json: &str) -> Result<Policy, Errors> {
    if policy_json.trim().is_empty() {
        return Ok(Policy::default());
    }
    Policy::from_json(policy_json).map_err(|e| tagged("policy", &e))
}

/// `advise` on text. Unlike the later text entry points, the errors are
/// the engine's as they are (no `input` tag): this was the first entry
/// point and its callers read them so.
pub fn advice_text(estate_text: &str, policy_json: &str, now: i64) -> String {
    let policy = if policy_json.trim().is_empty() {
        Policy::default()
    } else {
        match Policy::from_json(policy_json) {
            Ok(p) => p,
            Err(e) => return to_bytes(&e),
        }
    };
    match crate::load(estate_text, Format::sniff(estate_text)) {
        Ok(estate) => advice(&estate, &policy, now),
        Err(errors) => to_bytes(&errors),
    }
}

pub fn advice_why_text(estate_text: &str, policy_json: &str, now: i64) -> String {
    match both(read_estate(estate_text), read_policy(policy_json)) {
        Ok((estate, policy)) => advice_why(&estate, &policy, now),
        Err(e) => errors_json(&e),
    }
}

pub fn preview_text(estate_text: &str, policy_json: &str, now: i64) -> String {
    match both(read_estate(estate_text), read_policy(policy_json)) {
        Ok((estate, policy)) => preview(&estate, &policy, now),
        Err(e) => errors_json(&e),
    }
}

pub fn place_text(estate_text: &str, service: &str, policy_json: &str, now: i64) -> String {
    let (estate, policy) = match both(read_estate(estate_text), read_policy(policy_json)) {
        Ok(v) => v,
        Err(e) => return errors_json(&e),
    };
    match place(&estate, &policy, now, service) {
        Ok(bytes) => bytes,
        Err(message) => errors_json(&tagged("service", &[at(String::new(), message)])),
    }
}

pub fn whatif_text(estate_text: &str, scenario_text: &str, policy_json: &str, now: i64) -> String {
    // The scenario's own shape is read before the estate is known, so its
    // errors come with the estate's and the policy's.
    let shape = Scenario::from_json(scenario_text).map_err(|mut e| {
        whatif::locate_errors(&mut e, scenario_text);
        tagged("scenario", &e)
    });
    let inputs = both(
        both(read_estate(estate_text), shape),
        read_policy(policy_json),
    );
    let ((estate, _), policy) = match inputs {
        Ok(v) => v,
        Err(e) => return errors_json(&e),
    };
    match whatif(&estate, &policy, now, scenario_text) {
        Ok(bytes) => bytes,
        Err(errors) => errors_json(&tagged("scenario", &errors)),
    }
}

pub fn compare_text(
    estate_text: &str,
    responses_json: &str,
    policy_json: &str,
    now: i64,
) -> String {
    let inputs = both(
        both(read_estate(estate_text), read_responses(responses_json)),
        read_policy(policy_json),
    );
    match inputs {
        Ok(((estate, externals), policy)) => {
            compare(&estate, &policy, now, &externals, &mut no_clock)
        }
        Err(e) => errors_json(&e),
    }
}

/// `plan` on text: the format's name (`json`, `markdown`, `karmada`,
/// `ocm`), the services as [`plan_services`] reads them and a scenario's
/// text, either or neither (neither = every recommended move). The result
/// is the plan's bytes, or a JSON array of tagged errors (`[…]`; a plan in
/// any format starts otherwise: `{` or `#`).
pub fn plan_text(
    estate_text: &str,
    policy_json: &str,
    now: i64,
    format: &str,
    services: &str,
    scenario_text: &str,
) -> String {
    use crate::plan::{Format as PlanFormat, Selection};
    let format = PlanFormat::parse(format).ok_or_else(|| {
        let names: Vec<&str> = PlanFormat::ALL.iter().map(|f| f.as_str()).collect();
        tagged(
            "format",
            &[at(
                String::new(),
                format!(
                    "unknown plan format {format:?}; expected one of {}",
                    names.join(", ")
                ),
            )],
        )
    });
    let ids = plan_services(services);
    let selection = match (ids.is_empty(), scenario_text.trim().is_empty()) {
        (true, true) => Ok(None),
        (false, true) => Ok(Some(Selection::Services(ids))),
        (true, false) => Scenario::from_json(scenario_text)
            .map(|_| None)
            .map_err(|e| tagged("scenario", &e)),
        (false, false) => Err(tagged(
            "services",
            &[at(
                String::new(),
                "give services or a scenario, not both".into(),
            )],
        )),
    };
    let inputs = both(
        both(read_estate(estate_text), read_policy(policy_json)),
        both(format, selection),
    );
    let ((estate, policy), (format, selection)) = match inputs {
        Ok(v) => v,
        Err(e) => return errors_json(&e),
    };
    let selection = match selection {
        Some(s) => s,
        None if scenario_text.trim().is_empty() => Selection::Advice,
        None => match Scenario::from_json_checked(scenario_text, &estate) {
            Ok(sc) => Selection::Scenario(sc),
            Err(e) => return errors_json(&tagged("scenario", &e)),
        },
    };
    match plan(&estate, &policy, now, &selection, format) {
        Ok(bytes) => bytes,
        Err(errors) => errors_json(&plan_errors(&errors)),
    }
}

/// Plan errors as tagged input errors.
pub fn plan_errors(errors: &[crate::plan::PlanError]) -> Errors {
    errors
        .iter()
        .flat_map(|e| tagged(e.input, std::slice::from_ref(e)))
        .collect()
}

/// Names the built-in deciders take (`decider::builtins`); a reply may
/// not use one.
pub const BUILTIN_NAMES: [&str; 5] = [
    "baseline",
    "heaviest-talker",
    "optimum",
    "optimum-capped",
    "local-search",
];

/// Why a name cannot be an external decider's in a comparison, if it
/// cannot: 1–64 characters, no spaces or control characters, not a
/// built-in's. (Whether it is given twice is the caller's to tell.)
pub fn reply_name_problem(name: &str) -> Option<String> {
    if name.is_empty() || name.chars().count() > 64 {
        Some("the name must be 1 to 64 characters".to_string())
    } else if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        Some("the name may not contain spaces".to_string())
    } else if BUILTIN_NAMES.contains(&name) {
        Some(format!(
            "{name:?} is the name of a built-in decider; choose another"
        ))
    } else {
        None
    }
}

/// The members of a JSON object in the order written (serde_json's own
/// map would sort them).
struct Members;

impl<'de> Visitor<'de> for Members {
    type Value = Vec<(String, Value)>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object of replies, {\"name\": \"<reply text>\", ...}")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        let mut out = Vec::new();
        while let Some(member) = map.next_entry::<String, Value>()? {
            out.push(member);
        }
        Ok(out)
    }
}

/// JSON pointer token of an object key (RFC 6901).
fn pointer(key: &str) -> String {
    format!("/{}", key.replace('~', "~0").replace('/', "~1"))
}

/// `{"name": "<reply text>", ...}` into the external deciders, in the
/// order given. Names follow `berth compare --response NAME=FILE`. A reply
/// that cannot be parsed is not an error here: it becomes that decider's
/// error entry, as in the CLI.
pub fn read_responses(responses_json: &str) -> Result<Vec<External>, Errors> {
    if responses_json.trim().is_empty() {
        return Ok(Vec::new());
    }
    let mut de = serde_json::Deserializer::from_str(responses_json);
    let members = (&mut de)
        .deserialize_map(Members)
        .and_then(|m| de.end().map(|()| m))
        .map_err(|e| {
            let message = match e.classify() {
                serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
                    format!("not valid JSON: {e}")
                }
                _ => e.to_string(),
            };
            let mut err = at(String::new(), message);
            err.line = Some(e.line());
            tagged("responses", &[err])
        })?;
    let mut errors = Vec::new();
    let mut externals = Vec::new();
    for (i, (name, reply)) in members.iter().enumerate() {
        let problem = reply_name_problem(name).or_else(|| {
            members[..i]
                .iter()
                .any(|(n, _)| n == name)
                .then(|| format!("the name {name:?} is given twice"))
        });
        if let Some(message) = problem {
            errors.push(at(pointer(name), message));
            continue;
        }
        let Value::String(text) = reply else {
            errors.push(at(
                pointer(name),
                format!(
                    "expected the reply as text (a JSON string holding the reply's JSON), got {}",
                    crate::json_shape::describe(reply)
                ),
            ));
            continue;
        };
        externals.push(External {
            name: name.clone(),
            response: decider::parse_response(text.as_bytes()).map_err(decider::DeciderError::from),
            run_time_ms: None,
        });
    }
    if errors.is_empty() {
        Ok(externals)
    } else {
        whatif::locate_errors(&mut errors, responses_json);
        Err(tagged("responses", &errors))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_names_are_the_engines() {
        let estate = crate::gen::estate(&crate::gen::Shape::small(1));
        let names: Vec<String> = decider::builtins(&estate, &Policy::default(), 0)
            .iter()
            .map(|d| d.name().to_string())
            .collect();
        assert_eq!(names, BUILTIN_NAMES);
    }

    #[test]
    fn explained_advice_keeps_struct_order() {
        let estate = crate::gen::estate(&crate::gen::Shape::small(3));
        let bytes = advice_why(&estate, &Policy::default(), 1_796_011_500);
        // Struct order: the advice's first member first, `why` last; a
        // sorting map in between would put `cant_tell` first.
        assert!(bytes.starts_with("{\"estate\":"), "{}", &bytes[..40]);
        assert!(bytes.contains(",\"why\":["));
        let plain = advice(&estate, &Policy::default(), 1_796_011_500);
        assert!(bytes.starts_with(&plain[..plain.len() - 1]));
    }
}
