//! The three molecular file layouts, one writer each, a frame at a time: multi-model PDB,
//! extended XYZ and CHARMM/NAMD DCD. Coordinates arrive in NanoVer's nm and leave in Å.

use std::io::{self, Write};

use super::topology::Topology;
use super::{MolecularFormat, Snapshot};

/// nm to Å.
const NM_TO_ANGSTROM: f64 = 10.0;
/// CHARMM's AKMA time unit in ps (DCD stores its time step in it).
const AKMA_PS: f64 = 0.048_888_21;

/// A writer of one session's file.
pub(super) enum FileWriter<W: Write> {
    Pdb(PdbWriter<W>),
    Xyz(XyzWriter<W>),
    Dcd(DcdWriter<W>),
}

impl<W: Write> FileWriter<W> {
    /// Starts the file: its header, knowing the frames it will hold and their time step (ps).
    pub fn begin(
        format: MolecularFormat,
        mut out: W,
        topology: Topology,
        frames: u64,
        step_ps: Option<f64>,
        title: &str,
    ) -> io::Result<Self> {
        Ok(match format {
            MolecularFormat::Pdb => {
                writeln!(out, "REMARK   1 {}", title.replace('\n', " "))?;
                writeln!(out, "REMARK   1 coordinates in Angstrom (NanoVer nm x 10)")?;
                FileWriter::Pdb(PdbWriter {
                    out,
                    topology,
                    model: 0,
                })
            }
            MolecularFormat::Xyz => FileWriter::Xyz(XyzWriter { out, topology }),
            MolecularFormat::Dcd => {
                let mut w = DcdWriter {
                    out,
                    particles: topology.atoms.len(),
                    coords: Vec::new(),
                };
                w.header(frames, step_ps, title)?;
                FileWriter::Dcd(w)
            }
        })
    }

    /// Writes one frame.
    pub fn frame(&mut self, frame: &Snapshot<'_>) -> io::Result<()> {
        match self {
            FileWriter::Pdb(w) => w.frame(frame),
            FileWriter::Xyz(w) => w.frame(frame),
            FileWriter::Dcd(w) => w.frame(frame),
        }
    }

    /// Particles per frame.
    pub fn particles(&self) -> usize {
        match self {
            FileWriter::Pdb(w) => w.topology.atoms.len(),
            FileWriter::Xyz(w) => w.topology.atoms.len(),
            FileWriter::Dcd(w) => w.particles,
        }
    }

    /// Ends the file (PDB's bonds and `END`) and hands the output back.
    pub fn finish(self) -> io::Result<W> {
        match self {
            FileWriter::Pdb(w) => w.finish(),
            FileWriter::Xyz(w) => Ok(w.out),
            FileWriter::Dcd(w) => Ok(w.out),
        }
    }
}

/// Å from nm, rounded to the f32 the value is stored as.
fn angstrom(nm: f32) -> f32 {
    (f64::from(nm) * NM_TO_ANGSTROM) as f32
}

/// Lengths (Å) and angles (degrees) of a box given as three row vectors in nm:
/// `[a, b, c, alpha, beta, gamma]`.
fn cell(box_nm: &[f32]) -> Option<[f64; 6]> {
    let v: Vec<[f64; 3]> = box_nm
        .chunks_exact(3)
        .map(|r| [r[0], r[1], r[2]].map(|x| f64::from(x) * NM_TO_ANGSTROM))
        .collect();
    let [a, b, c] = <[[f64; 3]; 3]>::try_from(v).ok()?;
    let norm = |x: &[f64; 3]| (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]).sqrt();
    let angle = |x: &[f64; 3], y: &[f64; 3]| {
        let d = x[0] * y[0] + x[1] * y[1] + x[2] * y[2];
        let n = norm(x) * norm(y);
        if n == 0.0 {
            90.0
        } else {
            (d / n).clamp(-1.0, 1.0).acos().to_degrees()
        }
    };
    Some([
        norm(&a),
        norm(&b),
        norm(&c),
        angle(&b, &c),
        angle(&a, &c),
        angle(&a, &b),
    ])
}

