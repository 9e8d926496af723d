;;; arcology-oracle-link-place.el --- Where a link to a note goes, and writing it there -*- lexical-binding: t -*-

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

;; A link to a listed note, [[id:ID][Title]], made by org's own
;; `org-link-make-string' (the plain id: link org-roam records on
;; save), and its place in the note: at point or at the end of the
;; paragraph (`arcology-oracle-insert-link-at'), at the end of the
;; paragraph a suggestion names (as the daemon read it), never into a
;; heading line, a drawer, a block or a keyword line.  Each insertion
;; is one undo step.

;;; Code:

(require 'seq)
(require 'subr-x)
(require 'org)
(require 'org-element)
(require 'ol)
(require 'arcology-oracle-notes)

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

(defun arcology-oracle--link-for (result)
  "Return the org link to the node of RESULT, [[id:ID][Title]]."
  (let ((id (alist-get 'node_id result)))
    (unless id (arcology-oracle--user-error "This note has no ID to link to"))
    (org-link-make-string (concat "id:" id)
                          (arcology-oracle--link-description (or (alist-get 'title result) id)))))

(defun arcology-oracle--link-description (title)
  "Return TITLE as words only, for the description of a link.
A link's description holds objects: an inline source block
\(src_sh{...}) or Babel call (call_f()) Org runs on export, a macro
\({{{...}}}) it expands, an export snippet (@@html:...@@) it writes
into the exported file as it is; and a line break there could start
a heading.  So links become their descriptions, line breaks a space,
and a zero-width space (the escape the Org manual gives) goes into
each src_, call_, {{{, @@ and [[, as the daemon makes what it writes
inert (notes/org_escape.py); `org-link-make-string' breaks each ]]."
  (let ((case-fold-search nil)
        (text (replace-regexp-in-string "[\n\r\u2028\u2029\u0085]+" " "
                                        (org-link-display-format title) t t)))
    (dolist (pair '(("\\(src\\|call\\)_" . "\\1\u200b_") ("{{{" . "{\u200b{{")
                    ("@@" . "@\u200b@") ("\\[\\[" . "[\u200b[")))
      (setq text (replace-regexp-in-string (car pair) (cdr pair) text t)))
    (string-trim text)))

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

(defun arcology-oracle--point-after-link (window)
  "Put WINDOW's point at point, just after a link inserted there.
Where the window cuts its lines (Org's `truncate-lines') and point is
past its edge, at the start of the line instead: Emacs scrolled the
whole window sideways to show point, every line of the note cut on
the left.  The message names the line."
  (set-window-point window (if (and (or truncate-lines (truncated-partial-width-window-p window))
                                    (>= (current-column) (1- (window-body-width window))))
                               (line-beginning-position)
                             (point))))

(provide 'arcology-oracle-link-place)

;;; arcology-oracle-link-place.el ends here
