//! Executable models of pg_idgen's protocols, explored exhaustively by the stateright model
//! checker: every interleaving of a small system, including the ones no probe thought of. Each
//! model uses the core's own decision functions where they are pure, and says what it assumes of
//! the SQL and pgrx glue it writes out. Each has a control: the protocol without its fix, on
//! which the checker must find the repeat the fix closes.

mod lease;
mod mark;
mod segment;
