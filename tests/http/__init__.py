"""Tests of arcology_oracle.http."""
