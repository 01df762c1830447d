"""The version of fleetsim (semantic versioning; see CHANGELOG.md). The one place it is set."""

__version__ = "0.2.0"
