//! External deciders as administrators register them (`/api/deciders`),
//! their secrets, and the saved what-if scenarios of an estate as they are
//! listed.
//!
//! The answers about a run (a decider's comparison entry, an advice
//! snapshot's advice) are engine results and are not retyped here.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[cfg(feature = "schema")]
use crate::{Nullable, Timestamp};
#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// For serde's `skip_serializing_if`: never skips, so the member is always
/// sent, yet the schema (derived for what is sent) says it may be absent,
/// as the server reads it (with its default).
fn never<T>(_: &T) -> bool {
    false
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn yes() -> bool {
    true
}

/// Where the decider is called (`POST` with the schema-1 request,
/// `docs/deciders.md`): `http` or `https`, no user name or password, at
/// most 2048 characters. Calls go to this URL only — no redirect is
/// followed (a `3xx` is the error `redirect`) and no proxy is used.
#[cfg(feature = "schema")]
#[derive(JsonSchema)]
#[allow(dead_code)]
struct DeciderUrl(#[schemars(length(max = 2048), extend("format" = "uri"))] String);

/// The total time a call may take, milliseconds, from 1000 to 25000 (1 to
/// 25 s: a person may be waiting, and proxies commonly cut requests at 30
/// s). Past it the call ends in the error `timeout`.
#[cfg(feature = "schema")]
#[derive(JsonSchema)]
#[allow(dead_code)]
struct DeciderTimeout(#[schemars(range(min = 1000, max = 25000))] i64);

/// How often the advice driver runs the decider on every estate, seconds,
/// from 60 to 604800 (a minute to a week); `null` (the default): only when
/// someone asks.
#[cfg(feature = "schema")]
#[derive(JsonSchema)]
#[schemars(extend("default" = null))]
#[allow(dead_code)]
struct DeciderInterval(#[schemars(range(min = 60, max = 604800))] Option<i64>);

/// A decider to register. The rules, each checked and reported at once
/// (`422`, `InvalidDecider`): `name` 1–64 characters of `a–z`, `0–9`, `-`,
/// `_`, `.`, not a built-in's (`baseline`, `heaviest-talker`, `optimum`,
/// `optimum-capped`, `local-search`), and not taken (`409`); `url` `http`
/// or `https`, no user name or password in it, at most 2048 characters;
/// `timeout_ms` from 1000 to 25000; `interval_s` `null` or from 60 to
/// 604800. Where the URL leads is checked at every call, after resolving
/// its host: loopback and private addresses are reachable only when the
/// server's `--decider-allow` lists them, link-local, multicast,
/// unspecified and cloud-metadata addresses never; a call to a refused
/// address ends in the error `blocked`. A missing `url` or `timeout_ms`,
/// an unknown field or a wrong type is a `400`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct NewDecider {
    /// How the decider is named in comparisons, runs and URLs; 1–64
    /// characters of `a–z`, `0–9`, `-`, `_`, `.`, starting with a letter
    /// or digit; not a built-in's (`baseline`, `heaviest-talker`,
    /// `optimum`, `optimum-capped`, `local-search`). Cannot be changed
    /// later.
    #[cfg_attr(
        feature = "schema",
        schemars(
            regex(pattern = "^[a-z0-9][a-z0-9._-]{0,63}$"),
            extend("not" = {"enum": ["baseline", "heaviest-talker", "optimum", "optimum-capped", "local-search"]})
        )
    )]
    pub name: String,
    /// Where the decider is called.
    #[cfg_attr(feature = "schema", schemars(with = "DeciderUrl"))]
    pub url: String,
    /// How long a call may take, milliseconds.
    #[cfg_attr(feature = "schema", schemars(with = "DeciderTimeout"))]
    pub timeout_ms: i64,
    /// `false`: the decider is not called (neither by people nor by the
    /// driver); a run asked for anyway ends in the error `disabled`.
    #[serde(default = "yes", skip_serializing_if = "never")]
    pub enabled: bool,
    /// How often the advice driver runs it; `null` or absent: only when
    /// someone asks.
    #[serde(default, skip_serializing_if = "never")]
    #[cfg_attr(feature = "schema", schemars(with = "DeciderInterval"))]
    pub interval_s: Option<i64>,
    /// `true`: generate a secret, sign every call with it, and return it
    /// once in the answer's `secret`. Needs the server's secret key (`409`
    /// without one).
    #[serde(default, skip_serializing_if = "never")]
    pub generate_secret: bool,
}

/// A registered decider's new settings, replacing the old ones (the rules
/// of `NewDecider`). An omitted `enabled` is `true`, an omitted
/// `interval_s` is `null`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct DeciderSettings {
    /// If given, the name in the path (a decider cannot be renamed; any
    /// other name is a `422`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub name: Option<String>,
    /// Where the decider is called.
    #[cfg_attr(feature = "schema", schemars(with = "DeciderUrl"))]
    pub url: String,
    /// How long a call may take, milliseconds.
    #[cfg_attr(feature = "schema", schemars(with = "DeciderTimeout"))]
    pub timeout_ms: i64,
    /// `false`: the decider is not called; runs asked for end in the error
    /// `disabled`.
    #[serde(default = "yes", skip_serializing_if = "never")]
    pub enabled: bool,
    /// How often the advice driver runs it; `null` or absent: only when
    /// someone asks.
    #[serde(default, skip_serializing_if = "never")]
    #[cfg_attr(feature = "schema", schemars(with = "DeciderInterval"))]
    pub interval_s: Option<i64>,
    /// Only `false` (secrets are set with `POST
    /// /api/deciders/{name}/secret`; `true` is a `422`).
    #[serde(default, skip_serializing_if = "is_false")]
    #[cfg_attr(feature = "schema", schemars(extend("const" = false)))]
    pub generate_secret: bool,
}

