//! Schemas no Rust type writes, by what they describe.

use serde_json::{json, Value};

/// Schemas no Rust type writes (`Policy` gets its fields from the engine's policy table).
pub fn schemas() -> Vec<(&'static str, Value)> {
    [
        error_envelopes(),
        more_error_envelopes(),
        sign_in_and_policy(),
        scenario(),
        runs_and_snapshots(),
    ]
    .concat()
}

/// The error bodies of 400, 401 and 403, around the one envelope.
fn error_envelopes() -> Vec<(&'static str, Value)> {
    vec![
        (
            "BadRequestError",
            json!({
                "allOf": [
                    {
                        "$ref": "#/components/schemas/Error"
                    },
                    {
                        "properties": {
                            "error": {
                                "const": "bad_request"
                            },
                            "details": {
                                "oneOf": [
                                    {
                                        "type": "null"
                                    },
                                    {
                                        "type": "object",
                                        "description": "Where a JSON body stopped parsing.",
                                        "required": [
                                            "line",
                                            "column"
                                        ],
                                        "properties": {
                                            "line": {
                                                "type": "integer"
                                            },
                                            "column": {
                                                "type": "integer"
                                            }
                                        }
                                    },
                                    {
                                        "type": "object",
                                        "description": "The fields a form's rule refuses, each at its JSON pointer, as a 422 lists them (a new user's name and password).",
                                        "required": [
                                            "errors"
                                        ],
                                        "properties": {
                                            "errors": {
                                                "type": "array",
                                                "minItems": 1,
                                                "items": {
                                                    "$ref": "#/components/schemas/InputError"
                                                }
                                            }
                                        }
                                    }
                                ]
                            }
                        }
                    }
                ]
            }),
        ),
        (
            "UnauthenticatedError",
            json!({
                "allOf": [
                    {
                        "$ref": "#/components/schemas/Error"
                    },
                    {
                        "properties": {
                            "error": {
                                "const": "unauthenticated"
                            },
                            "message": {
                                "const": "not signed in: send a bearer token or sign in"
                            },
                            "details": {
                                "type": "null"
                            }
                        }
                    }
                ]
            }),
        ),
        (
            "ForbiddenError",
            json!({
                "allOf": [
                    {
                        "$ref": "#/components/schemas/Error"
                    },
                    {
                        "properties": {
                            "error": {
                                "const": "forbidden"
                            },
                            "details": {
                                "type": "null"
                            }
                        }
                    }
                ]
            }),
        ),
    ]
}

/// The error bodies of 404, 409 and 422.
fn more_error_envelopes() -> Vec<(&'static str, Value)> {
    vec![
        (
            "NotFoundError",
            json!({
                "allOf": [
                    {
                        "$ref": "#/components/schemas/Error"
                    },
                    {
                        "properties": {
                            "error": {
                                "const": "not_found"
                            },
                            "details": {
                                "type": "null"
                            }
                        }
                    }
                ]
            }),
        ),
        (
            "ConflictError",
            json!({
                "allOf": [
                    {
                        "$ref": "#/components/schemas/Error"
                    },
                    {
                        "properties": {
                            "error": {
                                "const": "conflict"
                            },
                            "details": {
                                "type": "null"
                            }
                        }
                    }
                ]
            }),
        ),
        (
            "InvalidError",
            json!({
                "allOf": [
                    {
                        "$ref": "#/components/schemas/Error"
                    },
                    {
                        "properties": {
                            "error": {
                                "const": "invalid"
                            },
                            "details": {
                                "type": "object",
                                "required": [
                                    "errors"
                                ],
                                "properties": {
                                    "errors": {
                                        "type": "array",
                                        "minItems": 1,
                                        "items": {
                                            "$ref": "#/components/schemas/InputError"
                                        }
                                    }
                                }
                            }
                        }
                    }
                ]
            }),
        ),
    ]
}

/// The sign-in body and the policy (its fields from the engine table).
fn sign_in_and_policy() -> Vec<(&'static str, Value)> {
    vec![
        (
            "SignIn",
            json!({
                "description": "Exactly one of the two forms; no other fields.",
                "oneOf": [
                    {
                        "type": "object",
                        "title": "user and password",
                        "additionalProperties": false,
                        "required": [
                            "username",
                            "password"
                        ],
                        "properties": {
                            "username": {
                                "type": "string"
                            },
                            "password": {
                                "type": "string"
                            }
                        }
                    },
                    {
                        "type": "object",
                        "title": "token",
                        "additionalProperties": false,
                        "required": [
                            "token"
                        ],
                        "properties": {
                            "token": {
                                "type": "string",
                                "description": "An API token (`berth_…`)."
                            }
                        }
                    }
                ]
            }),
        ),
        (
            "Policy",
            json!({
                "description": "Every weight, bar and default of the engine (`docs/advice.md` §8, placement weights §9 and `docs/placement.md`). In a request any subset may be given and the rest take their defaults; a response always has every field. Unknown fields are refused.",
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "margins": {
                        "description": "Relative margin of error per confidence class; must not decrease from measured to guessed.",
                        "type": "object",
                        "additionalProperties": false
                    },
                    "staleness": {
                        "description": "Staleness windows, seconds, cumulative from observation.",
                        "type": "object",
                        "additionalProperties": false
                    },
                    "rtt": {
                        "description": "Nominal RTTs of the evidence ladder, ms.",
                        "type": "object",
                        "additionalProperties": false
                    },
                    "unknown_flow": {
                        "description": "Assumptions for flow facts whose value is unknown (carried as guessed).",
                        "type": "object",
                        "additionalProperties": false
                    },
                    "placement": {
                        "description": "Weights of the single-service placement scorer (`docs/placement.md`); `over_target_cost` must exceed `headroom_bonus + incumbency_bonus + youth_bonus`.",
                        "type": "object",
                        "additionalProperties": false
                    },
                    "transfer_price": {
                        "description": "US$ per GB of traffic between two clusters by link class, to read traffic as money (`docs/advice.md` §1a): a display only, not part of the cost nor of the policy digest.",
                        "type": "object",
                        "additionalProperties": false
                    }
                }
            }),
        ),
    ]
}

