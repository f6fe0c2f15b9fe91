"""The version of the acp-msgspec distribution (read by the build, see pyproject.toml)."""

__version__ = "0.1.0"
