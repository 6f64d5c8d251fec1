//! lahar-workloads
