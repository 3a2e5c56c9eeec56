//! Tuning of glibc's malloc for a run: large blocks mapped on their own, so each stage's large
//! lists go back to the system when dropped, and free heap pages given back between passes.
//! Other allocators are left as they are. It lives with the engine, not the binary, so a
//! program that embeds the library (the Python package) gets the same peak memory.

/// Has glibc's malloc map every block of 128 KiB or more on its own and unmap it when freed.
/// By default it raises that threshold to the size of each such block freed (up to 32 MiB),
/// after which the large lists that each stage makes and drops (key ranges, candidate keys,
/// pairs) come from the heap, and their memory stays with the process for good.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(super) fn give_back_large_blocks() {
    use std::ffi::c_int;
    const M_MMAP_THRESHOLD: c_int = -3;
    extern "C" {
        fn mallopt(param: c_int, value: c_int) -> c_int;
    }
    // SAFETY: mallopt only sets a tuning parameter of malloc, and any threshold is valid.
    unsafe {
        mallopt(M_MMAP_THRESHOLD, 128 << 10);
    }
}

/// Other allocators are left as they are.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(super) fn give_back_large_blocks() {}

/// Has glibc's malloc give back to the system every whole page of its heaps that is free.
/// Shingle sets and other per-document lists are small blocks on the heap; when many are freed
/// (the page sets once counted, the keys a set leaves out, the batches once ordered), the holes
/// they leave between the sets still held stay with the process unless trimmed.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(crate) fn give_back_free_pages() {
    extern "C" {
        fn malloc_trim(pad: usize) -> std::ffi::c_int;
    }
    // SAFETY: malloc_trim only returns free memory of malloc's own heaps to the system.
    unsafe {
        malloc_trim(0);
    }
}

/// Other allocators are left as they are.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn give_back_free_pages() {}
