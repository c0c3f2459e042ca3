//! Recording store (one SQLite file per recording), HAR 1.2 import/export, and replay request
//! matching (exact, ignore lists, learned request patterns, fuzzy).
