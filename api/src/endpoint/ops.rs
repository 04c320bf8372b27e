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
}
