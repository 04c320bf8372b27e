//! Who is asking, and may they: roles, bearer tokens, browser sessions,
//! CSRF, and the rate limiter on credential endpoints (SPEC §14).
//!
//! Every request passes [`authenticate`] (which learns the principal, if
//! any, and enforces CSRF for cookie sessions), then the route's own
//! [`require`] layer (which enforces the role the route table declares).

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

pub use crate::clock::now_s;
use crate::config::Config;
use crate::db::Db;
pub use crate::digest::sha256_hex;
use crate::error::ApiError;
pub use crate::random::{new_token, random_id, random_secret};
pub use crate::role::Role;

/// What a route asks of its caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Anyone, signed in or not (health, metrics, sign-in itself).
    Public,
    /// At least this role.
    Role(Role),
    /// Posting observations: an agent token, or an operator or above.
    Observe,
}

impl Access {
    /// Whether a caller with `role` may use a route with this access.
    pub fn granted_to(self, role: Role) -> bool {
        match self {
            Access::Public => true,
            Access::Role(need) => role >= need,
            Access::Observe => role == Role::Agent || role >= Role::Operator,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Access::Public => "public",
            Access::Role(r) => r.as_str(),
            Access::Observe => "observe",
        }
    }
}

/// How the caller proved who they are.
#[derive(Clone)]
pub enum Via {
    Bearer { token_id: String },
    Session { id_hash: String, csrf: String },
}

/// Written by hand so a session's CSRF token can never reach a log line
/// through `{:?}`.
impl std::fmt::Debug for Via {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Via::Bearer { token_id } => write!(f, "Bearer(token {token_id})"),
            Via::Session { .. } => write!(f, "Session(…)"),
        }
    }
}

/// The authenticated caller.
#[derive(Clone, Debug)]
pub struct Principal {
    /// A user name, or `token:<id>` for an API token.
    pub subject: String,
    /// For people: the user name, or the token's name.
    pub label: String,
    pub role: Role,
    /// A token scoped to one estate may touch that estate only.
    pub estate: Option<String>,
    /// An agent token allowed to create its own cluster on first report
    /// (never a session).
    pub may_create_clusters: bool,
    /// An agent token an administrator allowed to import its cluster's
    /// services (`may_sync_services`).
    pub may_sync_services: bool,
    /// An agent token's clusters: every write it makes must concern one
    /// of them (`crate::scope`). `None` for every other caller.
    pub clusters: Option<Vec<String>>,
    pub via: Via,
}

impl Principal {
    pub fn may_see_estate(&self, id: &str) -> bool {
        self.estate.as_deref().is_none_or(|scope| scope == id)
    }
}

/// The name of the browser session cookie.
pub const SESSION_COOKIE: &str = "berth_session";
/// Beside it, readable by the page: "a session cookie was set" (no
/// secret), so a signed-out page does not ask who it is and log a 401.
pub const SIGNED_IN_COOKIE: &str = "berth_signed_in";
/// The header carrying the CSRF token on state-changing cookie requests.
pub const CSRF_HEADER: &str = "x-csrf-token";

/// A cookie the page may read (no secret in it, so not HttpOnly) saying a
/// session cookie was set: a signed-out page then knows not to ask `GET
/// /api/session`, whose 401 every browser logs as an error. It lives as
/// long as the session; `max_age_s` 0 clears it at sign-out.
pub fn signed_in_marker(max_age_s: i64, secure: bool) -> String {
    format!(
        "{}={}; Path=/; SameSite=Lax; Max-Age={max_age_s}{}",
        SIGNED_IN_COOKIE,
        if max_age_s > 0 { "1" } else { "" },
        if secure { "; Secure" } else { "" }
    )
}

pub fn hash_password(password: &str) -> String {
    use argon2::password_hash::{rand_core::OsRng, PasswordHasher, SaltString};
    let salt = SaltString::generate(&mut OsRng);
    argon2::Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .expect("argon2 hashes any password")
        .to_string()
}

pub fn verify_password(password: &str, phc: &str) -> bool {
    use argon2::password_hash::{PasswordHash, PasswordVerifier};
    match PasswordHash::new(phc) {
        Ok(parsed) => argon2::Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok(),
        Err(_) => false,
    }
}

/// A password that costs the same to check as a real one, so a sign-in
/// for a user who does not exist takes as long as one with a wrong
/// password (no user enumeration by timing).
pub fn dummy_hash() -> &'static str {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DUMMY.get_or_init(|| hash_password("not a password anyone has"))
}

