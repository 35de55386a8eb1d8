//! `kumo_gen._native`: the `kumo-gen` library called in-process from
//! Python. The pure-Python package `kumo_gen` (beside this crate) builds
//! the user-facing API on these functions; nothing here re-implements a
//! stage:
//!
//! - domains: [`kumo_gen::domain::Registry`] (shipped domains, a
//!   `--domains-dir`, paths; compiled once per file: [`domains`]) and
//!   [`kumo_gen::domain::Domain::from_yaml`];
//! - generation: [`kumo_gen::pipeline::generate_lines`] (the dataset lines
//!   `kumo-gen generate` writes, byte for byte);
//! - labels: [`kumo_gen::pipeline::relabel`] (`kumo-gen label`);
//! - file names: [`kumo_gen::dataset::Setting`] (KUMO's setting name);
//! - play: [`kumo_gen::pipeline::task`] and
//!   [`kumo_gen::game::session::Session`] (`kumo-gen eval`'s prompt,
//!   parser, observation wording and KUMO's action counting), judged by
//!   [`kumo_gen::game::Judge`]; the explore-then-predict protocol's
//!   [`kumo_gen::game::predict::PredictGame`] ([`predict`]);
//! - per-move values: [`kumo_gen::analysis::Analyst`] (`kumo-gen moves`'
//!   rows, one move at a time, for dense rewards).
//!
//! Long work (generation, labelling) runs with the interpreter detached,
//! on a rayon pool of `threads` workers (0: one per core).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::Value;

use kumo_gen::analysis::{Analyst, Analysts, LiveGame};
use kumo_gen::dataset::Setting;
use kumo_gen::domain::{Domain, Registry};
use kumo_gen::eval::players;
use kumo_gen::game::Task;
use kumo_gen::game::protocol;
use kumo_gen::game::session::{self, Session};
use kumo_gen::game::{self, Judge, Step};
use kumo_gen::pipeline::relabel;
use kumo_gen::render::{RenderOptions, Renderer, Templates};
use kumo_gen::search::SearchBudget;
use kumo_gen::synth::{Params, SynthError};

mod domains;
mod moves;
mod predict;
use moves::PyMoves;
use predict::PyPredictSession;

fn value_error(message: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(message.to_string())
}

fn synth_error(e: SynthError) -> PyErr {
    value_error(format!("{e}\n  = help: {}", e.help))
}

/// A JSON value as Python objects (dicts keep their key order).
fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, to_py(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

/// The worker pool of `threads` threads (0: one per core), started once
/// per thread count and kept: a call that asks for one episode does not
/// pay for starting threads.
fn pool(threads: usize) -> PyResult<Arc<rayon::ThreadPool>> {
    static POOLS: OnceLock<std::sync::Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> =
        OnceLock::new();
    let mut pools = POOLS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(pool) = pools.get(&threads) {
        return Ok(Arc::clone(pool));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start worker threads: {e}")))?;
    let pool = Arc::new(pool);
    pools.insert(threads, Arc::clone(&pool));
    Ok(pool)
}

/// The shipped templates, loaded once.
fn shipped_templates() -> PyResult<&'static Templates> {
    static SHIPPED: OnceLock<Result<Templates, String>> = OnceLock::new();
    SHIPPED
        .get_or_init(|| Templates::resolve(None).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| PyRuntimeError::new_err(e.clone()))
}

/// A compiled domain (`kumo_gen.load_domain`).
#[pyclass(frozen, module = "kumo_gen._native", name = "Domain")]
struct PyDomain {
    inner: Arc<Domain>,
    warnings: Vec<String>,
}

impl PyDomain {
    fn new(domain: Domain, warnings: Vec<String>) -> Self {
        PyDomain {
            inner: Arc::new(domain),
            warnings,
        }
    }
}

#[pymethods]
impl PyDomain {
    #[getter]
    fn name(&self) -> String {
        self.inner.name.clone()
    }

    #[getter]
    fn title(&self) -> String {
        self.inner.title.clone()
    }

    #[getter]
    fn truth_noun(&self) -> String {
        self.inner.truth_noun.clone()
    }

    #[getter]
    fn action_noun(&self) -> String {
        self.inner.action_noun.clone()
    }

    #[getter]
    fn goal(&self) -> String {
        self.inner.goal.clone()
    }

    /// Truth names, in the file's order.
    #[getter]
    fn truths(&self) -> Vec<String> {
        self.inner.truths.clone()
    }

    /// Action names, in the file's order.
    #[getter]
    fn actions(&self) -> Vec<String> {
        self.inner.actions.iter().map(|a| a.name.clone()).collect()
    }

    /// Hash of the domain's source text (as in `manifest.json`).
    #[getter]
    fn source_hash(&self) -> String {
        self.inner.source_hash.clone()
    }

    /// Validation warnings (not errors), rendered.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    /// The domain document as a dict (the fields of `domains/*.yaml`).
    fn document<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let value = serde_json::to_value(&self.inner.document).map_err(value_error)?;
        to_py(py, &value)
    }

    fn __repr__(&self) -> String {
        format!(
            "<kumo_gen.Domain {:?}: {} truths, {} actions>",
            self.inner.name,
            self.inner.truths.len(),
            self.inner.actions.len()
        )
    }
}

