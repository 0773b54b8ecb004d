//! EventAdd (id 2), EventDel (id 3) and EventParent (id 4), and the actor enumerations they use.

use crate::codec::cursor::{Cursor, Put};
use crate::error::Result;
use crate::flavour::{Flavour, VectorWidth};
use crate::packet::Record;
use crate::primitive::{FString, Vector3};
use crate::record::fixed_record;

/// One created actor.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EventAdd {
    /// Recorded actor id.
    pub database_id: u32,
    /// Actor type byte; see [`ActorType::from_byte`].
    pub actor_type: u8,
    /// Spawn location in centimetres.
    pub location: Vector3,
    /// Spawn rotation: roll (X), pitch (Y), yaw (Z) in degrees.
    pub rotation: Vector3,
    /// The actor's blueprint.
    pub description: ActorDescription,
}

/// The blueprint of a created actor.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ActorDescription {
    /// Numeric blueprint id (0 for the spectator and map actors).
    pub uid: u32,
    /// Blueprint id, e.g. `vehicle.tesla.model3`.
    pub id: FString,
    /// Blueprint attributes.
    pub attributes: Vec<ActorAttribute>,
}

/// One blueprint attribute.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ActorAttribute {
    /// Attribute type byte as stored; its meaning depends on the build, see
    /// [`AttributeType::from_byte`].
    pub kind: u8,
    /// Attribute name, e.g. `role_name`.
    pub id: FString,
    /// Attribute value as text, e.g. `hero`.
    pub value: FString,
}

impl Record for EventAdd {
    fn fixed_size(_: VectorWidth) -> Option<usize> {
        None
    }

    fn decode(c: &mut Cursor<'_>) -> Result<Self> {
        let database_id = c.u32()?;
        let actor_type = c.u8()?;
        let location = c.vector()?;
        let rotation = c.vector()?;
        let uid = c.u32()?;
        let id = c.fstring()?;
        let count = usize::from(c.u16()?);
        // Each attribute takes at least 5 bytes, so the reservation is bounded by the body.
        let mut attributes = Vec::with_capacity(count.min(c.remaining() / 5));
        for _ in 0..count {
            attributes.push(ActorAttribute {
                kind: c.u8()?,
                id: c.fstring()?,
                value: c.fstring()?,
            });
        }
        Ok(EventAdd {
            database_id,
            actor_type,
            location,
            rotation,
            description: ActorDescription {
                uid,
                id,
                attributes,
            },
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.put_u32(self.database_id);
        out.put_u8(self.actor_type);
        out.put_vector(&self.location);
        out.put_vector(&self.rotation);
        out.put_u32(self.description.uid);
        out.put_fstring("blueprint id", &self.description.id)?;
        out.put_count_u16("attribute count", self.description.attributes.len())?;
        for a in &self.description.attributes {
            out.put_u8(a.kind);
            out.put_fstring("attribute id", &a.id)?;
            out.put_fstring("attribute value", &a.value)?;
        }
        Ok(())
    }
}

fixed_record! {
    /// One destroyed actor.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct EventDel {
        /// Recorded actor id.
        pub database_id: u32 => "id",
    }
}

fixed_record! {
    /// One actor attached to a parent.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct EventParent {
        /// The child actor.
        pub database_id: u32 => "id",
        /// The parent actor.
        pub database_id_parent: u32 => "parent",
    }
}

/// What an EventAdd actor type byte means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ActorType {
    /// 0: props, the spectator and anything else.
    Other,
    /// 1.
    Vehicle,
    /// 2: pedestrians.
    Walker,
    /// 3.
    TrafficLight,
    /// 4.
    TrafficSign,
    /// 5 in 0.9.12 and later.
    Sensor,
    /// 6 (0.9.12+) or 5 (before 0.9.12), or any larger byte.
    Invalid,
}

impl ActorType {
    /// Interprets an actor type byte as `flavour` writes it: 5 is Sensor from 0.9.12 on and
    /// INVALID before.
    ///
    /// ```
    /// use recfmt_carla::{ActorType, Flavour};
    /// assert_eq!(ActorType::from_byte(5, Flavour::Carla0912), ActorType::Sensor);
    /// assert_eq!(ActorType::from_byte(5, Flavour::Carla0910), ActorType::Invalid);
    /// ```
    pub fn from_byte(byte: u8, flavour: Flavour) -> Self {
        match byte {
            0 => ActorType::Other,
            1 => ActorType::Vehicle,
            2 => ActorType::Walker,
            3 => ActorType::TrafficLight,
            4 => ActorType::TrafficSign,
            5 if flavour != Flavour::Carla0910 => ActorType::Sensor,
            _ => ActorType::Invalid,
        }
    }

    /// Lower-case name (`other`, `vehicle`, `walker`, `traffic_light`, `traffic_sign`,
    /// `sensor`, `invalid`).
    pub fn name(self) -> &'static str {
        match self {
            ActorType::Other => "other",
            ActorType::Vehicle => "vehicle",
            ActorType::Walker => "walker",
            ActorType::TrafficLight => "traffic_light",
            ActorType::TrafficSign => "traffic_sign",
            ActorType::Sensor => "sensor",
            ActorType::Invalid => "invalid",
        }
    }
}

/// What an attribute type byte means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttributeType {
    /// `true`/`false`.
    Bool,
    /// An integer.
    Int,
    /// A float.
    Float,
    /// Text.
    String,
    /// `r,g,b` colour.
    RgbColor,
    /// A vector (UE5 only).
    Vector,
}

impl AttributeType {
    /// Interprets an attribute type byte. Header version 1 files number the types from 0
    /// (Bool = 0 … RGBColor = 4); version 2 files (newest ue4-dev) from 1 (Bool = 1 …
    /// RGBColor = 5); UE5 numbers from 0 and adds Vector = 5. `None` for other bytes.
    ///
    /// ```
    /// use recfmt_carla::{AttributeType, Flavour};
    /// assert_eq!(AttributeType::from_byte(3, 1, Flavour::Carla0912), Some(AttributeType::String));
    /// assert_eq!(AttributeType::from_byte(5, 2, Flavour::Ue4DevWeather), Some(AttributeType::RgbColor));
    /// assert_eq!(AttributeType::from_byte(5, 1, Flavour::Ue5), Some(AttributeType::Vector));
    /// ```
    pub fn from_byte(byte: u8, header_version: u16, flavour: Flavour) -> Option<Self> {
        const TYPES: [AttributeType; 6] = [
            AttributeType::Bool,
            AttributeType::Int,
            AttributeType::Float,
            AttributeType::String,
            AttributeType::RgbColor,
            AttributeType::Vector,
        ];
        let index = if header_version >= 2 && flavour != Flavour::Ue5 {
            usize::from(byte).checked_sub(1)?
        } else {
            usize::from(byte)
        };
        let max = if flavour == Flavour::Ue5 { 5 } else { 4 };
        if index > max {
            return None;
        }
        TYPES.get(index).copied()
    }
}
