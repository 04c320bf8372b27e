//! The endpoints of `server/src/http/estates.rs`.

endpoints! {
    group ESTATES;

    /// Every estate the caller may see, by id; a token scoped to one estate sees that one.
    LIST_ESTATES = listEstates, list_estates():
        GET "/api/estates", Viewer, "list estates" {
        tag: "estates",
        answers: vec![
            (200, Answer::Json {
                description: "The estates.",
                schema: of::<EstateList>(),
                extra: None,
            }),
            (400, Answer::Shared("BadAuthorizationHeader")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("NeverForbidden")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    /// The body is an estate file (`docs/estate-format.md`, schema
    /// `docs/estate.schema.json`), JSON or YAML: the `Content-Type` decides
    /// when it names `json` or `yaml`, else a body starting with `{` is
    /// JSON and anything else YAML. It is checked whole; every error is
    /// reported at once with its JSON pointer and line, and nothing is
    /// written. The estate gets the default policy. Its id is the `id`
    /// parameter, or else made from the estate's name (lowercase letters
    /// and digits, other runs as one `-`, at most 64 characters; `estate`
    /// if nothing is left). A token scoped to one estate cannot create
    /// estates.
    CREATE_ESTATE = createEstate, create_estate() ["id"]:
        POST "/api/estates", Operator, "create an estate from an estate file" {
        tag: "estates",
        params: vec![
            Param::Shared("NewEstateId"),
        ],
        body: Some(Body::Shared("EstateFile")),
        answers: vec![
            (201, Answer::Json {
                description: "Created.",
                schema: of::<EstateSummary>(),
                extra: None,
            }),
            (400, Answer::Shared("BadRequestOrQuery")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (409, Answer::Json {
                description: "An estate with that id already exists (import into it with `PUT /api/estates/{id}/file`, or choose another id).",
                schema: named("ConflictError"),
                extra: None,
            }),
            (413, Answer::Shared("TooLarge")),
            (422, Answer::Shared("InvalidEstate")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    GET_ESTATE = getEstate, get_estate(id):
        GET "/api/estates/{id}", Viewer, "an estate's summary" {
        tag: "estates",
        params: vec![
            Param::Shared("EstateId"),
        ],
        answers: vec![
            (200, Answer::Json {
                description: "The estate's summary.",
                schema: of::<EstateSummary>(),
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

    /// Deletes the estate and its saved scenarios, and revokes the tokens scoped to it, in one
    /// transaction.
    DELETE_ESTATE = deleteEstate, delete_estate(id):
        DELETE "/api/estates/{id}", Admin, "delete an estate" {
        tag: "estates",
        params: vec![
            Param::Shared("EstateId"),
        ],
        answers: vec![
            (204, Answer::Empty("Deleted.")),
            (400, Answer::Shared("BadAuthorizationHeader")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoEstate")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    /// The estate file as stored (canonical: collections sorted by id), pretty-printed JSON by
    /// default or YAML with `format=yaml`.
    EXPORT_ESTATE_FILE = exportEstateFile, export_estate_file(id) ["format"]:
        GET "/api/estates/{id}/file", Viewer, "export the estate file" {
        tag: "estates",
        params: vec![
            Param::Shared("EstateId"),
            Param::Shared("Format"),
        ],
        answers: vec![
            (200, Answer::Raw(json!({
                "description": "The estate file.",
                "headers": {
                    "ETag": {
                        "description": "`\"<version>-<content_digest>\"` of the stored estate.",
                        "schema": {
                            "type": "string"
                        }
                    }
                },
                "content": {
                    "application/json": {
                        "schema": {
                            "$ref": "./estate.schema.json"
                        }
                    },
                    "application/yaml": {
                        "schema": {
                            "$ref": "./estate.schema.json"
                        }
                    }
                }
            }))),
            (400, Answer::Shared("BadRequestOrQuery")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoEstate")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    /// Replaces the estate's document with the body (same rules as `POST /api/estates`) and
    /// bumps its version; the policy and saved scenarios stay. The estate must exist. An import
    /// replaces whatever is there: a concurrent change is overwritten by design.
    IMPORT_ESTATE_FILE = importEstateFile, import_estate_file(id):
        PUT "/api/estates/{id}/file", Operator, "import an estate file, replacing the estate" {
        tag: "estates",
        params: vec![
            Param::Shared("EstateId"),
        ],
        body: Some(Body::Shared("EstateFile")),
        answers: vec![
            (200, Answer::Json {
                description: "Imported; the estate's new summary.",
                schema: of::<EstateSummary>(),
                extra: None,
            }),
            (400, Answer::Shared("BadRequest")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Shared("NoEstate")),
            (409, Answer::Shared("KeptChanging")),
            (413, Answer::Shared("TooLarge")),
            (422, Answer::Shared("InvalidEstate")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }
}
