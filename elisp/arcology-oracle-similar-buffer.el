;;; arcology-oracle-similar-buffer.el --- The similar notes buffer of arcology-oracle -*- lexical-binding: t -*-

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

;; The buffer listing the notes similar to a heading: its mode and keys,
;; moving from note to note, and rendering a list of results (or a
;; message) for the heading it is about, laid out again for its window's
;; width.  Asking the daemon for the list is arcology-oracle-similar.el's.

;;; Code:

(require 'seq)
(require 'subr-x)
(require 'org)
(require 'arcology-oracle-notes)

(declare-function arcology-oracle-similar-refresh "arcology-oracle-similar" (&optional quiet))
(declare-function arcology-oracle-insert-link "arcology-oracle-similar-links" ())
(declare-function arcology-oracle-copy-link "arcology-oracle-similar-links" ())

(defvar arcology-oracle-similar-buffer-name "*arcology-oracle similar*"
  "Name of the buffer listing the notes similar to the heading at point.")

(defvar-local arcology-oracle--similar-last-heading nil
  "Start of the heading whose similar notes were last asked for.")

(defvar-local arcology-oracle--similar-source nil
  "In the similar buffer: the buffer whose heading the list is about.")

(defvar-local arcology-oracle--similar-heading nil
  "In the similar buffer: the heading the list is about, (START END TITLE).
START and END are markers at the start and the end of its line in the
note (cut out, the two meet; END is nil for an empty first line).
Nil for a list about no heading in particular.")

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
          (when-let ((pos (and entry (arcology-oracle--result-start entry))))
            (goto-char pos)
            (set-window-point window pos)))))))

(defun arcology-oracle-similar-next ()
  "Move to the next note in the list."
  (interactive)
  (let ((pos (next-single-property-change (point) 'arcology-oracle-entry)))
    (when (and pos (not (get-text-property pos 'arcology-oracle-entry)))
      (setq pos (next-single-property-change pos 'arcology-oracle-entry)))
    (if pos (goto-char pos) (arcology-oracle--message "No more notes"))))

(defun arcology-oracle-similar-previous ()
  "Move to the previous note in the list."
  (interactive)
  (let ((pos (previous-single-property-change (point) 'arcology-oracle-entry)))
    (when (and pos (not (get-text-property pos 'arcology-oracle-entry)))
      (setq pos (previous-single-property-change pos 'arcology-oracle-entry)))
    (when (and pos (not (get-text-property pos 'arcology-oracle-entry)))
      (setq pos nil))
    (if pos (goto-char pos) (arcology-oracle--message "No previous note"))))

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
`arcology-oracle--result-tags', SOURCE is the buffer being read or
the IDs its node links to, BACKLINKS the nodes linking to it), the
marks on a line of their own when the window is too narrow for both;
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
                          (concat "\n  " (arcology-oracle--wrapped tags (- width 2) "  ")))))
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
    (arcology-oracle--score-help text score)))

(defun arcology-oracle--insert-results (results source)
  "Insert RESULTS for buffer SOURCE, those below the relevance cut folded.
The daemon marks them `below_cutoff' (asked with all=true); folded,
one line says how many there are and which key shows them.  A note
is marked linked when the node of the heading listed links to it (see
`arcology-oracle--node-links'), as the daemon and the link
suggestions read it, not another part of the file."
  (pcase-let ((`(,above . ,below) (arcology-oracle--split-cutoff results))
              (`(,backlinks . ,linked)
               (and (buffer-live-p source)
                    (with-current-buffer source
                      (save-excursion
                        (goto-char (or arcology-oracle--similar-last-heading (point)))
                        (cons (arcology-oracle--roam-backlinks (org-entry-get nil "ID" t))
                              (arcology-oracle--node-links)))))))
    (if (null above)
        (insert (propertize "No note is similar enough." 'face 'shadow) "\n\n")
      (dolist (result above)
        (insert (arcology-oracle--format-result result linked nil backlinks) "\n")))
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
          (insert (arcology-oracle--format-result result linked nil backlinks) "\n"))))))

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
      (arcology-oracle--to-first-entry)
      (set-buffer-modified-p nil)  ; a list, no file: never "**" in the mode line
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

(defun arcology-oracle--similar-quit-for (source)
  "Take the similar notes off screen when their list is about buffer SOURCE.
The mode turned off there no longer updates the list: left shown, it
kept the last heading's notes as if they were still followed.  Each
window showing it goes as \\<arcology-oracle-similar-buffer-mode-map>\\[quit-window] \
takes it away; a list about another buffer stays."
  (when-let ((list (get-buffer arcology-oracle-similar-buffer-name)))
    (when (eq (buffer-local-value 'arcology-oracle--similar-source list) source)
      (dolist (window (get-buffer-window-list list nil t))
        (quit-window nil window)))))

(provide 'arcology-oracle-similar-buffer)

;;; arcology-oracle-similar-buffer.el ends here
