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
;; reachable", which says that nothing was sent; first what to do when
;; asking again alone cannot help (the chat model missing: pull it).

;;; Code:

(require 'arcology-oracle-http)
(require 'arcology-oracle-http-errors)

(defun arcology-oracle--again-keys ()
  "Return the keys that ask an answer's question again, in its buffer."
  (substitute-command-keys
   "\\<arcology-oracle-answers-keys-mode-map>\\[arcology-oracle-answers-again]"))

(defun arcology-oracle--remedy (message)
  "Split the failure MESSAGE into (PROBLEM . REMEDY); REMEDY nil without one.
A failure that asking again does not cure by itself has a remedy, to
be done before asking again: the chat model missing in Ollama (the
daemon's `missing_model', see `arcology-oracle--missing-model'),
whose REMEDY is \"try `ollama pull MODEL`\".  PROBLEM is MESSAGE
without the daemon's own words for the remedy, when it has them."
  (if-let ((model (arcology-oracle--missing-model message)))
      (let ((remedy (format "try `ollama pull %s`" model)))
        (cons (string-replace (concat "; " remedy) "" message) remedy))
    (cons message nil)))

(defun arcology-oracle--answer-cut-short (message kept &optional buffer)
  "Return the failure MESSAGE of an answer with what is left and what to do.
KEPT says what came before the failure: t, words of the answer, which
stay above it; `begun', the answer's sources but no words of it (the
model's first pieces were blank); nil, nothing.  Without BUFFER, the
words of the answer's entry, where the keys of
`arcology-oracle-answers-again' ask again; with BUFFER (the
answer's), the echo area's, which name it.  A remedy in MESSAGE (see
`arcology-oracle--remedy') comes last, before asking again: asked
again without it, the answer fails the same."
  (pcase-let* ((again (arcology-oracle--again-keys))
               (`(,message . ,remedy) (arcology-oracle--remedy message))
               (then (if remedy (format "; %s, then " remedy) ", "))
               (left (pcase kept
                       ('nil nil)
                       ('begun "no words of the answer had come")
                       (_ (if buffer (format "what came is kept in %s" (buffer-name buffer))
                            "what came is kept above")))))
    (concat message
            (cond ((and left buffer)
                   (format ": %s%s%s %s asks again" left then again
                           (if (eq kept 'begun) (concat "in " (buffer-name buffer)) "there")))
                  (left (format "; %s%s%s asks again" left then again))
                  (buffer (format "%s%s in %s asks again" (if remedy then ": ") again (buffer-name buffer)))
                  (t (format "%s%s asks again" (if remedy then "; ") again))))))

(defun arcology-oracle--gone-before-answering (message found)
  "Return the failure MESSAGE of an answer of which nothing had come.
The daemon's connection closed after its answer began reads \"went
away mid-answer\"; no line of the answer had come, so it went away
before answering, after finding the notes when FOUND (its `found'
line came).  Any other MESSAGE is returned as it is."
  (if (and (not (string-empty-p message))
           (get-text-property 0 'arcology-oracle-mid-answer message))
      (propertize (if found
                      "the daemon went away before answering (it closed the connection after finding the notes)"
                    "the daemon went away before answering (it closed the connection)")
                  'arcology-oracle-unanswered t)
    message))

(defun arcology-oracle--conversation-cut-short (message)
  "Return the failure MESSAGE of `arcology-oracle-converse', with what it left.
Nothing was written into the conversation.  When the daemon did not
answer (see `arcology-oracle--unanswered-p': it went away, or stayed
silent) or answered 503 (stopping, its model unreachable), the same
command may succeed later: its keys are named, after the remedy that
MESSAGE names (see `arcology-oracle--remedy'), if it names one."
  (pcase-let ((`(,problem . ,remedy) (arcology-oracle--remedy message))
              (keys (substitute-command-keys "\\[arcology-oracle-converse] in it asks again")))
    (concat problem ": nothing was added to the conversation"
            (cond (remedy (format "; %s, then %s" remedy keys))
                  ((or (arcology-oracle--unanswered-p message)
                       (string-suffix-p "(HTTP 503)" message))
                   (concat ", " keys))
                  (t "")))))

(provide 'arcology-oracle-cut-short)

;;; arcology-oracle-cut-short.el ends here
