//! lahar-reports
