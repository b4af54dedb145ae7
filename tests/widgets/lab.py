"""JupyterLab and headless Chromium for the browser tests: one lab server on 127.0.0.1 (the port
it reports binding, a token, its own config, runtime and workspace folders) and one Chromium driven through
chromedriver (Debian's ``chromium`` and ``chromium-driver``; never a downloaded build).

Waits are on page state (WebDriverWait on a condition) with generous overall limits, never on
fixed sleeps: the machine may be loaded.
"""

from __future__ import annotations

import http.client
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVER_START_S = 240  # a cold JupyterLab start on a loaded 2-core machine
PAGE_S = 180  # the lab page and its extensions loading, a kernel starting
RUN_S = 300  # one simulated debate, saved and ingested
REPORT_S = 420  # the report notebook executed and exported


def browser_or_skip() -> tuple[str, str]:
    """``(chromium, chromedriver)`` paths, or skip saying what is missing and how to get it."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        pytest.skip("selenium is not installed (it is in the dev extra: pip install -e '.[dev]')")
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        pytest.skip("JupyterLab is not installed (it is in the lab extra: pip install -e '.[lab]')")
    browser = next((p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None)
    driver = shutil.which("chromedriver")
    if browser is None or driver is None:
        missing = " and ".join(n for n, p in (("chromium", browser), ("chromedriver", driver)) if p is None)
        pytest.skip(f"{missing} not found: install Debian's chromium and chromium-driver "
                    "(apt-get install chromium chromium-driver) to run the browser tests")
    return browser, driver


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def bound_url(runtime: Path) -> str | None:
    """The URL JupyterLab's server wrote in its info file once it had bound its port, else None.

    The port asked for is only a start: another test worker's kernel may take it between
    ``free_port`` and the server binding (its ZeroMQ greeting then answers an HTTP request), so
    the server may move on to the next port, and this file is where it says which.
    """
    try:  # the runtime folder is this lab's own: one server writes there
        info = next(runtime.glob("jpserver-*.json"))
        url = json.loads(info.read_text(encoding="utf-8"))["url"]
    except (StopIteration, OSError, ValueError, KeyError):
        return None
    return str(url).rstrip("/")


def wait_until(check: Callable[[], Any], timeout: float, what: str, poll: float = 0.25) -> Any:
    """Poll ``check`` until it returns something truthy; fail naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(poll)


@dataclass
class Lab:
    url: str  # http://127.0.0.1:PORT
    token: str
    root: Path  # the server's root folder (the notebooks are copied here)
    process: subprocess.Popen[bytes]
    log: Path

    def page(self, path: str) -> str:
        return f"{self.url}{path}?token={self.token}"

    def get(self, path: str) -> tuple[int, bytes]:
        request = urllib.request.Request(self.url + path, headers={"Authorization": f"token {self.token}"})
        try:
            with urllib.request.urlopen(request, timeout=30) as reply:  # noqa: S310 (the local server)
                return reply.status, reply.read()
        except urllib.error.HTTPError as exc:
            return exc.code, b""
        except (OSError, http.client.HTTPException):
            return 0, b""


@contextmanager
def jupyter_lab(workdir: Path, notebooks: list[Path], env: dict[str, str]) -> Iterator[Lab]:
    """JupyterLab serving ``workdir/root`` (with copies of ``notebooks``) until the block ends."""
    root = workdir / "root"
    root.mkdir(parents=True, exist_ok=True)
    for nb in notebooks:
        shutil.copy(nb, root / nb.name)
    token, port = secrets.token_hex(16), free_port()
    jenv = {**os.environ, **env,
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
            "JUPYTER_CONFIG_DIR": str(workdir / "config"), "JUPYTER_RUNTIME_DIR": str(workdir / "runtime"),
            "JUPYTERLAB_WORKSPACES_DIR": str(workdir / "workspaces"),
            "JUPYTERLAB_SETTINGS_DIR": str(workdir / "settings")}
    # No news or update checks: a notification toast must not cover the page.
    settings = workdir / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}), encoding="utf-8")
    log = workdir / "lab.log"
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
           "--ServerApp.port_retries=50", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
           "--LabApp.news_url=", "--LabApp.extension_manager=readonly", "--ServerApp.terminals_enabled=False"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # CI containers run as root
        cmd.append("--allow-root")
    with log.open("wb") as out:
        process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=jenv, cwd=root)
    lab = Lab("", token, root, process, log)
    try:
        def up() -> bool:
            if process.poll() is not None:
                raise AssertionError(f"JupyterLab exited ({process.returncode}): {log.read_text(errors='replace')[-2000:]}")
            lab.url = lab.url or bound_url(Path(jenv["JUPYTER_RUNTIME_DIR"])) or ""
            return bool(lab.url) and lab.get("/api/status")[0] == 200

        wait_until(up, SERVER_START_S, "JupyterLab to answer on /api/status")
        yield lab
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


@contextmanager
def chromium(browser: str, driver: str, workdir: Path) -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-default-apps", "--disable-extensions", "--window-size=1400,1800",
                 f"--user-data-dir={workdir / 'chromium-profile'}"):
        options.add_argument(flag)
    service = Service(executable_path=driver, log_output=str(workdir / "chromedriver.log"))
    web = webdriver.Chrome(options=options, service=service)
    web.set_page_load_timeout(PAGE_S)
    try:
        yield web
    finally:
        web.quit()
