"""The real browser the browser tests drive: Debian's chromium, or a Chrome/Chromium the machine already has.

COURSE_BROWSER names one explicitly. Without a browser a test skips and says how to get one, except under CI=true
(GitHub's runners and .ci/run have one), where the skip would hide a test that never ran, so it fails instead.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
# Where macOS and Windows install Chrome and Chromium (GitHub's macOS and Windows runners have Google Chrome).
PLACES = ("/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
          "/Applications/Chromium.app/Contents/MacOS/Chromium",
          *(str(Path(os.environ.get(v, "")) / "Google" / "Chrome" / "Application" / "chrome.exe")
            for v in ("PROGRAMFILES", "PROGRAMFILES(X86)", "LOCALAPPDATA") if os.environ.get(v)))


def find_browser() -> str | None:
    """The path of a Chromium-family browser, or None."""
    named = os.environ.get("COURSE_BROWSER")
    if named:
        return named if Path(named).is_file() else shutil.which(named)
    return next((p for p in map(shutil.which, NAMES) if p), None) or next(
        (p for p in PLACES if Path(p).is_file()), None)


def unavailable(reason: str) -> None:
    """Skip with `reason`, or fail under CI=true, where every browser test must run."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true, but this browser test cannot run: {reason}")
    pytest.skip(reason)


def require_browser() -> str:
    """The browser's path; skips (fails under CI) when there is none."""
    path = find_browser()
    if path is None:
        unavailable("no Chromium or Chrome installed (Debian/Ubuntu: apt-get install chromium; or set "
                    "COURSE_BROWSER to a Chrome/Chromium executable)")
    return path


def launch_args() -> list[str]:
    """Chromium refuses to run as root with its own sandbox (containers, CI): drop it only there."""
    return ["--no-sandbox"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []


def drag(page, element, dx: float, dy: float) -> None:
    """Press the mouse in the middle of `element` (a Playwright locator) and drag it by (dx, dy) pixels."""
    box = element.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + dx, y + dy, steps=8)
    page.mouse.up()
