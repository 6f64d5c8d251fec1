//! # lahar-traces
//!
//! Importers of recorded cluster traces (Microsoft Philly, Alibaba PAI and openb,
//! SenseTime Helios, the Standard Workload Format) and lahar's own canonical trace
//! CSV. Each importer streams rows into [`JobSpec`](lahar_core::job::JobSpec)s with a
//! documented, counted skip policy for dirty rows.
//!
//! The importers are not written yet; the crate exists so the workspace layout matches
//! the design and other crates can name it.
