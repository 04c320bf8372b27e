//! The contract of one endpoint beyond its method, path, access and
//! summary (feature `schema`): its tag, parameters, request body and the
//! answer of each status. A body or an answer names the Rust type it
//! carries ([`of`]), so its published schema is the one derived from that
//! type; the names of the shared parts (`Param::Shared("EstateId")`,
//! `Answer::Shared("Forbidden")`) and of schemas no type of this crate
//! writes ([`named`]: the engine's, and the hand-written ones) are
//! resolved, or refused by name, when the server writes the document.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde_json::Value;

/// The contract words of one operation.
#[derive(Default)]
pub struct Words {
    /// The OpenAPI tag (the group in the published document).
    pub tag: &'static str,
    /// In the contract's order: path parameters, then query ones.
    pub params: Vec<Param>,
    pub body: Option<Body>,
    /// Every status the operation may answer, with what it carries.
    pub answers: Vec<(u16, Answer)>,
    /// `x-berth-example-query`: the query the contract test sends.
    pub example_query: Option<&'static str>,
}

/// A schema: a published component, or one written in place.
pub enum Schema {
    /// `#/components/schemas/<name>`.
    Ref(Cow<'static, str>),
    /// A result envelope (`ResultEnvelope`) whose `result` is the named
    /// engine schema.
    Envelope(&'static str),
    Inline(Value),
}

/// The schema derived from the type `T`.
pub fn of<T: JsonSchema>() -> Schema {
    Schema::Ref(T::schema_name())
}

/// A published schema no type of this crate writes (the engine's results,
/// the hand-written ones), by name.
pub fn named(name: &'static str) -> Schema {
    Schema::Ref(Cow::Borrowed(name))
}

/// [`Schema::Envelope`].
pub fn envelope(result: &'static str) -> Schema {
    Schema::Envelope(result)
}

/// A parameter: a shared one (`#/components/parameters/<name>`) or one
/// of this operation alone, as its OpenAPI object.
pub enum Param {
    Shared(&'static str),
    Inline(Value),
}

/// A request body.
pub enum Body {
    /// `#/components/requestBodies/<name>`.
    Shared(&'static str),
    /// JSON of `schema`; `extra` holds the media type's examples.
    Json {
        required: bool,
        description: Option<&'static str>,
        schema: Schema,
        extra: Option<Value>,
    },
}

/// The answer of one status.
pub enum Answer {
    /// `#/components/responses/<name>`.
    Shared(&'static str),
    /// No body.
    Empty(&'static str),
    /// JSON of `schema`; `extra` holds the media type's examples.
    Json {
        description: &'static str,
        schema: Schema,
        extra: Option<Value>,
    },
    /// Anything else (headers, several content types), as its OpenAPI
    /// object.
    Raw(Value),
}
