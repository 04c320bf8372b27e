//! What administrators manage: API tokens, user accounts and notification
//! channels; and the channels' deliveries, which everyone sees on Health.
//!
//! The request bodies carry roles, kinds and confidence classes as text:
//! the server reads any text there and says itself what it expects (its
//! messages are part of the API), while their schemas name the values.

use serde::{Deserialize, Serialize};

use crate::Role;
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

/// An API token as `GET /api/tokens` lists it (never its secret).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct TokenInfo {
    /// The token's id (not its secret); `bootstrap` or `env-…` for the
    /// bootstrap administrator.
    pub id: String,
    pub name: String,
    pub role: Role,
    /// The estate it is scoped to; `null` when not scoped.
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<String>"))]
    pub estate: Option<String>,
    #[cfg_attr(feature = "schema", schemars(with = "Timestamp"))]
    pub created_at: String,
    pub created_by: String,
    /// When it was revoked; `null` while it is live.
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<Timestamp>"))]
    pub revoked_at: Option<String>,
    /// An agent token allowed to create the cluster it reports for
    /// (`ObservationBatch.cluster`).
    pub may_create_clusters: bool,
    /// An agent token allowed to import its cluster's services (`POST
    /// /api/estates/{id}/import/kubernetes`, the agent's `--kubernetes`
    /// re-sync).
    pub may_sync_services: bool,
    /// An agent token's clusters: every observation, capacity figure,
    /// probe, cluster record and service re-sync it sends must concern one
    /// of them (`403` otherwise). Absent for other roles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clusters: Option<Vec<String>>,
}

/// `GET /api/tokens`: every token ever made, oldest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct TokenList {
    pub tokens: Vec<TokenInfo>,
}

/// `POST /api/tokens`'s body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct NewToken {
    /// 1–100 characters, not blank.
    #[cfg_attr(feature = "schema", schemars(length(min = 1, max = 100)))]
    pub name: String,
    /// A role's name: `agent`, `viewer`, `operator` or `admin`.
    #[cfg_attr(feature = "schema", schemars(with = "Role"))]
    pub role: String,
    /// Scope the token to this (existing) estate. Not for admin tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estate: Option<String>,
    /// Agent tokens only (`400` otherwise): the agent may create the
    /// cluster it reports for at its first batch (`berth agent
    /// --create-cluster`). Default false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub may_create_clusters: bool,
    /// Agent tokens only (`400` otherwise): the agent may re-sync its
    /// cluster's services from the Kubernetes API (`berth agent
    /// --kubernetes`) through the Kubernetes import. Default false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub may_sync_services: bool,
    /// Agent tokens: required, 1–64 cluster ids of the estate (or ones
    /// the token may create): the clusters its agent reports for. Every
    /// write the token makes must concern one of them (`403` otherwise).
    /// Other roles: `400`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clusters: Option<Vec<String>>,
}

/// The note every [`CreatedToken`] carries.
pub const TOKEN_NOTE: &str = "the token is shown only now; Berth keeps only its hash";

/// `POST /api/tokens`'s answer: the token, its secret shown this once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct CreatedToken {
    pub id: String,
    /// The secret, shown only now.
    #[cfg_attr(feature = "schema", schemars(regex(pattern = "^berth_[0-9a-f]{64}$")))]
    pub token: String,
    pub name: String,
    pub role: Role,
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<String>"))]
    pub estate: Option<String>,
    pub may_create_clusters: bool,
    pub may_sync_services: bool,
    /// An agent token's clusters: every observation, capacity figure,
    /// probe, cluster record and service re-sync it sends must concern one
    /// of them (`403` otherwise). Absent for other roles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clusters: Option<Vec<String>>,
    /// Always the same sentence: the token is shown only now.
    #[cfg_attr(
        feature = "schema",
        schemars(extend("const" = "the token is shown only now; Berth keeps only its hash"))
    )]
    pub note: String,
}

/// A user account as `GET /api/users` lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct User {
    pub name: String,
    pub role: Role,
    #[cfg_attr(feature = "schema", schemars(with = "Timestamp"))]
    pub created_at: String,
}

/// `GET /api/users`: the users, by name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct UserList {
    pub users: Vec<User>,
}

