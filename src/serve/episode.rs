//! One served episode: eval's trial ([`crate::game::session::Session`],
//! the one play loop) of one catalog line, and what the server shows of
//! it.
//!
//! In: the line's [`Task`] and who plays ([`Player`]: a model, whose
//! replies are read as eval reads them, or a person, whose menu choices
//! are read as `play` reads them). Out: OpenEnv observations, the `state`,
//! and at the end the result line in KUMO's format.
//!
//! What a client sees before the end is what the model sees in eval: the
//! system prompt (with the book; in the observation of `reset` only, as it
//! never changes) and the user message of each turn (`prompt`). The
//! valid truth, the instance's other observations and its labels are
//! never in an observation or the state; the final observation tells the
//! outcome, the answer and the counts (`action_count`, KUMO's count;
//! when the line is labelled, `expected_steps`, optimal play's average
//! over the truths, and `golden_actions`, the actions optimal play takes
//! on this very game; for a certified label `expected_steps` is its upper
//! bound, with `exact: false` and `lower_bound`, and `golden_actions` are
//! the certified strategy's, not proven optimal).
//!
//! Rewards ([`Rewards`], `reset`'s `reward`): by default `0.0` for every
//! turn before the last, then `1.0` for a success and `0.0` otherwise, as
//! `score` counts success. With `reward: "dense"` every turn earns the
//! library's dense reward ([`crate::analysis::dense_reward`]: `-regret`
//! for an action, `1` for a proven answer, `0` otherwise), computed here
//! from the hidden game on the memo its line's live episodes share
//! ([`LiveGame`], [`Catalog::live_game`]), on the server's search pool,
//! never on the threads that answer requests. Only
//! the number goes to the client: no candidates, values or optimal
//! actions; and a reward tells nothing the player could not work out
//! from the book and the observations it saw (the values depend on the
//! candidates left, not on the valid truth).
//!
//! Under the explore-then-predict protocol (`reset`'s `protocol`) the
//! episode plays [`crate::game::predict::PredictGame`] instead, shown as
//! [`super::predict`] says: reward 0 until the end, then the accuracy
//! over the tests.

use std::time::Instant;

use serde_json::{Value, json};

use super::catalog::{Catalog, Pick};
use super::seats::Seat;
use crate::analysis::LiveGame;
use crate::game::Task;
use crate::game::predict::{PredictGame, PredictRules, PredictStep};
use crate::game::session::Session;
use crate::game::{Agent, ResultLine, Step, Trial, menu_choice};

/// Who plays, which decides how replies are read and where results go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Player {
    /// A model (its name files the results under `VanillaAgent`, as eval).
    Model(String),
    /// A person on the page (`HumanAgent`, as `play`).
    Person(String),
}

impl Player {
    pub fn name(&self) -> &str {
        match self {
            Player::Model(n) | Player::Person(n) => n,
        }
    }

    fn as_agent(&self) -> Agent {
        match self {
            Player::Model(_) => Agent::Model,
            Player::Person(_) => Agent::Person,
        }
    }

    /// The agent folder of the results: eval's or play's.
    pub fn agent(&self, budget: Option<usize>) -> String {
        self.as_agent().name(budget)
    }

    /// The agent folder under the explore-then-predict protocol, as eval
    /// and `play` name it (`VanillaAgent-predict=T@s[-end]`).
    pub fn predict_agent(&self, rules: &PredictRules) -> String {
        self.as_agent().predict_name(rules)
    }
}

/// The game an episode plays.
pub enum Game {
    /// KUMO's protocol or the budgeted one: eval's session.
    Kumo(Box<Session>),
    /// The explore-then-predict protocol.
    Predict(Box<PredictGame>),
}

impl Game {
    fn is_finished(&self) -> bool {
        match self {
            Game::Kumo(s) => s.is_finished(),
            Game::Predict(g) => g.is_finished(),
        }
    }

    fn replies(&self) -> usize {
        match self {
            Game::Kumo(s) => s.replies(),
            Game::Predict(g) => g.trial().generated_text.len(),
        }
    }

