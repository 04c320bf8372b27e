//! Every endpoint of Berth's HTTP API, declared once: its operation id,
//! method, path template, path and query parameters, who may call it, its
//! summary, and (feature `schema`) its contract — the description (the
//! doc comment), parameters, request body and the answer of every status,
//! each naming the Rust type it carries.
//!
//! Read by:
//! - the server's router (`server/src/http/route.rs`: a route is an
//!   [`Endpoint`] and its handler, nothing else);
//! - every client (the web app, the CLI's remote commands, the agent and
//!   the observation client), through the path builder of each endpoint
//!   ([`get_estate`]`(id)` and so on), which percent-encodes every path
//!   segment and query value the same way ([`encode`]), so no client
//!   writes a path by hand;
//! - the published contract, `docs/api.openapi.json`
//!   (`server/src/http/openapi/`), which adds the shared words (the
//!   introduction, the shared parameters, answers and schemas) and the
//!   schemas derived from the types.
//!
//! Why our own declaration over `aide` or `utoipa`: the route table was
//! already ours (the router, the access check and the role walk of the
//! tests read it), the paths have to be built by the web app in
//! WebAssembly where the bundle is at its size budget (this module adds
//! no dependency; the contract parts compile only with `schema`), and the
//! document must stay byte-stable with numbers written without exponents,
//! which both would have taken writing around. Those crates declare the
//! contract on the handler, which the browser and the CLI cannot call; a
//! table here is what all of them can read.

/// The endpoints of one group: for each, its doc comment (the contract's
/// description), then
/// `CONST = operationId, builder(path params) ["query", …]: METHOD "/path", Access, "summary" { words }`,
/// making the constant `CONST`, the path builder `builder`, and the
/// group's list. The words are the fields of [`words::Words`], compiled
/// only with the feature `schema`.
macro_rules! endpoints {
    (
        group $group:ident;
        $(
            $(#[doc = $doc:literal])*
            $konst:ident = $op:ident, $builder:ident($($p:ident),*) $([$($q:literal),*])?:
                $method:ident $path:literal, $access:ident, $summary:literal
                { $($words:tt)* }
        )*
    ) => {
        #[allow(unused_imports)]
        use $crate::endpoint::{ApiPath, Endpoint, Method};

        $(
            $(#[doc = $doc])*
            pub const $konst: Endpoint = Endpoint {
                operation_id: stringify!($op),
                method: Method::$method,
                path: $path,
                path_params: &[$(stringify!($p)),*],
                query: &[$($($q),*)?],
                access: endpoints!(@access $access),
                summary: $summary,
                #[cfg(feature = "schema")]
                description: &[$($doc),*],
                #[cfg(feature = "schema")]
                words: || {
                    #[allow(unused_imports)]
                    use $crate::endpoint::words::*;
                    #[allow(unused_imports)]
                    use $crate::*;
                    #[allow(unused_imports)]
                    use serde_json::json;
                    Words { $($words)* }
                },
            };

            #[doc = concat!("The path of `", stringify!($method), " ", $path, "` (", stringify!($op), ").")]
            pub fn $builder($($p: &str),*) -> ApiPath {
                ApiPath::fill($path, &[$($p),*], &[$($($q),*)?])
            }
        )*

        /// This group's endpoints, in the route table's order.
        pub const $group: &[&Endpoint] = &[$(&$konst),*];
    };
    (@access Public) => { $crate::endpoint::Access::Public };
    (@access Observe) => { $crate::endpoint::Access::Observe };
    (@access $role:ident) => { $crate::endpoint::Access::Role($crate::Role::$role) };
}

#[cfg(feature = "schema")]
pub mod words;

mod deciders;
mod estates;
mod facts;
mod notify;
mod ops;
mod outcomes;
mod policy;
mod results;
mod reviews;
mod scenarios;
mod session;

pub use deciders::*;
pub use estates::*;
pub use facts::*;
pub use notify::*;
pub use ops::*;
pub use outcomes::*;
pub use policy::*;
pub use results::*;
pub use reviews::*;
pub use scenarios::*;
pub use session::*;

use crate::Role;

/// An HTTP method an endpoint answers.
#[allow(clippy::upper_case_acronyms)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    GET,
    POST,
    PUT,
    DELETE,
}

impl Method {
    pub const fn as_str(self) -> &'static str {
        match self {
            Method::GET => "GET",
            Method::POST => "POST",
            Method::PUT => "PUT",
            Method::DELETE => "DELETE",
        }
    }
}

/// Who may call an endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Anyone, signed in or not.
    Public,
    /// At least this role.
    Role(Role),
    /// Posting observations: an agent token, or an operator or above.
    Observe,
}