fn out_of_range(what: &str, value: f32, frame: &Snapshot<'_>) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "{what} {value} Å at t_us {} does not fit PDB's 8.3 columns (-999.999 to 9999.999); \
             write XYZ or DCD instead",
            frame.t_us
        ),
    )
}

/// Multi-model PDB: `CRYST1` and `MODEL` per frame, `ATOM` records, `CONECT` once at the end.
pub(super) struct PdbWriter<W> {
    out: W,
    topology: Topology,
    model: u64,
}

impl<W: Write> PdbWriter<W> {
    fn frame(&mut self, frame: &Snapshot<'_>) -> io::Result<()> {
        self.model += 1;
        if let Some([a, b, c, alpha, beta, gamma]) = frame.box_nm.and_then(cell) {
            writeln!(
                self.out,
                "CRYST1{a:9.3}{b:9.3}{c:9.3}{alpha:7.2}{beta:7.2}{gamma:7.2} P 1           1"
            )?;
        }
        writeln!(self.out, "MODEL     {:>4}", self.model % 10_000)?;
        for (i, (atom, p)) in self
            .topology
            .atoms
            .iter()
            .zip(frame.positions.chunks_exact(3))
            .enumerate()
        {
            let [x, y, z] = [p[0], p[1], p[2]].map(angstrom);
            for v in [x, y, z] {
                if !(-999.999..=9999.999).contains(&v) {
                    return Err(out_of_range("coordinate", v, frame));
                }
            }
            // Names shorter than four characters start in column 14 when the element has
            // one letter, as the PDB convention and MDAnalysis's writer do.
            let name = if atom.name.len() < 4 && atom.element.len() == 1 {
                format!(" {:<3}", atom.name)
            } else {
                atom.name.chars().take(4).collect()
            };
            let resname: String = atom.resname.chars().take(4).collect();
            let chain = atom.chain.chars().next().unwrap_or(' ');
            let segid: String = atom.chain.chars().take(4).collect();
            writeln!(
                self.out,
                "ATOM  {:>5} {:<4} {:<4}{}{:>4}    {:>8.3}{:>8.3}{:>8.3}{:>6.2}{:>6.2}      {:<4}{:>2}",
                (i + 1) % 100_000,
                name,
                resname,
                chain,
                atom.resid.rem_euclid(10_000),
                x,
                y,
                z,
                1.0,
                0.0,
                segid,
                atom.element.to_uppercase(),
            )?;
        }
        writeln!(self.out, "ENDMDL")
    }

    fn finish(mut self) -> io::Result<W> {
        // CONECT names atoms by serial, which has five columns.
        if self.topology.atoms.len() < 100_000 {
            let mut partners: Vec<Vec<u32>> = vec![Vec::new(); self.topology.atoms.len()];
            for &(a, b) in &self.topology.bonds {
                partners[a as usize].push(b + 1);
                partners[b as usize].push(a + 1);
            }
            for (i, list) in partners.iter().enumerate() {
                for chunk in list.chunks(4) {
                    write!(self.out, "CONECT{:>5}", i + 1)?;
                    for p in chunk {
                        write!(self.out, "{p:>5}")?;
                    }
                    writeln!(self.out)?;
                }
            }
        }
        writeln!(self.out, "END")?;
        Ok(self.out)
    }
}

/// Extended XYZ: the count, a comment line of `key=value` pairs (`Lattice`, `Properties`,
/// `Time`, the frame's scalar values), one `symbol x y z` line per particle.
pub(super) struct XyzWriter<W> {
    out: W,
    topology: Topology,
}

