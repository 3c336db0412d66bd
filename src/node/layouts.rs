//! Layouts by name, as every SQL function that takes one reads it (`id_timestamp(id, layout)`,
//! `id_decode`, the ranges, and the bounds a free `created_at` adds): a preset or a spec, with
//! the same errors everywhere: 42704 for a name that is no layout, 22023 for a spec that does not
//! add up.
use pg_idgen_core::layout::{Layout, LayoutError};
use pgrx::PgSqlErrorCode;

use crate::pg::backend_local::BackendLocal;
use crate::pg::errors::{not_null, IdError};

/// The layout named last, parsed: a query that decodes many rows with one layout parses it once.
static LAST_NAMED: BackendLocal<Option<(String, Layout)>> = BackendLocal::new(None);

/// A layout by name (a preset, or a full spec string like `idgen.layout` takes).
pub fn layout_named(name: Option<&str>) -> Result<Layout, IdError> {
    let name = name.ok_or_else(|| not_null("layout must not be NULL"))?;
    let cached = LAST_NAMED.with(|last| {
        last.as_ref()
            .filter(|(n, _)| n == name)
            .map(|(_, l)| l.clone())
    });
    if let Some(l) = cached {
        return Ok(l);
    }
    let l = parse_named(name)?;
    LAST_NAMED.with(|last| *last = Some((name.to_string(), l.clone())));
    Ok(l)
}

/// `f` with the layout named last, if its name is `name` (the bare path of a decoder: None,
/// never a panic, when that is not the layout at hand or the value is in use).
#[inline(always)]
pub fn with_last_named<R>(name: &[u8], f: impl FnOnce(&Layout) -> Option<R>) -> Option<R> {
    LAST_NAMED
        .try_with(|last| {
            last.as_ref()
                .filter(|(n, _)| n.as_bytes() == name)
                .and_then(|(_, l)| f(l))
        })
        .flatten()
}

fn parse_named(name: &str) -> Result<Layout, IdError> {
    Layout::parse(name).map_err(|e| {
        // An unknown name is a missing object; a spec that does not add up is a bad value.
        let code = match e {
            LayoutError::UnknownPreset(_) => PgSqlErrorCode::ERRCODE_UNDEFINED_OBJECT,
            LayoutError::Invalid(_) => PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
        };
        IdError::new(code, format!("layout \"{name}\": {e}"))
            .hint("SELECT name FROM idgen.layouts lists the named layouts; a spec such as 'twitter epoch=2024-01-01' also works.")
    })
}

/// The node's own layout, as `idgen.layout` set it at server start.
pub fn node_layout() -> &'static Layout {
    &super::generator::node().layout
}

/// The node's layout as an operator would write it (`Layout::label`), made once per backend:
/// the layout is fixed until a restart, and its label compares it with every preset.
pub fn node_layout_label() -> &'static str {
    static LABEL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    LABEL.get_or_init(|| node_layout().label())
}
