"""Reading org files: walking the roam folder, parsing headings, chunking, conversations."""
