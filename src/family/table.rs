//! The one registration table of the task families: each family's
//! command-line name, what it is, its knowledge book (the rule family
//! explained, never the hidden member), its default counts, its black box
//! and the family-specific flags that remake its domain file. Adding a
//! family is adding a row here (and its module); nothing else matches on
//! family names.

use super::{
    BlackBox, FamilyError, FamilyParams, ciphers, circuits, mechanics, opponents, programs,
    puzzles, rules3,
};

/// One registered family.
#[derive(Clone, Copy, Debug)]
pub struct Family {
    /// The command-line name (`kumo-gen family NAME`), also the domain's.
    pub name: &'static str,
    /// What the hidden box is, one line.
    pub about: &'static str,
    /// The ORACLE task type this family stands for.
    pub box_type: &'static str,
    /// The knowledge book: how boxes of this family work, written into the
    /// domain file's header and docs/black-boxes.md.
    pub book: &'static str,
    /// Default (hypotheses drawn, probes drawn). A domain file grows as
    /// hypotheses x hypotheses x probes when most answers differ (every
    /// state lists the hypotheses it rules out), so the defaults keep the
    /// shipped example near a megabyte at most.
    pub default_counts: (usize, usize),
    /// Default counts of `--hard` boxes (their probes have more distinct
    /// answers, so the domain file grows faster).
    pub hard_counts: (usize, usize),
    /// Draws the hypotheses and probes and evaluates every answer.
    pub black_box: fn(&FamilyParams) -> Result<BlackBox, FamilyError>,
    /// The family-specific flags, as `kumo-gen family` takes them.
    pub flags: fn(&FamilyParams) -> String,
}

fn level_flag(p: &FamilyParams) -> String {
    if p.hard {
        " --hard".into()
    } else {
        String::new()
    }
}

/// Every family, in the order `kumo-gen family --help` lists them.
pub const FAMILIES: &[Family] = &[
    Family {
        name: "rules3",
        about: "WILT-style hidden rules over integer triples",
        box_type: "hidden rules (WILT)",
        book: rules3::BOOK,
        default_counts: (200, 40),
        hard_counts: (200, 40),
        black_box: rules3::black_box,
        flags: |p| format!(" --max-value {}", p.max_value),
    },
    Family {
        name: "circuits",
        about: "boolean circuits",
        box_type: "circuit rules",
        book: circuits::BOOK,
        default_counts: (200, 40),
        hard_counts: (200, 40),
        black_box: circuits::black_box,
        flags: |p| format!(" --inputs {} --gates {}", p.inputs, p.gates),
    },
    Family {
        name: "ciphers",
        about: "classical cipher keys",
        box_type: "encryption rules",
        book: ciphers::BOOK,
        // Ciphers answer almost every probe differently per key, so each
        // probe has up to one state per key and the domain file grows as
        // keys x keys x probes.
        default_counts: (80, 25),
        hard_counts: (80, 25),
        black_box: ciphers::black_box,
        flags: |p| format!(" --alphabet {} --length {}", p.alphabet, p.length),
    },
    Family {
        name: "programs",
        about: "small straight-line programs, read at checkpoints",
        box_type: "code intent",
        book: programs::BOOK,
        default_counts: (60, 16),
        hard_counts: (60, 24),
        black_box: programs::black_box,
        flags: level_flag,
    },
    Family {
        name: "mechanics",
        about: "a thrown ball with hidden launch parameters, positions rounded",
        box_type: "physics systems",
        book: mechanics::BOOK,
        default_counts: (40, 16),
        hard_counts: (40, 16),
        black_box: mechanics::black_box,
        flags: level_flag,
    },
    Family {
        name: "puzzles",
        about: "a secret code with a modified Bulls-and-Cows feedback rule",
        box_type: "interactive puzzles",
        book: puzzles::BOOK,
        default_counts: (64, 30),
        hard_counts: (100, 30),
        black_box: puzzles::black_box,
        flags: level_flag,
    },
    Family {
        name: "opponents",
        about: "a fixed rock-paper-scissors strategy in a repeated game",
        box_type: "game strategies",
        book: opponents::BOOK,
        default_counts: (200, 40),
        hard_counts: (200, 40),
        black_box: opponents::black_box,
        flags: level_flag,
    },
];

/// The family called `name`, or an error listing them.
pub fn find(name: &str) -> Result<&'static Family, FamilyError> {
    FAMILIES.iter().find(|f| f.name == name).ok_or_else(|| {
        FamilyError::new(
            format!("unknown family `{name}`"),
            format!("families are {}", names().join(", ")),
        )
    })
}

/// Every family's name, in table order.
pub fn names() -> Vec<&'static str> {
    FAMILIES.iter().map(|f| f.name).collect()
}
