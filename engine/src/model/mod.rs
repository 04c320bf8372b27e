//! Model and loading: what an estate *is* and how text becomes one.
//!
//! The estate model ([`estate`]) and its facts ([`fact`], [`class`]); the
//! policy ([`policy`]); the loader ([`load`]) with the readers it stands on
//! — typed JSON that refuses the wrong shape ([`strict`]), the wording of a
//! shape error ([`json_shape`]), the line of a JSON pointer ([`locate`]),
//! the character rules of ids and names ([`chars`]), of user accounts
//! ([`accounts`]) and of Kubernetes names
//! ([`k8s`]); the copies of one workload across clusters ([`copies`]); and
//! synthetic estates of realistic shape for tests and benchmarks ([`gen`]).
//!
//! Start reading at [`estate`], then [`load`].

pub mod accounts;
pub mod chars;
pub(crate) mod class;
pub mod copies;
pub mod estate;
pub mod fact;
pub mod gen;
pub mod json_shape;
pub mod k8s;
pub(crate) mod load;
pub(crate) mod locate;
pub mod policy;
pub mod strict;
