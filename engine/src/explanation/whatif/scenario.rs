//! A what-if scenario (`docs/scenario-format.md`) read from JSON: its
//! steps as ids, every error with its path, before anything is resolved
//! against an estate.

use super::*;

/// A what-if scenario (`docs/scenario-format.md`): ids, not yet resolved
/// against an estate.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Scenario {
    pub schema: u64,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub steps: Vec<Step>,
}

/// One step; serialises as `{"move": {"service": …, "to": …}}` or
/// `{"evacuate": "cluster-id"}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Step {
    Move { service: String, to: String },
    Evacuate(String),
}

/// One thing wrong with a scenario, at a JSON pointer (e.g.
/// `/steps/3/move/to`): the same shape as an estate file's errors, so
/// every input error reads and serialises alike.
pub type ScenarioError = crate::estate::EstateError;

/// Fill in the line of each error from the scenario's text.
pub fn locate_errors(errors: &mut [ScenarioError], text: &str) {
    for e in errors {
        if e.line.is_none() {
            e.line = crate::locate::line_of(text, &e.path);
        }
    }
}

impl Scenario {
    /// Parse a scenario and check its structure (not its ids: see
    /// [`Scenario::check`]). On any error, every error found, with lines.
    pub fn from_json(text: &str) -> Result<Scenario, Vec<ScenarioError>> {
        let err = |path: &str, line: Option<usize>, message: String| ScenarioError {
            path: path.into(),
            line,
            message,
        };
        if text.len() > MAX_TEXT_BYTES {
            return Err(vec![err(
                "",
                None,
                format!(
                    "scenario is {} bytes; expected at most {MAX_TEXT_BYTES}",
                    text.len()
                ),
            )]);
        }
        let value: Value = serde_json::from_str(text)
            .map_err(|e| vec![err("", Some(e.line()), format!("not valid JSON: {e}"))])?;
        let mut p = Parser::default();
        let scenario = p.scenario(&value);
        if p.errors.is_empty() {
            Ok(scenario.expect("no errors means a scenario"))
        } else {
            locate_errors(&mut p.errors, text);
            Err(p.errors)
        }
    }

    /// `from_json`, then every id checked against `estate`, with the shape
    /// errors and the unknown ids reported together in one pass, in file
    /// order (a missing `name` does not hide a misspelt cluster).
    pub fn from_json_checked(text: &str, estate: &Estate) -> Result<Scenario, Vec<ScenarioError>> {
        if text.len() > MAX_TEXT_BYTES {
            return Scenario::from_json(text);
        }
        let Ok(value) = serde_json::from_str::<Value>(text) else {
            return Scenario::from_json(text);
        };
        let mut p = Parser::default();
        let scenario = p.scenario(&value);
        let mut errors = p.errors;
        if let Some(sc) = &scenario {
            errors.extend(sc.check(estate));
        }
        if errors.is_empty() {
            return Ok(scenario.expect("no errors means a scenario"));
        }
        locate_errors(&mut errors, text);
        errors.sort_by_key(|e| e.line.unwrap_or(usize::MAX));
        Err(errors)
    }

    /// The scenario as JSON text (the format it is read from).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("scenario serialises")
    }

    /// Every id the scenario names that the estate does not have.
    pub fn check(&self, estate: &Estate) -> Vec<ScenarioError> {
        let mut errors = Vec::new();
        for (i, step) in self.steps.iter().enumerate() {
            let mut unknown = |path: String, what: &str, id: &str| {
                errors.push(ScenarioError {
                    path,
                    line: None,
                    message: format!(
                        "unknown {what} {id:?}: the estate has no {what} with that id"
                    ),
                });
            };
            match step {
                Step::Move { service, to } => {
                    if estate.service_index(service).is_none() {
                        unknown(format!("/steps/{i}/move/service"), "service", service);
                    }
                    if estate.cluster_index(to).is_none() {
                        unknown(format!("/steps/{i}/move/to"), "cluster", to);
                    }
                }
                Step::Evacuate(c) => {
                    if estate.cluster_index(c).is_none() {
                        unknown(format!("/steps/{i}/evacuate"), "cluster", c);
                    }
                }
            }
        }
        errors
    }
}

#[derive(Default)]
pub(super) struct Parser {
    pub(super) errors: Vec<ScenarioError>,
}

impl Parser {
    pub(super) fn err(&mut self, path: &str, message: impl Into<String>) {
        self.errors.push(ScenarioError {
            path: path.to_string(),
            line: None,
            message: message.into(),
        });
    }

