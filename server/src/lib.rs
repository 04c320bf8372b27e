//! The `berth` crate: everything that touches the outside world — files,
//! the clock, the database, HTTP. The pure engine (`berth-engine`) is fed
//! from here and never reaches out on its own.
//!
//! Server codemap, top down (a module imports only modules below it):
//! [`serve`] starts it (configuration, database, seeding, graceful
//! shutdown); [`listen`] accepts connections under their caps and
//! timeouts; [`http`] is the API — `http::routes()` the route table, one
//! module per resource group with its routes declared next to its
//! handlers, `http::app` the router built from them; [`web`] mounts the
//! pages as the router's fallback; [`external`] calls external deciders
//! and runs the advice driver; [`outcomes`] gathers an estate's applied
//! moves for the engine to judge (the outcomes answer, the calibration
//! the Why quotes, notifications of moves that fell short); [`estates`]
//! is the estate service under both (visibility, the parsed estate from
//! cache or database, canonicalising, writes under the estate lock,
//! result envelopes);
//! [`auth`] decides who may do what; [`error`] turns errors (the
//! store's too) into responses; [`store`] holds every SQL statement;
//! [`db`] connects and migrates; [`facts`] applies fact updates to an
//! estate document; [`cache`] keeps parsed estates and finished results;
//! [`metrics`] renders `/metrics`; [`clock`], [`digest`], [`random`] and
//! [`role`] are leaves everything may use.
//!
//! Clients of a Berth server: [`prom_client`] queries Prometheus,
//! [`submit`] posts observation batches (retries, backoff), [`agent`] is
//! the long-running `berth agent` loop.

pub mod agent;
pub mod auth;
pub mod cache;
pub mod changes;
pub mod clock;
pub mod config;
pub mod db;
pub mod digest;
pub mod error;
pub mod estates;
pub mod external;
pub mod facts;
pub mod heavy;
pub mod http;
pub mod import;
pub mod kube_source;
pub mod listen;
pub mod metrics;
pub mod moves;
pub mod outcomes;
pub mod prom_client;
pub mod proofs;
pub mod random;
pub mod retry;
pub mod reviews;
pub mod role;
pub mod scope;
pub mod serve;
pub mod site;
pub mod state;
pub mod store;
pub mod submit;
pub mod web;

pub use config::{Config, DEFAULT_ENGINE_RUNS_PER_MINUTE, DEFAULT_MAX_RESULT_BYTES};
pub use state::AppState;
