//! The locality stage's additions to the access figures: a colour class per
//! access (the access table's `colour` column, with the class names in
//! [`crate::filter::ClassNames`]) and the pattern label of each (variable,
//! source line) pair (the pattern table, [`crate::filter::schema::pattern`]).
//!
//! With classes, every scatter draws one trace per class in the class's
//! colour, named after it, and aggregation above the point budget groups
//! accesses of one class only, so each point stays exact and of one class.
//! Classes come best first (`L1 hit`, shortest reuse) and are coloured
//! along one ramp from green to red.
use std::collections::HashMap;
use std::sync::Arc;

use polars::prelude::*;

use super::tables::Item;
use crate::filter::schema::pattern as pt;
use crate::filter::{LineId, VarId};
use crate::vis::error::VisError;
use crate::vis::options::FigureOptions;

/// Colour classes as the figures use them.
pub(crate) struct ClassInfo {
    /// Legend title.
    pub(crate) title: String,
    /// Class names, best first.
    pub(crate) labels: Arc<Vec<String>>,
    /// Colour of each class.
    pub(crate) colours: Vec<String>,
}

/// Pattern labels by (variable, line), as indices into one string table
/// whose entry 0 is `-` (no label known).
pub(crate) struct PatternIds {
    ids: HashMap<(VarId, LineId), u32>,
    pub(crate) names: Arc<Vec<String>>,
}

impl PatternIds {
    /// The label index of (`var`, `line`), 0 when unknown.
    pub(crate) fn id(&self, var: VarId, line: LineId) -> u32 {
        self.ids.get(&(var, line)).copied().unwrap_or(0)
    }
}

/// What the options and the access table add to a figure.
pub(crate) struct Annot {
    pub(crate) classes: Option<ClassInfo>,
    pub(crate) patterns: PatternIds,
    /// Class as drawn of each class value the accesses carry.
    remap: Vec<u8>,
}

/// The colour classes a pass over the accesses met: which occur, and
/// whether the accesses carry classes at all.
#[derive(Clone, Debug)]
pub(crate) struct ClassesSeen {
    /// Per class value, whether some access has it.
    pub(crate) present: [bool; 256],
    /// Whether the batches had a colour column.
    pub(crate) coloured: bool,
}

impl Default for ClassesSeen {
    fn default() -> Self {
        ClassesSeen {
            present: [false; 256],
            coloured: false,
        }
    }
}

impl ClassesSeen {
    /// What a pass over uncoloured accesses, some at least, sees: every
    /// one is class 0.
    pub(crate) fn uncoloured() -> ClassesSeen {
        let mut c = ClassesSeen::default();
        c.present[0] = true;
        c
    }

    /// Notes the class of one access.
    #[inline]
    pub(crate) fn add(&mut self, it: &Item) {
        self.present[it.class as usize] = true;
        self.coloured |= it.coloured;
    }
}

impl Annot {
    /// Reads the annotations of `o` and checks them against the classes the
    /// accesses had (`seen`): with classes, the accesses must carry a
    /// colour class that names a class. With `sparse` (the names list every
    /// class the model can give), the classes no access has are dropped and
    /// the others renumbered densely, in order.
    pub(crate) fn new(
        o: &FigureOptions,
        seen: &ClassesSeen,
        sparse: bool,
    ) -> Result<Annot, VisError> {
        let mut remap: Vec<u8> = (0..=255).collect();
        let classes = match &o.annotations.classes {
            None => None,
            Some(c) => {
                if !seen.coloured {
                    return Err(VisError::Schema {
                        table: "access",
                        detail: format!(
                            "the figure is coloured by {} but the access table has no `colour` column",
                            c.title
                        ),
                    });
                }
                if let Some(bad) = (c.labels.len()..256).find(|&x| seen.present[x]) {
                    return Err(VisError::Schema {
                        table: "access",
                        detail: format!(
                            "colour class {bad} has no name: only {} classes are named",
                            c.labels.len()
                        ),
                    });
                }
                let mut labels = c.labels.clone();
                if sparse {
                    labels.clear();
                    for (k, l) in c.labels.iter().enumerate() {
                        if seen.present[k] {
                            remap[k] = labels.len() as u8;
                            labels.push(l.clone());
                        }
                    }
                }
                let n = labels.len();
                Some(ClassInfo {
                    title: c.title.clone(),
                    labels: Arc::new(labels),
                    colours: (0..n).map(|i| ramp(i, n)).collect(),
                })
            }
        };
        let patterns = match &o.annotations.patterns {
            Some(df) => read_patterns(df)?,
            None => PatternIds {
                ids: HashMap::new(),
                names: Arc::new(vec!["-".into()]),
            },
        };
        Ok(Annot {
            classes,
            patterns,
            remap,
        })
    }

