//! The shared words of `docs/api.openapi.json`: the introduction, the tags,
//! the security schemes, and the parameters, bodies, answers and schemas
//! more than one operation names (or that no Rust type writes).

mod responses;
mod schemas;

pub use responses::responses;
pub use schemas::schemas;

use serde_json::{json, Value};

/// The introduction (`info.description`): Markdown.
pub const INTRO: &str = r#"The REST API of `berth serve`. This file is written by the server's
code (`server/src/http/openapi/`): every endpoint as crate `berth-api`
declares it once (`api/src/endpoint/`: method, path, parameters,
access, summary, description, body and answers) and the server's route
table serves it (`berth::http::routes()`), in the same order; the
schemas of the types the server writes (crate `berth-api`) and of the
policy (the engine's field table); and the shared words
(`server/src/http/openapi/components.rs`).
`server/tests/openapi.rs` fails when this file is not what the code
writes, and sends every operation below through the real router. Any
other path answers `404` with the error envelope and a message
starting `no route`.

## Signing in

Two ways to prove who you are (security schemes `bearerAuth` and
`cookieAuth`):

- **Bearer token**: `Authorization: Bearer berth_…`. Tokens are made by
  an administrator (`POST /api/tokens`) or at first start (the bootstrap
  admin token, or `BERTH_ADMIN_TOKEN`). A wrong or revoked token is an
  error (`401`), even on a public route; a malformed `Authorization`
  header is `400`. Bearer requests need no CSRF token.
- **Browser session**: `POST /api/session` sets the cookie
  `berth_session` (`Path=/; HttpOnly; SameSite=Lax; Max-Age=43200`,
  plus `Secure` when the server runs with `--secure-cookies`) and
  returns a CSRF token. Every state-changing request (any method but
  GET, HEAD and OPTIONS) made with the cookie must carry that token in
  the `X-CSRF-Token` header (scheme `csrfHeader`), or it is refused
  with `403`. A bearer token, when present, is used instead of the
  cookie. An expired or unknown cookie counts as not signed in.

Roles, weakest first: `viewer` < `operator` < `admin`; each includes
the rights of those before it. A fourth role, `agent`, is apart: it is
for measuring agents posting observations, and none of the routes
below grants it anything beyond the public ones. Each operation names the role it needs
in `x-berth-access` (`public`, `viewer`, `operator` or `admin`). A
token scoped to one estate may use only paths under
`/api/estates/{that id}`, `GET /api/estates` (which then lists that
estate only) and `/api/session`; anything else, other estates
included, is refused with `403`.

## Rate limits

`POST /api/session` and `POST /api/tokens` share a token bucket per
client address: a burst of 10 attempts, then one more every 6 s.
Beyond it the answer is `429` with `Retry-After` (seconds). The client
address is the socket peer, or with `--trust-forwarded-for` the last
entry of `X-Forwarded-For`. The bucket is per server process.

Engine computations — advice, preview, place, what-if and compare
that miss the result cache, and decider runs — take one from a bucket
per token or user: `--engine-runs-per-minute` (60) at once, then one
every 60/N s; beyond it, `429` with `Retry-After`.

## Result and connection limits

An engine result larger than `--max-result-mib` (64 MiB) is refused
with `507` (`result_too_large`), naming its size and the limit. A
request body that has not arrived whole within `--body-timeout-s`
(60 s) of its headers is answered `408` (`timeout`) on any route that
reads a body, and the connection is closed. Headers must arrive within
`--header-timeout-s` (10 s); connections over the server's caps are
answered `503` before any route (docs/server.md, "Connections").

## Body limits

64 MiB (67,108,864 bytes) for estate files (`POST /api/estates`,
`PUT /api/estates/{id}/file`) and fact updates
(`POST /api/estates/{id}/facts`); 16 MiB (16,777,216 bytes) for
`POST /api/estates/{id}/compare`; 1 MiB (1,048,576 bytes) for every
other body. A larger body is refused with `413` (`too_large`).

## Errors

Every error is JSON, `{error, message, details}` (schema `Error`):
`error` is a stable code — `bad_request` (400), `invalid` (422),
`unauthenticated` (401), `forbidden` (403), `not_found` (404),
`conflict` (409), `timeout` (408), `too_large` (413),
`rate_limited` (429), `result_too_large` (507),
`unavailable` (503, the database cannot be reached; retry),
`internal` (500; the details are in the server log only) — `message`
says what and where for people, and `details` is `null` except for
`bad_request` on a JSON syntax error (`{line, column}`) and `invalid`
(`{errors: [...]}`, every error at once, each `{path, line, message}`).
A query string that does not deserialise (an unknown parameter,
`why=1`) is a `400`; a path that exists with a method it does not have
answers `405` with the same envelope (code `bad_request`).

## Engine results and the cache

`advice`, `preview`, `place`, `whatif` and `compare` answer with the
result envelope (schema `ResultEnvelope`):
`{estate, version, content_digest, policy_digest, now, result_digest, result}` — the
estate id, its version (a counter bumped by every change of the estate
document), the digest of its canonical content, the policy digest, the
evaluation time, the hex SHA-256 of the result's exact JSON bytes (a
browser running the same engine compares its own result with it) and
the engine's result. The evaluation time is the
`now` query parameter (RFC 3339; percent-encode a `+` offset), or by
default the current time truncated to the minute. Results are cached
in the server process, keyed by operation, estate, estate version,
policy digest, evaluation time (so, by default, to the minute), and
the request's extra input: `why` for advice, the service for place,
the SHA-256 of the body for whatif and compare. The version is read
from the database on every request, so a change made anywhere (even
by another replica) is never answered from the cache. A comparison that
calls registered deciders (`external`) is never cached.

