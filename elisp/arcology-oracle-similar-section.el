;;; arcology-oracle-similar-section.el --- The similar notes section of the org-roam buffer -*- lexical-binding: t -*-

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

;; `arcology-oracle-similar-section' lists the notes similar to the
;; org-roam buffer's node in that buffer (add it to
;; `org-roam-mode-sections') as a magit section.  It never waits for
;; the daemon: it shows a placeholder and renders the buffer again when
;; the answer arrives; answers are reused for a minute.

;;; Code:

(require 'seq)
(require 'subr-x)
(require 'org)
(require 'arcology-oracle-notes)

;; magit-section is optional; see `arcology-oracle--with-magit'.
(eval-when-compile (require 'magit-section nil t))

(declare-function org-roam-node-id "ext:org-roam-node" (node) t)
(declare-function org-roam-node-file "ext:org-roam-node" (node) t)
(declare-function org-roam-node-tags "ext:org-roam-node" (node) t)
(declare-function org-roam-node-level "ext:org-roam-node" (node) t)
(declare-function org-roam-db-query "ext:org-roam-db" (sql &rest args))
(declare-function org-roam-buffer-render-contents "ext:org-roam-mode" ())
(declare-function magit-insert-heading "ext:magit-section" (&rest args))
(declare-function magit-section-show "ext:magit-section" (section))
(declare-function magit-insert-child-count "ext:magit-section" (section))
(declare-function magit-get-section "ext:magit-section" (ident &optional root))
(declare-function magit-section-ident "ext:magit-section" (section))
(declare-function magit-section-match-assoc "ext:magit-section" (section alist))
(defvar org-roam-mode-map)
(defvar magit-section-show-child-count)

(defvar arcology-oracle--section-cache (make-hash-table :test 'equal)
  "Similar notes per node ID for the org-roam section, as (TIME . RESULTS).
RESULTS is a list of results, or an error message string.")

(defconst arcology-oracle--section-cache-seconds 60
  "How long the org-roam section reuses an answer before asking again.")

(defvar-local arcology-oracle--section-pending nil
  "In an org-roam buffer: the node ID whose similar notes are awaited.")

(defvar arcology-oracle-section-map
  (let ((map (make-sparse-keymap)))
    (define-key map [remap org-roam-buffer-visit-thing] #'arcology-oracle-visit-result)
    (define-key map (kbd "RET") #'arcology-oracle-visit-result)
    map)
  "Keymap of the entries of `arcology-oracle-similar-section'.")

(defmacro arcology-oracle--with-magit (args &rest body)
  "Run BODY, using magit-section macros, with ARGS bound to themselves.
magit-section is optional: when it was not loaded at compile time,
BODY is macro-expanded when it first runs, after requiring it, so
that the compiled file keeps working once magit-section is
installed."
  (declare (indent 1) (debug (sexp body)))
  (if (featurep 'magit-section)
      `(progn ,@body)
    `(progn (require 'magit-section)
            (funcall (eval '(lambda ,args ,@body) t) ,@args))))

(defvar arcology-oracle--section-own-render nil
  "Non-nil while the section renders the org-roam buffer again itself.
That is, when an answer or a failure arrived or the window changed
its width: a failure kept in the cache is shown then, and only then.")

(defvar arcology-oracle--section-relayout nil
  "Non-nil while the org-roam buffer is laid out again for a new width.
The entries on screen are laid out again, however old: asked for
again, they would be replaced by \"Looking for similar notes…\", and
point, on one of them, would lose it.")

(defun arcology-oracle--section-cached (id)
  "Return the fresh cache entry (TIME . RESULTS) for node ID, or nil.
A failure (RESULTS a message) is returned only to the section's own
renders (see `arcology-oracle--section-own-render'): any other (g,
org-roam showing the node again) asks the daemon again, so a failure
never outlives the daemon coming back.  While the buffer is laid out
again for a new width (see `arcology-oracle--section-relayout'), an
entry of any age is returned."
  (let ((entry (gethash id arcology-oracle--section-cache)))
    (when (and entry (or arcology-oracle--section-relayout
                         (< (- (float-time) (car entry)) arcology-oracle--section-cache-seconds))
               (or (consp (cdr entry)) (null (cdr entry)) arcology-oracle--section-own-render))
      entry)))

(defun arcology-oracle--section-render-again (buffer)
  "Render the org-roam BUFFER again, point kept in its windows.
A point on an entry of the section stays on that entry, at its
start: laid out for another width, its lines and those above it are
longer or shorter, and the same position would be another entry's,
which RET would visit.  Any other point keeps its position."
  (when (fboundp 'org-roam-buffer-render-contents)
    (with-current-buffer buffer
      (let* ((anchor (lambda (pos) (cons pos (get-text-property pos 'arcology-oracle-result))))
             (place (lambda (anchor)
                      (or (and (cdr anchor) (arcology-oracle--result-start (cdr anchor)))
                          (min (car anchor) (point-max)))))
             (points (mapcar (lambda (w) (cons w (funcall anchor (window-point w))))
                             (get-buffer-window-list buffer nil t)))
             (pt (funcall anchor (point)))
             (arcology-oracle--section-own-render t))
        (org-roam-buffer-render-contents)
        (goto-char (funcall place pt))
        (dolist (wp points)
          (set-window-point (car wp) (funcall place (cdr wp))))))))

(defun arcology-oracle--section-rerender (id)
  "Render again the org-roam buffers awaiting the similar notes of node ID."
  (dolist (buffer (buffer-list))
    (when (equal (buffer-local-value 'arcology-oracle--section-pending buffer) id)
      (arcology-oracle--section-render-again buffer))))

(defvar-local arcology-oracle--section-window-width nil
  "In an org-roam buffer: the width of the window its section was made for.")

(defun arcology-oracle--section-resized (window)
  "Render the org-roam buffer in WINDOW again when WINDOW changed its width.
The section's lines are cut to the window they were made for: in a
narrower one Emacs cut them again at its edge, the marks first."
  (let ((buffer (window-buffer window)))
    (when (and (eq window (get-buffer-window buffer t))
               (not (eql (window-width window)
                         (buffer-local-value 'arcology-oracle--section-window-width buffer))))
      (let ((arcology-oracle--section-relayout t))
        (arcology-oracle--guard (arcology-oracle--section-render-again buffer))))))

(defun arcology-oracle--section-fetch (id)
  "Ask the daemon for the notes similar to node ID, for the org-roam section."
  (arcology-oracle--json
   "GET" "/similar"
   :query `(("node" ,id) ("k" ,arcology-oracle-result-count) ("all" "true")
            ,@(when arcology-oracle-similar-exclude-linked '(("exclude_linked" "true"))))
   :callback (lambda (answer)
               (puthash id (cons (float-time) (arcology-oracle--results-of answer 'results))
                        arcology-oracle--section-cache)
               (arcology-oracle--section-rerender id))
   :errback (lambda (message)
              ;; Kept for the render this makes (and a change of width), so
              ;; that showing it does not ask again; g asks again.
              (puthash id (cons (float-time) message) arcology-oracle--section-cache)
              (arcology-oracle--report message t)
              (arcology-oracle--section-rerender id))))

;;;###autoload
(defun arcology-oracle-similar-section (node)
  "Insert the notes similar to NODE into the org-roam buffer.
Add it to `org-roam-mode-sections', for example:

  (add-to-list \\='org-roam-mode-sections
               #\\='arcology-oracle-similar-section t)

The section never waits for the daemon: it shows a placeholder,
and the buffer is rendered again when the answer arrives.
Answers are reused for a minute; a failure is not: g asks again."
  (let* ((id (org-roam-node-id node))
         (entry (and id (arcology-oracle--section-cached id))))
    (when (and id (arcology-oracle--roam-node-private-p node))
      ;; The daemon never reads it: asking could only say "no node with ID ...".
      (setq id nil)
      (arcology-oracle--insert-section "This note is private: nothing of it is sent." nil))
    (when-let* ((unread (and id (arcology-oracle--node-unread-reason node))))
      ;; Nor a note it never reads (as far as its /status said: a hidden folder, its
      ;; exclude_globs); no more than that is said of it.
      (setq id nil)
      (arcology-oracle--insert-section
       (format "This note is not among the daemon's notes (%s): nothing of it is sent." unread) nil))
    (when id
      ;; Made again when its window's width changes (the lines are cut to it).
      (setq arcology-oracle--section-window-width
            (when-let ((window (get-buffer-window (current-buffer) t))) (window-width window)))
      (add-hook 'window-size-change-functions #'arcology-oracle--section-resized nil t)
      (setq-local arcology-oracle--section-pending (unless entry id))
      (unless entry (arcology-oracle--section-fetch id))
      (arcology-oracle--insert-section
       (cdr entry) (not entry)
       ;; The node's links, as the daemon reads them: not another part of its file's.
       (when-let ((file (ignore-errors (org-roam-node-file node))))
         (if-let ((buffer (find-buffer-visiting file)))
             (with-current-buffer buffer (arcology-oracle--node-links id))
           (arcology-oracle--roam-linked-ids file (unless (eql (org-roam-node-level node) 0) id))))
       (arcology-oracle--roam-backlinks id)))))

(defun arcology-oracle--node-unread-reason (node)
  "Return why the file of the org-roam NODE is not among the daemon's notes.
Nil when it may be.
See `arcology-oracle--unread-reason'."
  (when-let* ((file (ignore-errors (org-roam-node-file node)))
              (rel (arcology-oracle--relative-file file (arcology-oracle--roam-dir))))
    (arcology-oracle--unread-reason rel)))

(defun arcology-oracle--roam-node-private-p (node)
  "Return non-nil when the org-roam NODE is private.
By its tags in org-roam's database (the file's and its headings'),
else as the buffer visiting its file says now (see
`arcology-oracle--private-here-p'), at its :ID:."
  (or (arcology-oracle--private-tags-p (ignore-errors (org-roam-node-tags node)))
      (when-let* ((file (ignore-errors (org-roam-node-file node)))
                  (buffer (find-buffer-visiting file)))
        (with-current-buffer buffer
          (save-excursion
            (save-restriction
              (widen)
              (goto-char (point-min))
              (when-let ((at (org-find-property "ID" (org-roam-node-id node))))
                (arcology-oracle--private-here-p at))))))))

(defun arcology-oracle--roam-linked-ids (file &optional id)
  "Return the IDs the notes of FILE link to, from org-roam's database, or nil.
With ID, a heading's node: those it links to itself."
  (when (fboundp 'org-roam-db-query)
    (ignore-errors
      (mapcar #'car (if id
                        (org-roam-db-query [:select :distinct [dest] :from links
                                            :where (and (= source $s1) (= type "id"))]
                                           id)
                      (org-roam-db-query
                       [:select :distinct [links:dest] :from links
                        :inner-join nodes :on (= links:source nodes:id)
                        :where (and (= nodes:file $s1) (= links:type "id"))]
                       file))))))

(defun arcology-oracle--insert-section (results waiting &optional source backlinks)
  "Insert the similar notes section with RESULTS (a list or a message).
WAITING non-nil inserts a placeholder instead.  SOURCE, the buffer
visiting the node's file or the IDs it links to, marks linked notes;
BACKLINKS, the IDs of the nodes linking here, those under Backlinks."
  (let ((map arcology-oracle-section-map))
    (when (and (boundp 'org-roam-mode-map) (not (keymap-parent map)))
      (set-keymap-parent map org-roam-mode-map))
    (arcology-oracle--with-magit (results waiting map source backlinks)
      (let* ((listed (and (not waiting) (consp results)))
             (split (and listed (arcology-oracle--split-cutoff results)))
             ;; The count is of the notes shown: magit's own counted the fold of
             ;; those below the cut as one more.
             (magit-section-show-child-count nil))
        (magit-insert-section (arcology-oracle-similar)
          (magit-insert-heading
            (arcology-oracle--section-fill
             (if listed (format "Similar notes (%d)" (length (car split))) "Similar notes:") ""))
          (cond
           (waiting (arcology-oracle--section-say "Looking for similar notes…"))
           ((stringp results) (arcology-oracle--insert-message results "  "))
           ((null results) (arcology-oracle--section-say "No similar notes."))
           (t
            (pcase-let ((`(,above . ,below) split))
              (if above
                  (dolist (result above) (arcology-oracle--insert-section-entry result map source backlinks))
                (arcology-oracle--section-say "No note is similar enough."))
              (when below
                (magit-insert-section (arcology-oracle-similar-tail nil t)
                  (magit-insert-heading
                    (propertize (arcology-oracle--section-fill
                                 (format "— %d more below relevance (TAB shows them) —" (length below)) "  ")
                                'font-lock-face 'shadow))
                  (dolist (result below) (arcology-oracle--insert-section-entry result map source backlinks)))))))
          (insert "\n"))))))

(defun arcology-oracle--section-width ()
  "Return the columns an entry of the org-roam section may take.
The width of the window showing the org-roam buffer (its last
column is Emacs's), however narrow, else 80: a line made wider was
cut by Emacs at the edge with a $."
  (if-let ((window (get-buffer-window (current-buffer) t)))
      (max 8 (1- (window-width window)))
    80))

(defun arcology-oracle--section-fill (text indent)
  "Return TEXT after INDENT, on as many lines as the section's window needs.
Each line starts with INDENT; see `arcology-oracle--section-width'."
  (let ((width (arcology-oracle--section-width)))
    (with-temp-buffer
      (insert indent text)
      (let ((fill-column width)
            (fill-prefix indent))
        (fill-region (point-min) (point-max)))
      (string-trim-right (buffer-string)))))

(defun arcology-oracle--section-say (text)
  "Insert TEXT, a line of the section saying how it is, filled to its window."
  (insert (propertize (concat (arcology-oracle--section-fill text "  ") "\n") 'face 'shadow)))

(defun arcology-oracle--section-heading (result source backlinks)
  "Return the heading of RESULT's entry in the org-roam section.
Its score, title and marks (SOURCE and BACKLINKS as for
`arcology-oracle--insert-section'), then its outline path: each line
fits the window.  The title is cut so that the marks stay in view;
the marks go on a line of their own when they do not fit beside it,
as in the similar-notes window; the path gets what room is left."
  (let* ((width (arcology-oracle--section-width))
         (score (arcology-oracle--score-text result))
         (title (arcology-oracle--title-text (or (alist-get 'title result) "?")))
         (tags (arcology-oracle--result-tags result source backlinks))
         (room (- width (length score) 1))
         (beside (or (string-empty-p tags)
                     (>= (- room (string-width tags)) (min 10 (string-width title)))))
         (room (if beside (- room (string-width tags)) room))
         (path (cdr (arcology-oracle--path result)))
         (path-text (and path (mapconcat #'identity path " › ")))
         ;; A third of the title's room, at most, is kept for the path, when that
         ;; is enough to show some of it.
         (keep (if (and path (>= (/ room 3) 6)) (min (+ 3 (string-width path-text)) (/ room 3)) 0))
         (line (concat score " "
                       (propertize (arcology-oracle--one-line
                                    title (max 1 (- room keep)))
                                   'font-lock-face 'arcology-oracle-title)
                       (if beside tags "")))
         (left (- width (string-width line))))
    (concat line
            (if (and path (>= left 6))
                (concat " (" (propertize (arcology-oracle--one-line path-text (- left 3))
                                         'font-lock-face 'arcology-oracle-olp)
                        ")")
              "")
            (if beside "" (concat "\n  " (arcology-oracle--wrapped tags (- width 2) "  "))))))

(defun arcology-oracle--insert-section-entry (result map source backlinks)
  "Insert RESULT as an entry of the org-roam section, with keymap MAP.
SOURCE and BACKLINKS are as for `arcology-oracle--insert-section'."
  (arcology-oracle--with-magit (result map source backlinks)
    (magit-insert-section (arcology-oracle-similar-entry result)
      (magit-insert-heading
        (let ((text (arcology-oracle--section-heading result source backlinks)))
          (add-text-properties 0 (length text) `(arcology-oracle-result ,result keymap ,map) text)
          text))
      (when-let ((snippet (arcology-oracle--snippet result)))
        (insert (propertize (concat "  " (arcology-oracle--one-line
                                          snippet (- (arcology-oracle--section-width) 2))
                                    "\n")
                            'arcology-oracle-result result 'keymap map))))))

(provide 'arcology-oracle-similar-section)

;;; arcology-oracle-similar-section.el ends here