    fn request(&self) -> Option<Vec<Value>> {
        match self {
            Game::Kumo(s) => s.request(),
            Game::Predict(g) => g.request(),
        }
    }

    fn trial(&self) -> Trial {
        match self {
            Game::Kumo(s) => s.trial(),
            Game::Predict(g) => g.trial(),
        }
    }

    fn task(&self) -> &Task {
        match self {
            Game::Kumo(s) => s.task(),
            Game::Predict(g) => g.task(),
        }
    }

    fn budget(&self) -> Option<usize> {
        match self {
            Game::Kumo(s) => s.budget(),
            Game::Predict(_) => None,
        }
    }
}

/// Which reward a step carries (`reset`'s `reward`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Rewards {
    /// 1 for a success at the end, 0 on every other step (the default).
    #[default]
    Outcome,
    /// The dense reward of every reply (docs/analytics.md).
    Dense,
}

/// What went wrong with a step (the session goes on).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StepError {
    #[error("the episode is over; send `reset` to start another")]
    Finished,
    /// A person's input that names nothing on the menu (asked again).
    #[error("`{0}` is not on the menu: give an action or truth name, or its number")]
    NotOnMenu(String),
    /// The dense reward's search gave up (the reply was played).
    #[error("the reply was played but its dense reward could not be computed: {0}")]
    Reward(String),
}

/// An episode in progress (or just finished).
pub struct Play {
    pub pick: Pick,
    pub task_id: String,
    /// The server's name of the episode (unguessable), or the client's
    /// `episode_id` when it gave one over a WebSocket.
    pub episode_id: String,
    pub player: Player,
    game: Game,
    /// Whether observations carry eval's whole request (`messages`).
    messages: bool,
    /// The game scored reply by reply (`reward: "dense"`), else `None`.
    dense: Option<LiveGame>,
    /// The last step's reward (set by [`Play::step`]).
    last_reward: f64,
    pub last_active: Instant,
    /// A person's place at the line while the episode lives (the page's
    /// "next unplayed" deals around it).
    pub seat: Option<Seat>,
}

impl Play {
    /// Starts the episode of `game` (at its start); `dense` (the game
    /// of the line, at its start; KUMO's protocol only) scores every
    /// reply (`reward: "dense"`).
    pub fn start(
        catalog: &Catalog,
        pick: Pick,
        game: Game,
        player: Player,
        episode_id: String,
        messages: bool,
        dense: Option<LiveGame>,
    ) -> Play {
        Play {
            pick,
            task_id: catalog.task_id(pick),
            episode_id,
            player,
            game,
            messages,
            dense,
            last_reward: 0.0,
            last_active: Instant::now(),
            seat: None,
        }
    }

    pub fn is_done(&self) -> bool {
        self.game.is_finished()
    }

    /// Records one reply (`tokens`: what it cost, for the results) and
    /// returns the step's response.
    pub fn step(&mut self, catalog: &Catalog, text: &str, tokens: u64) -> Result<Value, StepError> {
        self.last_active = Instant::now();
        if self.game.is_finished() {
            return Err(StepError::Finished);
        }
        let session = match &mut self.game {
            Game::Kumo(session) => session,
            Game::Predict(game) => {
                let step = predict_step(game, &self.player, text, tokens)?;
                self.last_reward = super::predict::reward(game);
                let last = super::predict::shown(game, &step);
                return Ok(self.response(catalog, Some(&last)));
            }
        };
        let step = match &self.player {
            Player::Model(_) => session.respond(Some(text), tokens),
            Player::Person(_) => {
                let instance = &session.task().instance;
                let choice = menu_choice(text, &instance.actions, &instance.truths)
                    .ok_or_else(|| StepError::NotOnMenu(text.trim().to_string()))?;
                session.respond_as(Some(choice), Some(text), tokens)
            }
        }
        .map_err(|_| StepError::Finished)?;
        self.last_reward = self.step_reward(&step)?;
        Ok(self.response(catalog, Some(&shown(&step))))
    }