/// `POST /api/users`'s body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct NewUser {
    /// 1–64 characters of `a–z`, `0–9`, `-`, `_`, starting with a letter
    /// or digit.
    #[cfg_attr(
        feature = "schema",
        schemars(regex(pattern = "^[a-z0-9][a-z0-9_-]{0,63}$"))
    )]
    pub name: String,
    /// A role's name: `viewer`, `operator` or `admin` (agents use agent
    /// tokens, not accounts).
    #[cfg_attr(feature = "schema", schemars(with = "Role"))]
    pub role: String,
    /// At least 12 characters.
    #[cfg_attr(feature = "schema", schemars(length(min = 12)))]
    pub password: String,
}

/// `POST /api/users`'s answer: the user just created.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct CreatedUser {
    pub name: String,
    pub role: Role,
}

fn guessed() -> String {
    "guessed".into()
}

fn yes() -> bool {
    true
}

/// A channel's settings, as changed with PUT.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct NotificationChannelSettings {
    /// Only the channel's own name (a channel cannot be renamed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub name: Option<String>,
    /// Only the channel's own kind (it cannot change).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "String", extend("enum" = ["webhook", "slack", "teams"]))
    )]
    pub kind: Option<String>,
    /// Where messages are POSTed (http or https; the forwarding rules of
    /// deciders apply).
    #[cfg_attr(feature = "schema", schemars(length(max = 2048)))]
    pub url: String,
    /// A recommendation is sent when its gain, in points, is at least
    /// this.
    #[serde(default, skip_serializing_if = "never")]
    #[cfg_attr(feature = "schema", schemars(range(min = 0, max = 1000000)))]
    pub min_gain: f64,
    /// The weakest confidence class still sent (`guessed`, the default,
    /// sends every class).
    #[serde(default = "guessed", skip_serializing_if = "never")]
    #[cfg_attr(
        feature = "schema",
        schemars(extend("enum" = ["measured", "reported", "inferred", "guessed"]))
    )]
    pub min_confidence: String,
    /// A disabled channel queues nothing and sends nothing (its pending
    /// deliveries wait).
    #[serde(default = "yes", skip_serializing_if = "never")]
    pub enabled: bool,
}

/// The kinds of notification channel, as stored and as the API names them
/// (the `kind` of the channel bodies, which carry it as text so that an
/// unknown kind is refused with the server's own message).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelKind {
    /// A JSON event signed with `Berth-Signature` and the Standard
    /// Webhooks headers.
    Webhook,
    /// A Slack incoming webhook.
    Slack,
    /// A Microsoft Teams incoming webhook.
    Teams,
}

impl ChannelKind {
    pub const ALL: [ChannelKind; 3] =
        [ChannelKind::Webhook, ChannelKind::Slack, ChannelKind::Teams];

    pub fn as_str(self) -> &'static str {
        match self {
            ChannelKind::Webhook => "webhook",
            ChannelKind::Slack => "slack",
            ChannelKind::Teams => "teams",
        }
    }

    pub fn parse(s: &str) -> Option<ChannelKind> {
        ChannelKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// Every kind's name, comma-separated, for messages.
    pub fn names() -> String {
        ChannelKind::ALL.map(ChannelKind::as_str).join(", ")
    }

    /// What a person picking a kind is shown.
    pub fn label(self) -> &'static str {
        match self {
            ChannelKind::Webhook => "signed webhook (Standard Webhooks)",
            ChannelKind::Slack => "Slack incoming webhook",
            ChannelKind::Teams => "Microsoft Teams incoming webhook",
        }
    }
}

/// A new channel: its settings plus `name` and `kind`. `webhook`: the
/// JSON event of docs/notifications.md, signed with `Berth-Signature`
/// and the Standard Webhooks headers. `slack`: a Slack incoming
/// webhook (`{"text": …}`). `teams`: a Microsoft Teams incoming
/// webhook (a message with one Adaptive Card).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct NewNotificationChannel {
    #[cfg_attr(
        feature = "schema",
        schemars(length(min = 1, max = 64), regex(pattern = "^[a-z0-9][a-z0-9._-]*$"))
    )]
    pub name: String,
    #[cfg_attr(
        feature = "schema",
        schemars(extend("enum" = ["webhook", "slack", "teams"]))
    )]
    pub kind: String,
    #[cfg_attr(feature = "schema", schemars(length(max = 2048)))]
    pub url: String,
    #[serde(default, skip_serializing_if = "never")]
    #[cfg_attr(feature = "schema", schemars(range(min = 0, max = 1000000)))]
    pub min_gain: f64,
    #[serde(default = "guessed", skip_serializing_if = "never")]
    #[cfg_attr(
        feature = "schema",
        schemars(extend("enum" = ["measured", "reported", "inferred", "guessed"]))
    )]
    pub min_confidence: String,
    #[serde(default = "yes", skip_serializing_if = "never")]
    pub enabled: bool,
}

