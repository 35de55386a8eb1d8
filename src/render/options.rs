//! Rendering choices that are not in the templates: what the SFT system
//! message carries, and whether assistant turns explain themselves.

/// What the SFT system message carries besides the game description.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SftBook {
    /// The knowledge book (prose).
    #[default]
    Prose,
    /// The compact symbolic rule table (`symbolic.j2`).
    Symbolic,
}

/// Rendering choices that are not in the templates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RenderOptions {
    pub sft_book: SftBook,
    /// Assistant turns explain, from facts, what the last observation
    /// ruled out before giving the answer.
    pub rationale: bool,
}
