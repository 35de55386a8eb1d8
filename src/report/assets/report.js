// kumo-gen report: table sorting and the replay viewer. No network, no
// libraries: the page works opened from disk.
"use strict";

(function sortableTables() {
  for (const table of document.querySelectorAll("table.sortable")) {
    const heads = Array.from(table.tHead.rows[0].cells);
    heads.forEach((th, column) => {
      const sort = () => {
        const ascending = th.getAttribute("aria-sort") !== "ascending";
        heads.forEach((h) => h.removeAttribute("aria-sort"));
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        const body = table.tBodies[0];
        const rows = Array.from(body.rows);
        const key = (row) => {
          const raw = row.cells[column].dataset.value;
          if (raw === "null") return null;
          const n = Number(raw);
          return raw !== "" && !Number.isNaN(n) ? n : raw;
        };
        rows.sort((a, b) => {
          const x = key(a), y = key(b);
          if (x === null && y === null) return 0;
          if (x === null) return 1; // n/a last either way
          if (y === null) return -1;
          const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
          return ascending ? c : -c;
        });
        for (const row of rows) body.appendChild(row);
      };
      th.addEventListener("click", sort);
      th.addEventListener("keydown", (e) => { if (e.key === "Enter") sort(); });
    });
  }
})();

(function replayViewer() {
  const data = JSON.parse(document.getElementById("replay-data").textContent);
  const viewer = document.getElementById("replay-viewer");
  if (!data.replays.length) {
    document.getElementById("replay-empty").hidden = false;
    return;
  }
  viewer.hidden = false;
  const $ = (id) => document.getElementById(id);
  const game = $("replay-game"), trial = $("replay-trial");
  const short = (setting) => {
    const m = /^truth_num=(\d+)\+action_num=(\d+)\+valid_truth_num=(\d+)$/.exec(setting);
    return m ? m[1] + "x" + m[2] + (m[3] === "1" ? "" : "v" + m[3]) : setting;
  };
  data.replays.forEach((r, i) => {
    const wins = r.trials.filter((t) => t.success).length;
    const option = new Option(`${r.model} (${r.agent}) · ${r.domain} ${short(r.setting)} · seed ${r.seed} · ${wins}/${r.trials.length} solved`, String(i));
    game.add(option);
  });
  let position = 0; // steps shown: 0 = the start, before any reply

  const el = (tag, text, cls) => {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  };
  const current = () => data.replays[Number(game.value)];
  const currentTrial = () => current().trials[Number(trial.value)] || { steps: [], success: false };
  const describe = (step) => {
    switch (step.kind) {
      case "query": return `${step.said} → ${step.observation}`;
      case "answer": return `answer: ${step.said} (${step.correct ? "right" : "wrong"})`;
      case "unknown": return `“${step.said}”: not an action or truth of this game`;
      default: return "unusable reply (parse error)";
    }
  };
  const fixed = (v) => (Math.round(v * 1000) / 1000).toFixed(3);
  // What the move cost against the optimum (from kumo_gen::analysis).
  const verdict = (a) => {
    if (a.proven === false) return "unproven answer";
    if (a.proven === true) return "proven answer";
    if (a.optimal) return "optimal";
    return `regret ${fixed(a.regret)}` + (a.repeated ? ", repeated" : a.redundant ? ", redundant" : "");
  };
  const bestText = (a) => a.best_is_answer
    ? `answer ${a.best.join(", ")}`
    : a.best.join(" or ");

  function fillTrials() {
    trial.innerHTML = "";
    current().trials.forEach((t, i) => trial.add(new Option(`${i + 1}: ${t.success ? "solved" : "failed"}, ${t.steps.length} replies` + (t.regret === undefined ? "" : `, regret ${fixed(t.regret)}`), String(i))));
    const r = current();
    $("replay-book").textContent = data.books[r.book].text;
    position = 0;
  }

  function show() {
    const r = current(), t = currentTrial();
    const total = t.steps.length;
    position = Math.max(0, Math.min(position, total));
    $("replay-position").textContent = `step ${position} of ${total}`;
    const summary = $("replay-summary");
    summary.innerHTML = "";
    summary.append(el("span", `valid: ${r.valid.join(", ")}. `));
    const opt = r.golden.length || r.expected_steps !== null
      ? (r.lower_bound === null || r.lower_bound === undefined
        ? `Optimal play: expected steps ${r.expected_steps === null ? "?" : r.expected_steps.toFixed(3)} (queries; optimal actions ${r.expected_steps === null ? "?" : (r.expected_steps + 2).toFixed(3)} in KUMO's count); the golden trajectory here: ${r.golden.length ? r.golden.join(" → ") : "(none: the book alone names the truth)"}.`
        : `Certified label (the exact search ran over budget): optimal play takes at least ${r.lower_bound.toFixed(3)} and at most ${r.expected_steps.toFixed(3)} expected steps (queries; optimal actions ${(r.lower_bound + 2).toFixed(3)} to ${(r.expected_steps + 2).toFixed(3)} in KUMO's count); the golden trajectory here follows a strategy of at most ${r.expected_steps.toFixed(3)}, not proven optimal: ${r.golden.length ? r.golden.join(" → ") : "(none: the book alone names the truth)"}.`)
      : "No optimal label for this instance.";
    summary.append(el("span", opt));
    const list = $("replay-steps");
    list.innerHTML = "";
    list.start = 0; // numbered as the steps: 0 the start, then each reply
    const start = el("li", "start: the book and the truths", position === 0 ? "current" : "");
    start.dataset.step = "0";
    list.append(start);
    t.steps.forEach((step, i) => {
      const li = el("li", describe(step), i + 1 === position ? "current" : i + 1 > position ? "future" : "");
      li.dataset.step = String(i + 1);
      if (step.analysis) {
        const a = step.analysis;
        const bad = a.proven === false || (a.proven === undefined || a.proven === null) && !a.optimal;
        li.append(el("span", ` · ${verdict(a)}`, bad ? "regret-bad" : "regret-ok"));
      }
      list.append(li);
    });
    const state = $("replay-state");
    state.innerHTML = "";
    const candidates = position === 0 ? r.truths : t.steps[position - 1].candidates;
    if (position > 0) {
      const step = t.steps[position - 1];
      state.append(el("h3", `reply ${position}: ${describe(step)}`, step.kind === "answer" ? (step.correct ? "right" : "wrong") : ""));
    } else {
      state.append(el("h3", "before the first reply"));
    }
    if (position > 0 && t.steps[position - 1].analysis) {
      const a = t.steps[position - 1].analysis;
      const move = el("p", undefined, "move-value");
      move.id = "replay-move";
      move.dataset.regret = JSON.stringify(a.regret);
      move.textContent = `This move: ${verdict(a)} (Q ${fixed(a.q)} against V ${fixed(a.value)}: regret ${fixed(a.regret)} expected actions). ` +
        `Optimal here: ${bestText(a)}.`;
      state.append(move);
    }
    const next = position < total ? t.steps[position].analysis : null;
    if (next) {
      const p = el("p", `Optimal next: ${bestText(next)} (V ${fixed(next.value)} expected actions left).`);
      p.id = "replay-optimal";
      state.append(p);
    }
    state.append(el("p", `${candidates.length} candidate(s) left of ${r.truths.length}:`, "candidates-count"));
    const ul = el("ul", undefined, "candidates");
    for (const c of candidates) ul.append(el("li", c, r.valid.includes(c) ? "valid" : ""));
    state.append(ul);
    if (position === total && total > 0) {
      state.append(el("p", (t.success ? "The game ended solved." : "The game ended unsolved.") +
        (t.regret === undefined ? "" : ` Total regret ${fixed(t.regret)}, efficiency ${fixed(t.efficiency)}.`), t.success ? "right" : "wrong"));
    }
  }

  game.addEventListener("change", () => { fillTrials(); show(); });
  trial.addEventListener("change", () => { position = 0; show(); });
  $("replay-first").addEventListener("click", () => { position = 0; show(); });
  $("replay-prev").addEventListener("click", () => { position -= 1; show(); });
  $("replay-next").addEventListener("click", () => { position += 1; show(); });
  $("replay-last").addEventListener("click", () => { position = currentTrial().steps.length; show(); });
  $("replay-steps").addEventListener("click", (e) => {
    const li = e.target.closest("li");
    if (li) { position = Number(li.dataset.step); show(); }
  });
  document.addEventListener("keydown", (e) => {
    if (e.target.tagName === "SELECT") return;
    if (e.key === "ArrowRight") { position += 1; show(); }
    if (e.key === "ArrowLeft") { position -= 1; show(); }
  });
  fillTrials();
  show();
})();
