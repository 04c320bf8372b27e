//! Who is calling: browser sessions (sign in, who am I, sign out), and
//! the credentials an admin manages, API tokens and user accounts.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;

use berth_engine::estate;

use super::extract::{json_body, read_body, SMALL_BODY_LIMIT};
use super::route::{route, Route};
use crate::auth::{self, Caller, Role, Via};
use crate::clock::now_s;
use crate::digest::sha256_hex;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::store;

/// Sessions; listed early in the table.
pub const SESSION_ROUTES: &[Route] = &[
    route!(SIGN_IN => login),
    route!(GET_SESSION => whoami),
    route!(SIGN_OUT => logout),
];

/// Tokens and users; listed last in the table.
pub const ACCOUNT_ROUTES: &[Route] = &[
    route!(LIST_TOKENS => list_tokens),
    route!(CREATE_TOKEN => create_token),
    route!(REVOKE_TOKEN => revoke_token),
    route!(LIST_USERS => list_users),
    route!(CREATE_USER => create_user),
    route!(DELETE_USER => delete_user),
];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LoginBody {
    #[serde(default)]
    username: Option<String>,
    #[serde(default)]
    password: Option<String>,
    #[serde(default)]
    token: Option<String>,
}

async fn login(
    State(state): State<AppState>,
    peer: auth::Peer,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    let addr = auth::client_addr(&headers, &peer, state.config.trust_forwarded_for);
    state.limiter.check(addr)?;
    // JSON only: a cross-site HTML form cannot send it without a CORS
    // preflight, which this server never grants (login CSRF).
    let is_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !is_json {
        return Err(ApiError::bad_request(
            "sign in with a JSON body {\"username\", \"password\"} or {\"token\"} and Content-Type: application/json",
        ));
    }
    let bytes = read_body(body, SMALL_BODY_LIMIT).await?;
    let b: LoginBody = json_body(&bytes, "sign-in")?;
    let wrong = || ApiError::Forbidden("wrong user name, password or token".into());
    let (subject, role, estate, token_id) = match (b.username, b.password, b.token) {
        (Some(user), Some(password), None) => {
            let found = store::user_credentials(&state.db, &user).await?;
            let (role, hash) = match &found {
                Some((role, hash)) => (Some(*role), hash.clone()),
                None => (None, auth::dummy_hash().to_string()),
            };
            let ok = tokio::task::spawn_blocking(move || auth::verify_password(&password, &hash))
                .await
                .map_err(|e| ApiError::Internal(format!("password task: {e}")))?;
            match (ok, role) {
                (true, Some(role)) => (user, role, None, None),
                _ => return Err(wrong()),
            }
        }
        (None, None, Some(token)) => {
            let t = store::token_by_hash(&state.db, &sha256_hex(&token))
                .await?
                .ok_or_else(wrong)?;
            if t.role == Role::Agent {
                return Err(ApiError::Forbidden(
                    "an agent token is used as a bearer token by its agent; it cannot open a browser session".into(),
                ));
            }
            (format!("token:{}", t.id), t.role, t.estate_id, Some(t.id))
        }
        _ => {
            return Err(ApiError::bad_request(
                "sign in with either {\"username\", \"password\"} or {\"token\"}",
            ))
        }
    };
    let session_id = auth::random_secret();
    let csrf = auth::random_secret();
    let previous = auth::session_cookie_of(&headers).map(|c| sha256_hex(&c));
    let now = now_s();
    store::start_session(
        &state.db,
        &sha256_hex(&session_id),
        previous.as_deref(),
        &subject,
        role,
        estate.as_deref(),
        token_id.as_deref(),
        &csrf,
        now,
        state.config.session_ttl_s,
    )
    .await?;
    tracing::info!(%subject, role = role.as_str(), "signed in");
    let cookie = format!(
        "{}={session_id}; Path=/; HttpOnly; SameSite=Lax; Max-Age={}{}",
        auth::SESSION_COOKIE,
        state.config.session_ttl_s,
        if auth::cookie_secure(&headers, &state.config) {
            "; Secure"
        } else {
            ""
        }
    );
    let mut resp = Json(berth_api::Session {
        subject,
        role,
        estate,
        csrf_token: csrf,
        expires_at: estate::format_time(now + state.config.session_ttl_s),
    })
    .into_response();
    resp.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_str(&cookie).expect("cookie is ASCII"),
    );
    resp.headers_mut().append(
        header::SET_COOKIE,
        HeaderValue::from_str(&auth::signed_in_marker(
            state.config.session_ttl_s,
            auth::cookie_secure(&headers, &state.config),
        ))
        .expect("cookie is ASCII"),
    );
    Ok(resp)
}

