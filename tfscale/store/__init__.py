"""Run folders and their records: versioned JSONL, record checks, exports (no TF, no pandas)."""
