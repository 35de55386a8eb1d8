//! `kumo_gen._native.Moves`: the per-move values of one game of a task
//! ([`kumo_gen::analysis::Analyst`], `kumo-gen moves`' rows one move at a
//! time), for the Python `Env`'s dense rewards (docs/analytics.md).

use pyo3::prelude::*;

use super::*;

/// Per-move values of one game of a task (`kumo_gen::analysis`): the
/// state is the candidates and the actions left; each move is scored
/// against the exact optimum (docs/analytics.md). The game sits behind a
/// mutex: its memo is not shared between threads.
#[pyclass(module = "kumo_gen._native", name = "Moves")]
pub(crate) struct PyMoves {
    game: std::sync::Mutex<MovesGame>,
}

/// The analyst of one instance and where the game stands.
struct MovesGame {
    analyst: Analyst,
    state: State,
    steps: usize,
}

impl PyMoves {
    fn game(&self) -> std::sync::MutexGuard<'_, MovesGame> {
        self.game
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[pymethods]
impl PyMoves {
    #[new]
    fn new(task: &PyTask) -> PyResult<Self> {
        let analyst = Analyst::new(&task.domain, &task.inner.instance, SearchBudget::default())
            .map_err(value_error)?;
        let state = analyst.root();
        Ok(PyMoves {
            game: std::sync::Mutex::new(MovesGame {
                analyst,
                state,
                steps: 0,
            }),
        })
    }

    /// The state now: `{"value", "q": {action: Q}, "optimal": [actions],
    /// "best", "answer", "candidates", "actions_left"}` (`best` is `None`
    /// where the optimal move is to answer, `answer` then the certified
    /// truth).
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let mut game = self.game();
        let state = game.state;
        let values = game.analyst.state_values(state).map_err(value_error)?;
        let analyst = &game.analyst;
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
        let value = serde_json::json!({
            "value": values.value,
            "q": q,
            "optimal": values.optimal.iter().map(|&a| names[a].clone()).collect::<Vec<_>>(),
            "best": values.best.map(|a| names[a].clone()),
            "answer": answer.map(|t| analyst.truth_names()[t].clone()),
            "candidates": analyst.truths_in(state.truths),
            "actions_left": analyst.actions_in(state.actions),
        });
        to_py(py, &value)
    }

    /// Scores the move naming `name` (an action or a truth of the
    /// instance) at the current state and applies it: the row `kumo-gen
    /// moves` writes (`step`, `action`, `answer`, `proven`, `correct`,
    /// `candidates`, `candidates_after`, `actions_left`, `value`, `q`,
    /// `regret`, `optimal`, `redundant`, `repeated`); `None` for a name of
    /// neither (nothing changes).
    fn step<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        let mut game = self.game();
        let Some(said) = game.analyst.said(name) else {
            return Ok(None);
        };
        let (state, steps) = (game.state, game.steps);
        let (analysed, next) = game.analyst.step(state, steps, said).map_err(value_error)?;
        game.state = next;
        game.steps += 1;
        to_py(py, &game.analyst.move_json(&analysed)).map(Some)
    }

    /// Back to the start of the game (the memo is kept).
    fn reset(&self) {
        let mut game = self.game();
        game.state = game.analyst.root();
        game.steps = 0;
    }

    /// Actions of the golden trajectory on this instance.
    #[getter]
    fn golden_length(&self) -> PyResult<usize> {
        self.game().analyst.golden_length().map_err(value_error)
    }
}
