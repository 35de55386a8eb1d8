//! Building `eval`'s suites from a dataset: which instances of a file are
//! played ([`Picks::choose`]: `--limit` / `--sample` positions, each
//! instance checked for the offline player and the protocol, missing
//! books counted) and where their tasks come from ([`DatasetTasks`]).

use std::path::PathBuf;
use std::sync::Arc;

use super::TaskSource;
use super::players::{Player, PlayerError, UnplayableFile};
use crate::dataset::{Dataset, DatasetError, Setting};
use crate::game::Task;
use crate::game::predict::{PredictRules, draw_tests};
use crate::render::{RenderOptions, Renderer, Templates};

/// A suite's tasks: the dataset's file read again a line at a time when
/// the run plays it.
pub struct DatasetTasks {
    pub data: Dataset,
    pub setting: Setting,
    pub templates: Arc<Templates>,
    pub require_books: bool,
}

impl TaskSource for DatasetTasks {
    fn for_each(
        &self,
        positions: &[usize],
        each: &mut dyn FnMut(Task) -> bool,
    ) -> Result<(), DatasetError> {
        let renderer = Renderer::new(&self.templates, RenderOptions::default());
        self.data.for_each_task(
            &renderer,
            &self.setting,
            positions,
            self.require_books,
            |_, task| each(task),
        )
    }
}

/// The instances chosen from a file (position and seed, ascending), and
/// the fewest truths among them.
pub type Chosen = (Vec<(usize, u64)>, Option<usize>);

/// Which instances of a file to play, and what each must allow.
pub struct Picks {
    /// The positions to play (`--sample`), else the first `limit`.
    pub positions: Option<Vec<usize>>,
    pub limit: usize,
    /// Instances without their book file are left out.
    pub require_books: bool,
    /// The offline player, whose needs each instance must meet.
    pub player: Option<Player>,
    /// The explore-then-predict rules, whose test inputs each instance
    /// must have.
    pub predict: Option<PredictRules>,
}

impl Picks {
    /// The instances of `setting`'s file to play (position and seed), and
    /// the fewest truths among them; counts the missing books (`missing`:
    /// how many, and the first). Errors: the file's ([`DatasetError`]) and
    /// an instance that cannot be played ([`UnplayableFile`]), as the
    /// caller's error type.
    pub fn choose<E: From<DatasetError> + From<UnplayableFile>>(
        &self,
        data: &Dataset,
        setting: &Setting,
        missing: &mut (usize, Option<PathBuf>),
    ) -> Result<Chosen, E> {
        let file = format!("{}/{setting}.jsonl", data.name());
        let unplayable = |source: PlayerError| UnplayableFile {
            file: file.clone(),
            source,
        };
        let mut chosen = Vec::new();
        let mut fewest_truths: Option<usize> = None;
        let mut next = self
            .positions
            .as_ref()
            .map(|p| p.iter().copied().peekable());
        let mut reader = data.stream(setting)?;
        while let Some(read) = reader.next_instance()? {
            let picked = match &mut next {
                Some(next) => next.next_if_eq(&read.position).is_some(),
                None => read.position < self.limit,
            };
            if !picked {
                continue;
            }
            let book = data.book_path(setting, read.position);
            if !book.exists() {
                missing.0 += 1;
                missing.1.get_or_insert(book);
                if self.require_books {
                    continue;
                }
            }
            if let Some(player) = self.player {
                player.check(&read.instance).map_err(unplayable)?;
            }
            if let Some(rules) = self.predict {
                draw_tests(data.domain(), &read.instance, rules.tests)
                    .map_err(|e| unplayable(PlayerError::Predict(e)))?;
            }
            let truths = read.instance.truths.len();
            fewest_truths = Some(fewest_truths.map_or(truths, |t| t.min(truths)));
            chosen.push((read.position, read.instance.seed));
        }
        Ok((chosen, fewest_truths))
    }
}
