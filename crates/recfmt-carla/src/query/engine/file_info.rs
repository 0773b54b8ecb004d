//! `QueryInfo`: `show_recorder_file_info`, with and without `show_all`.

use std::io::{Read, Write};

use super::*;

impl<R: Read> Engine<R> {
    fn print_frame(&mut self, collect: &mut Option<&mut Vec<FrameEvents>>) {
        let (id, elapsed) = (self.frame_id(), self.frame_elapsed());
        self.text("Frame ");
        self.int(id);
        self.text(" at ");
        self.g(elapsed);
        self.text(" seconds\n");
        if let Some(c) = collect {
            c.push(FrameEvents {
                frame: id,
                elapsed,
                ..FrameEvents::default()
            });
        }
    }

    /// Reads a count and prints the frame line first when it is non-zero.
    fn counted(
        &mut self,
        printed: &mut bool,
        collect: &mut Option<&mut Vec<FrameEvents>>,
        title: Option<&str>,
    ) -> io::Result<u16> {
        let total = self.read_total()?;
        if total > 0 && !*printed {
            self.print_frame(collect);
            *printed = true;
        }
        if let Some(t) = title {
            self.text(t);
            self.int(total);
            self.text("\n");
        }
        Ok(total)
    }

    /// `QueryInfo`. `collect` receives the event lines as data (used without `show_all`).
    pub(crate) fn file_info(
        &mut self,
        show_all: bool,
        mut collect: Option<&mut Vec<FrameEvents>>,
        w: &mut dyn Write,
    ) -> EResult<Option<(RecorderInfo, u64, f64)>> {
        let Some(info) = self.check_file_info()? else {
            return Ok(None);
        };
        let mut printed = false;
        let c = &mut collect;
        while self.read_packet_header()? {
            self.flush(w, false)?;
            let Some(kind) = self.kind() else {
                self.skip_packet()?;
                continue;
            };
            match kind {
                PacketKind::FrameStart => {
                    self.read_frame()?;
                    if show_all {
                        self.print_frame(c);
                        printed = true;
                    } else {
                        printed = false;
                    }
                }
                PacketKind::FrameEnd => {
                    if self.style.weather_build {
                        self.text("\n");
                    }
                }
                PacketKind::EventAdd => {
                    let total = self.counted(&mut printed, c, None)?;
                    for _ in 0..total {
                        self.read_event_add()?;
                        self.print_create(c);
                    }
                }
                PacketKind::EventDel => {
                    let total = self.counted(&mut printed, c, None)?;
                    for _ in 0..total {
                        self.del = self.s.value(self.del)?;
                        let id = EventDel::read(&self.del, self.width).database_id;
                        let _ = writeln!(self.out, " Destroy {id}");
                        if let Some(f) = c.as_mut().and_then(|v| v.last_mut()) {
                            f.destroyed.push(id);
                        }
                    }
                }
                PacketKind::EventParent => {
                    let total = self.counted(&mut printed, c, None)?;
                    for _ in 0..total {
                        self.parent = self.s.value(self.parent)?;
                        let p = EventParent::read(&self.parent, self.width);
                        let (child, parent) = (p.database_id, p.database_id_parent);
                        let _ = writeln!(self.out, " Parenting {child} with {parent} (parent)");
                        if let Some(f) = c.as_mut().and_then(|v| v.last_mut()) {
                            f.parented.push(Parenting { child, parent });
                        }
                    }
                }
                PacketKind::Collision => {
                    let total = self.counted(&mut printed, c, None)?;
                    for _ in 0..total {
                        self.collision = self.s.value(self.collision)?;
                        let r = Collision::read(&self.collision, self.width);
                        let ev = CollisionEvent {
                            id: r.id,
                            actor1: r.database_id1,
                            actor2: r.database_id2,
                            actor1_hero: r.is_actor1_hero,
                            actor2_hero: r.is_actor2_hero,
                        };
                        let _ = write!(self.out, " Collision id {} between {}", ev.id, ev.actor1);
                        if ev.actor1_hero {
                            self.text(" (hero) ");
                        }
                        let _ = write!(self.out, " with {}", ev.actor2);
                        if ev.actor2_hero {
                            self.text(" (hero) ");
                        }
                        self.text("\n");
                        if let Some(f) = c.as_mut().and_then(|v| v.last_mut()) {
                            f.collisions.push(ev);
                        }
                    }
                }
                PacketKind::Weather if self.style.weather_build => {
                    let total = self.counted(&mut printed, c, Some(" Weathers: "))?;
                    for _ in 0..total {
                        self.weather = self.s.value(self.weather)?;
                        self.print_weather(c);
                    }
                }
                _ if !show_all => self.skip_packet()?,
                kind => self.show_all_block(kind, &mut printed, c)?,
            }
        }
        let (frames, duration) = self.footer(false);
        self.flush(w, true)?;
        Ok(Some((info, frames, duration)))
    }

