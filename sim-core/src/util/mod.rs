//! Tools every part of the model uses and none of it owns: integer time
//! (`time`), seeded random streams (`rng`), Kubernetes quantities (`quantity`),
//! typed stores (`store`) and id sets (`id_set`), text and file helpers, Go's sort, located
//! diagnostics. Leaves: they import nothing above them.

pub mod diag;
pub mod files;
pub mod gosort;
pub mod id_set;
pub mod quantity;
pub mod rng;
pub mod store;
pub mod text;
pub mod time;
