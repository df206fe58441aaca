//! The pipeline commands (tracing, analysis, figures) and their state.
//!
//! This is where the pipeline stages are wired into the shell. Every command
//! named in [`super::specs::SPECS`] already exists in the shell, with `help`,
//! argument checking and completion; registering a handler here makes it do
//! its work instead of reporting that it is not available yet.

use super::Registry;

/// The state the pipeline commands share for one shell session: settings
/// (program, paths, memory kinds) and the results of the steps so far.
///
/// Commands receive it as `&mut Session`; the shell lends it to one command
/// at a time.
#[derive(Debug, Default)]
pub struct Session {}

/// Binds the pipeline commands to their handlers, e.g.
/// `registry.add("memory_stats", memory_stats)`, and may set the completion
/// source of array names with [`Registry::set_name_source`].
///
/// No pipeline command is implemented yet, so this registers nothing.
pub fn register_pipeline(registry: &mut Registry<Session>) {
    let _ = registry;
}