    fn print_create(&mut self, c: &mut Option<&mut Vec<FrameEvents>>) {
        let id = self.add_id();
        let kind = self.add.kind[0];
        let blueprint = ue_text(&self.add.blueprint);
        let location = self.vector_at(&self.add.location, 0);
        let _ = write!(self.out, " Create {id}: {blueprint} ({kind}) at ");
        self.vec3(location);
        self.text("\n");
        let mut attributes = Vec::new();
        for (k, v) in &self.add.attributes {
            let (k, v) = (ue_text(k), ue_text(v));
            let _ = writeln!(self.out, "  {k} = {v}");
            if c.is_some() {
                attributes.push((k, v));
            }
        }
        if let Some(f) = c.as_mut().and_then(|v| v.last_mut()) {
            f.created.push(ActorCreated {
                id,
                blueprint,
                actor_type: kind,
                location,
                attributes,
            });
        }
    }

    fn print_weather(&mut self, c: &mut Option<&mut Vec<FrameEvents>>) {
        const NAMES: [&str; 14] = [
            "Cloudiness",
            "Precipitation",
            "PrecipitationDeposits",
            "WindIntensity",
            "SunAzimuthAngle",
            "SunAltitudeAngle",
            "FogDensity",
            "FogDistance",
            "FogFalloff",
            "Wetness",
            "ScatteringIntensity",
            "MieScatteringScale",
            "RayleighScatteringScale",
            "DustStorm",
        ];
        let values = Weather::read(&self.weather, self.width)
            .to_array()
            .map(f64::from);
        self.text(" ");
        for (i, name) in NAMES.iter().enumerate() {
            let _ = write!(self.out, " {name}: ");
            self.g(values[i]);
        }
        self.text("\n");
        if let Some(f) = c.as_mut().and_then(|v| v.last_mut()) {
            f.weathers.push(values);
        }
    }