/// Names of the known domains, sorted (`kumo-gen domains`).
#[pyfunction]
#[pyo3(signature = (domains_dir=None))]
fn domain_names(domains_dir: Option<std::path::PathBuf>) -> PyResult<Vec<String>> {
    let all = Registry::new(domains_dir).all().map_err(value_error)?;
    Ok(all.into_iter().map(|(name, _)| name).collect())
}

/// Loads a domain by name or path, as every command's `--domain` does
/// (compiled once per file: [`domains`]).
#[pyfunction]
#[pyo3(signature = (spec, domains_dir=None))]
fn load_domain(spec: &str, domains_dir: Option<std::path::PathBuf>) -> PyResult<PyDomain> {
    let (inner, warnings) = domains::load(spec, domains_dir).map_err(value_error)?;
    Ok(PyDomain { inner, warnings })
}

/// Compiles a domain from YAML (or JSON) text; `file` names it in errors.
#[pyfunction]
fn load_domain_text(file: &str, text: &str) -> PyResult<PyDomain> {
    let (domain, warnings) = Domain::from_yaml(file, text).map_err(value_error)?;
    Ok(PyDomain::new(
        domain,
        warnings.iter().map(ToString::to_string).collect(),
    ))
}

/// The domain file (YAML text) of a procedural task family, exactly as
/// `kumo-gen family NAME -o FILE` writes it.
#[pyfunction]
#[pyo3(signature = (name, hypotheses=None, probes=None, seed=0, max_value=9, inputs=4,
    gates=3, alphabet=5, length=2, hard=false))]
#[allow(clippy::too_many_arguments)]
fn family_yaml(
    name: &str,
    hypotheses: Option<usize>,
    probes: Option<usize>,
    seed: u64,
    max_value: u32,
    inputs: u32,
    gates: u32,
    alphabet: u32,
    length: u32,
    hard: bool,
) -> PyResult<String> {
    let (h, p) = kumo_gen::family::default_counts(name, hard);
    let params = kumo_gen::family::FamilyParams {
        hypotheses: hypotheses.unwrap_or(h),
        probes: probes.unwrap_or(p),
        seed,
        max_value,
        inputs,
        gates,
        alphabet,
        length,
        hard,
    };
    kumo_gen::family::domain_file(name, &params)
        .map(|(text, _report)| text)
        .map_err(|e| value_error(format!("{e} ({})", e.help)))
}

