"""The console in a real browser: JupyterLab on 127.0.0.1 with a token, the console notebook
opened in headless Chromium, one simulated debate per engine family (an argument graph, a
dispute graph, crux rooms, a blackboard); each must show its transcript, its findings
in its own shape and a report link that opens the written report.

One JupyterLab and one browser for the whole module. Skips, saying why, where Chromium,
chromedriver, selenium or JupyterLab are missing. Waits are on page state, never fixed sleeps.
Set ``CRUX_LAB_SHOTS=<folder>`` to keep a screenshot of the console after each run.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.widgets.lab import PAGE_S, REPORT_S, ROOT, RUN_S, browser_or_skip, chromium, jupyter_lab

# engine -> what its findings must show (a CSS selector inside the findings) and the counts' words
FAMILIES = {
    "dialogue": (".cl-cruxes", "IN "),
    "dcg": (".cl-disputes", "disputes "),
    "panel": (".cl-card", "crux cards "),
    "classical": (".cl-cruxes", "turns "),
}


TOPIC = "Should companies hold Bitcoin on their balance sheets?"


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The console notebook, run in JupyterLab, in headless Chromium: yields the driver."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser, driver = browser_or_skip()
    work = tmp_path_factory.mktemp("lab")
    env = {"CRUX_LAB_DB": str(work / "crux_lab.duckdb"), "CRUX_LAB_RUNS": str(work / "runs")}
    env.pop("ANTHROPIC_API_KEY", None)
    with jupyter_lab(work, [ROOT / "notebooks" / "00_console.ipynb"], env) as lab, chromium(browser, driver, work) as web:
        web.lab = lab
        web.get(lab.page("/lab/tree/00_console.ipynb"))
        wait = WebDriverWait(web, PAGE_S)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, ".jp-Notebook .jp-Cell"))
        wait.until(lambda d: "Idle" in d.find_element(By.CSS_SELECTOR, ".jp-StatusBar-Widget").text,
                   "the notebook's kernel to start (status bar: Idle)")
        menu(web, "Run", "runmenu:run-all")
        wait.until(lambda d: button(d, "run"), "the console to draw (its run button)")
        text_box(web, "topic", TOPIC)  # one the default pair disagrees on (their cards are not dropped)
        yield web


def menu(web: Any, bar: str, command: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    item = next(e for e in web.find_elements(By.CSS_SELECTOR, ".lm-MenuBar-item") if e.text.strip() == bar)
    item.click()
    entry = WebDriverWait(web, PAGE_S).until(
        lambda d: d.find_element(By.CSS_SELECTOR, f'.lm-Menu-item[data-command="{command}"]'))
    entry.click()


def button(web: Any, label: str) -> Any:
    from selenium.webdriver.common.by import By

    return next((b for b in web.find_elements(By.CSS_SELECTOR, "button.widget-button") if b.text.strip() == label), None)


def choose(web: Any, label: str, value: str) -> None:
    """Pick ``value`` in the console's dropdown described as ``label``."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    for box in web.find_elements(By.CSS_SELECTOR, ".widget-dropdown"):
        if box.find_element(By.CSS_SELECTOR, "label").text.strip() == label:
            Select(box.find_element(By.TAG_NAME, "select")).select_by_value(value)
            return
    raise AssertionError(f"no dropdown {label!r} in the console")


