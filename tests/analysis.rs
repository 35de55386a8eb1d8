//! `kumo-gen moves`, `score --moves` and `kumo-gen pairs` on the offline
//! players' results: every row's `value` and `q` against the plain
//! recursion (`tests/reference.rs`) at the state the row names, the
//! golden player's moves all optimal with regret 0 and proven answers,
//! random and guess scored, the per-row figures summing to `score`'s, and
//! pairs whose chosen action is optimal, whose rejected one has the
//! largest regret, whose prompts are eval's requests (the SFT step
//! records along the golden path), deterministic by seed; ties within
//! 1e-9 optimal everywhere (rows, score, pairs) and a game without a move
//! scored as one with no optimal move.

use std::collections::BTreeMap;
use std::path::Path;

use kumo_gen::domain::{Domain, Registry};
use kumo_gen::game::InstanceLine;
use kumo_gen::search::Problem;
use serde_json::Value;

use crate::common::{TestCommand, json_lines};
use crate::reference::Reference;

const SETTING: &str = "truth_num=6+action_num=8+valid_truth_num=1";

/// A medical 6x8 dataset (with SFT step records) and the offline players'
/// results on it.
fn played(dir: &Path) {
    TestCommand::new()
        .args(["--domain", "medical", "--truths", "6", "--actions", "8"])
        .args(["-n", "24", "--steps", "--out"])
        .arg(dir.join("data"))
        .ok();
    for player in ["golden", "random", "guess"] {
        TestCommand::new()
            .args(["eval", "--player", player, "--data"])
            .arg(dir.join("data"))
            .args(["--trials", "3", "--seed", "5", "--out"])
            .arg(dir.join("results"))
            .env_remove("OPENAI_API_KEY")
            .env_remove("KUMO_API_KEY")
            .ok();
    }
}

fn mask(names: &[&str], of: &Value) -> u128 {
    of.as_array()
        .unwrap()
        .iter()
        .map(|n| {
            names
                .iter()
                .position(|x| *x == n.as_str().unwrap())
                .unwrap()
        })
        .fold(0, |m, i| m | 1 << i)
}

/// The number of `"key":` in a JSON line, parsed from its text by
/// `str::parse` (correctly rounded; serde_json's default float parsing
/// may be one ulp off, which a bit-for-bit check would blame on the row).
fn raw_f64(text: &str, key: &str) -> f64 {
    let at = text.find(&format!("\"{key}\":")).unwrap() + key.len() + 3;
    let end = text[at..].find([',', '}']).unwrap();
    text[at..at + end].parse().unwrap()
}

/// Checks one row (`text`, parsed as `row`) against the plain recursion
/// of its instance.
fn check_row(domain: &Domain, line: &InstanceLine, text: &str, row: &Value) {
    let resolved = line.resolve(domain).unwrap();
    let problem = Problem::new(domain, &resolved.truths, &resolved.actions).unwrap();
    let rules = (0..problem.action_count())
        .map(|a| problem.states(a).to_vec())
        .collect();
    let mut reference = Reference::new(problem.truth_count(), rules);
    let truths: Vec<&str> = line.truths.iter().map(String::as_str).collect();
    let actions: Vec<&str> = line.actions.iter().map(String::as_str).collect();
    let t = mask(&truths, &row["candidates"]);
    let a = mask(&actions, &row["actions_left"]);
    let (v, best) = reference.solve(t, a);
    let value = raw_f64(text, "value");
    assert_eq!(value.to_bits(), v.to_bits(), "value of {row}");
    let q = raw_f64(text, "q");
    let regret = raw_f64(text, "regret");
    if let Some(action) = row["action"].as_str() {
        let i = actions.iter().position(|x| *x == action).unwrap();
        let want = if a >> i & 1 == 1 {
            reference.q(t, a, i)
        } else {
            v + 1.0
        };
        assert_eq!(q.to_bits(), want.to_bits(), "q of {row}");
        assert_eq!(regret, q - value, "regret of {row}");
        // Ties within 1e-9 (the labels' tolerance) are optimal.
        assert_eq!(
            row["optimal"],
            best.is_some() && q - v <= 1e-9,
            "optimal of {row}"
        );
        let related = problem.states(i).iter().fold(0, |m, &x| m | x);
        assert_eq!(
            row["redundant"],
            a >> i & 1 == 0 || related & t == 0,
            "redundant of {row}"
        );
    } else {
        let answer = row["answer"].as_str().unwrap();
        let i = truths.iter().position(|x| *x == answer).unwrap();
        let covered = (0..problem.action_count())
            .filter(|&b| a >> b & 1 == 1)
            .fold(0u128, |m, b| {
                m | problem.states(b).iter().fold(0, |r, &x| r | x)
            });
        let proven = t >> i & 1 == 1 && (t.count_ones() == 1 || covered >> i & 1 == 0);
        assert_eq!(row["proven"], proven, "proven of {row}");
        assert_eq!(regret, 0.0);
        assert_eq!(row["optimal"], proven);
        if proven {
            assert_eq!(row["correct"], true, "a proven answer is correct: {row}");
        }
    }
}

