//! The endpoints of `server/src/http/policy.rs`.

endpoints! {
    group POLICY;

    GET_POLICY = getPolicy, get_policy(id):
        GET "/api/estates/{id}/policy", Viewer, "the estate's policy" {
        tag: "estates",
        params: vec![
            Param::Shared("EstateId"),
        ],
        answers: vec![
            (200, Answer::Json {
                description: "The full policy (every field) and its digest.",
                schema: Schema::Inline(json!({
                    "type": "object",
                    "required": [
                        "estate",
                        "policy_digest",
                        "policy"
                    ],
                    "properties": {
                        "estate": {
                            "type": "string"
                        },
                        "policy_digest": {
                            "type": "string"
                        },
                        "policy": {
                            "$ref": "#/components/schemas/Policy"
                        }
                    }
                })),
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

    /// The body is a policy in JSON with any subset of the fields of `docs/advice.md` §8;
    /// **omitted fields take their defaults** (not the estate's current values): this replaces,
    /// it does not merge. Unknown fields and out-of-range values are refused, every one at
    /// once. The estate version does not change; results name the new policy digest. The change
    /// is recorded in the audit trail (who, when, every changed field from → to, and `reason`)
    /// in the same transaction.
    PUT_POLICY = putPolicy, put_policy(id) ["reason"]:
        PUT "/api/estates/{id}/policy", Operator, "replace the policy" {
        tag: "estates",
        params: vec![
            Param::Shared("EstateId"),
            Param::Inline(json!({
                "name": "reason",
                "in": "query",
                "required": false,
                "description": "Why the policy changes, for the audit trail (at most 2000 characters).",
                "schema": {
                    "type": "string"
                }
            })),
        ],
        body: Some(Body::Json {
            required: true,
            description: None,
            schema: named("Policy"),
            extra: Some(json!({
                "example": {
                    "cross_site_weight": 10,
                    "max_moves": 20,
                    "margins": {
                        "reported": 0.2
                    }
                }
            })),
        }),
        answers: vec![
            (200, Answer::Json {
                description: "Replaced; the full policy as it now is.",
                schema: Schema::Inline(json!({
                    "type": "object",
                    "required": [
                        "estate",
                        "version",
                        "policy_digest",
                        "policy"
                    ],
                    "properties": {
                        "estate": {
                            "type": "string"
                        },
                        "version": {
                            "type": "integer",
                            "description": "The estate version (unchanged by a policy change)."
                        },
                        "policy_digest": {
                            "type": "string"
                        },
                        "policy": {
                            "$ref": "#/components/schemas/Policy"
                        }
                    }
                })),
                extra: None,
            }),
            (400, Answer::Shared("BadRequest")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoEstate")),
            (413, Answer::Shared("TooLarge")),
            (422, Answer::Json {
                description: "An invalid policy; the policy was not changed. Each item is `{path, line, message}`: a value out of range points at its field (`/placement/target_utilisation`, line `null`); an unknown field or a wrong type is at path `/` with its line. (A body that is not JSON at all is a `400`.)",
                schema: Schema::Inline(json!({
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
                                            "items": {
                                                "$ref": "#/components/schemas/InputError"
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    ]
                })),
                extra: Some(json!({
                    "example": {
                        "error": "invalid",
                        "message": "invalid policy: 1 error; the policy was not changed",
                        "details": {
                            "errors": [
                                {
                                    "path": "/headroom_threshold",
                                    "line": null,
                                    "message": "expected a number in [0, 0.99], got 1.5"
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
}
