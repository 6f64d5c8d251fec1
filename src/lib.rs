//! lahar