#[test]
fn moves_are_exact_and_the_golden_player_never_regrets() {
    let tmp = tempfile::tempdir().unwrap();
    played(tmp.path());
    let rows_path = tmp.path().join("moves.jsonl");
    TestCommand::new()
        .arg("moves")
        .arg(tmp.path().join("results"))
        .arg("--instances")
        .arg(
            tmp.path()
                .join("data/medical")
                .join(format!("{SETTING}.jsonl")),
        )
        .arg("-o")
        .arg(&rows_path)
        .ok();
    let rows = json_lines(&rows_path);
    let domain = Registry::new(None).load("medical").unwrap().0;
    let lines: BTreeMap<u64, InstanceLine> = json_lines(
        &tmp.path()
            .join("data/medical")
            .join(format!("{SETTING}.jsonl")),
    )
    .into_iter()
    .map(|v| serde_json::from_value::<InstanceLine>(v).unwrap())
    .map(|l| (l.seed, l))
    .collect();
    let mut by_model: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    let texts = std::fs::read_to_string(&rows_path).unwrap();
    let texts: Vec<&str> = texts.lines().collect();
    assert_eq!(texts.len(), rows.len());
    for (row, text) in rows.iter().zip(&texts) {
        check_row(&domain, &lines[&row["seed"].as_u64().unwrap()], text, row);
        by_model
            .entry(row["model"].as_str().unwrap().to_string())
            .or_default()
            .push(row);
    }
    let golden = &by_model["golden"];
    assert!(
        golden
            .iter()
            .all(|r| r["regret"] == 0.0 && r["optimal"] == true)
    );
    let answers: Vec<&&Value> = golden.iter().filter(|r| r["answer"].is_string()).collect();
    assert_eq!(answers.len(), 24 * 3, "one answer per golden trial");
    assert!(
        answers
            .iter()
            .all(|r| r["proven"] == true && r["correct"] == true)
    );
    let random = &by_model["random"];
    assert!(random.iter().all(|r| r["regret"].as_f64().unwrap() >= 0.0));
    assert!(random.iter().any(|r| r["regret"].as_f64().unwrap() > 0.0));
    let guess = &by_model["guess"];
    assert_eq!(guess.len(), 24 * 3, "the guess player only answers");
    assert!(guess.iter().any(|r| r["proven"] == false));

    // `score --moves`: per line the mean over trials, per row the mean of
    // the lines, from the same moves.
    let output = TestCommand::new()
        .arg("score")
        .arg(tmp.path().join("results"))
        .arg("--instances")
        .arg(tmp.path().join("data"))
        .args(["--moves", "--json"])
        .ok();
    let scores: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    let row_of = |model: &str| scores.iter().find(|r| r["model"] == model).unwrap();
    assert_eq!(row_of("golden")["mean_regret"], 0.0);
    assert_eq!(row_of("golden")["optimal_move_rate"], 1.0);
    assert_eq!(row_of("golden")["mean_efficiency"], 1.0);
    assert!(row_of("guess")["optimal_move_rate"].as_f64().unwrap() < 1.0);
    let mut per_line: BTreeMap<u64, BTreeMap<u64, f64>> = BTreeMap::new();
    for r in random {
        *per_line
            .entry(r["seed"].as_u64().unwrap())
            .or_default()
            .entry(r["trial"].as_u64().unwrap())
            .or_default() += r["regret"].as_f64().unwrap();
    }
    let want = per_line
        .values()
        .map(|trials| trials.values().sum::<f64>() / 3.0)
        .sum::<f64>()
        / per_line.len() as f64;
    let got = row_of("random")["mean_regret"].as_f64().unwrap();
    assert!((got - want).abs() < 1e-9, "{got} vs {want}");
    // Without --moves the rows are as before.
    let plain = TestCommand::new()
        .arg("score")
        .arg(tmp.path().join("results"))
        .arg("--instances")
        .arg(tmp.path().join("data"))
        .arg("--json")
        .ok();
    assert!(!String::from_utf8_lossy(&plain.stdout).contains("mean_regret"));
}