/// The what-if scenario.
fn scenario() -> Vec<(&'static str, Value)> {
    vec![(
        "Scenario",
        json!({
            "description": "A what-if scenario, schema 1 (`docs/scenario-format.md`).",
            "type": "object",
            "additionalProperties": false,
            "required": [
                "schema",
                "name",
                "steps"
            ],
            "properties": {
                "schema": {
                    "const": 1
                },
                "name": {
                    "description": "1–256 bytes.",
                    "type": "string",
                    "minLength": 1
                },
                "description": {
                    "description": "Up to 4096 bytes.",
                    "type": "string"
                },
                "steps": {
                    "description": "0–10,000 steps, applied in order; a service may be moved by one `move` step at most, a cluster evacuated once.",
                    "type": "array",
                    "maxItems": 10000,
                    "items": {
                        "oneOf": [
                            {
                                "type": "object",
                                "title": "move",
                                "additionalProperties": false,
                                "required": [
                                    "move"
                                ],
                                "properties": {
                                    "move": {
                                        "type": "object",
                                        "additionalProperties": false,
                                        "required": [
                                            "service",
                                            "to"
                                        ],
                                        "properties": {
                                            "service": {
                                                "type": "string"
                                            },
                                            "to": {
                                                "type": "string"
                                            }
                                        }
                                    }
                                }
                            },
                            {
                                "type": "object",
                                "title": "evacuate",
                                "additionalProperties": false,
                                "required": [
                                    "evacuate"
                                ],
                                "properties": {
                                    "evacuate": {
                                        "description": "A cluster id.",
                                        "type": "string"
                                    }
                                }
                            }
                        ]
                    }
                }
            }
        }),
    )]
}

/// Decider runs and advice snapshots as stored.
fn runs_and_snapshots() -> Vec<(&'static str, Value)> {
    vec![
        (
            "DeciderRun",
            json!({
                "description": "One stored run of an external decider on an estate.",
                "type": "object",
                "additionalProperties": false,
                "required": [
                    "id",
                    "estate",
                    "decider",
                    "estate_version",
                    "content_digest",
                    "policy_digest",
                    "outcome",
                    "started_by",
                    "started_at",
                    "run_time_ms",
                    "entry"
                ],
                "properties": {
                    "id": {
                        "type": "integer"
                    },
                    "estate": {
                        "description": "The estate id.",
                        "type": "string"
                    },
                    "decider": {
                        "description": "The decider's name.",
                        "type": "string"
                    },
                    "estate_version": {
                        "description": "The estate version the decider was sent.",
                        "type": "integer",
                        "minimum": 1
                    },
                    "content_digest": {
                        "type": "string"
                    },
                    "policy_digest": {
                        "type": "string"
                    },
                    "outcome": {
                        "description": "`ok`: a `2xx` reply that parsed (single proposals may still be refused; see `entry`). `deferred`: the decider answered `429` or `503`, asking to be called later. `failed`: anything else (see `entry.error`).",
                        "type": "string",
                        "enum": [
                            "ok",
                            "deferred",
                            "failed"
                        ]
                    },
                    "started_by": {
                        "description": "`driver`, or the subject who asked (a user name or `token:<id>`).",
                        "type": "string"
                    },
                    "started_at": {
                        "description": "When the run was made (wall clock; also the timestamp its signatures carry). The driver counts a decider's interval from the newest successful run.",
                        "$ref": "#/components/schemas/Timestamp"
                    },
                    "run_time_ms": {
                        "description": "Wall time of the call, milliseconds, rounded (0 when no call was made).",
                        "type": "integer",
                        "minimum": 0
                    },
                    "entry": {
                        "$ref": "#/components/schemas/DeciderEntry"
                    }
                }
            }),
        ),
        (
            "AdviceSnapshot",
            json!({
                "description": "The advice the driver computed for one estate version and policy.",
                "type": "object",
                "additionalProperties": false,
                "required": [
                    "id",
                    "estate",
                    "estate_version",
                    "content_digest",
                    "policy_digest",
                    "evaluated_at",
                    "moves",
                    "result"
                ],
                "properties": {
                    "id": {
                        "type": "integer"
                    },
                    "estate": {
                        "description": "The estate id.",
                        "type": "string"
                    },
                    "estate_version": {
                        "type": "integer",
                        "minimum": 1
                    },
                    "content_digest": {
                        "type": "string"
                    },
                    "policy_digest": {
                        "type": "string"
                    },
                    "evaluated_at": {
                        "description": "The evaluation time of the advice.",
                        "$ref": "#/components/schemas/Timestamp"
                    },
                    "moves": {
                        "description": "How many moves the advice recommends.",
                        "type": "integer",
                        "minimum": 0
                    },
                    "result": {
                        "description": "The advice, on the newest snapshot of the answer only; `null` on the others.",
                        "oneOf": [
                            {
                                "$ref": "#/components/schemas/Advice"
                            },
                            {
                                "type": "null"
                            }
                        ]
                    }
                }
            }),
        ),
    ]
}