/// `POST /api/deciders/{name}/secret`'s body (optional).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SecretRotation {
    /// How long the current secret keeps being sent beside the new one,
    /// seconds, from 0 to 604800 (a week); default 86400 (a day, time for
    /// the decider's owner to deploy the new secret).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "i64", range(min = 0, max = 604800), extend("default" = 86400))
    )]
    pub overlap_s: Option<i64>,
}

/// A registered decider as the API shows it. The secrets themselves are
/// never shown.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema), schemars(deny_unknown_fields))]
pub struct Decider {
    /// How the decider is named in comparisons, runs and URLs.
    pub name: String,
    /// Where the decider is called.
    pub url: String,
    /// How long a call may take, milliseconds.
    pub timeout_ms: i64,
    /// `false`: the decider is not called.
    pub enabled: bool,
    /// Seconds between the driver's runs; `null` when it runs only on
    /// request.
    pub interval_s: Option<i64>,
    /// Identifies the current secret without revealing it (to check which
    /// one a decider has deployed); `null` when calls go out unsigned.
    pub secret_fingerprint: Option<String>,
    /// The secret before the last rotation, while it is still sent (until
    /// `previous_secret_expires_at`); `null` otherwise.
    pub previous_secret_fingerprint: Option<String>,
    /// When the previous secret stops being sent; `null` when there is
    /// none.
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<Timestamp>"))]
    pub previous_secret_expires_at: Option<String>,
    /// When it was registered.
    #[cfg_attr(feature = "schema", schemars(with = "Timestamp"))]
    pub created_at: String,
    /// The last change of its settings or secret.
    #[cfg_attr(feature = "schema", schemars(with = "Timestamp"))]
    pub updated_at: String,
}

/// `GET /api/deciders`: every registered decider, by name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema), schemars(deny_unknown_fields))]
pub struct DeciderList {
    /// The deciders, by name.
    pub deciders: Vec<Decider>,
}

/// One decider (`GET` and `PUT /api/deciders/{name}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema), schemars(deny_unknown_fields))]
pub struct DeciderAnswer {
    /// The decider as it is now (its secret's fingerprint, never the
    /// secret).
    pub decider: Decider,
}

/// A decider just registered or given a new secret, with that secret.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema), schemars(deny_unknown_fields))]
pub struct DeciderWithSecret {
    /// The decider as it is now.
    pub decider: Decider,
    /// The secret just generated, `whsec_` and base64 (the Standard
    /// Webhooks form), shown only now: Berth keeps it sealed and shows
    /// only its fingerprint afterwards. `null` when registering without
    /// `generate_secret`.
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Nullable<String>", regex(pattern = "^whsec_[A-Za-z0-9+/=]+$"))
    )]
    pub secret: Option<String>,
}