/// A channel as the API shows it (never its secret).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct NotificationChannel {
    pub name: String,
    #[cfg_attr(
        feature = "schema",
        schemars(extend("enum" = ["webhook", "slack", "teams"]))
    )]
    pub kind: String,
    /// The whole URL of a `webhook` channel; of a Slack or Teams one,
    /// whose URL is its credential, only `scheme://host/…`.
    pub url: String,
    pub min_gain: f64,
    #[cfg_attr(
        feature = "schema",
        schemars(extend("enum" = ["measured", "reported", "inferred", "guessed"]))
    )]
    pub min_confidence: String,
    pub enabled: bool,
    /// Identifies a `webhook` channel's secret without revealing it;
    /// `null` for Slack and Teams.
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<String>"))]
    pub secret_fingerprint: Option<String>,
    #[cfg_attr(feature = "schema", schemars(with = "Timestamp"))]
    pub created_at: String,
    #[cfg_attr(feature = "schema", schemars(with = "Timestamp"))]
    pub updated_at: String,
}

/// `GET /api/notification-channels`: every channel, by name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct NotificationChannelList {
    pub channels: Vec<NotificationChannel>,
}

/// One channel (`GET` and `PUT /api/notification-channels/{name}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct NotificationChannelAnswer {
    pub channel: NotificationChannel,
}

/// A channel just created or given a new secret, with that secret.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct NotificationChannelWithSecret {
    pub channel: NotificationChannel,
    /// A `webhook` channel's secret (`whsec_` and base64, the Standard
    /// Webhooks form), shown only now; `null` for Slack and Teams.
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Nullable<String>", regex(pattern = "^whsec_[A-Za-z0-9+/=]+$"))
    )]
    pub secret: Option<String>,
}

/// One recommendation queued for one channel, and how sending it went.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct NotificationDelivery {
    pub id: i64,
    pub channel: String,
    /// The estate id.
    pub estate: String,
    /// The recommendation's stable identity (`service|from|to`; a
    /// compound step's members sorted and joined with `+`). With
    /// `estate_version` and `channel` it is unique: a recommendation
    /// is sent once per estate version.
    pub identity: String,
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub estate_version: i64,
    /// The `webhook-id` sent with every attempt (the same on retries).
    pub message_id: String,
    #[cfg_attr(
        feature = "schema",
        schemars(extend("enum" = ["pending", "delivered", "failed"]))
    )]
    pub status: String,
    #[cfg_attr(feature = "schema", schemars(range(min = 0)))]
    pub attempts: i64,
    #[cfg_attr(feature = "schema", schemars(with = "Timestamp"))]
    pub created_at: String,
    /// When the next attempt is due; `null` once delivered or failed.
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<Timestamp>"))]
    pub next_attempt_at: Option<String>,
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<Timestamp>"))]
    pub last_attempt_at: Option<String>,
    /// The HTTP status of the last reply; `null` before the first or
    /// when none came (refused, timed out).
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<i64>"))]
    pub last_status: Option<i64>,
    /// Why the last attempt did not deliver (at most 500 characters);
    /// empty after a success.
    pub last_error: String,
    #[cfg_attr(feature = "schema", schemars(with = "Nullable<Timestamp>"))]
    pub delivered_at: Option<String>,
}

/// `GET /api/notification-deliveries`: newest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct NotificationDeliveryList {
    pub deliveries: Vec<NotificationDelivery>,
}

/// Register this module's published schemas (`server/src/http/openapi.rs`).
#[cfg(feature = "schema")]
pub(crate) fn schemas(generator: &mut schemars::SchemaGenerator) {
    let _ = generator.subschema_for::<TokenList>();
    let _ = generator.subschema_for::<NewToken>();
    let _ = generator.subschema_for::<CreatedToken>();
    let _ = generator.subschema_for::<UserList>();
    let _ = generator.subschema_for::<NewUser>();
    let _ = generator.subschema_for::<CreatedUser>();
    let _ = generator.subschema_for::<NotificationChannelSettings>();
    let _ = generator.subschema_for::<NewNotificationChannel>();
    let _ = generator.subschema_for::<NotificationChannelList>();
    let _ = generator.subschema_for::<NotificationChannelAnswer>();
    let _ = generator.subschema_for::<NotificationChannelWithSecret>();
    let _ = generator.subschema_for::<NotificationDeliveryList>();
}
