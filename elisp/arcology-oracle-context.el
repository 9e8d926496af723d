;;; arcology-oracle-context.el --- The note and heading at point, described for a request -*- lexical-binding: t -*-

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

;; The note and heading at point as a request to the daemon describes
;; them: the file it visits (or why it has none), its title, the
;; heading's outline path and text, and the org-roam node around point
;; (whether it is private, whether it is an oracle's answer).

;;; Code:

(require 'subr-x)
(require 'org)
(require 'arcology-oracle)
(require 'arcology-oracle-privacy)

(declare-function arcology-oracle--entries-noun "arcology-oracle-answers" ())

(defun arcology-oracle--visited-file ()
  "Return the file the current buffer visits, or nil.
An indirect buffer (\\[clone-indirect-buffer], to read a subtree
alone) visits its base buffer's file: it shows that file's text."
  (or buffer-file-name
      (and (buffer-base-buffer) (buffer-file-name (buffer-base-buffer)))))

;; A buffer whose file is gone but was read from it, or saved to it, knows the file's
;; time; a new file never saved knows none (`visited-file-modtime' is -1 there, 0 with no
;; file at all).
(defun arcology-oracle--missing-file-error (file unsaved)
  "Signal why FILE, which the current buffer visits, is not on disk.
A buffer read from FILE or saved to it was moved or deleted behind
Emacs's back (`mv' in a shell): saving it would write the old file
again, beside the moved one and with its IDs, so the error says to
visit the note where it is now.  A buffer never saved gets UNSAVED,
a format string given FILE's name."
  (let ((name (file-name-nondirectory file)))
    (if (with-current-buffer (or (buffer-base-buffer) (current-buffer))
          (memql (visited-file-modtime) '(0 -1)))
        (arcology-oracle--user-error unsaved name)
      (arcology-oracle--user-error
       "%s is no longer on disk (moved or deleted): visit the note where it is now" name))))

(defun arcology-oracle--answers-no-note ()
  "Return why the current buffer is no note, in the answers or summaries.
The message says which key goes back to the note an answer is about;
nil in any other buffer.  A command about a note refuses there."
  (when (derived-mode-p 'arcology-oracle-answers-mode)
    (format "%s holds %s, not a note: %s on one goes back to its note"
            (buffer-name) (arcology-oracle--entries-noun)
            (substitute-command-keys "\\<arcology-oracle-answers-keys-mode-map>\\[arcology-oracle-answers-follow]"))))

(defun arcology-oracle--refuse-without-file (why)
  "Signal a `user-error' when the current buffer visits no file.
Such a buffer (\\[switch-to-buffer] to a new name) was never read by
the daemon, whatever :ID: it holds: the message asks to save it among
the notes, then says WHY (\"suggestions are for a note as saved\").
The answers and summaries buffers are no notes to save: see
`arcology-oracle--answers-no-note'."
  (unless (arcology-oracle--visited-file)
    (arcology-oracle--user-error
     "%s" (or (arcology-oracle--answers-no-note)
              (format "Save %s among your notes first (%s): it has no file, and %s"
                      (buffer-name) (substitute-command-keys "\\[write-file]") why)))))

(defun arcology-oracle--file-title ()
  "Return the title of the current buffer's note, as the daemon titles a file.
That is its #+title, else its file's name (an indirect buffer's is its
base buffer's), else the buffer's name."
  (save-restriction
    (widen)
    (or (cadr (assoc "TITLE" (org-collect-keywords '("TITLE"))))
        (when-let ((file (arcology-oracle--visited-file))) (file-name-base file))
        (buffer-name))))

(defun arcology-oracle--heading-start ()
  "Return the start of the heading at point, or `point-min' before the first."
  (save-excursion
    (if (org-before-first-heading-p)
        (point-min)
      (org-back-to-heading t)
      (point))))

(defun arcology-oracle--heading-context ()
  "Describe the heading at point as a plist.
Keys: :start (position), :line (1-based, ignoring narrowing),
:title, :olp (ancestor titles), :text (the heading and its body,
without sub-headings), :node-id (the ID of the nearest
enclosing org-roam node, possibly a file-level one), :own-id (the
heading's own ID, or the file's before the first heading) and :node-ids
\(the IDs of every enclosing node, the file's included)."
  (save-excursion
    (save-restriction
      (widen)
      (let* ((start (arcology-oracle--heading-start))
             ;; Before the first heading: the file's own part.  Not a file's
             ;; first line that is a heading, with point in its body.
             (before-first (save-excursion (goto-char start) (not (org-at-heading-p))))
             (title (if before-first
                        (arcology-oracle--file-title)
                      (goto-char start)
                      (org-get-heading t t t t)))
             (olp (unless before-first
                    (goto-char start)
                    (org-get-outline-path)))
             (end (progn (goto-char start)
                         (if (org-at-heading-p) (end-of-line) (goto-char (point-min)))
                         (if (re-search-forward org-outline-regexp-bol nil t)
                             (match-beginning 0)
                           (point-max)))))
        (goto-char start)
        (list :start start
              :line (line-number-at-pos start t)
              :title (substring-no-properties (or title ""))
              :olp (mapcar #'substring-no-properties olp)
              :text (buffer-substring-no-properties start (min end (+ start 8000)))
              :node-id (org-entry-get nil "ID" t)
              :own-id (org-entry-get nil "ID")
              :node-ids (arcology-oracle--enclosing-ids))))))

(defun arcology-oracle--enclosing-ids ()
  "Return the IDs of the heading at point, its ancestors and its file."
  (save-excursion
    (let ((ids (list (org-entry-get (point-min) "ID"))))
      (unless (org-before-first-heading-p)
        (org-back-to-heading t)
        (push (org-entry-get nil "ID") ids)
        (while (org-up-heading-safe)
          (push (org-entry-get nil "ID") ids)))
      (delq nil ids))))

(defvar arcology-oracle-answer-property)

(defun arcology-oracle--answer-heading-p ()
  "Return non-nil when point is under one of the oracle's answers."
  (unless (org-before-first-heading-p)
    (or (org-entry-get nil arcology-oracle-answer-property)
        (arcology-oracle--oracle-role-p (org-entry-get nil "ROLE")))))

(defun arcology-oracle--oracle-role-p (role)
  "Return non-nil when ROLE, a :ROLE: value or nil, names the assistant."
  (member (downcase (string-trim (or role "")))
          '("oracle" "assistant" "ai" "model" "bot" "answer")))

(defun arcology-oracle--node-is-answer-p ()
  "Return non-nil when the org-roam node around point is an oracle's answer.
The node of `arcology-oracle--node-at-point': its heading, where
`arcology-oracle--answer-heading-p' says so (an answer kept by
\\[arcology-oracle-memorize] from the answers buffer is its own node);
the file's node, where the file's drawer has an assistant's :ROLE:."
  (save-excursion
    (save-restriction
      (widen)
      (unless (org-before-first-heading-p)
        (org-back-to-heading t)
        (while (and (not (org-entry-get nil "ID")) (org-up-heading-safe))))
      (if (and (not (org-before-first-heading-p)) (org-entry-get nil "ID"))
          (arcology-oracle--answer-heading-p)
        ;; The file's node: its drawer says whose words it holds.
        (arcology-oracle--oracle-role-p (org-entry-get (point-min) "ROLE"))))))

(defun arcology-oracle--node-heading ()
  "Return the start of the nearest heading with an ID at point or above it.
Nil when there is none: the org-roam node around point is then the
file's, if it has an ID."
  (save-excursion
    (save-restriction
      (widen)
      (unless (org-before-first-heading-p)
        (org-back-to-heading t)
        (let ((found nil))
          (while (and (not (setq found (and (org-entry-get nil "ID") (point))))
                      (org-up-heading-safe)))
          found)))))

(defun arcology-oracle--node-at-point ()
  "Return (ID . TITLE) of the org-roam node around point, or nil.
The nearest heading with an ID, at point or above it, else the
file's node (titled by #+title, else the file's name)."
  (save-excursion
    (save-restriction
      (widen)
      (if-let ((at (arcology-oracle--node-heading)))
          (progn (goto-char at)
                 (cons (org-entry-get nil "ID") (org-get-heading t t t t)))
        (when-let ((id (org-entry-get (point-min) "ID")))
          (cons id (arcology-oracle--file-title)))))))

(defun arcology-oracle--node-private-p ()
  "Return non-nil when the org-roam node around point is private.
The node is the one `arcology-oracle--node-at-point' finds; it is
private where its heading (the file's start, for the file's node)
is, by `arcology-oracle--private-here-p'.  The daemon never
indexes it: asking about it could only fail."
  (save-excursion
    (save-restriction
      (widen)
      (arcology-oracle--private-here-p (or (arcology-oracle--node-heading) (point-min))))))

(defun arcology-oracle--node-bounds (node)
  "Return (START . END) of the org-roam node NODE in the current buffer.
The subtree of the heading whose ID is NODE (the headings under it,
nodes or not, are part of it, as for the daemon); the whole buffer
for the file's node, and when no heading has that ID any more.  Run
widened."
  (save-excursion
    (goto-char (point-min))
    (let ((drawer (concat "^[ \t]*:ID:[ \t]+" (regexp-quote (or node "")) "[ \t]*$"))
          bounds)
      (while (and node (not bounds) (re-search-forward drawer nil t))
        (if (org-before-first-heading-p)
            (setq bounds (cons (point-min) (point-max)))
          (save-excursion
            (org-back-to-heading t)
            (when (equal (org-entry-get nil "ID") node)
              (setq bounds (cons (point) (progn (org-end-of-subtree t t) (point))))))))
      (or bounds (cons (point-min) (point-max))))))

(defun arcology-oracle--node-links (&optional node)
  "Return the IDs the org-roam node NODE links to in this buffer's text.
NODE defaults to the node around point (see
`arcology-oracle--node-at-point'); its text is as
`arcology-oracle--node-bounds' says, the daemon's reading of a
node's links: a link elsewhere in the file is not the node's."
  (save-excursion
    (save-restriction
      (widen)
      (pcase-let ((`(,start . ,end) (arcology-oracle--node-bounds
                                    (or node (car (arcology-oracle--node-at-point))))))
        (goto-char start)
        (let (ids)
          (while (re-search-forward "\\[\\[id:\\([^]\n]+\\)\\]" end t)
            (push (match-string-no-properties 1) ids))
          (nreverse ids))))))

(provide 'arcology-oracle-context)

;;; arcology-oracle-context.el ends here
