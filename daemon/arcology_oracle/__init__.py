"""arcology-oracle: think with your own org-roam notes through a local LLM."""

__version__ = "0.1.0"
