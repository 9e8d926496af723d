"""Tests of the command line, run as a real subprocess."""
