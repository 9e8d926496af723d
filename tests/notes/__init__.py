"""Tests of arcology_oracle.notes."""
