//! lahar-traces
