//! Checks for the deployment files under `deploy/`: nothing to link
//! against, only tests.
//!
//! `tests/manifests.rs` reads every Kubernetes manifest in
//! `deploy/kubernetes/` into its typed `k8s-openapi` object (refusing
//! unknown kinds and fields the type does not have), checks that each
//! `kustomization.yaml` lists exactly the files beside it, and holds the
//! server, agent and PostgreSQL overlay to what Berth needs: the probes on
//! the declared port, a hardened security context, secrets only through
//! `secretKeyRef`, one writer on SQLite, read-only RBAC for the agent. It
//! also checks `deploy/Dockerfile` against the workspace (the wasm-bindgen
//! version, the `bundle` feature, a non-root user). When `kubectl` is on
//! the path it renders each kustomization and checks the result too.
