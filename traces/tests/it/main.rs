//! Integration tests of the trace importers, on the real samples in
//! `examples/traces` (copies of the team's real-trace samples) and on files written in the same formats.

mod canonical;
mod common;
mod helios;
mod openb;
mod pai;
mod philly;
mod robust;
mod scale;
mod swf;