## External deciders and the driver

Administrators register external deciders (`/api/deciders`): a name,
the URL Berth sends the schema-1 decider request to, a timeout, an
enabled flag, an optional interval for the advice driver, and an
optional secret that signs every call. A secret is shown once, when it
is generated; afterwards only its fingerprint. Operators run a decider
on an estate (`POST /api/estates/{id}/deciders/{name}/runs`, or
`external` in a comparison); every run is stored with the estate
version and policy it ran against. The advice driver, a background
task of the server, keeps advice snapshots and interval deciders' runs
fresh; `GET /api/driver` tells how it is doing.
"#;

/// `info` without its description, `servers` and `tags`.
pub fn head() -> Vec<(&'static str, Value)> {
    vec![
        ("openapi", json!("3.1.0")),
        (
            "info",
            json!({
                "title": "Berth API",
                "version": "0.1.0",
                "summary": "Placement advice for multi-cluster estates, over HTTP.",
                "license": {
                    "name": "Apache-2.0",
                    "identifier": "Apache-2.0"
                }
            }),
        ),
        (
            "servers",
            json!([
                {
                    "url": "/",
                    "description": "The server itself (by default `http://127.0.0.1:3000`)."
                }
            ]),
        ),
        (
            "tags",
            json!([
                {
                    "name": "health",
                    "description": "Liveness, readiness and metrics; no sign-in."
                },
                {
                    "name": "session",
                    "description": "Browser sessions."
                },
                {
                    "name": "estates",
                    "description": "Estates, their files, facts and policies."
                },
                {
                    "name": "engine",
                    "description": "Engine results (cached; see \"Engine results and the cache\")."
                },
                {
                    "name": "reviews",
                    "description": "Review memory (planned, dismissed, snoozed) and the audit trail."
                },
                {
                    "name": "outcomes",
                    "description": "Applied moves, each checked against what was measured after it."
                },
                {
                    "name": "scenarios",
                    "description": "Saved what-if scenarios."
                },
                {
                    "name": "deciders",
                    "description": "External deciders (administrators register them), their secrets, and their runs on estates."
                },
                {
                    "name": "driver",
                    "description": "The advice driver's snapshots and health."
                },
                {
                    "name": "notifications",
                    "description": "Notification channels (administrators configure them) and their deliveries."
                },
                {
                    "name": "admin",
                    "description": "API tokens and users."
                }
            ]),
        ),
    ]
}

/// How a caller proves who they are.
pub fn security_schemes() -> Vec<(&'static str, Value)> {
    vec![
        (
            "bearerAuth",
            json!({
                "type": "http",
                "scheme": "bearer",
                "description": "`Authorization: Bearer <token>`, an API token (`berth_` and 64 hex digits). Checked before any cookie. An unknown or revoked token is `401` on every route; a header that is not `Bearer <token>` is `400`. Needs no CSRF token."
            }),
        ),
        (
            "cookieAuth",
            json!({
                "type": "apiKey",
                "in": "cookie",
                "name": "berth_session",
                "description": "The browser session cookie set by `POST /api/session`: HttpOnly,\nSameSite=Lax, Path=/, Max-Age 43200 (12 hours), and Secure when the\nserver runs with `--secure-cookies`. A state-changing request\n(POST, PUT, DELETE, …: anything but GET, HEAD, OPTIONS) made with\nit must also send the session's CSRF token in the `X-CSRF-Token`\nheader (scheme `csrfHeader`), or it is refused with `403`. The\nCSRF token is returned by `POST /api/session` and\n`GET /api/session`.\n"
            }),
        ),
        (
            "csrfHeader",
            json!({
                "type": "apiKey",
                "in": "header",
                "name": "X-CSRF-Token",
                "description": "The CSRF token of the cookie session (`csrf_token` from `POST /api/session` or `GET /api/session`). Required, together with `cookieAuth`, on every state-changing request authenticated by the cookie; compared in constant time. Not used with bearer tokens."
            }),
        ),
    ]
}

