;;; arcology-oracle-results.el --- A result of the daemon as the lists show it -*- lexical-binding: t -*-

;; Copyright (C) 2026 The arcology-oracle authors

;; Author: The arcology-oracle authors
;; URL: https://github.com/arcology-oracle/arcology-oracle

;; This file is not part of GNU Emacs.

;; This program is free software; you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;; This program is distributed in the hope that it will be useful,
;; but WITHOUT ANY WARRANTY; without even the implied warranty of
;; MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
;; GNU General Public License for more details.

;; You should have received a copy of the GNU General Public License
;; along with this program.  If not, see <https://www.gnu.org/licenses/>.

;;; Commentary:

;; A result of the daemon (a similar note, a search result, a source)
;; turned into the text the lists show: its outline path, its snippet
;; as plain text, its score and its marks (linked, links here, weak...),
;; and the relevance cut between the results.

;;; Code:

(require 'seq)
(require 'subr-x)
(require 'org)
(require 'arcology-oracle)

(defun arcology-oracle--title-text (title)
  "Return the Org TITLE (a heading's, or a #+title) as a reader sees it.
Links show their description; statistics cookies (\"[1/3]\",
\"[50%]\") go, as Org leaves them out of a heading's search string
and its links' descriptions; blanks in a row are one space."
  (string-trim
   (replace-regexp-in-string
    "[ \t]+" " "
    (replace-regexp-in-string "\\[[0-9]*\\(?:%\\|/[0-9]*\\)\\]" " "
                              (org-link-display-format (or title ""))))))

(defun arcology-oracle--path (result)
  "Return the outline path of RESULT as a list of strings, its note's title first.
The title, the ancestors (`olp') and the heading, each once: the
daemon's `olp' may start with the title, and a note's own heading
is its title."
  (let ((out nil))
    (dolist (part (append (list (alist-get 'title result))
                          (alist-get 'olp result)
                          (list (alist-get 'heading result))))
      (when (stringp part)
        (let ((part (arcology-oracle--title-text part)))
          (unless (or (string-empty-p part) (equal part (car out)))
            (push part out)))))
    (nreverse out)))

(defun arcology-oracle--outline (result)
  "Return the outline path of RESULT, its note's title first, as one string."
  (mapconcat #'identity (arcology-oracle--path result) " › "))

(defun arcology-oracle--result-start (result &optional same)
  "Return where RESULT is listed first in the current buffer, or nil.
The first character whose `arcology-oracle-result' is RESULT itself
\(`eq'; or, with SAME, one for which (SAME RESULT THAT) is non-nil):
a list laid out again from the same results shows the same entry
there, however its lines were cut."
  (let ((pos (point-min)))
    (while (and pos (not (funcall (or same #'eq) result (get-text-property pos 'arcology-oracle-result))))
      (setq pos (next-single-property-change pos 'arcology-oracle-result)))
    pos))

(defun arcology-oracle--one-line (text width)
  "Return TEXT on one line, cut to WIDTH columns."
  (truncate-string-to-width
   (string-trim (replace-regexp-in-string "[ \t\n\r]+" " " (or text ""))) width nil nil "…"))

(defun arcology-oracle--wrapped (text width indent)
  "Return TEXT's words filled into lines of WIDTH columns.
Each line after the first starts with INDENT.  A word wider than
WIDTH is cut (see `arcology-oracle--one-line').  For a result's
marks in a narrow window: \"linked both ways\" cut to \"linked both
wa…\" lost the words that say which way."
  (let ((lines nil) (line ""))
    (dolist (word (split-string text "[ \t\n\r]+" t))
      (let ((longer (if (string-empty-p line) word (concat line " " word))))
        (if (or (<= (string-width longer) width) (string-empty-p line))
            (setq line longer)
          (push line lines)
          (setq line word))))
    (mapconcat (lambda (l) (arcology-oracle--one-line l width))
               (nreverse (cons line lines)) (concat "\n" indent))))

(defun arcology-oracle--plain-text (text)
  "Return the snippet TEXT as a reader sees it, on one line.
The daemon's snippet is one line: the note's lines it has read and
joined (its answers/snippets.py: drawers, keyword lines, table
rules and the like left out, a table row's cells joined by \" · \",
Org's escape comma dropped), never read as Org lines again, so one
that starts with \"#+\" or \"* \" is text as written (a captured
\",#+title: ...\" line, a list item).  A TEXT of several lines is
Org text: drawers (:PROPERTIES:, :LOGBOOK: ...), planning lines,
keyword and block delimiter lines, table rules and comments are
dropped, table rows keep their cells.  Both ways links show their
description and emphasis markers (=code=, ~code~, *bold*, /italic/,
+strike+, _under_) go."
  (let* ((text (or text ""))
         (lines (unless (string-match-p "\n" text) (list text)))
         (drawer nil))
    (dolist (line (unless lines (split-string text "\n")))
      (cond
       (drawer (when (string-match-p "\\`[ \t]*:END:[ \t]*\\'" line) (setq drawer nil)))
       ((string-match-p "\\`[ \t]*:[[:alnum:]_-]+:[ \t]*\\'" line) (setq drawer t))
       ((string-match-p "\\`[ \t]*\\(#\\+\\|# \\|#\\'\\|\\(SCHEDULED\\|DEADLINE\\|CLOSED\\):\\)" line))
       ((string-match-p "\\`[ \t]*|[-+]" line))
       ((string-match-p "\\`[ \t]*|" line)
        (push (mapconcat #'string-trim
                         (split-string (string-trim line "[ \t|]+" "[ \t|]+") "|") " · ")
              lines))
       ((string-match-p "\\`\\*+ " line))
       (t (push line lines))))
    (let ((text (org-link-display-format (mapconcat #'identity (nreverse lines) " "))))
      (setq text (replace-regexp-in-string
                  "\\(?:^\\|[[:space:](\"'{]\\)\\([=~*/+_]\\)\\([^ \t\n]\\(?:.*?[^ \t\n]\\)??\\)\\1\\(?:[[:space:]).,;:!?'\"}]\\|$\\)"
                  (lambda (m) (replace-regexp-in-string
                               (regexp-quote (concat (match-string 1 m) (match-string 2 m) (match-string 1 m)))
                               (match-string 2 m) m t t))
                  text t t))
      (string-trim (replace-regexp-in-string "[ \t\r]+" " " text)))))

(defun arcology-oracle--insert-message (text &optional indent face)
  "Insert TEXT in FACE (default `shadow'), filled to the width of its window.
INDENT, a string, starts every line.  Messages (an error from the
daemon, say) and titles are read whole, not cut at the window's edge."
  (let ((start (point))
        (width (if-let ((window (get-buffer-window (current-buffer) t)))
                   (window-width window)
                 60)))
    (insert (propertize (concat (or indent "") text) 'face (or face 'shadow)) "\n")
    ;; As narrow as the window: a side window on a 60-column terminal is 18
    ;; columns, and a line filled wider is cut at its edge.
    (let ((fill-column (max 8 (- width 2)))
          (fill-prefix indent))
      (fill-region start (point)))))

(defun arcology-oracle--linked-p (result buffer)
  "Return non-nil when the note of RESULT is already linked from BUFFER.
The daemon says so with `linked'; else BUFFER's text is searched
for an id: link to the note or to its heading.  BUFFER may also be
a list of the IDs linked."
  (or (eq (alist-get 'linked result) t)
      (and (consp buffer)
           (or (member (alist-get 'node_id result) buffer)
               (member (alist-get 'heading_id result) buffer)))
      (and (bufferp buffer) (buffer-live-p buffer)
           (with-current-buffer buffer
             (save-excursion
               (save-restriction
                 (widen)
                 (seq-some (lambda (id)
                             (and (stringp id)
                                  (progn (goto-char (point-min))
                                         (search-forward (concat "[[id:" id "]") nil t))))
                           (list (alist-get 'node_id result) (alist-get 'heading_id result)))))))))

(defun arcology-oracle--result-tags (result buffer &optional backlinks)
  "Return the tags of RESULT as one string (may be empty), with a leading space.
\"linked\" when BUFFER links to its note already (see
`arcology-oracle--linked-p'), \"links here\" when its node is among
BACKLINKS (the IDs of the nodes linking to the note being read) or
the daemon says it links here,
\"linked both ways\" for both, \"this note\" for a heading of the note
being read, \"oracle\" or \"conversation\" for answers and turns,
\"weak\" for a low score (see `arcology-oracle-weak-score')."
  (let* ((out (arcology-oracle--linked-p result buffer))
         (in (or (member (alist-get 'node_id result) backlinks)
                 ;; The daemon's reading: org-roam credits a link in a heading's
                 ;; drawer (a capture's :SOURCE:) to the file, not to that heading.
                 (eq (alist-get 'links_here result) t)))
         (tags (delq nil (list (cond ((and out in) "linked both ways")
                                     (out "linked")
                                     (in "links here"))
                               (when (eq (alist-get 'same_file result) t) "this note")
                               (pcase (alist-get 'role result)
                                 ("oracle" "oracle")
                                 ("conversation" "conversation"))
                               (when (arcology-oracle--weak-p result) "weak")))))
    (if tags (concat " " (propertize (mapconcat #'identity tags " ") 'face 'arcology-oracle-tag)) "")))

(declare-function org-roam-db-query "ext:org-roam-db" (sql &rest args))

(defun arcology-oracle--roam-backlinks (id)
  "Return the IDs of the nodes linking to node ID, from org-roam's database.
Nil when org-roam is not loaded; never signals."
  (when (and id (fboundp 'org-roam-db-query))
    (ignore-errors
      (mapcar #'car (org-roam-db-query
                     [:select :distinct [source] :from links
                      :where (= dest $s1) :and (= type "id")]
                     id)))))

(defun arcology-oracle--shown-score (result)
  "Return the number to show for RESULT in its list, or nil when none.
Its `relevance', the daemon's score made to agree with the list's
order (never above the one before it), else its `score'."
  (let ((relevance (alist-get 'relevance result)))
    (if (numberp relevance) relevance
      (let ((score (alist-get 'score result))) (and (numberp score) score)))))

(defun arcology-oracle--score-text (result)
  "Return RESULT's relevance as text, \"0.97\", or \"    \" when it has none.
Dimmed below the daemon's cut-off and when weak (see
`arcology-oracle--weak-p').  Its help (\\[display-local-help] on it, or
the mouse) tells the pair's own score when it differs."
  (let ((shown (arcology-oracle--shown-score result))
        (score (alist-get 'score result)))
    (propertize (if shown (format "%.2f" shown) "    ")
                'help-echo (when (and shown (numberp score) (/= shown score))
                             (format "Relevance %.3f in this list; the score of this pair alone %.3f" shown score))
                'face (if (or (eq (alist-get 'below_cutoff result) t) (arcology-oracle--weak-p result))
                          'shadow
                        'arcology-oracle-score))))

(defun arcology-oracle--score-help (text score)
  "Give TEXT's first (length SCORE) characters SCORE's help, before TEXT's own.
TEXT, an entry starting with SCORE (from `arcology-oracle--score-text'),
has a help-echo of its own over the whole of it; return TEXT."
  (let ((own (get-text-property 0 'help-echo score))
        (entry (get-text-property 0 'help-echo text)))
    (when own
      (put-text-property 0 (length score) 'help-echo (if entry (concat own "\n" entry) own) text)))
  text)

(defun arcology-oracle--weak-p (result)
  "Return non-nil when RESULT is shown under `arcology-oracle-weak-score'.
Only for a calibrated score (see `arcology-oracle--results-of') above
the daemon's cut-off: the rest are folded away as it is."
  (let ((shown (arcology-oracle--shown-score result)))
    (and shown
         (< shown arcology-oracle-weak-score)
         (not (eq (alist-get 'below_cutoff result) t))
         (not (alist-get 'keyword-score result)))))

(defun arcology-oracle--results-of (answer key)
  "Return the results under KEY of the daemon's ANSWER.
In keyword mode (no vectors yet) their scores are the keyword match's,
not a chance of a link: each is marked `keyword-score', never weak."
  (let ((results (alist-get key answer)))
    (if (equal (alist-get 'mode answer) "keyword")
        (mapcar (lambda (r) (cons '(keyword-score . t) r)) results)
      results)))

(defun arcology-oracle--split-cutoff (results)
  "Return (ABOVE . BELOW): RESULTS above the daemon's relevance cut, and below it."
  (let (above below)
    (dolist (r results)
      (if (eq (alist-get 'below_cutoff r) t) (push r below) (push r above)))
    (cons (nreverse above) (nreverse below))))

(defun arcology-oracle--below-cut-listed-p ()
  "Return non-nil when the list in the current buffer has a relevance cut line.
That line (text property `arcology-oracle-more') is there only when
some of the daemon's results are below its cut."
  (text-property-any (point-min) (point-max) 'arcology-oracle-more t))

(defun arcology-oracle--to-first-entry ()
  "Put point on the list's first entry when above it, here and in its windows.
A list shown with point on its header answered \\`i', \\`x' or
\\`RET' with \"No note at point\" until \\`n' was pressed.  Point
on the relevance cut line stays there, for \\`+'; a list without
entries (a message) keeps point where it is.  Run in the list's
buffer once it is filled."
  (when-let ((first (if (get-text-property (point-min) 'arcology-oracle-entry)
                        (point-min)
                      (next-single-property-change (point-min) 'arcology-oracle-entry))))
    (let ((above (lambda (pos) (and (< pos first) (not (get-text-property pos 'arcology-oracle-more))))))
      (when (funcall above (point)) (goto-char first))
      (dolist (window (get-buffer-window-list (current-buffer) nil t))
        (when (funcall above (window-point window)) (set-window-point window first))))))

(defun arcology-oracle--nothing-below-cut ()
  "Say that no result of the list is below the relevance cut.
The key showing them in a list without any showed or folded
nothing, and said nothing."
  (arcology-oracle--message "Nothing below the relevance cut"))

(defun arcology-oracle--snippet (result)
  "Return RESULT's snippet as plain one-line text, or nil when it is empty.
A snippet that only repeats the heading or the title is empty too."
  (let ((text (arcology-oracle--plain-text (alist-get 'snippet result))))
    (unless (or (string-empty-p text)
                (member (downcase (string-trim-right text "[ .…]+"))
                        (mapcar (lambda (s) (downcase (org-link-display-format s)))
                                (delq nil (list (alist-get 'heading result)
                                                (alist-get 'title result))))))
      text)))

(provide 'arcology-oracle-results)

;;; arcology-oracle-results.el ends here