/// Dataset lines `start..start + n` of a setting, as `kumo-gen generate`
/// writes them (no newline); the lines before `start` are neither labelled
/// nor rendered unless a difficulty band (`min_expected`, ...) makes them
/// depend on their labels ([`kumo_gen::pipeline::generate_range_lines`]).
#[pyfunction]
#[pyo3(signature = (domain, truths, actions, n, seed=0, valid=1, decimals=2,
    allow_shortcuts=false, labels=true, search_budget=SearchBudget::DEFAULT_MAX_MEMO_ENTRIES,
    search_nodes=None, threads=0, start=0, exclude=Vec::new(), exclude_key="exact",
    min_expected=None, max_expected=None, min_golden=None, max_golden=None))]
#[allow(clippy::too_many_arguments)]
fn generate_lines(
    py: Python<'_>,
    domain: &PyDomain,
    truths: usize,
    actions: usize,
    n: u64,
    seed: u64,
    valid: usize,
    decimals: u32,
    allow_shortcuts: bool,
    labels: bool,
    search_budget: usize,
    search_nodes: Option<u64>,
    threads: usize,
    start: u64,
    exclude: Vec<std::path::PathBuf>,
    exclude_key: &str,
    min_expected: Option<f64>,
    max_expected: Option<f64>,
    min_golden: Option<usize>,
    max_golden: Option<usize>,
) -> PyResult<Vec<String>> {
    let band = kumo_gen::difficulty::Band {
        min_expected,
        max_expected,
        min_golden,
        max_golden,
        ..Default::default()
    }
    .some();
    check_budget(search_budget, search_nodes)?;
    let end = start
        .checked_add(n)
        .ok_or_else(|| value_error("`start + n` is too large"))?;
    let key = match exclude_key {
        "exact" => kumo_gen::contamination::KeyKind::Exact,
        "context" => kumo_gen::contamination::KeyKind::Context,
        "book" => kumo_gen::contamination::KeyKind::Book,
        other => {
            return Err(value_error(format!(
                "`exclude_key` must be \"exact\", \"context\" or \"book\", not {other:?}"
            )));
        }
    };
    let exclusion = if exclude.is_empty() {
        None
    } else {
        let read = kumo_gen::contamination::Exclusion::read(&domain.inner, &exclude, key)
            .map_err(|e| value_error(format!("{e} ({})", e.help())))?;
        Some(Arc::new(read))
    };
    let params = Params {
        truths,
        actions,
        valid,
        seed,
        allow_shortcuts,
        decimals,
    };
    let budget = labels.then_some(SearchBudget::with_nodes(search_budget, search_nodes));
    let domain = Arc::clone(&domain.inner);
    let pool = pool(threads)?;
    py.detach(move || {
        pool.install(|| {
            kumo_gen::pipeline::generate_range_lines(
                &domain,
                params,
                start..end,
                budget,
                exclusion,
                band,
            )
        })
    })
    .map_err(synth_error)
}

/// The search budgets of `generate_lines` and `label_lines`: both at
/// least 1, as the CLI's `--search-budget` and `--search-nodes`.
fn check_budget(search_budget: usize, search_nodes: Option<u64>) -> PyResult<()> {
    if search_budget == 0 {
        return Err(value_error("`search_budget` must be at least 1"));
    }
    if search_nodes == Some(0) {
        return Err(value_error("`search_nodes` must be at least 1"));
    }
    Ok(())
}

/// Labels instance lines as `kumo-gen label` does: per line, the line with
/// `optimal` set, whether the search ran over budget, and a warning.
#[pyfunction]
#[pyo3(signature = (domain, lines, search_budget=SearchBudget::DEFAULT_MAX_MEMO_ENTRIES,
    search_nodes=None, threads=0))]
