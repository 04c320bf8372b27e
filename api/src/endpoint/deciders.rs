//! The endpoints of `server/src/http/deciders.rs`.

endpoints! {
    group DECIDERS;

    /// The stored runs of this decider on this estate, newest first (by `started_at`, then by
    /// `id`): runs asked for by a person (`POST …/runs`, or `external` in a comparison) and
    /// runs made by the advice driver. Each carries the estate version, content and policy
    /// digests it ran against, its outcome, and the decider's comparison entry. The name is not
    /// checked against the registered deciders: a decider deleted since keeps its history here,
    /// and a name that never ran gives an empty list.
    LIST_DECIDER_RUNS = listDeciderRuns, list_decider_runs(id, name) ["limit"]:
        GET "/api/estates/{id}/deciders/{name}/runs", Viewer, "history of an external decider's runs on the estate" {
        tag: "deciders",
        params: vec![
            Param::Shared("EstateId"),
            Param::Shared("DeciderName"),
            Param::Shared("HistoryLimit"),
        ],
        answers: vec![
            (200, Answer::Json {
                description: "The runs, newest first.",
                schema: Schema::Inline(json!({
                    "type": "object",
                    "additionalProperties": false,
                    "required": [
                        "runs"
                    ],
                    "properties": {
                        "runs": {
                            "type": "array",
                            "maxItems": 200,
                            "items": {
                                "$ref": "#/components/schemas/DeciderRun"
                            }
                        }
                    }
                })),
                extra: None,
            }),
            (400, Answer::Shared("BadHistoryQuery")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoEstate")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    /// Builds the schema-1 decider request for the estate as it is (the same bytes `GET
    /// /api/estates/{id}/preview` shows, at the same `now`), sends it to the decider's stored
    /// URL — signed when the decider has a secret — and scores the reply like every other
    /// decider (`docs/deciders.md`). The run is stored (see the `GET` of this path) and
    /// returned. A decider that cannot be reached, times out, answers with an error status or a
    /// malformed body, or is disabled still makes a run: its outcome is `deferred` (it answered
    /// `429` or `503`) or `failed`, and its entry carries `error`. So the answer is `200`
    /// whatever the decider did. Not cached. No body, or an empty object: nothing in the
    /// request can steer the call, so a field (`url`, say) is refused with `400` naming it, as
    /// is a body that is not an object; `now` sets the evaluation time as for the engine
    /// routes.
    RUN_DECIDER = runDecider, run_decider(id, name) ["now"]:
        POST "/api/estates/{id}/deciders/{name}/runs", Operator, "run an external decider on the estate now" {
        tag: "deciders",
        params: vec![
            Param::Shared("EstateId"),
            Param::Shared("DeciderName"),
            Param::Shared("Now"),
        ],
        body: Some(Body::Json {
            required: false,
            description: Some("None, or `{}`."),
            schema: Schema::Inline(json!({
                "type": "object",
                "additionalProperties": false,
                "maxProperties": 0
            })),
            extra: Some(json!({
                "example": {}
            })),
        }),
        answers: vec![
            (200, Answer::Json {
                description: "The run just made.",
                schema: Schema::Inline(json!({
                    "type": "object",
                    "additionalProperties": false,
                    "required": [
                        "estate",
                        "version",
                        "content_digest",
                        "policy_digest",
                        "run"
                    ],
                    "properties": {
                        "estate": {
                            "description": "The estate id.",
                            "type": "string"
                        },
                        "version": {
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
                        "run": {
                            "$ref": "#/components/schemas/DeciderRun"
                        }
                    }
                })),
                extra: None,
            }),
            (400, Answer::Raw(json!({
                "description": "A body field (named in the message), a body that is not an object or not JSON, or `now` not an RFC 3339 time (JSON error envelope); or the query string does not deserialise — an unknown parameter — which the framework refuses with a `text/plain` body.",
                "content": {
                    "application/json": {
                        "schema": {
                            "$ref": "#/components/schemas/BadRequestError"
                        },
                        "example": {
                            "error": "bad_request",
                            "message": "run: unknown field `url`: a run takes no body fields; the decider is called at its registered URL, and `now` is a query parameter",
                            "details": null
                        }
                    },
                    "text/plain": {
                        "schema": {
                            "type": "string"
                        }
                    }
                }
            }))),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Json {
                description: "No estate with this id, or no decider of this name is registered.",
                schema: named("NotFoundError"),
                extra: Some(json!({
                    "example": {
                        "error": "not_found",
                        "message": "no decider \"ranker\" is registered",
                        "details": null
                    }
                })),
            }),
            (429, Answer::Shared("EngineRateLimited")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    /// The advice the driver computed for the estate each time its version or policy changed,
    /// newest first (by `evaluated_at`, then by `id`). Only the newest snapshot carries its
    /// full `result` (the advice, as `GET /api/estates/{id}/advice` without `why` would give it
    /// at `evaluated_at`); older ones have `result: null` and keep their move count, to keep
    /// the answer small. Empty until the driver has passed over the estate (a server started
    /// with `--no-driver` makes none; another replica's passes count).
    LIST_ADVICE_SNAPSHOTS = listAdviceSnapshots, list_advice_snapshots(id) ["limit"]:
        GET "/api/estates/{id}/advice-snapshots", Viewer, "the advice driver's snapshots of the estate's advice" {
        tag: "driver",
        params: vec![
            Param::Shared("EstateId"),
            Param::Shared("HistoryLimit"),
        ],
        answers: vec![
            (200, Answer::Json {
                description: "The snapshots, newest first.",
                schema: Schema::Inline(json!({
                    "type": "object",
                    "additionalProperties": false,
                    "required": [
                        "snapshots"
                    ],
                    "properties": {
                        "snapshots": {
                            "type": "array",
                            "maxItems": 200,
                            "items": {
                                "$ref": "#/components/schemas/AdviceSnapshot"
                            }
                        }
                    }
                })),
                extra: None,
            }),
            (400, Answer::Shared("BadHistoryQuery")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoEstate")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    /// The estate's newest advice snapshots (`GET /api/estates/{id}/advice-snapshots`) read
    /// back as a series, oldest first: the cost and cross-site MB/s as the estate stood, and
    /// how many recommendations the advice made; and, between the two newest, the
    /// recommendations that appeared, disappeared, or stayed with changed deciding facts
    /// (`docs/history.md`). The bytes are the engine's (`berth_engine::front::history`).
    /// Snapshots older than the server's `--history-retention-days` are pruned by the driver,
    /// each estate's newest always kept.
    GET_ADVICE_HISTORY = getAdviceHistory, get_advice_history(id) ["limit"]:
        GET "/api/estates/{id}/history", Viewer, "cost, cross-site traffic and open recommendations over the snapshots, and what changed since the last" {
        tag: "driver",
        params: vec![
            Param::Shared("EstateId"),
            Param::Inline(json!({
                "name": "limit",
                "in": "query",
                "required": false,
                "description": "How many of the newest snapshots the series covers (2–500).",
                "schema": {
                    "type": "integer",
                    "minimum": 2,
                    "maximum": 500,
                    "default": 100
                },
                "example": 100
            })),
        ],
        answers: vec![
            (200, Answer::Json {
                description: "The series and the latest change.",
                schema: named("AdviceHistory"),
                extra: None,
            }),
            (400, Answer::Json {
                description: "`limit` is not an integer from 2 to 500, the query string has another parameter, or the `Authorization` header is malformed.",
                schema: named("BadRequestError"),
                extra: None,
            }),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoEstate")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    /// Every registered decider, by name. Secrets are never shown, only their fingerprints. A
    /// token scoped to one estate is refused (`403`), as for every path outside its estate.
    LIST_DECIDERS = listDeciders, list_deciders():
        GET "/api/deciders", Viewer, "list registered external deciders" {
        tag: "deciders",
        answers: vec![
            (200, Answer::Json {
                description: "The deciders.",
                schema: of::<DeciderList>(),
                extra: None,
            }),
            (400, Answer::Shared("BadAuthorizationHeader")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    /// Registers a decider (administrators only). Every field is checked and every error
    /// reported at once (`422`, nothing written); see `NewDecider` for the rules. With
    /// `generate_secret: true` Berth generates a secret (`whsec_` and base64, the Standard
    /// Webhooks form), seals it at rest under the server's secret key, and returns it in
    /// `secret` — this once only; afterwards only its `secret_fingerprint` is shown. Every call
    /// to the decider is then signed with it. A decider without a secret is called unsigned;
    /// one can be added later with `POST /api/deciders/{name}/secret`.
    REGISTER_DECIDER = registerDecider, register_decider():
        POST "/api/deciders", Admin, "register an external decider" {
        tag: "deciders",
        body: Some(Body::Json {
            required: true,
            description: None,
            schema: of::<NewDecider>(),
            extra: Some(json!({
                "example": {
                    "name": "ranker",
                    "url": "https://ranker.example.com/berth/decide",
                    "timeout_ms": 5000,
                    "enabled": true,
                    "interval_s": 3600,
                    "generate_secret": true
                }
            })),
        }),
        answers: vec![
            (201, Answer::Json {
                description: "Registered.",
                schema: of::<DeciderWithSecret>(),
                extra: None,
            }),
            (400, Answer::Json {
                description: "The body is not JSON, has an unknown field, lacks `url` or `timeout_ms`, or has a value of the wrong type (for a JSON syntax error `details` gives `{line, column}`); or a malformed `Authorization` header.",
                schema: named("BadRequestError"),
                extra: None,
            }),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (409, Answer::Json {
                description: "A decider of this name is already registered (edit it with `PUT /api/deciders/{name}`); or `generate_secret` is `true` and the server has no secret key to seal it with (see `NoSecretKey`). Nothing was written.",
                schema: named("ConflictError"),
                extra: Some(json!({
                    "example": {
                        "error": "conflict",
                        "message": "a decider named \"ranker\" is already registered; edit it with PUT /api/deciders/ranker",
                        "details": null
                    }
                })),
            }),
            (413, Answer::Shared("TooLarge")),
            (422, Answer::Shared("InvalidDecider")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    GET_DECIDER = getDecider, get_decider(name):
        GET "/api/deciders/{name}", Viewer, "a registered external decider" {
        tag: "deciders",
        params: vec![
            Param::Shared("DeciderName"),
        ],
        answers: vec![
            (200, Answer::Json {
                description: "The decider (its secret's fingerprint, never the secret).",
                schema: of::<DeciderAnswer>(),
                extra: None,
            }),
            (400, Answer::Shared("BadAuthorizationHeader")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoDecider")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    /// Replaces the decider's settings (administrators only): `url` and `timeout_ms` are
    /// required, an omitted `enabled` is `true` and an omitted `interval_s` is `null`, so send
    /// all four to keep what you do not mean to change. The rules are those of registration,
    /// and every error is reported at once (`422`, nothing written). A decider cannot be
    /// renamed (`name`, if given, must be the one in the path) and its secret is not changed
    /// here (`generate_secret` must be absent or `false`; use `POST
    /// /api/deciders/{name}/secret`). Its runs are kept.
    UPDATE_DECIDER = updateDecider, update_decider(name):
        PUT "/api/deciders/{name}", Admin, "change a decider's URL, timeout, interval or enabled flag" {
        tag: "deciders",
        params: vec![
            Param::Shared("DeciderName"),
        ],
        body: Some(Body::Json {
            required: true,
            description: None,
            schema: of::<DeciderSettings>(),
            extra: Some(json!({
                "example": {
                    "url": "https://ranker.example.com/berth/decide",
                    "timeout_ms": 10000,
                    "enabled": true,
                    "interval_s": 1800
                }
            })),
        }),
        answers: vec![
            (200, Answer::Json {
                description: "The decider as it is now.",
                schema: of::<DeciderAnswer>(),
                extra: None,
            }),
            (400, Answer::Json {
                description: "The body is not JSON, has an unknown field, lacks `url` or `timeout_ms`, or has a value of the wrong type; or a malformed `Authorization` header.",
                schema: named("BadRequestError"),
                extra: None,
            }),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoDecider")),
            (413, Answer::Shared("TooLarge")),
            (422, Answer::Shared("InvalidDecider")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    /// Deletes the decider and its sealed secrets (administrators only). Its stored runs stay
    /// in each estate's history (`GET /api/estates/{id}/deciders/{name}/runs`); the driver
    /// stops calling it, and its backoff entries are pruned at the next pass.
    DELETE_DECIDER = deleteDecider, delete_decider(name):
        DELETE "/api/deciders/{name}", Admin, "delete a decider" {
        tag: "deciders",
        params: vec![
            Param::Shared("DeciderName"),
        ],
        answers: vec![
            (204, Answer::Empty("Deleted.")),
            (400, Answer::Shared("BadAuthorizationHeader")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoDecider")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    /// Generates a new secret for the decider (administrators only) and returns it in `secret`
    /// — this once only. If the decider had a secret, that one becomes the previous secret and
    /// keeps being sent beside the new one (a second signature on every call) for `overlap_s`
    /// seconds, until `previous_secret_expires_at`, so the decider's owner can deploy the new
    /// secret without a gap. Only one previous secret is kept: rotating again during an overlap
    /// drops the older one. With `overlap_s: 0`, or when the decider had no secret, there is no
    /// previous secret. The body is optional: empty (or only white space) means the default
    /// overlap of a day.
    ROTATE_DECIDER_SECRET = rotateDeciderSecret, rotate_decider_secret(name):
        POST "/api/deciders/{name}/secret", Admin, "generate or rotate a decider's secret (shown once)" {
        tag: "deciders",
        params: vec![
            Param::Shared("DeciderName"),
        ],
        body: Some(Body::Json {
            required: false,
            description: None,
            schema: of::<SecretRotation>(),
            extra: Some(json!({
                "example": {
                    "overlap_s": 86400
                }
            })),
        }),
        answers: vec![
            (200, Answer::Json {
                description: "The new secret and the decider as it is now.",
                schema: of::<DeciderWithSecret>(),
                extra: None,
            }),
            (400, Answer::Shared("BadRequest")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoDecider")),
            (409, Answer::Shared("NoSecretKey")),
            (413, Answer::Shared("TooLarge")),
            (422, Answer::Json {
                description: "`overlap_s` is not from 0 to 604800 (a week); nothing was written. (Checked before the decider is looked up.)",
                schema: named("InvalidError"),
                extra: Some(json!({
                    "example": {
                        "error": "invalid",
                        "message": "invalid decider: 1 error; nothing was written",
                        "details": {
                            "errors": [
                                {
                                    "path": "/overlap_s",
                                    "line": null,
                                    "message": "-5 s: the overlap must be from 0 to 604800 s (a week)"
                                }
                            ]
                        }
                    }
                })),
            }),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    /// Removes the decider's secret and any previous secret still in its overlap
    /// (administrators only). Calls to it go out unsigned from now on. Answers `204` also when
    /// it had no secret.
    REMOVE_DECIDER_SECRET = removeDeciderSecret, remove_decider_secret(name):
        DELETE "/api/deciders/{name}/secret", Admin, "remove a decider's secret" {
        tag: "deciders",
        params: vec![
            Param::Shared("DeciderName"),
        ],
        answers: vec![
            (204, Answer::Empty("Removed.")),
            (400, Answer::Shared("BadAuthorizationHeader")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoDecider")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    /// How the advice driver is doing (SPEC §11). The driver is a background task that, every
    /// `every_s` seconds, evaluates the stale subjects — `estate:ID` (the estate's version or
    /// policy changed since its newest advice snapshot) and `decider:NAME@ID` (an enabled
    /// decider with an `interval_s` whose newest successful run on that estate is older than
    /// that) — oldest first, a bounded batch per pass. A decider answering `429` or `503`
    /// counts as deferred, any other failure as failed; both are backed off per subject, the
    /// delay doubling from 30 s up to an hour (longer if the decider's `Retry-After` asks, up
    /// to the same hour). Passes, snapshots, runs and backoffs are kept in the database, so on
    /// PostgreSQL every replica reports the same state, whichever ran the pass (exactly one
    /// runs at a time). A token scoped to one estate is refused (`403`).
    GET_DRIVER_HEALTH = getDriverHealth, get_driver_health():
        GET "/api/driver", Viewer, "the advice driver's health" {
        tag: "driver",
        answers: vec![
            (200, Answer::Json {
                description: "The driver's health.",
                schema: of::<DriverHealth>(),
                extra: None,
            }),
            (400, Answer::Shared("BadAuthorizationHeader")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }
}
