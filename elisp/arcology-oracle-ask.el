;;; arcology-oracle-ask.el --- Ask questions about notes with arcology-oracle -*- lexical-binding: t -*-

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

;; `arcology-oracle-ask' and `arcology-oracle-ask-region' ask the
;; language model, through the daemon, about the current buffer (what
;; of it is sent: its excerpt, its private parts left out): the answer
;; streams into an org buffer followed by its sources as id: links
;; \(arcology-oracle-answer-stream.el).

;;; Code:

(require 'subr-x)
(require 'org)
(require 'arcology-oracle-notes)
(require 'arcology-oracle-answers)
(require 'arcology-oracle-answer-stream)

(defvar arcology-oracle--ask-history nil
  "Questions asked with `arcology-oracle-ask'.")

(defun arcology-oracle--buffer-excerpt (beg end)
  "Return the text between BEG and END, cut around point when too long.
Its private parts are left out: each part (the text before the first
heading, then each heading to the next) that
`arcology-oracle--private-here-p' says is private where it starts.
Cut out of the buffer, an excerpt starting inside a private subtree
would no longer say that it is private."
  (let* ((max arcology-oracle-ask-max-chars)
         (start (if (<= (- end beg) max) beg (max beg (min (- (point) (/ max 2)) (- end max)))))
         (stop (min end (+ start max)))
         (parts nil))
    (save-excursion
      (goto-char start)
      (while (< (point) stop)
        (let* ((from (point))
               (to (min stop (progn (outline-next-heading) (point)))))
          (unless (arcology-oracle--private-here-p from)
            (push (buffer-substring-no-properties from to) parts))
          (goto-char (max to (1+ from))))))
    (apply #'concat (nreverse parts))))

(defun arcology-oracle--saved-file ()
  "Return the file the current buffer visits, if saved; else nil.
The daemon reads files from disk, so an unsaved buffer is sent as
text only."
  (let ((file (arcology-oracle--visited-file)))
    (and file (not (buffer-modified-p)) file)))

(defconst arcology-oracle--private-ask-prompt
  "Ask (this part is private: the question alone is sent): "
  "The prompt of a question asked in a private part, which sends nothing of it.")

;;;###autoload
(defun arcology-oracle-ask (question &optional beg end)
  "Ask QUESTION about the current buffer, grounded in your notes.
A narrowed buffer is asked about the part it shows.  With BEG and
END, ask about that part of the buffer only.  Nothing
of the buffer is sent when point (or BEG) is in a private part (see
`arcology-oracle--private-here-p'): the question alone.  A buffer
visiting a note the daemon never reads (a hidden folder: see
`arcology-oracle--unread-refusal') is refused, sending nothing.  The
answer streams into the `arcology-oracle-answer-buffer-name'
buffer, followed by its sources as id: links.  Returns at once.
There, \\<arcology-oracle-answers-keys-mode-map>\\[arcology-oracle-answers-again] \
on the answer asks QUESTION again about this
buffer (its text as it is then) and \\[arcology-oracle-answers-follow] \
comes back here."
  (interactive
   (list (arcology-oracle--read-string (let ((note (or (arcology-oracle--listed-note)
                                                       (arcology-oracle--refuse-list-without-note))))
                                         (cond (note (format "Ask about %s: " (buffer-name note)))
                                               ((arcology-oracle--private-here-p) arcology-oracle--private-ask-prompt)
                                               (t "Ask about this buffer: ")))
                                       'arcology-oracle--ask-history)))
  (when (string-blank-p question) (arcology-oracle--user-error "Empty question"))
  (unless (and (not beg)
               (arcology-oracle--in-listed-note (lambda () (arcology-oracle-ask question))))
    (arcology-oracle--ask-here question beg end)))

(defun arcology-oracle--ask-here (question beg end)
  "Ask QUESTION about the current buffer (BEG to END), as `arcology-oracle-ask'."
  (let* ((from (or beg (point-min)))  ; a narrowed buffer: the part shown
         (to (or end (point-max)))
         (text (unless (arcology-oracle--private-here-p (or beg (point)))
                 ;; Cut out of the buffer, a private part no longer says it is private.
                 (save-restriction
                   (widen)
                   (arcology-oracle--buffer-excerpt from to))))
         (file (arcology-oracle--saved-file))
         (line (line-number-at-pos nil t))
         ;; Saved or not: where the daemon looks for the setup files the text names.
         (visiting (arcology-oracle--visited-file))
         (origin (arcology-oracle--origin))
         (beg (and beg (copy-marker beg)))
         (end (and end (copy-marker end t)))
         (entry (list :origin origin)))
    (setq entry (plist-put entry :again
                           (lambda ()
                             (arcology-oracle--in-origin
                              origin (lambda () (arcology-oracle-ask question beg end))
                              (lambda () (arcology-oracle--ask-send question text file line visiting entry))))))
    (arcology-oracle--ask-send question text file line visiting entry)))

(defun arcology-oracle--ask-send (question text file line visiting entry)
  "Ask QUESTION about TEXT (from FILE, saved, at LINE) into a new answer.
VISITING is the file the buffer visits, saved or not: the daemon
looks for the setup files TEXT names beside it.  ENTRY is the
answer's record (see `arcology-oracle--answer-start')."
  (let ((marker (arcology-oracle--answer-start question nil nil entry)))
    (arcology-oracle--answer-with-roam-dir
     (lambda (roam-dir)
       (if-let ((refused (arcology-oracle--unread-refusal visiting roam-dir)))
           (arcology-oracle--answer-failed marker refused)
         (let ((rel (arcology-oracle--relative-file file roam-dir))
               (visiting-rel (arcology-oracle--relative-file visiting roam-dir)))
           (arcology-oracle--stream-answer
            marker "/ask"
            `((question . ,question)
              (buffer . ,text)
              ,@(when rel `((file . ,rel) (line . ,line)))
              ,@(when visiting-rel `((visiting . ,visiting-rel)))
              ,@(when arcology-oracle-model `((model . ,arcology-oracle-model)))
              (stream . t)
              ;; A `found' line at once, while the model loads (a failing one: an `error' line).
              (progress . t))))))
     (lambda ()
       (arcology-oracle--insert-following marker "[Stopped]\n")
       (set-marker marker nil))
     (lambda (message) (arcology-oracle--answer-failed marker message)))))

;;;###autoload
(defun arcology-oracle-ask-region (question beg end)
  "Ask QUESTION about the region from BEG to END, grounded in your notes."
  (interactive
   (if (use-region-p)
       (list (arcology-oracle--read-string (if (arcology-oracle--private-here-p (region-beginning))
                                               arcology-oracle--private-ask-prompt
                                             "Ask about the region: ")
                                           'arcology-oracle--ask-history)
             (region-beginning) (region-end))
     (arcology-oracle--user-error "No active region")))
  (arcology-oracle-ask question beg end))

(provide 'arcology-oracle-ask)

;;; arcology-oracle-ask.el ends here
