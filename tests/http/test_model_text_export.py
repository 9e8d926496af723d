"""A model's answer written by the real daemon (``/converse``), exported by batch Emacs's
Org as a user would (``org-latex-export-to-latex``) with Babel on and asking nothing
(``org-confirm-babel-evaluate`` nil, as many set it), then tangled (``C-c C-v t``) in a
file whose ``header-args`` say ``:tangle yes``: no code of the model's runs or is written
out, no keyword of its is read, and the ``.tex`` holds no LaTeX of the model's that
writes a file or calls a command by a spelled name (a PDF run of it would), while its
math environments stay."""

from __future__ import annotations

import re
import subprocess
from html import unescape

import pytest

from tests.emacs_batch import emacs, emacs_env
from tests.index.test_write_attacks import post
from tests.runners import wait_indexed

pytestmark = pytest.mark.timeout(300)

ANSWER = r"""Here:
```emacs-lisp
(write-region "pwned" nil "PWNED-fence")
```
#+begin_src emacs-lisp :exports results :eval yes
(write-region "pwned" nil "PWNED-block")
#+end_src
#+CALL: evil()
#+BIND: org-latex-pdf-process ("touch PWNED-bind")
#+LATEX_HEADER: \usepackage{shellesc}
#+begin_export latex
\immediate\write18{touch PWNED}
#+end_export
\begin{filecontents*}[overwrite]{talk.org}
* the user's note, overwritten
\end{filecontents*}
\begin{immediate}\begin{write}18{touch PWNED}\end{write}\end{immediate}
\begin{equation}
\ExplSyntaxOn \sys_shell_now:n {touch~PWNED} \ExplSyntaxOff \UseName{write}18{touch PWNED}
\ifcsname write\endcsname\lastnamedcs18{touch PWNED}\fi
\end{equation}
\begin {\x} and \begin\y
\pdfcatalog{/OpenAction 1 0 R}
\begin{align*} a &= \frac{1}{2} \end{align*}
"""
_EXPORT = """
(progn
  (require 'org) (require 'ox-latex) (require 'ob-emacs-lisp)
  (setq org-confirm-babel-evaluate nil org-export-allow-bind-keywords t)
  (find-file (car command-line-args-left))
  (message "TEX %s" (org-latex-export-to-latex))
  (message "TANGLED %S" (org-babel-tangle)))
"""