fn cookie_value(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

pub fn session_cookie_of(headers: &HeaderMap) -> Option<String> {
    cookie_value(headers, SESSION_COOKIE)
}

fn is_safe(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// What [`authenticate`] works with: the database (tokens, sessions), the
/// per-address limiter wrong tokens spend, and the cookie and origin
/// settings. Cheap to clone: all shared inside.
#[derive(Clone)]
pub struct Gate {
    pub db: Db,
    pub limiter: RateLimiter,
    pub config: Arc<Config>,
}

/// Learn the caller (bearer token first, then session cookie), and refuse
/// a state-changing cookie request without the session's CSRF token.
///
/// A bearer token is never sent by a browser on its own, so it needs no
/// CSRF token; a cookie is, so it does.
pub async fn authenticate(State(state): State<Gate>, mut req: Request, next: Next) -> Response {
    let principal = match principal_of(&state.db, req.headers()).await {
        Ok(p) => p,
        Err(ApiError::InvalidToken) => {
            // A wrong or revoked bearer token is always 401, as the API
            // says: a client holding a stale token must hear that it is
            // stale, not "retry later". Guessing is not throttled here
            // because there is nothing to guess (256 random bits, only
            // the hash stored); the throttled path is sign-in
            // (`POST /api/session`, `RateLimiter::for_credentials`), where
            // passwords are. Each refusal is logged (by address) so a
            // flood is visible.
            let peer = Peer(
                req.extensions()
                    .get::<ConnectInfo<SocketAddr>>()
                    .map(|c| c.0),
            );
            let addr = client_addr(req.headers(), &peer, state.config.trust_forwarded_for);
            tracing::debug!(client = %addr, "unknown or revoked bearer token");
            return ApiError::InvalidToken.into_response();
        }
        Err(e) => return e.into_response(),
    };
    let signing_in = req.method() == Method::POST && req.uri().path() == "/api/session";
    let by_cookie = matches!(
        &principal,
        Some(Principal {
            via: Via::Session { .. },
            ..
        })
    );
    // The second line against cross-site requests, before the CSRF token:
    // what the browser says about where the request comes from. Only for
    // requests a browser may send with ambient credentials (a session
    // cookie) and the sign-in itself; bearer tokens are never ambient.
    if (by_cookie || signing_in) && !is_safe(req.method()) {
        if let Some(why) = cross_site(req.headers(), &state.config) {
            return ApiError::Forbidden(why).into_response();
        }
    }
    if let Some(p) = &principal {
        if let Via::Session { csrf, .. } = &p.via {
            // Signing in is exempt: it needs no ambient authority (it
            // requires JSON, which a cross-site form cannot send), and a
            // browser holding an old session must be able to sign in anew.
            if !is_safe(req.method()) && !signing_in {
                let sent = req
                    .headers()
                    .get(CSRF_HEADER)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("");
                if !bool::from(sent.as_bytes().ct_eq(csrf.as_bytes())) {
                    return ApiError::Forbidden(format!(
                        "missing or wrong {CSRF_HEADER} header: state-changing requests from a \
                         browser session must carry the CSRF token returned at sign-in"
                    ))
                    .into_response();
                }
            }
        }
    }
    // A page loaded with a live session but without the marker (a
    // session begun before the marker existed, or the marker cleared by
    // hand) gets it back, so the page asks who it is instead of showing
    // "not signed in". Pages only: the API's answers stay as they are.
    let restore_marker = by_cookie
        && req.method() == Method::GET
        && !req.uri().path().starts_with("/api/")
        && cookie_value(req.headers(), SIGNED_IN_COOKIE).as_deref() != Some("1");
    let secure = restore_marker && cookie_secure(req.headers(), &state.config);
    req.extensions_mut().insert(Caller(principal));
    let mut resp = next.run(req).await;
    if restore_marker {
        resp.headers_mut().append(
            header::SET_COOKIE,
            HeaderValue::from_str(&signed_in_marker(state.config.session_ttl_s, secure))
                .expect("cookie is ASCII"),
        );
    }
    resp
}

/// Why a browser's request is from another site, if it is: `Sec-Fetch-Site`
/// says `cross-site` (or `same-site`, a sibling host, without an `Origin`
/// of ours), or `Origin` names an origin that is neither the request's own
/// host (`Host`, or `X-Forwarded-Host` from a trusted proxy) nor the
/// configured public URL. `None` when nothing says so: requests without
/// these headers (not from a browser, or a very old one) rely on the CSRF
/// token alone.
pub fn cross_site(headers: &HeaderMap, config: &Config) -> Option<String> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let origin = text("origin");
    let origin_ours = origin.map(|o| origin_is_ours(o, headers, config));
    let site = text("sec-fetch-site").map(str::to_ascii_lowercase);
    match site.as_deref() {
        Some("cross-site") => {
            return Some(format!(
                "refused: the browser says this request comes from another site (Sec-Fetch-Site: cross-site{}); state-changing requests with a session cookie must come from Berth's own pages",
                origin.map(|o| format!(", Origin: {o}")).unwrap_or_default()
            ))
        }
        Some("same-site") if origin_ours != Some(true) => {
            return Some(format!(
                "refused: the browser says this request comes from another host of the same site (Sec-Fetch-Site: same-site{}); state-changing requests with a session cookie must come from Berth's own pages",
                origin.map(|o| format!(", Origin: {o}")).unwrap_or_default()
            ))
        }
        _ => {}
    }
    if origin_ours == Some(false) {
        return Some(format!(
            "refused: Origin {:?} is not this server's origin{}; state-changing requests with a session cookie must come from Berth's own pages (behind a proxy that rewrites Host, set --public-url)",
            origin.unwrap_or_default(),
            config
                .public_url
                .as_deref()
                .map(|u| format!(" ({u})"))
                .unwrap_or_default()
        ));
    }
    None
}

/// `host[:port]` lowercased, without the scheme's default port.
fn authority_key(scheme: &str, authority: &str) -> String {
    let a = authority.trim().to_ascii_lowercase();
    let default = match scheme {
        "http" => ":80",
        "https" => ":443",
        _ => "",
    };
    match a.strip_suffix(default) {
        Some(bare) if !default.is_empty() => bare.to_string(),
        _ => a,
    }
}

/// `(scheme, authority)` of an origin such as `https://host:8443`; `None`
/// for `null` or anything that is not an http(s) origin.
fn split_origin(origin: &str) -> Option<(String, String)> {
    let (scheme, rest) = origin.trim().split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if !(scheme == "http" || scheme == "https") || rest.is_empty() || rest.contains('/') {
        return None;
    }
    let authority = authority_key(&scheme, rest);
    Some((scheme, authority))
}

/// The public URL as an origin (`scheme://host[:port]`, lowercased, no
/// default port, no path), or why it is not one.
pub fn public_origin(url: &str) -> Result<String, String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("{url:?}: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(format!("{url:?}: expected an http or https URL"));
    }
    match parsed.origin() {
        url::Origin::Tuple(..) => Ok(parsed.origin().ascii_serialization()),
        url::Origin::Opaque(_) => Err(format!("{url:?}: expected an http or https URL")),
    }
}

