"""Figures of runs, comparisons and sweeps (matplotlib, imported inside the functions only:
importing this package costs nothing, so `schedc run` stays fast).

The contract other parts code against: `run_figures`, `compare_figures`, `sweep_figure`,
`save_figure`, `figure_svg`."""

from schedc.runtime.results.plots.compare import compare_figures
from schedc.runtime.results.plots.run import run_figures
from schedc.runtime.results.plots.save import figure_svg, save_figure
from schedc.runtime.results.plots.sweep import sweep_figure

__all__ = ["compare_figures", "figure_svg", "run_figures", "save_figure", "sweep_figure"]
