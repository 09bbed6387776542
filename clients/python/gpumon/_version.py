"""The client's version (read by pyproject.toml and reported in training_info)."""

__version__ = "0.1.0"