fn origin_is_ours(origin: &str, headers: &HeaderMap, config: &Config) -> bool {
    let Some((scheme, authority)) = split_origin(origin) else {
        return false;
    };
    if let Some(public) = &config.public_url {
        if split_origin(public).is_some_and(|p| p == (scheme.clone(), authority.clone())) {
            return true;
        }
    }
    let mut hosts: Vec<&str> = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .into_iter()
        .collect();
    if config.trust_forwarded_for {
        hosts.extend(
            headers
                .get_all("x-forwarded-host")
                .iter()
                .filter_map(|v| v.to_str().ok())
                .next_back()
                .and_then(|v| v.rsplit(',').map(str::trim).find(|s| !s.is_empty())),
        );
    }
    hosts.iter().any(|h| authority_key(&scheme, h) == authority)
}

/// Whether the session cookie must be `Secure`: said by flag
/// (`--secure-cookies`), or the public URL is https, or a trusted proxy
/// (`--trust-forwarded-for`) says the request came over https
/// (`X-Forwarded-Proto`, its last hop). Berth itself speaks plain HTTP:
/// TLS, when there is any, ends in front of it.
pub fn cookie_secure(headers: &HeaderMap, config: &Config) -> bool {
    if config.secure_cookies {
        return true;
    }
    if config
        .public_url
        .as_deref()
        .is_some_and(|u| u.starts_with("https://"))
    {
        return true;
    }
    config.trust_forwarded_for
        && headers
            .get_all("x-forwarded-proto")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .next_back()
            .and_then(|v| v.rsplit(',').map(str::trim).find(|s| !s.is_empty()))
            .is_some_and(|p| p.eq_ignore_ascii_case("https"))
}