    /// The response to `reset` (no step yet) or to a step (`last`: what
    /// it led to, as shown): OpenEnv's `{observation, reward, done}`.
    pub fn response(&self, catalog: &Catalog, last: Option<&Value>) -> Value {
        let done = self.game.is_finished();
        let mut observation = json!({
            "prompt": self.prompt(),
            "task_id": self.task_id,
            "episode_id": self.episode_id,
            "turn": self.game.replies(),
        });
        let o = observation.as_object_mut().expect("an object");
        match last {
            // The system prompt once, at the start: it is the same on
            // every turn, and a client that shows each observation to the
            // model whole would repeat the book every turn.
            None => {
                o.insert("system_prompt".into(), json!(self.system_prompt()));
            }
            Some(last) => {
                o.insert("last".into(), last.clone());
            }
        }
        if self.messages && !done {
            o.insert(
                "messages".into(),
                Value::from(self.game.request().unwrap_or_default()),
            );
        }
        let session = match &self.game {
            Game::Kumo(session) => session,
            Game::Predict(game) => {
                super::predict::phase_fields(game, o);
                if done {
                    super::predict::final_fields(game, o);
                }
                return json!({"observation": observation, "reward": self.reward_value(last), "done": done});
            }
        };
        if let Player::Person(_) = self.player {
            let instance = &session.task().instance;
            let domain = catalog.split(self.pick);
            o.insert("actions".into(), json!(instance.actions));
            o.insert("truths".into(), json!(instance.truths));
            o.insert("setting".into(), json!(domain.setting.to_string()));
        }
        if done {
            let instance = &session.task().instance;
            let trial = session.trial();
            o.insert("successful".into(), json!(trial.successful));
            o.insert("parse_error".into(), json!(trial.parse_error));
            o.insert("answer".into(), json!(instance.valid_truths()));
            o.insert("action_count".into(), json!(session.action_count()));
            if let Some(steps) = instance.steps() {
                let (lower, upper) = steps.interval();
                o.insert("expected_steps".into(), json!(upper));
                // A certified label: `expected_steps` is its upper bound
                // (docs/output.md "Certified labels"), `exact` false and
                // `lower_bound` follow; an exact line has neither, as in
                // the dataset.
                if !steps.is_exact() {
                    o.insert("exact".into(), json!(false));
                    o.insert("lower_bound".into(), json!(lower));
                }
            }
            if let Some(g) = instance.optimal.as_ref().and_then(|o| o.golden_actions) {
                o.insert("golden_actions".into(), json!(g));
            }
        }
        json!({"observation": observation, "reward": self.reward_value(last), "done": done})
    }

    /// `null` before the first step, then the last step's reward.
    fn reward_value(&self, last: Option<&Value>) -> Value {
        match last {
            None => Value::Null,
            Some(_) => json!(self.last_reward),
        }
    }

    /// Whether the episode earns dense rewards.
    pub fn rewards(&self) -> Rewards {
        match self.dense {
            Some(_) => Rewards::Dense,
            None => Rewards::Outcome,
        }
    }

    /// The reward of one step just taken: the dense reward of the reply
    /// (`reward: "dense"`), else the outcome (1 for a success as `score`
    /// counts it, else 0) on the last step and 0 before.
    fn step_reward(&mut self, step: &Step) -> Result<f64, StepError> {
        let Some(game) = self.dense.as_mut() else {
            let won = match &self.game {
                Game::Kumo(s) => s.is_finished() && s.successful(),
                Game::Predict(_) => false,
            };
            return Ok(f64::from(u8::from(won)));
        };
        let named = match step {
            Step::Observation { action, .. } => Some(action.as_str()),
            Step::Wrong { truth } | Step::Predicted { truth, .. } => Some(truth.as_str()),
            Step::ParseError => None,
        };
        game.step_reward(named)
            .map(|(_, reward)| reward)
            .map_err(|e| StepError::Reward(e.to_string()))
    }

    /// eval's system message: the platform prompt with the book (and,
    /// under the budgeted protocol, its rule); under the
    /// explore-then-predict protocol its own, with the rules.
    fn system_prompt(&self) -> String {
        if let Game::Predict(game) = &self.game {
            return game.system_prompt().to_string();
        }
        let prompt = &self.game.task().system_prompt;
        match self.game.budget() {
            Some(b) => format!("{prompt}\n\n{}", crate::game::budget_rule(b)),
            None => prompt.clone(),
        }
    }

