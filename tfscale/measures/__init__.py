"""Formulas for a record's figures, shared by the worker that measures and the analysis that reads them."""
