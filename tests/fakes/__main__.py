"""``python -m tests.fakes``: run the fake Ollama server (same flags as ``-m tests.fakes.fake_ollama``)."""

import sys

from .fake_ollama import main

sys.exit(main())
