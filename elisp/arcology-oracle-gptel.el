;;; arcology-oracle-gptel.el --- gptel backend and tools for arcology-oracle -*- lexical-binding: t -*-

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

;; gptel (https://github.com/karthink/gptel) is optional: loading this
;; file does not load it.  Two ways to use the notes from gptel:
;;
;; - `arcology-oracle-gptel-backend' returns a gptel backend that talks
;;   to the daemon's Ollama-compatible API, whose "M+notes" models
;;   answer from the notes (arcology-oracle-gptel-backend.el, which
;;   this file loads);
;; - `arcology-oracle-gptel-tools' returns gptel tools with which any
;;   model, on any backend, looks things up in the notes itself:
;;   search_notes, read_note and similar_notes
;;   (`arcology-oracle-gptel-add-tools' adds them to `gptel-tools').
;;
;; The tools are this file's job.  Their functions,
;; `arcology-oracle-gptel-search-notes' and the others, are plain
;; asynchronous functions of a callback and their arguments: they need
;; no gptel and can serve other tool frameworks.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'subr-x)
(require 'url-util)
(require 'arcology-oracle-http)
(require 'arcology-oracle-notes)
(require 'arcology-oracle-gptel-backend)

(declare-function gptel-make-tool "ext:gptel-request" (&rest slots))
(declare-function gptel-tool-name "ext:gptel-request" (tool) t)
(defvar gptel-tools)

(defconst arcology-oracle-gptel--tool-names '("search_notes" "read_note" "similar_notes")
  "Names of the tools `arcology-oracle-gptel-tools' makes.")

(defun arcology-oracle-gptel--count (k)
  "Return K as a number of notes from 1 to 20; 5 when K is not a number.
Models send numbers, numeric strings or nothing."
  (let ((n (cond ((numberp k) (round k))
                 ((and (stringp k) (string-match-p "\\`[ \t]*[0-9]+[ \t]*\\'" k))
                  (string-to-number k)))))
    (if n (max 1 (min 20 n)) 5)))

(defun arcology-oracle-gptel--text-arg (value)
  "Return VALUE trimmed when it is a non-blank string, else nil."
  (and (stringp value) (not (string-blank-p value)) (string-trim value)))

(defun arcology-oracle-gptel--node-id (value)
  "Return the org-roam ID in VALUE (\"ID\", \"id:ID\" or \"[[id:ID]...]\"), or nil."
  (when-let ((text (arcology-oracle-gptel--text-arg value)))
    (cond ((string-match "\\[\\[id:\\([^]]+\\)\\]" text) (match-string 1 text))
          ((string-match "\\`\\(?:id:\\)?\\([^][ \t\n]+\\)\\'" text) (match-string 1 text)))))

(defun arcology-oracle-gptel--cut (text)
  "Return TEXT cut to `arcology-oracle-gptel-tool-max-chars', saying so if cut."
  (let ((max arcology-oracle-gptel-tool-max-chars))
    (if (<= (length text) max)
        text
      (format "%s\n[… cut here: %d more characters]" (substring text 0 max)
              (- (length text) max)))))

(defun arcology-oracle-gptel--request (callback method path &rest args)
  "Ask the daemon for PATH with METHOD; call CALLBACK once with text, later.
ARGS are :query and :json as for `arcology-oracle--json', and
:format, a function of the parsed answer returning the text.  Every
failure reaches CALLBACK as text starting with \"Error: \"; nothing
is signalled."
  (let* ((called nil)
         (done (lambda (text)
                 (unless called
                   (setq called t)
                   (funcall callback text)))))
    (condition-case err
        (arcology-oracle--json
         method path :query (plist-get args :query) :json (plist-get args :json)
         :callback (lambda (answer)
                     (funcall done
                              (condition-case err
                                  (arcology-oracle-gptel--cut
                                   (funcall (plist-get args :format) answer))
                                (error (format "Error: unexpected answer from the daemon (%s)"
                                               (error-message-string err))))))
         :errback (lambda (message) (funcall done (concat "Error: " message))))
      (error (run-at-time 0 nil done (concat "Error: " (error-message-string err)))))))

(defun arcology-oracle-gptel--fail (callback message)
  "Call CALLBACK later with the error MESSAGE."
  (run-at-time 0 nil callback (concat "Error: " message)))

(defun arcology-oracle-gptel--format-results (intro answer)
  "Return the results of the daemon's ANSWER as an org list under INTRO.
Each result is a link to its note, its file and line, and a snippet."
  (let ((results (alist-get 'results answer)))
    (if (null results)
        (concat intro ": none.")
      (concat intro
              (if (equal (alist-get 'mode answer) "keyword")
                  " (keyword matches only: the embeddings are not ready)" "")
              ":\n"
              (mapconcat
               (lambda (r)
                 (format "- %s (%s:%s): %s"
                         (arcology-oracle--source-link r)
                         (alist-get 'file r) (or (alist-get 'line r) 1)
                         (arcology-oracle--one-line (alist-get 'snippet r) 300)))
               results "\n")))))

(defun arcology-oracle-gptel--indent (text columns)
  "Return TEXT trimmed with every non-empty line indented by COLUMNS spaces."
  (replace-regexp-in-string "^\\(.\\)" (concat (make-string columns ?\s) "\\1")
                            (string-trim (or text "")) t))

(defun arcology-oracle-gptel--id-links (nodes)
  "Return NODES (alists with node_id and title) as comma-separated id: links."
  (mapconcat (lambda (n) (org-link-make-string (concat "id:" (alist-get 'node_id n))
                                               (or (alist-get 'title n) "?")))
             nodes ", "))

(defun arcology-oracle-gptel--role-mark (heading)
  "Return the mark of HEADING's `role' in the daemon's answer.
\" [oracle answer]\" for the oracle's own words (not the user's note),
\" [conversation]\" for another turn of a conversation with it, else \"\"."
  (pcase (alist-get 'role heading)
    ("oracle" " [oracle answer]")
    ("conversation" " [conversation]")
    (_ "")))

(defun arcology-oracle-gptel--marked-body (heading)
  "Return the body of HEADING (in the daemon's answer) with its replies marked.
In a heading of the user's, the daemon gives the file lines of a
grounded model's reply as `replies', the last line of the body as
`end_line'; each reply is put between \"#+begin_oracle\" and
\"#+end_oracle\" lines (its blank lines at either end left outside),
as the daemon's MCP read_note marks it."
  (let ((body (alist-get 'body heading))
        (end-line (alist-get 'end_line heading))
        (starts nil)
        (ends nil))
    (if (not (and (stringp body) (integerp end-line) (alist-get 'replies heading)))
        body
      (let* ((lines (split-string body "\n"))
             (first (- end-line (1- (length lines))))
             (k -1))
        (dolist (reply (alist-get 'replies heading))
          (let ((inside (cl-loop for n from (alist-get 'line reply) to (alist-get 'end_line reply)
                                 for i = (- n first)
                                 when (and (<= 0 i) (< i (length lines))
                                           (string-match-p "[^ \t]" (nth i lines)))
                                 collect i)))
            (when inside
              (push (car inside) starts)
              (push (car (last inside)) ends))))
        (mapconcat (lambda (line)
                     (setq k (1+ k))
                     (concat (if (memq k starts) "#+begin_oracle\n" "")
                             line
                             (if (memq k ends) "\n#+end_oracle" "")))
                   lines "\n")))))

(defun arcology-oracle-gptel--format-node (node)
  "Return the daemon's NODE (GET /nodes/ID) as short org text.
A link to the node with its file and tags, then its headings as an
org list, each with its body when the daemon gives bodies, and its
links and backlinks.  No line of it is an org heading (headings
become list items, bodies under them are indented), so the text
can sit anywhere in an org buffer.  A heading that is the oracle's
own words is marked \"[oracle answer]\" (a node that is: its first
line), another turn of a conversation \"[conversation]\", and a
grounded model's reply in a heading of the user's is put between
\"#+begin_oracle\" and \"#+end_oracle\" lines."
  (let* ((headings (alist-get 'headings node))
         (own-level (or (alist-get 'level node) 0))
         (own (cl-find-if (lambda (h) (<= (or (alist-get 'level h) 0) own-level)) headings))
         (tags (alist-get 'tags node))
         (aliases (alist-get 'aliases node)))
    (concat
     (org-link-make-string (concat "id:" (alist-get 'node_id node)) (or (alist-get 'title node) "?"))
     (format " (%s:%s)" (alist-get 'file node) (or (alist-get 'line node) 1))
     (if own (arcology-oracle-gptel--role-mark own) "")
     (if tags (concat ", tags: " (string-join tags ", ")) "")
     (if aliases (concat "\nAliases: " (string-join aliases ", ")) "")
     (if (alist-get 'date node) (format "\nDate: %s" (alist-get 'date node)) "")
     "\n"
     (mapconcat
      (lambda (h)
        (let* ((level (or (alist-get 'level h) 0))
               (depth (max 0 (- level own-level 1)))
               (body (arcology-oracle-gptel--marked-body h)))
          (if (<= level own-level)
              ;; The node's own heading: its body only, without the title
              ;; and tag keywords the first line already gives.
              (let ((body (and (stringp body)
                               (let ((case-fold-search t))
                                 (replace-regexp-in-string
                                  "^#\\+\\(?:title\\|filetags\\):.*\n?" "" body)))))
                (if (arcology-oracle-gptel--text-arg body)
                    (concat "\n" (arcology-oracle-gptel--indent body 0) "\n")
                  ""))
            (let* ((title (concat (if (alist-get 'todo h) (concat (alist-get 'todo h) " ") "")
                                  (or (alist-get 'heading h) "?")))
                   (id (alist-get 'heading_id h)))
              (concat (make-string (* 2 depth) ?\s) "- "
                      (if id (org-link-make-string (concat "id:" id) title) title)
                      (arcology-oracle-gptel--role-mark h)
                      "\n"
                      (if (arcology-oracle-gptel--text-arg body)
                          (concat (arcology-oracle-gptel--indent body (* 2 (1+ depth))) "\n")
                        ""))))))
      headings "")
     (if (alist-get 'links node)
         (concat "Links: " (arcology-oracle-gptel--id-links (alist-get 'links node)) "\n")
       "")
     (if (alist-get 'backlinks node)
         (concat "Backlinks: " (arcology-oracle-gptel--id-links (alist-get 'backlinks node)) "\n")
       ""))))

(defun arcology-oracle-gptel-search-notes (callback query &optional k)
  "Search the notes for QUERY; call CALLBACK once with the K best as org text.
K defaults to 5 (at most 20).  The text lists each note as an
[[id:...]] link titled with its outline path, its file and line,
and a snippet.  Errors (daemon unreachable, HTTP errors, a missing
QUERY) reach CALLBACK as text starting with \"Error: \"; nothing is
signalled, and CALLBACK always runs later, never before this
function returns."
  (if-let ((query (arcology-oracle-gptel--text-arg query)))
      (arcology-oracle-gptel--request
       callback "GET" "/search"
       :query `(("q" ,query) ("k" ,(arcology-oracle-gptel--count k)))
       :format (lambda (answer)
                 (arcology-oracle-gptel--format-results
                  (format "Notes matching %S" query) answer)))
    (arcology-oracle-gptel--fail callback "search_notes needs a query")))

(defun arcology-oracle-gptel-read-note (callback id)
  "Read the note whose org-roam ID is ID; call CALLBACK once with it as org text.
ID may also be \"id:ID\" or an [[id:ID][...]] link.  The text
starts with a link to the note, its file and tags, then lists its
headings (with their bodies when the daemon gives them) and its
links and backlinks as [[id:...]] links.  Private headings are
never in it: the daemon does not index them.  Errors (unknown ID,
daemon unreachable) reach CALLBACK as text starting with
\"Error: \", later; nothing is signalled."
  (if-let ((id (arcology-oracle-gptel--node-id id)))
      (arcology-oracle-gptel--request
       callback "GET" (concat "/nodes/" (url-hexify-string id))
       :format #'arcology-oracle-gptel--format-node)
    (arcology-oracle-gptel--fail callback "read_note needs an org-roam ID")))

(defun arcology-oracle-gptel-similar-notes (callback &optional id k text)
  "Find the notes most similar to the note ID, or to TEXT; call CALLBACK once.
ID is an org-roam ID (or \"id:ID\", or an [[id:ID][...]] link);
without it, TEXT is matched instead.  CALLBACK gets the K best
\(default 5, at most 20) as org text, like
`arcology-oracle-gptel-search-notes'.  Errors reach CALLBACK as
text starting with \"Error: \", later; nothing is signalled."
  (let ((node (arcology-oracle-gptel--node-id id))
        (text (arcology-oracle-gptel--text-arg text))
        (k (arcology-oracle-gptel--count k)))
    (cond
     (node
      (arcology-oracle-gptel--request
       callback "GET" "/similar" :query `(("node" ,node) ("k" ,k))
       :format (lambda (answer)
                 (arcology-oracle-gptel--format-results
                  (format "Notes similar to [[id:%s]]" node) answer))))
     (text
      (arcology-oracle-gptel--request
       callback "POST" "/similar" :json `((text . ,text) (k . ,k))
       :format (lambda (answer)
                 (arcology-oracle-gptel--format-results "Notes similar to the text" answer))))
     (t (arcology-oracle-gptel--fail callback "similar_notes needs an id or a text")))))

(defun arcology-oracle-gptel-tool-specs ()
  "Return the notes tools as lists of `gptel-make-tool' arguments.
Each is asynchronous: its function takes a callback first."
  (list
   (list :name "search_notes"
         :function #'arcology-oracle-gptel-search-notes
         :description "Search the user's org-roam notes (hybrid keyword and meaning search). Returns the best matching notes as an org list: an [[id:ID][...]] link titled with its outline path, file:line and a snippet for each. Cite notes with these links; pass an ID to read_note for the full text."
         :args (list '(:name "query" :type string
                             :description "What to look for, in words (a question or keywords)")
                     '(:name "k" :type integer :optional t
                             :description "How many notes to return, 1 to 20 (default 5)"))
         :async t :category "arcology-oracle" :include t)
   (list :name "read_note"
         :function #'arcology-oracle-gptel-read-note
         :description "Read one note of the user's org-roam notes by its ID: its title, file, tags, headings with their text, and its links and backlinks as [[id:ID][Title]] links. A heading marked [oracle answer] is an answer the assistant itself wrote earlier, not the user's note. Use the IDs from search_notes or similar_notes results."
         :args (list '(:name "id" :type string
                             :description "The note's org-roam ID, e.g. the ID inside [[id:ID][...]]"))
         :async t :category "arcology-oracle" :include t)
   (list :name "similar_notes"
         :function #'arcology-oracle-gptel-similar-notes
         :description "List the notes most similar in meaning to one note (by its org-roam ID) or to a piece of text. Returns an org list of [[id:ID][...]] links titled with outline paths, with file:line and a snippet."
         :args (list '(:name "id" :type string :optional t
                             :description "The org-roam ID of the note to compare with")
                     '(:name "k" :type integer :optional t
                             :description "How many notes to return, 1 to 20 (default 5)")
                     '(:name "text" :type string :optional t
                             :description "Text to compare with, when there is no ID"))
         :async t :category "arcology-oracle" :include t)))

