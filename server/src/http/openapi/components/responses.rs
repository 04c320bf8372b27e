//! Answers more than one operation gives, by what they answer.

use serde_json::{json, Value};

/// Answers more than one operation gives.
pub fn responses() -> Vec<(&'static str, Value)> {
    [
        refusals(),
        missing_and_invalid(),
        limits(),
        failures(),
        history_and_deciders(),
        reviews_deciders_channels(),
    ]
    .concat()
}

/// Refusals of the request itself: its shape, its caller.
fn refusals() -> Vec<(&'static str, Value)> {
    vec![
        (
            "BadRequest",
            json!({
                "description": "The request is not what the route expects: a body that is not UTF-8, not JSON or not of the expected shape (for a JSON syntax error `details` gives `{line, column}`), a value out of its rules (the message names it), or a malformed `Authorization` header.",
                "content": {
                    "application/json": {
                        "schema": {
                            "$ref": "#/components/schemas/BadRequestError"
                        }
                    }
                }
            }),
        ),
        (
            "BadRequestOrQuery",
            json!({
                "description": "As `BadRequest` (JSON error envelope); or a query string that does not deserialise (an unknown parameter), which the framework refuses with a `text/plain` body.",
                "content": {
                    "application/json": {
                        "schema": {
                            "$ref": "#/components/schemas/BadRequestError"
                        }
                    },
                    "text/plain": {
                        "schema": {
                            "type": "string"
                        }
                    }
                }
            }),
        ),
        (
            "BadQuery",
            json!({
                "description": "`now` is not an RFC 3339 time, a request body that is not UTF-8 text, or a malformed `Authorization` header (JSON error envelope); or the query string does not deserialise — an unknown parameter, `why` not `true`/`false` — which the framework refuses with a `text/plain` body.",
                "content": {
                    "application/json": {
                        "schema": {
                            "$ref": "#/components/schemas/BadRequestError"
                        },
                        "example": {
                            "error": "bad_request",
                            "message": "now=\"yesterday\": expected an RFC 3339 time like 2026-11-30T04:05:00Z",
                            "details": null
                        }
                    },
                    "text/plain": {
                        "schema": {
                            "type": "string"
                        }
                    }
                }
            }),
        ),
        (
            "BadAuthorizationHeader",
            json!({
                "description": "The `Authorization` header is not `Bearer <token>`.",
                "content": {
                    "application/json": {
                        "schema": {
                            "$ref": "#/components/schemas/BadRequestError"
                        },
                        "example": {
                            "error": "bad_request",
                            "message": "Authorization header: expected `Bearer <token>`",
                            "details": null
                        }
                    }
                }
            }),
        ),
        (
            "UnknownBearerToken",
            json!({
                "description": "A bearer token was sent but is unknown or revoked. (Without credentials this route works.)",
                "content": {
                    "application/json": {
                        "schema": {
                            "$ref": "#/components/schemas/UnauthenticatedError"
                        }
                    }
                }
            }),
        ),
        (
            "Unauthenticated",
            json!({
                "description": "Not signed in (no credentials, or an expired session cookie), or a bearer token that is unknown or revoked.",
                "content": {
                    "application/json": {
                        "schema": {
                            "$ref": "#/components/schemas/UnauthenticatedError"
                        },
                        "example": {
                            "error": "unauthenticated",
                            "message": "not signed in: send a bearer token or sign in",
                            "details": null
                        }
                    }
                }
            }),
        ),
        (
            "Forbidden",
            json!({
                "description": "The caller's role is below the one this route needs; a token scoped to one estate used a route outside it (or tried to create an estate); or a cookie session sent a state-changing request without its `X-CSRF-Token`.",
                "content": {
                    "application/json": {
                        "schema": {
                            "$ref": "#/components/schemas/ForbiddenError"
                        },
                        "example": {
                            "error": "forbidden",
                            "message": "this needs the operator role; you are signed in as token:3f9a0c2b7d41 (viewer)",
                            "details": null
                        }
                    }
                }
            }),
        ),
        (
            "NeverForbidden",
            json!({
                "description": "Listed for uniformity with every signed-in route; the current server does not return it here (every role may use this read-only route, including a token scoped to one estate).",
                "content": {
                    "application/json": {
                        "schema": {
                            "$ref": "#/components/schemas/ForbiddenError"
                        }
                    }
                }
            }),
        ),
    ]
}

