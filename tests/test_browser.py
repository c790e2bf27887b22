"""The HTML animation in a real browser: headless Chromium with the network cut off.

Runs whenever a Chromium binary is on the PATH (CI installs one).  Checks that
the page loads nothing from outside, that the 3-D scene is drawn, and that
moving to another frame (``#frame=K``, as the slider does) moves the mechanism.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

import rbd

pytest.importorskip("plotly", reason="plotly (the 'animate' extra) is not installed")
Image = pytest.importorskip("PIL.Image", reason="pillow (the 'animate' extra) is not installed")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [pytest.mark.slow, pytest.mark.single_pass,
              pytest.mark.skipif(CHROMIUM is None, reason="no chromium or chromium-browser "
                                 "on the PATH (apt-get install chromium)")]

# Every request to the outside fails: all host names resolve to nothing and any
# connection goes through a proxy on the discard port of this machine.
OFFLINE = ["--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND"]
HEADLESS = ["--headless", "--no-sandbox", "--no-first-run",
            "--disable-extensions", "--hide-scrollbars", "--mute-audio",
            "--virtual-time-budget=8000"]
# The middle of the window, where the 3-D scene is: blank (one colour) when the
# scene failed to draw; the shaded, anti-aliased scene has hundreds of colours.
SCENE = (slice(150, 450), slice(150, 650))
MIN_COLOURS = 50


def chromium(*args: str, timeout: float = 90.0) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, *HEADLESS, *OFFLINE, *args], capture_output=True,
                          text=True, timeout=timeout, check=False)


def screenshot(page, frame: int, tmp_path) -> np.ndarray:
    png = tmp_path / f"frame{frame}.png"
    result = chromium(f"--screenshot={png}", "--window-size=800,600",
                      f"{page.as_uri()}#frame={frame}")
    assert png.exists(), f"chromium wrote no screenshot: {result.stderr[-2000:]}"
    with Image.open(png) as im:
        return np.asarray(im.convert("RGB"))


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """A swinging double pendulum, 40 frames, written as an offline HTML page."""
    model = rbd.models.double_pendulum()
    traj = rbd.simulate(model, [1.5, 0.0], [0.0, 0.0], 1.0, 0.01)
    return rbd.animate(model, traj, tmp_path_factory.mktemp("page") / "swing.html",
                       frames=40, trail="link2")


def test_page_needs_nothing_from_outside(page):
    html = page.read_text()
    assert not re.search(r"<script[^>]+src=", html, re.I)
    assert not re.search(r"<link[^>]+href=[\"']?(https?:)?//", html, re.I)
    result = chromium("--dump-dom", f"{page.as_uri()}#frame=5")
    dom = result.stdout
    # plotly drew its figure (the slider and the buttons) and the page's script went to
    # frame 5, all without the network
    assert "plot-container" in dom, result.stderr[-2000:]
    assert 'data-rbd-frame="5"' in dom
    assert "▶ play" in dom
    assert not re.search(r"<script[^>]+src=[\"']?(https?:)?//", dom, re.I)


def test_scene_is_drawn_and_the_slider_moves_it(page, tmp_path):
    first = screenshot(page, 0, tmp_path)
    later = screenshot(page, 20, tmp_path)
    for shot in (first, later):
        colours = len(np.unique(shot[SCENE].reshape(-1, 3), axis=0))
        assert colours >= MIN_COLOURS, f"no scene drawn: {colours} colours in its place"
    # the pendulum swings: the scene changes over an area larger than noise
    changed = np.any(first[SCENE] != later[SCENE], axis=2)
    assert changed.sum() > 500, f"only {changed.sum()} pixels differ between frames 0 and 20"


# --- the robots themselves ---------------------------------------------------------------------
# A 1280 × 900 window, as a laptop's browser.
WINDOW = (1280, 900)


def robot_screenshot(page, tmp_path, frame: int = 0) -> np.ndarray:
    png = tmp_path / f"{page.stem}{frame}.png"
    result = chromium(f"--screenshot={png}", f"--window-size={WINDOW[0]},{WINDOW[1]}",
                      f"{page.as_uri()}#frame={frame}")
    assert png.exists(), f"chromium wrote no screenshot: {result.stderr[-2000:]}"
    with Image.open(png) as im:
        return np.asarray(im.convert("RGB")).astype(int)


def test_ur5_is_seen_with_its_meshes(tmp_path):
    """The UR5's grey meshes fill a good part of the window, and the page fills the window."""
    from test_animation import _ur5
    model, traj = _ur5()
    page = rbd.animate(model, traj, tmp_path / "ur5.html", frames=10)
    shot = robot_screenshot(page, tmp_path, 5)
    r, g, b = shot[..., 0], shot[..., 1], shot[..., 2]
    # the meshes are shaded greys (the scene's background is a light blue-grey, the page white)
    grey = (np.abs(r - g) < 8) & (np.abs(g - b) < 8) & (r < 170)
    assert grey.sum() > 4000, f"only {grey.sum()} pixels of the robot's grey"
    # the plot fills the window: its slider sits in the bottom fifth of the window
    drawn_rows = np.nonzero(np.any(shot < 250, axis=(1, 2)))[0]
    assert drawn_rows.max() > 0.8 * WINDOW[1]


def test_ant_is_seen_as_capsules_on_a_floor(tmp_path):
    from test_animation import _ant
    model, traj = _ant()
    page = rbd.animate(model, traj, tmp_path / "ant.html", frames=10)
    shot = robot_screenshot(page, tmp_path, 2)
    r, b = shot[..., 0], shot[..., 2]
    tan = (r - b > 60) & (r > 80)                 # the ant's rgba (0.8, 0.6, 0.4), shaded
    assert tan.sum() > 10_000, f"only {tan.sum()} pixels of the ant's colour"
    # the checker floor: its two greys side by side
    floor = [(np.abs(shot - np.array(c[:3]) * 255).sum(axis=2) < 40).sum()
             for c in ((0.82, 0.84, 0.86), (0.70, 0.73, 0.76))]
    assert min(floor) > 1000, f"floor pixels of each checker colour: {floor}"