async def test_a_models_latex_and_blocks_do_nothing_on_export(daemon, roam_dir, fake_ollama):
    await wait_indexed(daemon)
    fake_ollama.state.chat_reply = ANSWER
    conversation = "* Talk\n** Write me some LaTeX\n"
    status, answer = await post(daemon, "/converse", {"org": conversation})
    assert status == 200, answer
    path = roam_dir / "talk.org"
    path.write_text("#+title: Talk\n#+PROPERTY: header-args :exports both :tangle yes\n" + conversation + answer["org"])
    done = subprocess.run(
        [emacs(), "-Q", "--batch", "--eval", _EXPORT, str(path)],
        cwd=roam_dir, env=emacs_env(roam_dir.parent), capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert "TEX " in done.stderr, done.stderr
    assert sorted(p.name for p in roam_dir.rglob("PWNED*")) == []  # no block ran
    assert "TANGLED nil" in done.stderr, done.stderr  # nor was written out by C-c C-v t
    tex = (roam_dir / "talk.tex").read_text()
    preamble, body = tex.split("\\begin{document}", 1)
    assert "shellesc" not in preamble and "PWNED-bind" not in preamble, preamble  # no keyword read
    for raw in ("\\begin{filecontents", "\\begin{write}", "\\begin{immediate}", "\\ExplSyntaxOn", "\\UseName",
                "\\lastnamedcs", "\\ifcsname", "\\begin {\\x}", "\\begin\\y", "\\pdfcatalog", "\\write18"):  # fmt: skip
        assert raw not in body, (raw, body)
    assert "\\begin{equation}" in body and "\\begin{align*} a &= \\frac{1}{2} \\end{align*}" in body, body


_READ_AND_EXPORT = """
(progn
  (require 'org) (require 'ox-ascii) (require 'org-id)
  (setq org-id-locations-file (make-temp-file "org-id-locations"))
  (org-id-update-id-locations (list (expand-file-name "bread-hydration.org")))  ; as org-roam users have them
  (find-file (car command-line-args-left))
  (message "REFERENCES %S" (org-element-map (org-element-parse-buffer) 'footnote-reference
                             (lambda (ref) (org-element-property :label ref))))
  (message "LINKS %S" (org-element-map (org-element-parse-buffer) 'link (lambda (link) (org-element-property :type link))))
  (message "EXPORTED %s" (condition-case err (org-ascii-export-to-ascii) (error (format "failed: %S" err)))))
"""


async def answered_and_read(daemon, roam_dir, fake_ollama, reply: str, conversation: str, *, after: str = "",
                            script: str = _READ_AND_EXPORT, args: tuple[str, ...] = ()) -> tuple[dict, str]:
    """The daemon's ``/converse`` answer to ``conversation`` when the model says ``reply``,
    written after it into ``talk.org`` (then ``after``), and what batch Emacs running
    ``script`` on that file (``args`` after its path) says."""
    await wait_indexed(daemon)
    fake_ollama.state.chat_reply = reply
    status, answer = await post(daemon, "/converse", {"org": conversation})
    assert status == 200, answer
    path = roam_dir / "talk.org"
    path.write_text(conversation + answer["org"] + after)
    done = subprocess.run(
        [emacs(), "-Q", "--batch", "--eval", script, str(path), *args],
        cwd=roam_dir, env=emacs_env(roam_dir.parent), capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    return answer, done.stderr


async def test_a_models_footnotes_and_links_within_the_file_leave_the_users_and_export_alone(daemon, roam_dir, fake_ollama):
    # A model's "[fn:1]" (no such definition) made the whole file's export fail ("Definition
    # not found for footnote 1"), and its "[fn:soak]" showed the user's footnote at its words;
    # so did a link within the file to nothing ("Unable to resolve link: Brining").
    reply = ("As you wrote[fn:soak], salt helps [FN:1].\n[fn:2] Kenji, 2019.\n"
             "See [[Brining]], [[*Salt][salt]], [[#nope]], [[Note: x]] and [[https://orgmode.org][Org]].")
    footnotes = "* Footnotes\n[fn:soak] Overnight, in salted water.\n"
    answer, said = await answered_and_read(daemon, roam_dir, fake_ollama, reply, "* Talk\n** Why salt?\nSoak them[fn:soak].\n",
                                           after=footnotes)  # fmt: skip
    assert 'REFERENCES ("soak")' in said, said  # the user's one reference, no other
    assert "EXPORTED " in said and "failed" not in said, said
    assert 'LINKS ("https")' in said, said  # the model's web link stays one
    assert "As you wrote[\u200bfn:soak], salt helps [\u200bFN:1]." in answer["org"], answer["org"]


async def test_a_models_link_to_an_id_no_note_has_leaves_the_export_alone(daemon, roam_dir, fake_ollama):
    # A model's mangled ID made every export of the conversation file fail ("Unable to
    # resolve link: id:..."); its link to a note the index holds stays a link.
    known = "36fb47dd-e96a-4b44-80ce-b246a771f11d"  # bread-hydration.org
    reply = (f"See [[id:{known}][hydration]] and [[id:36fb47dd-e96a-4b44-80ce-b246a771f11e][this]],"
             " or id:36fb47dd-e96a-4b44-80ce-b246a771f11f.")
    _, said = await answered_and_read(daemon, roam_dir, fake_ollama, reply, "* Talk\n** How wet?\n")
    assert 'LINKS ("id")' in said, said  # the known note's link, no other
    assert "EXPORTED " in said and "failed" not in said, said


async def test_a_models_link_of_a_type_org_has_not_registered_leaves_the_export_alone(daemon, roam_dir, fake_ollama):
    # Org reads "[[wiki:Bread]]" (no type wiki registered) as a link within the file, to a
    # heading named "wiki:Bread": with none, every export of the file failed ("Unable to
    # resolve link: \"wiki:Bread\""). Links of the types Org registers stay, in any case.
    reply = "See [[wiki:Bread][the wiki]], [[note:salt]], [[HTTPS://orgmode.org][Org]] and [[doi:10.1000/182][a paper]]."
    answer, said = await answered_and_read(daemon, roam_dir, fake_ollama, reply, "* Talk\n** Where to read?\n")
    assert 'LINKS ("HTTPS" "doi")' in said, said
    assert "EXPORTED " in said and "failed" not in said, said
    assert "[\u200b[wiki:Bread][the wiki]]" in answer["org"], answer["org"]


NOWEB_USER = """#+PROPERTY: header-args :noweb yes
#+PROPERTY: header-args:emacs-lisp :noweb yes
#+NAME: note-block
#+begin_src emacs-lisp :var x=0 :exports code
(write-region "pwned" nil (format "PWNED-%s" x))
#+end_src
"""
NOWEB_ANSWER = """Call it:
```emacs-lisp
<<note-block(x=7)>>
<<note-block(x=(progn (write-region "pwned" nil "PWNED-lisp") 1))>>
```
#+begin_src emacs-lisp :noweb yes
<<note-block(x=8)>>
#+end_src
"""


async def test_a_models_noweb_reference_calls_no_block_of_the_users_on_export(daemon, roam_dir, fake_ollama):
    # Where the file's header-args say ":noweb yes", an export expanded the model's
    # "<<note-block(x=7)>>" in its own (":eval no") block: it ran the user's named block
    # with the model's argument, and the Lisp in "x=(progn ...)" too.
    _, said = await answered_and_read(daemon, roam_dir, fake_ollama, NOWEB_ANSWER, "* Talk\n** Write me some code\n",
                                      after=NOWEB_USER, script=_EXPORT)  # fmt: skip
    assert "TEX " in said, said
    assert sorted(p.name for p in roam_dir.rglob("PWNED*")) == [], said
    assert "note-block(x=7)" in (roam_dir / "talk.tex").read_text()  # the model's code, shown as written


_HTML_EXPORT = """
(progn
  (require 'org) (require 'ox-html)
  (find-file (car command-line-args-left))
  (let ((html (condition-case err (org-export-as 'html nil nil t) (error (format "failed: %S" err)))))
    (with-temp-file (cadr command-line-args-left) (insert html))))
"""


async def exported_html(daemon, roam_dir, fake_ollama, reply: str) -> str:
    """The body of Org 9.5's HTML export of ``talk.org`` holding the ``/converse`` answer
    to a question when the model says ``reply``."""
    out = roam_dir.parent / "talk.html"
    _, said = await answered_and_read(daemon, roam_dir, fake_ollama, reply, "* Talk\n** Where?\n", script=_HTML_EXPORT,
                                      args=(str(out),))  # fmt: skip
    assert out.exists(), said
    return out.read_text()


async def test_a_models_link_with_a_quote_in_its_path_adds_no_attribute_to_an_html_export(daemon, roam_dir, fake_ollama):
    # Org 9.5's HTML export writes the path of a file:, doi:, help: or info: link into its
    # href (an image's src) as it is: the model's '"' ended the attribute, and the rest
    # became attributes of its choosing, a script in the user's published page.
    reply = ('See [[file:a" onmouseover="alert(1).html][the plan]], [[file:b"onclick="alert(2).png]],'
             ' file:c"onclick="alert(3), <doi:10" onclick="alert(4)">, help:x"onclick="alert(5)'
             ' and [[https://orgmode.org][Org]].')  # fmt: skip
    html = await exported_html(daemon, roam_dir, fake_ollama, reply)
    assert not html.startswith("failed") and '<a href="https://orgmode.org">Org</a>' in html, html
    tags = re.findall(r"<(?:a|img)\b[^>]*>", html)
    assert tags and not [tag for tag in tags if re.search(r'"\s*on\w+="', tag)], tags  # an attribute after the path


async def test_a_models_bracket_link_over_lines_is_quieted_as_one_on_a_line(daemon, roam_dir, fake_ollama):
    # Org 9.5 reads a bracket link's target and description over lines ("[[Some\nnote]]" is
    # a link to "Some note"): quieted only on one line, these made every export fail, and
    # the '"' one put an attribute into an HTML export.
    reply = ('See [[Some\nnote]], [[wiki:Bread\nrolls][the wiki]], [[id:36fb47dd\n-e96a][this]],'
             ' [[file:a"\nonclick="alert(1)"][z]] and [[https://orgmode.org][Org\'s\nsite]].')  # fmt: skip
    _, said = await answered_and_read(daemon, roam_dir, fake_ollama, reply, "* Talk\n** Where?\n")
    assert 'LINKS ("https")' in said, said
    assert "EXPORTED " in said and "failed" not in said, said


async def test_a_models_angle_link_over_lines_with_a_quote_adds_no_attribute_to_an_html_export(daemon, roam_dir, fake_ollama):
    # Org 9.5 reads an angle link's path over lines (org-link-angle-re): a '"' on its
    # second line ended the href of the HTML export, and the rest became an attribute.
    reply = 'See <file:a\n "onmouseover="alert(1)> and <https://orgmode.org/x\n "onclick="alert(2)> now.'
    html = await exported_html(daemon, roam_dir, fake_ollama, reply)
    assert not html.startswith("failed") and "alert(1)" in html and "alert(2)" in html, html  # the words stay
    tags = re.findall(r"<(?:a|img)\b[^>]*>", html)
    assert not [tag for tag in tags if re.search(r'"\s*on\w+=', tag)], tags  # no attribute after the path


async def test_a_models_file_links_that_open_outside_emacs_are_words(daemon, roam_dir, fake_ollama):
    # Org hands a file+sys: link's file to the system's program, and a file: one's whose
    # name Emacs has no mode for ("open" on macOS runs an executable); a remote name has
    # TRAMP connect to the model's host. A link to a local .org file stays one.
    reply = ("See [[file+sys:/tmp/notes.org][my notes]], file:/Applications/Calculator.app/Contents/MacOS/Calculator,"
             " <file:/tmp/x.org\n /../run>, [[file:/ssh:evil.example:/x.org][x]], [[file:bread.org][bread]]"
             " and [[https://orgmode.org][Org]].")  # fmt: skip
    _, said = await answered_and_read(daemon, roam_dir, fake_ollama, reply, "* Talk\n** Where?\n")
    assert 'LINKS ("file" "https")' in said, said


async def test_a_models_math_gives_no_element_of_an_html_export_a_link_or_a_style(daemon, roam_dir, fake_ollama):
    # Org 9.5's HTML export hands math to MathJax 2.7 as written: its \mmlToken takes an
    # href (a javascript: link in the user's published page), \style, \cssId and \class
    # set the page's styles (an overlay over it).
    reply = ('Math: $\\mmlToken{mi}[href="javascript:alert(1)"]{x}$, \\(\\style{position:fixed}{y}\\),'
             ' $\\cssId{a}{b} \\class{c}{d} \\href{javascript:alert(2)}{e}$ and $\\frac{1}{2}$.')  # fmt: skip
    html = await exported_html(daemon, roam_dir, fake_ollama, reply)
    assert "\\(\\frac{1}{2}\\)" in html, html  # math, for MathJax
    assert not re.findall(r"\\(?:mmlToken|style|cssId|class|href)\b", html), html


async def test_a_models_link_is_no_script_in_an_html_export(daemon, roam_dir, fake_ollama):
    # Org 9.5's HTML export writes the path of a relative file: link (a .org one as .html),
    # and of a help:, eww:, bibtex:, w3m: link (info:'s manual, then ".html") into the href
    # as it is: "javascript:alert(1);x.org" was a link that ran a script.
    reply = ("See [[file:javascript:alert(1);x.org][the plan]], file:javascript:alert(2);y.org,"
             " <file:JavaScript:alert(3);z.org>, [[file:data:text/html,x.org][d]],"
             " [[file:java&#115;cript&#58;x.org][e]],"
             " [[help:javascript:alert(4)//][f]], help:javascript:alert(5)//, info:javascript:alert(6)//,"
             " [[eww:\njavascript:alert(7)][g]], <bibtex:javascript:alert(8)>, [[w3m:&#x6A;avascript:alert(9)][h]],"
             " [[info:org#Links][Org's manual]] and [[file:notes/x.org][mine]].")  # fmt: skip
    page = await exported_html(daemon, roam_dir, fake_ollama, reply)
    # Each href as a browser reads it: its references resolved, blanks before it and every
    # tab and line break dropped.
    hrefs = re.findall(r'href="([^"]*)"', page)
    hrefs = [re.sub(r"^[\x00-\x20]+|[\t\n\r]", "", unescape(href)) for href in hrefs]
    assert "notes/x.html" in hrefs and any(h.endswith("/org.html#Links") for h in hrefs), hrefs  # a note, a manual
    assert not [href for href in hrefs if re.match(r"(?i)[a-z][-+.a-z0-9]*:", href) and not href.startswith("https:")], hrefs