    /// The blocks printed only with `show_all`.
    fn show_all_block(
        &mut self,
        kind: PacketKind,
        printed: &mut bool,
        c: &mut Option<&mut Vec<FrameEvents>>,
    ) -> EResult<()> {
        let (vs, width) = (self.vs, self.width);
        let colon = if self.style.colons { ":" } else { "" };
        match kind {
            PacketKind::Position => {
                let total = self.counted(printed, c, Some(" Positions: "))?;
                for _ in 0..total {
                    self.position = self.read_over(self.position, Position::size(width))?;
                    let r = Position::read(&self.position, width);
                    let _ = write!(self.out, "  Id: {} Location: ", r.database_id);
                    self.vec3(r.location.to_f64());
                    let _ = write!(self.out, " Rotation{colon} ");
                    self.vec3(r.rotation.to_f64());
                    self.text("\n");
                }
            }
            PacketKind::TrafficLight => {
                let total = self.counted(printed, c, Some(" State traffic lights: "))?;
                for _ in 0..total {
                    self.traffic = self.s.value(self.traffic)?;
                    let r = TrafficLightState::read(&self.traffic, width);
                    let _ = write!(self.out, "  Id: {} state: ", r.database_id);
                    self.out.push(0x30u8.wrapping_add(r.state));
                    // The byte as stored (C++ prints the bool's byte).
                    let frozen = self.traffic[TRAFFIC_FROZEN_AT];
                    let _ = write!(self.out, " frozen: {frozen} elapsedTime: ");
                    self.g(f64::from(r.elapsed_time));
                    self.text("\n");
                }
            }
            PacketKind::VehicleAnim => {
                let total = self.counted(printed, c, Some(" Vehicle animations: "))?;
                for _ in 0..total {
                    self.vehicle = self.s.value(self.vehicle)?;
                    let r = VehicleAnim::read(&self.vehicle, width);
                    let _ = write!(self.out, "  Id: {} Steering: ", r.database_id);
                    self.g(f64::from(r.steering));
                    self.text(" Throttle: ");
                    self.g(f64::from(r.throttle));
                    let _ = write!(self.out, " Brake{colon} ");
                    self.g(f64::from(r.brake));
                    // The byte as stored (C++ prints the bool's byte).
                    let handbrake = self.vehicle[VEHICLE_HANDBRAKE_AT];
                    let _ = writeln!(self.out, " Handbrake: {handbrake} Gear: {}", r.gear);
                }
            }
            PacketKind::WalkerAnim => {
                let total = self.counted(printed, c, Some(" Walker animations: "))?;
                for _ in 0..total {
                    self.walker = self.s.value(self.walker)?;
                    let r = WalkerAnim::read(&self.walker, width);
                    let _ = write!(self.out, "  Id: {} speed: ", r.database_id);
                    self.g(f64::from(r.speed));
                    self.text("\n");
                }
            }
            PacketKind::VehicleDoor => {
                let total = self.counted(printed, c, Some(" Vehicle door animations: "))?;
                for _ in 0..total {
                    self.door = self.s.value(self.door)?;
                    let r = VehicleDoor::read(&self.door, width);
                    let _ = write!(self.out, "  Id: {}\n  Doors opened: ", r.database_id);
                    const DOORS: [&str; 7] = [
                        "Front Left",
                        "Front Right",
                        "Rear Left",
                        "Rear Right",
                        "Hood",
                        "Trunk",
                        "All",
                    ];
                    if let Some(name) = DOORS.get(usize::from(r.doors)) {
                        let _ = writeln!(self.out, " {name} ");
                    }
                }
            }
            PacketKind::VehicleLight => {
                let total = self.counted(printed, c, Some(" Vehicle light animations: "))?;
                for _ in 0..total {
                    self.light = self.s.value(self.light)?;
                    let r = VehicleLight::read(&self.light, width);
                    let state = r.state;
                    const LIGHTS: [(u32, &str); 11] = [
                        (0x1, "Position"),
                        (0x2, "LowBeam"),
                        (0x4, "HighBeam"),
                        (0x8, "Brake"),
                        (0x10, "RightBlinker"),
                        (0x20, "LeftBlinker"),
                        (0x40, "Reverse"),
                        (0x100, "Interior"),
                        (0x80, "Fog"),
                        (0x200, "Special1"),
                        (0x400, "Special2"),
                    ];
                    let names: Vec<&str> = LIGHTS
                        .iter()
                        .filter(|(bit, _)| state & bit != 0)
                        .map(|(_, n)| *n)
                        .collect();
                    let list = if names.is_empty() {
                        "None".to_owned()
                    } else {
                        names.join(" ")
                    };
                    let _ = writeln!(self.out, "  Id: {} {list}", r.database_id);
                }
            }
            PacketKind::SceneLight => {
                let total = self.counted(printed, c, Some(" Scene light changes: "))?;
                for _ in 0..total {
                    self.scene = self.s.value(self.scene)?;
                    let r = SceneLight::read(&self.scene, width);
                    let on = if r.on { "True" } else { "False" };
                    let id = r.light_id;
                    let _ = write!(self.out, "  Id: {id} enabled: {on} intensity: ");
                    self.g(f64::from(r.intensity));
                    self.text(" RGB_color: ");
                    self.vec3([r.color[0], r.color[1], r.color[2]].map(f64::from));
                    self.text("\n");
                }
            }
            PacketKind::Kinematics => {
                let total = self.counted(printed, c, Some(" Dynamic actors: "))?;
                for _ in 0..total {
                    self.kinematics = self.read_over(self.kinematics, Kinematics::size(width))?;
                    let r = Kinematics::read(&self.kinematics, width);
                    let _ = write!(self.out, "  Id: {} linear_velocity: ", r.database_id);
                    self.vec3(r.linear_velocity.to_f64());
                    self.text(" angular_velocity: ");
                    self.vec3(r.angular_velocity.to_f64());
                    self.text("\n");
                }
            }
            PacketKind::BoundingBox | PacketKind::TriggerVolume => {
                let title = if kind == PacketKind::BoundingBox {
                    " Actor bounding boxes: "
                } else {
                    " Actor trigger volumes: "
                };
                let total = self.counted(printed, c, Some(title))?;
                for _ in 0..total {
                    self.bbox = self.read_over(self.bbox, BoundingBox::size(width))?;
                    let r = BoundingBox::read(&self.bbox, width);
                    let _ = write!(self.out, "  Id: {} origin: ", r.database_id);
                    self.vec3(r.origin.to_f64());
                    self.text(" extension: ");
                    self.vec3(r.extent.to_f64());
                    self.text("\n");
                }
            }
            PacketKind::PlatformTime => {
                if !*printed {
                    self.print_frame(c);
                    *printed = true;
                }
                self.platform = self.s.value(self.platform)?;
                self.text(" Current platform time: ");
                self.g(f64_at(&self.platform, 0));
                self.text("\n");
            }
            PacketKind::PhysicsControl => {
                if self.flavour.wheel_physics() == WheelPhysicsLayout::Opaque {
                    return Err(EngineError::Unsupported(
                        "the UE5 PhysicsControl block of show_all (its records hold raw memory)",
                    ));
                }
                let total = self.counted(printed, c, Some(" Physics Control events: "))?;
                for _ in 0..total {
                    self.physics_record()?;
                }
            }
            PacketKind::TrafficLightTime => {
                let total = self.counted(printed, c, Some(" Traffic Light time events: "))?;
                for _ in 0..total {
                    self.tl_time = self.s.value(self.tl_time)?;
                    let r = TrafficLightTime::read(&self.tl_time, width);
                    let _ = write!(self.out, "  Id: {} green_time: ", r.database_id);
                    self.g(f64::from(r.green_time));
                    self.text(" yellow_time: ");
                    self.g(f64::from(r.yellow_time));
                    self.text(" red_time: ");
                    self.g(f64::from(r.red_time));
                    self.text("\n");
                }
            }
            PacketKind::WalkerBones if self.style.bones => {
                let total = self.counted(printed, c, Some(" Walkers Bones: "))?;
                for _ in 0..total {
                    self.bones_id = self.s.value(self.bones_id)?;
                    let _ = writeln!(self.out, "  Id: {}", u32::from_le_bytes(self.bones_id));
                    let n = u16::from_le_bytes(self.s.value([0; 2])?);
                    let (mut name, mut loc, mut rot) = (Vec::new(), [0u8; 24], [0u8; 24]);
                    for _ in 0..n {
                        self.s.fstring(&mut name)?;
                        self.s.read(&mut loc[..vs])?;
                        self.s.read(&mut rot[..vs])?;
                        let _ = write!(self.out, "     Bone: \"{}\" relative: Loc", ue_text(&name));
                        self.vec3(self.vector_at(&loc, 0));
                        self.text(" Rot");
                        self.vec3(self.vector_at(&rot, 0));
                        self.text("\n");
                    }
                }
                if self.style.bones_blank {
                    self.text("\n");
                }
            }
            _ => self.skip_packet()?,
        }
        Ok(())
    }