def text_box(web: Any, label: str, value: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    for box in web.find_elements(By.CSS_SELECTOR, ".widget-inline-hbox"):
        labels = box.find_elements(By.CSS_SELECTOR, "label")
        if labels and labels[0].text.strip() == label:
            field = box.find_element(By.TAG_NAME, "input")
            field.send_keys(Keys.CONTROL, "a")
            field.send_keys(value, Keys.ENTER)
            return
    raise AssertionError(f"no text field {label!r} in the console")


def output(web: Any) -> Any:
    """The console's output area (the cell output holding the widget)."""
    from selenium.webdriver.common.by import By

    return web.find_element(By.XPATH, "//div[contains(@class, 'jp-OutputArea-output')][.//button[contains(@class, 'widget-button')]]")


def status(web: Any) -> str:
    from selenium.webdriver.common.by import By

    run = button(web, "run")
    row = run.find_element(By.XPATH, "./..")
    return str(row.text)


@pytest.mark.parametrize("engine", list(FAMILIES))
def test_a_console_run_shows_its_transcript_findings_and_report(console: Any, engine: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    web, (finding, counts) = console, FAMILIES[engine]
    started = time.perf_counter()
    choose(web, "engine", engine)
    text_box(web, "max turns", "6")
    # Before a run: the counts fit the engine (a dispute graph has no IN/OUT/UNDEC).
    WebDriverWait(web, PAGE_S).until(lambda d: counts in output(d).text, f"the counts of {engine} ({counts!r})")
    if engine == "dcg":
        assert "UNDEC" not in output(web).text
    WebDriverWait(web, PAGE_S).until(lambda d: button(d, "run").is_enabled() and "ready" in status(d),
                                     "the console to reset for the new engine")
    button(web, "run").click()
    WebDriverWait(web, RUN_S).until(lambda d: "complete · run" in status(d) or "error:" in status(d),
                                    f"the {engine} debate to finish")
    assert "error:" not in status(web), status(web)
    out = output(web)
    turns = out.find_elements(By.CSS_SELECTOR, ".cl-turn")
    assert len(turns) >= 2 and all(t.get_attribute("textContent").strip() for t in turns)
    found = out.find_elements(By.CSS_SELECTOR, finding)
    assert found and found[0].text.strip(), f"{engine}: no {finding} in the findings"
    text = out.text
    assert "regime" in text and "camps" in text
    assert "(nothing found yet)" not in text and "michael-saylor" not in text  # display names, never ids
    assert "polarized: Polarized" not in text
    # The report: the button writes it, then a link opens it in a new tab.
    button(web, "open report").click()
    link = WebDriverWait(web, REPORT_S).until(lambda d: d.find_elements(By.CSS_SELECTOR, "a.cl-report-link"),
                                              "the report to be written and linked")[0]
    href = link.get_attribute("href")
    run_id = status(web).split("· run ", 1)[1].split(" ", 1)[0]
    assert run_id in href and "/files/" in href, href
    lab_window = web.current_window_handle
    link.click()
    WebDriverWait(web, PAGE_S).until(lambda d: len(d.window_handles) == 2, "the report's tab to open")
    web.switch_to.window(next(h for h in web.window_handles if h != lab_window))
    try:
        WebDriverWait(web, PAGE_S).until(lambda d: run_id in d.title, "the report to open in the new tab")
        assert "Launcher" not in web.title and "cl-transcript" in web.page_source
    finally:
        web.close()
        web.switch_to.window(lab_window)
    shots = os.environ.get("CRUX_LAB_SHOTS")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        size = web.get_window_size()
        web.set_window_size(size["width"], 4000)  # the whole console in view
        try:
            output(web).screenshot(str(Path(shots) / f"console_{engine}.png"))
        finally:
            web.set_window_size(size["width"], size["height"])
    print(f"{engine}: {time.perf_counter() - started:.1f}s")


def select_personas(web: Any, names: list[str]) -> None:
    """Pick exactly ``names`` (display names) in the console's persona list."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    for box in web.find_elements(By.CSS_SELECTOR, ".widget-select-multiple"):
        if box.find_element(By.CSS_SELECTOR, "label").text.strip() == "personas":
            select = Select(box.find_element(By.TAG_NAME, "select"))
            select.deselect_all()
            for name in names:
                select.select_by_visible_text(name)
            return
    raise AssertionError("no persona list in the console")


def test_a_console_debate_on_a_local_openai_compatible_server(console: Any) -> None:
    """The openai backend in the console: its base-URL field pointed at a local stand-in server
    (the recorded dialogue cassette behind an OpenAI-compatible API) runs one debate whose
    transcript, findings and saved run appear."""
    import json

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from tests.widgets.standin_openai import CASSETTES, standin_server

    debates = json.loads((CASSETTES / "debates.json").read_text(encoding="utf-8"))
    web = console
    with standin_server("dialogue") as url:
        try:
            choose(web, "engine", "dialogue")
            choose(web, "backend", "openai")
            WebDriverWait(web, PAGE_S).until(lambda d: "base URL" in output(d).text, "the openai backend's server fields")
            text_box(web, "base URL", url)
            text_box(web, "max turns", str(debates["engines"]["dialogue"]["max_turns"]))
            text_box(web, "topic", debates["topic"])
            select_personas(web, ["Michael Saylor", "Peter Schiff"])
            WebDriverWait(web, PAGE_S).until(lambda d: button(d, "run").is_enabled(), "the run button")
            button(web, "run").click()
            WebDriverWait(web, RUN_S).until(lambda d: "complete · run" in status(d) or "error:" in status(d),
                                            "the openai debate to finish")
            assert "error:" not in status(web), status(web)
            out = output(web)
            turns = out.find_elements(By.CSS_SELECTOR, ".cl-turn")
            assert len(turns) >= 2 and all(t.get_attribute("textContent").strip() for t in turns)
            # the findings: the regime and the crux count (the recorded dialogue debate found none to table)
            assert "regime" in out.text and "cruxes (" in out.text, out.text[-600:]
            saved = status(web).split("saved to ", 1)[1].split(" and the database", 1)[0].strip()
            assert Path(saved).is_dir() and (Path(saved) / "manifest.json").exists(), saved
        finally:
            choose(web, "backend", "simulated")
