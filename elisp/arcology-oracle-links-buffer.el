;;; arcology-oracle-links-buffer.el --- The link suggestions buffer of arcology-oracle -*- lexical-binding: t -*-

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

;; The buffer listing link suggestions: its mode and keys, and
;; rendering the suggestions (those whose link is already in the note
;; left out, those below the relevance cut folded) for its window's
;; width.  Asking for them is arcology-oracle-links.el's.

;;; Code:

(require 'seq)
(require 'subr-x)
(require 'org)
(require 'arcology-oracle-notes)

(declare-function arcology-oracle-similar-next "arcology-oracle-similar-buffer" ())
(declare-function arcology-oracle-links-reject "arcology-oracle-rejections" ())
(declare-function arcology-oracle-links-unreject "arcology-oracle-rejections" ())
(declare-function arcology-oracle-link-rejections "arcology-oracle-rejections" (&optional all))
(declare-function arcology-oracle-similar-previous "arcology-oracle-similar-buffer" ())
(declare-function arcology-oracle-links-insert "arcology-oracle-links" ())
(declare-function arcology-oracle-links-refresh "arcology-oracle-links" ())

(defvar arcology-oracle-links-buffer-name "*arcology-oracle links*"
  "Name of the buffer listing link suggestions.")

(defvar-local arcology-oracle--links-source nil
  "In the suggestions buffer: the buffer of the note the suggestions are for.")

(defvar-local arcology-oracle--links-node nil
  "In the suggestions buffer: the ID of the note the suggestions are for.")

(defvar-local arcology-oracle--links-title nil
  "In the suggestions buffer: the title of the note they are for, as Org writes it.")

(defvar-local arcology-oracle--links-own nil
  "In the suggestions buffer: the IDs of the nodes enclosing the note's heading.
The note itself, its ancestors and its file: a link to any of them
would point at the note being read, so none is offered.")

(defvar arcology-oracle-links-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'arcology-oracle-visit-result)
    (define-key map [mouse-2] #'arcology-oracle-visit-result)
    (define-key map (kbd "i") #'arcology-oracle-links-insert)
    (define-key map (kbd "x") #'arcology-oracle-links-reject)
    (define-key map (kbd "u") #'arcology-oracle-links-unreject)
    (define-key map (kbd "R") #'arcology-oracle-link-rejections)
    (define-key map (kbd "+") #'arcology-oracle-links-toggle-tail)
    (define-key map (kbd "g") #'arcology-oracle-links-refresh)
    (define-key map [remap save-buffer] #'arcology-oracle-save-listed-note)
    (define-key map [remap undo] #'arcology-oracle-undo-in-listed-note)
    (define-key map [remap undo-redo] #'arcology-oracle-undo-redo-in-listed-note)
    (define-key map [remap undo-only] #'arcology-oracle-undo-only-in-listed-note)
    (define-key map (kbd "n") #'arcology-oracle-similar-next)
    (define-key map (kbd "p") #'arcology-oracle-similar-previous)
    (define-key map (kbd "TAB") #'arcology-oracle-similar-next)
    (define-key map (kbd "<backtab>") #'arcology-oracle-similar-previous)
    map)
  "Keymap of the link suggestions buffer.")

(define-derived-mode arcology-oracle-links-mode special-mode "Links"
  "Major mode of the buffer of link suggestions for a note.
Each suggestion can be visited, inserted into its paragraph of the
note, or rejected for good; the list can be asked for again.

\\{arcology-oracle-links-mode-map}"
  (setq-local truncate-lines t)
  (setq-local revert-buffer-function (lambda (&rest _) (arcology-oracle-links-refresh)))
  (add-hook 'window-size-change-functions #'arcology-oracle--links-resized nil t))

(defvar-local arcology-oracle--links-shown nil
  "In the suggestions buffer: (WIDTH . SUGGESTIONS), what it shows.
Laid out for WIDTH columns; SUGGESTIONS as
`arcology-oracle--links-render' takes them.")

(defvar-local arcology-oracle--links-offered nil
  "In the suggestions buffer: the IDs of the suggestions it lists.
As `arcology-oracle--links-offered' returned them when they were laid out.")

(defun arcology-oracle--links-offered (source suggestions)
  "Return the IDs of the SUGGESTIONS for the note of buffer SOURCE it lacks.
Those the suggestions buffer lists (folded or not); nil when
SUGGESTIONS is a message."
  (unless (stringp suggestions)
    (mapcar (lambda (s) (alist-get 'node_id s))
            (arcology-oracle--links-not-in source (arcology-oracle--links-not-own suggestions)))))

(defvar arcology-oracle--links-follow-timer nil
  "The timer of `arcology-oracle--links-follow', once a change asked for it.")

(defun arcology-oracle--links-note-changed (&rest _)
  "Have the suggestions follow their note, which changed in this buffer.
On the note's `after-change-functions': a suggestion's link typed,
pasted or taken out (`undo' in the note's own window, not only in the
list) takes it out of the list or offers it again, once the command
is over and without asking the daemon.  The changes of one command
are looked at once."
  (when-let ((list (get-buffer arcology-oracle-links-buffer-name)))
    (when (and (eq (current-buffer) (buffer-local-value 'arcology-oracle--links-source list))
               (not arcology-oracle--links-follow-timer))
      (setq arcology-oracle--links-follow-timer (run-at-time 0 nil #'arcology-oracle--links-follow)))))

(defun arcology-oracle--links-follow ()
  "Render the suggestions again when the ones their note lacks changed.
See `arcology-oracle--links-note-changed'."
  (setq arcology-oracle--links-follow-timer nil)
  (arcology-oracle--guard
    (when-let ((list (get-buffer arcology-oracle-links-buffer-name)))
      (with-current-buffer list
        (unless (equal arcology-oracle--links-offered
                       (arcology-oracle--links-offered arcology-oracle--links-source
                                                       (cdr arcology-oracle--links-shown)))
          (arcology-oracle--links-render-again))))))

(defun arcology-oracle--links-resized (window)
  "Lay the suggestions out again when WINDOW, showing them, changed its width.
Their lines are cut to the window they were made for: a narrower
one cut them again at its edge with a $."
  (with-current-buffer (window-buffer window)
    (when (and arcology-oracle--links-shown
               (eq window (get-buffer-window (current-buffer) t))
               (not (eql (car arcology-oracle--links-shown) (arcology-oracle--links-width))))
      (arcology-oracle--guard (arcology-oracle--links-render-again)))))

(defun arcology-oracle--links-render-again ()
  "Render the suggestions of the current buffer again, as last received.
Laid out for its window as it is now, without asking the daemon; those
whose link the note has now are left out, and one whose link was
taken out (undone) is offered again.  The window keeps its start."
  (when arcology-oracle--links-shown
    (let* ((window (get-buffer-window (current-buffer) t))
           (start (and window (window-start window))))
      (arcology-oracle--links-render arcology-oracle--links-source arcology-oracle--links-node
                                     (arcology-oracle--links-title) (cdr arcology-oracle--links-shown))
      (when window
        (set-window-point window (point))
        (set-window-start window (min start (point-max)) t)))))

(defun arcology-oracle--links-width ()
  "Return the columns a line of the suggestions buffer may take.
Its window's width less one (80 when it is not shown): a longer line
was cut by Emacs at the edge with a $, where the similar notes cut
theirs with an ellipsis."
  (max 16 (1- (or (when-let ((w (get-buffer-window arcology-oracle-links-buffer-name t)))
                    (window-width w))
                  80))))

(defun arcology-oracle--format-suggestion (suggestion &optional width)
  "Return the text of one link SUGGESTION of the daemon.
Each line is cut to WIDTH columns (default the buffer's window's, see
`arcology-oracle--links-width') with an ellipsis; the title is cut
so that its marks stay in view."
  (let* ((width (or width (arcology-oracle--links-width)))
         (title (org-link-display-format (or (alist-get 'title suggestion) "?")))
         (at (alist-get 'heading suggestion))
         (paragraph (alist-get 'paragraph suggestion))
         (score (arcology-oracle--score-text suggestion))
         (marks (string-join (delq nil (list (and (equal (alist-get 'role suggestion) "conversation")
                                                  "conversation")
                                             (and (arcology-oracle--weak-p suggestion) "weak")))
                             " "))
         (room (- width (string-width score) 2 (if (string-empty-p marks) 0 (1+ (string-width marks)))))
         (first (concat score "  "
                        (propertize (arcology-oracle--one-line title (max 10 room))
                                    'face 'arcology-oracle-title)
                        (if (string-empty-p marks)
                            ""
                          (concat " " (propertize marks 'face 'arcology-oracle-tag)))))
         (text (concat
                first "\n"
                (propertize (concat "  " (arcology-oracle--one-line
                                          (format "in %s, line %d"
                                                  (org-link-display-format (or (alist-get 'heading at) ""))
                                                  (or (alist-get 'end_line paragraph) (alist-get 'line at) 1))
                                          (- width 2))
                                    "\n")
                            'face 'arcology-oracle-olp)
                (when paragraph
                  (mapconcat (lambda (line)
                               (concat "  > " (propertize (arcology-oracle--one-line
                                                           (org-link-display-format line) (- width 4))
                                                          'face 'arcology-oracle-snippet)
                                       "\n"))
                             (seq-take (split-string (alist-get 'text paragraph) "\n") 3)
                             "")))))
    (add-text-properties 0 (length first) '(arcology-oracle-entry t) text)
    (add-text-properties 0 (length text)
                         `(arcology-oracle-result ,suggestion mouse-face highlight
                                                  help-echo "RET: visit, i: insert the link, x: reject")
                         text)
    (arcology-oracle--score-help text score)))

(defvar-local arcology-oracle--links-show-tail nil
  "In the suggestions buffer: non-nil shows those below the relevance cut.")

(defvar-local arcology-oracle--links-last nil
  "In the suggestions buffer: the daemon's last list, to render it again.")

(defun arcology-oracle-links-toggle-tail ()
  "Show or fold the suggestions below the daemon's relevance cut.
With none below it, say so and change nothing."
  (interactive)
  (if (not (arcology-oracle--below-cut-listed-p))
      (arcology-oracle--nothing-below-cut)
    (setq arcology-oracle--links-show-tail (not arcology-oracle--links-show-tail))
    (arcology-oracle--links-render arcology-oracle--links-source arcology-oracle--links-node
                                   (arcology-oracle--links-title) arcology-oracle--links-last)))

(defun arcology-oracle--links-render (source node title suggestions)
  "Fill the suggestions buffer for NODE titled TITLE of buffer SOURCE.
SUGGESTIONS is the daemon's list, or a string to show instead.  Those
below the daemon's relevance cut (`below_cutoff', asked with
all=true) are folded behind one line."
  (with-current-buffer (get-buffer-create arcology-oracle-links-buffer-name)
    (unless (derived-mode-p 'arcology-oracle-links-mode) (arcology-oracle-links-mode))
    (let ((inhibit-read-only t)
          (line (line-number-at-pos)))
      (setq arcology-oracle--links-source source
            arcology-oracle--links-node node
            arcology-oracle--links-title title)
      (unless (stringp suggestions) (setq arcology-oracle--links-last suggestions))
      (setq arcology-oracle--links-shown (cons (arcology-oracle--links-width) suggestions))
      (erase-buffer)
      ;; Filled to the window: a long title was cut at its edge.
      (arcology-oracle--insert-message (concat "Links to add to: " (org-link-display-format (or title "")))
                                       nil 'bold)
      (insert "\n")
      (when (buffer-live-p source)
        (with-current-buffer source
          (add-hook 'after-change-functions #'arcology-oracle--links-note-changed nil t)))
      (setq arcology-oracle--links-offered (arcology-oracle--links-offered source suggestions))
      (cond ((stringp suggestions) (arcology-oracle--insert-message suggestions))
            ((null (setq suggestions (arcology-oracle--links-not-in
                                      source (arcology-oracle--links-not-own suggestions))))
             (insert (propertize "No suggestions." 'face 'shadow) "\n"))
            (t (pcase-let ((`(,above . ,below) (arcology-oracle--split-cutoff suggestions)))
                 (if above
                     (dolist (s above) (insert (arcology-oracle--format-suggestion s) "\n"))
                   (insert (propertize "No suggestion is related enough." 'face 'shadow) "\n\n"))
                 (when below
                   (insert (propertize
                            (substitute-command-keys
                             (format (if arcology-oracle--links-show-tail
                                         "— %d below relevance, \\<arcology-oracle-links-mode-map>\\[arcology-oracle-links-toggle-tail] to fold —"
                                       "— %d more below relevance, \\<arcology-oracle-links-mode-map>\\[arcology-oracle-links-toggle-tail] to show —")
                                     (length below)))
                            'face 'shadow 'arcology-oracle-more t)
                           "\n\n")
                   (when arcology-oracle--links-show-tail
                     (dolist (s below) (insert (arcology-oracle--format-suggestion s) "\n")))))))
      (goto-char (point-min))
      (forward-line (1- line))
      (arcology-oracle--to-first-entry)
      (set-buffer-modified-p nil))))

(defun arcology-oracle--links-not-own (suggestions)
  "Return the SUGGESTIONS that are not the note itself or a node enclosing it.
See `arcology-oracle--links-own'; run in the suggestions buffer."
  (seq-remove (lambda (s) (member (alist-get 'node_id s) arcology-oracle--links-own))
              suggestions))

(defun arcology-oracle--links-not-in (source suggestions)
  "Return the SUGGESTIONS whose link is not yet in the note of buffer SOURCE.
The note is the node the suggestions are for (see
`arcology-oracle--node-bounds'), as the daemon counts a node's links:
a link elsewhere in the file does not count.  The daemon reads the
saved file: a link inserted since, saved or not, is found here, and
undoing it offers the suggestion again."
  (if (not (buffer-live-p source))
      suggestions
    (let ((node arcology-oracle--links-node))
      (with-current-buffer source
        (save-excursion
          (save-restriction
            (widen)
            (pcase-let ((`(,start . ,end) (arcology-oracle--node-bounds node)))
              (seq-remove (lambda (s)
                            (when-let ((id (alist-get 'node_id s)))
                              (goto-char start)
                              (search-forward (concat "[[id:" id "]") end t)))
                          suggestions))))))))

(defun arcology-oracle--links-title ()
  "Return the title of the note the suggestions buffer is about, as shown."
  (and arcology-oracle--links-title (org-link-display-format arcology-oracle--links-title)))

(provide 'arcology-oracle-links-buffer)

;;; arcology-oracle-links-buffer.el ends here