#[test]
fn pairs_prefer_an_optimal_action_to_the_largest_regret() {
    let tmp = tempfile::tempdir().unwrap();
    played(tmp.path());
    let pairs = |seed: &str, name: &str| {
        let path = tmp.path().join(name);
        TestCommand::new()
            .args(["pairs", "--data"])
            .arg(tmp.path().join("data"))
            .args(["--seed", seed, "--random-paths", "2", "-o"])
            .arg(&path)
            .ok();
        path
    };
    let first = pairs("7", "a.jsonl");
    let again = pairs("7", "b.jsonl");
    let other = pairs("8", "c.jsonl");
    let bytes = std::fs::read(&first).unwrap();
    assert_eq!(
        bytes,
        std::fs::read(&again).unwrap(),
        "deterministic by seed"
    );
    assert_ne!(
        bytes,
        std::fs::read(&other).unwrap(),
        "the seed picks the paths"
    );
    let rows = json_lines(&first);
    assert!(rows.iter().any(|r| r["path"] == "golden"));
    assert!(rows.iter().any(|r| r["path"] == "random-1"));
    for r in &rows {
        let (chosen, rejected) = (
            r["chosen_q"].as_f64().unwrap(),
            r["rejected_q"].as_f64().unwrap(),
        );
        assert_eq!(
            chosen,
            r["value"].as_f64().unwrap(),
            "chosen is optimal: {r}"
        );
        assert!(rejected > chosen + 1e-9, "never two tied actions: {r}");
        assert_eq!(r["chosen"][0]["role"], "assistant");
        assert_eq!(r["rejected"][0]["role"], "assistant");
    }
    // Along the golden path the prompts are eval's requests: the SFT
    // step records, and the chosen reply is the record's.
    let steps: BTreeMap<(u64, u64), Value> = json_lines(
        &tmp.path()
            .join("data/medical/sft")
            .join(format!("{SETTING}.steps.jsonl")),
    )
    .into_iter()
    .map(|s| {
        (
            (s["seed"].as_u64().unwrap(), s["step"].as_u64().unwrap()),
            s,
        )
    })
    .collect();
    let mut compared = 0;
    for r in rows.iter().filter(|r| r["path"] == "golden") {
        let step = &steps[&(r["seed"].as_u64().unwrap(), r["step"].as_u64().unwrap())];
        assert_eq!(r["prompt"], step["prompt"]);
        assert_eq!(r["chosen"], step["completion"]);
        compared += 1;
    }
    assert!(compared > 24);
}

/// The `--moves` row of `model` in `score --json` output.
fn moves_row(rows: &[Value], model: &str) -> Value {
    rows.iter()
        .find(|r| r["model"] == model && r["setting"] != "all")
        .unwrap()
        .clone()
}

