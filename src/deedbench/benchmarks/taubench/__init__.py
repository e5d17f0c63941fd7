"""τ-bench compatibility: τ-bench's own tasks and data on deedbench's engine."""
