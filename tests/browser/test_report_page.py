"""`kumo-gen report` as a reader uses it: the page opened from disk in
Debian's headless chromium (through chromedriver and selenium).

Checks that the page loads without script errors, that every number of the
results table equals `score --json` over the same inputs (exact in
`data-value`, rounded in the text), that the per-move table's equal
`score --moves --json`, that sorting works, that the replay viewer
steps through a game showing each move's regret, and that the page reads on
a 1280 px desktop (the results table without horizontal scroll) and a
390 px phone (nothing but the tables' own scroll boxes wider than the
screen). Needs `chromium` and `chromedriver` on PATH
(`.ci/run` installs them) and the binary in `KUMO_GEN_BIN` (default
`target/release/kumo-gen`). Set `REPORT_SCREENSHOTS=DIR` to keep
screenshots of the page (never commit them).
"""

import json
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("KUMO_GEN_BIN", str(ROOT / "target" / "release" / "kumo-gen"))
SMALL = "truth_num=4+action_num=4+valid_truth_num=1"


def kumo(*args, stdin=None):
    done = subprocess.run(
        [BIN, *map(str, args)], input=stdin, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, f"kumo-gen {' '.join(map(str, args))}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    root = tmp_path_factory.mktemp("report")
    data, out = root / "data", root / "results"
    for t, a in [(4, 4), (5, 5)]:
        kumo("generate", "--domain", "medical", "--truths", t, "--actions", a,
             "-n", 20, "--seed", 3, "--out", data)
    for player, extra in [("golden", []), ("random", []), ("guess", []),
                          ("random", ["--budget", 3])]:
        kumo("eval", "--player", player, "--data", data, "--out", out,
             "--trials", 3, "--seed", 1, *extra)
    # A person's games (HumanAgent): the first action, then the first truth.
    instances = (data / "medical" / f"{SMALL}.jsonl").read_text().splitlines()
    human = out / "person" / "HumanAgent" / "medical" / SMALL / "eval_times=1.jsonl"
    for k, line in enumerate(instances[:5]):
        inst = json.loads(line)
        kumo("play", "--instances", data / "medical" / f"{SMALL}.jsonl", "--line", k + 1,
             "--player", "person", "--out", human,
             stdin=f"{inst['actions'][0]}\n{inst['truths'][0]}\n")
    kumo("report", out, "--instances", data, "-o", root / "page")
    rows = json.loads(kumo("score", out, "--instances", data, "--json"))
    moves = json.loads(kumo("score", out, "--instances", data, "--moves", "--json"))
    return root / "page" / "index.html", rows, moves


@pytest.fixture(scope="module")
def browser():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    assert chromium and driver_path, "chromium and chromedriver are needed (.ci/run installs them)"
    profile = tempfile.mkdtemp(prefix="kumo-report-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1400,1000",
                 f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def open_page(browser, page):
    browser.get(page.as_uri())
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


def shot(browser, name):
    folder = os.environ.get("REPORT_SCREENSHOTS")
    if folder:
        pathlib.Path(folder).mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(pathlib.Path(folder) / name))


def table(browser):
    return browser.execute_script(
        """return Array.from(document.querySelectorAll('#results tbody tr')).map(tr =>
             Array.from(tr.cells).map(td => [td.dataset.key, td.dataset.value,
                                             td.childNodes[0].textContent]));"""
    )


def test_table_numbers_equal_score_json(browser, results):
    page, rows, _ = results
    open_page(browser, page)
    shot(browser, "report-top.png")
    cells = table(browser)
    assert len(cells) == len(rows)
    compared = 0
    for row_cells, row in zip(cells, rows):
        for key, value, text in row_cells:
            if key == "kind":
                continue
            expected = row[key]
            if isinstance(expected, str):
                assert value == expected, (key, row)
                continue
            if expected is None:
                assert value == "null" and text == "n/a", (key, row)
                continue
            assert json.loads(value) == expected, (key, value, row)
            if isinstance(expected, float):
                digits = 2 if key == "mean_turns_solved" else 0 if key == "mean_tokens" else 3
                assert float(text) == pytest.approx(expected, abs=0.5 * 10 ** -digits + 1e-12), (key, text)
            else:
                assert int(text) == expected
            compared += 1
    assert compared > 10 * len(rows)


def test_sorting_orders_rows(browser, results):
    page, _, _ = results
    open_page(browser, page)
    header = browser.find_element(By.CSS_SELECTOR, '#results th[data-key="success_rate"]')
    header.click()
    values = [float(v) for _, v, _ in (r[6] for r in table(browser))]
    assert values == sorted(values)
    header.click()
    values = [float(v) for _, v, _ in (r[6] for r in table(browser))]
    assert values == sorted(values, reverse=True)


def test_replay_viewer_steps_through_a_game(browser, results):
    page, _, _ = results
    open_page(browser, page)
    games = Select(browser.find_element(By.ID, "replay-game"))
    assert len(games.options) > 20
    # A random player's game: several replies to step through.
    index = next(i for i, o in enumerate(games.options) if o.text.startswith("random (VanillaAgent)"))
    games.select_by_index(index)
    position = browser.find_element(By.ID, "replay-position")
    total = int(position.text.split(" of ")[1])
    assert position.text == f"step 0 of {total}" and total >= 2
    state = browser.find_element(By.ID, "replay-state")
    left = int(state.find_element(By.CSS_SELECTOR, "p.candidates-count").text.split()[0])
    data = json.loads(browser.find_element(By.ID, "replay-data").get_attribute("textContent"))
    steps = data["replays"][index]["trials"][0]["steps"]
    regrets = 0
    next_button = browser.find_element(By.ID, "replay-next")
    for step in range(1, total + 1):
        next_button.click()
        assert position.text == f"step {step} of {total}"
        current = browser.find_element(By.CSS_SELECTOR, "#replay-steps li.current")
        assert current.get_attribute("data-step") == str(step)
        now = int(state.find_element(By.CSS_SELECTOR, "p.candidates-count").text.split()[0])
        assert now <= left
        left = now
        # The move's regret against the exact optimum, and what was optimal.
        analysis = steps[step - 1].get("analysis")
        if analysis is not None:
            move = browser.find_element(By.ID, "replay-move")
            assert json.loads(move.get_attribute("data-regret")) == analysis["regret"]
            assert f"regret {analysis['regret']:.3f}" in move.text
            assert "Optimal here: " in move.text and analysis["best"][0] in move.text
            assert "·" in current.text
            regrets += 1
    assert regrets >= 2
    assert "The game ended" in state.text and "Total regret" in state.text
    next_button.click()  # past the end: stays at the end
    assert position.text == f"step {total} of {total}"
    browser.find_element(By.ID, "replay-first").click()
    assert position.text == f"step 0 of {total}"
    browser.find_element(By.CSS_SELECTOR, "#replay-book-box summary").click()
    assert "rules out" in browser.find_element(By.ID, "replay-book").text
    shot(browser, "report-replay.png")
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


def moves_table(browser):
    return browser.execute_script(
        """return Array.from(document.querySelectorAll('#moves tbody tr')).map(tr =>
             Object.fromEntries(Array.from(tr.cells).map(td => [td.dataset.key,
                 [td.dataset.value, td.childNodes[0].textContent,
                  td.dataset.low === undefined ? null : [Number(td.dataset.low), Number(td.dataset.high)]]])));"""
    )


def test_moves_section_numbers_equal_score_moves_json(browser, results):
    page, _, moves = results
    open_page(browser, page)
    analysed = [r for r in moves if r.get("mean_regret") is not None]
    table = moves_table(browser)
    assert len(table) == len(analysed) > 5
    for cells, row in zip(table, analysed):
        for key in ["model", "agent", "domain", "setting"]:
            assert cells[key][0] == row[key]
        assert int(cells["analysed_trials"][0]) == row["analysed_trials"]
        for key in ["mean_regret", "optimal_move_rate", "mean_efficiency"]:
            value, text, interval = cells[key]
            assert json.loads(value) == row[key], (key, row)
            assert float(text) == pytest.approx(row[key], abs=0.0005 + 1e-12), (key, text)
            low, high = interval
            assert low - 1e-12 <= row[key] <= high + 1e-12, (key, row)
        assert int(cells["unproven_correct"][0]) <= int(cells["unproven_answers"][0]) <= int(cells["answers"][0])
    golden = next(c for c in table if c["model"][0] == "golden" and c["domain"][0] != "all")
    assert golden["mean_regret"][0] == "0.0" and golden["unproven_answers"][0] == "0"
    # One regret-by-position chart per domain and setting, each with the
    # optimal player's line and a marker per player and position.
    charts = browser.find_elements(By.CSS_SELECTOR, "#moves-section figure svg")
    assert len(charts) == 2
    for chart in charts:
        assert "optimal player (regret 0 on every move)" in chart.text
        assert len(chart.find_elements(By.TAG_NAME, "circle")) > 10
    header = browser.find_element(By.CSS_SELECTOR, '#moves th[data-key="mean_regret"]')
    header.click()
    values = [float(c["mean_regret"][0]) for c in moves_table(browser)]
    assert values == sorted(values)
    browser.execute_script("document.getElementById('moves-section').scrollIntoView()")
    shot(browser, "report-moves.png")
    browser.set_window_size(390, 844)
    browser.execute_script("document.getElementById('moves-section').scrollIntoView()")
    shot(browser, "report-moves-phone.png")
    browser.execute_script("document.getElementById('replay').scrollIntoView()")
    shot(browser, "report-replay-phone.png")
    browser.set_window_size(1400, 1000)
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


def test_the_page_fits_a_desktop_and_a_phone(browser, results):
    page, _, _ = results
    try:
        for width, height in [(1280, 900), (390, 844)]:
            browser.set_window_size(width, height)
            open_page(browser, page)
            sizes = browser.execute_script(
                """const t = document.getElementById('results');
                   const wide = Array.from(document.querySelectorAll('body *')).filter(e =>
                       e.getBoundingClientRect().right > window.innerWidth + 1
                       && !e.closest('.scroll') && !e.closest('svg'));
                   return {table: t.scrollWidth, box: t.parentElement.clientWidth,
                           page: document.documentElement.scrollWidth, inner: window.innerWidth,
                           wide: wide.slice(0, 5).map(e => e.tagName + '#' + e.id)};""")
            assert sizes["page"] <= sizes["inner"], sizes
            assert not sizes["wide"], sizes
            if width == 1280:
                assert sizes["table"] <= sizes["box"], f"the results table scrolls at 1280 px: {sizes}"
            shot(browser, f"report-{width}.png")
    finally:
        browser.set_window_size(1400, 1000)


def test_the_page_says_what_it_left_out(browser, results):
    page, _, _ = results
    open_page(browser, page)
    coverage = browser.find_element(By.ID, "replay-coverage").text
    # 20 instances per setting: every line replayed, and the page says so.
    assert coverage.startswith("All ") and "replayed" in coverage, coverage
    heading = browser.find_element(By.CSS_SELECTOR, "header p").text
    assert "result lines replayed" in heading
    figures = browser.find_elements(By.CSS_SELECTOR, "#structure-section figure")
    for figure in figures:
        # One chart per model, at most 10 signatures and one bar for the rest.
        assert len(figure.find_elements(By.CSS_SELECTOR, "rect[fill='#59a14f']")) <= 11
    players = browser.find_element(By.ID, "players").text
    assert "optimal actions" in players and "golden actions" in players
