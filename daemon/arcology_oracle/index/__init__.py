"""Keeping the store in step with the org files: parsing pipeline, indexer, watcher, service."""
