//! The limits the daemon sets on its process: open files and malloc arenas.
//!
//! Open files: every journal, serial port and client
//! connection takes a file descriptor, and the soft limit a process starts
//! with (often 1,024) is far below what a hall with hundreds of boards,
//! dashboards and broadcast clients needs; at the limit the server can
//! accept no connection at all. The daemon raises the soft limit to the
//! hard one (which only an administrator can raise) when it starts.

/// Raises the soft limit of open files to the hard limit, and says in the
/// log what it is, with a warning when it is below what the HTTP server
/// may use.
pub fn raise_open_files() {
    let Some(limit) = raise() else {
        return;
    };
    let wanted = super::server::MAX_CONNECTIONS as u64 + 1024;
    if limit < wanted {
        tracing::warn!(
            "at most {limit} open files (the hard limit): fewer than the {wanted} the server may use for connections and journals; raise it (ulimit -Hn, or LimitNOFILE= in a systemd unit)"
        );
    } else {
        tracing::debug!("open files: up to {limit}");
    }
}

/// Sets the soft limit to the hard one; returns the limit in force.
#[cfg(unix)]
fn raise() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return None;
    }
    if limit.rlim_cur < limit.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: limit.rlim_max,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: setrlimit only reads the struct it is given.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            limit = raised;
        }
    }
    // rlim_t is u64 on Linux, but not on every Unix.
    #[allow(clippy::useless_conversion)]
    Some(u64::from(limit.rlim_cur))
}

#[cfg(not(unix))]
fn raise() -> Option<u64> {
    None
}

/// Caps glibc's malloc arenas at one per core (at least two). By default
/// glibc gives each thread that meets a locked arena a new one, up to eight
/// per core, and memory freed in one arena is never reused by another:
/// with thousands of boards' tasks moving between the runtime's threads,
/// the daemon kept far more resident than it used (at 5,000 boards, 12 %
/// more in the same run; see docs/performance/load.md). Must run before
/// the process starts any thread: glibc fixes the cap when it first needs
/// a second arena.
pub fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        let arenas = libc::c_int::try_from(cores.max(2)).unwrap_or(libc::c_int::MAX);
        // SAFETY: mallopt only sets a parameter of the allocator; it is
        // called before any other thread exists.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, arenas);
        }
    }
}
