;;; arcology-oracle-converse-insert.el --- Where a conversation's answer goes in the note -*- lexical-binding: t -*-

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

;; Where the answer of `arcology-oracle-converse' goes: under the
;; conversation's heading, found again when the subtree moved while
;; the model thought, as one undoable change that moves point (and
;; the windows' points) only for a reader still in the conversation.

;;; Code:

(require 'seq)
(require 'subr-x)
(require 'org)

(defvar arcology-oracle-answer-property "ORACLE_MODEL"
  "Property marking an answer heading inserted by `arcology-oracle-converse'.
The daemon writes it (with ROLE and CREATED) into every answer.")

(defun arcology-oracle--relevel (text level)
  "Return the org TEXT with its headings shifted so the first is at LEVEL."
  (let ((lines (split-string text "\n"))
        (top nil))
    (dolist (line lines)
      (when (string-match "\\`\\(\\*+\\) " line)
        (setq top (min (or top 1000) (length (match-string 1 line))))))
    (if (not top)
        (concat (make-string level ?*) " Answer\n" text)
      (let ((shift (- level top)))
        (mapconcat (lambda (line)
                     (if (string-match "\\`\\(\\*+\\) " line)
                         (concat (make-string (+ (length (match-string 1 line)) shift) ?*)
                                 (substring line (length (match-string 1 line))))
                       line))
                   lines "\n")))))

(defun arcology-oracle--answer-text (root text model)
  "Return the answer TEXT made a child of the heading at marker ROOT.
Its headings start one level below ROOT's; MODEL is recorded when
the daemon did not (see `arcology-oracle--insert-answer')."
  (with-current-buffer (marker-buffer root)
    (save-excursion
      (save-restriction
        (widen)
        (goto-char root)
        (let ((answer (arcology-oracle--relevel text (1+ (org-outline-level)))))
          (with-temp-buffer
            (delay-mode-hooks (org-mode))
            (insert (string-trim-right answer) "\n")
            (unless (org-entry-get (point-min) arcology-oracle-answer-property)
              (org-entry-put (point-min) arcology-oracle-answer-property (or model "unknown")))
            (string-trim-right (buffer-string))))))))

;; The conversation's root is found again by a text property on its
;; heading line, not by a marker alone: a marker stays where text was
;; deleted or inserted, so a subtree moved (killed and yanked), deleted,
;; or a heading typed at the root's start left it on another heading,
;; and the answer went under a conversation it does not answer.

(defvar-local arcology-oracle--awaited-tags nil
  "The tags of this buffer's conversations awaiting an answer.")
(put 'arcology-oracle--awaited-tags 'permanent-local t)

(defun arcology-oracle--mark-conversation (pos)
  "Tag the heading line at POS as a conversation awaiting an answer.
Return the tag: a property of its own (conversations awaited at once
each find theirs).  The tag moves with the line's text (a moved
subtree keeps it) and goes with it (a deleted one loses it); it is no
change to the buffer."
  (let ((tag (make-symbol "arcology-oracle-conversation")))
    (save-excursion
      (goto-char pos)
      (with-silent-modifications
        (put-text-property (line-beginning-position) (line-end-position) tag t)))
    (push tag arcology-oracle--awaited-tags)
    tag))

(defun arcology-oracle--conversation-awaited-p (pos)
  "Return non-nil when the heading line at POS awaits an answer already."
  (save-excursion
    (goto-char pos)
    (let ((beg (line-beginning-position)) (end (line-end-position)))
      (seq-some (lambda (tag) (text-property-any beg end tag t))
                arcology-oracle--awaited-tags))))

(defun arcology-oracle--conversation-headings (buffer tag)
  "Return the positions of the headings of BUFFER with TAG on their line."
  (with-current-buffer buffer
    (save-excursion
      (save-restriction
        (widen)
        (let ((pos (point-min)) found)
          (while (setq pos (text-property-any pos (point-max) tag t))
            (goto-char pos)
            (beginning-of-line)
            (when (and (looking-at org-outline-regexp) (not (memq (point) found)))
              (push (point) found))
            (setq pos (min (point-max) (1+ (line-end-position)))))
          (nreverse found))))))

(defun arcology-oracle--unmark-conversation (buffer tag)
  "Take TAG off BUFFER's text, if BUFFER is live."
  (when (buffer-live-p buffer)
    (with-current-buffer buffer
      (setq arcology-oracle--awaited-tags (delq tag arcology-oracle--awaited-tags))
      (save-restriction
        (widen)
        (with-silent-modifications
          (remove-text-properties (point-min) (point-max) (list tag nil)))))))

(defun arcology-oracle--conversation-found (root tag)
  "Move marker ROOT to the conversation's heading tagged TAG; nil if none is sure.
That is the heading at ROOT if it holds TAG, else the only heading
holding it (a subtree moved); none when it was deleted or its line
retyped, or when copies hold it and ROOT is at none of them."
  (let ((headings (arcology-oracle--conversation-headings (marker-buffer root) tag)))
    (cond ((memq (marker-position root) headings) root)
          ((= (length headings) 1) (set-marker root (car headings))))))

(defun arcology-oracle--hides-local-variables-p (root text)
  "Return non-nil when TEXT after ROOT's subtree would hide Local Variables.
That is when the subtree ends the buffer with a Local Variables
block that Emacs would no longer find, as it reads one only in the
last 3000 characters (after the last page break) of a file."
  (with-current-buffer (marker-buffer root)
    (save-excursion
      (save-restriction
        (widen)
        (goto-char root)
        (org-end-of-subtree t t)
        (when (= (point) (point-max))
          (goto-char (point-max))
          (search-backward "\n\f" (max (- (point-max) 3000) (point-min)) 'move)
          (let ((case-fold-search t))
            (and (search-forward "Local Variables:" nil t)
                 (> (- (+ (point-max) 1 (length text)) 3000) (match-beginning 0)))))))))

(defun arcology-oracle--in-subtree-p (pos beg end)
  "Return non-nil when POS lies in the subtree from BEG to END.
END is where the next heading starts, or the end of the buffer:
point at the very end of the buffer is in a subtree that ends there."
  (and (>= pos beg) (or (< pos end) (= pos end (point-max)))))

(defun arcology-oracle--insert-answer (root text model)
  "Insert the org heading TEXT as the last child of the heading at marker ROOT.
The insertion is one undoable change.  The new heading carries
`arcology-oracle-answer-property' (MODEL when the daemon did not
set it).  Point, and each window showing the buffer, moves to it
only when it is still in the conversation's subtree: a reader who
went elsewhere in the meantime stays there, and the mark is pushed
at the answer instead.  A buffer narrowed to the conversation, or
to its last turn, is narrowed to include the answer: it goes where
the narrowed part ends, and was out of sight.  Return (POSITION .
MOVED), MOVED non-nil when point moved to the answer."
  (with-current-buffer (marker-buffer root)
    (let* ((edge (and (buffer-narrowed-p) (point-max)))
           (shown (save-restriction
                    (arcology-oracle--insert-answer-widened root text model)))
           (pos (car shown)))
      (when (and edge (nth 2 shown) (>= pos edge)
                 (save-restriction
                   (widen)
                   (string-blank-p (buffer-substring-no-properties edge pos))))
        (narrow-to-region (point-min) (nth 2 shown))
        (when (nth 1 shown)
          (goto-char pos)
          (dolist (w (get-buffer-window-list nil nil t))
            (set-window-point w pos))))
      (when (nth 2 shown) (set-marker (nth 2 shown) nil))
      (cons pos (nth 1 shown)))))

