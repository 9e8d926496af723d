;;; arcology-oracle-similar-query.el --- What the similar notes of a heading are asked by -*- lexical-binding: t -*-

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

;; The question the similar notes side window asks the daemon about the
;; heading at point (by its node, by file and line, or by its text),
;; what of the answer it keeps (not the note being read), and the note
;; saying why an answer holds keyword matches only.  Following point,
;; and showing the answer, are arcology-oracle-similar.el's.

;;; Code:

(require 'seq)
(require 'subr-x)
(require 'arcology-oracle-notes)

(defun arcology-oracle--similar-request-args (context roam-dir)
  "Return the HTTP request finding notes similar to CONTEXT.
CONTEXT is from `arcology-oracle--heading-context'; ROAM-DIR the
daemon's roam directory.  An unmodified file under ROAM-DIR is
asked about by the heading's node when the heading is a node of
its own (the org-roam section's question, so both show the same
list with the same scores), else by file and line, which the daemon
knows best; anything else (unsaved edits, files elsewhere) by its
text, with the node the heading is in (the daemon leaves that
note's saved self out, as it does for the other two) and its file
and line (the daemon puts the text in the saved outline, and reads
the vectors of its unchanged parts from the index).  A file never
saved is not among the daemon's notes yet: it is asked about by its
text too.  Returns \(METHOD PATH QUERY JSON), or nil when there is
no text to ask about (an empty new note)."
  (let* ((k arcology-oracle-result-count)
         (visited (arcology-oracle--visited-file))
         (file (and roam-dir visited (arcology-oracle--relative-file visited roam-dir)))
         (rel (and file (not (buffer-modified-p)) (file-exists-p visited) file))
         (own (plist-get context :own-id))
         (linked (when arcology-oracle-similar-exclude-linked '(("exclude_linked" "true")))))
    (cond
     ((and rel own)
      (list "GET" "/similar" `(("node" ,own) ("k" ,k) ("all" "true") ,@linked) nil))
     (rel
      (list "GET" "/similar"
            `(("file" ,rel) ("line" ,(plist-get context :line)) ("k" ,k) ("all" "true") ,@linked)
            nil))
     ((string-blank-p (plist-get context :text)) nil)
     (t
      ;; One more: a heading in no node of the index comes back from a text query.
      (list "POST" "/similar" nil
            `((text . ,(plist-get context :text)) (k . ,(1+ k)) (all . t)
              ,@(when file `((file . ,file) (line . ,(plist-get context :line))))
              ,@(when-let ((node (plist-get context :node-id)))
                  `((node . ,node)
                    ,@(when arcology-oracle-similar-exclude-linked '((exclude_linked . t)))))))))))

(defun arcology-oracle--similar-filter (results context)
  "Drop from RESULTS the note of CONTEXT itself; keep the count asked for.
That is every node enclosing the heading, up to the file's own:
a link to them from here would point at the note being read."
  (let ((own (plist-get context :node-ids)))
    (seq-take (seq-remove (lambda (r) (or (member (alist-get 'node_id r) own)
                                          (member (alist-get 'heading_id r) own)))
                          results)
              arcology-oracle-result-count)))

(defun arcology-oracle--keyword-note (callback)
  "Call CALLBACK with the note saying why the similar notes are keyword matches.
The daemon's /status says which is true: its embedder failing (its
error), headings still waiting for their vectors, or neither."
  (arcology-oracle--json
   "GET" "/status"
   :callback (lambda (status) (funcall callback (arcology-oracle--keyword-note-text status)))
   :errback (lambda (_) (funcall callback "(keyword matches: no vectors to compare with)"))))

(defun arcology-oracle--keyword-note-text (status)
  "Return the keyword matches' note for the daemon's /status answer STATUS.
The embedder's error, which names the model and the host, is cut at
160 characters, unless it ends with what to do: the pull of the
embedding model Ollama lacks (\"; try `ollama pull MODEL`\", the
daemon's words), kept whole however long the host and the name are."
  (let* ((embedder (alist-get 'embedder status))
         (failure (alist-get 'error embedder))
         (model (alist-get 'model embedder))
         (pending (alist-get 'pending status)))
    (cond
     ((and (stringp failure) (not (string-empty-p failure)))
      (format "(keyword matches: the embedder fails: %s)"
              (arcology-oracle--one-line
               failure (if (and (stringp model)
                                (string-suffix-p (format "; try `ollama pull %s`" model) failure))
                           (string-width failure)
                         160))))
     ((and (numberp pending) (> pending 0))
      (format "(keyword matches: embeddings are not ready, %d heading%s to embed)"
              pending (if (= pending 1) "" "s")))
     (t "(keyword matches: no vectors to compare with)"))))

(provide 'arcology-oracle-similar-query)

;;; arcology-oracle-similar-query.el ends here
