// Leptos views are nested generic types; the Deciders page is deep enough
// to need more than the default 128 levels of type recursion.
#![recursion_limit = "256"]

//! Berth's web application (SPEC §13), in Leptos.
//!
//! The server renders every page's shell (navigation, headings, empty
//! states) with the `ssr` feature; the browser hydrates it with the
//! `hydrate` feature and does the rest: it loads the estate snapshot once
//! from the REST API and runs `berth-engine`, compiled to WebAssembly, for
//! advice and what-if, then checks its result against the server's by
//! digest. This is the only crate with those two features.
//!
//! Codemap: [`app`] is the shell, router and navigation; [`common`] what
//! the pages share (signed-in state, scenario, gate, error line); [`pages`]
//! one module per page (advice: placement, whatif, deciders; looking:
//! estate, policy, health; onboarding: new_estate, import, admin; login);
//! [`client`] the browser side (HTTP, clock, the loaded snapshot, picked
//! files, the clipboard); [`engine`] the engine calls themselves (pure);
//! [`policy_fields`] the unit and meaning of every policy field;
//! [`cities`] the New estate page's city picker; `ssr` (server only) the
//! router the `berth` server mounts.

pub mod app;
pub mod cities;
pub mod client;
pub mod common;
pub mod engine;
pub mod graph;
pub mod history;
pub mod map;
pub mod outcomes;
pub mod pages;
pub mod policy_fields;
#[cfg(feature = "ssr")]
pub mod ssr;

/// The browser's entry point, called by Leptos's hydration script once
/// the WebAssembly module is loaded.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(app::App);
}
