;;; arcology-oracle-similar.el --- Similar notes side window and org-roam section -*- lexical-binding: t -*-

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

;; Notes similar to the heading at point, in two places:
;; `arcology-oracle-similar-mode' keeps a side window that follows point
;; from heading to heading, and `arcology-oracle-similar-section' adds
;; the list to the org-roam buffer (add it to `org-roam-mode-sections').
;; Neither waits for the daemon: an answer replaces the list when it
;; arrives, unless a newer request was made in between.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'subr-x)
(require 'org)
(require 'arcology-oracle-notes)

;; magit-section is optional; see `arcology-oracle--with-magit'.
(eval-when-compile (require 'magit-section nil t))

(declare-function org-roam-node-id "ext:org-roam-node" (node) t)
(declare-function org-roam-node-file "ext:org-roam-node" (node) t)
(declare-function org-roam-node-tags "ext:org-roam-node" (node) t)
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
(declare-function arcology-oracle-insert-link "arcology-oracle-links" ())
(declare-function arcology-oracle-copy-link "arcology-oracle-links" ())

;;; Side window

(defvar arcology-oracle-similar-buffer-name "*arcology-oracle similar*"
  "Name of the buffer listing the notes similar to the heading at point.")

(defvar arcology-oracle-similar-mode)   ; defined below by `define-minor-mode'

(defvar arcology-oracle--similar-generation 0
  "Counter of similar-notes requests; an answer to an older one is dropped.")

(defvar arcology-oracle--similar-request nil
  "The similar-notes request in flight, if any.")

(defvar arcology-oracle--similar-timer nil
  "Idle timer of the next similar-notes refresh.")

(defvar arcology-oracle--similar-unanswered nil
  "Non-nil when the similar list says the daemon did not answer it.
The daemon was down, asleep or busy (see `arcology-oracle--unanswered-p'):
the next command in the note asks again, as moving to another
heading does, so that the list comes back by itself with the daemon.")

(defvar-local arcology-oracle--similar-last-heading nil
  "Start of the heading whose similar notes were last asked for.")

(defvar-local arcology-oracle--similar-last-modified nil
  "Whether the buffer had unsaved edits when its similar notes were last asked for.")

(defvar-local arcology-oracle--similar-source nil
  "In the similar buffer: the buffer whose heading the list is about.")

(defvar-local arcology-oracle--similar-heading nil
  "In the similar buffer: the heading the list is about, (START END TITLE).
START and END are markers at the start and the end of its line in the
note (cut out, the two meet; END is nil for an empty first line).
Nil for a list about no heading in particular.")

(defvar arcology-oracle-similar-buffer-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'arcology-oracle-visit-result)
    (define-key map [mouse-2] #'arcology-oracle-visit-result)
    (define-key map [follow-link] 'mouse-face)
    (define-key map (kbd "n") #'arcology-oracle-similar-next)
    (define-key map (kbd "p") #'arcology-oracle-similar-previous)
    (define-key map (kbd "g") #'arcology-oracle-similar-refresh)
    (define-key map [remap save-buffer] #'arcology-oracle-save-listed-note)
    (define-key map [remap undo] #'arcology-oracle-undo-in-listed-note)
    (define-key map [remap undo-redo] #'arcology-oracle-undo-redo-in-listed-note)
    (define-key map [remap undo-only] #'arcology-oracle-undo-only-in-listed-note)
    (define-key map (kbd "i") #'arcology-oracle-insert-link)
    (define-key map (kbd "w") #'arcology-oracle-copy-link)
    (define-key map (kbd "+") #'arcology-oracle-similar-toggle-tail)
    ;; TAB as in the org-roam buffer and other lists, where it is a reflex.
    (define-key map (kbd "TAB") #'arcology-oracle-similar-next)
    (define-key map (kbd "<backtab>") #'arcology-oracle-similar-previous)
    map)
  "Keymap of the similar notes buffer.")

(define-derived-mode arcology-oracle-similar-buffer-mode special-mode "Similar"
  "Major mode of the buffer listing notes similar to the heading at point.
Each note listed can be visited, linked from the note you came from
\(the link written at point there, or copied), or asked about again.

\\{arcology-oracle-similar-buffer-mode-map}"
  (setq-local truncate-lines t)
  (setq-local revert-buffer-function
              (lambda (&rest _) (arcology-oracle-similar-refresh)))
  (add-hook 'window-size-change-functions #'arcology-oracle--similar-resized nil t))

(defvar-local arcology-oracle--similar-width nil
  "In the similar buffer: the width of the window its list was laid out for.")

(defun arcology-oracle--similar-resized (window)
  "Lay the similar list out again when WINDOW, showing it, changed its width.
Its lines are cut to the window they were made for: a narrower
window cut them again at its edge, the marks first, and a wider
one kept titles cut short."
  (with-current-buffer (window-buffer window)
    (when (and (get-text-property (point-min) 'arcology-oracle-title)
               (eq window (get-buffer-window (current-buffer) t))
               (not (eql (window-width window) arcology-oracle--similar-width)))
      (arcology-oracle--guard
        (let ((entry (get-text-property (window-point window) 'arcology-oracle-result)))
          (arcology-oracle--similar-render
           arcology-oracle--similar-source (get-text-property (point-min) 'arcology-oracle-title)
           arcology-oracle--similar-results arcology-oracle--similar-note)
          ;; Point stays on its entry, whose lines may be more or fewer now.
          (when entry
            (let ((pos (point-min)))
              (while (and pos (not (eq (get-text-property pos 'arcology-oracle-result) entry)))
                (setq pos (next-single-property-change pos 'arcology-oracle-result)))
              (when pos
                (goto-char pos)
                (set-window-point window pos)))))))))

(defun arcology-oracle-similar-next ()
  "Move to the next note in the list."
  (interactive)
  (let ((pos (next-single-property-change (point) 'arcology-oracle-entry)))
    (when (and pos (not (get-text-property pos 'arcology-oracle-entry)))
      (setq pos (next-single-property-change pos 'arcology-oracle-entry)))
    (if pos (goto-char pos) (message "No more notes"))))

(defun arcology-oracle-similar-previous ()
  "Move to the previous note in the list."
  (interactive)
  (let ((pos (previous-single-property-change (point) 'arcology-oracle-entry)))
    (when (and pos (not (get-text-property pos 'arcology-oracle-entry)))
      (setq pos (previous-single-property-change pos 'arcology-oracle-entry)))
    (when (and pos (not (get-text-property pos 'arcology-oracle-entry)))
      (setq pos nil))
    (if pos (goto-char pos) (message "No previous note"))))

(defun arcology-oracle--similar-buffer ()
  "Return the similar notes buffer, creating it when needed."
  (or (get-buffer arcology-oracle-similar-buffer-name)
      (with-current-buffer (get-buffer-create arcology-oracle-similar-buffer-name)
        (arcology-oracle-similar-buffer-mode)
        (current-buffer))))

(defun arcology-oracle--format-result (result &optional source width backlinks)
  "Return the text of one similar note or search RESULT, two to four lines.
The score first, then the title (cut so that both fit in WIDTH
columns, default the similar window's) and its marks (see
`arcology-oracle--result-tags', SOURCE is the buffer being read and
BACKLINKS the nodes linking to it), the marks on a line of their
own when the window is too narrow for both;
then the outline path, title first; then the snippet as plain text,
unless it only repeats the heading."
  (let* ((width (or width
                    ;; The window's own width (a side window on an 80-column
                    ;; terminal is 24 columns): lines made wider are cut by
                    ;; Emacs at the edge, the marks first.
                    (max 16 (- (or (when-let ((w (get-buffer-window arcology-oracle-similar-buffer-name t)))
                                     (window-width w))
                                   80)
                               1))))
         (title (arcology-oracle--title-text (or (alist-get 'title result) "?")))
         (score (arcology-oracle--score-text result))
         (tags (arcology-oracle--result-tags result source backlinks))
         (snippet (arcology-oracle--snippet result))
         (room (- width (length score) 2 (string-width tags)))
         (beside (or (string-empty-p tags) (>= room (min 10 (string-width title)))))
         (first (concat score "  "
                        (propertize (arcology-oracle--one-line
                                     title (if beside (max 10 room) (- width (length score) 2)))
                                    'face 'arcology-oracle-title)
                        (if beside
                            tags
                          (concat "\n  " (arcology-oracle--one-line tags (- width 2))))))
         (text (concat first "\n"
                       "  " (propertize (arcology-oracle--one-line (arcology-oracle--outline result)
                                                                   (- width 2))
                                        'face 'arcology-oracle-olp)
                       "\n"
                       (when snippet
                         (concat "  " (propertize (arcology-oracle--one-line snippet (- width 2))
                                                  'face 'arcology-oracle-snippet)
                                 "\n")))))
    (add-text-properties 0 (length first) '(arcology-oracle-entry t) text)
    (add-text-properties 0 (length text)
                         `(arcology-oracle-result ,result mouse-face highlight follow-link t
                                                  help-echo "RET, mouse-1: visit this note")
                         text)
    text))

(defvar-local arcology-oracle--similar-results nil
  "In the similar buffer: the results listed (or the message shown instead).
For \\[arcology-oracle-similar-toggle-tail], and to show them again as
another heading's while that heading's are asked for.")

(defvar-local arcology-oracle--similar-note nil
  "In the similar buffer: the note shown under its header (\"Asking about ...\").")

(defvar-local arcology-oracle--similar-tick nil
  "In the similar buffer: which version of the note's text the list answers.
Its `buffer-chars-modified-tick' when the list was asked for.  Asked
again about the same heading since edited, the list says it is asked
about anew: until the answer comes it is the old text's.")

(defvar-local arcology-oracle--similar-show-tail nil
  "In the similar buffer: non-nil shows the results below the relevance cut.")

(defun arcology-oracle--insert-results (results source)
  "Insert RESULTS for buffer SOURCE, those below the relevance cut folded.
The daemon marks them `below_cutoff' (asked with all=true); folded,
one line says how many there are and which key shows them."
  (pcase-let ((`(,above . ,below) (arcology-oracle--split-cutoff results))
              (backlinks (arcology-oracle--roam-backlinks
                          (and (buffer-live-p source)
                               (with-current-buffer source
                                 (save-excursion
                                   (goto-char (or arcology-oracle--similar-last-heading (point)))
                                   (org-entry-get nil "ID" t)))))))
    (if (null above)
        (insert (propertize "No note is similar enough." 'face 'shadow) "\n\n")
      (dolist (result above)
        (insert (arcology-oracle--format-result result source nil backlinks) "\n")))
    (when below
      (let ((start (point)))
        ;; Filled to the window: in a side window of 31 columns "+ to show"
        ;; was cut at its edge.
        (arcology-oracle--insert-message
         (substitute-command-keys
          (if arcology-oracle--similar-show-tail
              (format "— %d below relevance, \\<arcology-oracle-similar-buffer-mode-map>\\[arcology-oracle-similar-toggle-tail] to fold —"
                      (length below))
            (format "— %d more below relevance, \\<arcology-oracle-similar-buffer-mode-map>\\[arcology-oracle-similar-toggle-tail] to show —"
                    (length below)))))
        (put-text-property start (point) 'arcology-oracle-more t)
        (insert "\n"))
      (when arcology-oracle--similar-show-tail
        (dolist (result below)
          (insert (arcology-oracle--format-result result source nil backlinks) "\n"))))))

(defun arcology-oracle-similar-toggle-tail ()
  "Show or fold the similar notes below the daemon's relevance cut.
With none below it, say so and change nothing."
  (interactive)
  (if (not (arcology-oracle--below-cut-listed-p))
      (arcology-oracle--nothing-below-cut)
    (setq arcology-oracle--similar-show-tail (not arcology-oracle--similar-show-tail))
    (let ((title (get-text-property (point-min) 'arcology-oracle-title)))
      (arcology-oracle--similar-render arcology-oracle--similar-source title
                                       arcology-oracle--similar-results arcology-oracle--similar-note))))

(defun arcology-oracle--similar-render (source title results &optional note heading)
  "Fill the similar buffer for heading TITLE of buffer SOURCE.
RESULTS is the list of results, or a string to show instead (a
progress or error message); NOTE is shown under the header.
HEADING, the start of that heading in SOURCE, is what `i' checks
that point is still under; nil keeps the one recorded."
  (with-current-buffer (arcology-oracle--similar-buffer)
    (let* ((inhibit-read-only t)
           (window (get-buffer-window (current-buffer) t))
           (line (line-number-at-pos (if window (window-point window) (point))))
           (same (equal title (get-text-property (point-min) 'arcology-oracle-title))))
      (setq arcology-oracle--similar-source source
            arcology-oracle--similar-width (and window (window-width window)))
      (when (and heading (buffer-live-p source))
        (setq arcology-oracle--similar-heading
              (with-current-buffer source
                (let ((end (save-excursion (goto-char heading) (line-end-position))))
                  (list (copy-marker heading)
                        (and (> end heading) (copy-marker end))  ; none for an empty first line
                        (arcology-oracle--same-heading-title title))))))
      (setq arcology-oracle--similar-results results
            arcology-oracle--similar-note note)
      (erase-buffer)
      ;; The title whole, on as many lines as the window needs.
      (arcology-oracle--insert-message (concat "Similar to: " (arcology-oracle--title-text title)) nil 'bold)
      (put-text-property (point-min) (1+ (point-min)) 'arcology-oracle-title title)
      ;; A message, read whole: filled to the window, not cut at its edge.
      (when note (arcology-oracle--insert-message note))
      (insert "\n")
      (cond ((stringp results) (arcology-oracle--insert-message results))
            ((null results) (insert (propertize "No similar notes." 'face 'shadow) "\n"))
            (t (arcology-oracle--insert-results results source)))
      (goto-char (point-min))
      ;; Keep the reader's place when the same heading was refreshed.
      (when same (forward-line (1- line)))
      (when window
        (set-window-point window (point))
        (unless same (set-window-start window (point-min)))))))

(defun arcology-oracle--similar-about-p (source start)
  "Return non-nil when the similar list is about the heading at START in SOURCE.
The same place and the same title: a heading cut out leaves its
place to the next, and moved subtrees trade places.  A list about
no heading in particular is about any."
  (let ((heading (buffer-local-value 'arcology-oracle--similar-heading (arcology-oracle--similar-buffer))))
    (or (null heading)
        (pcase-let ((`(,start-marker ,_ ,title) heading))
          (and (eq (marker-buffer start-marker) source)
               (eql (marker-position start-marker) start)
               ;; Not cut out (its two markers met) to leave its place to a namesake.
               (not (arcology-oracle--similar-heading-gone-p))
               (equal title
                      (arcology-oracle--same-heading-title
                       (with-current-buffer source
                         (save-excursion (goto-char start) (plist-get (arcology-oracle--heading-context) :title))))))))))

(defun arcology-oracle--similar-heading-gone-p ()
  "Return non-nil when the similar list's heading was cut out of its note.
Its two markers met, or its note's buffer was killed (they point
nowhere): cheap enough for every command."
  (when-let* ((buffer (get-buffer arcology-oracle-similar-buffer-name))
              (heading (buffer-local-value 'arcology-oracle--similar-heading buffer)))
    (or (null (marker-buffer (nth 0 heading)))
        (and (nth 1 heading) (<= (marker-position (nth 1 heading)) (marker-position (nth 0 heading)))))))

(defun arcology-oracle--same-heading-title (title)
  "Return TITLE without statistics cookies (a box ticked is the same heading)."
  (string-trim (replace-regexp-in-string "\\[[0-9]*\\(?:%\\|/[0-9]*\\)\\]" "" (or title ""))))

(defun arcology-oracle--similar-visible-p ()
  "Return non-nil when the similar buffer is shown in some window."
  (when-let ((buffer (get-buffer arcology-oracle-similar-buffer-name)))
    (get-buffer-window buffer t)))

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

(defun arcology-oracle-similar-refresh (&optional quiet)
  "Ask the daemon for the notes similar to the heading at point.
In the similar notes buffer, ask again about the heading it lists.
The answer replaces the list when it arrives, unless a newer
request was made in between.  QUIET (automatic refreshes) reports
a daemon that is down only once."
  (interactive)
  (let ((source (if (derived-mode-p 'arcology-oracle-similar-buffer-mode)
                    arcology-oracle--similar-source
                  (current-buffer))))
    (unless (buffer-live-p source)
      (arcology-oracle--user-error "No buffer to find similar notes for"))
    (with-current-buffer source
      (unless (derived-mode-p 'org-mode)
        (arcology-oracle--user-error "Similar notes need an org-mode buffer"))
      (let* ((context (arcology-oracle--heading-context))
             (title (plist-get context :title))
             (tick (buffer-chars-modified-tick))
             (generation (cl-incf arcology-oracle--similar-generation)))
        (setq arcology-oracle--similar-unanswered nil
              arcology-oracle--similar-last-heading (plist-get context :start)
              arcology-oracle--similar-last-modified (and (buffer-modified-p) t))
        (arcology-oracle--http-cancel arcology-oracle--similar-request)
        (setq arcology-oracle--similar-request nil)
        ;; `point-min' of the similar buffer: the note's may be narrowed.
        (with-current-buffer (arcology-oracle--similar-buffer)
          (cond ((not (get-text-property (point-min) 'arcology-oracle-title))
                 (arcology-oracle--similar-render source title "Looking for similar notes…"
                                                  nil (plist-get context :start)))
                ((or (not (arcology-oracle--similar-about-p source (plist-get context :start)))
                     (not (eql tick arcology-oracle--similar-tick)))
                 ;; The list shown is another heading's (or this one's before its
                 ;; last edits) until the answer comes: say so.
                 (arcology-oracle--similar-render
                  arcology-oracle--similar-source (get-text-property (point-min) 'arcology-oracle-title)
                  arcology-oracle--similar-results
                  (format "Asking about %s…" (arcology-oracle--title-text title))))))
        ;; Cut out of its buffer, a private heading's text no longer says it is private.
        (if (arcology-oracle--private-here-p)
            (arcology-oracle--similar-render source title "This heading is private: nothing of it is sent."
                                             nil (plist-get context :start))
          (arcology-oracle--with-roam-dir
           (lambda (roam-dir)
             (when (and (= generation arcology-oracle--similar-generation)
                        (buffer-live-p source))
               (pcase-let ((`(,method ,path ,query ,json)
                            (with-current-buffer source
                              (arcology-oracle--similar-request-args context roam-dir)))
                           (unread (with-current-buffer source
                                     (when-let ((rel (and roam-dir (arcology-oracle--visited-file)
                                                          (arcology-oracle--relative-file
                                                           (arcology-oracle--visited-file) roam-dir))))
                                       (arcology-oracle--unread-reason rel)))))
                 (cond
                  (unread
                   (arcology-oracle--similar-render
                    source title (format "This note is not among the daemon's notes (%s): nothing of it is sent."
                                         unread)
                    nil (plist-get context :start)))
                  ((not method)
                   (arcology-oracle--similar-render
                    source title "Nothing to compare yet: this note is empty." nil (plist-get context :start)))
                  (t
                   (setq arcology-oracle--similar-request
                         (arcology-oracle--json
                          method path :query query :json json
                          :callback
                          (lambda (answer)
                            (when (and (= generation arcology-oracle--similar-generation) (buffer-live-p source))
                              (setq arcology-oracle--similar-request nil)
                              (let ((show (lambda (note)
                                            (when (and (= generation arcology-oracle--similar-generation)
                                                       (buffer-live-p source))
                                              (arcology-oracle--similar-render
                                               source title
                                               (arcology-oracle--similar-filter
                                                (arcology-oracle--results-of answer 'results) context)
                                               note (plist-get context :start))
                                              (with-current-buffer (arcology-oracle--similar-buffer)
                                                (setq arcology-oracle--similar-tick tick))))))
                                (if (equal (alist-get 'mode answer) "keyword")
                                    (arcology-oracle--keyword-note show)
                                  (funcall show nil)))))
                          :errback
                          (lambda (message)
                            (when (and (= generation arcology-oracle--similar-generation) (buffer-live-p source))
                              (setq arcology-oracle--similar-request nil)
                              (arcology-oracle--similar-failed source title message (plist-get context :start) quiet))))))))))
           (lambda (message)
             (when (and (= generation arcology-oracle--similar-generation) (buffer-live-p source))
               (arcology-oracle--similar-failed source title message (plist-get context :start) quiet)))))))))

(defun arcology-oracle--keyword-note (callback)
  "Call CALLBACK with the note saying why the similar notes are keyword matches.
The daemon's /status says which is true: its embedder failing (its
error), headings still waiting for their vectors, or neither."
  (arcology-oracle--json
   "GET" "/status"
   :callback (lambda (status) (funcall callback (arcology-oracle--keyword-note-text status)))
   :errback (lambda (_) (funcall callback "(keyword matches: no vectors to compare with)"))))

(defun arcology-oracle--keyword-note-text (status)
  "Return the keyword matches' note for the daemon's /status answer STATUS."
  (let* ((embedder (alist-get 'embedder status))
         (failure (alist-get 'error embedder))
         (pending (alist-get 'pending status)))
    (cond
     ((and (stringp failure) (not (string-empty-p failure)))
      ;; Its error names the model and the host.
      (format "(keyword matches: the embedder fails: %s)" (arcology-oracle--one-line failure 160)))
     ((and (numberp pending) (> pending 0))
      (format "(keyword matches: embeddings are not ready, %d heading%s to embed)"
              pending (if (= pending 1) "" "s")))
     (t "(keyword matches: no vectors to compare with)"))))

(defun arcology-oracle--similar-failed (source title message start quiet)
  "Show MESSAGE, a failure, as the list of heading TITLE at START in SOURCE.
Also in the echo area (QUIET as for `arcology-oracle--report').
When the daemon did not answer, the list says when it asks again."
  (let ((unanswered (arcology-oracle--unanswered-p message)))
    (arcology-oracle--similar-render
     source title
     (if unanswered
         (concat message
                 (substitute-command-keys
                  "\n\nAsked again at your next command in the note; \
\\<arcology-oracle-similar-buffer-mode-map>\\[arcology-oracle-similar-refresh] asks now."))
       message)
     nil start)
    (setq arcology-oracle--similar-unanswered unanswered)
    (arcology-oracle--report message quiet)))

(defun arcology-oracle--similar-timer-fn (buffer)
  "Refresh the similar notes for BUFFER, if it is still current and shown.
Otherwise (the minibuffer was opened meanwhile, say) the next command
in BUFFER asks again: the list must not stay another heading's."
  (setq arcology-oracle--similar-timer nil)
  (arcology-oracle--guard
    (when (buffer-live-p buffer)
      (if (and (eq buffer (window-buffer (selected-window)))
               (arcology-oracle--similar-visible-p))
          (with-current-buffer buffer
            (when arcology-oracle-similar-mode
              (arcology-oracle-similar-refresh t)))
        (with-current-buffer buffer
          (setq arcology-oracle--similar-last-heading nil))))))

(defun arcology-oracle--similar-schedule (delay)
  "Refresh the similar notes for the current buffer after DELAY idle seconds."
  (when (timerp arcology-oracle--similar-timer)
    (cancel-timer arcology-oracle--similar-timer))
  (setq arcology-oracle--similar-timer
        (run-with-idle-timer delay nil #'arcology-oracle--similar-timer-fn (current-buffer))))

(defvar-local arcology-oracle--similar-last-line nil
  "The line of the heading whose similar notes were last asked for, as it read.")

(defun arcology-oracle--similar-post-command-h ()
  "Schedule a refresh when point has moved to another heading.
Also when the buffer's unsaved edits began or were all undone since
the list was asked for (the list is then asked by the heading's
text, or again by the saved note), when the heading's line changed
\(renamed: the list checks its title), when the list's heading
was cut out, and after any command while the list says the daemon
did not answer (`arcology-oracle--similar-unanswered').  This runs
after every command, so it only compares two positions, three flags
and a line."
  (when (arcology-oracle--similar-visible-p)
    (let* ((start (arcology-oracle--heading-start))
           (modified (and (buffer-modified-p) t))
           (line (save-excursion (goto-char start)
                                 (buffer-substring-no-properties (point) (line-end-position)))))
      (unless (and (not arcology-oracle--similar-unanswered)
                   (eql start arcology-oracle--similar-last-heading)
                   (eq modified arcology-oracle--similar-last-modified)
                   (equal line arcology-oracle--similar-last-line)
                   (not (arcology-oracle--similar-heading-gone-p))
                   (eq (current-buffer)
                       (buffer-local-value 'arcology-oracle--similar-source
                                           (arcology-oracle--similar-buffer))))
        (setq arcology-oracle--similar-last-heading start
              arcology-oracle--similar-last-modified modified
              arcology-oracle--similar-last-line line)
        (arcology-oracle--similar-schedule arcology-oracle-idle-delay)))))

(defun arcology-oracle--similar-after-save-h ()
  "Refresh the similar notes after a save, once the daemon has re-read the file.
The daemon waits for writes to settle and re-indexes the file, so
refresh a little later than after a move."
  (when (arcology-oracle--similar-visible-p)
    (arcology-oracle--similar-schedule (max 1.0 arcology-oracle-idle-delay))))

;;;###autoload
(define-minor-mode arcology-oracle-similar-mode
  "Show notes similar to the heading at point in a side window.
The list follows point from heading to heading after
`arcology-oracle-idle-delay' idle seconds, and after each save.
Hiding the window pauses it; `arcology-oracle-similar-show' brings
it back.  \\<arcology-oracle-similar-buffer-mode-map>In the list, \
\\[arcology-oracle-visit-result] visits a note and \
\\[arcology-oracle-similar-refresh] asks again."
  :lighter " Similar"
  :group 'arcology-oracle
  (if arcology-oracle-similar-mode
      (if (not (derived-mode-p 'org-mode))
          (progn (setq arcology-oracle-similar-mode nil)
                 (message "arcology-oracle: similar notes need an org-mode buffer"))
        (add-hook 'post-command-hook #'arcology-oracle--similar-post-command-h nil t)
        (add-hook 'after-save-hook #'arcology-oracle--similar-after-save-h nil t)
        (setq arcology-oracle--similar-last-heading nil)
        (when (called-interactively-p 'any)
          (arcology-oracle-similar-show)))
    (remove-hook 'post-command-hook #'arcology-oracle--similar-post-command-h t)
    (remove-hook 'after-save-hook #'arcology-oracle--similar-after-save-h t)))

;;;###autoload
(defun arcology-oracle-similar-turn-on ()
  "Turn on `arcology-oracle-similar-mode' in an org buffer visiting a file.
For `org-mode-hook': buffers without a file, such as the answers
buffer, are left alone."
  (when (and buffer-file-name (derived-mode-p 'org-mode))
    ;; C-c C-o on a line of a conversation answer's Sources: list opens that source.
    (add-hook 'org-open-at-point-functions #'arcology-oracle--open-cited-source nil t)
    (arcology-oracle-similar-mode 1)))

;;;###autoload
(define-globalized-minor-mode arcology-oracle-global-similar-mode
  arcology-oracle-similar-mode arcology-oracle-similar-turn-on
  :group 'arcology-oracle)

;;;###autoload
(defun arcology-oracle-similar-show ()
  "Show the similar notes window and fill it for the heading at point.
A window already showing the list is used again (see
`arcology-oracle--similar-action'): the list is asked for anew."
  (interactive)
  (unless (derived-mode-p 'org-mode)
    (arcology-oracle--user-error "Similar notes need an org-mode buffer"))
  (unless arcology-oracle-similar-mode (arcology-oracle-similar-mode 1))
  (arcology-oracle--display (arcology-oracle--similar-buffer) (arcology-oracle--similar-action))
  (arcology-oracle-similar-refresh))

(defun arcology-oracle--similar-action ()
  "Return the `display-buffer' action for the similar notes window.
A window of the selected frame already showing the list is used
again, never a second one.  Else the action is
`arcology-oracle-similar-display-action', unless the org-roam buffer
is shown: then the two share its place, the similar notes below it
\(the next slot of its side window, or a split of its window), so
that the note keeps its width."
  (let* ((roam (seq-find (lambda (w) (with-current-buffer (window-buffer w)
                                       (derived-mode-p 'org-roam-mode)))
                         (window-list nil 'no-minibuffer)))
         (action
          (cond
           ((null roam) arcology-oracle-similar-display-action)
           ((window-parameter roam 'window-side)
            `(display-buffer-in-side-window
              (side . ,(window-parameter roam 'window-side))
              (slot . ,(1+ (or (window-parameter roam 'window-slot) 0)))))
           (t `(display-buffer-in-direction (window . ,roam) (direction . below)
                                            (window-height . 0.5)))))
         (functions (car action)))
    (cons (cons #'display-buffer-reuse-window
                (if (functionp functions) (list functions) functions))
          (cdr action))))

;;; org-roam section

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

(defun arcology-oracle--section-cached (id)
  "Return the fresh cache entry (TIME . RESULTS) for node ID, or nil.
A failure (RESULTS a message) is returned only to the section's own
renders (see `arcology-oracle--section-own-render'): any other (g,
org-roam showing the node again) asks the daemon again, so a failure
never outlives the daemon coming back."
  (let ((entry (gethash id arcology-oracle--section-cache)))
    (when (and entry (< (- (float-time) (car entry)) arcology-oracle--section-cache-seconds)
               (or (consp (cdr entry)) (null (cdr entry)) arcology-oracle--section-own-render))
      entry)))

(defun arcology-oracle--section-render-again (buffer)
  "Render the org-roam BUFFER again, point kept in its windows."
  (when (fboundp 'org-roam-buffer-render-contents)
    (with-current-buffer buffer
      (let ((points (mapcar (lambda (w) (cons w (window-point w)))
                            (get-buffer-window-list buffer nil t)))
            (pt (point))
            (arcology-oracle--section-own-render t))
        (org-roam-buffer-render-contents)
        (goto-char (min pt (point-max)))
        (dolist (wp points)
          (set-window-point (car wp) (min (cdr wp) (point-max))))))))

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
      (arcology-oracle--guard (arcology-oracle--section-render-again buffer)))))

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
       (when-let ((file (ignore-errors (org-roam-node-file node))))
         (or (find-buffer-visiting file) (arcology-oracle--roam-linked-ids file)))
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

(defun arcology-oracle--roam-linked-ids (file)
  "Return the IDs the notes of FILE link to, from org-roam's database, or nil."
  (when (fboundp 'org-roam-db-query)
    (ignore-errors
      (mapcar #'car (org-roam-db-query
                     [:select :distinct [links:dest] :from links
                      :inner-join nodes :on (= links:source nodes:id)
                      :where (and (= nodes:file $s1) (= links:type "id"))]
                     file)))))

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
            (if listed (format "Similar notes (%d)" (length (car split))) "Similar notes:"))
          (cond
           (waiting (insert (propertize "  Looking for similar notes…\n" 'face 'shadow)))
           ((stringp results) (arcology-oracle--insert-message results "  "))
           ((null results) (insert (propertize "  No similar notes.\n" 'face 'shadow)))
           (t
            (pcase-let ((`(,above . ,below) split))
              (if above
                  (dolist (result above) (arcology-oracle--insert-section-entry result map source backlinks))
                (insert (propertize "  No note is similar enough.\n" 'face 'shadow)))
              (when below
                (magit-insert-section (arcology-oracle-similar-tail nil t)
                  (magit-insert-heading
                    (propertize (format "  — %d more below relevance (TAB shows them) —" (length below))
                                'font-lock-face 'shadow))
                  (dolist (result below) (arcology-oracle--insert-section-entry result map source backlinks)))))))
          (insert "\n"))))))

(defun arcology-oracle--section-width ()
  "Return the columns an entry of the org-roam section may take.
The width of the window showing the org-roam buffer (its last
column is Emacs's), else 80."
  (if-let ((window (get-buffer-window (current-buffer) t)))
      (max 20 (1- (window-width window)))
    80))

(defun arcology-oracle--insert-section-entry (result map source backlinks)
  "Insert RESULT as an entry of the org-roam section, with keymap MAP.
SOURCE and BACKLINKS are as for `arcology-oracle--insert-section'."
  (arcology-oracle--with-magit (result map source backlinks)
    (magit-insert-section (arcology-oracle-similar-entry result)
      (magit-insert-heading
        (let* ((score (arcology-oracle--score-text result))
               (tags (arcology-oracle--result-tags result source backlinks))
               (text (concat score " "
                            ;; Cut so that the marks stay in the window, the path after
                            ;; them cut by Emacs at its edge.
                            (propertize (arcology-oracle--one-line
                                         (arcology-oracle--title-text (or (alist-get 'title result) "?"))
                                         (max 10 (- (arcology-oracle--section-width)
                                                    (length score) 1 (string-width tags))))
                                        'font-lock-face 'arcology-oracle-title)
                            tags
                            (let ((path (cdr (arcology-oracle--path result))))
                              (if path
                                  (concat " (" (propertize (mapconcat #'identity path " › ")
                                                           'font-lock-face 'arcology-oracle-olp)
                                          ")")
                                "")))))
          (add-text-properties 0 (length text) `(arcology-oracle-result ,result keymap ,map) text)
          text))
      (when-let ((snippet (arcology-oracle--snippet result)))
        (insert (propertize (concat "  " (arcology-oracle--one-line
                                          snippet (- (arcology-oracle--section-width) 2))
                                    "\n")
                            'arcology-oracle-result result 'keymap map))))))

(provide 'arcology-oracle-similar)

;;; arcology-oracle-similar.el ends here
