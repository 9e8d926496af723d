"""Where a suggested link may go (notes/paragraphs.py): a link written at the end of each
paragraph it finds is a link for Org, and every other element of the heading stays what
it was. Read back with batch Emacs's Org."""

from __future__ import annotations

import re
import subprocess

from arcology_oracle.notes.paragraphs import paragraphs
from tests.emacs_batch import emacs, emacs_env

LINK = "[[id:0a0b][Kiln firing schedule]]"
HEADING = "\n".join([
    "* Glazes",
    "Glazes melt when the kiln reaches the peak of the schedule:",
    r"\begin{equation}",
    r"Q = m c \Delta T",
    r"\end{equation}",
    "The cone tells the heat work done.",
    ": $ kiln-log --last",
    ": peak 1222",
    "Cones bend at their rating.",
    "-----",
    "Next firing on Saturday.",
    r"\begin{itemize}",
    "unclosed: this stays prose, as Org reads it,",
    ":\tas does a colon and a tab",
    "#+begin_example",
    "Firing log:",
    "#+end_example",
])  # fmt: skip

ELEMENTS = r"""
(progn
  (require 'org)
  (require 'org-id)
  (with-temp-buffer
    (insert-file-contents (getenv "ORG_FILE"))
    (org-mode)
    (let ((tree (org-element-parse-buffer)))
      (message "ELEMENTS %s" (mapconcat (lambda (e) (format "%s" (or (org-element-property :type e) (org-element-type e))))
                                        (org-element-map tree '(TYPES) #'identity)
                                        " "))
      (message "LINKS %d" (length (org-element-map tree 'link
                                    (lambda (l) (and (equal (org-element-property :type l) "id") l)))))
      (message "PARAGRAPHS %s"
               (mapconcat (lambda (p) (format "%d-%d" (line-number-at-pos (org-element-property :contents-begin p))
                                              (line-number-at-pos (1- (org-element-property :contents-end p)))))
                          (org-element-map tree 'paragraph #'identity nil nil '(SKIPPED))
                          " ")))))
"""
NOT_PROSE = "latex-environment fixed-width horizontal-rule example-block"


def org_elements(path, types: str = NOT_PROSE, skipped: str = "example-block") -> tuple[str, int, str]:
    """Org's reading of ``path``: the elements of ``types`` (their type, a table's own
    type: ``org`` or ``table.el``), the ID links, and each paragraph's lines
    (``start-end``) but those inside the ``skipped`` elements."""
    probe = ELEMENTS.replace("TYPES", types).replace("SKIPPED", skipped)
    run = subprocess.run([emacs(), "-Q", "--batch", "--eval", probe], env=emacs_env(path.parent, ORG_FILE=str(path)),
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    elements = re.search(r"^ELEMENTS (.*)$", run.stderr, re.M)
    links = re.search(r"^LINKS (\d+)$", run.stderr, re.M)
    paragraphs = re.search(r"^PARAGRAPHS (.*)$", run.stderr, re.M)
    assert elements and links and paragraphs, run.stderr
    return elements[1], int(links[1]), paragraphs[1]


def test_a_link_at_each_paragraphs_end_is_a_link_and_breaks_no_element(tmp_path):
    lines = HEADING.split("\n")
    found = paragraphs(lines, 1, len(lines))
    assert [(p.start_line, p.end_line) for p in found] == [(2, 2), (6, 6), (9, 9), (11, 14)]
    path = tmp_path / "kiln.org"
    path.write_text(HEADING + "\n")
    ours = " ".join(f"{p.start_line}-{p.end_line}" for p in found)
    assert org_elements(path) == ("latex-environment fixed-width horizontal-rule example-block", 0, ours)
    for p in found:
        lines[p.end_line - 1] += " " + LINK
    path.write_text("\n".join(lines) + "\n")
    assert org_elements(path) == ("latex-environment fixed-width horizontal-rule example-block", len(found), ours)


def test_latex_environments_end_where_org_ends_them(tmp_path):
    # On the line they begin, after text on a later line, in any letter case.
    text = "\n".join([
        "* Heat", "Prose one.", "", r"\begin{equation} E = mc^2 \end{equation}", "", "Prose two.",
        r"\BEGIN{align}", "x = 1", r"y = 2 \end{Align}", "Prose three.",
    ])  # fmt: skip
    lines = text.split("\n")
    ours = " ".join(f"{p.start_line}-{p.end_line}" for p in paragraphs(lines, 1, len(lines)))
    path = tmp_path / "heat.org"
    path.write_text(text + "\n")
    assert org_elements(path) == ("latex-environment latex-environment", 0, ours)
    assert ours == "2-2 6-6 10-10"


def test_clock_lines_diary_sexps_table_el_and_dynamic_blocks_are_no_prose(tmp_path):
    # A link after a table.el border made it an Org table and a paragraph; one after a
    # CLOCK line or a diary sexp changed them; one in a dynamic block is lost when Org
    # writes the block again.
    text = "\n".join([
        "* Kiln log", "Here is a grid:", "+---+---+", "| a | b |", "+---+---+", "Glaze notes.",
        "CLOCK: [2024-03-05 Tue 09:00]--[2024-03-05 Tue 10:00] =>  1:00", "After the clock.",
        "%%(diary-anniversary 3 5 2020) First firing", "After the sexp.",
        "#+BEGIN: clocktable :scope file", "Generated words.", "#+END:", "Last words.",
    ])  # fmt: skip
    lines = text.split("\n")
    found = paragraphs(lines, 1, len(lines))
    ours = " ".join(f"{p.start_line}-{p.end_line}" for p in found)
    assert ours == "2-2 6-6 8-8 10-10 14-14"
    path = tmp_path / "log.org"
    path.write_text(text + "\n")
    kinds = ("table clock diary-sexp dynamic-block", "dynamic-block drawer")
    assert org_elements(path, *kinds) == ("table.el clock diary-sexp dynamic-block", 0, ours)
    for p in found:
        lines[p.end_line - 1] += " " + LINK
    path.write_text("\n".join(lines) + "\n")
    assert org_elements(path, *kinds) == ("table.el clock diary-sexp dynamic-block", len(found), ours)
