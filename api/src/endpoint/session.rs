//! The endpoints of `server/src/http/session.rs`.

endpoints! {
    group SESSION;

    /// Sign in with a user name and password, or with an API token, and
    /// get a browser session: the `berth_session` cookie (see
    /// `cookieAuth`) and the CSRF token to send as `X-CSRF-Token` on
    /// every state-changing request. The body must be JSON with
    /// `Content-Type: application/json` (so a cross-site HTML form cannot
    /// sign a browser in), and it is the one state-changing request that
    /// needs no `X-CSRF-Token` even when a session cookie comes with it.
    /// A session started with a token has that token's role and estate
    /// scope. A session cookie already held by the browser is ended (the
    /// session id always changes at sign-in).
    /// Rate-limited (see "Rate limits"); every attempt counts.
    SIGN_IN = signIn, sign_in():
        POST "/api/session", Public, "sign in (user and password, or token) for a session cookie" {
        tag: "session",
        body: Some(Body::Json {
            required: true,
            description: None,
            schema: named("SignIn"),
            extra: Some(json!({
                "example": {
                    "username": "alice",
                    "password": "correct horse battery staple"
                }
            })),
        }),
        answers: vec![
            (200, Answer::Raw(json!({
                "description": "Signed in.",
                "headers": {
                    "Set-Cookie": {
                        "description": "`berth_session=<256-bit secret>; Path=/; HttpOnly; SameSite=Lax; Max-Age=43200`, and `; Secure` with `--secure-cookies`; then a second one, `berth_signed_in=1; Path=/; SameSite=Lax; Max-Age=43200`, holding no secret, which the web pages read to know they are signed in before asking `GET /api/session`.",
                        "schema": {
                            "type": "string"
                        }
                    }
                },
                "content": {
                    "application/json": {
                        "schema": {
                            "$ref": "#/components/schemas/Session"
                        }
                    }
                }
            }))),
            (400, Answer::Json {
                description: "Not a JSON body, not `Content-Type: application/json`, unknown fields, or neither exactly `{username, password}` nor exactly `{token}`; or a malformed `Authorization` header.",
                schema: named("BadRequestError"),
                extra: None,
            }),
            (401, Answer::Shared("UnknownBearerToken")),
            (403, Answer::Json {
                description: "Wrong user name, password or token (one message for all three, and the same time taken whether or not the user exists).",
                schema: named("ForbiddenError"),
                extra: Some(json!({
                    "example": {
                        "error": "forbidden",
                        "message": "wrong user name, password or token",
                        "details": null
                    }
                })),
            }),
            (413, Answer::Shared("TooLarge")),
            (429, Answer::Shared("RateLimited")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    GET_SESSION = getSession, get_session():
        GET "/api/session", Viewer, "who am I, and my CSRF token" {
        tag: "session",
        answers: vec![
            (200, Answer::Json {
                description: "The caller.",
                schema: of::<Caller>(),
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

    /// Ends the cookie session (a bearer caller has none to end) and clears the cookie. The
    /// CSRF header is required with the cookie.
    SIGN_OUT = signOut, sign_out():
        DELETE "/api/session", Viewer, "sign out" {
        tag: "session",
        answers: vec![
            (204, Answer::Raw(json!({
                "description": "Signed out.",
                "headers": {
                    "Set-Cookie": {
                        "description": "`berth_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0` (and `; Secure` with `--secure-cookies`), then `berth_signed_in=; Path=/; SameSite=Lax; Max-Age=0`.",
                        "schema": {
                            "type": "string"
                        }
                    }
                }
            }))),
            (400, Answer::Shared("BadAuthorizationHeader")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    /// Every token ever made, revoked ones included (`revoked_at` set), oldest first. Secrets
    /// are never shown.
    LIST_TOKENS = listTokens, list_tokens():
        GET "/api/tokens", Admin, "list API tokens" {
        tag: "admin",
        answers: vec![
            (200, Answer::Json {
                description: "The tokens.",
                schema: of::<TokenList>(),
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

    /// Makes a token (`berth_` and 64 hex digits, 256 random bits). Its secret is in this
    /// response only; Berth keeps its SHA-256. Rate-limited (see "Rate limits").
    CREATE_TOKEN = createToken, create_token():
        POST "/api/tokens", Admin, "create an API token" {
        tag: "admin",
        body: Some(Body::Json {
            required: true,
            description: None,
            schema: of::<NewToken>(),
            extra: Some(json!({
                "example": {
                    "name": "ci pipeline",
                    "role": "operator",
                    "estate": "sample"
                }
            })),
        }),
        answers: vec![
            (201, Answer::Json {
                description: "Created.",
                schema: of::<CreatedToken>(),
                extra: None,
            }),
            (400, Answer::Shared("BadRequest")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (413, Answer::Shared("TooLarge")),
            (429, Answer::Shared("RateLimited")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    /// Revokes the token: it stops working as a bearer token at once. The row stays, with
    /// `revoked_at` set.
    REVOKE_TOKEN = revokeToken, revoke_token(token_id):
        DELETE "/api/tokens/{token_id}", Admin, "revoke an API token" {
        tag: "admin",
        params: vec![
            Param::Inline(json!({
                "name": "token_id",
                "in": "path",
                "required": true,
                "description": "A token's `id` (as listed by `GET /api/tokens`), not its secret.",
                "schema": {
                    "type": "string"
                },
                "example": "3f9a0c2b7d41"
            })),
        ],
        answers: vec![
            (204, Answer::Empty("Revoked.")),
            (400, Answer::Shared("BadAuthorizationHeader")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Json {
                description: "No live token with that id (unknown or already revoked).",
                schema: named("NotFoundError"),
                extra: None,
            }),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    LIST_USERS = listUsers, list_users():
        GET "/api/users", Admin, "list users" {
        tag: "admin",
        answers: vec![
            (200, Answer::Json {
                description: "The users, by name.",
                schema: of::<UserList>(),
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

    /// Creates a user who signs in with `POST /api/session`. The password is stored as an
    /// Argon2id hash.
    CREATE_USER = createUser, create_user():
        POST "/api/users", Admin, "create a user" {
        tag: "admin",
        body: Some(Body::Json {
            required: true,
            description: None,
            schema: of::<NewUser>(),
            extra: Some(json!({
                "example": {
                    "name": "alice",
                    "role": "operator",
                    "password": "correct horse battery staple"
                }
            })),
        }),
        answers: vec![
            (201, Answer::Json {
                description: "Created.",
                schema: of::<CreatedUser>(),
                extra: None,
            }),
            (400, Answer::Shared("BadRequest")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (409, Answer::Json {
                description: "A user with that name already exists.",
                schema: named("ConflictError"),
                extra: None,
            }),
            (413, Answer::Shared("TooLarge")),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }

    /// Deletes the user and ends every session they have, together.
    DELETE_USER = deleteUser, delete_user(name):
        DELETE "/api/users/{name}", Admin, "delete a user" {
        tag: "admin",
        params: vec![
            Param::Inline(json!({
                "name": "name",
                "in": "path",
                "required": true,
                "description": "The user's name.",
                "schema": {
                    "type": "string"
                },
                "example": "alice"
            })),
        ],
        answers: vec![
            (204, Answer::Empty("Deleted.")),
            (400, Answer::Shared("BadAuthorizationHeader")),
            (401, Answer::Shared("Unauthenticated")),
            (403, Answer::Shared("Forbidden")),
            (404, Answer::Json {
                description: "No user with that name.",
                schema: named("NotFoundError"),
                extra: None,
            }),
            (500, Answer::Shared("Internal")),
            (503, Answer::Shared("Unavailable")),
        ],
        ..Default::default()
    }
}