/// What is not there, changed meanwhile, too large or invalid.
fn missing_and_invalid() -> Vec<(&'static str, Value)> {
    vec![
        (
            "NoEstate",
            json!({
                "description": "No estate with this id.",
                "content": {
                    "application/json": {
                        "schema": {
                            "$ref": "#/components/schemas/NotFoundError"
                        },
                        "example": {
                            "error": "not_found",
                            "message": "no estate \"nope\"",
                            "details": null
                        }
                    }
                }
            }),
        ),
        (
            "NoScenario",
            json!({
                "description": "No estate with this id, or no scenario of this name in it.",
                "content": {
                    "application/json": {
                        "schema": {
                            "$ref": "#/components/schemas/NotFoundError"
                        },
                        "example": {
                            "error": "not_found",
                            "message": "no scenario \"x\" in estate \"sample\"",
                            "details": null
                        }
                    }
                }
            }),
        ),
        (
            "KeptChanging",
            json!({
                "description": "The estate kept changing under the request (five optimistic attempts lost to other writers); try again.",
                "content": {
                    "application/json": {
                        "schema": {
                            "$ref": "#/components/schemas/ConflictError"
                        }
                    }
                }
            }),
        ),
        (
            "TooLarge",
            json!({
                "description": "The body is over this route's limit (see \"Body limits\"), which the message names in bytes.",
                "content": {
                    "application/json": {
                        "schema": {
                            "allOf": [
                                {
                                    "$ref": "#/components/schemas/Error"
                                },
                                {
                                    "properties": {
                                        "error": {
                                            "const": "too_large"
                                        },
                                        "details": {
                                            "type": "null"
                                        }
                                    }
                                }
                            ]
                        },
                        "example": {
                            "error": "too_large",
                            "message": "request body too large: the limit for this route is 1048576 bytes",
                            "details": null
                        }
                    }
                }
            }),
        ),
        (
            "InvalidEstate",
            json!({
                "description": "The estate file is well-formed text but not a valid estate: every error, with its JSON pointer (`/` for the whole file), its line (`null` where the format does not tell) and message. Nothing was written.",
                "content": {
                    "application/json": {
                        "schema": {
                            "$ref": "#/components/schemas/InvalidError"
                        },
                        "example": {
                            "error": "invalid",
                            "message": "invalid estate file: 1 error; nothing was written",
                            "details": {
                                "errors": [
                                    {
                                        "path": "/clusters/3/cpu_free/class",
                                        "line": 42,
                                        "message": "expected one of \"measured\", \"reported\", \"inferred\", \"guessed\""
                                    }
                                ]
                            }
                        }
                    }
                }
            }),
        ),
        (
            "InvalidScenario",
            json!({
                "description": "The scenario is refused as a whole: every problem, each with its JSON pointer, line and message (`docs/scenario-format.md`, \"Errors\").",
                "content": {
                    "application/json": {
                        "schema": {
                            "$ref": "#/components/schemas/InvalidError"
                        },
                        "example": {
                            "error": "invalid",
                            "message": "invalid scenario: 1 error",
                            "details": {
                                "errors": [
                                    {
                                        "path": "/steps/0/evacuate",
                                        "line": 5,
                                        "message": "unknown cluster \"c-par-9\": the estate has no cluster with that id"
                                    }
                                ]
                            }
                        }
                    }
                }
            }),
        ),
    ]
}

