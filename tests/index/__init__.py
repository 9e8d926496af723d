"""Tests of arcology_oracle.index."""