#[test]
fn ties_within_1e_9_are_optimal_in_rows_score_and_pairs() {
    // rules3's random player meets actions whose Q differs from V by float
    // noise (5.6e-11): equal sums added in another order.
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    TestCommand::new()
        .args([
            "--domain",
            "rules3",
            "--truths",
            "6",
            "--actions",
            "8",
            "-n",
            "60",
            "--out",
        ])
        .arg(&data)
        .ok();
    let results = tmp.path().join("results");
    TestCommand::new()
        .args(["eval", "--player", "random", "--trials", "3", "--data"])
        .arg(&data)
        .arg("--out")
        .arg(&results)
        .ok();
    let moves = tmp.path().join("moves.jsonl");
    TestCommand::new()
        .arg("moves")
        .arg(&results)
        .arg("--instances")
        .arg(data.join("rules3"))
        .arg("-o")
        .arg(&moves)
        .ok();
    let rows = json_lines(&moves);
    let noise: Vec<&Value> = rows
        .iter()
        .filter(|r| r["action"].is_string())
        .filter(|r| {
            let regret = r["regret"].as_f64().unwrap();
            regret > 0.0 && regret <= 1e-9
        })
        .collect();
    assert!(!noise.is_empty(), "the data holds ties of float noise");
    for r in &noise {
        assert_eq!(r["optimal"], true, "{r}");
    }
    // score --moves counts them as rows do: per game optimal / moves,
    // averaged over trials, then lines.
    let mut games: BTreeMap<(u64, u64), (usize, usize)> = BTreeMap::new();
    for r in &rows {
        let game = games
            .entry((r["seed"].as_u64().unwrap(), r["trial"].as_u64().unwrap()))
            .or_default();
        game.0 += usize::from(r["optimal"] == true);
        game.1 += 1;
    }
    let mut lines: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for ((seed, _), (optimal, moves)) in &games {
        lines
            .entry(*seed)
            .or_default()
            .push(*optimal as f64 / *moves as f64);
    }
    let want = lines
        .values()
        .map(|l| l.iter().sum::<f64>() / l.len() as f64)
        .sum::<f64>()
        / lines.len() as f64;
    let scored = TestCommand::new()
        .arg("score")
        .arg(&results)
        .arg("--instances")
        .arg(data.join("rules3"))
        .args(["--moves", "--json"])
        .ok();
    let scored: Vec<Value> = serde_json::from_slice(&scored.stdout).unwrap();
    let got = moves_row(&scored, "random")["optimal_move_rate"]
        .as_f64()
        .unwrap();
    assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    // No pair prefers one of two tied actions.
    let pairs = tmp.path().join("pairs.jsonl");
    TestCommand::new()
        .args(["pairs", "--random-paths", "2", "--data"])
        .arg(&data)
        .arg("-o")
        .arg(&pairs)
        .ok();
    let pairs = json_lines(&pairs);
    assert!(!pairs.is_empty());
    for p in &pairs {
        let (chosen, rejected) = (
            p["chosen_q"].as_f64().unwrap(),
            p["rejected_q"].as_f64().unwrap(),
        );
        assert!(rejected - chosen > 1e-9, "{p}");
    }
}