/// Parameters more than one operation takes.
pub fn parameters() -> Vec<(&'static str, Value)> {
    vec![
        (
            "EstateId",
            json!({
                "name": "id",
                "in": "path",
                "required": true,
                "description": "The estate id: 1–64 characters of `a–z`, `0–9`, `-`, `_`, starting with a letter or digit. A token scoped to another estate is refused with `403`.",
                "schema": {
                    "type": "string",
                    "pattern": "^[a-z0-9][a-z0-9_-]{0,63}$"
                },
                "example": "sample"
            }),
        ),
        (
            "ScenarioName",
            json!({
                "name": "name",
                "in": "path",
                "required": true,
                "description": "The scenario's name within the estate: 1–64 characters of `a–z`, `0–9`, `-`, `_`, starting with a letter or digit (checked when saving).",
                "schema": {
                    "type": "string",
                    "pattern": "^[a-z0-9][a-z0-9_-]{0,63}$"
                },
                "example": "retire-c-par-2"
            }),
        ),
        (
            "NewEstateId",
            json!({
                "name": "id",
                "in": "query",
                "required": false,
                "description": "The new estate's id (1–64 characters of `a–z`, `0–9`, `-`, `_`, starting with a letter or digit). Default: made from the estate's `name`.",
                "schema": {
                    "type": "string",
                    "pattern": "^[a-z0-9][a-z0-9_-]{0,63}$"
                },
                "example": "acme"
            }),
        ),
        (
            "Format",
            json!({
                "name": "format",
                "in": "query",
                "required": false,
                "description": "The file format of the export.",
                "schema": {
                    "type": "string",
                    "enum": [
                        "json",
                        "yaml"
                    ],
                    "default": "json"
                }
            }),
        ),
        (
            "Now",
            json!({
                "name": "now",
                "in": "query",
                "required": false,
                "description": "The evaluation time, RFC 3339 (e.g. `2026-11-30T04:05:00Z`; a `+` offset must be percent-encoded as `%2B`). Default: the current time, truncated to the minute. Staleness of every fact is judged at this time, and it is part of the cache key.",
                "schema": {
                    "type": "string",
                    "format": "date-time"
                },
                "example": "2026-11-30T04:05:00Z"
            }),
        ),
        (
            "Why",
            json!({
                "name": "why",
                "in": "query",
                "required": false,
                "description": "`true` adds the Why to the advice: for each move, its facts, terms and exact flip conditions (`docs/why.md`). Only `true` and `false` are accepted.",
                "schema": {
                    "type": "boolean",
                    "default": false
                }
            }),
        ),
        (
            "DeciderName",
            json!({
                "name": "name",
                "in": "path",
                "required": true,
                "description": "A registered external decider's name: 1–64 characters of `a–z`, `0–9`, `-`, `_`, `.`, starting with a letter or digit (not a built-in's name: `baseline`, `heaviest-talker`, `optimum`, `optimum-capped`, `local-search`).",
                "schema": {
                    "type": "string",
                    "pattern": "^[a-z0-9][a-z0-9._-]{0,63}$"
                },
                "example": "ranker"
            }),
        ),
        (
            "ChannelName",
            json!({
                "name": "name",
                "in": "path",
                "required": true,
                "description": "A notification channel's name: 1–64 characters of `a–z`, `0–9`, `-`, `_`, `.`, starting with a letter or digit.",
                "schema": {
                    "type": "string"
                },
                "example": "ops-hook"
            }),
        ),
        (
            "HistoryLimit",
            json!({
                "name": "limit",
                "in": "query",
                "required": false,
                "description": "How many entries to return at most, newest first (1–200).",
                "schema": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 200,
                    "default": 20
                },
                "example": 20
            }),
        ),
    ]
}

/// Bodies more than one operation takes.
pub fn request_bodies() -> Vec<(&'static str, Value)> {
    vec![
        (
            "EstateFile",
            json!({
                "required": true,
                "description": "An estate file, schema 1 (`docs/estate-format.md`; JSON Schema `docs/estate.schema.json`), as JSON or YAML. Rules that span several objects (unique ids, references, one link per pair, …) are checked by the loader too. At most 64 MiB.",
                "content": {
                    "application/json": {
                        "schema": {
                            "$ref": "./estate.schema.json"
                        },
                        "examples": {
                            "sample": {
                                "summary": "The sample estate shipped with Berth",
                                "externalValue": "../examples/estates/sample.json"
                            }
                        }
                    },
                    "application/yaml": {
                        "schema": {
                            "$ref": "./estate.schema.json"
                        }
                    }
                }
            }),
        ),
        (
            "Scenario",
            json!({
                "required": true,
                "description": "A what-if scenario, schema 1 (`docs/scenario-format.md`). At most 1 MiB.",
                "content": {
                    "application/json": {
                        "schema": {
                            "$ref": "#/components/schemas/Scenario"
                        },
                        "example": {
                            "schema": 1,
                            "name": "Retire c-par-2",
                            "steps": [
                                {
                                    "evacuate": "c-par-2"
                                },
                                {
                                    "move": {
                                        "service": "fraud-scoring",
                                        "to": "c-fra-2"
                                    }
                                }
                            ]
                        }
                    }
                }
            }),
        ),
    ]
}