    /// `u32` count of a `ReadStdVector` (0 when the read fails), checked against the
    /// stale-loop bound.
    fn vec_count(&mut self) -> EResult<u32> {
        let n = u32::from_le_bytes(self.s.value([0; 4])?);
        Ok(n)
    }

    fn stale_guard(&self, remaining: u64) -> EResult<()> {
        if !self.s.ok() && remaining > MAX_STALE_ENTRIES {
            return Err(EngineError::StaleLoop(remaining));
        }
        Ok(())
    }

    /// One PhysicsControl record: read into `carla::rpc::VehiclePhysicsControl` defaults,
    /// converted to the engine's `FVehiclePhysicsControl` and back, then printed.
    fn physics_record(&mut self) -> EResult<()> {
        self.physics_id = self.s.value(self.physics_id)?;
        let f = |s: &mut CStream<R>, default: f32| -> io::Result<f32> {
            Ok(f32::from_le_bytes(s.value(default.to_le_bytes())?))
        };
        let max_rpm = f(&mut self.s, 5000.0)?;
        let moi = f(&mut self.s, 1.0)?;
        let damping_full = f(&mut self.s, 0.15)?;
        let damping_engaged = f(&mut self.s, 2.0)?;
        let damping_disengaged = f(&mut self.s, 0.35)?;
        let autobox = self.s.value([1u8])?[0] != 0;
        let clutch = f(&mut self.s, 10.0)?;
        let final_ratio = f(&mut self.s, 4.0)?;
        let mass = f(&mut self.s, 1000.0)?;
        let drag = f(&mut self.s, 0.3)?;
        let mut com = [0f32; 3];
        for v in &mut com {
            *v = f(&mut self.s, 0.0)?;
            // geom::Location → FVector (×100) → geom::Location (×0.01), in float.
            *v = 1e-2f32 * (1e2f32 * *v);
        }
        let torque = self.curve()?;
        let n = self.vec_count()?;
        let mut gears = Vec::new();
        for i in 0..n {
            self.stale_guard(u64::from(n - i))?;
            let mut g = GEAR_DEFAULT;
            for v in &mut g {
                *v = f(&mut self.s, *v)?;
            }
            gears.push(g);
        }
        let steering = self.curve()?;
        let stiffness = self.flavour.wheel_physics() == WheelPhysicsLayout::Wheel48;
        let n = self.vec_count()?;
        let mut wheels = Vec::new();
        for i in 0..n {
            self.stale_guard(u64::from(n - i))?;
            let mut w = WHEEL_DEFAULT;
            for (k, v) in w.iter_mut().enumerate() {
                if stiffness || !(6..9).contains(&k) {
                    *v = f(&mut self.s, *v)?;
                }
            }
            wheels.push(w);
        }

        let id = u32::from_le_bytes(self.physics_id);
        let _ = writeln!(self.out, "  Id: {id}");
        for (name, v) in [
            ("max_rpm", max_rpm),
            ("MOI", moi),
            ("damping_rate_full_throttle", damping_full),
            ("damping_rate_zero_throttle_clutch_engaged", damping_engaged),
            (
                "damping_rate_zero_throttle_clutch_disengaged",
                damping_disengaged,
            ),
        ] {
            let _ = write!(self.out, "   {name} = ");
            self.g(f64::from(v));
            self.text("\n");
        }
        let _ = writeln!(self.out, "   use_gear_auto_box = {autobox}");
        // gear_switch_time is not recorded: the rpc default survives the round trip.
        for (name, v) in [
            ("gear_switch_time", 0.5f32),
            ("clutch_strength", clutch),
            ("final_ratio", final_ratio),
            ("mass", mass),
            ("drag_coefficient", drag),
        ] {
            let _ = write!(self.out, "   {name} = ");
            self.g(f64::from(v));
            self.text("\n");
        }
        self.text("   center_of_mass = ");
        self.vec3(com.map(f64::from));
        self.text("\n   torque_curve =");
        for (x, y) in torque {
            self.text(" (");
            self.g(f64::from(x));
            self.text(", ");
            self.g(f64::from(y));
            self.text(")");
        }
        self.text("\n   steering_curve =");
        for (x, y) in steering {
            self.text(" (");
            self.g(f64::from(x));
            self.text(", ");
            self.g(f64::from(y));
            self.text(")");
        }
        self.text("\n   forward_gears:\n");
        for (i, g) in gears.iter().enumerate() {
            let _ = write!(self.out, "    gear {i}: ratio ");
            self.g(f64::from(g[0]));
            self.text(" down_ratio ");
            self.g(f64::from(g[1]));
            self.text(" up_ratio ");
            self.g(f64::from(g[2]));
            self.text("\n");
        }
        self.text("   wheels:\n");
        for (i, w) in wheels.iter().enumerate() {
            let _ = write!(self.out, "    wheel {i}:");
            for (k, name) in [
                "tire_friction",
                "damping_rate",
                "max_steer_angle",
                "radius",
                "max_brake_torque",
                "max_handbrake_torque",
            ]
            .iter()
            .enumerate()
            {
                let _ = write!(self.out, " {name} ");
                self.g(f64::from(w[k]));
            }
            self.text(" position ");
            self.vec3([f64::from(w[9]), f64::from(w[10]), f64::from(w[11])]);
            self.text("\n");
        }
        Ok(())
    }

    /// A curve as `ReadStdVector<Vector2D>` reads it and `FRichCurve::AddKey` re-sorts it:
    /// each key goes before the first key whose time is not less than its own.
    fn curve(&mut self) -> EResult<Vec<(f32, f32)>> {
        let n = self.vec_count()?;
        let mut keys: Vec<(f32, f32)> = Vec::new();
        for i in 0..n {
            self.stale_guard(u64::from(n - i))?;
            let b = self.s.value([0u8; 8])?;
            let (x, y) = (f32_raw(&b, 0), f32_raw(&b, 4));
            let at = keys
                .iter()
                .position(|k| k.0 >= x || k.0.is_nan() || x.is_nan());
            let at = match at {
                // `Keys[i].Time < InTime` is false for NaN on either side: stop there.
                Some(i) => i,
                None => keys.len(),
            };
            keys.insert(at, (x, y));
        }
        Ok(keys)
    }
}
