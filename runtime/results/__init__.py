"""What a run gives: metrics, reports, provenance, exports (jobs CSV, Batsim, SWF out),
figures and HTML pages."""