/// One endpoint. The constants ([`GET_ESTATE`], …) are made by
/// `endpoints!` in this module's files, one file per server module.
pub struct Endpoint {
    /// The OpenAPI `operationId`.
    pub operation_id: &'static str,
    pub method: Method,
    /// The path template, parameters in braces (`/api/estates/{id}`).
    pub path: &'static str,
    /// The names in the template's braces, in order.
    pub path_params: &'static [&'static str],
    /// The query parameters it reads.
    pub query: &'static [&'static str],
    pub access: Access,
    /// One line, for the contract and the route listing.
    pub summary: &'static str,
    /// The contract's description: the doc comment's lines.
    #[cfg(feature = "schema")]
    pub description: &'static [&'static str],
    /// The contract's parameters, body and answers.
    #[cfg(feature = "schema")]
    pub words: fn() -> words::Words,
}

/// Every endpoint, by group, in the order of `docs/api.openapi.json`'s
/// groups (the server's route table lists them in this order).
pub const GROUPS: &[&[&Endpoint]] = &[
    OPS, SESSION, ESTATES, FACTS, POLICY, RESULTS, REVIEWS, OUTCOMES, SCENARIOS, DECIDERS, NOTIFY,
];

/// Every endpoint.
pub fn all() -> impl Iterator<Item = &'static Endpoint> {
    GROUPS.iter().flat_map(|g| g.iter().copied())
}

/// A path built for one endpoint: its template with every parameter
/// percent-encoded, and any query parameters it reads, encoded likewise.
/// Reads as `&str` (`Deref`), so it goes wherever a path does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiPath {
    text: String,
    query: &'static [&'static str],
    has_query: bool,
}

impl ApiPath {
    /// `template` with its brace parameters replaced, in order, by `args`.
    fn fill(template: &'static str, args: &[&str], query: &'static [&'static str]) -> ApiPath {
        let mut text = String::with_capacity(template.len() + 16);
        let mut args = args.iter();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            text.push_str(&rest[..open]);
            let close = rest[open..].find('}').map_or(rest.len(), |c| open + c + 1);
            if let Some(arg) = args.next() {
                text.push_str(&encode(arg));
            }
            rest = &rest[close..];
        }
        text.push_str(rest);
        ApiPath {
            text,
            query,
            has_query: false,
        }
    }

    /// The path with `name=value` added to its query, the value encoded.
    /// `name` must be one of the endpoint's query parameters (checked in
    /// debug builds; the server refuses an unknown one with `400`).
    pub fn query(mut self, name: &str, value: &str) -> ApiPath {
        debug_assert!(
            self.query.contains(&name),
            "{name} is not a query parameter of {}",
            self.text
        );
        self.text.push(if self.has_query { '&' } else { '?' });
        self.has_query = true;
        self.text.push_str(name);
        self.text.push('=');
        self.text.push_str(&encode(value));
        self
    }

    /// [`ApiPath::query`] when there is a value.
    pub fn query_opt(self, name: &str, value: Option<&str>) -> ApiPath {
        match value {
            Some(v) => self.query(name, v),
            None => self,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl std::ops::Deref for ApiPath {
    type Target = str;
    fn deref(&self) -> &str {
        &self.text
    }
}

impl std::fmt::Display for ApiPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl From<ApiPath> for String {
    fn from(p: ApiPath) -> String {
        p.text
    }
}

/// Percent-encoding of one path segment or query value: every byte but
/// the unreserved ones (RFC 3986: letters, digits, `-`, `_`, `.`, `~`).
pub fn encode(v: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(v.len());
    for b in v.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => {
                out.push('%');
                out.push(HEX[(b >> 4) as usize] as char);
                out.push(HEX[(b & 15) as usize] as char);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_template_names_its_declared_parameters_once() {
        let mut seen = std::collections::BTreeSet::new();
        for e in all() {
            let named: Vec<&str> = e
                .path
                .split('{')
                .skip(1)
                .map(|s| s.split('}').next().unwrap_or(""))
                .collect();
            assert_eq!(named, e.path_params, "{}", e.operation_id);
            assert!(seen.insert(e.operation_id), "{} twice", e.operation_id);
            assert!(
                seen.insert(Box::leak(
                    format!("{} {}", e.method.as_str(), e.path).into_boxed_str()
                )),
                "{} {} twice",
                e.method.as_str(),
                e.path
            );
        }
        assert_eq!(all().count(), 60);
    }

    #[test]
    fn paths_encode_every_segment_and_query_value() {
        assert_eq!(&*get_estate("sample"), "/api/estates/sample");
        assert_eq!(
            &*get_scenario("a b", "x/y?z"),
            "/api/estates/a%20b/scenarios/x%2Fy%3Fz"
        );
        assert_eq!(
            get_advice("s")
                .query("why", "true")
                .query("now", "2026-11-30T04:05:00+01:00")
                .as_str(),
            "/api/estates/s/advice?why=true&now=2026-11-30T04%3A05%3A00%2B01%3A00"
        );
        assert_eq!(
            create_estate().query_opt("id", None).as_str(),
            "/api/estates"
        );
        assert_eq!(encode("é~.-_"), "%C3%A9~.-_");
        assert_eq!(String::from(list_estates()), "/api/estates");
    }
}
