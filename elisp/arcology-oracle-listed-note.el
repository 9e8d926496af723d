;;; arcology-oracle-listed-note.el --- The note a list of arcology-oracle is about -*- lexical-binding: t -*-

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

;; The note the similar notes or the link suggestions are about: saving
;; it and undoing in it from the list, and running a command there, at
;; the place it was read (in the org-roam buffer, at the node shown).

;;; Code:

(require 'arcology-oracle)
(require 'org)

(defvar arcology-oracle--similar-source)
(defvar arcology-oracle--links-source)
(defvar org-roam-buffer-current-node)
(declare-function org-roam-node-file "ext:org-roam-node" (node) t)
(declare-function org-roam-node-id "ext:org-roam-node" (node) t)
(declare-function org-roam-node-title "ext:org-roam-node" (node) t)

(defun arcology-oracle--listed-note ()
  "Return the note buffer the list in the current buffer is about, or nil.
In the similar notes and the link suggestions, a question is about
that note, at the place it was read: the list's own text (scores,
titles) says nothing.  In the org-roam buffer, the note it shows
\(visited now when no buffer visits it): its backlinks are no note."
  (let ((source (cond ((derived-mode-p 'arcology-oracle-similar-buffer-mode)
                       (bound-and-true-p arcology-oracle--similar-source))
                      ((derived-mode-p 'arcology-oracle-links-mode)
                       (bound-and-true-p arcology-oracle--links-source))
                      ((derived-mode-p 'org-roam-mode)
                       (when-let ((node (bound-and-true-p org-roam-buffer-current-node))
                                  (file (org-roam-node-file node)))
                         (and (file-exists-p file) (find-file-noselect file)))))))
    (and (buffer-live-p source) source)))

(defun arcology-oracle-save-listed-note ()
  "Save the note the list in the current buffer is about.
\\[save-buffer] in the similar notes or the link suggestions: point is
there after \\[arcology-oracle-suggest-links], whose \"save the note\"
made \\[save-buffer] ask where to save the list itself."
  (interactive)
  (let ((note (or (arcology-oracle--listed-note)
                  (arcology-oracle--user-error "This list is about no note open in Emacs"))))
    (with-current-buffer note (save-buffer))
    (arcology-oracle--message "Saved %s: %s asks again once the daemon has read it"
                              (buffer-name note)
                              (substitute-command-keys (if (derived-mode-p 'arcology-oracle-links-mode)
                                                           "\\[arcology-oracle-links-refresh]"
                                                         "\\[arcology-oracle-similar-refresh]")))))

(defun arcology-oracle-undo-in-listed-note (&optional arg)
  "Undo the last change of the note the list in the current buffer is about.
\\[undo] in the similar notes or the link suggestions, right after
\\[arcology-oracle-insert-link] there, takes the link out again, as in the
note: the list itself is read-only, and said \"Buffer is read-only\".
Repeated, it undoes further, as \\[undo] does in the note; ARG (the
prefix argument) is undo's too."
  (interactive "P")
  (arcology-oracle--undo-in-listed-note #'undo arg))

(defun arcology-oracle-undo-redo-in-listed-note (&optional arg)
  "Redo the last undone change of the note the list is about.
\[undo-redo] in the similar notes or the link suggestions, as
`arcology-oracle-undo-in-listed-note' undoes there; ARG as
`undo-redo''s."
  (interactive "p")
  (arcology-oracle--undo-in-listed-note #'undo-redo arg))

(defun arcology-oracle-undo-only-in-listed-note (&optional arg)
  "Undo, without redoing, the last change of the note the list is about.
`undo-only' in the similar notes or the link suggestions, as
`arcology-oracle-undo-in-listed-note' undoes there; ARG as
`undo-only''s."
  (interactive "p")
  (arcology-oracle--undo-in-listed-note #'undo-only arg))

(defun arcology-oracle--undo-in-listed-note (command arg)
  "Call COMMAND with ARG in the note the list in the current buffer is about.
In the window the note was read in last, else in its buffer.  (The
link suggestions follow the note's changes: see
`arcology-oracle--links-note-changed'.)"
  (let* ((note (or (arcology-oracle--listed-note)
                   (arcology-oracle--user-error "This list is about no note open in Emacs")))
         (window (arcology-oracle--last-window-of note)))
    (if window
        (with-selected-window window (funcall command arg))
      (with-current-buffer note (funcall command arg)))))

(defun arcology-oracle--last-window-of (buffer)
  "Return the window showing BUFFER that was used last, or nil.
With the note in two windows, the one the user read it in: the
list follows that one."
  (car (sort (get-buffer-window-list buffer nil t)
             (lambda (a b) (> (window-use-time a) (window-use-time b))))))

(defun arcology-oracle--in-listed-note (function)
  "Call FUNCTION in the note the list in the current buffer is about.
At the place the note was read (the point of its window used last);
in the org-roam buffer, at the node it shows (see
`arcology-oracle--at-shown-node'): a dedicated one
\(`org-roam-buffer-display-dedicated') stays on its node wherever the
note is read.  Return non-nil when the current buffer is such a list,
nil (FUNCTION not called) otherwise; see `arcology-oracle--listed-note'.
A list whose note was killed is refused."
  (or (arcology-oracle--at-shown-node function)
      (if-let ((note (arcology-oracle--listed-note)))
          (progn
            (with-current-buffer note
              (save-excursion
                (when-let ((window (arcology-oracle--last-window-of note)))
                  (goto-char (window-point window)))
                (funcall function)))
            t)
        (arcology-oracle--refuse-list-without-note))))

(defun arcology-oracle--at-shown-node (function)
  "Call FUNCTION in the note of the org-roam buffer, at the node shown.
That is at the node's own heading (its first line: before the first
heading for a file's node), whatever the place the note was read:
the buffer is titled by that node.  Return non-nil when called,
nil (FUNCTION not called) outside the org-roam buffer; one showing
no note is refused (see `arcology-oracle--refuse-list-without-note').
The node is found by its ID in the buffer as it is now, not at the
place org-roam read it (`org-roam-node-point', as last saved): with
unsaved lines above it, that place was in another heading, which
\[arcology-oracle-make-private] made private instead.  A node whose ID
the buffer no longer has is refused."
  (when (derived-mode-p 'org-roam-mode)
    (let ((note (or (arcology-oracle--listed-note)
                    (arcology-oracle--refuse-list-without-note)))
          (node (bound-and-true-p org-roam-buffer-current-node)))
      (with-current-buffer note
        (save-excursion
          (save-restriction
            (widen)
            (goto-char (or (org-find-property "ID" (org-roam-node-id node))
                           (arcology-oracle--user-error
                            "%s no longer holds the node %s: save it, then try again"
                            (buffer-name) (org-roam-node-title node))))
            (funcall function))))
      t)))

(defun arcology-oracle--refuse-in-list (refusal)
  "Signal a `user-error' saying REFUSAL in a list, else return nil.
In the similar notes, the link suggestions, the rejected links and
the org-roam buffer, for a command that would act on their own text
\(titles, scores, backlinks), which is no note.  The message is the
buffer's name, then REFUSAL."
  (when (derived-mode-p 'arcology-oracle-similar-buffer-mode 'arcology-oracle-links-mode
                        'arcology-oracle-rejections-mode 'org-roam-mode)
    (arcology-oracle--user-error "%s is not a note: %s" (buffer-name) refusal)))

(defun arcology-oracle--refuse-list-without-note ()
  "Signal a `user-error' in a list without a note, else return nil.
That is a list whose note was killed, or the rejected links, which
are about no one note.  The list's own text (scores, titles) is no
note to ask about.  A command that prompts calls this first: the
question typed would be refused after."
  (when (not (arcology-oracle--listed-note))
    (cond ((derived-mode-p 'arcology-oracle-rejections-mode)
           (arcology-oracle--user-error "%s lists the links you rejected, no note: ask from a note"
                                        (buffer-name)))
          ((derived-mode-p 'arcology-oracle-similar-buffer-mode 'arcology-oracle-links-mode)
           (arcology-oracle--user-error "The note this list is about is no longer open in Emacs: ask from a note"))
          ((derived-mode-p 'org-roam-mode)
           (arcology-oracle--user-error "The org-roam buffer shows no note: ask from a note")))))

(provide 'arcology-oracle-listed-note)

;;; arcology-oracle-listed-note.el ends here