fn label_lines(
    py: Python<'_>,
    domain: &PyDomain,
    lines: Vec<String>,
    search_budget: usize,
    search_nodes: Option<u64>,
    threads: usize,
) -> PyResult<Vec<(String, bool, Option<String>)>> {
    check_budget(search_budget, search_nodes)?;
    let budget = SearchBudget::with_nodes(search_budget, search_nodes);
    let domain = Arc::clone(&domain.inner);
    let pool = pool(threads)?;
    let lines: Vec<(String, String)> = lines
        .into_iter()
        .enumerate()
        .map(|(i, line)| (format!("line {}", i + 1), line))
        .collect();
    let results = py.detach(move || {
        pool.install(|| {
            relabel::label_lines(&domain, budget, relabel::Percentiles::PerLine, &lines)
        })
    });
    let errors: Vec<String> = results
        .iter()
        .filter_map(|r| r.as_ref().err().map(ToString::to_string))
        .collect();
    if !errors.is_empty() {
        return Err(value_error(errors.join("\n")));
    }
    Ok(results
        .into_iter()
        .flatten()
        .map(|o| (o.text, o.unlabelled, o.warning))
        .collect())
}

/// A Python value (dicts, lists, tuples, str, int, float, bool, None) as
/// JSON, converted exactly (no text round trip: serde_json's default float
/// parser is not correctly rounded for 17-digit numbers).
fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    use pyo3::types::{PyBool, PyFloat, PyInt, PyString, PyTuple};
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(i) = obj.cast::<PyInt>() {
        if let Ok(v) = i.extract::<i64>() {
            return Ok(Value::from(v));
        }
        return Ok(Value::from(i.extract::<u64>()?));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        let v = f.value();
        return serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| value_error(format!("{v} is not a JSON number")));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.to_cow()?.into_owned()));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = serde_json::Map::with_capacity(d.len());
        for (k, v) in d.iter() {
            let key = k
                .cast::<PyString>()
                .map_err(|_| value_error("JSON object keys must be strings"))?
                .to_cow()?
                .to_string();
            map.insert(key, from_py(&v)?);
        }
        return Ok(Value::Object(map));
    }
    if let Ok(l) = obj.cast::<PyList>() {
        return l
            .iter()
            .map(|v| from_py(&v))
            .collect::<PyResult<_>>()
            .map(Value::Array);
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        return t
            .iter()
            .map(|v| from_py(&v))
            .collect::<PyResult<_>>()
            .map(Value::Array);
    }
    Err(value_error(format!(
        "cannot write a `{}` as JSON",
        obj.get_type().name()?
    )))
}

/// A task dict as the writers write its line (compact, key order kept,
/// numbers in serde_json's shortest form).
#[pyfunction]
fn canonical_json(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    serde_json::to_string(&from_py(obj)?).map_err(value_error)
}

/// The answer in a reply, as eval reads it (`None` for no reply).
#[pyfunction]
#[pyo3(signature = (text))]
fn parse_answer(text: Option<&str>) -> Option<String> {
    protocol::parse_answer(text)
}

/// Whether `answer` is a truth of the instance line that none of its
/// observations rules out (KUMO's `evaluate_answer`).
#[pyfunction]
fn judge(domain: &PyDomain, line: &str, answer: &str) -> PyResult<bool> {
    let instance: game::InstanceLine = serde_json::from_str(line)
        .map_err(|e| value_error(format!("not an instance line: {e}")))?;
    let judge = Judge::new(&domain.inner, &instance).map_err(value_error)?;
    Ok(judge.evaluate(answer))
}

/// The reward of a finished trial ([`session::reward`]).
#[pyfunction]
#[pyo3(signature = (successful, action_count, expected_steps, efficiency=0.0))]
fn reward(
    successful: bool,
    action_count: usize,
    expected_steps: Option<f64>,
    efficiency: f64,
) -> f64 {
    session::reward(successful, action_count, expected_steps, efficiency)
}

/// One instance as `kumo-gen eval` plays it: the instance line, the
/// system prompt (platform prompt + knowledge book) and the judge.
#[pyclass(frozen, module = "kumo_gen._native", name = "Task")]
struct PyTask {
    inner: Arc<Task>,
    domain: Arc<Domain>,
    line: String,
}