    /// The user message eval sends next (the last message of its
    /// request); `null` once the episode is over.
    fn prompt(&self) -> Value {
        match &self.game {
            Game::Kumo(s) => s.prompt().unwrap_or(Value::Null),
            Game::Predict(g) => g.prompt().map_or(Value::Null, Value::String),
        }
    }

    /// OpenEnv's `state`: which episode this is and how far it got;
    /// nothing of the instance's content.
    pub fn state(&self, catalog: &Catalog) -> Value {
        let split = catalog.split(self.pick);
        json!({
            "episode_id": self.episode_id,
            "step_count": self.game.replies(),
            "task_id": self.task_id,
            "env": catalog.env(self.pick).name,
            "split": split.name,
            "index": self.pick.index,
            "seed": split.seed(self.pick.index),
            "player": self.player.name(),
            "budget": self.game.budget(),
            "protocol": match &self.game {
                Game::Kumo(_) => Value::Null,
                Game::Predict(g) => super::predict::rules_json(g.rules()),
            },
            "reward": self.reward_name(),
            "done": self.game.is_finished(),
        })
    }

    /// `reset`'s name of the rewards (`state`'s `reward`).
    fn reward_name(&self) -> &'static str {
        match self.rewards() {
            Rewards::Outcome => "outcome",
            Rewards::Dense => "dense",
        }
    }

    /// The result line of a finished episode, as eval (a model) or `play`
    /// (a person) writes it, with its file's place: `(player, agent,
    /// dataset, setting)`.
    pub fn result(&self, catalog: &Catalog) -> Option<(ResultPlace, ResultLine)> {
        if !self.game.is_finished() {
            return None;
        }
        let split = catalog.split(self.pick);
        let trial = self.game.trial();
        let seed = self.game.task().instance.seed;
        let agent = match &self.game {
            Game::Kumo(s) => self.player.agent(s.budget()),
            Game::Predict(g) => self.player.predict_agent(g.rules()),
        };
        let place = ResultPlace {
            player: self.player.name().to_string(),
            agent,
            dataset: catalog.env(self.pick).name.clone(),
            setting: split.setting.to_string(),
        };
        let mut line = ResultLine::new(seed, vec![trial]);
        line.model = Some(place.player.clone());
        line.agent = Some(place.agent.clone());
        line.domain = Some(place.dataset.clone());
        line.setting = Some(place.setting.clone());
        // Repeats of a line are told apart by it (docs/serve.md).
        line.episode_id = Some(self.episode_id.clone());
        Some((place, line))
    }
}

/// Where a result line goes below `--out`
/// (`<player>/<agent>/<dataset>/<setting>/eval_times=1.jsonl`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ResultPlace {
    pub player: String,
    pub agent: String,
    pub dataset: String,
    pub setting: String,
}

/// What the last reply led to, as the player saw it.
fn shown(step: &Step) -> Value {
    match step {
        Step::Observation { action, value } => {
            json!({"kind": "observation", "action": action, "observation": value})
        }
        Step::Wrong { truth } => json!({"kind": "wrong", "truth": truth}),
        Step::Predicted { truth, successful } => {
            json!({"kind": "answer", "truth": truth, "successful": successful})
        }
        Step::ParseError => json!({"kind": "parse_error"}),
    }
}

/// Plays one reply: a model's as eval reads it, a person's menu choice
/// (an action, `stop`, or a listed output; a name or its number).
fn predict_step(
    game: &mut PredictGame,
    player: &Player,
    text: &str,
    tokens: u64,
) -> Result<PredictStep, StepError> {
    let step = match player {
        Player::Model(_) => game.respond(Some(text), tokens),
        Player::Person(_) => {
            let choice = menu_choice(text, &game.menu(), &[])
                .ok_or_else(|| StepError::NotOnMenu(text.trim().to_string()))?;
            game.respond_as(Some(choice), Some(text), tokens)
        }
    };
    step.ok_or(StepError::Finished)
}
