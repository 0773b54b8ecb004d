//! The OpenSCENARIO document, written element by element with quick-xml as the passes
//! deliver its parts: the header, entities and `Init` from the first pass, one
//! `ManeuverGroup` per actor from the later ones, then the end.

use std::io::{self, Write};
use std::path::Path;

use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, Event};

use super::{Actor, Extent, Kind, Pose, Scan, Version, Vertex, level_name, text};
use crate::packet::Weather;

/// A value as an `xsd:double` (Rust prints finite values without exponent; `-0` as `0`).
fn num(v: f64) -> String {
    if v.is_finite() && v != 0.0 {
        format!("{v}")
    } else {
        "0".to_owned()
    }
}

/// The document being written.
pub(crate) struct Document<W: Write> {
    xml: Writer<W>,
    version: Version,
}

impl<W: Write> Document<W> {
    pub(crate) fn new(inner: W, version: Version) -> Self {
        Document {
            xml: Writer::new_with_indent(inner, b' ', 2),
            version,
        }
    }

    pub(crate) fn into_inner(self) -> W {
        self.xml.into_inner()
    }

    fn open(&mut self, name: &str, attrs: &[(&str, &str)]) -> io::Result<()> {
        let mut start = BytesStart::new(name);
        for attr in attrs {
            start.push_attribute(*attr);
        }
        self.xml.write_event(Event::Start(start))
    }

    fn close(&mut self, name: &str) -> io::Result<()> {
        self.xml.write_event(Event::End(BytesEnd::new(name)))
    }

    fn empty(&mut self, name: &str, attrs: &[(&str, &str)]) -> io::Result<()> {
        let mut start = BytesStart::new(name);
        for attr in attrs {
            start.push_attribute(*attr);
        }
        self.xml.write_event(Event::Empty(start))
    }

