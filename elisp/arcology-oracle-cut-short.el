;;; arcology-oracle-cut-short.el --- What an answer cut short leaves, and how to ask again -*- lexical-binding: t -*-

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

;; The words for an answer that did not come, or not all of it: the
;; daemon went away mid-answer (killed, restarted, the connection cut),
;; stopped, stayed silent, or its model failed.  They say what is left
;; (what came stays in the answers or summaries buffer; a conversation
;; got nothing) and which key asks again, rather than "daemon not
;; reachable", which says that nothing was sent.

;;; Code:

(require 'arcology-oracle-http)

(defun arcology-oracle--again-keys ()
  "Return the keys that ask an answer's question again, in its buffer."
  (substitute-command-keys
   "\\<arcology-oracle-answers-keys-mode-map>\\[arcology-oracle-answers-again]"))

(defun arcology-oracle--answer-cut-short (message kept &optional buffer)
  "Return the failure MESSAGE of an answer with what is left and what to do.
KEPT non-nil: part of the answer came first, and stays above the
failure.  Without BUFFER, the words of the answer's entry, where the
keys of `arcology-oracle-answers-again' ask again; with BUFFER (the
answer's), the echo area's, which name it."
  (let ((again (arcology-oracle--again-keys)))
    (concat message
            (cond ((and kept buffer) (format ": what came is kept in %s, %s there asks again"
                                             (buffer-name buffer) again))
                  (kept (format "; what came is kept above, %s asks again" again))
                  (buffer (format ": %s in %s asks again" again (buffer-name buffer)))
                  (t (format "; %s asks again" again))))))

(defun arcology-oracle--conversation-cut-short (message)
  "Return the failure MESSAGE of `arcology-oracle-converse', with what it left.
Nothing was written into the conversation.  When the daemon did not
answer (see `arcology-oracle--unanswered-p': it went away, or stayed
silent) or answered 503 (stopping, its model unreachable), the same
command may succeed later: its keys are named."
  (concat message ": nothing was added to the conversation"
          (if (or (arcology-oracle--unanswered-p message)
                  (string-suffix-p "(HTTP 503)" message))
              (substitute-command-keys ", \\[arcology-oracle-converse] in it asks again")
            "")))

(provide 'arcology-oracle-cut-short)

;;; arcology-oracle-cut-short.el ends here