async fn whoami(caller: Caller) -> ApiResult<Json<berth_api::Caller>> {
    let p = caller.principal()?;
    let csrf = match &p.via {
        Via::Session { csrf, .. } => Some(csrf.clone()),
        Via::Bearer { .. } => None,
    };
    Ok(Json(berth_api::Caller {
        subject: p.subject.clone(),
        role: p.role,
        estate: p.estate.clone(),
        csrf_token: csrf,
    }))
}

async fn logout(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let p = caller.principal()?;
    if let Via::Session { id_hash, .. } = &p.via {
        store::end_session(&state.db, id_hash).await?;
    }
    let cookie = format!(
        "{}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0{}",
        auth::SESSION_COOKIE,
        if auth::cookie_secure(&headers, &state.config) {
            "; Secure"
        } else {
            ""
        }
    );
    let mut resp = StatusCode::NO_CONTENT.into_response();
    resp.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_str(&cookie).expect("cookie is ASCII"),
    );
    resp.headers_mut().append(
        header::SET_COOKIE,
        HeaderValue::from_str(&auth::signed_in_marker(
            0,
            auth::cookie_secure(&headers, &state.config),
        ))
        .expect("cookie is ASCII"),
    );
    Ok(resp)
}

/// A token row as the API lists it.
fn token_info(t: store::TokenRow) -> berth_api::TokenInfo {
    berth_api::TokenInfo {
        id: t.id,
        name: t.name,
        role: t.role,
        estate: t.estate_id,
        created_at: estate::format_time(t.created_at),
        created_by: t.created_by,
        revoked_at: t.revoked_at.map(estate::format_time),
        may_create_clusters: t.may_create_clusters,
        may_sync_services: t.may_sync_services,
        clusters: t.clusters,
    }
}

async fn list_tokens(State(state): State<AppState>) -> ApiResult<Json<berth_api::TokenList>> {
    let tokens = store::list_tokens(&state.db).await?;
    Ok(Json(berth_api::TokenList {
        tokens: tokens.into_iter().map(token_info).collect(),
    }))
}

async fn create_token(
    State(state): State<AppState>,
    caller: Caller,
    peer: auth::Peer,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    let addr = auth::client_addr(&headers, &peer, state.config.trust_forwarded_for);
    state.limiter.check(addr)?;
    let bytes = read_body(body, SMALL_BODY_LIMIT).await?;
    let b: berth_api::NewToken = json_body(&bytes, "new token")?;
    let role = Role::parse(&b.role).ok_or_else(|| {
        ApiError::bad_request(format!(
            "role {:?}: expected agent, viewer, operator or admin",
            b.role
        ))
    })?;
    if b.may_create_clusters && role != Role::Agent {
        return Err(ApiError::bad_request(
            "may_create_clusters is for agent tokens: operators and administrators change the estate itself",
        ));
    }
    if b.may_sync_services && role != Role::Agent {
        return Err(ApiError::bad_request(
            "may_sync_services is for agent tokens: operators and administrators import services already",
        ));
    }
    if role == Role::Agent && b.estate.is_none() {
        return Err(ApiError::bad_request(
            "an agent token must be scoped to one estate: give \"estate\"",
        ));
    }
    let clusters = crate::scope::clusters_for_new_token(role, b.clusters.as_deref())?;
    if b.name.trim().is_empty() || b.name.chars().count() > 100 {
        return Err(ApiError::bad_request(
            "name: 1 to 100 characters, not blank",
        ));
    }
    if let Some(problem) = berth_engine::chars::name_problem(&b.name) {
        return Err(ApiError::bad_request(format!("name: {problem}")));
    }
    if let Some(e) = &b.estate {
        if role == Role::Admin {
            return Err(ApiError::bad_request(
                "an admin token cannot be scoped to one estate: administration is estate-wide",
            ));
        }
        if store::estate_meta(&state.db, e).await?.is_none() {
            return Err(ApiError::bad_request(format!(
                "estate {e:?}: no such estate"
            )));
        }
    }
    let token = auth::new_token();
    let id = auth::random_id();
    let by = caller.principal()?.subject.clone();
    store::insert_token(
        &state.db,
        store::NewToken {
            id: &id,
            hash: &sha256_hex(&token),
            name: &b.name,
            role,
            estate_id: b.estate.as_deref(),
            created_by: &by,
            may_create_clusters: b.may_create_clusters,
            may_sync_services: b.may_sync_services,
            clusters: clusters.as_deref(),
        },
        now_s(),
    )
    .await?;
    tracing::info!(token_id = %id, role = role.as_str(), by = %by, "token created");
    Ok((
        StatusCode::CREATED,
        Json(berth_api::CreatedToken {
            id,
            token,
            name: b.name,
            role,
            estate: b.estate,
            may_create_clusters: b.may_create_clusters,
            may_sync_services: b.may_sync_services,
            clusters,
            note: berth_api::TOKEN_NOTE.into(),
        }),
    )
        .into_response())
}

