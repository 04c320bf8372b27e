//! The endpoints of `server/src/http/results.rs`.

endpoints! {
    group RESULTS;

    /// The estate document and policy exactly as stored, so that the engine in WebAssembly
    /// loads them and reaches the same digests and results as the server. Not cached.
    GET_SNAPSHOT = getSnapshot, get_snapshot(id):
        GET "/api/estates/{id}/snapshot", Viewer, "everything needed to run the engine in a browser" {
        tag: "estates",
        params: vec![
            Param::Shared("EstateId"),
        ],
        answers: vec![
            (200, Answer::Json {
                description: "The snapshot.",
                schema: of::<EstateSnapshot>(),
                extra: None,
            }),
            (400, Answer::Shared("BadAuthorizationHeader")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoEstate")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    /// The sequential recommender (`docs/advice.md` §6; `berth advise`), in the result
    /// envelope. With `why=true` the result also has `why`, one explanation per move
    /// (`docs/why.md`).
    GET_ADVICE = getAdvice, get_advice(id) ["now", "why"]:
        GET "/api/estates/{id}/advice", Viewer, "recommended moves" {
        tag: "engine",
        params: vec![
            Param::Shared("EstateId"),
            Param::Shared("Now"),
            Param::Shared("Why"),
        ],
        answers: vec![
            (200, Answer::Json {
                description: "The advice.",
                schema: envelope("Advice"),
                extra: None,
            }),
            (400, Answer::Shared("BadQuery")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoEstate")),
            (429, Answer::Shared("EngineRateLimited")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
            (507, Answer::Shared("ResultTooLarge")),
        ],
        ..Default::default()
    }

    /// A change plan (`docs/plans.md`; `berth plan export`): every recommended move, the
    /// recommended moves of `services`, or the moves of the saved scenario `scenario`, with
    /// each move's gain, confidence, deciding facts and their age, flip conditions, the totals
    /// before and after, the estate version and the policy digest. `format=json` (the default)
    /// is the plan in the result envelope; `markdown` is the plan for a pull request or a
    /// ticket; `karmada` and `ocm` are manifests for those controllers (multi-document YAML).
    /// Those three are the bytes alone, as an attachment. A manifest needs each moved service's
    /// workload and each cluster's name in the controller (`docs/estate-format.md`); a missing
    /// one is a 422 naming the service or cluster and the field.
    GET_PLAN = getPlan, get_plan(id) ["now", "format", "services", "scenario"]:
        GET "/api/estates/{id}/plan", Viewer, "a change plan: moves as JSON, Markdown or Karmada/OCM manifests" {
        tag: "engine",
        params: vec![
            Param::Shared("EstateId"),
            Param::Shared("Now"),
            Param::Inline(json!({
                "name": "format",
                "in": "query",
                "required": false,
                "description": "The form of the plan.",
                "schema": {
                    "type": "string",
                    "enum": [
                        "json",
                        "markdown",
                        "karmada",
                        "ocm"
                    ],
                    "default": "json"
                }
            })),
            Param::Inline(json!({
                "name": "services",
                "in": "query",
                "required": false,
                "description": "Service ids, comma-separated; their recommended moves only. Not with `scenario`.",
                "schema": {
                    "type": "string"
                },
                "example": "cart,session-store"
            })),
            Param::Inline(json!({
                "name": "scenario",
                "in": "query",
                "required": false,
                "description": "The name of a saved scenario of the estate; its moves. Not with `services`.",
                "schema": {
                    "type": "string"
                }
            })),
        ],
        answers: vec![
            (200, Answer::Raw(json!({
                "description": "The plan.",
                "content": {
                    "application/json": {
                        "schema": {
                            "allOf": [
                                {
                                    "$ref": "#/components/schemas/ResultEnvelope"
                                },
                                {
                                    "properties": {
                                        "result": {
                                            "$ref": "#/components/schemas/Plan"
                                        }
                                    }
                                }
                            ]
                        }
                    },
                    "text/markdown": {
                        "schema": {
                            "type": "string"
                        }
                    },
                    "application/yaml": {
                        "schema": {
                            "type": "string"
                        }
                    }
                }
            }))),
            (400, Answer::Shared("BadQuery")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoEstate")),
            (422, Answer::Json {
                description: "The plan cannot be written: a service named that is unknown or has no recommended move, a saved scenario that no longer fits the estate, or a name a manifest needs that the estate lacks. Each error's message starts with the input it is about (`services:`, `scenario:`, `estate:`).",
                schema: named("InvalidError"),
                extra: None,
            }),
            (429, Answer::Shared("EngineRateLimited")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
            (507, Answer::Shared("ResultTooLarge")),
        ],
        ..Default::default()
    }

    /// The decider request, schema 1 (`docs/deciders.md`; `berth preview`), in the result
    /// envelope. `why` is accepted and ignored.
    GET_DECIDER_REQUEST = getDeciderRequest, get_decider_request(id) ["now"]:
        GET "/api/estates/{id}/preview", Viewer, "the decider request this estate generates" {
        tag: "engine",
        params: vec![
            Param::Shared("EstateId"),
            Param::Shared("Now"),
        ],
        answers: vec![
            (200, Answer::Json {
                description: "The decider request.",
                schema: envelope("DeciderRequest"),
                extra: None,
            }),
            (400, Answer::Shared("BadQuery")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoEstate")),
            (429, Answer::Shared("EngineRateLimited")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
            (507, Answer::Shared("ResultTooLarge")),
        ],
        ..Default::default()
    }

    /// The single-service placement scorer (`docs/placement.md`; `berth place`): every cluster
    /// ranked for the service, every term shown, in the result envelope. `why` is accepted and
    /// ignored.
    PLACE_SERVICE = placeService, place_service(id, service) ["now"]:
        GET "/api/estates/{id}/place/{service}", Viewer, "rank clusters for one service" {
        tag: "engine",
        params: vec![
            Param::Shared("EstateId"),
            Param::Inline(json!({
                "name": "service",
                "in": "path",
                "required": true,
                "description": "A service id of the estate (case-sensitive).",
                "schema": {
                    "type": "string"
                },
                "example": "checkout"
            })),
            Param::Shared("Now"),
        ],
        answers: vec![
            (200, Answer::Json {
                description: "The placement.",
                schema: envelope("Placement"),
                extra: None,
            }),
            (400, Answer::Shared("BadQuery")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Json {
                description: "No such estate, or no such service in it.",
                schema: named("NotFoundError"),
                extra: None,
            }),
            (429, Answer::Shared("EngineRateLimited")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
            (507, Answer::Shared("ResultTooLarge")),
        ],
        ..Default::default()
    }

    /// Projects the scenario in the body (`docs/scenario-format.md`; `berth whatif`) on the
    /// estate as it is: before and after, warnings, evacuations and capacity sensitivity, in
    /// the result envelope. Nothing is changed or saved. `why` is accepted and ignored.
    PROJECT_SCENARIO = projectScenario, project_scenario(id) ["now"]:
        POST "/api/estates/{id}/whatif", Operator, "project a what-if scenario" {
        tag: "engine",
        params: vec![
            Param::Shared("EstateId"),
            Param::Shared("Now"),
        ],
        body: Some(Body::Shared("Scenario")),
        answers: vec![
            (200, Answer::Json {
                description: "The projection.",
                schema: envelope("Projection"),
                extra: None,
            }),
            (400, Answer::Shared("BadQuery")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoEstate")),
            (413, Answer::Shared("TooLarge")),
            (422, Answer::Shared("InvalidScenario")),
            (429, Answer::Shared("EngineRateLimited")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
            (507, Answer::Shared("ResultTooLarge")),
        ],
        ..Default::default()
    }

    /// Runs the built-in deciders (`baseline`, `heaviest-talker`, and the reference deciders
    /// `optimum`, `optimum-capped`, `local-search`) and scores each uploaded reply on equal
    /// footing (`docs/deciders.md`; `berth compare`), in the result envelope. An empty body (or
    /// only white space) compares the built-ins alone. A reply that is malformed or over a
    /// decider limit becomes that decider's `error` entry; the request still succeeds. `why` is
    /// accepted and ignored. With `external`, the registered deciders named there are called
    /// now (as `POST /api/estates/{id}/deciders/{name}/runs` would, each call stored as a run)
    /// and scored with the rest; their entries carry the call's `run_time_ms`, and a call that
    /// fails is that decider's `error` entry (codes in `DeciderEntry`). Such a comparison is
    /// not cached. If the estate or its policy changed while the deciders ran, the answer is
    /// `409` (the runs are stored all the same); compare again.
    COMPARE_DECIDERS = compareDeciders, compare_deciders(id) ["now"]:
        POST "/api/estates/{id}/compare", Operator, "compare the built-in deciders and uploaded replies" {
        tag: "engine",
        params: vec![
            Param::Shared("EstateId"),
            Param::Shared("Now"),
        ],
        body: Some(Body::Json {
            required: false,
            description: None,
            schema: of::<CompareRequest>(),
            extra: Some(json!({
                "examples": {
                    "uploaded": {
                        "summary": "Score an uploaded reply",
                        "value": {
                            "responses": {
                                "ops-team": {
                                    "proposals": [
                                        {
                                            "serviceId": "cart",
                                            "to": "c-fra-2",
                                            "reason": "next to checkout"
                                        }
                                    ]
                                }
                            }
                        }
                    },
                    // Named so that it sorts after "uploaded" (json! sorts
                    // keys): the first example is the one that runs
                    // without a registered decider.
                    "uploaded-and-live": {
                        "summary": "Call a registered decider now, beside an uploaded reply",
                        "value": {
                            "external": [
                                "ranker"
                            ],
                            "responses": {
                                "ops-team": {
                                    "proposals": [
                                        {
                                            "serviceId": "cart",
                                            "to": "c-fra-2",
                                            "reason": "next to checkout"
                                        }
                                    ]
                                }
                            }
                        }
                    }
                }
            })),
        }),
        answers: vec![
            (200, Answer::Json {
                description: "The comparison.",
                schema: envelope("Comparison"),
                extra: None,
            }),
            (400, Answer::Raw(json!({
                "description": "Bad `now` or query string, a body that is not JSON or not of the shape `{responses, external}`, a reply named after a built-in decider or a name not of 1 to 64 characters, a name in `external` that is not registered, named twice or also under `responses`, more than 16 names in `external`, or a malformed `Authorization` header.",
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
            }))),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoEstate")),
            (409, Answer::Json {
                description: "Only with `external`: the estate or its policy changed while the registered deciders ran, so their replies and the estate no longer match; compare again. (Their runs are stored.)",
                schema: named("ConflictError"),
                extra: Some(json!({
                    "example": {
                        "error": "conflict",
                        "message": "estate \"sample\" changed while the deciders ran; compare again",
                        "details": null
                    }
                })),
            }),
            (413, Answer::Shared("TooLarge")),
            (429, Answer::Shared("EngineRateLimited")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
            (507, Answer::Shared("ResultTooLarge")),
        ],
        ..Default::default()
    }

    /// Runs every built-in decider over a suite and scores them as `berth bench-deciders` does
    /// (docs/quality.md, "The decider benchmark"), from the same engine code: the generated
    /// estates of the default suite (`suite=default`, 88 estates, ten seconds or so on two
    /// cores) or one or two of each family (`suite=quick`, the default, 13 estates, seconds),
    /// evaluated at the generator's time, then this estate at `now`, all under this estate's
    /// policy. Each decider's share of each case's reference (the best any decider reached, the
    /// proven optimum where `optimum` proved it) and of the proven lower bound, its refusals by
    /// code and its run times. Cached like the other results (by estate version, policy, `now`
    /// and suite), and one computation at a time per server: while one runs, another that is
    /// not cached is answered `409`. The generated cases are always evaluated at the
    /// generator's time, so they match `berth bench-deciders` run without `--now`. The body is
    /// ignored.
    DECIDER_LEADERBOARD = deciderLeaderboard, decider_leaderboard(id) ["now", "suite"]:
        POST "/api/estates/{id}/leaderboard", Operator, "the decider leaderboard over generated estates and this one" {
        tag: "engine",
        params: vec![
            Param::Shared("EstateId"),
            Param::Shared("Now"),
            Param::Inline(json!({
                "name": "suite",
                "in": "query",
                "required": false,
                "description": "`quick` (the default) or `default`.",
                "schema": {
                    "type": "string",
                    "enum": [
                        "quick",
                        "default"
                    ]
                },
                "example": "quick"
            })),
        ],
        answers: vec![
            (200, Answer::Json {
                description: "The leaderboard.",
                schema: envelope("Leaderboard"),
                extra: None,
            }),
            (400, Answer::Raw(json!({
                "description": "Bad `now`, a `suite` other than `quick` or `default`, or a malformed `Authorization` header.",
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
            }))),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoEstate")),
            (409, Answer::Json {
                description: "Another leaderboard is being computed on this server; ask again when it is done.",
                schema: named("ConflictError"),
                extra: None,
            }),
            (413, Answer::Shared("TooLarge")),
            (429, Answer::Shared("EngineRateLimited")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
            (507, Answer::Shared("ResultTooLarge")),
        ],
        example_query: Some("now=2026-11-30T04:05:00Z&suite=quick"),
        ..Default::default()
    }
}