/// The caller as [`authenticate`] found it; `None` when anonymous.
#[derive(Clone, Debug)]
pub struct Caller(pub Option<Principal>);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Caller {
    type Rejection = ApiError;
    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Caller, ApiError> {
        Ok(parts
            .extensions
            .get::<Caller>()
            .cloned()
            .unwrap_or(Caller(None)))
    }
}

impl Caller {
    /// The principal, or 401.
    pub fn principal(&self) -> Result<&Principal, ApiError> {
        self.0.as_ref().ok_or(ApiError::Unauthenticated)
    }
}

async fn principal_of(db: &Db, headers: &HeaderMap) -> Result<Option<Principal>, ApiError> {
    if let Some(auth) = headers.get(header::AUTHORIZATION) {
        let token = auth
            .to_str()
            .ok()
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
            .ok_or_else(|| {
                ApiError::bad_request("Authorization header: expected `Bearer <token>`")
            })?;
        let found = crate::store::token_by_hash(db, &sha256_hex(token)).await?;
        return match found {
            Some(t) => Ok(Some(Principal {
                subject: format!("token:{}", t.id),
                label: t.name,
                role: t.role,
                estate: t.estate_id,
                may_create_clusters: t.may_create_clusters,
                may_sync_services: t.may_sync_services,
                // An agent token always has a scope: a row without one
                // (never written since migration 12) may write nothing.
                clusters: if t.role == Role::Agent {
                    Some(t.clusters.unwrap_or_default())
                } else {
                    None
                },
                via: Via::Bearer { token_id: t.id },
            })),
            // A wrong or revoked token is an error, not anonymity: the
            // client meant to authenticate and should hear that it failed.
            None => Err(ApiError::InvalidToken),
        };
    }
    if let Some(id) = session_cookie_of(headers) {
        let id_hash = sha256_hex(&id);
        if let Some(s) = crate::store::session_by_hash(db, &id_hash, now_s()).await? {
            return Ok(Some(Principal {
                label: s.subject.clone(),
                subject: s.subject,
                role: s.role,
                estate: s.estate_id,
                may_create_clusters: false,
                may_sync_services: false,
                clusters: None,
                via: Via::Session {
                    id_hash,
                    csrf: s.csrf,
                },
            }));
        }
        // An expired or unknown cookie: carry on as anonymous; public
        // routes still work and the rest answer 401.
    }
    Ok(None)
}

/// The per-route check: the declared access, and for a token scoped to
/// one estate, that the route is under that estate (or lists estates,
/// which the handler filters).
pub async fn require(
    State(access): State<Access>,
    caller: Caller,
    req: Request,
    next: Next,
) -> Response {
    if access == Access::Public {
        return next.run(req).await;
    }
    let Some(p) = &caller.0 else {
        return ApiError::Unauthenticated.into_response();
    };
    if !access.granted_to(p.role) {
        let needs = match access {
            Access::Observe => "an agent token or the operator role".to_string(),
            other => format!("the {} role", other.as_str()),
        };
        return ApiError::Forbidden(format!(
            "this needs {needs}; you are signed in as {} ({})",
            p.subject,
            p.role.as_str()
        ))
        .into_response();
    }
    if let Some(scope) = &p.estate {
        let path = req.uri().path();
        let allowed = match path.strip_prefix("/api/estates/") {
            Some(rest) => rest.split('/').next() == Some(scope.as_str()),
            None => path == "/api/estates" && req.method() == Method::GET || path == "/api/session",
        };
        if !allowed {
            return ApiError::Forbidden(format!(
                "this token is scoped to estate {scope:?} and may not use {path}"
            ))
            .into_response();
        }
    }
    next.run(req).await
}

/// The address a request came from: the socket's peer, or (only when an
/// operator said a proxy in front can be trusted) the last address that
/// proxy appended to `X-Forwarded-For`. Never the first: a client can
/// write anything there.
pub fn client_addr(req_headers: &HeaderMap, peer: &Peer, trust_forwarded: bool) -> IpAddr {
    if trust_forwarded {
        // The last header line, then its last comma-separated entry.
        let last = req_headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .next_back()
            .and_then(|v| v.rsplit(',').map(str::trim).find(|s| !s.is_empty()));
        if let Some(ip) = last.and_then(|s| s.parse::<IpAddr>().ok()) {
            return ip;
        }
    }
    peer.0
        .map(|a| a.ip())
        .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED))
}

