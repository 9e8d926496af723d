;;; arcology-oracle-markdown.el --- A model's markdown shown as Org in the answers -*- lexical-binding: t -*-

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

;; Models answer in markdown; the answers and summaries buffers are
;; Org.  A bullet "* item" there was a heading of its own: the answer
;; ended at it for n, p, g and RET, and its sources were filed under
;; it.  As an answer streams in, each of its lines is made Org as the
;; daemon makes a conversation's answer (its `org_safe'): "* item"
;; becomes "- item" as soon as the line starts so, "## Title" a bold
;; line, fenced code a src block; "**bold**" becomes "*bold*" and
;; `code' "~code~".  Lines inside blocks get Org's comma escape.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'arcology-oracle-answers)

(cl-defstruct (arcology-oracle--md (:constructor arcology-oracle--md-create))
  "The state of one answer being made Org: LINE, a marker at the
start of the line not finished yet (nil before the first text), and
BLOCK, the regexp of the line closing the block that line is in."
  line block)

(defconst arcology-oracle--md-star "^\\([ \t]*\\)\\(\\*+\\)\\([ \t]\\)"
  "A line starting as a markdown bullet: an Org heading if left so.")

(defconst arcology-oracle--md-fence "^\\([ \t]*\\)```[ \t]*\\([[:alnum:]_+-]*\\)[ \t]*$"
  "A markdown fence, opening (with its language) or closing.")

(defconst arcology-oracle--md-block
  "^\\([ \t]*\\)#\\+begin_\\(src\\|example\\)\\b"
  "The model's own Org block, opening.")

(defconst arcology-oracle--md-heading "^#\\{1,6\\}[ \t]+\\(.+?\\)[ \t#]*$"
  "A markdown heading: a comment line (one #) or plain text to Org.")

(defun arcology-oracle--md-insert (marker text md)
  "Insert TEXT of an answer at MARKER, its lines made Org.
MD is the answer's state.  `arcology-oracle--insert-following'
inserts it; then the lines TEXT finished are made Org, and the
line not finished yet as far as its start tells (a bullet, at
once)."
  (when (buffer-live-p (marker-buffer marker))
    (unless (arcology-oracle--md-line md)
      (setf (arcology-oracle--md-line md) (copy-marker marker)))
    (arcology-oracle--insert-following marker text)
    (arcology-oracle--md-fix marker md nil)))

(defun arcology-oracle--md-finish (marker md)
  "Make Org the last line of the answer ending at MARKER, and close its block.
MD is the answer's state (see `arcology-oracle--md-insert')."
  (when (and (arcology-oracle--md-line md) (buffer-live-p (marker-buffer marker)))
    (arcology-oracle--md-fix marker md t)
    (when (arcology-oracle--md-block md)
      (arcology-oracle--insert-following
       marker (concat (if (eq (char-before marker) ?\n) "" "\n")
                      (cdr (arcology-oracle--md-block md))))
      (setf (arcology-oracle--md-block md) nil))
    (set-marker (arcology-oracle--md-line md) nil)
    (setf (arcology-oracle--md-line md) nil)))

(defun arcology-oracle--md-fix (end md final)
  "Make Org the lines of MD's answer from its line marker to the marker END.
FINAL non-nil: the last line is finished too."
  (with-current-buffer (marker-buffer end)
    (arcology-oracle--answers-write
     (lambda ()
       (save-excursion
         (goto-char (arcology-oracle--md-line md))
         (while (< (point) end)
           (let ((eol (save-excursion (and (search-forward "\n" end t) (1- (point))))))
             (cond ((or eol final)
                    (arcology-oracle--md-line-org md end)
                    (goto-char (if eol (1+ (line-end-position)) end))
                    (set-marker (arcology-oracle--md-line md) (point)))
                   (t
                    (unless (arcology-oracle--md-block md)
                      (when (looking-at arcology-oracle--md-star)
                        (arcology-oracle--md-bullet)))
                    (goto-char end))))))))))

(defun arcology-oracle--md-bullet ()
  "Replace the bullet the last match of `arcology-oracle--md-star' found.
Each star past the first indents it by two columns, as the daemon does."
  (replace-match (concat (match-string 1)
                         (make-string (* 2 (1- (length (match-string 2)))) ?\s)
                         "-" (match-string 3))
                 t t))

(defun arcology-oracle--md-line-org (md end)
  "Make Org the finished line at point; MD is the answer's state.
The answer ends at END."
  (let ((block (arcology-oracle--md-block md)))
    (cond
     (block
      (cond ((looking-at (car block))
             (replace-match (concat (match-string 1) (cdr block)) t t)
             (setf (arcology-oracle--md-block md) nil))
            ((looking-at "[ \t]*,*\\(?:\\*\\|#\\+\\)")
             (insert ","))))
     ((looking-at arcology-oracle--md-fence)
      (let ((indent (match-string 1)))
        (replace-match (string-trim-right (concat indent "#+begin_src " (match-string 2))) t t)
        (setf (arcology-oracle--md-block md)
              (cons "^\\([ \t]*\\)```[ \t]*$" (concat indent "#+end_src")))))
     ((looking-at arcology-oracle--md-block)
      (setf (arcology-oracle--md-block md)
            (cons (format "^\\([ \t]*\\)#\\+end_%s[ \t]*$" (downcase (match-string 2)))
                  (concat (match-string 1) "#+end_" (downcase (match-string 2))))))
     (t
      (cond ((looking-at arcology-oracle--md-star) (arcology-oracle--md-bullet))
            ((looking-at arcology-oracle--md-heading)
             (replace-match (concat "*" (string-trim (match-string 1) "[* \t]+" "[* \t]+") "*") t t)))
      (arcology-oracle--md-inline end)))))

(defun arcology-oracle--md-inline (end)
  "Make Org the bold and code spans from point to the end of its line, or END."
  (let ((start (point)))
    (while (re-search-forward "\\*\\*\\([^* \t\n]\\(?:[^*\n]*[^* \t\n]\\)?\\)\\*\\*"
                              (min (line-end-position) end) t)
      (replace-match "*\\1*" t))
    (goto-char start)
    (while (re-search-forward "`\\([^`~ \t\n]\\(?:[^`~\n]*[^`~ \t\n]\\)?\\)`"
                              (min (line-end-position) end) t)
      (replace-match "~\\1~" t))))

(provide 'arcology-oracle-markdown)

;;; arcology-oracle-markdown.el ends here
