//! Offline race detection on *Event* traces (EventRacer §3–§5): happens-before graph,
//! chain-decomposition vector clocks, race candidates, single and multi coverage, filters, and
//! the text / JSON / HTML reports.
