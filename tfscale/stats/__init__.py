"""Statistics of timing windows and processes: medians and their CIs, precision rules, repeats, tests (pure)."""