#[pymethods]
impl PyTask {
    #[new]
    #[pyo3(signature = (domain, line, templates_dir=None))]
    fn new(
        domain: &PyDomain,
        line: String,
        templates_dir: Option<std::path::PathBuf>,
    ) -> PyResult<Self> {
        let loaded;
        let templates = match templates_dir {
            None => shipped_templates()?,
            Some(dir) => {
                loaded = Templates::resolve(Some(&dir)).map_err(value_error)?;
                &loaded
            }
        };
        let renderer = Renderer::new(templates, RenderOptions::default());
        let task =
            kumo_gen::pipeline::task(&renderer, &domain.inner, &line).map_err(value_error)?;
        Ok(PyTask {
            inner: Arc::new(task),
            domain: Arc::clone(&domain.inner),
            line,
        })
    }

    /// The instance line the task was made from.
    #[getter]
    fn line(&self) -> String {
        self.line.clone()
    }

    /// eval's system message: the platform prompt with the knowledge book.
    #[getter]
    fn system_prompt(&self) -> String {
        self.inner.system_prompt.clone()
    }

    /// eval's per-round instruction (KUMO's wording).
    #[getter]
    fn instruction(&self) -> String {
        protocol::instruction(&self.inner.instance.actions, &self.inner.instance.truths)
    }

    /// The optimal expected number of actions, when the line is labelled:
    /// exact, or a certified upper bound when `exact` is false.
    #[getter]
    fn expected_steps(&self) -> Option<f64> {
        self.inner.instance.expected_steps()
    }

    /// Whether `expected_steps` is proven optimal (`False`: a certified
    /// label, docs/output.md "Certified labels"); `None` when unlabelled.
    #[getter]
    fn exact(&self) -> Option<bool> {
        self.inner.instance.steps().map(|s| s.is_exact())
    }

    /// A certified label's proven lower bound of the optimal expected
    /// number of actions; `None` when exact or unlabelled.
    #[getter]
    fn lower_bound(&self) -> Option<f64> {
        match self.inner.instance.steps()? {
            kumo_gen::game::Steps::Certified { lower, .. } => Some(lower),
            kumo_gen::game::Steps::Exact(_) => None,
        }
    }

    /// Whether `answer` names a truth no observation rules out.
    fn judge(&self, answer: &str) -> bool {
        self.inner.judge.evaluate(answer)
    }
}

/// An offline player's reply to `messages` (eval's request for `task`):
/// `{"text", "input_tokens", "output_tokens"}` ([`players::Player::reply`]).
#[pyfunction]
#[pyo3(signature = (player, task, messages, seed=0))]
fn player_reply<'py>(
    py: Python<'py>,
    player: &str,
    task: &PyTask,
    messages: &Bound<'py, PyAny>,
    seed: u64,
) -> PyResult<Bound<'py, PyAny>> {
    let player: players::Player = player.parse().map_err(value_error)?;
    let messages = match from_py(messages)? {
        Value::Array(items) => items,
        _ => return Err(value_error("`messages` must be a list of chat messages")),
    };
    let reply = player
        .reply(&task.domain, &task.inner.instance, &messages, seed)
        .map_err(value_error)?;
    let value = serde_json::json!({
        "text": reply.text,
        "input_tokens": reply.input_tokens,
        "output_tokens": reply.output_tokens,
    });
    to_py(py, &value)
}

/// One trial of eval's protocol, driven one reply at a time.
#[pyclass(module = "kumo_gen._native", name = "Session")]
struct PySession {
    inner: Session,
}

#[pymethods]
impl PySession {
    /// `budget`: the budgeted protocol with that many turns
    /// ([`Session::budgeted`]; `max_steps` is then unused). `max_steps`
    /// is 1 to 10 000 and `budget` follows eval's rule (below the
    /// instance's truths, at most 10 000: [`game::check_budget`]).
    #[new]
    #[pyo3(signature = (task, model="", max_steps=50, budget=None))]
    fn new(task: &PyTask, model: &str, max_steps: usize, budget: Option<usize>) -> PyResult<Self> {
        if !(1..=game::MAX_REPLIES).contains(&max_steps) {
            return Err(value_error(format!(
                "max_steps must be from 1 to {}, not {max_steps}",
                game::MAX_REPLIES
            )));
        }
        let truths = task.inner.instance.truths.len();
        if let Some(budget) = budget
            && let Err(e) = game::check_budget(budget, truths, game::MAX_REPLIES)
        {
            return Err(value_error(format!(
                "budget {budget}: {e}; give {} or fewer",
                game::largest_budget(truths, game::MAX_REPLIES).max(1)
            )));
        }
        let task = Arc::clone(&task.inner);
        Ok(PySession {
            inner: match budget {
                Some(budget) => Session::budgeted(task, model, budget),
                None => Session::new(task, model, max_steps),
            },
        })
    }