/// The socket peer, when the server was started with connect info (tests
/// driving the router directly have none: they share one bucket).
#[derive(Clone, Copy, Debug)]
pub struct Peer(pub Option<SocketAddr>);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Peer {
    type Rejection = std::convert::Infallible;
    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Peer, Self::Rejection> {
        Ok(Peer(
            parts
                .extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|c| c.0),
        ))
    }
}

/// A token bucket per client address for the credential endpoints.
///
/// Per process: with several replicas an attacker gets one budget per
/// replica, which still turns an online guessing attack on 256-bit tokens
/// or Argon2-hashed passwords from hopeless into more hopeless.
#[derive(Clone)]
pub struct RateLimiter {
    inner: Arc<Mutex<HashMap<String, Bucket>>>,
    /// Attempts allowed in a burst.
    burst: f64,
    /// Seconds to earn back one attempt.
    refill_s: f64,
}

struct Bucket {
    tokens: f64,
    at: Instant,
}

impl RateLimiter {
    /// 10 attempts at once, then one every 6 s (10 a minute): plenty for a
    /// person who mistypes, useless for guessing.
    pub fn for_credentials() -> RateLimiter {
        RateLimiter {
            inner: Arc::new(Mutex::new(HashMap::new())),
            burst: 10.0,
            refill_s: 6.0,
        }
    }

    /// Posting observations: 30 batches at once (an agent catching up
    /// after an outage), then one every 2 s — thirty times what an agent
    /// on a one-minute interval needs.
    pub fn for_observations() -> RateLimiter {
        RateLimiter {
            inner: Arc::new(Mutex::new(HashMap::new())),
            burst: 30.0,
            refill_s: 2.0,
        }
    }

    /// `n` at once, then one every 60/`n` s: `n` a minute, sustained.
    pub fn per_minute(n: u32) -> RateLimiter {
        let n = f64::from(n.max(1));
        RateLimiter {
            inner: Arc::new(Mutex::new(HashMap::new())),
            burst: n,
            refill_s: 60.0 / n,
        }
    }

    /// Take one attempt for `addr`, or say how long to wait.
    pub fn check(&self, addr: IpAddr) -> Result<(), ApiError> {
        self.check_key(&addr.to_string())
    }