async fn revoke_token(
    State(state): State<AppState>,
    caller: Caller,
    Path(token_id): Path<String>,
) -> ApiResult<StatusCode> {
    if store::revoke_token(&state.db, &token_id, now_s()).await? {
        tracing::info!(%token_id, by = %caller.principal()?.subject, "token revoked");
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound(format!(
            "no live token {token_id:?} (unknown or already revoked)"
        )))
    }
}

async fn list_users(State(state): State<AppState>) -> ApiResult<Json<berth_api::UserList>> {
    let users = store::list_users(&state.db).await?;
    Ok(Json(berth_api::UserList {
        users: users
            .into_iter()
            .map(|u| berth_api::User {
                name: u.name,
                role: u.role,
                created_at: estate::format_time(u.created_at),
            })
            .collect(),
    }))
}

async fn create_user(
    State(state): State<AppState>,
    caller: Caller,
    body: Body,
) -> ApiResult<Response> {
    let bytes = read_body(body, SMALL_BODY_LIMIT).await?;
    let b: berth_api::NewUser = json_body(&bytes, "new user")?;
    // The account's rules are the engine's (the Admin page checks them as
    // they are typed, in these words); each problem goes back at its field.
    let problems = berth_engine::accounts::new_user_problems(&b.name, &b.password);
    if !problems.is_empty() {
        let words: Vec<String> = problems
            .iter()
            .map(|(path, what)| format!("{}: {what}", path.trim_start_matches('/')))
            .collect();
        let errors: Vec<berth_api::InputError> = problems
            .iter()
            .map(|(path, what)| crate::error::input_error(*path, None, what.clone()))
            .collect();
        return Err(ApiError::bad_request_at(
            format!("the new user is refused: {}", words.join("; ")),
            errors,
        ));
    }
    let role = Role::parse(&b.role)
        .filter(|r| *r != Role::Agent)
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "role {:?}: expected viewer, operator or admin (agents use agent tokens, not accounts)",
                b.role
            ))
        })?;
    let password = b.password;
    let hash = tokio::task::spawn_blocking(move || auth::hash_password(&password))
        .await
        .map_err(|e| ApiError::Internal(format!("password task: {e}")))?;
    store::insert_user(&state.db, &b.name, role, &hash, now_s()).await?;
    tracing::info!(user = %b.name, role = role.as_str(), by = %caller.principal()?.subject, "user created");
    Ok((
        StatusCode::CREATED,
        Json(berth_api::CreatedUser { name: b.name, role }),
    )
        .into_response())
}

async fn delete_user(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> ApiResult<StatusCode> {
    if store::delete_user(&state.db, &name).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound(format!("no user {name:?}")))
    }
}
