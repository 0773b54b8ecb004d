//! The topology of a session as molecular files need it: one entry per particle, read from the
//! aggregated frame that first has positions, as NanoVer's MDAnalysis reader reads it.

use crate::aggregate::FrameView;

/// Element symbols by atomic number (index 0 is NanoVer's "no element").
const SYMBOLS: [&str; 119] = [
    "X", "H", "He", "Li", "Be", "B", "C", "N", "O", "F", "Ne", "Na", "Mg", "Al", "Si", "P", "S",
    "Cl", "Ar", "K", "Ca", "Sc", "Ti", "V", "Cr", "Mn", "Fe", "Co", "Ni", "Cu", "Zn", "Ga", "Ge",
    "As", "Se", "Br", "Kr", "Rb", "Sr", "Y", "Zr", "Nb", "Mo", "Tc", "Ru", "Rh", "Pd", "Ag", "Cd",
    "In", "Sn", "Sb", "Te", "I", "Xe", "Cs", "Ba", "La", "Ce", "Pr", "Nd", "Pm", "Sm", "Eu", "Gd",
    "Tb", "Dy", "Ho", "Er", "Tm", "Yb", "Lu", "Hf", "Ta", "W", "Re", "Os", "Ir", "Pt", "Au", "Hg",
    "Tl", "Pb", "Bi", "Po", "At", "Rn", "Fr", "Ra", "Ac", "Th", "Pa", "U", "Np", "Pu", "Am", "Cm",
    "Bk", "Cf", "Es", "Fm", "Md", "No", "Lr", "Rf", "Db", "Sg", "Bh", "Hs", "Mt", "Ds", "Rg", "Cn",
    "Nh", "Fl", "Mc", "Lv", "Ts", "Og",
];

/// The chemical symbol of atomic number `z` (`X` when unknown, as MDAnalysis and ASE write a
/// dummy atom).
pub fn element_symbol(z: u32) -> &'static str {
    SYMBOLS.get(z as usize).copied().unwrap_or("X")
}

/// One particle's names and its residue and chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Atom {
    /// `particle.names`, trimmed (the element symbol when absent).
    pub name: String,
    /// The symbol of `particle.elements` (`X` when absent).
    pub element: &'static str,
    /// `residue.names` of its residue (`UNK` when absent).
    pub resname: String,
    /// `residue.ids` of its residue as a number (the residue index + 1 when absent or not
    /// a number).
    pub resid: i64,
    /// `chain.names` of its residue's chain (empty when absent).
    pub chain: String,
}

/// The particles and bonds of a session.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Topology {
    /// One per particle, in order.
    pub atoms: Vec<Atom>,
    /// `bond.pairs`, 0-based particle indices; pairs naming a particle past the count are
    /// left out (see `dropped_bonds`).
    pub bonds: Vec<(u32, u32)>,
    /// Pairs of `bond.pairs` that named a particle that does not exist.
    pub dropped_bonds: usize,
}

impl Topology {
    /// The topology of `particles` particles from the aggregated frame `view`. Every index
    /// read from the recording is checked against the array it points into.
    pub fn from_view(view: &FrameView, particles: usize) -> Topology {
        let array = |key: &str| view.arrays.get(key);
        let strings = |key: &str| array(key).and_then(|a| a.as_strings()).unwrap_or(&[]);
        let indices = |key: &str| array(key).and_then(|a| a.as_indices()).unwrap_or(&[]);
        let names = strings("particle.names");
        let elements = indices("particle.elements");
        let residues = indices("particle.residues");
        let resnames = strings("residue.names");
        let residue_ids = array("residue.ids");
        let residue_chains = indices("residue.chains");
        let chain_names = strings("chain.names");
        let atoms = (0..particles)
            .map(|i| {
                let element = element_symbol(elements.get(i).copied().unwrap_or(0));
                let residue = residues.get(i).map(|&r| r as usize);
                let resid = residue
                    .and_then(|r| residue_ids.and_then(|a| a.text_at(r)))
                    .and_then(|t| t.trim().parse::<i64>().ok())
                    .unwrap_or_else(|| residue.map_or(1, |r| r as i64 + 1));
                let chain = residue
                    .and_then(|r| residue_chains.get(r))
                    .and_then(|&c| chain_names.get(c as usize))
                    .map_or_else(String::new, |c| c.trim().to_string());
                Atom {
                    name: names
                        .get(i)
                        .map(|n| n.trim().to_string())
                        .filter(|n| !n.is_empty())
                        .unwrap_or_else(|| element.to_string()),
                    element,
                    resname: residue
                        .and_then(|r| resnames.get(r))
                        .map(|n| n.trim().to_string())
                        .filter(|n| !n.is_empty())
                        .unwrap_or_else(|| "UNK".to_string()),
                    resid,
                    chain,
                }
            })
            .collect();
        let pairs = indices("bond.pairs");
        let mut bonds = Vec::with_capacity(pairs.len() / 2);
        let mut dropped_bonds = 0;
        for pair in pairs.chunks_exact(2) {
            if (pair[0] as usize) < particles && (pair[1] as usize) < particles {
                bonds.push((pair[0], pair[1]));
            } else {
                dropped_bonds += 1;
            }
        }
        Topology {
            atoms,
            bonds,
            dropped_bonds,
        }
    }
}