    /// Take one attempt for any key (an address, a token id).
    pub fn check_key(&self, key: &str) -> Result<(), ApiError> {
        let now = Instant::now();
        let mut map = self.inner.lock().expect("rate limiter lock");
        // Forget addresses whose bucket has long been full again, so the
        // map cannot grow without bound under a spray of addresses.
        if map.len() > 10_000 {
            let full_after = Duration::from_secs_f64(self.burst * self.refill_s);
            map.retain(|_, b| now.duration_since(b.at) < full_after);
        }
        let b = map.entry(key.to_string()).or_insert(Bucket {
            tokens: self.burst,
            at: now,
        });
        let earned = now.duration_since(b.at).as_secs_f64() / self.refill_s;
        b.tokens = (b.tokens + earned).min(self.burst);
        b.at = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            Ok(())
        } else {
            let wait = ((1.0 - b.tokens) * self.refill_s).ceil() as u64;
            Err(ApiError::RateLimited {
                retry_after_s: wait.max(1),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_are_ordered() {
        assert!(Role::Viewer < Role::Operator && Role::Operator < Role::Admin);
        for r in [Role::Agent, Role::Viewer, Role::Operator, Role::Admin] {
            assert_eq!(Role::parse(r.as_str()), Some(r));
        }
        assert_eq!(Role::parse("root"), None);
        // An agent may observe and nothing else; a viewer may not observe.
        assert!(Access::Observe.granted_to(Role::Agent));
        assert!(!Access::Observe.granted_to(Role::Viewer));
        assert!(Access::Observe.granted_to(Role::Operator));
        assert!(!Access::Role(Role::Viewer).granted_to(Role::Agent));
    }

    #[test]
    fn passwords_verify_and_wrong_ones_do_not() {
        let h = hash_password("correct horse battery staple");
        assert!(verify_password("correct horse battery staple", &h));
        assert!(!verify_password("correct horse battery stapler", &h));
        assert!(!verify_password("x", "not a phc string"));
    }

    #[test]
    fn limiter_allows_a_burst_then_refuses() {
        let l = RateLimiter::for_credentials();
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        for _ in 0..10 {
            l.check(a).unwrap();
        }
        let err = l.check(a).unwrap_err();
        assert!(matches!(err, ApiError::RateLimited { retry_after_s } if retry_after_s >= 1));
        // Another address has its own budget.
        l.check(b).unwrap();
    }

    #[test]
    fn forwarded_for_is_used_only_when_trusted_and_only_its_last_hop() {
        let mut h = HeaderMap::new();
        h.insert(
            "x-forwarded-for",
            "203.0.113.9, 198.51.100.7".parse().unwrap(),
        );
        let peer = Peer(Some("127.0.0.1:5555".parse::<SocketAddr>().unwrap()));
        assert_eq!(client_addr(&h, &peer, false).to_string(), "127.0.0.1");
        assert_eq!(client_addr(&h, &peer, true).to_string(), "198.51.100.7");
    }

    #[test]
    fn origins_are_ours_by_host_forwarded_host_or_public_url() {
        let mut config = Config::default();
        let mut h = HeaderMap::new();
        h.insert(header::HOST, "berth.local:3000".parse().unwrap());
        let with = |h: &HeaderMap, k: &'static str, v: &str| {
            let mut h = h.clone();
            h.insert(k, v.parse().unwrap());
            h
        };
        assert!(cross_site(&with(&h, "origin", "http://berth.local:3000"), &config).is_none());
        assert!(cross_site(&with(&h, "origin", "http://BERTH.local:3000"), &config).is_none());
        assert!(cross_site(&with(&h, "origin", "http://evil.example"), &config).is_some());
        assert!(cross_site(&with(&h, "origin", "null"), &config).is_some());
        assert!(cross_site(&with(&h, "sec-fetch-site", "cross-site"), &config).is_some());
        assert!(cross_site(&with(&h, "sec-fetch-site", "same-site"), &config).is_some());
        assert!(cross_site(&with(&h, "sec-fetch-site", "same-origin"), &config).is_none());
        // Default ports are the same origin.
        let mut h443 = HeaderMap::new();
        h443.insert(header::HOST, "berth.example.com:443".parse().unwrap());
        assert!(cross_site(&with(&h443, "origin", "https://berth.example.com"), &config).is_none());
        // Behind a proxy that rewrites Host: its X-Forwarded-Host when
        // trusted, or the public URL.
        let proxied = with(&h, "x-forwarded-host", "berth.example.com");
        let from_public = with(&proxied, "origin", "https://berth.example.com");
        assert!(cross_site(&from_public, &config).is_some());
        config.trust_forwarded_for = true;
        assert!(cross_site(&from_public, &config).is_none());
        config.trust_forwarded_for = false;
        config.public_url = Some(public_origin("https://Berth.example.com/app/").unwrap());
        assert_eq!(
            config.public_url.as_deref(),
            Some("https://berth.example.com")
        );
        assert!(cross_site(&from_public, &config).is_none());
        assert!(cross_site(&with(&h, "origin", "http://berth.example.com"), &config).is_some());
    }

    #[test]
    fn the_cookie_is_secure_over_https_only() {
        let mut config = Config::default();
        let mut h = HeaderMap::new();
        assert!(!cookie_secure(&h, &config));
        h.insert("x-forwarded-proto", "https".parse().unwrap());
        assert!(!cookie_secure(&h, &config), "untrusted proxy header");
        config.trust_forwarded_for = true;
        assert!(cookie_secure(&h, &config));
        h.insert("x-forwarded-proto", "https, http".parse().unwrap());
        assert!(!cookie_secure(&h, &config), "the last hop was http");
        config.trust_forwarded_for = false;
        config.public_url = Some("https://berth.example.com".into());
        assert!(cookie_secure(&h, &config));
        config.public_url = Some("http://berth.example.com".into());
        assert!(!cookie_secure(&h, &config));
        config.secure_cookies = true;
        assert!(cookie_secure(&h, &config));
    }

    #[test]
    fn cookies_are_found_among_others() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            "a=1; berth_session=abc; b=2".parse().unwrap(),
        );
        assert_eq!(session_cookie_of(&h).as_deref(), Some("abc"));
    }
}
