//! `kumo_gen._native.Moves`: the per-move values of one game of a task
//! ([`kumo_gen::analysis::Analyst`], `kumo-gen moves`' rows one move at a
//! time), for the dense rewards of the Python `Env` and the framework adapters
//! (one definition: `kumo_gen::analysis::dense_reward`, docs/analytics.md).
//!
//! The memo is the line's: every `Moves` of one line (same domain, same
//! line text) alive in the process shares one analyst
//! ([`kumo_gen::analysis::Analysts`]), freed with the last of them, so a
//! GRPO group of episodes of one line searches it once and an `Env` that
//! played 100 000 lines holds the memo of the line it plays.

use pyo3::prelude::*;

use super::*;

/// Per-move values of one game of a task (`kumo_gen::analysis`): the
/// state is the candidates and the actions left; each move is scored
/// against the exact optimum and earns the library's dense reward
/// (`kumo_gen::analysis::dense_reward`, docs/analytics.md). The game sits
/// behind a mutex; its memo is shared with the other games of the line
/// (the same floats: `kumo_gen::analysis::live`).
#[pyclass(module = "kumo_gen._native", name = "Moves")]
pub(crate) struct PyMoves {
    game: std::sync::Mutex<LiveGame>,
}

impl PyMoves {
    fn game(&self) -> std::sync::MutexGuard<'_, LiveGame> {
        self.game
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The state's values as `Moves.state()` gives them.
fn state_json(game: &mut LiveGame) -> PyResult<Value> {
    let state = game.state();
    let values = game.state_values().map_err(value_error)?;
    let analyst = game.analyst();
    let names = analyst.action_names();
    let q: serde_json::Map<String, Value> = values
        .q
        .iter()
        .map(|&(a, q)| (names[a].clone(), Value::from(q)))
        .collect();
    let answer = values
        .is_base()
        .then(|| analyst.golden_answer(state))
        .flatten();
    Ok(serde_json::json!({
        "value": values.value,
        "q": q,
        "optimal": values.optimal.iter().map(|&a| names[a].clone()).collect::<Vec<_>>(),
        "best": values.best.map(|a| names[a].clone()),
        "answer": answer.map(|t| analyst.truth_names()[t].clone()),
        "candidates": analyst.truths_in(state.truths),
        "actions_left": analyst.actions_in(state.actions),
    }))
}

#[pymethods]
impl PyMoves {
    #[new]
    fn new(task: &PyTask) -> PyResult<Self> {
        static ANALYSTS: std::sync::OnceLock<Analysts<(String, String)>> =
            std::sync::OnceLock::new();
        let key = (task.domain.source_hash.clone(), task.line.clone());
        let game = ANALYSTS
            .get_or_init(Analysts::default)
            .game(key, || {
                Analyst::new(&task.domain, &task.inner.instance, SearchBudget::default())
            })
            .map_err(value_error)?;
        Ok(PyMoves {
            game: std::sync::Mutex::new(game),
        })
    }

    /// The state now: `{"value", "q": {action: Q}, "optimal": [actions],
    /// "best", "answer", "candidates", "actions_left"}` (`best` is `None`
    /// where the optimal move is to answer, `answer` then the certified
    /// truth).
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &state_json(&mut self.game())?)
    }

    /// Scores the move naming `name` (an action or a truth of the
    /// instance) at the current state and applies it: the row `kumo-gen
    /// moves` writes (`step`, `action`, `answer`, `proven`, `correct`,
    /// `candidates`, `candidates_after`, `actions_left`, `value`, `q`,
    /// `regret`, `reward`, `optimal`, `redundant`, `repeated`); `None` for
    /// a name of neither (nothing changes).
    fn step<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        let mut game = self.game();
        match game.step(name).map_err(value_error)? {
            None => Ok(None),
            Some(analysed) => to_py(py, &game.analyst().move_json(&analysed)).map(Some),
        }
    }

    /// One reply of an episode, as the dense-reward adapters read it:
    /// `{"reward", "regret", "optimal_actions", "move"}` — the reply's
    /// dense reward (`kumo_gen::analysis::dense_reward`; 0 for `None`, a
    /// reply that named nothing, or a name of neither an action nor a
    /// truth), its regret, the optimal actions of the state it answered
    /// (empty where answering is optimal) and the move's row (`step`'s;
    /// `None` when it named nothing).
    fn score<'py>(&self, py: Python<'py>, name: Option<&str>) -> PyResult<Bound<'py, PyAny>> {
        let mut game = self.game();
        let scored = game.reward(name).map_err(value_error)?;
        let analyst = game.analyst();
        let optimal: Vec<&str> = scored
            .before
            .optimal
            .iter()
            .map(|&a| analyst.action_names()[a].as_str())
            .collect();
        let value = serde_json::json!({
            "reward": scored.reward,
            "regret": scored.analysed.as_ref().map_or(0.0, |m| m.regret),
            "optimal_actions": optimal,
            "move": scored.analysed.as_ref().map(|m| analyst.move_json(m)),
        });
        to_py(py, &value)
    }

    /// Back to the start of the game (the memo is kept).
    fn reset(&self) {
        self.game().restart();
    }

    /// Actions of the golden trajectory on this instance.
    #[getter]
    fn golden_length(&self) -> PyResult<usize> {
        self.game().analyst().golden_length().map_err(value_error)
    }
}
