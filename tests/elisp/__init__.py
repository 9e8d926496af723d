"""Tests of the Emacs package (elisp/), run in batch Emacs against the real daemon."""