    /// The messages eval sends for the next reply (`None` once over).
    fn request<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.inner
            .request()
            .map(|messages| to_py(py, &Value::Array(messages)))
            .transpose()
    }

    /// Records a reply (`None`: the model gave no text) and returns what it
    /// led to: `{"kind": "observation", "action", "observation"}`,
    /// `{"kind": "prediction", "truth", "successful"}` or
    /// `{"kind": "parse_error"}`.
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
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        let value = match step {
            Step::Observation { action, value } => {
                serde_json::json!({"kind": "observation", "action": action, "observation": value})
            }
            Step::Predicted { truth, successful } => {
                serde_json::json!({"kind": "prediction", "truth": truth, "successful": successful})
            }
            Step::ParseError => serde_json::json!({"kind": "parse_error"}),
            Step::Wrong { truth } => serde_json::json!({"kind": "wrong", "truth": truth}),
        };
        to_py(py, &value)
    }

    #[getter]
    fn finished(&self) -> bool {
        self.inner.is_finished()
    }

    #[getter]
    fn successful(&self) -> bool {
        self.inner.successful()
    }

    /// KUMO's action count: one per reply, one more for a prediction.
    #[getter]
    fn action_count(&self) -> usize {
        self.inner.action_count()
    }

    #[getter]
    fn replies(&self) -> usize {
        self.inner.replies()
    }

    /// The trial in KUMO's result format.
    fn trial<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let value = serde_json::to_value(self.inner.trial()).map_err(value_error)?;
        to_py(py, &value)
    }
}

/// KUMO's setting name, the stem of `<domain>/<setting>.jsonl`:
/// `truth_num=T+action_num=A+valid_truth_num=V`.
#[pyfunction]
#[pyo3(signature = (truths, actions, valid=1))]
fn setting_name(truths: usize, actions: usize, valid: usize) -> String {
    Setting::new(truths, actions, valid).to_string()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add(
        "DEFAULT_SEARCH_BUDGET",
        SearchBudget::DEFAULT_MAX_MEMO_ENTRIES,
    )?;
    m.add("DEFAULT_SEARCH_NODES", SearchBudget::DEFAULT_MAX_NODES)?;
    m.add_class::<PyDomain>()?;
    m.add_class::<PyTask>()?;
    m.add_class::<PySession>()?;
    m.add_class::<PyPredictSession>()?;
    m.add_class::<PyMoves>()?;
    m.add_function(wrap_pyfunction!(domain_names, m)?)?;
    m.add_function(wrap_pyfunction!(load_domain, m)?)?;
    m.add_function(wrap_pyfunction!(load_domain_text, m)?)?;
    m.add_function(wrap_pyfunction!(family_yaml, m)?)?;
    m.add_function(wrap_pyfunction!(generate_lines, m)?)?;
    m.add_function(wrap_pyfunction!(label_lines, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_json, m)?)?;
    m.add_function(wrap_pyfunction!(parse_answer, m)?)?;
    m.add_function(wrap_pyfunction!(judge, m)?)?;
    m.add_function(wrap_pyfunction!(reward, m)?)?;
    m.add_function(wrap_pyfunction!(player_reply, m)?)?;
    m.add_function(wrap_pyfunction!(setting_name, m)?)?;
    m.add("PLAYERS", players::PLAYER_NAMES.to_vec())?;
    Ok(())
}