/// Limits the server holds callers to.
fn limits() -> Vec<(&'static str, Value)> {
    vec![
        (
            "EngineRateLimited",
            json!({
                "description": "Too many engine computations for this token or user (see \"Rate limits\"); answers from the result cache do not count.",
                "headers": {
                    "Retry-After": {
                        "description": "Seconds until the next computation is allowed (at least 1).",
                        "schema": {
                            "type": "integer",
                            "minimum": 1
                        }
                    }
                },
                "content": {
                    "application/json": {
                        "schema": {
                            "allOf": [
                                {
                                    "$ref": "#/components/schemas/Error"
                                },
                                {
                                    "properties": {
                                        "error": {
                                            "const": "rate_limited"
                                        },
                                        "details": {
                                            "type": "null"
                                        }
                                    }
                                }
                            ]
                        },
                        "example": {
                            "error": "rate_limited",
                            "message": "too many engine computations for token:3f2a: 60 a minute are allowed (--engine-runs-per-minute); retry in 1 s",
                            "details": null
                        }
                    }
                }
            }),
        ),
        (
            "ResultTooLarge",
            json!({
                "description": "The engine result is larger than this server builds and sends (`--max-result-mib`, 64 MiB by default); the message names its size and the limit in bytes. Nothing is cached.",
                "content": {
                    "application/json": {
                        "schema": {
                            "allOf": [
                                {
                                    "$ref": "#/components/schemas/Error"
                                },
                                {
                                    "properties": {
                                        "error": {
                                            "const": "result_too_large"
                                        },
                                        "details": {
                                            "type": "null"
                                        }
                                    }
                                }
                            ]
                        },
                        "example": {
                            "error": "result_too_large",
                            "message": "the preview result is 310214021 bytes, above this server's limit of 67108864 bytes (--max-result-mib); evaluate a smaller estate, or ask the operator to raise the limit",
                            "details": null
                        }
                    }
                }
            }),
        ),
        (
            "RateLimited",
            json!({
                "description": "Too many attempts from this address (see \"Rate limits\").",
                "headers": {
                    "Retry-After": {
                        "description": "Seconds until the next attempt is allowed (at least 1).",
                        "schema": {
                            "type": "integer",
                            "minimum": 1
                        }
                    }
                },
                "content": {
                    "application/json": {
                        "schema": {
                            "allOf": [
                                {
                                    "$ref": "#/components/schemas/Error"
                                },
                                {
                                    "properties": {
                                        "error": {
                                            "const": "rate_limited"
                                        },
                                        "details": {
                                            "type": "null"
                                        }
                                    }
                                }
                            ]
                        },
                        "example": {
                            "error": "rate_limited",
                            "message": "too many attempts from this address; retry in 6 s",
                            "details": null
                        }
                    }
                }
            }),
        ),
    ]
}

