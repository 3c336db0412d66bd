//! Lists of parse and plan nodes, read and built.
use pgrx::pg_sys;

/// The pointers of a List's cells (none for NULL, the empty List).
///
/// SAFETY: `list` is a List of pointers, or NULL.
pub unsafe fn cells(list: *mut pg_sys::List) -> Vec<*mut std::ffi::c_void> {
    if list.is_null() {
        return Vec::new();
    }
    // SAFETY: a valid List of `length` cells.
    unsafe {
        (0..(*list).length as usize)
            .map(|i| (*(*list).elements.add(i)).ptr_value)
            .collect()
    }
}

/// A List of the pointers given, in the current memory context (NULL for none).
///
/// SAFETY: in a backend, with a memory context to allocate in.
pub unsafe fn list_of<T>(items: &[*mut T]) -> *mut pg_sys::List {
    let mut list = std::ptr::null_mut();
    for &item in items {
        // SAFETY: lappend takes NULL for the empty list and returns the list it grew.
        list = unsafe { pg_sys::lappend(list, item.cast()) };
    }
    list
}
