//! Structured results of the queries, for JSON output (with the `serde` feature).

#[cfg(feature = "serde")]
use serde::Serialize;

/// The info header as the queries print it.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize))]
pub struct RecorderInfo {
    /// Header version.
    pub version: u16,
    /// Map name (text up to the first zero byte).
    pub map: String,
    /// Unix seconds when the recorder started.
    pub date: i64,
    /// The `Date:` text: `MM/DD/YY HH:MM:SS` in the query's time zone.
    pub date_text: String,
}

/// What `show_recorder_file_info` without `show_all` reports: the header, the frames with
/// events, and the totals.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize))]
pub struct FileInfo {
    /// The info header.
    pub info: RecorderInfo,
    /// Name of the build whose query was reproduced (see [`crate::Flavour::name`]).
    pub flavour: String,
    /// Frames that hold events, in file order.
    pub frames_with_events: Vec<FrameEvents>,
    /// Id of the last frame (`Frames:` line).
    pub frames: u64,
    /// Elapsed seconds of the last frame (`Duration:` line).
    pub duration: f64,
}

/// The events of one frame.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize))]
pub struct FrameEvents {
    /// Frame id.
    pub frame: u64,
    /// Seconds since the first frame.
    pub elapsed: f64,
    /// Actors created.
    pub created: Vec<ActorCreated>,
    /// Ids of actors destroyed.
    pub destroyed: Vec<u32>,
    /// Actors attached to parents.
    pub parented: Vec<Parenting>,
    /// Collisions.
    pub collisions: Vec<CollisionEvent>,
    /// Weather records (newest ue4-dev only): the 14 values in file order.
    pub weathers: Vec<[f64; 14]>,
}

/// One `Create` line and its attributes.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize))]
pub struct ActorCreated {
    /// Actor id.
    pub id: u32,
    /// Blueprint id.
    pub blueprint: String,
    /// Actor type byte (0 other, 1 vehicle, 2 walker, 3 traffic light, 4 traffic sign,
    /// 5 sensor from 0.9.12).
    pub actor_type: u8,
    /// Spawn location in centimetres.
    pub location: [f64; 3],
    /// Blueprint attributes, `(id, value)`, in file order.
    pub attributes: Vec<(String, String)>,
}

/// One `Parenting` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize))]
pub struct Parenting {
    /// Child actor id.
    pub child: u32,
    /// Parent actor id.
    pub parent: u32,
}

/// One `Collision id` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize))]
pub struct CollisionEvent {
    /// Collision counter.
    pub id: u32,
    /// First actor (4294967295: not an actor, 0.9.13+).
    pub actor1: u32,
    /// Second actor.
    pub actor2: u32,
    /// The first actor's `role_name` is `hero`.
    pub actor1_hero: bool,
    /// The second actor's `role_name` is `hero`.
    pub actor2_hero: bool,
}

/// What `show_recorder_collisions` reports.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize))]
pub struct CollisionReport {
    /// The info header.
    pub info: RecorderInfo,
    /// Name of the build whose query was reproduced.
    pub flavour: String,
    /// The filter's first category.
    pub type1: char,
    /// The filter's second category.
    pub type2: char,
    /// One row per collision that starts (continued contacts are not repeated).
    pub rows: Vec<CollisionRow>,
    /// Id of the last frame.
    pub frames: u64,
    /// Elapsed seconds of the last frame.
    pub duration: f64,
}

/// One row of the collision table.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize))]
pub struct CollisionRow {
    /// Seconds since the first frame.
    pub time: f64,
    /// Category of the first actor (`o v w t h a`, `?` for unknown types).
    pub type1: char,
    /// Category of the second actor.
    pub type2: char,
    /// First actor id.
    pub actor1: u32,
    /// First actor's blueprint id (empty when unknown).
    pub name1: String,
    /// Second actor id.
    pub actor2: u32,
    /// Second actor's blueprint id.
    pub name2: String,
}

/// What `show_recorder_actors_blocked` reports.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize))]
pub struct BlockedReport {
    /// The info header.
    pub info: RecorderInfo,
    /// Name of the build whose query was reproduced.
    pub flavour: String,
    /// Minimum blocked time, seconds.
    pub min_time: f64,
    /// Minimum distance to count as moving, centimetres.
    pub min_distance: f64,
    /// Rows in output order: longest duration first, ties in the order CARLA finds them.
    pub rows: Vec<BlockedRow>,
    /// Id of the last frame.
    pub frames: u64,
    /// Elapsed seconds of the last frame.
    pub duration: f64,
}

/// One row of the blocked-actor table.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize))]
pub struct BlockedRow {
    /// Seconds since the first frame when the actor stopped.
    pub time: f64,
    /// Actor id.
    pub id: u32,
    /// Blueprint id (empty when unknown).
    pub blueprint: String,
    /// Seconds the actor stayed within `min_distance`.
    pub duration: f64,
}