;;;###autoload
(defun arcology-oracle-gptel-tools ()
  "Return gptel tools that look things up in the notes through the daemon.
They are search_notes, read_note and similar_notes (see
`arcology-oracle-gptel-tool-specs'), made with `gptel-make-tool',
which also registers them in gptel's tool menu under the category
\"arcology-oracle\".  Requires gptel, loaded only now."
  (unless (fboundp 'gptel-make-tool)
    (or (require 'gptel-request nil t) (require 'gptel nil t)))
  (unless (fboundp 'gptel-make-tool)
    (arcology-oracle--user-error "Install gptel (0.9.8 or later) first: it provides `gptel-make-tool'"))
  (mapcar (lambda (spec) (apply #'gptel-make-tool spec))
          (arcology-oracle-gptel-tool-specs)))

;;;###autoload
(defun arcology-oracle-gptel-add-tools ()
  "Add the notes tools to `gptel-tools', replacing older ones of the same names.
Any gptel backend can then search the notes, read a note and list
similar notes while it answers."
  (interactive)
  (let ((tools (arcology-oracle-gptel-tools)))
    (setq gptel-tools
          (append (cl-remove-if (lambda (tool)
                                  (member (gptel-tool-name tool)
                                          arcology-oracle-gptel--tool-names))
                                gptel-tools)
                  tools))
    (arcology-oracle--message "arcology-oracle: gptel can now use %s"
                              (string-join arcology-oracle-gptel--tool-names ", "))
    tools))

(provide 'arcology-oracle-gptel)

;;; arcology-oracle-gptel.el ends here
