//! The endpoints of `server/src/http/reviews.rs`.

endpoints! {
    group REVIEWS;

    /// Every decision about a recommendation of the estate (by identity), and where it stands
    /// in the advice at `now` (docs/reviews.md): `hidden` (dismissed or snoozed, and nothing it
    /// rested on changed), `back` (with the reasons, one sentence each), `planned`, or `absent`
    /// (not among the recommendations at `now`). The advice itself never changes; pages leave
    /// out the hidden ones.
    LIST_REVIEWS = listReviews, list_reviews(id) ["now"]:
        GET "/api/estates/{id}/reviews", Viewer, "decisions about recommendations, and where each stands now" {
        tag: "reviews",
        params: vec![
            Param::Shared("EstateId"),
            Param::Shared("Now"),
        ],
        answers: vec![
            (200, Answer::Json {
                description: "The decisions, by identity, with their standing.",
                schema: of::<ReviewList>(),
                extra: None,
            }),
            (400, Answer::Shared("BadRequestOrQuery")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoEstate")),
            (429, Answer::Shared("EngineRateLimited")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        example_query: Some("now=2026-11-30T04:05:00Z"),
        ..Default::default()
    }

    /// Records a decision about the recommendation with this identity in the advice at `now`
    /// (it must be one), replacing any earlier one, with an audit entry in the same
    /// transaction. Its basis is taken from the engine's Why of the move at `now`: every
    /// deciding fact's value and class and its exact flip thresholds. `dismissed` needs a
    /// reason; `snoozed` needs `until`, a `condition`, or both; a condition's `value` defaults
    /// to the Why's exact flip threshold on that side.
    REVIEW_RECOMMENDATION = reviewRecommendation, review_recommendation(id) ["now"]:
        POST "/api/estates/{id}/reviews", Operator, "mark a recommendation planned, dismissed or snoozed" {
        tag: "reviews",
        params: vec![
            Param::Shared("EstateId"),
            Param::Shared("Now"),
        ],
        body: Some(Body::Json {
            required: true,
            description: None,
            schema: of::<NewReview>(),
            extra: Some(json!({
                "example": {
                    "identity": "cart|c-par-1|c-fra-2",
                    "decision": "snoozed",
                    "reason": "waiting for the Paris link to be measured",
                    "until": "2026-12-24T00:00:00Z"
                }
            })),
        }),
        answers: vec![
            (201, Answer::Json {
                description: "Recorded; the decision with its standing at `now`.",
                schema: of::<ReviewAnswer>(),
                extra: None,
            }),
            (400, Answer::Shared("BadRequestOrQuery")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoEstate")),
            (413, Answer::Shared("TooLarge")),
            (422, Answer::Shared("InvalidReview")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        example_query: Some("now=2026-11-30T04:05:00Z"),
    }

    /// Removes the decision (the recommendation shows like any other again), with an audit
    /// entry in the same transaction.
    CLEAR_REVIEW = clearReview, clear_review(id):
        POST "/api/estates/{id}/reviews/clear", Operator, "forget the decision about a recommendation" {
        tag: "reviews",
        params: vec![
            Param::Shared("EstateId"),
        ],
        body: Some(Body::Json {
            required: true,
            description: None,
            schema: of::<ClearReview>(),
            extra: Some(json!({
                "example": {
                    "identity": "cart|c-par-1|c-fra-2",
                    "reason": "measured now; judge it again"
                }
            })),
        }),
        answers: vec![
            (204, Answer::Empty("Forgotten.")),
            (400, Answer::Shared("BadRequest")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Json {
                description: "No such estate, or no decision about this identity.",
                schema: named("NotFoundError"),
                extra: None,
            }),
            (413, Answer::Shared("TooLarge")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    ESTATE_AUDIT = estateAudit, estate_audit(id) ["limit"]:
        GET "/api/estates/{id}/audit", Viewer, "who decided what, when and why: reviews and policy changes" {
        tag: "reviews",
        params: vec![
            Param::Shared("EstateId"),
            Param::Inline(json!({
                "name": "limit",
                "in": "query",
                "required": false,
                "description": "How many entries to return at most, newest first (1–1000).",
                "schema": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 1000,
                    "default": 100
                }
            })),
        ],
        answers: vec![
            (200, Answer::Json {
                description: "The estate's audit trail, newest first.",
                schema: of::<AuditList>(),
                extra: None,
            }),
            (400, Answer::Shared("BadRequestOrQuery")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoEstate")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }
}
