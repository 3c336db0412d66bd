//! What PostgreSQL's "permission denied for ..." messages name: the words the privilege hint of
//! the pgrx layer (src/pg/privilege_hint.rs) reads to find the object, and whether it is a table
//! or view.

/// Whether a privilege error's message is about a table or view (`permission denied for table
/// x`, `... for view x`, `... for materialized view x`), whose name alone does not say whose.
pub fn about_relation(message: &str) -> bool {
    let mut words = message.trim_end().rsplit(' ');
    words.next();
    matches!(words.next(), Some("table" | "view"))
}

/// The object a privilege error names: the last word of its message, without quotes.
pub fn object_of(message: &str) -> Option<&str> {
    let last = message.trim_end().rsplit(' ').next()?;
    let name = last.trim_matches('"');
    (!name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::{about_relation, object_of};

    #[test]
    fn object_of_takes_the_last_word() {
        assert_eq!(
            object_of("permission denied for function segment_create"),
            Some("segment_create")
        );
        assert_eq!(
            object_of("permission denied for view \"Odd Name\""),
            Some("Name")
        );
        assert_eq!(
            object_of("permission denied for table segments "),
            Some("segments")
        );
        assert_eq!(object_of(""), None);
    }

    #[test]
    fn tables_and_views_are_told_from_functions() {
        assert!(about_relation("permission denied for table segments"));
        assert!(about_relation("permission denied for view worker_leases"));
        assert!(about_relation("permission denied for materialized view m"));
        assert!(!about_relation(
            "permission denied for function segment_create"
        ));
        assert!(!about_relation("permission denied for sequence s"));
    }
}