    /// The class of access `it` (0 without classes).
    #[inline]
    pub(crate) fn class(&self, it: &Item) -> u8 {
        match &self.classes {
            Some(_) => self.remap[it.class as usize],
            None => 0,
        }
    }

    /// Number of classes drawn apart (1 without classes).
    pub(crate) fn n_classes(&self) -> usize {
        self.classes.as_ref().map_or(1, |c| c.labels.len())
    }
}

fn read_patterns(df: &DataFrame) -> Result<PatternIds, VisError> {
    let bad = |e: PolarsError| VisError::Schema {
        table: "pattern",
        detail: format!("it needs the columns var and line (UInt32) and pattern (String) ({e})"),
    };
    let var = df
        .column(pt::VAR)
        .and_then(|c| c.u32().cloned())
        .map_err(bad)?;
    let line = df
        .column(pt::LINE)
        .and_then(|c| c.u32().cloned())
        .map_err(bad)?;
    let label = df
        .column(pt::LABEL)
        .and_then(|c| c.str().cloned())
        .map_err(bad)?;
    let mut names = vec!["-".to_string()];
    let mut by_name: HashMap<String, u32> = HashMap::new();
    let mut ids = HashMap::new();
    for ((v, l), s) in var.into_iter().zip(&line).zip(&label) {
        let (Some(v), Some(l), Some(s)) = (v, l, s) else {
            continue;
        };
        let id = *by_name.entry(s.to_string()).or_insert_with(|| {
            names.push(s.to_string());
            names.len() as u32 - 1
        });
        ids.insert((VarId(v), LineId(l)), id);
    }
    Ok(PatternIds {
        ids,
        names: Arc::new(names),
    })
}

/// Colour `i` of `n` along green, light green, yellow, orange, red.
pub(crate) fn ramp(i: usize, n: usize) -> String {
    const STOPS: [(f64, f64, f64); 5] = [
        (26.0, 152.0, 80.0),
        (145.0, 207.0, 96.0),
        (254.0, 224.0, 139.0),
        (252.0, 141.0, 89.0),
        (215.0, 48.0, 39.0),
    ];
    let t = if n <= 1 {
        0.0
    } else {
        i as f64 / (n - 1) as f64 * (STOPS.len() - 1) as f64
    };
    let k = (t.floor() as usize).min(STOPS.len() - 2);
    let f = t - k as f64;
    let mix = |a: f64, b: f64| (a + (b - a) * f).round() as u8;
    let (a, b) = (STOPS[k], STOPS[k + 1]);
    format!(
        "#{:02x}{:02x}{:02x}",
        mix(a.0, b.0),
        mix(a.1, b.1),
        mix(a.2, b.2)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ramp_runs_from_green_to_red() {
        assert_eq!(ramp(0, 4), "#1a9850");
        assert_eq!(ramp(3, 4), "#d73027");
        assert_eq!(ramp(0, 1), "#1a9850");
        assert_eq!(ramp(2, 5), "#fee08b");
    }
}
