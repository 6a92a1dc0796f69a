//! Time profiling blueprints (Bergel, Robbes and Binder, "Visualizing dynamic
//! metrics with profiling blueprints", TOOLS 2010; the Spy paper, section 4.2):
//! the model a blueprint profiler (Spy's `BlueprintProfiler`) fills, and its
//! pictures.
//!
//! A [`Blueprint`] mirrors the profiled packages: classes (with their superclass)
//! holding methods, each with its time (inclusive and self, in milliseconds, from
//! the sampling profiler), its executions and sends (exact, from the counting
//! profiler), whether every call answered the same object (a caching candidate,
//! drawn gray) and whether no call changed its receiver's fields (likely free of
//! side effects), with its blocks (their time their own, not the method that
//! created them); and the calls between them, with their exact counts.
//!
//! Two pictures: the **structural** blueprint (classes in their inheritance tree,
//! methods as boxes inside them) and the **behavioral** one (the call graph,
//! methods as boxes, calls as arrows, callers above callees). In both, a method
//! box's height is its time and its width its number of executions, its
//! blocks drawn as boxes of their own inside its frame. Writers:
//! [`model::to_text`] (a ranking and the calls), JSON ([`Blueprint::to_json`]),
//! [`svg`] (a standalone picture) and [`html`] (a page with the picture, its
//! legend and the numbers of the method under the pointer); [`layout`] places
//! boxes (rows, trees, layered graphs) for them and for the coverage blueprint.

mod format;
pub mod html;
pub mod layout;
pub mod model;
pub mod svg;

pub use format::BlueprintFormat;
pub use model::{Blueprint, BlueprintBlock, BlueprintClass, BlueprintMethod, Call, Kind, VERSION};