(defun arcology-oracle--insert-answer-widened (root text model)
  "Do the work of `arcology-oracle--insert-answer' in the widened buffer.
ROOT, TEXT and MODEL are as there.  Return (POSITION MOVED END):
END a marker at the end of the text inserted."
  (widen)
  (let* ((answer (arcology-oracle--answer-text root text model))
         (beg (marker-position root))
         (end (save-excursion (goto-char root) (org-end-of-subtree t t) (point)))
         (inside (arcology-oracle--in-subtree-p (point) beg end))
         ;; Each place kept advances past the answer inserted at it.
         (here (copy-marker (point) t))
         (windows (mapcar (lambda (w) (list w (copy-marker (window-point w) t)
                                            (arcology-oracle--in-subtree-p (window-point w) beg end)))
                          (get-buffer-window-list nil nil t)))
         pos stop)
    (undo-boundary)
    (let ((group (prepare-change-group)))
      (unwind-protect
          (progn
            (activate-change-group group)
            (goto-char end)
            ;; A file without a final newline keeps none: the answer
            ;; goes on a new line, and ends the file as its turn did.
            (if (bolp)
                (progn (setq pos (point)) (insert answer "\n"))
              (insert "\n")
              (setq pos (point))
              (insert answer))
            (setq stop (point-marker)))
        (accept-change-group group)
        (undo-amalgamate-change-group group)))
    (undo-boundary)
    (goto-char (if inside pos here))
    (set-marker here nil)
    (pcase-dolist (`(,w ,marker ,in) windows)
      (set-window-point w (if in pos marker))
      (set-marker marker nil))
    (unless inside (push-mark pos t))
    (list pos inside stop)))

(provide 'arcology-oracle-converse-insert)

;;; arcology-oracle-converse-insert.el ends here
