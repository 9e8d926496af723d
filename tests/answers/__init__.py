"""Tests of arcology_oracle.answers."""
