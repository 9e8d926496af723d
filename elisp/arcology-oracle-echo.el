;;; arcology-oracle-echo.el --- The package's messages, in whole words in the echo area -*- lexical-binding: t -*-

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

;; A message longer than the echo area is wide was broken by Emacs at
;; its last column, mid-word ("connection ref\" then "used").  The
;; package's messages are shown on lines broken between words instead,
;; and kept whole, on one line, in *Messages*.

;;; Code:

(require 'subr-x)

(defun arcology-oracle--echo-width ()
  "Return the columns a line of the echo area has before Emacs wraps it.
One less than its window: a terminal gives the last column to the
continuation glyph."
  (max 20 (1- (window-width (minibuffer-window)))))

(defun arcology-oracle--echo-fill (text width &optional first)
  "Return TEXT broken into lines of at most WIDTH columns, between words.
Lines TEXT has stay; a word wider than WIDTH (a long path) has a line
of its own, which Emacs wraps.  No word is cut, no text is dropped:
the part of a message the user must act on stays in it.  FIRST, when
given, is the columns TEXT's first line has (it follows other text on
the screen, a prompt); a first word wider than that begins the second
line, after an empty first one."
  (let ((room (or first width)))
    (mapconcat
     (lambda (paragraph)
       (let (lines line)
         (dolist (word (split-string paragraph " +" t))
           (when (and (null line) (null lines) (< room width) (> (string-width word) room))
             (push "" lines))
           (if (and line (> (+ (string-width line) 1 (string-width word))
                            (if lines width room)))
               (progn (push line lines) (setq line word))
             (setq line (if line (concat line " " word) word))))
         (setq room width)
         (string-join (nreverse (if line (cons line lines) lines)) "\n")))
     (split-string text "\n")
     "\n")))

(defun arcology-oracle--echo-start ()
  "Return the columns before a message on the echo area's first line.
0, unless a minibuffer is active: Emacs then shows a message (see
`set-minibuffer-message') and a command's error there (see
`minibuffer-error-function') after the prompt and what was typed, as
\" [MESSAGE]\", and broke one too long for the line mid-word.  Then
the column where MESSAGE begins, after the bracket."
  (let ((mini (active-minibuffer-window)))
    (if (not mini)
        0
      (with-current-buffer (window-buffer mini)
        (save-excursion
          (goto-char (point-max))
          (+ 2 (% (current-column) (arcology-oracle--echo-width))))))))

(defun arcology-oracle--echo-lines (text)
  "Return TEXT broken between words for the echo area, or nil.
Nil when TEXT fits on the line where it begins (see
`arcology-oracle--echo-start').  Otherwise TEXT broken between words
\(see `arcology-oracle--echo-fill'), its first line in the columns left
after the prompt when a minibuffer is active (with one for Emacs's
closing bracket on every line), in no more lines than the echo area
can have (see `arcology-oracle--echo-shorten')."
  (let* ((start (arcology-oracle--echo-start))
         (width (- (arcology-oracle--echo-width) (if (> start 0) 1 0))))
    (unless (<= (+ start (string-width text)) width)
      (arcology-oracle--echo-shorten (arcology-oracle--echo-fill text width (max 0 (- width start)))
                                     width (arcology-oracle--echo-height)))))

(defun arcology-oracle--echo-height ()
  "Return the lines the echo area may grow to, as Emacs sizes it.
`max-mini-window-height' (a fraction of the frame's lines, or lines)
when `resize-mini-windows' lets it grow, else its height now.  A
message taller than that showed its last lines only: its start, what
it is about, was above the echo area."
  (let ((mini (minibuffer-window)))
    (max 1 (cond ((not resize-mini-windows) (window-height mini))
                 ((floatp max-mini-window-height)
                  (floor (* max-mini-window-height
                            (+ (window-total-height (frame-root-window mini))
                               (window-total-height mini)))))
                 (t max-mini-window-height)))))

(defun arcology-oracle--echo-shorten (text width height)
  "Return TEXT, broken into lines of WIDTH columns, in HEIGHT lines.
TEXT is as `arcology-oracle--echo-fill' breaks it; TEXT whose lines
fit is returned as it is.  Otherwise its first HEIGHT - 1 lines, and
a last one of \"… \" and as many of its last words as fit in WIDTH:
what the message is about and what to do stay; the middle is in
*Messages* (\\[view-echo-area-messages])."
  (let ((lines (split-string text "\n")))
    (if (or (<= (length lines) height) (< height 2))
        text
      (let ((words (reverse (split-string (string-join (nthcdr (1- height) lines) " ")
                                          " +" t)))
            (kept nil)
            (used 1))
        (while (and words (<= (+ used 1 (string-width (car words))) width))
          (setq used (+ used 1 (string-width (car words))))
          (push (pop words) kept))
        (string-join (append (butlast lines (- (length lines) (1- height)))
                             (list (string-join (cons "…" kept) " ")))
                     "\n")))))

(defun arcology-oracle--message (format &rest args)
  "Show FORMAT with ARGS in the echo area, in whole words, as `message' does.
A message wider than the echo area (see `arcology-oracle--echo-width'),
or than the room a prompt leaves, is shown as
`arcology-oracle--echo-lines' breaks it; it is logged in *Messages* as
one line, as `message' logs it (\"[2 times]\" when repeated).  Return
the message."
  (let* ((text (apply #'format-message format args))
         (lines (and (not noninteractive) (arcology-oracle--echo-lines text))))
    (if (not lines)
        (message "%s" text)
      (arcology-oracle--log-message text)
      (let ((message-log-max nil))
        (message "%s" lines)))
    text))

(defun arcology-oracle--log-message (text)
  "Add TEXT to *Messages* as `message' would, without showing it.
As a line of its own, or \"[N times]\" after the same line; nothing
when `message-log-max' is nil."
  (let ((inhibit-message t))
    (message "%s" text)))

(provide 'arcology-oracle-echo)

;;; arcology-oracle-echo.el ends here