impl<W: Write> XyzWriter<W> {
    fn frame(&mut self, frame: &Snapshot<'_>) -> io::Result<()> {
        writeln!(self.out, "{}", self.topology.atoms.len())?;
        if let Some(b) = frame.box_nm.filter(|b| b.len() == 9) {
            let lattice: Vec<String> = b.iter().map(|&v| angstrom(v).to_string()).collect();
            write!(self.out, "Lattice=\"{}\" pbc=\"T T T\" ", lattice.join(" "))?;
        }
        write!(self.out, "Properties=species:S:1:pos:R:3")?;
        if let Some(t) = frame.time_ps {
            write!(self.out, " Time={t}")?;
        }
        write!(
            self.out,
            " t_us={} frame_index={}",
            frame.t_us, frame.frame_index
        )?;
        for (key, value) in frame.scalars() {
            if value.is_finite() && is_plain_key(key) {
                write!(self.out, " {key}={value}")?;
            }
        }
        writeln!(self.out)?;
        for (atom, p) in self
            .topology
            .atoms
            .iter()
            .zip(frame.positions.chunks_exact(3))
        {
            let [x, y, z] = [p[0], p[1], p[2]].map(angstrom);
            writeln!(self.out, "{} {x} {y} {z}", atom.element)?;
        }
        Ok(())
    }
}

/// A key the extended XYZ comment line holds without quoting.
fn is_plain_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// CHARMM/NAMD DCD (little-endian, 32-bit Fortran record markers) with a unit cell per frame.
pub(super) struct DcdWriter<W> {
    out: W,
    particles: usize,
    coords: Vec<u8>,
}

impl<W: Write> DcdWriter<W> {
    fn record(&mut self, body: &[u8]) -> io::Result<()> {
        let len = u32::try_from(body.len()).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "a DCD record holds at most 4 GiB (too many particles)",
            )
        })?;
        self.out.write_all(&len.to_le_bytes())?;
        self.out.write_all(body)?;
        self.out.write_all(&len.to_le_bytes())
    }

    fn header(&mut self, frames: u64, step_ps: Option<f64>, title: &str) -> io::Result<()> {
        let frames = i32::try_from(frames).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "a DCD holds at most 2^31 frames",
            )
        })?;
        let mut head = Vec::with_capacity(84);
        head.extend_from_slice(b"CORD");
        let mut control = [0i32; 20];
        control[0] = frames; // NSET
        control[1] = 0; // ISTART
        control[2] = 1; // NSAVC
        control[3] = frames; // NSTEP
        control[10] = 1; // a unit cell with every frame
        control[19] = 24; // CHARMM version: the CHARMM flavour of the header
        for (i, c) in control.iter().enumerate() {
            if i == 9 {
                let delta = step_ps.map_or(0.0, |s| s / AKMA_PS) as f32;
                head.extend_from_slice(&delta.to_le_bytes());
            } else {
                head.extend_from_slice(&c.to_le_bytes());
            }
        }
        self.record(&head)?;
        let mut titles = Vec::with_capacity(4 + 160);
        titles.extend_from_slice(&2i32.to_le_bytes());
        for line in [title, "coordinates in Angstrom (NanoVer nm x 10)"] {
            let mut field = [b' '; 80];
            let bytes = line.as_bytes();
            let n = bytes.len().min(80);
            field[..n].copy_from_slice(&bytes[..n]);
            titles.extend_from_slice(&field);
        }
        self.record(&titles)?;
        let particles = i32::try_from(self.particles).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "a DCD holds at most 2^31 particles",
            )
        })?;
        self.record(&particles.to_le_bytes())
    }

    fn frame(&mut self, frame: &Snapshot<'_>) -> io::Result<()> {
        // CHARMM's order: A, gamma, B, beta, alpha, C (angles in degrees).
        let [a, b, c, alpha, beta, gamma] = frame
            .box_nm
            .and_then(cell)
            .unwrap_or([0.0, 90.0, 0.0, 90.0, 90.0, 0.0]);
        let mut unit_cell = Vec::with_capacity(48);
        for v in [a, gamma, b, beta, alpha, c] {
            unit_cell.extend_from_slice(&v.to_le_bytes());
        }
        self.record(&unit_cell)?;
        let mut coords = std::mem::take(&mut self.coords);
        for axis in 0..3 {
            coords.clear();
            for p in frame.positions.chunks_exact(3).take(self.particles) {
                coords.extend_from_slice(&angstrom(p[axis]).to_le_bytes());
            }
            self.record(&coords)?;
        }
        self.coords = coords;
        Ok(())
    }
}
