//! The server side: Leptos options and the page router that `berth serve`
//! mounts as the fallback of its API router.

use axum::Router;
use leptos::config::LeptosOptions;
use leptos_axum::{generate_route_list, LeptosRoutes};

use crate::app::{shell, App};

/// The name of the JavaScript glue and WebAssembly module that
/// `scripts/build-web.sh` writes into `<site root>/pkg/`: `berth.js` and
/// `berth_bg.wasm` (wasm-bindgen's own names). Leptos's hydration script
/// asks for `<output_name>_bg.wasm` when the server was compiled without
/// `LEPTOS_OUTPUT_NAME`, which is how we build it: no environment needed.
pub const OUTPUT_NAME: &str = "berth";

/// Leptos options set in code (no `Cargo.toml` metadata, no environment):
/// the site root is where the built bundle, styles and static files are.
pub fn options(site_root: &str) -> LeptosOptions {
    LeptosOptions::builder()
        .output_name(OUTPUT_NAME)
        .site_root(site_root)
        .site_pkg_dir("pkg")
        .build()
}

/// Every page route (`/`, `/whatif`, `/deciders`, `/estate`, `/policy`,
/// `/health`, `/login`), server-side rendered. `missing_bundle`, when the
/// server has no web bundle to send, is shown at the top of every page
/// (which then cannot hydrate), saying what to run.
pub fn pages(site_root: &str, missing_bundle: Option<String>) -> Router {
    let options = options(site_root);
    let routes = generate_route_list(App);
    Router::new()
        .leptos_routes(&options, routes, {
            let options = options.clone();
            move || shell(options.clone(), missing_bundle.clone())
        })
        .with_state(options)
}
