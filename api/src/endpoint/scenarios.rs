//! The endpoints of `server/src/http/scenarios.rs`.

endpoints! {
    group SCENARIOS;

    LIST_SCENARIOS = listScenarios, list_scenarios(id):
        GET "/api/estates/{id}/scenarios", Viewer, "list saved scenarios" {
        tag: "scenarios",
        params: vec![
            Param::Shared("EstateId"),
        ],
        answers: vec![
            (200, Answer::Json {
                description: "The estate's saved scenarios, by name.",
                schema: of::<ScenarioList>(),
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

    GET_SCENARIO = getScenario, get_scenario(id, name):
        GET "/api/estates/{id}/scenarios/{name}", Viewer, "a saved scenario" {
        tag: "scenarios",
        params: vec![
            Param::Shared("EstateId"),
            Param::Shared("ScenarioName"),
        ],
        answers: vec![
            (200, Answer::Json {
                description: "The scenario, as saved (canonical form, pretty-printed).",
                schema: named("Scenario"),
                extra: None,
            }),
            (400, Answer::Shared("BadAuthorizationHeader")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoScenario")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    /// Saves (creates or replaces) the scenario under this name, after checking it against the
    /// estate as it is now: the services and clusters it names must exist. It may go stale
    /// later; running it then reports exactly what vanished. The name must be 1–64 characters
    /// of `a–z`, `0–9`, `-`, `_`, starting with a letter or digit.
    PUT_SCENARIO = putScenario, put_scenario(id, name):
        PUT "/api/estates/{id}/scenarios/{name}", Operator, "save a scenario" {
        tag: "scenarios",
        params: vec![
            Param::Shared("EstateId"),
            Param::Shared("ScenarioName"),
        ],
        body: Some(Body::Shared("Scenario")),
        answers: vec![
            (204, Answer::Empty("Saved.")),
            (400, Answer::Shared("BadRequest")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoEstate")),
            (413, Answer::Shared("TooLarge")),
            (422, Answer::Shared("InvalidScenario")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    DELETE_SCENARIO = deleteScenario, delete_scenario(id, name):
        DELETE "/api/estates/{id}/scenarios/{name}", Operator, "delete a scenario" {
        tag: "scenarios",
        params: vec![
            Param::Shared("EstateId"),
            Param::Shared("ScenarioName"),
        ],
        answers: vec![
            (204, Answer::Empty("Deleted.")),
            (400, Answer::Shared("BadAuthorizationHeader")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoScenario")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }
}
