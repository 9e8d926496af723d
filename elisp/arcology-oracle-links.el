;;; arcology-oracle-links.el --- Link suggestions and inserting links to similar notes -*- lexical-binding: t -*-

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

;; Putting links in, the step after "related":
;;
;; - in the similar notes buffer, `arcology-oracle-insert-link' (i)
;;   writes [[id:ID][Title]] of the note at point into the buffer the
;;   list is about, and `arcology-oracle-copy-link' (w) copies it;
;; - `arcology-oracle-suggest-links' lists the notes the current note
;;   does not link to yet (GET /suggest-links), each with the paragraph
;;   of this note where the link belongs: RET visits, i inserts the
;;   link there, x rejects the suggestion for good (see
;;   arcology-oracle-rejections.el), g asks again.
;;
;; Links are made by org's own `org-link-make-string', so they are the
;; plain id: links org-roam records on save.  Each insertion is one
;; undo step.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'subr-x)
(require 'org)
(require 'org-element)
(require 'ol)
(require 'arcology-oracle-http)
(require 'arcology-oracle-notes)

(declare-function arcology-oracle-similar-next "arcology-oracle-similar-buffer" ())
(declare-function arcology-oracle-links-reject "arcology-oracle-rejections" ())
(declare-function arcology-oracle-links-unreject "arcology-oracle-rejections" ())
(declare-function arcology-oracle-link-rejections "arcology-oracle-rejections" (&optional all))
(declare-function arcology-oracle-similar-previous "arcology-oracle-similar-buffer" ())
(defvar arcology-oracle--similar-source)
(declare-function arcology-oracle--similar-about-p "arcology-oracle-similar-buffer" (source start))
(declare-function arcology-oracle-similar-refresh "arcology-oracle-similar" (&optional quiet))

(defcustom arcology-oracle-insert-link-at 'paragraph-end
  "Where `arcology-oracle-insert-link' writes a link in the note.
`paragraph-end': at the end of the paragraph around point in the
note (the default); `point': at point (after the word point is
in).  Either way, a link never goes into a heading line, a property
or other drawer, a block, a table or a keyword line: from there it
goes at the end of the first paragraph of the heading's body, or on
a new line under the heading when the body has no paragraph."
  :type '(choice (const :tag "At the end of the paragraph" paragraph-end)
                 (const :tag "At point" point))
  :group 'arcology-oracle)

(defvar arcology-oracle-links-buffer-name "*arcology-oracle links*"
  "Name of the buffer listing link suggestions.")

;;; Making and inserting links

(defun arcology-oracle--link-for (result)
  "Return the org link to the node of RESULT, [[id:ID][Title]]."
  (let ((id (alist-get 'node_id result)))
    (unless id (arcology-oracle--user-error "This note has no ID to link to"))
    (org-link-make-string (concat "id:" id)
                          (org-link-display-format (or (alist-get 'title result) id)))))

(defun arcology-oracle--insert-link-here (link &optional own-line)
  "Insert LINK at point as one undo step, a space apart from the words around it.
OWN-LINE non-nil puts it on a line of its own instead.  A paragraph
that already links to LINK's target is refused: a second link there
says nothing more."
  (unless own-line
    (when-let* ((target (and (string-match "\\`\\[\\[\\([^]]+\\)\\]" link) (match-string 1 link)))
                (element (org-element-at-point))
                (begin (or (org-element-property :contents-begin element) (org-element-property :begin element)))
                (end (or (org-element-property :contents-end element) (org-element-property :end element))))
      (when (save-excursion (goto-char begin) (search-forward (concat "[[" target "]") end t))
        (arcology-oracle--user-error "That paragraph already links to it"))))
  (undo-boundary)
  (let ((change (prepare-change-group)))
    (unwind-protect
        (progn
          (activate-change-group change)
          (cond (own-line
                 (unless (bolp) (insert "\n"))
                 (insert link "\n")
                 (backward-char))
                (t
                 (when (and (not (bolp)) (not (memq (char-before) '(?\s ?\t ?\n ?\())))
                   (insert " "))
                 (insert link)
                 ;; Before a word (at point, or on a bullet): a space after it too.
                 (when (and (not (eobp)) (eq (char-syntax (char-after)) ?w))
                   (save-excursion (insert " "))))))
      (accept-change-group change)
      (undo-amalgamate-change-group change)))
  (undo-boundary))

(defun arcology-oracle--prose-paragraph (pos)
  "Return the paragraph of prose at POS, or nil.
A paragraph in no drawer, block or other container but list items
\(see `arcology-oracle--prose-at-p').  On a list item's bullet, the
paragraph that item's first line starts."
  (save-excursion
    (goto-char pos)
    (let ((element (org-element-at-point)))
      (when (memq (org-element-type element) '(plain-list item))
        ;; At the bullet: the text of its line, if the line has any.
        (end-of-line)
        (skip-chars-backward " \t")
        (setq element (org-element-at-point)))
      (and (eq (org-element-type element) 'paragraph)
           (arcology-oracle--prose-at-p (point))
           ;; Drawer lines ending in a CR (a CRLF drawer in a file Emacs reads as
           ;; LF) are a paragraph to Org here, but a drawer to the daemon and on save.
           (not (save-excursion
                  (goto-char (org-element-property :contents-begin element))
                  (re-search-forward "^[ \t]*:[[:alnum:]_-]+:[ \t\r]*$"
                                     (org-element-property :contents-end element) t)))
           element))))

(defun arcology-oracle--paragraph-text-end (paragraph)
  "Return the end of the text of PARAGRAPH (see `arcology-oracle--text-end')."
  (save-excursion
    (goto-char (org-element-property :contents-end paragraph))
    (arcology-oracle--text-end)))

(defun arcology-oracle--text-end ()
  "Return where the text before point ends.
That is before blanks, newlines and CRs, and before a line break
\(\\\\) ending it, which a link after it would turn into two
backslashes."
  (save-excursion
    (skip-chars-backward " \t\n\r")
    ;; Two backslashes, not a third before them (Org's line break).
    (when (and (looking-back "\\\\\\\\" (max (point-min) (- (point) 2)))
               (not (eq (char-before (- (point) 2)) ?\\)))
      (backward-char 2)
      (skip-chars-backward " \t"))
    (point)))

(defun arcology-oracle--outside-objects (pos paragraph)
  "Return POS, or the end of the object or word of PARAGRAPH around it.
A link written inside another link's description, or inside
verbatim text or other objects, would break it; inside a word, it
would make two.  Before PARAGRAPH's text (on its bullet), its first
character."
  (save-excursion
    (goto-char (max pos (org-element-property :contents-begin paragraph)))
    (let ((object (org-element-context))
          (text-end (arcology-oracle--paragraph-text-end paragraph))
          outermost)
      (while (and object (not (eq (org-element-type object) 'paragraph)))
        (setq outermost object
              object (org-element-property :parent object)))
      (cond ((null outermost)
             ;; Inside a word (where C-s leaves point), after it: never two words of one.
             (when (and (memq (char-syntax (or (char-before) ?\s)) '(?w ?_))
                        (memq (char-syntax (or (char-after) ?\s)) '(?w ?_)))
               (skip-syntax-forward "w_"))
             (min (point) text-end))
            ;; A line break ends after its newline: the link goes before it.
            ((eq (org-element-type outermost) 'line-break)
             (goto-char (org-element-property :begin outermost))
             (skip-chars-backward " \t")
             (point))
            (t (goto-char (org-element-property :end outermost))
               (skip-chars-backward " \t")
               (min (point) text-end))))))

(defun arcology-oracle--body-start ()
  "Return the start of the body of the heading at point, after its meta data.
That is after the heading line, planning lines, clock lines and
drawers; before the first heading, after the comments, the file's
property drawer and its keywords, but before a keyword that names
or captions the element after it."
  (save-excursion
    (if (not (org-before-first-heading-p))
        (org-end-of-meta-data t)
      (goto-char (point-min))
      (let ((more t))
        (while more
          (skip-chars-forward " \t\n")
          (beginning-of-line)
          (let ((element (and (not (eobp)) (org-element-at-point))))
            (if (and (memq (org-element-type element) '(comment property-drawer keyword))
                     (> (org-element-property :end element) (point)))
                (progn (goto-char (org-element-property :end element))
                       ;; The last line, with no newline after it: nothing follows.
                       (setq more (not (eobp))))
              (setq more nil))))))
    (point)))

(defun arcology-oracle--first-paragraph (start)
  "Return the first paragraph of prose from START to the next heading, or nil.
Only the section's own elements and the first lines of its list
items are looked at: never a paragraph in a drawer or a block."
  (save-excursion
    (goto-char start)
    (let ((end (if (re-search-forward org-outline-regexp-bol nil t) (match-beginning 0) (point-max)))
          found)
      (goto-char start)
      (while (and (not found) (< (point) end))
        (let ((element (org-element-at-point)))
          (setq found (and (memq (org-element-type element) '(paragraph plain-list))
                           (arcology-oracle--prose-paragraph (point))))
          (goto-char (max (1+ (point)) (org-element-property :end element)))))
      found)))

(defun arcology-oracle--link-place (mode)
  "Return the place for a link from point, by MODE: (POSITION OWN-LINE WHERE).
MODE is `point' or `paragraph-end' (see `arcology-oracle-insert-link-at').
OWN-LINE says the link needs a line of its own; WHERE says in words
where it is, for the message.  A link only ever goes at the end of
a paragraph of prose (or, by MODE, into one, outside its links and
other objects), or on a line of its own where the heading's body
starts."
  (let* ((start (arcology-oracle--body-start))
         (top (org-before-first-heading-p))
         (paragraph (and (>= (point) start) (arcology-oracle--prose-paragraph (point)))))
    (cond
     ((and paragraph (eq mode 'point))
      (list (arcology-oracle--outside-objects (point) paragraph) nil "at point"))
     (paragraph (list (arcology-oracle--paragraph-text-end paragraph) nil "at the end of the paragraph"))
     ((setq paragraph (arcology-oracle--first-paragraph start))
      (list (arcology-oracle--paragraph-text-end paragraph) nil
            (if top "at the end of the note's first paragraph" "at the end of the first paragraph under the heading")))
     (t (list start t (if top "on a new line at the top of the note" "on a new line under the heading"))))))

(defun arcology-oracle--insert-link-in-note (link target)
  "Insert LINK to the node TARGET at the place point stands for, by the option.
See `arcology-oracle-insert-link-at'.  Return a phrase saying where,
with the line.  Refuse a link to a node enclosing that place: it
is the note itself."
  (pcase-let ((`(,pos ,own-line ,where) (arcology-oracle--link-place arcology-oracle-insert-link-at)))
    (goto-char pos)
    (when (member target (arcology-oracle--enclosing-ids))
      (arcology-oracle--user-error "That is the note you are in: no link to itself"))
    (arcology-oracle--insert-link-here link own-line)
    (format "%s, line %d" where (line-number-at-pos nil t))))  ; the file's, as the lists say

(defun arcology-oracle--result-at-point ()
  "Return the note listed at point, or signal a user error."
  (or (get-text-property (point) 'arcology-oracle-result)
      (arcology-oracle--user-error "No note at point")))

;;;###autoload
(defun arcology-oracle-insert-link ()
  "Insert a link to the note at point into the buffer the list is about.
It goes at the end of the paragraph around point in that buffer, or
at point (see `arcology-oracle-insert-link-at'), never into a
heading line, a drawer, a block or a keyword line; the message
says where.  One undo removes it."
  (interactive)
  (let* ((result (arcology-oracle--result-at-point))
         (link (arcology-oracle--link-for result))
         (source arcology-oracle--similar-source)
         where)
    (unless (buffer-live-p source) (arcology-oracle--user-error "The buffer these notes are about is gone"))
    (with-current-buffer source
      (when buffer-read-only (arcology-oracle--user-error "Buffer %s is read-only" (buffer-name)))
      (let ((window (arcology-oracle--last-window-of source)))
        (save-excursion
          (when window (goto-char (window-point window)))
          (unless (arcology-oracle--similar-about-p source (save-restriction (widen) (arcology-oracle--heading-start)))
            ;; Point moved on (or the heading changed) before the new list came: this
            ;; one is another heading's.  Its list is asked for now.
            (arcology-oracle-similar-refresh t)
            (arcology-oracle--user-error
             "This list is about another heading than the one at point in %s: its list is on its way"
             (buffer-name source)))
          (setq where (arcology-oracle--insert-link-in-note link (alist-get 'node_id result)))
          (when window (set-window-point window (point))))))
    (message "Inserted a link to \"%s\" into %s, %s" (org-link-display-format link) (buffer-name source) where)))

;;;###autoload
(defun arcology-oracle-copy-link ()
  "Copy the org link to the note at point to the kill ring."
  (interactive)
  (let ((link (arcology-oracle--link-for (arcology-oracle--result-at-point))))
    (kill-new link)
    ;; The title, not [[id:36fb47dd-...][...]]: the link itself is on the kill ring.
    (message "Copied the link to \"%s\" (%s pastes it)" (org-link-display-format link)
             (substitute-command-keys "\\[yank]"))))

;;; Suggestions buffer

(defvar-local arcology-oracle--links-source nil
  "In the suggestions buffer: the buffer of the note the suggestions are for.")

(defvar-local arcology-oracle--links-node nil
  "In the suggestions buffer: the ID of the note the suggestions are for.")

(defvar-local arcology-oracle--links-own nil
  "In the suggestions buffer: the IDs of the nodes enclosing the note's heading.
The note itself, its ancestors and its file: a link to any of them
would point at the note being read, so none is offered.")

(defvar arcology-oracle-links-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'arcology-oracle-visit-result)
    (define-key map [mouse-2] #'arcology-oracle-visit-result)
    (define-key map (kbd "i") #'arcology-oracle-links-insert)
    (define-key map (kbd "x") #'arcology-oracle-links-reject)
    (define-key map (kbd "u") #'arcology-oracle-links-unreject)
    (define-key map (kbd "R") #'arcology-oracle-link-rejections)
    (define-key map (kbd "+") #'arcology-oracle-links-toggle-tail)
    (define-key map (kbd "g") #'arcology-oracle-links-refresh)
    (define-key map [remap save-buffer] #'arcology-oracle-save-listed-note)
    (define-key map [remap undo] #'arcology-oracle-undo-in-listed-note)
    (define-key map [remap undo-redo] #'arcology-oracle-undo-redo-in-listed-note)
    (define-key map [remap undo-only] #'arcology-oracle-undo-only-in-listed-note)
    (define-key map (kbd "n") #'arcology-oracle-similar-next)
    (define-key map (kbd "p") #'arcology-oracle-similar-previous)
    (define-key map (kbd "TAB") #'arcology-oracle-similar-next)
    (define-key map (kbd "<backtab>") #'arcology-oracle-similar-previous)
    map)
  "Keymap of the link suggestions buffer.")

(define-derived-mode arcology-oracle-links-mode special-mode "Links"
  "Major mode of the buffer of link suggestions for a note.
Each suggestion can be visited, inserted into its paragraph of the
note, or rejected for good; the list can be asked for again.

\\{arcology-oracle-links-mode-map}"
  (setq-local truncate-lines t)
  (setq-local revert-buffer-function (lambda (&rest _) (arcology-oracle-links-refresh)))
  (add-hook 'window-size-change-functions #'arcology-oracle--links-resized nil t))

(defvar-local arcology-oracle--links-shown nil
  "In the suggestions buffer: (WIDTH . SUGGESTIONS), what it shows.
Laid out for WIDTH columns; SUGGESTIONS as
`arcology-oracle--links-render' takes them.")

(defun arcology-oracle--links-resized (window)
  "Lay the suggestions out again when WINDOW, showing them, changed its width.
Their lines are cut to the window they were made for: a narrower
one cut them again at its edge with a $."
  (with-current-buffer (window-buffer window)
    (when (and arcology-oracle--links-shown
               (eq window (get-buffer-window (current-buffer) t))
               (not (eql (car arcology-oracle--links-shown) (arcology-oracle--links-width))))
      (arcology-oracle--guard
        (let ((start (window-start window)))
          (arcology-oracle--links-render arcology-oracle--links-source arcology-oracle--links-node
                                         (arcology-oracle--links-title) (cdr arcology-oracle--links-shown))
          (set-window-point window (point))
          (set-window-start window (min start (point-max)) t))))))

(defun arcology-oracle--links-width ()
  "Return the columns a line of the suggestions buffer may take.
Its window's width less one (80 when it is not shown): a longer line
was cut by Emacs at the edge with a $, where the similar notes cut
theirs with an ellipsis."
  (max 16 (1- (or (when-let ((w (get-buffer-window arcology-oracle-links-buffer-name t)))
                    (window-width w))
                  80))))

(defun arcology-oracle--format-suggestion (suggestion &optional width)
  "Return the text of one link SUGGESTION of the daemon.
Each line is cut to WIDTH columns (default the buffer's window's, see
`arcology-oracle--links-width') with an ellipsis; the title is cut
so that its marks stay in view."
  (let* ((width (or width (arcology-oracle--links-width)))
         (title (org-link-display-format (or (alist-get 'title suggestion) "?")))
         (at (alist-get 'heading suggestion))
         (paragraph (alist-get 'paragraph suggestion))
         (score (arcology-oracle--score-text suggestion))
         (marks (string-join (delq nil (list (and (equal (alist-get 'role suggestion) "conversation")
                                                  "conversation")
                                             (and (arcology-oracle--weak-p suggestion) "weak")))
                             " "))
         (room (- width (string-width score) 2 (if (string-empty-p marks) 0 (1+ (string-width marks)))))
         (first (concat score "  "
                        (propertize (arcology-oracle--one-line title (max 10 room))
                                    'face 'arcology-oracle-title)
                        (if (string-empty-p marks)
                            ""
                          (concat " " (propertize marks 'face 'arcology-oracle-tag)))))
         (text (concat
                first "\n"
                (propertize (concat "  " (arcology-oracle--one-line
                                          (format "in %s, line %d"
                                                  (org-link-display-format (or (alist-get 'heading at) ""))
                                                  (or (alist-get 'end_line paragraph) (alist-get 'line at) 1))
                                          (- width 2))
                                    "\n")
                            'face 'arcology-oracle-olp)
                (when paragraph
                  (mapconcat (lambda (line)
                               (concat "  > " (propertize (arcology-oracle--one-line
                                                           (org-link-display-format line) (- width 4))
                                                          'face 'arcology-oracle-snippet)
                                       "\n"))
                             (seq-take (split-string (alist-get 'text paragraph) "\n") 3)
                             "")))))
    (add-text-properties 0 (length first) '(arcology-oracle-entry t) text)
    (add-text-properties 0 (length text)
                         `(arcology-oracle-result ,suggestion mouse-face highlight
                                                  help-echo "RET: visit, i: insert the link, x: reject")
                         text)
    text))

(defvar-local arcology-oracle--links-show-tail nil
  "In the suggestions buffer: non-nil shows those below the relevance cut.")

(defvar-local arcology-oracle--links-last nil
  "In the suggestions buffer: the daemon's last list, to render it again.")

(defun arcology-oracle-links-toggle-tail ()
  "Show or fold the suggestions below the daemon's relevance cut.
With none below it, say so and change nothing."
  (interactive)
  (if (not (arcology-oracle--below-cut-listed-p))
      (arcology-oracle--nothing-below-cut)
    (setq arcology-oracle--links-show-tail (not arcology-oracle--links-show-tail))
    (arcology-oracle--links-render arcology-oracle--links-source arcology-oracle--links-node
                                   (arcology-oracle--links-title) arcology-oracle--links-last)))

(defun arcology-oracle--links-render (source node title suggestions)
  "Fill the suggestions buffer for NODE titled TITLE of buffer SOURCE.
SUGGESTIONS is the daemon's list, or a string to show instead.  Those
below the daemon's relevance cut (`below_cutoff', asked with
all=true) are folded behind one line."
  (with-current-buffer (get-buffer-create arcology-oracle-links-buffer-name)
    (unless (derived-mode-p 'arcology-oracle-links-mode) (arcology-oracle-links-mode))
    (let ((inhibit-read-only t)
          (line (line-number-at-pos)))
      (setq arcology-oracle--links-source source
            arcology-oracle--links-node node)
      (unless (stringp suggestions) (setq arcology-oracle--links-last suggestions))
      (setq arcology-oracle--links-shown (cons (arcology-oracle--links-width) suggestions))
      (erase-buffer)
      (insert (propertize (concat "Links to add to: " (org-link-display-format (or title "")))
                          'face 'bold)
              "\n\n")
      (cond ((stringp suggestions) (arcology-oracle--insert-message suggestions))
            ((null (setq suggestions (arcology-oracle--links-not-in
                                      source (arcology-oracle--links-not-own suggestions))))
             (insert (propertize "No suggestions." 'face 'shadow) "\n"))
            (t (pcase-let ((`(,above . ,below) (arcology-oracle--split-cutoff suggestions)))
                 (if above
                     (dolist (s above) (insert (arcology-oracle--format-suggestion s) "\n"))
                   (insert (propertize "No suggestion is related enough." 'face 'shadow) "\n\n"))
                 (when below
                   (insert (propertize
                            (substitute-command-keys
                             (format (if arcology-oracle--links-show-tail
                                         "— %d below relevance, \\<arcology-oracle-links-mode-map>\\[arcology-oracle-links-toggle-tail] to fold —"
                                       "— %d more below relevance, \\<arcology-oracle-links-mode-map>\\[arcology-oracle-links-toggle-tail] to show —")
                                     (length below)))
                            'face 'shadow 'arcology-oracle-more t)
                           "\n\n")
                   (when arcology-oracle--links-show-tail
                     (dolist (s below) (insert (arcology-oracle--format-suggestion s) "\n")))))))
      (goto-char (point-min))
      (forward-line (1- line)))))

(defun arcology-oracle--links-not-own (suggestions)
  "Return the SUGGESTIONS that are not the note itself or a node enclosing it.
See `arcology-oracle--links-own'; run in the suggestions buffer."
  (seq-remove (lambda (s) (member (alist-get 'node_id s) arcology-oracle--links-own))
              suggestions))

(defun arcology-oracle--links-not-in (source suggestions)
  "Return the SUGGESTIONS whose link is not yet in buffer SOURCE.
The daemon reads the saved file: a link inserted since, saved or
not, is found here, and undoing it offers the suggestion again."
  (if (not (buffer-live-p source))
      suggestions
    (with-current-buffer source
      (save-excursion
        (save-restriction
          (widen)
          (seq-remove (lambda (s)
                        (when-let ((id (alist-get 'node_id s)))
                          (goto-char (point-min))
                          (search-forward (concat "[[id:" id "]") nil t)))
                      suggestions))))))

(defun arcology-oracle--links-request (source node title)
  "Ask the daemon for link suggestions for NODE (titled TITLE) of SOURCE."
  (arcology-oracle--links-render source node title "Looking for links to add…")
  (arcology-oracle--json
   "GET" "/suggest-links"
   :query `(("node" ,node) ("k" ,arcology-oracle-result-count) ("all" "true"))
   :callback (lambda (answer)
               (arcology-oracle--links-render source node title (arcology-oracle--results-of answer 'suggestions)))
   :errback (lambda (message)
              ;; The daemon does not know the node: a note saved a moment ago
              ;; (not indexed yet), or edited out of its ID.  Its own words are
              ;; "no node with ID '5e1f...' in the index (HTTP 404)".
              (when (string-suffix-p "(HTTP 404)" message)
                (setq message (format "%s is not in the daemon's index (yet): save the note, then %s asks again"
                                      title (substitute-command-keys
                                             "\\<arcology-oracle-links-mode-map>\\[arcology-oracle-links-refresh]"))))
              (arcology-oracle--links-render source node title message)
              (arcology-oracle--report message))))

;;;###autoload
(defun arcology-oracle-suggest-links ()
  "List the notes the note at point does not link to yet, and where.
The note is the org-roam node around point (a heading with an ID,
else the file's).  Each suggestion shows the paragraph of this note
where its link belongs.  A file outside the daemon's roam directory
is not among its notes: that is said, as by
`arcology-oracle-summarize', and nothing is asked (see
`arcology-oracle--among-notes'; the list may then appear once the
daemon has said where its notes are).  A private note (see
`arcology-oracle--private-here-p') is refused: the daemon never
reads it."
  (interactive)
  (unless (arcology-oracle--in-listed-note #'arcology-oracle-suggest-links)
    (arcology-oracle--suggest-links-here)))

(defun arcology-oracle--suggest-links-here ()
  "List the links the note at point lacks, as `arcology-oracle-suggest-links'."
  (unless (derived-mode-p 'org-mode) (arcology-oracle--user-error "Link suggestions need an org-mode buffer"))
  (arcology-oracle--refuse-without-file "suggestions are for a note as saved")
  (pcase-let ((`(,node . ,title) (arcology-oracle--node-at-point))
              (own (arcology-oracle--enclosing-ids))
              (source (current-buffer)))
    (when (arcology-oracle--node-private-p)
      (arcology-oracle--user-error "%s is private: the daemon never reads it, no link suggestions for it"
                                   (arcology-oracle--title-text (or title (arcology-oracle--file-title)))))
    (cl-flet ((show (fill)
                ;; Set up the suggestions buffer, FILL it, show it.
                (when (buffer-live-p source)
                  (with-current-buffer (get-buffer-create arcology-oracle-links-buffer-name)
                    (unless (derived-mode-p 'arcology-oracle-links-mode) (arcology-oracle-links-mode))
                    (setq arcology-oracle--links-own own))
                  (funcall fill)
                  (arcology-oracle--display (get-buffer arcology-oracle-links-buffer-name)
                                            arcology-oracle-result-display-action t))))
      (arcology-oracle--among-notes
       (arcology-oracle--visited-file) ": no link suggestions for it"
       (lambda (_rel)
         (unless node
           (arcology-oracle--user-error "No org-roam node here: the heading or file needs an :ID: (%s adds one)"
                                        (substitute-command-keys "\\[org-id-get-create]")))
         (when (buffer-live-p source)  ; this may run once the daemon said where its notes are
           (with-current-buffer source
             (let ((file (arcology-oracle--visited-file)))
               (when (and file (not (file-exists-p file)))
                 (arcology-oracle--missing-file-error file "Save %s first: suggestions are for a note as saved")))))
         (when (and (buffer-live-p source) (buffer-modified-p source))
           (message "arcology-oracle: suggestions read the saved file; save to place links in new text"))
         (show (lambda () (arcology-oracle--links-request source node title))))
       nil
       (lambda (message)
         ;; The daemon could not say where its notes are: it cannot be asked either.
         (when node (show (lambda () (arcology-oracle--links-render source node title message))))
         (arcology-oracle--report message))))))

(defun arcology-oracle-links-refresh ()
  "Ask again for the link suggestions of this buffer's note."
  (interactive)
  (arcology-oracle--links-request arcology-oracle--links-source arcology-oracle--links-node
                                  (arcology-oracle--links-title)))

(defun arcology-oracle--links-title ()
  "Return the title of the note the suggestions buffer is about."
  (save-excursion
    (goto-char (point-min))
    (when (looking-at "Links to add to: \\(.*\\)$") (match-string-no-properties 1))))

(defconst arcology-oracle--not-prose-regexp
  (concat "^[ \t]*$\\|^\\*+[ \t]\\|^[ \t]*:[[:alnum:]_-]+:[ \t]*$"
          "\\|^[ \t]*\\(?:SCHEDULED\\|DEADLINE\\|CLOSED\\):"
          "\\|^[ \t]*#\\+\\|^[ \t]*#\\(?:[ \t]\\|$\\)"
          "\\|^[ \t]*|\\|^[ \t]*:\\(?: \\|$\\)\\|^[ \t]*-\\{5,\\}[ \t]*$"
          "\\|^[ \t]*CLOCK:\\|^%%("
          "\\|^[ \t]*\\+\\(?:-+\\+\\)+[ \t]*$")
  "A line that ends a paragraph, as the daemon reads paragraphs.
A blank line, a heading, a drawer line, a planning line, a keyword
or block line, a comment, a table row or table.el border, a
fixed-width line, a horizontal rule, a clock line or a diary sexp.
A LaTeX environment ends one too, when Org reads it as one: see
`arcology-oracle--paragraph-position'.")

(defun arcology-oracle--prose-at-p (pos)
  "Return non-nil when the line at POS is prose, as the daemon's paragraphs are.
A paragraph or a list, in no drawer, block or other container but
list items: not an example block's or a drawer's line of the same
text."
  (save-excursion
    (goto-char pos)
    (let ((element (org-element-at-point)))
      (and (memq (org-element-type element) '(paragraph plain-list item))
           (seq-every-p (lambda (up) (memq (org-element-type up) '(item plain-list section headline org-data)))
                        (org-element-lineage element))))))

(defun arcology-oracle--stale-suggestion ()
  "Signal that a suggestion's paragraph is no longer in the note."
  (arcology-oracle--user-error
   (if (buffer-modified-p)
       "That paragraph is no longer in the note: save it, then press g to ask again"
     "That paragraph is no longer in the note: press g to ask again")))

(defun arcology-oracle--daemon-line-regexp (line)
  "Return a regexp matching LINE, as the daemon read it, in the note here.
The daemon reads the bytes of a file that are not UTF-8 (a note
saved in Latin-1, say) as U+FFFD, where Emacs decodes letters: each
run of them matches characters that are not ASCII (those bytes
never are), so that a line of them alone is not any line."
  (mapconcat #'regexp-quote (split-string line "\ufffd+") "[^[:ascii:]]+?"))

(defun arcology-oracle--paragraph-position (paragraph)
  "Return the place for a link at the end of PARAGRAPH (the daemon's) here.
The lines are the file's when the daemon read it; when the text has
moved since, the paragraph's first line is searched for instead.
From that line the paragraph runs, in the buffer as it is now, to
its last line of prose: unsaved lines added to it or taken from it
count.  The whole buffer is searched, narrowed or not, and of the
lines of prose that read as the first, the nearest to where it was
is taken."
  (save-excursion
    (save-restriction
      (widen)
      (let ((first (arcology-oracle--daemon-line-regexp
                    (car (split-string (alist-get 'text paragraph) "\n")))))
        (goto-char (point-min))
        (forward-line (1- (alist-get 'start_line paragraph)))
        (unless (looking-at-p first)
          ;; Moved by unsaved edits: the line of prose that reads the same nearest
          ;; to where it was, never one in a block, a drawer or another element.
          (let ((was (point)) best)
            (goto-char (point-min))
            (while (re-search-forward (concat "^" first) nil t)
              (let ((here (line-beginning-position)))
                (when (and (arcology-oracle--prose-at-p here)
                           (or (null best) (< (abs (- here was)) (abs (- best was)))))
                  (setq best here))))
            (unless best (arcology-oracle--stale-suggestion))
            (goto-char best)))
        (let ((last (point)))
          (while (and (zerop (forward-line 1))
                      (not (eobp))
                      (not (looking-at-p arcology-oracle--not-prose-regexp))
                      ;; Org's own reading: not a line of a drawer or a dynamic block.
                      (arcology-oracle--prose-at-p (point))
                      ;; An environment only when it ends: else Org reads the line as prose.
                      (not (and (looking-at-p "[ \t]*\\\\begin{")
                                (eq (org-element-type (org-element-at-point)) 'latex-environment))))
            (setq last (point)))
          (goto-char last))
        (end-of-line)
        (arcology-oracle--text-end)))))

(defun arcology-oracle--suggestion-place (suggestion)
  "Return (POSITION OWN-LINE), the place for the link of SUGGESTION here.
At the end of its paragraph; for a note with no prose, under its
heading, never into its line or drawer."
  (if-let ((paragraph (alist-get 'paragraph suggestion)))
      (list (arcology-oracle--paragraph-position paragraph) nil)
    (save-excursion
      (save-restriction
        (arcology-oracle--goto-heading (alist-get 'line (alist-get 'heading suggestion)) nil)
        (pcase-let ((`(,pos ,own-line ,_) (arcology-oracle--link-place 'paragraph-end)))
          (list pos own-line))))))

(defun arcology-oracle-links-insert ()
  "Insert the link of the suggestion at point into its paragraph of the note.
The note is shown with point at the paragraph first; the link goes
at the paragraph's end, as one undo step.  A narrowed note stays
narrowed: a paragraph outside the part shown is refused, as is a
link to the note itself."
  (interactive)
  (let* ((suggestion (arcology-oracle--result-at-point))
         (link (arcology-oracle--link-for suggestion))
         (target (alist-get 'node_id suggestion))
         (own arcology-oracle--links-own)
         (source arcology-oracle--links-source)
         (list-buffer (current-buffer))
         (line nil))
    (unless (buffer-live-p source) (arcology-oracle--user-error "The note's buffer is gone"))
    (pcase-let ((`(,pos ,own-line)
                 (with-current-buffer source
                   (when buffer-read-only (arcology-oracle--user-error "Buffer %s is read-only" (buffer-name)))
                   (arcology-oracle--suggestion-place suggestion))))
      (with-current-buffer source
        (when (or (member target own)
                  (member target (save-excursion (save-restriction (widen) (goto-char pos)
                                                                   (arcology-oracle--enclosing-ids)))))
          (arcology-oracle--user-error "That is the note you are in: no link to itself"))
        (unless (<= (point-min) pos (point-max))
          (arcology-oracle--user-error
           "That paragraph, line %d, is outside the narrowed part of %s: %s, then insert again"
           (save-restriction (widen) (line-number-at-pos pos)) (buffer-name)
           (substitute-command-keys "\\[widen] widens"))))
      (let ((window (display-buffer source '((display-buffer-reuse-window display-buffer-use-some-window) (inhibit-same-window . t)))))
        (with-current-buffer source
          (goto-char pos)
          (when (derived-mode-p 'org-mode) (org-show-context))
          (arcology-oracle--insert-link-here link own-line)
          (when window (set-window-point window (point)))
          (setq line (line-number-at-pos nil t)))))  ; the file's, narrowed or not
    (arcology-oracle--links-remove list-buffer target)
    (message "Inserted a link to \"%s\" into %s, line %d" (org-link-display-format link) (buffer-name source) line)))

(defun arcology-oracle--links-remove (buffer node &optional forget)
  "Remove the suggestions of NODE from the suggestions BUFFER.
The list is rendered again, so that the count of those below the
relevance cut stays true; point goes to the entry that took the
place of the one it was on.  FORGET (a rejection) drops NODE from
the daemon's list kept to render it again; else (a link inserted)
it stays there and the note's link keeps it out, so that undoing
the link offers it again."
  (when (buffer-live-p buffer)
    (with-current-buffer buffer
      (let ((index 0) (pos (point-min)) (line (line-number-at-pos)) at done)
        ;; The entry point is on, counted among those left (nil above the first).
        (while (and (not done) (setq pos (next-single-property-change pos 'arcology-oracle-entry)))
          (when (get-text-property pos 'arcology-oracle-entry)
            (let ((end (or (next-single-property-change pos 'arcology-oracle-result) (point-max))))
              (cond ((< (point) pos) (setq done t))
                    ((< (point) end) (setq at index done t))
                    ((not (equal (alist-get 'node_id (get-text-property pos 'arcology-oracle-result)) node))
                     (cl-incf index)))
              (setq pos end))))
        (when forget
          (setq arcology-oracle--links-last
                (seq-remove (lambda (s) (equal (alist-get 'node_id s) node)) arcology-oracle--links-last)))
        (arcology-oracle--links-render arcology-oracle--links-source arcology-oracle--links-node
                                       (arcology-oracle--links-title) arcology-oracle--links-last)
        (goto-char (point-min))
        (if (not at)
            (forward-line (1- line))
          (dotimes (_ (1+ at))
            (let ((next (next-single-property-change (point) 'arcology-oracle-entry)))
              (when (and next (not (get-text-property next 'arcology-oracle-entry)))
                (setq next (next-single-property-change next 'arcology-oracle-entry)))
              (when next (goto-char next)))))
        (when-let ((window (get-buffer-window buffer t)))
          (set-window-point window (point)))))))

(provide 'arcology-oracle-links)

;;; arcology-oracle-links.el ends here
