//! The endpoints of `server/src/http/facts.rs`.

endpoints! {
    group FACTS;

    /// Free capacity, RTT, flow weight and MB/s, each with its confidence
    /// class, source and observation time (`server/src/facts.rs`). The
    /// batch is all or nothing: it is checked whole (every refused update
    /// named by its JSON pointer), applied to the estate file, checked
    /// again by the estate loader, and stored as a new version. The estate
    /// is held from the read to the write (a row lock on PostgreSQL), so
    /// concurrent batches — from any replica — are applied one after the
    /// other and none is lost. An RTT between two sites sets the link,
    /// between two clusters the path; a flow not yet in the estate is
    /// added (its other figure unknown). An `observed_at` more than 5
    /// minutes (300 s) ahead of the server's clock is refused (`422` at
    /// `/updates/N/observed_at`, the message naming the server's time):
    /// a fact dated in the future would not age until then.
    UPDATE_FACTS = updateFacts, update_facts(id):
        POST "/api/estates/{id}/facts", Operator, "update individual facts" {
        tag: "estates",
        params: vec![
            Param::Shared("EstateId"),
        ],
        body: Some(Body::Json {
            required: true,
            description: None,
            schema: of::<FactBatch>(),
            extra: Some(json!({
                "example": {
                    "updates": [
                        {
                            "fact": "cpu_free",
                            "cluster": "c-fra-1",
                            "value": 6,
                            "class": "measured",
                            "source": "agent:c-fra-1",
                            "observed_at": "2026-11-30T04:10:00Z"
                        },
                        {
                            "fact": "rtt_ms",
                            "a": "fra",
                            "b": "par",
                            "value": 9.5,
                            "class": "measured"
                        },
                        {
                            "fact": "flow_weight",
                            "from": "shop-gateway",
                            "to": "shop-frontend",
                            "value": 15,
                            "class": "reported"
                        }
                    ]
                }
            })),
        }),
        answers: vec![
            (200, Answer::Json {
                description: "Applied.",
                schema: Schema::Inline(json!({
                    "type": "object",
                    "required": [
                        "estate",
                        "version",
                        "content_digest",
                        "applied"
                    ],
                    "properties": {
                        "estate": {
                            "type": "string",
                            "description": "The estate id."
                        },
                        "version": {
                            "type": "integer",
                            "description": "The estate's new version."
                        },
                        "content_digest": {
                            "type": "string"
                        },
                        "applied": {
                            "type": "integer",
                            "minimum": 0,
                            "description": "How many updates the batch held."
                        }
                    }
                })),
                extra: None,
            }),
            (400, Answer::Shared("BadRequest")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoEstate")),
            (409, Answer::Shared("KeptChanging")),
            (413, Answer::Shared("TooLarge")),
            (422, Answer::Json {
                description: "Refused updates (`errors[]` of `{path, line, message}`, `path` a JSON pointer into the batch such as `/updates/3/cluster`, `line` null), or, rarely, an estate the loader then refuses (paths and lines into the estate file). Nothing was applied.",
                schema: named("InvalidError"),
                extra: Some(json!({
                    "example": {
                        "error": "invalid",
                        "message": "1 fact update refused; nothing was applied",
                        "details": {
                            "errors": [
                                {
                                    "path": "/updates/0/cluster",
                                    "line": null,
                                    "message": "no cluster \"c-fra-9\" in this estate"
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

    /// For measuring agents (docs/observations.md): an `agent` token scoped
    /// to the estate, or an operator or admin. The items are the fact
    /// updates of `POST /api/estates/{id}/facts`, except that `class`
    /// defaults to `measured`, `observed_at` is required (a fact must be
    /// able to age) and may be at most 5 minutes (300 s) ahead of the
    /// server's clock (`422` at `/observations/N/observed_at`, naming the
    /// server's time), and the `source` recorded is always the sender —
    /// `token:<id> (<token name>)`, or `user:<name>` for a person signed
    /// in — whatever the item says (an item's `source` is ignored). A
    /// batch is applied whole or not at all, exactly once per `batch_id`
    /// and sender: a retry with the same id and the same body from the
    /// same token answers `duplicate: true` and changes nothing; the same
    /// id with another body from the same token is `409`; another token's
    /// batch of the same id is its own (ids never collide across tokens).
    /// Each token
    /// may post 30 batches at once, then one every 2 s (`429` with
    /// `Retry-After` beyond). With `cluster`, a batch for a cluster the
    /// estate lacks creates it first (enrolled at receipt; `403` unless the
    /// token has `may_create_clusters` or the caller is an operator or
    /// admin; `422` at `/cluster/...` when the estate cannot take it); when
    /// the cluster exists the record is ignored.
    POST_OBSERVATIONS = postObservations, post_observations(id):
        POST "/api/estates/{id}/observations", Observe, "post a batch of measured facts (agents)" {
        tag: "estates",
        params: vec![
            Param::Shared("EstateId"),
        ],
        body: Some(Body::Json {
            required: true,
            description: None,
            schema: of::<ObservationBatch>(),
            extra: Some(json!({
                "example": {
                    "batch_id": "c-fra-1/2026-11-30T04:10:00Z",
                    "observations": [
                        {
                            "fact": "cpu_free",
                            "cluster": "c-fra-1",
                            "value": 6,
                            "observed_at": "2026-11-30T04:10:00Z"
                        },
                        {
                            "fact": "flow_weight",
                            "from": "shop-gateway",
                            "to": "shop-frontend",
                            "value": 14.2,
                            "observed_at": "2026-11-30T04:09:30Z"
                        }
                    ]
                }
            })),
        }),
        answers: vec![
            (200, Answer::Json {
                description: "Applied now, or earlier (`duplicate`).",
                schema: of::<ObservationAnswer>(),
                extra: None,
            }),
            (400, Answer::Shared("BadRequest")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoEstate")),
            (409, Answer::Json {
                description: "This token (or user) already used the batch id for a different batch.",
                schema: of::<ErrorBody>(),
                extra: None,
            }),
            (413, Answer::Shared("TooLarge")),
            (422, Answer::Json {
                description: "Refused observations, each `{path, line: null, message}` with `path` into the batch (`/observations/3/to`, `/batch_id`), among them an `observed_at` more than 5 minutes ahead of the server's clock (the message names the server's time). Nothing was applied.",
                schema: named("InvalidError"),
                extra: None,
            }),
            (429, Answer::Raw(json!({
                "description": "This token posts too often; retry after `Retry-After` seconds.",
                "headers": {
                    "Retry-After": {
                        "schema": {
                            "type": "integer"
                        }
                    }
                },
                "content": {
                    "application/json": {
                        "schema": {
                            "$ref": "#/components/schemas/Error"
                        }
                    }
                }
            }))),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    /// Manifests or `kubectl get … -o yaml|json` output describing what
    /// runs in one cluster of the estate (docs/kubernetes-import.md):
    /// workloads become services (requests, persistent data, local
    /// volumes, pinning), environment variables naming other services
    /// become guessed flows. A re-import updates the cluster's imported
    /// services in place and reports what was added, changed and removed;
    /// one that changes nothing writes nothing (the version stays). Send
    /// every manifest of the cluster in one request: services of an
    /// earlier import that are missing from this one are removed.
    /// Operators and administrators may import; an agent token only when
    /// it was created with `may_sync_services` (`berth agent
    /// --kubernetes`), else `403`.
    IMPORT_KUBERNETES = importKubernetes, import_kubernetes(id):
        POST "/api/estates/{id}/import/kubernetes", Observe, "import Kubernetes manifests into one cluster of the estate" {
        tag: "estates",
        params: vec![
            Param::Shared("EstateId"),
        ],
        body: Some(Body::Json {
            required: true,
            description: None,
            schema: of::<KubernetesImportRequest>(),
            extra: Some(json!({
                "example": {
                    "cluster": "c-fra-3",
                    "files": [
                        {
                            "name": "cart.yaml",
                            "text": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: cart}\nspec:\n  template:\n    spec:\n      containers:\n        - name: cart\n          resources: {requests: {cpu: 200m, memory: 256Mi}}\n"
                        }
                    ]
                }
            })),
        }),
        answers: vec![
            (200, Answer::Json {
                description: "Imported (or, with `dry_run` or when nothing changed, only reported).",
                schema: of::<ImportAnswer>(),
                extra: None,
            }),
            (400, Answer::Shared("BadRequest")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoEstate")),
            (413, Answer::Shared("TooLarge")),
            (422, Answer::Json {
                description: "The manifests could not be understood (each error also names its `file`, `document` and `object`), or the cluster is not in the estate. Nothing was written.",
                schema: of::<ErrorBody>(),
                extra: None,
            }),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }
}