    pub(super) fn object<'a>(
        &mut self,
        v: &'a Value,
        path: &str,
        allowed: &[&str],
    ) -> Option<&'a Map<String, Value>> {
        let Some(map) = v.as_object() else {
            self.err(path, format!("expected an object, got {}", describe(v)));
            return None;
        };
        for key in map.keys() {
            if !allowed.contains(&key.as_str()) {
                self.err(
                    &format!("{path}/{}", key.replace('~', "~0").replace('/', "~1")),
                    format!(
                        "unknown field `{key}`; expected one of: {}",
                        allowed.join(", ")
                    ),
                );
            }
        }
        Some(map)
    }

    pub(super) fn text(&mut self, v: Option<&Value>, path: &str, max: usize) -> Option<String> {
        match v {
            Some(Value::String(s)) if !s.trim().is_empty() && s.len() <= max => {
                match crate::chars::name_problem(s) {
                    Some(problem) => {
                        self.err(path, problem);
                        None
                    }
                    None => Some(s.clone()),
                }
            }
            Some(Value::String(_)) => {
                self.err(
                    path,
                    format!("expected a non-empty string of at most {max} bytes"),
                );
                None
            }
            None => {
                self.err(path, "missing; expected a string");
                None
            }
            Some(v) => {
                self.err(path, format!("expected a string, got {}", describe(v)));
                None
            }
        }
    }

    pub(super) fn id(&mut self, v: Option<&Value>, path: &str, what: &str) -> Option<String> {
        match v {
            None => {
                self.err(path, format!("missing; expected a {what} id"));
                None
            }
            // The estate's own id rule (`chars::id_problem`): an id it
            // refuses names nothing in any estate.
            Some(Value::String(s)) => match crate::chars::id_problem(s) {
                None => Some(s.clone()),
                Some(problem) => {
                    self.err(path, format!("expected a {what} id: {problem}"));
                    None
                }
            },
            Some(v) => {
                self.err(
                    path,
                    format!("expected a {what} id (a string), got {}", describe(v)),
                );
                None
            }
        }
    }

    pub(super) fn scenario(&mut self, v: &Value) -> Option<Scenario> {
        let top = self.object(v, "", &["schema", "name", "description", "steps"])?;
        match top.get("schema") {
            Some(Value::Number(n)) if n.as_u64() == Some(SCHEMA) => {}
            None => self.err("/schema", format!("missing; expected {SCHEMA}")),
            Some(v) => self.err(
                "/schema",
                format!(
                    "expected {SCHEMA} (the only scenario schema so far), got {}",
                    describe(v)
                ),
            ),
        }
        let name = self.text(top.get("name"), "/name", 256);
        let description = match top.get("description") {
            None | Some(Value::Null) => None,
            d => self.text(d, "/description", 4096),
        };
        let mut steps = Vec::new();
        match top.get("steps") {
            None => self.err("/steps", "missing; expected an array of steps"),
            Some(Value::Array(items)) if items.len() > MAX_STEPS => self.err(
                "/steps",
                format!("{} steps; expected at most {MAX_STEPS}", items.len()),
            ),
            Some(Value::Array(items)) => {
                let mut moved: BTreeMap<String, usize> = BTreeMap::new();
                let mut evacuated: BTreeMap<String, usize> = BTreeMap::new();
                for (i, item) in items.iter().enumerate() {
                    let path = format!("/steps/{i}");
                    if let Some(step) = self.step(item, &path) {
                        let (seen, key, what, at) = match &step {
                            Step::Move { service, .. } => {
                                (&mut moved, service, "moves service", "move/service")
                            }
                            Step::Evacuate(c) => {
                                (&mut evacuated, c, "evacuates cluster", "evacuate")
                            }
                        };
                        if let Some(&first) = seen.get(key) {
                            self.err(
                                &format!("{path}/{at}"),
                                format!(
                                    "/steps/{first} already {what} {key:?}; a scenario does \
                                     that at most once (edit that step instead)"
                                ),
                            );
                            continue;
                        }
                        seen.insert(key.clone(), i);
                        steps.push(step);
                    }
                }
            }
            Some(v) => self.err(
                "/steps",
                format!("expected an array of steps, got {}", describe(v)),
            ),
        }
        // A stand-in name keeps the readable steps for `from_json_checked`;
        // a missing name is already an error, so it never reaches a user.
        Some(Scenario {
            schema: SCHEMA,
            name: name.unwrap_or_default(),
            description,
            steps,
        })
    }

    pub(super) fn step(&mut self, v: &Value, path: &str) -> Option<Step> {
        const SHAPE: &str =
            r#"expected {"move": {"service": "…", "to": "…"}} or {"evacuate": "cluster-id"}"#;
        let map = self.object(v, path, &["move", "evacuate"])?;
        match (map.get("move"), map.get("evacuate")) {
            (Some(m), None) => {
                let mpath = format!("{path}/move");
                let m = self.object(m, &mpath, &["service", "to"])?;
                let service = self.id(m.get("service"), &format!("{mpath}/service"), "service");
                let to = self.id(m.get("to"), &format!("{mpath}/to"), "cluster");
                Some(Step::Move {
                    service: service?,
                    to: to?,
                })
            }
            (None, Some(c)) => self
                .id(Some(c), &format!("{path}/evacuate"), "cluster")
                .map(Step::Evacuate),
            (Some(_), Some(_)) => {
                self.err(
                    path,
                    format!("a step does one thing, not both `move` and `evacuate`; {SHAPE}"),
                );
                None
            }
            (None, None) => {
                if map.is_empty() {
                    self.err(path, format!("empty step; {SHAPE}"));
                }
                None
            }
        }
    }
}