    /// `override` in 1.2, which deprecates 1.0's `overwrite`.
    fn override_priority(&self) -> &'static str {
        match self.version {
            Version::V1_0 => "overwrite",
            Version::V1_2 => "override",
        }
    }

    /// Everything before the actors' maneuver groups.
    pub(crate) fn begin(&mut self, scan: &Scan, input: &Path) -> io::Result<()> {
        self.xml
            .write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
        self.open("OpenSCENARIO", &[])?;
        let minor = match self.version {
            Version::V1_0 => "0",
            Version::V1_2 => "2",
        };
        let file_name = input
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let map = text(level_name(&scan.map));
        let description = text(&format!(
            "CARLA recording {file_name} on {map}, {} vehicles and walkers",
            scan.actors.len()
        ));
        let date = recfmt_core::unix_to_rfc3339(scan.date.clamp(0, 253_402_300_799));
        self.empty(
            "FileHeader",
            &[
                ("revMajor", "1"),
                ("revMinor", minor),
                ("date", &date),
                ("description", &description),
                ("author", "recfmt"),
            ],
        )?;
        self.empty("ParameterDeclarations", &[])?;
        self.empty("CatalogLocations", &[])?;
        self.open("RoadNetwork", &[])?;
        self.empty("LogicFile", &[("filepath", &map)])?;
        self.empty("SceneGraphFile", &[("filepath", "")])?;
        self.close("RoadNetwork")?;
        self.open("Entities", &[])?;
        for actor in &scan.actors {
            self.entity(actor)?;
        }
        self.close("Entities")?;
        self.open("Storyboard", &[])?;
        self.open("Init", &[])?;
        self.open("Actions", &[])?;
        if let Some((_, weather)) = scan.weather.first() {
            self.open("GlobalAction", &[])?;
            self.environment(weather, &date)?;
            self.close("GlobalAction")?;
        }
        for actor in &scan.actors {
            self.open("Private", &[("entityRef", &actor.name)])?;
            self.open("PrivateAction", &[])?;
            self.open("TeleportAction", &[])?;
            self.position(&actor.first)?;
            self.close("TeleportAction")?;
            self.close("PrivateAction")?;
            self.close("Private")?;
        }
        self.close("Actions")?;
        self.close("Init")?;
        self.open("Story", &[("name", "recording")])?;
        self.open("Act", &[("name", "replay")])?;
        // An act needs a maneuver group: weather changes have theirs, and a recording
        // without actors gets an empty one.
        if scan.weather.len() > 1 || scan.actors.is_empty() {
            self.open(
                "ManeuverGroup",
                &[("maximumExecutionCount", "1"), ("name", "environment")],
            )?;
            self.empty("Actors", &[("selectTriggeringEntities", "false")])?;
            if scan.weather.len() > 1 {
                self.open("Maneuver", &[("name", "weather")])?;
                for (i, (t, weather)) in scan.weather.iter().enumerate().skip(1) {
                    let name = format!("weather_{i}");
                    self.open("Event", &[("name", &name), ("priority", "parallel")])?;
                    self.open("Action", &[("name", &name)])?;
                    self.open("GlobalAction", &[])?;
                    self.environment(weather, &date)?;
                    self.close("GlobalAction")?;
                    self.close("Action")?;
                    self.start_at(&name, *t)?;
                    self.close("Event")?;
                }
                self.close("Maneuver")?;
            }
            self.close("ManeuverGroup")?;
        }
        Ok(())
    }

    fn entity(&mut self, actor: &Actor) -> io::Result<()> {
        self.open("ScenarioObject", &[("name", &actor.name)])?;
        let attribute = |key: &str| {
            actor
                .attributes
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        match actor.kind {
            Kind::Vehicle => {
                let category = match (attribute("base_type"), attribute("number_of_wheels")) {
                    (Some("truck"), _) => "truck",
                    (Some("van"), _) => "van",
                    (Some("bus"), _) => "bus",
                    (Some("bicycle"), _) => "bicycle",
                    (Some("motorcycle"), _) => "motorbike",
                    (_, Some("2")) => "motorbike",
                    _ => "car",
                };
                let mut attrs = vec![
                    ("name", actor.blueprint.as_str()),
                    ("vehicleCategory", category),
                ];
                if self.version == Version::V1_2 {
                    attrs.push(("model3d", actor.blueprint.as_str()));
                }
                self.open("Vehicle", &attrs)?;
                self.empty("ParameterDeclarations", &[])?;
                let extent = actor.extent.unwrap_or(Extent {
                    center: [0.0, 0.0, 0.75],
                    length: 4.5,
                    width: 2.0,
                    height: 1.5,
                });
                self.bounding_box(&extent)?;
                // Not recorded: nominal limits, so that engines do not hold the replay back.
                self.empty(
                    "Performance",
                    &[
                        ("maxSpeed", "69.444"),
                        ("maxAcceleration", "10"),
                        ("maxDeceleration", "10"),
                    ],
                )?;
                let (front, track) = (num(extent.length * 0.3), num(extent.width * 0.85));
                self.open("Axles", &[])?;
                for (axle, x) in [("FrontAxle", front.as_str()), ("RearAxle", "0")] {
                    self.empty(
                        axle,
                        &[
                            ("maxSteering", "0.5"),
                            ("wheelDiameter", "0.6"),
                            ("trackWidth", &track),
                            ("positionX", x),
                            ("positionZ", "0.3"),
                        ],
                    )?;
                }
                self.close("Axles")?;
                self.properties(actor)?;
                self.close("Vehicle")?;
            }
            Kind::Walker => {
                let model = match self.version {
                    Version::V1_0 => "model",
                    Version::V1_2 => "model3d",
                };
                self.open(
                    "Pedestrian",
                    &[
                        (model, actor.blueprint.as_str()),
                        ("mass", "80"),
                        ("name", actor.blueprint.as_str()),
                        ("pedestrianCategory", "pedestrian"),
                    ],
                )?;
                self.empty("ParameterDeclarations", &[])?;
                let extent = actor.extent.unwrap_or(Extent {
                    center: [0.0, 0.0, 0.0],
                    length: 0.5,
                    width: 0.5,
                    height: 1.8,
                });
                self.bounding_box(&extent)?;
                self.properties(actor)?;
                self.close("Pedestrian")?;
            }
        }
        self.close("ScenarioObject")
    }

    fn bounding_box(&mut self, e: &Extent) -> io::Result<()> {
        self.open("BoundingBox", &[])?;
        let [x, y, z] = e.center.map(num);
        self.empty("Center", &[("x", &x), ("y", &y), ("z", &z)])?;
        self.empty(
            "Dimensions",
            &[
                ("width", &num(e.width)),
                ("length", &num(e.length)),
                ("height", &num(e.height)),
            ],
        )?;
        self.close("BoundingBox")
    }

    fn properties(&mut self, actor: &Actor) -> io::Result<()> {
        self.open("Properties", &[])?;
        self.empty(
            "Property",
            &[("name", "carla_id"), ("value", &actor.id.to_string())],
        )?;
        for (key, value) in &actor.attributes {
            self.empty("Property", &[("name", key), ("value", value)])?;
            // scenario_runner takes the entity whose `type` is `ego_vehicle` as the ego.
            if key == "role_name" && matches!(value.as_str(), "hero" | "ego_vehicle") {
                self.empty("Property", &[("name", "type"), ("value", "ego_vehicle")])?;
            }
        }
        self.close("Properties")
    }

    fn position(&mut self, p: &Pose) -> io::Result<()> {
        self.open("Position", &[])?;
        self.empty(
            "WorldPosition",
            &[
                ("x", &num(p.x)),
                ("y", &num(p.y)),
                ("z", &num(p.z)),
                ("h", &num(p.h)),
                ("p", &num(p.p)),
                ("r", &num(p.r)),
            ],
        )?;
        self.close("Position")
    }

    /// A start trigger: the simulation time passes `t`.
    fn start_at(&mut self, name: &str, t: f64) -> io::Result<()> {
        self.open("StartTrigger", &[])?;
        self.time_condition(name, t)?;
        self.close("StartTrigger")
    }

    fn time_condition(&mut self, name: &str, t: f64) -> io::Result<()> {
        self.open("ConditionGroup", &[])?;
        self.open(
            "Condition",
            &[("name", name), ("delay", "0"), ("conditionEdge", "rising")],
        )?;
        self.open("ByValueCondition", &[])?;
        self.empty(
            "SimulationTimeCondition",
            &[("value", &num(t)), ("rule", "greaterThan")],
        )?;
        self.close("ByValueCondition")?;
        self.close("Condition")?;
        self.close("ConditionGroup")
    }

    /// CARLA's weather as an `EnvironmentAction` (see the README's mapping): every recorded
    /// value is also kept as a `carla.*` property of the road condition.
    fn environment(&mut self, w: &Weather, date: &str) -> io::Result<()> {
        let finite = |v: f32| if v.is_finite() { f64::from(v) } else { 0.0 };
        let (cloudiness, precipitation) = (finite(w.cloudiness), finite(w.precipitation));
        let elevation = finite(w.sun_altitude_angle).clamp(-90.0, 90.0).to_radians();
        let azimuth = finite(w.sun_azimuth_angle)
            .rem_euclid(360.0)
            .to_radians()
            .min(std::f64::consts::TAU);
        // Daylight of about 100 000 lux at the zenith, none below the horizon.
        let illuminance = num(100_000.0 * elevation.sin().max(0.0));
        let visual_range = if finite(w.fog_density) > 0.0 {
            finite(w.fog_distance).max(0.0)
        } else {
            100_000.0
        };
        let rain = if precipitation > 0.0 { "rain" } else { "dry" };
        self.open("EnvironmentAction", &[])?;
        self.open("Environment", &[("name", "recorded_weather")])?;
        self.empty("TimeOfDay", &[("animation", "false"), ("dateTime", date)])?;
        let (azimuth, elevation) = (num(azimuth), num(elevation));
        match self.version {
            Version::V1_0 => {
                let clouds = if precipitation > 0.0 {
                    "rainy"
                } else if cloudiness <= 10.0 {
                    "free"
                } else if cloudiness <= 50.0 {
                    "cloudy"
                } else {
                    "overcast"
                };
                self.open("Weather", &[("cloudState", clouds)])?;
                self.empty(
                    "Sun",
                    &[
                        ("intensity", &illuminance),
                        ("azimuth", &azimuth),
                        ("elevation", &elevation),
                    ],
                )?;
                self.empty("Fog", &[("visualRange", &num(visual_range))])?;
                self.empty(
                    "Precipitation",
                    &[
                        ("precipitationType", rain),
                        ("intensity", &num((precipitation / 100.0).clamp(0.0, 1.0))),
                    ],
                )?;
            }
            Version::V1_2 => {
                const OKTAS: [&str; 9] = [
                    "zeroOktas",
                    "oneOktas",
                    "twoOktas",
                    "threeOktas",
                    "fourOktas",
                    "fiveOktas",
                    "sixOktas",
                    "sevenOktas",
                    "eightOktas",
                ];
                let oktas = (cloudiness.clamp(0.0, 100.0) / 12.5).round() as usize;
                self.open("Weather", &[("fractionalCloudCover", OKTAS[oktas.min(8)])])?;
                self.empty(
                    "Sun",
                    &[
                        ("illuminance", &illuminance),
                        ("azimuth", &azimuth),
                        ("elevation", &elevation),
                    ],
                )?;
                self.empty("Fog", &[("visualRange", &num(visual_range))])?;
                // CARLA's 0-100 scale read as 0-10 mm/h.
                self.empty(
                    "Precipitation",
                    &[
                        ("precipitationType", rain),
                        (
                            "precipitationIntensity",
                            &num(precipitation.clamp(0.0, 100.0) / 10.0),
                        ),
                    ],
                )?;
            }
        }
        self.close("Weather")?;
        self.open("RoadCondition", &[("frictionScaleFactor", "1")])?;
        self.open("Properties", &[])?;
        let names = [
            "cloudiness",
            "precipitation",
            "precipitation_deposits",
            "wind_intensity",
            "sun_azimuth_angle",
            "sun_altitude_angle",
            "fog_density",
            "fog_distance",
            "fog_falloff",
            "wetness",
            "scattering_intensity",
            "mie_scattering_scale",
            "rayleigh_scattering_scale",
            "dust_storm",
        ];
        for (name, value) in names.iter().zip(w.to_array()) {
            self.empty(
                "Property",
                &[
                    ("name", &format!("carla.{name}")),
                    ("value", &num(finite(value))),
                ],
            )?;
        }
        self.close("Properties")?;
        self.close("RoadCondition")?;
        self.close("Environment")?;
        self.close("EnvironmentAction")
    }

    /// One actor's maneuver group: spawn, path and removal events (an actor with none of
    /// them, standing where it was created, gets an empty group).
    pub(crate) fn actor_group(&mut self, actor: &Actor, track: &[Vertex]) -> io::Result<()> {
        let name = actor.name.as_str();
        self.open(
            "ManeuverGroup",
            &[("maximumExecutionCount", "1"), ("name", name)],
        )?;
        self.open("Actors", &[("selectTriggeringEntities", "false")])?;
        self.empty("EntityRef", &[("entityRef", name)])?;
        self.close("Actors")?;
        let spawn = actor.spawned > 0.0;
        let path = track.len() >= 2;
        if spawn || path || actor.deleted.is_some() {
            self.open("Maneuver", &[("name", &format!("{name}_replay"))])?;
            if spawn {
                let event = format!("{name}_spawn");
                self.entity_event(&event, name, Some(&actor.first), actor.spawned)?;
            }
            if path {
                self.path_event(name, track)?;
            }
            if let Some(t) = actor.deleted {
                let event = format!("{name}_despawn");
                self.entity_event(&event, name, None, t)?;
            }
            self.close("Maneuver")?;
        }
        self.close("ManeuverGroup")
    }

    /// An `AddEntityAction` (with a position) or `DeleteEntityAction` at time `t`.
    fn entity_event(
        &mut self,
        event: &str,
        entity: &str,
        add_at: Option<&Pose>,
        t: f64,
    ) -> io::Result<()> {
        self.open("Event", &[("name", event), ("priority", "parallel")])?;
        self.open("Action", &[("name", event)])?;
        self.open("GlobalAction", &[])?;
        self.open("EntityAction", &[("entityRef", entity)])?;
        match add_at {
            Some(pose) => {
                self.open("AddEntityAction", &[])?;
                self.position(pose)?;
                self.close("AddEntityAction")?;
            }
            None => self.empty("DeleteEntityAction", &[])?,
        }
        self.close("EntityAction")?;
        self.close("GlobalAction")?;
        self.close("Action")?;
        self.start_at(event, t)?;
        self.close("Event")
    }

    fn path_event(&mut self, name: &str, track: &[Vertex]) -> io::Result<()> {
        let event = format!("{name}_path");
        let priority = self.override_priority();
        self.open("Event", &[("name", &event), ("priority", priority)])?;
        self.open("Action", &[("name", &event)])?;
        self.open("PrivateAction", &[])?;
        self.open("RoutingAction", &[])?;
        self.open("FollowTrajectoryAction", &[])?;
        self.open("Trajectory", &[("name", &event), ("closed", "false")])?;
        self.open("Shape", &[])?;
        self.open("Polyline", &[])?;
        for vertex in track {
            self.open("Vertex", &[("time", &num(vertex.t))])?;
            self.position(&vertex.pose)?;
            self.close("Vertex")?;
        }
        self.close("Polyline")?;
        self.close("Shape")?;
        self.close("Trajectory")?;
        self.open("TimeReference", &[])?;
        self.empty(
            "Timing",
            &[
                ("domainAbsoluteRelative", "absolute"),
                ("scale", "1"),
                ("offset", "0"),
            ],
        )?;
        self.close("TimeReference")?;
        self.empty("TrajectoryFollowingMode", &[("followingMode", "position")])?;
        self.close("FollowTrajectoryAction")?;
        self.close("RoutingAction")?;
        self.close("PrivateAction")?;
        self.close("Action")?;
        self.start_at(&event, track[0].t)?;
        self.close("Event")
    }

    /// The act's start, the story's end and the stop trigger at the last frame's time.
    pub(crate) fn end(&mut self, scan: &Scan) -> io::Result<()> {
        self.open("StartTrigger", &[])?;
        self.time_condition("replay_start", 0.0)?;
        self.close("StartTrigger")?;
        self.close("Act")?;
        self.close("Story")?;
        self.open("StopTrigger", &[])?;
        self.time_condition("recording_end", scan.end)?;
        self.close("StopTrigger")?;
        self.close("Storyboard")?;
        self.close("OpenSCENARIO")?;
        self.xml.get_mut().write_all(b"\n")
    }
}
