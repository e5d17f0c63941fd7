"""The command-line interface (``deedbench``)."""
