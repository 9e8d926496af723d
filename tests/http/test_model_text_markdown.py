"""A model's answer written by the real daemon (``/converse``), exported by batch Emacs's
Org 9.5 to Markdown (``ox-md``, which ``ox-hugo`` builds on) and to ODT, then the
Markdown rendered by a CommonMark renderer that keeps raw HTML and trusts every link (as
Hugo's with ``unsafe`` on, or pandoc): no element, attribute or link of the model's runs
a script in the published page, and no ODT link of its runs a macro; its web links, its
inline code and Org's own links stay."""

from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt

from arcology_oracle.notes.outside_links import href_scheme
from tests.http.test_model_text_export import answered_and_read

pytestmark = pytest.mark.timeout(300)

_EXPORT = """
(progn
  (require 'org) (require 'ox-md) (require 'ox-odt)
  (find-file (car command-line-args-left))
  (dolist (backend '(md odt))
    (let ((out (condition-case err (org-export-as backend nil nil t) (error (format "failed: %S" err)))))
      (with-temp-file (format "%s.%s" (cadr command-line-args-left) backend) (insert out)))))
"""

REPLY = """Here is how:
<script>alert(1)</script> and <img src=x onerror=alert(2)>, <!-- x --> and </a>
<javascript:alert(3)> or [click](javascript:alert(4)), ![i](data:text/html,alert(5)),
[e](&#106;avascript:alert(6)), [n](
javascript:alert(7)) and [r][] and [[news:javascript:alert(8)][the news]].
[r]: javascript:alert(9)
and [b](\\\\
javascript:alert(11)), Org's line break before its destination.
Not verbatim to Org, in a link or math: [[https://x/ =<b onclick=alert(12)>= ]],
<https://x/ =<b onclick=alert(13)>= > and \\(=<b onclick=alert(14)>=\\).
- an item defining [q] and [q
over lines]: [q][] and [q over lines][]
- [q]: javascript:alert(15)
- [q
over lines]: javascript:alert(16)

Fine: [docs](https://orgmode.org), <https://orgmode.org/manual>, ~<div>~, =<b>=, a <= b, $a<b$,
[[https://orgmode.org][Org]] and [[irc:javascript:alert(10)][irc]].
"""


def _safe_url(url: str) -> bool:
    return href_scheme(url) in (None, "http:", "https:", "mailto:")


async def test_a_models_words_are_no_script_in_a_markdown_or_odt_export(daemon, roam_dir, fake_ollama):
    # Org 9.5's Markdown export writes text's "<" and "[x](...)" as they are: the model's
    # tags were elements of the published page, its Markdown links ran scripts; its
    # news: and irc: links' paths went into the ODT's (and Markdown's) hrefs as they are.
    out = roam_dir.parent / "talk"
    answer, said = await answered_and_read(daemon, roam_dir, fake_ollama, REPLY, "* Talk\n** How?\n", script=_EXPORT,
                                      args=(str(out),))  # fmt: skip
    markdown, odt = (out.with_suffix(f".{backend}").read_text() for backend in ("md", "odt"))
    assert not markdown.startswith("failed") and not odt.startswith("failed"), (markdown, odt, said)
    renderer = MarkdownIt("commonmark")
    renderer.validateLink = lambda url: True  # a renderer that trusts every link
    page = renderer.render(markdown)
    elements = set(re.findall(r"<([a-z0-9]+)", page))
    assert elements <= {"p", "a", "code", "h1", "h2", "h3", "h4", "ol", "ul", "li", "br"}, (elements, page)
    urls = re.findall(r'(?:href|src)="([^"]*)"', page)
    assert urls and all(_safe_url(url) for url in urls), urls
    assert 'href="https://orgmode.org"' in page and 'href="https://orgmode.org/manual"' in page, page
    assert "<code>&lt;div&gt;</code>" in page and "<code>&lt;b&gt;</code>" in page, page  # as written
    assert not re.findall(r"<[a-z]+ on\w+=", page), page
    assert "a <= b, $a<b$," in answer["org"], answer["org"]  # math, no tag: as written
    hrefs = re.findall(r'xlink:href="([^"]*)"', odt)
    assert hrefs and all(_safe_url(href) for href in hrefs), hrefs
