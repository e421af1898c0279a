"""The pages in a real browser (headless Chromium, `tests/support/browser.py`): they load
with no console error, every figure has a size, and the screenshot shows the figures. The
detector itself is tested on pages with a `console.error` and a failed load. Skipped when
Chromium is missing, except in CI (`CI` set), where that is a failure."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from schedc.runtime.cli.main import main
from tests.support import browser, preempted_runs
from tests.support.repo import EXAMPLES, ROOT
from tests.support.tiny_traces import THREE_JOBS_SWF


@pytest.fixture(autouse=True)
def _chromium() -> None:
    if browser.chromium() is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing: .ci/run installs Debian's chromium")
        pytest.skip("chromium is not installed")


def _pixels(png: bytes):
    from PIL import Image

    return Image.open(io.BytesIO(png)).convert("RGB")


def _ink(image, box: browser.Box | None = None) -> float:
    """The fraction of pixels that are not (near) white, in ``box`` or the whole image."""
    if box is not None:
        image = image.crop((int(box.x), int(box.y), int(box.x + box.width),
                            int(box.y + box.height)))
    gray = image.convert("L")
    dark = sum(gray.histogram()[:240])
    return dark / (gray.width * gray.height)


def test_a_run_page_loads_cleanly_and_shows_its_figures(tmp_path: Path) -> None:
    trace = tmp_path / "three.swf"
    trace.write_text(THREE_JOBS_SWF)
    page = tmp_path / "run.html"
    assert main(["run", str(EXAMPLES / "easy.pol"), "--workload", str(trace), "--json",
                 "--report", str(page)]) == 0
    loaded = browser.load(page)
    assert loaded.errors == ()
    assert loaded.title == "easy on three.swf (cpus=10)"
    assert len(loaded.svgs) == 3  # Gantt, utilisation and queue, waits
    assert all(box.width > 300 and box.height > 200 for box in loaded.svgs)
    image = _pixels(loaded.screenshot)
    assert image.width >= browser.WIDTH
    assert image.height >= max(box.y + box.height for box in loaded.svgs)
    for box in loaded.svgs:  # each figure drawn where the page says it is
        assert _ink(image, box) > 0.03
    gantt = loaded.svgs[0]
    margin = browser.Box(0, gantt.y - 200, browser.WIDTH, 150)  # above it: text, mostly blank
    assert _ink(image, gantt) > _ink(image, margin)


def test_a_preemptive_run_page_loads_cleanly_and_shows_its_figures(tmp_path: Path) -> None:
    policy, table = preempted_runs.files(tmp_path, "checkpoint")
    page = tmp_path / "run.html"
    assert main(["run", str(policy), "--workload", str(table), "--json",
                 "--report", str(page)]) == 0
    loaded = browser.load(page)
    assert loaded.errors == ()
    assert loaded.title == "checkpoint_once on jobs.csv (cpus=4)"
    assert len(loaded.svgs) == 3
    image = _pixels(loaded.screenshot)
    for box in loaded.svgs:
        assert box.width > 300 and box.height > 200 and _ink(image, box) > 0.03
    gantt = loaded.svgs[0]  # its legend at the right, beside the chart
    legend = browser.Box(gantt.x + gantt.width * 0.75, gantt.y, gantt.width * 0.25, 80)
    assert _ink(image, legend) > 0.02


def test_a_verify_page_with_a_counterexample_loads_cleanly(tmp_path: Path,
                                                          monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    page = tmp_path / "verify.html"
    assert main(["verify", "examples/broken/easy-freeprocs.pol", "--property",
                 "reservation-safety", "--format", "json", "--report", str(page)]) == 1
    loaded = browser.load(page)
    assert loaded.errors == ()
    assert loaded.title == "Verification of easy_freeprocs"
    assert 0.002 < _ink(_pixels(loaded.screenshot)) < 0.5  # text on white, not blank


def test_the_detector_catches_a_console_error(tmp_path: Path) -> None:
    page = tmp_path / "error.html"
    page.write_text("<!DOCTYPE html><title>e</title><p>x</p>"
                    "<script>console.error('deliberate')</script>")
    assert browser.load(page).errors == ("console.error: deliberate",)


def test_the_detector_catches_a_failed_load(tmp_path: Path) -> None:
    page = tmp_path / "load.html"
    page.write_text('<!DOCTYPE html><title>l</title><img src="http://127.0.0.1:9/x.png">')
    errors = browser.load(page).errors
    assert len(errors) == 1 and "127.0.0.1:9/x.png" in errors[0], errors


def test_the_detector_catches_an_uncaught_exception(tmp_path: Path) -> None:
    page = tmp_path / "throw.html"
    page.write_text("<!DOCTYPE html><title>t</title><script>null.x</script>")
    errors = browser.load(page).errors
    assert len(errors) == 1 and errors[0].startswith("exception: TypeError"), errors


def test_a_rasterized_figure_shows_under_the_pages_policy(tmp_path: Path) -> None:
    """Large Gantt charts embed a PNG in their SVG (a data: URI): the page's
    Content-Security-Policy lets it show, and nothing else load."""
    import base64

    from PIL import Image

    from schedc.runtime.results.html_report.page import Page

    buffer = io.BytesIO()
    Image.new("RGB", (40, 20), (30, 90, 160)).save(buffer, format="PNG")
    data = base64.b64encode(buffer.getvalue()).decode()
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
           'width="400" height="200" viewBox="0 0 400 200"><image width="400" height="200" '
           f'xlink:href="data:image/png;base64,{data}"/></svg>')
    page = tmp_path / "raster.html"
    Page("raster").figure("a raster", svg).write(page)
    loaded = browser.load(page)
    assert loaded.errors == ()
    (box,) = loaded.svgs
    assert _ink(_pixels(loaded.screenshot), box) > 0.9