/// The server's own failures.
fn failures() -> Vec<(&'static str, Value)> {
    vec![
        (
            "Unavailable",
            json!({
                "description": "The database is unavailable (down or overloaded); the request may be retried.",
                "content": {
                    "application/json": {
                        "schema": {
                            "allOf": [
                                {
                                    "$ref": "#/components/schemas/Error"
                                },
                                {
                                    "properties": {
                                        "error": {
                                            "const": "unavailable"
                                        },
                                        "details": {
                                            "type": "null"
                                        }
                                    }
                                }
                            ]
                        }
                    }
                }
            }),
        ),
        (
            "Internal",
            json!({
                "description": "An internal error; what went wrong is in the server log, never in the response.",
                "content": {
                    "application/json": {
                        "schema": {
                            "allOf": [
                                {
                                    "$ref": "#/components/schemas/Error"
                                },
                                {
                                    "properties": {
                                        "error": {
                                            "const": "internal"
                                        },
                                        "message": {
                                            "const": "internal error; the server log has the details"
                                        },
                                        "details": {
                                            "type": "null"
                                        }
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

/// Answers of the history and the deciders.
fn history_and_deciders() -> Vec<(&'static str, Value)> {
    vec![
        (
            "BadHistoryQuery",
            json!({
                "description": "`limit` is not an integer from 1 to 200, the query string has another parameter, or the `Authorization` header is malformed.",
                "content": {
                    "application/json": {
                        "schema": {
                            "$ref": "#/components/schemas/BadRequestError"
                        },
                        "example": {
                            "error": "bad_request",
                            "message": "limit 500: from 1 to 200",
                            "details": null
                        }
                    }
                }
            }),
        ),
        (
            "NoDecider",
            json!({
                "description": "No decider of this name is registered.",
                "content": {
                    "application/json": {
                        "schema": {
                            "$ref": "#/components/schemas/NotFoundError"
                        },
                        "example": {
                            "error": "not_found",
                            "message": "no decider \"ranker\" is registered",
                            "details": null
                        }
                    }
                }
            }),
        ),
        (
            "NoSecretKey",
            json!({
                "description": "The server has no secret key to seal decider secrets with (it runs on a database given by `--database-url` with neither `BERTH_SECRET_KEY` nor `--secret-key-file`; docs/server.md), so it cannot keep a secret. Nothing was written.",
                "content": {
                    "application/json": {
                        "schema": {
                            "$ref": "#/components/schemas/ConflictError"
                        },
                        "example": {
                            "error": "conflict",
                            "message": "this server has no secret key, so it cannot keep decider secrets: start it with BERTH_SECRET_KEY or --secret-key-file",
                            "details": null
                        }
                    }
                }
            }),
        ),
    ]
}

/// Refusals of reviews, deciders and notification channels.
fn reviews_deciders_channels() -> Vec<(&'static str, Value)> {
    vec![
        (
            "InvalidReview",
            json!({
                "description": "The decision breaks its rules, or names no recommendation of the advice at `now`: every error at once, each with the JSON pointer of its field, `line: null` and a message. Nothing was written.",
                "content": {
                    "application/json": {
                        "schema": {
                            "$ref": "#/components/schemas/InvalidError"
                        },
                        "example": {
                            "error": "invalid",
                            "message": "invalid decision: 1 error; nothing was written",
                            "details": {
                                "errors": [
                                    {
                                        "path": "/reason",
                                        "line": null,
                                        "message": "a dismissal needs a reason: it is what the next person reads"
                                    }
                                ]
                            }
                        }
                    }
                }
            }),
        ),
        (
            "InvalidDecider",
            json!({
                "description": "The decider's settings break its rules (see `NewDecider`): every error at once, each with the JSON pointer of its field, `line: null` and a message. Nothing was written.",
                "content": {
                    "application/json": {
                        "schema": {
                            "$ref": "#/components/schemas/InvalidError"
                        },
                        "example": {
                            "error": "invalid",
                            "message": "invalid decider: 2 errors; nothing was written",
                            "details": {
                                "errors": [
                                    {
                                        "path": "/timeout_ms",
                                        "line": null,
                                        "message": "30000 ms: the timeout must be from 1000 to 25000 ms (1 to 25 s)"
                                    },
                                    {
                                        "path": "/interval_s",
                                        "line": null,
                                        "message": "10 s: the interval must be from 60 s to 604800 s (a week), or null for runs on request only"
                                    }
                                ]
                            }
                        }
                    }
                }
            }),
        ),
        (
            "NoChannel",
            json!({
                "description": "No notification channel of this name exists.",
                "content": {
                    "application/json": {
                        "schema": {
                            "$ref": "#/components/schemas/NotFoundError"
                        },
                        "example": {
                            "error": "not_found",
                            "message": "no notification channel \"ops-hook\"",
                            "details": null
                        }
                    }
                }
            }),
        ),
        (
            "InvalidChannel",
            json!({
                "description": "The channel's settings break its rules (see `NewNotificationChannel`): every error at once, each with the JSON pointer of its field, `line: null` and a message. Nothing was written.",
                "content": {
                    "application/json": {
                        "schema": {
                            "$ref": "#/components/schemas/InvalidError"
                        },
                        "example": {
                            "error": "invalid",
                            "message": "invalid notification channel: 1 error; nothing was written",
                            "details": {
                                "errors": [
                                    {
                                        "path": "/min_confidence",
                                        "line": null,
                                        "message": "\"sure\": the minimum confidence must be one of measured, reported, inferred, guessed"
                                    }
                                ]
                            }
                        }
                    }
                }
            }),
        ),
    ]
}
