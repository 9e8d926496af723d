;;; arcology-oracle-search.el --- Search the notes with arcology-oracle -*- lexical-binding: t -*-

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

;; `arcology-oracle-search' asks the daemon for the notes matching a
;; query and offers them through `completing-read', without waiting:
;; results that arrive while the user went on are kept for
;; `arcology-oracle-search-results'.

;;; Code:

(require 'seq)
(require 'subr-x)
(require 'arcology-oracle-notes)

(defvar arcology-oracle--search-history nil
  "Queries given to `arcology-oracle-search'.")

(defvar arcology-oracle--search-request nil
  "The search request in flight, if any.")

(defvar arcology-oracle--search-generation 0
  "Counter of searches; only the latest one prompts.")

(defvar arcology-oracle--search-waiting nil
  "(QUERY . RESULTS) of the last search that arrived while the user went on.
`arcology-oracle-search-results' offers them.")

(declare-function arcology-oracle--similar-post-command-h "arcology-oracle-similar" ())

(defun arcology-oracle--search-candidates (results)
  "Return an alist of (CANDIDATE . RESULT) for the search RESULTS.
A candidate is the result's outline path, its note's title first,
each part once; equal ones are made unique."
  (let ((seen (make-hash-table :test 'equal)))
    (mapcar (lambda (result)
              (let ((candidate (or (arcology-oracle--outline result) "?")))
                (when (string-empty-p candidate) (setq candidate "?"))
                (while (gethash candidate seen)
                  (setq candidate (concat candidate " ")))
                (puthash candidate t seen)
                (cons candidate result)))
            results)))

(defun arcology-oracle--search-annotation (result &optional candidate)
  "Return the annotation of the search RESULT: its role and snippet.
Oracle answers and conversation turns (the daemon's `role') are
marked as such; a snippet that only repeats the heading is left out.
The snippet is cut at 70 columns, or to what the frame leaves after
CANDIDATE, the result as listed, and the role (at least 10): a line
of *Completions* wider than the frame is wrapped at its edge."
  (let* ((role (pcase (alist-get 'role result)
                 ("oracle" "[oracle answer] ")
                 ("conversation" "[conversation] ")
                 (_ "")))
         (snippet (arcology-oracle--snippet result))
         ;; The frame's last column is Emacs's, for the wrap's `\'.
         (room (- (frame-width) 1 (string-width (or candidate "")) 2 (string-width role))))
    (concat "  " (propertize role 'face 'arcology-oracle-tag)
            (propertize (if snippet (arcology-oracle--one-line snippet (max 10 (min 70 room))) "")
                        'face 'completions-annotations))))

(defun arcology-oracle--search-prompt (query count)
  "Return the prompt offering COUNT results for QUERY.
RET with nothing typed visits the best; Emacs's own completion (no
vertico, icomplete, fido or ivy) lists nothing until TAB: said so.
QUERY is cut with an ellipsis to what the frame leaves it (at least
10 columns): a longer prompt was wrapped at the frame's edge."
  (let ((rest (format " (%d found, RET visits the best%s): " count
                      (if (or (bound-and-true-p vertico-mode) (bound-and-true-p icomplete-mode)
                              (bound-and-true-p fido-mode)
                              (not (eq completing-read-function #'completing-read-default)))
                          ""
                        ", TAB lists them"))))
    (concat "Notes for "
            ;; The frame's last column is Emacs's, for the wrap's `\'.
            (arcology-oracle--one-line query (max 10 (- (frame-width) 1 (string-width "Notes for ")
                                                        (string-width rest))))
            rest)))

(defun arcology-oracle--search-choose (query results)
  "Let the user choose among the search RESULTS for QUERY, then visit it.
RET with nothing typed chooses the best (the first)."
  (if (null results)
      (arcology-oracle--message "arcology-oracle: nothing found for %S" query)
    (let* ((candidates (arcology-oracle--search-candidates results))
           (annotate (lambda (candidate)
                       (when-let ((result (cdr (assoc candidate candidates))))
                         (arcology-oracle--search-annotation result candidate))))
           (table (lambda (string pred action)
                    (if (eq action 'metadata)
                        `(metadata (category . arcology-oracle-note)
                                   (display-sort-function . identity)
                                   (annotation-function . ,annotate))
                      (complete-with-action action candidates string pred))))
           ;; The best as the default: RET on nothing typed returned "", which
           ;; visited no result ("Cannot find nil here").
           (choice (completing-read (arcology-oracle--search-prompt query (length candidates))
                                    table nil t nil nil (caar candidates))))
      (arcology-oracle--visit (cdr (assoc choice candidates)))
      ;; Visited from a timer, not a command: nothing else tells the similar notes
      ;; window that point is at another heading now.
      (when (fboundp 'arcology-oracle--similar-post-command-h)
        (arcology-oracle--similar-post-command-h)))))

;;;###autoload
(defun arcology-oracle-search-results ()
  "Choose among the results of the last search that arrived while you went on.
A search offers its results as soon as the daemon answers; when you
typed or ran another command meanwhile, they wait for this command
instead of taking over what you were typing."
  (interactive)
  (pcase-let ((`(,query . ,results) arcology-oracle--search-waiting))
    (unless query (arcology-oracle--user-error "No search results are waiting"))
    (arcology-oracle--search-choose query results)))

;;;###autoload
(defun arcology-oracle-search (query)
  "Search the notes for QUERY and visit the result chosen.
The results are offered with `completing-read' (so vertico,
consult or icomplete show them if enabled) as soon as the daemon
answers; Emacs does not wait meanwhile.  When you typed or ran a
command before they came, they wait for
`arcology-oracle-search-results' instead."
  (interactive (list (arcology-oracle--read-string "Search notes: " 'arcology-oracle--search-history)))
  (when (string-blank-p query) (arcology-oracle--user-error "Empty query"))
  (arcology-oracle--http-cancel arcology-oracle--search-request)
  (arcology-oracle--message "arcology-oracle: searching…")
  (let ((generation (cl-incf arcology-oracle--search-generation))
        (keys num-input-keys))
    ;; The roam directory is needed to visit results by file and line.
    (arcology-oracle--with-roam-dir
     (lambda (_roam-dir)
       (when (= generation arcology-oracle--search-generation)
         (setq arcology-oracle--search-request
               (arcology-oracle--json
                "GET" "/search"
                :query `(("q" ,query) ("k" ,arcology-oracle-result-count))
                :callback
                (lambda (answer)
                  (setq arcology-oracle--search-request nil)
                  (let ((results (alist-get 'results answer)))
                    (if (or (active-minibuffer-window) (/= num-input-keys keys))
                        ;; The user went on (typing, another command): a prompt now
                        ;; would take their next keys.
                        (progn
                          (setq arcology-oracle--search-waiting (cons query results))
                          (arcology-oracle--message "arcology-oracle: %d results for %S are ready: %s shows them"
                                                    (length results) query
                                                    (substitute-command-keys "\\[arcology-oracle-search-results]")))
                      ;; Out of the process sentinel, so that the prompt can be quit.
                      (run-at-time 0 nil (lambda ()
                                           (arcology-oracle--guard
                                             (arcology-oracle--search-choose query results)))))))
                :errback (lambda (message)
                           (setq arcology-oracle--search-request nil)
                           (arcology-oracle--report message))))))
     (lambda (message)
       (when (= generation arcology-oracle--search-generation)
         (arcology-oracle--report message))))))

(provide 'arcology-oracle-search)

;;; arcology-oracle-search.el ends here
