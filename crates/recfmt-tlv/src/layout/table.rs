//! Which layout decodes which type id in one session: `meta.json`'s `record_catalog`, user
//! layouts and the built-in table, resolved.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{FieldType, RecordLayout, builtin_layouts};

/// One entry of `meta.json`'s `record_catalog`: the authority for id to name.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CatalogEntry {
    /// Record name.
    pub name: String,
    /// Field names (types are not in the catalog).
    #[serde(default)]
    pub fields: Vec<String>,
}

/// The layouts in force for one session: which type id decodes how.
#[derive(Debug, Clone, Default)]
pub struct LayoutTable {
    by_id: BTreeMap<u16, RecordLayout>,
    /// Notes about decisions taken while resolving (catalog names without a layout, ...).
    pub notes: Vec<String>,
}

impl LayoutTable {
    /// Resolves layouts: `record_catalog` (when present) maps ids to names; a name's layout
    /// comes from the user layouts, then the built-in table. Without a catalog, user layouts
    /// win over built-in ones with the same id.
    pub fn resolve(
        catalog: Option<&BTreeMap<u16, CatalogEntry>>,
        user: &[RecordLayout],
    ) -> LayoutTable {
        let builtin = builtin_layouts();
        let mut table = LayoutTable::default();
        match catalog {
            Some(catalog) => {
                for (&id, entry) in catalog {
                    let known = user
                        .iter()
                        .find(|l| l.name == entry.name)
                        .or_else(|| builtin.iter().find(|l| l.name == entry.name))
                        .or_else(|| user.iter().find(|l| l.type_id == id));
                    let Some(known) = known else {
                        table.notes.push(format!(
                            "record_catalog names type {id} {:?}, which has no layout: kept as raw bytes",
                            entry.name
                        ));
                        continue;
                    };
                    let mut layout = known.clone();
                    layout.type_id = id;
                    layout.name.clone_from(&entry.name);
                    rename_fields(&mut layout, &entry.fields, &mut table.notes);
                    table.by_id.insert(id, layout);
                }
                // User layouts for ids the catalog does not mention still apply.
                for l in user {
                    table.by_id.entry(l.type_id).or_insert_with(|| l.clone());
                }
            }
            None => {
                for l in builtin.into_iter().chain(user.iter().cloned()) {
                    table.by_id.insert(l.type_id, l);
                }
            }
        }
        table
    }

    /// The layout of a type id.
    pub fn get(&self, type_id: u16) -> Option<&RecordLayout> {
        self.by_id.get(&type_id)
    }

    /// All layouts by ascending type id.
    pub fn layouts(&self) -> impl Iterator<Item = &RecordLayout> {
        self.by_id.values()
    }
}

/// Applies the catalog's field names when they match the layout's value fields one to one
/// (the 1f3c316 generator renamed `u_s_cmd` to `u_s_req` without changing types).
fn rename_fields(layout: &mut RecordLayout, names: &[String], notes: &mut Vec<String>) {
    let count = layout.value_fields().count();
    if names.is_empty() {
        return;
    }
    if names.len() != count {
        notes.push(format!(
            "record_catalog lists {} fields for {}, its layout has {count}: layout names kept",
            names.len(),
            layout.name
        ));
        return;
    }
    let mut names = names.iter();
    for f in layout
        .fields
        .iter_mut()
        .filter(|f| matches!(f.ty, FieldType::Value(_)))
    {
        if let Some(n) = names.next() {
            f.name.clone_from(n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_renames_and_renumbers() {
        let mut catalog = BTreeMap::new();
        catalog.insert(
            3,
            CatalogEntry {
                name: "REC_ACTUATOR_CMD".into(),
                fields: vec![],
            },
        );
        catalog.insert(
            8,
            CatalogEntry {
                name: "REC_SPEED_CTRL_DEBUG".into(),
                fields: [
                    "v_d", "v_hat", "e_v", "u_s_raw", "u_s_cmd", "i_v", "sat_u_s",
                ]
                .map(String::from)
                .to_vec(),
            },
        );
        catalog.insert(
            99,
            CatalogEntry {
                name: "REC_MYSTERY".into(),
                fields: vec![],
            },
        );
        let table = LayoutTable::resolve(Some(&catalog), &[]);
        assert_eq!(table.get(3).unwrap().size(), 8);
        let speed = table.get(8).unwrap();
        assert_eq!(speed.value_fields().nth(4).unwrap().name, "u_s_cmd");
        assert!(table.get(99).is_none());
        assert!(table.get(1).is_none(), "the catalog is the authority");
        assert_eq!(table.notes.len(), 1);
    }
}
