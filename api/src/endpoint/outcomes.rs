//! The endpoints of `server/src/http/outcomes.rs`.

endpoints! {
    group OUTCOMES;

    /// Every move the server noticed in the estate's writes (a service whose cluster a
    /// Kubernetes import, an agent's re-sync or an estate upload changed), grouped into steps
    /// (a compound step once all its members moved), each with what Berth had said of it
    /// (`advised` by an advice snapshot of the policy's `outcome_lookback_s`, 14 days by
    /// default; `planned` in a review; or `unadvised` and judged by the model at the move), the
    /// prediction, and the effect measured since: round-trip points at the demand before the
    /// move and at the demand after it, cross-site MB/s before and after, headroom at the
    /// clusters left and entered, the ratio to the prediction and the weakest fact it rests on.
    /// Until the settling window (the policy's `outcome_settle_s`, 1 h by default) is over and
    /// every figure has a fact observed since the move, a step is `waiting` and says for what.
    /// With three or more judged advised or planned steps, the calibration: the median, and
    /// middle half, of observed ÷ predicted; and its parts, by kind of step (single, compound)
    /// and by the class of the deciding facts (`docs/outcomes.md`). The bytes are the engine's
    /// (`berth_engine::front::outcomes`).
    LIST_OUTCOMES = listOutcomes, list_outcomes(id) ["now"]:
        GET "/api/estates/{id}/outcomes", Viewer, "applied moves, each judged against what was measured after it, and the estate's calibration" {
        tag: "outcomes",
        params: vec![
            Param::Shared("EstateId"),
            Param::Shared("Now"),
        ],
        answers: vec![
            (200, Answer::Json {
                description: "The applied moves, oldest first, and the calibration.",
                schema: named("AppliedMoves"),
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
