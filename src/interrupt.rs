//! SIGINT (Ctrl-C) and SIGTERM (a batch system's time limit) end a run or a sweep
//! cleanly: the engine stops before its next instant, the files are finished
//! whole and summary.json says where the run stopped (`interrupted`); a sweep
//! starts no further cell and removes what its interrupted cells had written.
//! A second signal ends the process at once.
//!
//! Only `lahar run` and `lahar sweep` install the handler ([`install`]); without
//! it the flag is never set and a library caller's run is never interrupted.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

struct Flags {
    /// Set by the first signal.
    raised: Arc<AtomicBool>,
    /// Which signal set it.
    signal: Arc<AtomicUsize>,
}

fn flags() -> &'static Flags {
    static FLAGS: OnceLock<Flags> = OnceLock::new();
    FLAGS.get_or_init(|| Flags { raised: Arc::new(AtomicBool::new(false)), signal: Arc::new(AtomicUsize::new(0)) })
}

/// Routes SIGINT and SIGTERM to the flag (the first of them) and to an immediate
/// exit (the second: 130 or 143, as a shell reports a process the signal killed).
pub fn install() -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let f = flags();
        for (sig, code) in [(SIGINT, 130), (SIGTERM, 143)] {
            // The shutdown goes first: armed by the flag the first signal sets.
            signal_hook::flag::register_conditional_shutdown(sig, code, Arc::clone(&f.raised))?;
            signal_hook::flag::register_usize(sig, Arc::clone(&f.signal), sig as usize)?;
            signal_hook::flag::register(sig, Arc::clone(&f.raised))?;
        }
    }
    Ok(())
}

/// The flag the engine watches ([`lahar_core::engine::Engine::set_stop`]).
pub fn flag() -> Arc<AtomicBool> {
    Arc::clone(&flags().raised)
}

/// True once a signal asked the process to stop.
pub fn requested() -> bool {
    flags().raised.load(Ordering::Relaxed)
}

/// The signal that asked to stop, by name (`SIGINT`, `SIGTERM`), if any.
pub fn signal() -> Option<&'static str> {
    if !requested() {
        return None;
    }
    #[cfg(unix)]
    {
        let s = flags().signal.load(Ordering::Relaxed) as i32;
        if s == signal_hook::consts::SIGTERM {
            return Some("SIGTERM");
        }
    }
    Some("SIGINT")
}

/// The exit code of a process a signal stopped: 128 + the signal's number.
pub fn exit_code() -> u8 {
    match signal() {
        Some("SIGTERM") => 143,
        _ => 130,
    }
}