/// A saved what-if scenario as `GET /api/estates/{id}/scenarios` lists it
/// (without its steps).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct ScenarioMeta {
    /// The name it is saved under.
    pub name: String,
    /// When it was last saved.
    #[cfg_attr(feature = "schema", schemars(with = "Timestamp"))]
    pub updated_at: String,
    /// The subject who saved it (a user name or `token:<id>`).
    pub updated_by: String,
}

/// `GET /api/estates/{id}/scenarios`: the estate's saved scenarios, by
/// name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct ScenarioList {
    /// The scenarios, by name.
    pub scenarios: Vec<ScenarioMeta>,
}

/// `POST /api/estates/{id}/compare`: what to compare besides the
/// built-ins. An empty body compares the built-ins alone.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CompareRequest {
    /// Replies to score, by decider name (1–64 characters, not a
    /// built-in's: `baseline`, `heaviest-talker`, `optimum`,
    /// `optimum-capped`, `local-search`); scored in name order. Each reply
    /// is `{"proposals": [...]}` or the bare list (`docs/deciders.md`,
    /// "The reply"); a reply that is malformed or over a decider limit
    /// becomes that decider's error entry.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[cfg_attr(
        feature = "schema",
        schemars(extend("propertyNames" = {
            "minLength": 1,
            "maxLength": 64,
            "not": {"enum": ["baseline", "heaviest-talker", "optimum", "optimum-capped", "local-search"]}
        }))
    )]
    pub responses: BTreeMap<String, Value>,
    /// Registered deciders (`GET /api/deciders`) to call now, each with
    /// the estate's schema-1 request, all at once; their replies are
    /// scored with the rest, in this order. Each call is stored as a run
    /// (`GET /api/estates/{id}/deciders/{name}/runs`) and makes an entry
    /// whatever happens — a failed call is that decider's `error` entry.
    /// At most 16 names, each once, none also under `responses`; an
    /// unknown name is a `400`. A comparison with `external` is never
    /// answered from the cache.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(
        feature = "schema",
        schemars(
            length(max = 16),
            extend("uniqueItems" = true),
            inner(regex(pattern = "^[a-z0-9][a-z0-9._-]{0,63}$"))
        )
    )]
    pub external: Vec<String>,
}

/// Register this module's published schemas (`server/src/http/openapi.rs`).
#[cfg(feature = "schema")]
pub(crate) fn schemas(generator: &mut schemars::SchemaGenerator) {
    let _ = generator.subschema_for::<NewDecider>();
    let _ = generator.subschema_for::<DeciderSettings>();
    let _ = generator.subschema_for::<SecretRotation>();
    let _ = generator.subschema_for::<DeciderList>();
    let _ = generator.subschema_for::<DeciderAnswer>();
    let _ = generator.subschema_for::<DeciderWithSecret>();
    let _ = generator.subschema_for::<ScenarioList>();
    let _ = generator.subschema_for::<CompareRequest>();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_read_with_the_servers_defaults() {
        let b: DeciderSettings =
            serde_json::from_str(r#"{"url":"https://d.example/x","timeout_ms":5000}"#).unwrap();
        assert_eq!(b.name, None);
        assert!(b.enabled && !b.generate_secret);
        assert_eq!(b.interval_s, None);
        assert!(
            serde_json::from_str::<DeciderSettings>(r#"{"url":"u","timeout_ms":1,"x":1}"#).is_err()
        );
        let r: SecretRotation = serde_json::from_str("{}").unwrap();
        assert_eq!(r, SecretRotation::default());
        assert_eq!(
            serde_json::to_string(&SecretRotation {
                overlap_s: Some(3600)
            })
            .unwrap(),
            r#"{"overlap_s":3600}"#
        );
    }

    #[test]
    fn a_decider_is_written_member_for_member_as_before() {
        let text = r#"{"decider":{"name":"ranker","url":"https://d.example/x","timeout_ms":5000,"enabled":true,"interval_s":null,"secret_fingerprint":"ab12","previous_secret_fingerprint":null,"previous_secret_expires_at":null,"created_at":"2026-11-30T04:05:00Z","updated_at":"2026-11-30T04:05:00Z"},"secret":null}"#;
        let a: DeciderWithSecret = serde_json::from_str(text).unwrap();
        assert_eq!(a.decider.secret_fingerprint.as_deref(), Some("ab12"));
        assert_eq!(serde_json::to_string(&a).unwrap(), text);
    }
}
