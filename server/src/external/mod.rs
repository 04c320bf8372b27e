//! External deciders (SPEC §9): HTTP services Berth sends the schema-1
//! request to. [`signing`] signs those requests and holds the reference
//! verifier; the contract is `docs/decider-webhook.openapi.yaml`.

pub mod signing;
