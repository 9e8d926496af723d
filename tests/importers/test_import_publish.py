"""An imported chat published with org-publish (batch Emacs's Org 9.5), its sitemap on:
the chat's title, which the sitemap writes into a link's description as it is, makes no
link of its own there."""

from __future__ import annotations

import datetime

from arcology_oracle.importers.model import Conversation, Message
from arcology_oracle.importers.render import render
from tests.emacs_batch import emacs_env, run_emacs

PUBLISH = r"""
(progn
  (require 'ox-publish)
  (let* ((base (getenv "BASE"))
         (org-publish-project-alist
          `(("notes" :base-directory ,base :publishing-directory ,(concat base "/../html")
             :publishing-function org-html-publish-to-html :auto-sitemap t)))
         (org-publish-use-timestamps-flag nil))
    (message "PUBLISHED %S" (condition-case err (progn (org-publish "notes" t) t) (error err)))))
"""


async def test_a_chat_title_makes_no_link_in_the_published_sitemap(tmp_path):
    # "Bread]] [[Brining" ended the sitemap's [[file:...][TITLE]] link and made a link
    # within sitemap.org to a heading it has not: its export failed, and the publishing
    # with it ("Unable to resolve link: \"Brining\"").
    base = tmp_path / "notes"
    base.mkdir()
    chat = Conversation("chatgpt", "c-1", "Bread]] [[Brining", [
        Message("m-1", "user", "How long to brine?", datetime.datetime(2024, 3, 5, 9, 0)),
    ])  # fmt: skip
    (base / "chat.org").write_text(render(chat).text)
    code, output = await run_emacs(["--eval", PUBLISH], env=emacs_env(tmp_path, BASE=str(base)))
    assert code == 0 and "PUBLISHED t" in output.splitlines(), output
    assert "Bread]" in (tmp_path / "html" / "sitemap.html").read_text()  # the title, as words
