"""Tests of arcology_oracle.store."""
