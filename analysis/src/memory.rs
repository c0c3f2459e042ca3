//! The allocator settings of a batch analysis, and giving freed memory back. The `shepherd`
//! binary allocates with mimalloc; a one-shot analysis loads a trace, builds large tables and
//! frees them phase after phase, so how soon freed memory goes back to the OS decides its
//! peak. The CLI and the pipeline benchmark call the same functions, so the benchmark's
//! figures are the command's.

/// `mi_option_purge_delay` in mimalloc's `mi_option_t` (the same index in v2 and v3; the
/// crate exports no constant for it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// How long freed memory stays resident before mimalloc returns it during a batch analysis.
/// mimalloc's default (1 s) outlasts a whole `shepherd races` run, so nothing freed was ever
/// returned; 0 and 10 ms peak the same (`cargo bench -p shepherd-analysis --bench pipeline`).
const ANALYSIS_PURGE_DELAY_MS: std::ffi::c_long = 10;

/// Sets up the allocator for a one-shot analysis that loads a trace, builds large tables and
/// frees them phase after phase (`shepherd races`, `policy covers`): peak resident memory
/// then follows what is live rather than everything ever allocated. Call it before the trace
/// is loaded, in a process that does nothing else afterwards: it holds for the whole process.
///
/// - Transparent huge pages off for the process: mimalloc advises huge pages on its 1 GiB
///   arena, so every touched 2 MiB counted whole and freed memory could not be returned in
///   smaller pieces (wide 115 000-action page: 124–133 MB → 104–107 MB peak). 4 KiB pages
///   cost page faults (with the purge below, 0.02–0.1 s of CPU on that page), but huge
///   pages were not reliably faster: on a busy machine the kernel sometimes spent 0.3–0.45 s
///   of system time per run assembling them. Children inherit the setting; these commands
///   start none.
/// - Freed memory returned after 10 ms instead of one second (→ 95 MB).
pub fn for_batch_analysis() {
    // SAFETY: PR_SET_THP_DISABLE only sets a flag on this process; a kernel without it
    // returns an error, which changes nothing.
    #[cfg(target_os = "linux")]
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
    // SAFETY: mi_option_set only stores the option; mimalloc reads the delay when it purges.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, ANALYSIS_PURGE_DELAY_MS) };
}

/// Returns what this thread's heap has freed to the OS now. The analysis calls it before
/// another thread starts allocating: a thread allocates from its own heap, so memory freed
/// on this thread but not returned yet (within the purge delay) would still count
/// while the other thread fills new pages. (On the pipeline bench's pages its effect on the
/// peak was within the run-to-run spread of 1-2 MB.) The proxy's idle workers call it too.
pub fn release_freed() {
    // SAFETY: mi_collect has no preconditions; it only touches the calling thread's heap and
    // the allocator's own arenas.
    unsafe { libmimalloc_sys::mi_collect(true) };
}

#[cfg(test)]
mod tests {
    /// `MI_OPTION_PURGE_DELAY` is an index into mimalloc's option table: a renumbering in a
    /// later mimalloc would set another option. Only the purge delay defaults to 1000 (ms).
    /// (No test of this crate calls `for_batch_analysis`, which would change the value.)
    #[test]
    fn the_purge_delay_index_names_the_purge_delay() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            return;
        }
        // SAFETY: mi_option_get only reads the option.
        let value = unsafe { libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY) };
        assert_eq!(value, 1000);
    }
}
