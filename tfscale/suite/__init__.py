"""What a suite asks for: the suite file, its axes' values checked, the plan it expands to (pure, no TF)."""
