"""Answering from the index: retrieval fusion, grounding for the compatible APIs, the oracle."""
