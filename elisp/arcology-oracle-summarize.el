;;; arcology-oracle-summarize.el --- Summarize the note at point with arcology-oracle -*- lexical-binding: t -*-

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

;; `arcology-oracle-summarize' summarizes the org-roam node at point
;; (or answers a question about it alone): the summary streams into its
;; own org buffer, as an answer does, followed by its sources.

;;; Code:

(require 'subr-x)
(require 'org)
(require 'arcology-oracle-notes)
(require 'arcology-oracle-answers)
(require 'arcology-oracle-answer-stream)
(require 'arcology-oracle-ask)

;;;###autoload
(defun arcology-oracle-summarize (&optional question)
  "Summarize the org-roam node at point, or its file.
The node is the nearest heading with an ID, at point or above it,
else the file's node; without one, the whole file, when it is among
the daemon's notes.  The summary's heading names what was
summarized.  With a prefix argument, read a QUESTION to focus the
summary on.  The summary streams into the
`arcology-oracle-summary-buffer-name' buffer, followed by its
sources; earlier summaries stay below it, newest first, each saying
when and with which model it was made, and whether the daemon had
it cached.  Returns at once.  There,
\\<arcology-oracle-answers-keys-mode-map>\\[arcology-oracle-answers-again] \
on a summary summarizes the same heading again and
\\[arcology-oracle-answers-follow] goes back to it.

The daemon summarizes notes as they are saved: a buffer with no
file, a file never saved, or one without a node at point that has
unsaved edits, is refused \(save it first), as are a buffer that is
not in Org mode and a node that is one of the oracle's answers, and
a private node (see `arcology-oracle--private-here-p'), which the
daemon never reads.
Nothing refused is added to the summaries."
  (interactive
   (list (when (and current-prefix-arg (not (arcology-oracle--refuse-list-without-note)))
           (arcology-oracle--read-string "Focus the summary on: " 'arcology-oracle--ask-history))))
  (unless (arcology-oracle--in-listed-note (lambda () (arcology-oracle-summarize question)))
    (arcology-oracle--summarize-here question)))

(defun arcology-oracle--summarize-here (question)
  "Summarize the node at point (on QUESTION), as `arcology-oracle-summarize'."
  (unless (derived-mode-p 'org-mode)
    (arcology-oracle--user-error "Summaries need an Org buffer"))
  (let* ((node (arcology-oracle--node-at-point))
         (id (car node))
         (file (arcology-oracle--visited-file))
         (title (arcology-oracle--title-text (or (cdr node) (arcology-oracle--file-title))))
         (question (and question (not (string-blank-p question)) question))
         (origin nil)
         (entry nil))
    (cond
     ((and file (not (file-exists-p file)))
      (arcology-oracle--missing-file-error
       file "Save %s first: the daemon reads the notes saved, and it is not saved yet"))
     ((and file (not id) (buffer-modified-p))
      (arcology-oracle--user-error
       "Save %s first: with no org-roam node at point, the daemon summarizes the file as saved"
       (file-name-nondirectory file)))
     ((not file)
      (arcology-oracle--refuse-without-file "the daemon summarizes notes as saved"))
     ((arcology-oracle--node-private-p)
      (arcology-oracle--user-error "%s is private: the daemon never reads it, nothing is summarized" title))
     ((and id (arcology-oracle--node-is-answer-p))
      (arcology-oracle--user-error "%s is the oracle's own answer, not your notes: nothing to summarize" title)))
    (setq origin (arcology-oracle--origin)
          entry (list :origin origin))
    (setq entry (plist-put entry :again
                           (lambda ()
                             (arcology-oracle--in-origin
                              origin (lambda () (arcology-oracle-summarize question))
                              (lambda () (arcology-oracle--summarize-send title question id file entry))))))
    (when (buffer-modified-p)  ; a node: summarized as saved, which may not be as shown
      (arcology-oracle--message "arcology-oracle: %s is summarized as saved: save %s to include your edits"
                                title (file-name-nondirectory file)))
    (arcology-oracle--summarize-send title question id file entry)))

(defun arcology-oracle--summarize-send (title question id file entry)
  "Summarize node ID (else FILE, saved), titled TITLE, into a new summary.
QUESTION, when non-nil, is its focus; ENTRY the summary's record
\(see `arcology-oracle--answer-start').  Without ID, or with
a FILE not under the roam directory as known now, the daemon's is
needed first (without ID, it must be known): a FILE outside it is
refused with a message, and the summaries buffer gets no entry for
it, nor for a daemon that cannot be reached then."
  (cl-flet ((send (what)
              (arcology-oracle--stream-answer
               (arcology-oracle--answer-start
                (concat "Summary of " title (if question (format " (%s)" question) ""))
                (arcology-oracle--answers-buffer arcology-oracle-summary-buffer-name) t entry)
               "/summarize"
               `(,what
                 ,@(when question `((question . ,question)))
                 ,@(when arcology-oracle-model `((model . ,arcology-oracle-model)))
                 (stream . t)))))
    (if (and id (or (not file)
                    ;; One the daemon never reads (a hidden folder, its exclude_globs: known
                    ;; once it was asked) is refused below.
                    (when-let ((rel (and (assoc (arcology-oracle--base-url) arcology-oracle--server-roam-dirs)
                                         (arcology-oracle--relative-file file (arcology-oracle--roam-dir)))))
                      (not (arcology-oracle--unread-reason rel)))))
        (send `(node . ,id))
      ;; A session's first request asks where the notes are first: stopped meanwhile
      ;; (`arcology-oracle-stop'), nothing is sent.  A node in a file outside the
      ;; notes (as known so far) is refused as the file is: the daemon knows neither.
      (arcology-oracle--answer-with-roam-dir
       (lambda (_roam-dir)
         (arcology-oracle--among-notes
          file (if id ": nothing to summarize" ", and no org-roam node is at point: nothing to summarize")
          (lambda (rel) (send (if id `(node . ,id) `(file . ,rel))))
          (not id)))
       #'ignore))))

(provide 'arcology-oracle-summarize)

;;; arcology-oracle-summarize.el ends here