#[test]
fn a_game_without_a_move_has_no_optimal_move() {
    // A player whose every reply is unusable (KUMO's `null`) beside the
    // golden one: it must not rank with it.
    let tmp = tempfile::tempdir().unwrap();
    played(tmp.path());
    let instances = tmp
        .path()
        .join("data/medical")
        .join(format!("{SETTING}.jsonl"));
    let garbage = tmp
        .path()
        .join("results/garbage/VanillaAgent/medical")
        .join(SETTING);
    std::fs::create_dir_all(&garbage).unwrap();
    let lines: Vec<String> = json_lines(&instances)
        .iter()
        .map(|i| {
            serde_json::json!({
                "seed": i["seed"],
                "trajectories": [
                    {"actions": [null], "successful": false},
                    {"actions": [null], "successful": false},
                ],
            })
            .to_string()
        })
        .collect();
    std::fs::write(garbage.join("eval_times=2.jsonl"), lines.join("\n") + "\n").unwrap();
    let scored = TestCommand::new()
        .arg("score")
        .arg(tmp.path().join("results"))
        .arg("--instances")
        .arg(&instances)
        .args(["--moves", "--json"])
        .ok();
    let scored: Vec<Value> = serde_json::from_slice(&scored.stdout).unwrap();
    let (garbage, golden) = (moves_row(&scored, "garbage"), moves_row(&scored, "golden"));
    assert_eq!(garbage["analysed_trials"], 48);
    assert_eq!(garbage["optimal_move_rate"], 0.0, "{garbage}");
    assert_eq!(garbage["mean_efficiency"], 0.0, "{garbage}");
    assert_eq!(garbage["success_rate"], 0.0);
    assert_eq!(golden["optimal_move_rate"], 1.0, "{golden}");
    assert_eq!(golden["mean_efficiency"], 1.0, "{golden}");
    // Regret counts wasted actions only: both 0, and the legend says why.
    assert_eq!(garbage["mean_regret"], 0.0);
    let table = TestCommand::new()
        .arg("score")
        .arg(tmp.path().join("results"))
        .arg("--instances")
        .arg(&instances)
        .arg("--moves")
        .ok();
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.contains("a game that answers at once or makes no move has regret 0"));
    assert!(text.contains("a game without a move counts 0"));
}

/// Games of random replies (actions with repeats, then a truth) on
/// lines of two domains: every float a game on a memo shared with
/// the games before it (in two orders) gives is the fresh memo's.
#[test]
fn a_shared_memo_gives_every_game_the_fresh_memos_floats() {
    use kumo_gen::analysis::{Analyst, Analysts, LiveGame};
    use kumo_gen::search::SearchBudget;
    use kumo_gen::synth::Params;
    use rand::{RngExt, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(55);
    for (name, truths, actions) in [("medical", 8, 10), ("car-identification", 8, 10)] {
        let domain = Registry::new(None).load(name).unwrap().0;
        let params = Params {
            truths,
            actions,
            valid: 1,
            seed: 3,
            allow_shortcuts: false,
            decimals: 2,
        };
        let lines =
            kumo_gen::pipeline::generate_range_lines(&domain, params, 0..3, None, None, None)
                .unwrap();
        for text in &lines {
            let line: InstanceLine = serde_json::from_str(text).unwrap();
            let analyst = || Analyst::new(&domain, &line, SearchBudget::default()).unwrap();
            let games: Vec<Vec<String>> = (0..12)
                .map(|_| {
                    let mut g: Vec<String> = (0..rng.random_range(0..=actions))
                        .map(|_| line.actions[rng.random_range(0..actions)].clone())
                        .collect();
                    g.push(line.truths[rng.random_range(0..truths)].clone());
                    g
                })
                .collect();
            let bits = |game: &mut LiveGame, names: &[String]| -> Vec<u64> {
                game.restart();
                let mut out = Vec::new();
                for n in names {
                    let scored = game.reward(Some(n)).unwrap();
                    out.push(scored.reward.to_bits());
                    out.push(scored.before.value.to_bits());
                    out.extend(scored.before.q.iter().map(|(_, q)| q.to_bits()));
                    let m = scored.analysed.unwrap();
                    out.extend([m.q.to_bits(), m.regret.to_bits()]);
                }
                out
            };
            let fresh: Vec<_> = games
                .iter()
                .map(|g| bits(&mut LiveGame::new(analyst()), g))
                .collect();
            let table = Analysts::default();
            let mut forward = table.game(0, || Ok::<_, ()>(analyst())).unwrap();
            let mut backward = LiveGame::new(analyst());
            for (i, g) in games.iter().enumerate() {
                assert_eq!(bits(&mut forward, g), fresh[i], "{name} line {text}");
            }
            for (i, g) in games.iter().enumerate().rev() {
                assert_eq!(bits(&mut backward, g), fresh[i], "{name} line {text}");
            }
        }
    }
}
