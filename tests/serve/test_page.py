"""The page of `kumo-gen serve` in a real headless browser (Debian's
Chromium through WebDriver): a person plays one game to the end with the
keyboard and the buttons, and the results line equals what `kumo-gen
play` writes for the same moves. A screenshot of the page goes to
`$KUMO_SERVE_SCREENSHOT` when set (never into the repository)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from conftest import DOMAIN, SETTING, SPLIT, need, run, wait_until, without_episode_id

try:
    from selenium import webdriver
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select
except ImportError:  # pragma: no cover - the CI venv has it
    webdriver = None


def chromium():
    if webdriver is None:
        need("selenium is not installed: pip install selenium")
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not browser or not driver:
        need("no chromium + chromedriver: apt-get install -y chromium chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    profile = tempfile.mkdtemp(prefix="kumo-page-")
    for flag in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={profile}", "--window-size=1100,1400"]:
        options.add_argument(flag)
    service = webdriver.ChromeService(executable_path=driver)
    return webdriver.Chrome(service=service, options=options), profile


def test_a_person_plays_one_game_on_the_page(start_server, kumo_bin: Path, data: Path, instances, tmp_path: Path) -> None:
    server = start_server()
    browser, profile = chromium()
    index = 2
    instance = instances[index]
    moves = list(instance["optimal"]["golden_trajectory"])
    # One wrong truth, if the golden answer is not the only candidate left
    # after the first action, would end the game; play the golden way, with
    # one action typed as its menu number to use the keyboard path.
    answer = instance["optimal"]["golden_answer"]
    try:
        browser.get(server.url + "/")
        wait_until(lambda: len(Select(browser.find_element(By.ID, "split")).options) > 0)
        name = browser.find_element(By.ID, "participant")
        name.send_keys("ada")
        Select(browser.find_element(By.ID, "env")).select_by_value(DOMAIN)
        Select(browser.find_element(By.ID, "split")).select_by_value(SPLIT)
        browser.find_element(By.ID, "which-index").click()
        box = browser.find_element(By.ID, "index")
        box.clear()
        box.send_keys(str(index), Keys.ENTER)
        wait_until(lambda: browser.find_element(By.ID, "game").is_displayed())
        book = browser.find_element(By.ID, "book").text
        assert "Diagnostic tests" in book or len(book) > 200
        typed = []
        for i, move in enumerate(moves):
            turn = browser.find_element(By.ID, "turn").text
            if i == 0:
                # Keyboard: the action's menu number, then Enter.
                number = str(instance["actions"].index(move) + 1)
                box = browser.find_element(By.ID, "typed")
                box.send_keys(number, Keys.ENTER)
                typed.append(number)
            else:
                button = next(b for b in browser.find_elements(By.CSS_SELECTOR, "#actions button") if b.text.split(".", 1)[1] == move)
                button.click()
                typed.append(move)
            wait_until(lambda: browser.find_element(By.ID, "turn").text != turn)
        button = next(b for b in browser.find_elements(By.CSS_SELECTOR, "#truths button") if b.text.split(".", 1)[1] == answer)
        button.click()
        typed.append(answer)
        wait_until(lambda: browser.find_element(By.ID, "end").is_displayed())
        verdict = browser.find_element(By.ID, "verdict").text
        assert verdict.startswith("Correct."), verdict
        shot = os.environ.get("KUMO_SERVE_SCREENSHOT")
        if shot:
            browser.save_screenshot(shot)
    finally:
        browser.quit()
        shutil.rmtree(profile, ignore_errors=True)
    served = server.results("ada", "HumanAgent").read_text()
    # The same moves through `play`.
    played = tmp_path / "play.jsonl"
    run(kumo_bin, "play", "--instances", data / DOMAIN / f"{SETTING}.jsonl", "--line", index + 1,
        "--player", "ada", "--out", played, stdin="\n".join(typed) + "\n")
    assert [without_episode_id(line) for line in served.splitlines()] == played.read_text().splitlines()
    server.stop()


def test_next_unplayed_skips_played_and_open_games(start_server) -> None:
    import requests

    server = start_server()
    first = requests.post(f"{server.url}/reset", json={"split": SPLIT, "participant": "bo", "next_unplayed": True}).json()
    second = requests.post(f"{server.url}/reset", json={"split": SPLIT, "participant": "cy", "next_unplayed": True}).json()
    assert first["observation"]["task_id"].endswith("/0") and second["observation"]["task_id"].endswith("/1")
    # A person's off-menu input is asked again, not a parse error.
    r = requests.post(f"{server.url}/step", json={"episode_id": first["observation"]["episode_id"], "action": {"message": "no such test"}})
    assert r.status_code == 422 and "not on the menu" in r.json()["detail"]
    server.stop()
