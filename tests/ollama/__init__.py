"""Tests of arcology_oracle.ollama."""
