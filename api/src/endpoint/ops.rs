//! The endpoints of `server/src/http/ops.rs`.

endpoints! {
    group OPS;

    GET_HEALTH = getHealth, get_health():
        GET "/healthz", Public, "process is up" {
        tag: "health",
        answers: vec![
            (200, Answer::Json {
                description: "The process answers.",
                schema: Schema::Inline(json!({
                    "type": "object",
                    "required": [
                        "status"
                    ],
                    "properties": {
                        "status": {
                            "const": "ok"
                        }
                    }
                })),
                extra: Some(json!({
                    "example": {
                        "status": "ok"
                    }
                })),
            }),
            (400, Answer::Shared("BadAuthorizationHeader")),
            (401, Answer::Shared("UnknownBearerToken")),
        ],
        ..Default::default()
    }

    GET_READINESS = getReadiness, get_readiness():
        GET "/readyz", Public, "database reachable, migrated and taking writes" {
        tag: "health",
        answers: vec![
            (200, Answer::Json {
                description: "The database answers, its schema is migrated, and a small write (one row of `settings`) commits within 3 s.",
                schema: of::<Ready>(),
                extra: Some(json!({
                    "example": {
                        "status": "ready",
                        "database": "sqlite"
                    }
                })),
            }),
            (400, Answer::Shared("BadAuthorizationHeader")),
            (401, Answer::Shared("UnknownBearerToken")),
            (503, Answer::Json {
                description: "Not ready: the database is unreachable, not migrated, or does not take writes (a full disk, a read-only file, a held write lock, failing commits).",
                schema: Schema::Inline(json!({
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
                })),
                extra: Some(json!({
                    "example": {
                        "error": "unavailable",
                        "message": "not ready: the database is unreachable, not migrated, or does not take writes (the server log says which)",
                        "details": null
                    }
                })),
            }),
        ],
        ..Default::default()
    }

    /// Prometheus text exposition format 0.0.4: `berth_http_requests_total`
    /// and `berth_http_request_duration_seconds` by route template, method
    /// (and status), `berth_engine_run_seconds` and
    /// `berth_result_cache_total` by engine operation, and the database
    /// pool gauges `berth_db_pool_connections`,
    /// `berth_db_pool_idle_connections`, `berth_db_pool_max_connections`.
    /// Requests to no route, and requests refused before routing (an
    /// unknown bearer token, a malformed `Authorization` header), are not
    /// counted.
    GET_METRICS = getMetrics, get_metrics():
        GET "/metrics", Public, "Prometheus metrics" {
        tag: "health",
        answers: vec![
            (200, Answer::Raw(json!({
                "description": "The metrics.",
                "content": {
                    "text/plain; version=0.0.4; charset=utf-8": {
                        "schema": {
                            "type": "string"
                        },
                        "example": "# HELP berth_http_requests_total HTTP requests by route template, method and status.\n# TYPE berth_http_requests_total counter\nberth_http_requests_total{route=\"/api/estates\",method=\"GET\",status=\"200\"} 2\n"
                    }
                }
            }))),
            (400, Answer::Shared("BadAuthorizationHeader")),
            (401, Answer::Shared("UnknownBearerToken")),
        ],
        ..Default::default()
    }

    /// What an operator reads to see whether the estate's picture is complete and fresh: its
    /// agent tokens with when each was last heard from and what it sends (observation batches,
    /// a probe address, service re-syncs), the probe addresses by cluster, the estate's recent
    /// writes (uploads, Kubernetes imports with their notes, fact updates), every kind of fact
    /// counted by class at the evaluation time with the stale and unknown ones, the pairs of
    /// sites with no round trip, and how many services' traffic has been observed. The Health
    /// page shows it.
    GET_ESTATE_HEALTH = getEstateHealth, get_estate_health(id) ["now"]:
        GET "/api/estates/{id}/health", Viewer, "the estate's agents, recent writes, facts by kind and traffic coverage" {
        tag: "health",
        params: vec![
            Param::Shared("EstateId"),
            Param::Shared("Now"),
        ],
        answers: vec![
            (200, Answer::Json {
                description: "The estate's health.",
                schema: named("EstateHealth"),
                extra: None,
            }),
            (400, Answer::Shared("BadRequest")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoEstate")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }
}
