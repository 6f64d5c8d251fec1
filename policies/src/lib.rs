//! lahar-policies
