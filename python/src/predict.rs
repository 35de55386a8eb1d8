//! `kumo_gen._native.PredictSession`: one trial of the explore-then-predict
//! protocol (docs/black-boxes.md "The explore-then-predict protocol"),
//! driven one reply at a time: the library's
//! [`kumo_gen::game::predict::PredictGame`], the game `kumo-gen eval
//! --turns` drives (its rules, prompts, test inputs and record; nothing
//! re-implemented here). What a step returns shows only what the rules
//! show at that point: a probe's output only when the feedback shows it,
//! a verdict only with more than one attempt.

use pyo3::prelude::*;

use kumo_gen::game::predict::{
    Feedback, MAX_PREDICT, Phase, PredictGame, PredictRules, PredictStep,
};

use super::*;

/// One explore-then-predict trial of a task.
#[pyclass(module = "kumo_gen._native", name = "PredictSession")]
pub(crate) struct PyPredictSession {
    inner: PredictGame,
}

#[pymethods]
impl PyPredictSession {
    /// `turns` (T, required), `tests` (K), `attempts` (s), each 1 to 1000,
    /// and `feedback` (`"each"` or `"end"`), as eval's flags; `model`
    /// decides the system message's role as in eval.
    #[new]
    #[pyo3(signature = (task, turns, tests=5, attempts=1, feedback="each", model=""))]
    fn new(
        task: &PyTask,
        turns: usize,
        tests: usize,
        attempts: usize,
        feedback: &str,
        model: &str,
    ) -> PyResult<Self> {
        for (name, value) in [("turns", turns), ("tests", tests), ("attempts", attempts)] {
            if !(1..=MAX_PREDICT).contains(&value) {
                return Err(value_error(format!(
                    "{name} must be from 1 to {MAX_PREDICT}, not {value}"
                )));
            }
        }
        let feedback: Feedback = feedback.parse().map_err(value_error)?;
        let rules = PredictRules {
            turns,
            tests,
            attempts,
            feedback,
        };
        let inner = PredictGame::new(Arc::clone(&task.inner), &task.domain, rules, model)
            .map_err(value_error)?;
        Ok(PyPredictSession { inner })
    }

    /// The messages eval sends for the next reply (`None` once over).
    fn request<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.inner
            .request()
            .map(|messages| to_py(py, &Value::Array(messages)))
            .transpose()
    }

    /// Records a reply (`None`: the model gave no text) and returns what it
    /// led to: `{"kind": "probe", "action"[, "observation"]}` (the output
    /// only when shown now), `{"kind": "stop"}`, `{"kind": "parse_error"}`
    /// or `{"kind": "prediction", "test", "predicted_output"[, "right"]}`
    /// (`right` only with more than one attempt).
    #[pyo3(signature = (text, tokens=0))]
    fn respond<'py>(
        &mut self,
        py: Python<'py>,
        text: Option<&str>,
        tokens: u64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let step = self
            .inner
            .respond(text, tokens)
            .ok_or_else(|| PyRuntimeError::new_err("the trial is over"))?;
        let value = match step {
            PredictStep::Probe { action, shown } => match shown {
                Some(v) => serde_json::json!({"kind": "probe", "action": action, "observation": v}),
                None => serde_json::json!({"kind": "probe", "action": action}),
            },
            PredictStep::Stopped => serde_json::json!({"kind": "stop"}),
            PredictStep::Unusable => serde_json::json!({"kind": "parse_error"}),
            PredictStep::Predicted {
                test,
                answer,
                right,
                ..
            } => {
                let mut shown = serde_json::json!({"kind": "prediction", "test": test, "predicted_output": answer});
                if self.inner.rules().attempts > 1 {
                    shown["right"] = serde_json::json!(right);
                }
                shown
            }
        };
        to_py(py, &value)
    }

    #[getter]
    fn finished(&self) -> bool {
        self.inner.is_finished()
    }

    /// Every test right within its attempts (eval's `successful`).
    #[getter]
    fn successful(&self) -> bool {
        self.inner.is_finished() && self.inner.trial().successful
    }

    /// The share of tests right (the `predict` record's); `None` until
    /// the trial is over.
    #[getter]
    fn accuracy(&self) -> Option<f64> {
        self.inner.trial().predict.map(|record| record.accuracy)
    }

    /// `"explore"`, `"predict"` or `"over"`.
    #[getter]
    fn phase(&self) -> &'static str {
        match self.inner.phase() {
            Phase::Explore { .. } => "explore",
            Phase::Predict { .. } => "predict",
            Phase::Over => "over",
        }
    }

    #[getter]
    fn replies(&self) -> usize {
        self.inner.trial().generated_text.len()
    }

    /// The trial in KUMO's result format with its `predict` record.
    fn trial<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let value = serde_json::to_value(self.inner.trial()).map_err(value_error)?;
        to_py(py, &value)
    }
}
