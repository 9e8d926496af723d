;;; arcology-oracle-answers.el --- The answers and summaries buffers of arcology-oracle -*- lexical-binding: t -*-

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

;; The buffers where answers and summaries stream in: org text, read
;; only, one top-level heading per entry.  Each entry remembers where
;; it was asked from and how to ask again, so that the keys of the
;; package's other result buffers work here too: `n' and `p' move
;; between entries, `g' asks again, `RET' follows the link at point
;; (else goes back to the heading the entry is about), `q' hides the
;; window and `e' (or \\[read-only-mode]) makes the buffer editable.

;;; Code:

(require 'seq)
(require 'subr-x)
(require 'org)
(require 'org-element)
(require 'arcology-oracle-notes)

(declare-function arcology-oracle-stop "arcology-oracle-answer-stream" ())

(defvar arcology-oracle-answer-buffer-name "*arcology-oracle answers*"
  "Name of the org buffer where answers to questions stream.")

(defvar arcology-oracle-summary-buffer-name "*arcology-oracle summary*"
  "Name of the org buffer showing summaries.")

;;; The entries

(defun arcology-oracle--origin ()
  "Return where the heading at point is, for an entry: a plist.
:marker at the heading's start (the first line before the first
heading), :file the file visited (nil for a buffer without one)
and :line the heading's line."
  (let ((start (save-restriction (widen) (arcology-oracle--heading-start))))
    (list :marker (copy-marker start)
          :file (arcology-oracle--visited-file)
          :line (line-number-at-pos start t))))

(defun arcology-oracle--origin-live-p (origin)
  "Return the buffer of ORIGIN's marker when it is still live, else nil."
  (when-let ((marker (plist-get origin :marker)))
    (and (buffer-live-p (marker-buffer marker)) (marker-buffer marker))))

(defun arcology-oracle--in-origin (origin function fallback)
  "Call FUNCTION at ORIGIN (see `arcology-oracle--origin') in its buffer.
When that buffer is gone, call FALLBACK instead."
  (if-let ((buffer (arcology-oracle--origin-live-p origin)))
      (with-current-buffer buffer
        (save-excursion
          (save-restriction
            (widen)
            (goto-char (plist-get origin :marker))
            (funcall function))))
    (funcall fallback)))

(defun arcology-oracle--entry-start ()
  "Return the start of the entry (top-level heading) around point, or nil."
  (save-excursion
    (beginning-of-line)
    (when (or (looking-at-p "\\* ") (re-search-backward "^\\* " nil t))
      (point))))

(defun arcology-oracle--entry-at-point ()
  "Return the record of the entry around point: (:again FN :origin ORIGIN), or nil."
  (when-let ((start (arcology-oracle--entry-start)))
    (get-text-property start 'arcology-oracle-entry)))

;;; The mode

(defvar arcology-oracle-answers-keys-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "n") #'arcology-oracle-answers-next)
    (define-key map (kbd "p") #'arcology-oracle-answers-previous)
    (define-key map (kbd "g") #'arcology-oracle-answers-again)
    (define-key map (kbd "RET") #'arcology-oracle-answers-follow)
    (define-key map (kbd "q") #'quit-window)
    (define-key map (kbd "e") #'arcology-oracle-answers-edit)
    map)
  "Keys of the answers and summaries buffers while they are read-only.")

(defvar arcology-oracle-answers-mode-map
  (let ((map (make-sparse-keymap)))
    ;; Read-only or edited: the answer waiting says that C-c C-k stops it.
    ;; Org's own C-c C-k there folded the entry the answer was streaming into.
    (define-key map (kbd "C-c C-k") #'arcology-oracle-stop)
    map)
  "Keys of the answers and summaries buffers, read-only or edited.")

(define-minor-mode arcology-oracle-answers-keys-mode
  "The reading keys of the answers and summaries buffers.
On while the buffer is read-only (`arcology-oracle-answers-mode'
keeps it so), off while it is edited, so that letters insert.

\\{arcology-oracle-answers-keys-mode-map}"
  :lighter nil)

(defun arcology-oracle--answers-sync-keys ()
  "Turn the reading keys on when the buffer is read-only, off when not.
Undo is on only while it is editable, from the moment it was made so:
the answers are the package's writing, not the user's, and \\[undo]
after \\[arcology-oracle-answers-edit] took a whole answer away."
  (arcology-oracle-answers-keys-mode (if buffer-read-only 1 -1))
  (if buffer-read-only (buffer-disable-undo) (buffer-enable-undo)))

(define-derived-mode arcology-oracle-answers-mode org-mode "Answers"
  "Major mode of the answers and summaries buffers: org text, read-only.
Each answer (or summary) is a top-level heading followed by its
sources.  \\<arcology-oracle-answers-keys-mode-map>\\[arcology-oracle-answers-next] and \
\\[arcology-oracle-answers-previous] move between them,
\\[arcology-oracle-answers-again] asks again, \
\\[arcology-oracle-answers-follow] follows the link at point or goes to the
heading the entry is about, \\[quit-window] hides the window.
\\<arcology-oracle-answers-mode-map>\\[arcology-oracle-stop] stops the answers still coming, \
editable or not.\\<arcology-oracle-answers-keys-mode-map>
\\[arcology-oracle-answers-edit] or \\[read-only-mode] makes the buffer editable \
\(to copy or rework
an answer); \\[read-only-mode] makes it read-only again, with those keys.
Answers still stream in while it is read-only.  \\[undo] undoes the
changes made since the buffer was made editable, never what was
there before.

\\{arcology-oracle-answers-keys-mode-map}"
  (add-hook 'org-open-at-point-functions #'arcology-oracle--refuse-code-link nil t)
  (add-hook 'org-open-at-point-functions #'arcology-oracle--open-source-at-point nil t)
  ;; C-c C-o anywhere on a `- [N]' line of the sources, not only on its link.
  (add-hook 'org-open-at-point-functions #'arcology-oracle--open-cited-source t t)
  (add-hook 'read-only-mode-hook #'arcology-oracle--answers-sync-keys nil t)
  ;; A model writes a paragraph as one line, hundreds of columns: Org's
  ;; truncated lines cut it at the window's edge.  Wrapped at words.
  (setq-local truncate-lines nil)
  (setq-local word-wrap t)
  (setq buffer-read-only t)
  (buffer-disable-undo)
  (arcology-oracle-answers-keys-mode 1))

(defconst arcology-oracle--code-link-types '("elisp" "shell" "eshell" "man")
  "Org link types whose following runs code (see notes/model_text.py).")

(defun arcology-oracle--refuse-code-link ()
  "Refuse to follow a link at point that would run code.
The answers are a model's words: its [[elisp:...][see note]] ran on
a click where `org-link-elisp-confirm-function' is nil (an eshell:
link never asks).  The daemon quiets such links in what it writes
into notes; here they are shown as the model wrote them, never run."
  (let ((context (org-element-context)))
    (when (and (eq (org-element-type context) 'link)
               (member (downcase (org-element-property :type context)) arcology-oracle--code-link-types))
      (arcology-oracle--user-error
       "This %s: link is a model's words and would run code: not followed (copy it into a note to run it)"
       (org-element-property :type context)))))

(defun arcology-oracle--answers-buffer (name)
  "Return the buffer NAME, in `arcology-oracle-answers-mode'."
  (let ((buffer (get-buffer-create name)))
    (with-current-buffer buffer
      (unless (derived-mode-p 'arcology-oracle-answers-mode)
        (arcology-oracle-answers-mode)))
    buffer))

(defun arcology-oracle--answer-buffer ()
  "Return the answers buffer, in `arcology-oracle-answers-mode'."
  (arcology-oracle--answers-buffer arcology-oracle-answer-buffer-name))

(defun arcology-oracle--entries-noun ()
  "Return what the entries of the current buffer are called."
  (if (equal (buffer-name) arcology-oracle-summary-buffer-name) "summaries" "answers"))

;;; The keys

(defun arcology-oracle-answers-next ()
  "Move to the next answer (or summary)."
  (interactive)
  (let ((pos (save-excursion (end-of-line) (and (re-search-forward "^\\* " nil t) (match-beginning 0)))))
    (if pos (goto-char pos) (arcology-oracle--message "No more %s" (arcology-oracle--entries-noun)))))

(defun arcology-oracle-answers-previous ()
  "Move to the heading of the answer (or summary) around point, or the one before."
  (interactive)
  (let ((pos (save-excursion (beginning-of-line) (re-search-backward "^\\* " nil t))))
    (if pos (goto-char pos) (arcology-oracle--message "No previous %s" (arcology-oracle--entries-noun)))))

(defun arcology-oracle-answers-again ()
  "Ask again what produced the answer (or summary) at point.
An answer: the same question about the same buffer, as its text is
now (as it was then, when that buffer is gone).  A summary: the same
node, with the same focus; the daemon makes a new one when the note
changed, else says it is cached.  The new entry is added (answers
below, summaries on top) and shown; the old one stays, to compare,
unless it says it was not asked (the daemon was down): the new one
replaces it."
  (interactive)
  (let ((entry (arcology-oracle--entry-at-point)))
    (unless entry (arcology-oracle--user-error "No answer at point to ask again"))
    (funcall (plist-get entry :again))))

(defun arcology-oracle-answers-follow ()
  "Follow the link at point (a source opens at its heading).
On a source's line, open that source.  Elsewhere in an entry, go
back to the heading it was asked about \(the one summarized), in
another window."
  (interactive)
  (cond
   ((or (get-text-property (point) 'arcology-oracle-source)
        (eq (org-element-type (org-element-context)) 'link))
    (org-open-at-point))
   ;; Anywhere on a source's `- [N]' line, not only on its link.
   ((arcology-oracle--open-cited-source))
   (t
    (let ((origin (plist-get (arcology-oracle--entry-at-point) :origin)))
      (unless origin (arcology-oracle--user-error "No link or answer at point"))
      (arcology-oracle--visit-origin origin)))))

(defun arcology-oracle--visit-origin (origin)
  "Show ORIGIN (see `arcology-oracle--origin') in another window, at its heading."
  (let* ((live (arcology-oracle--origin-live-p origin))
         (file (plist-get origin :file))
         (buffer (or live
                     (and file (file-exists-p file) (find-file-noselect file))
                     (arcology-oracle--user-error "The buffer this was asked from is gone"))))
    (pop-to-buffer buffer '((display-buffer-reuse-window display-buffer-use-some-window) (inhibit-same-window . t)))
    (widen)
    (if live
        (goto-char (plist-get origin :marker))
      (goto-char (point-min))
      (forward-line (1- (plist-get origin :line))))
    (when (derived-mode-p 'org-mode) (org-show-context))))

(defun arcology-oracle-answers-edit ()
  "Make this buffer editable; \\[read-only-mode] to make it read-only again.
While it is editable, letters insert: the reading keys (n, p, g, q,
RET, e) are off."
  (interactive)
  (read-only-mode -1)
  (arcology-oracle--message "%s" (substitute-command-keys
                                  "Editable now: \\[read-only-mode] to read again with n, p, g, q, RET")))

;;; Writing entries

(defun arcology-oracle--answers-write (function)
  "Call FUNCTION to write into the current buffer, read-only or not.
A buffer unmodified before stays so: an answer streamed in is the
package's writing, not a file's unsaved edits, and showed \"**\" in
the mode line.  Once the user edits it (after
`arcology-oracle-answers-edit'), it is modified, and stays so."
  (let ((modified (buffer-modified-p))
        (inhibit-read-only t))
    (prog1 (funcall function)
      (unless modified (set-buffer-modified-p nil)))))

(defun arcology-oracle--insert-following (marker text &optional stay)
  "Insert TEXT at MARKER, then move MARKER after it.
Windows whose point was at MARKER follow it, unless STAY: then
their point stays before TEXT.  MARKER does not advance by itself
\(see `arcology-oracle--answer-start'), so that an entry added
meanwhile at the end of the buffer goes after the answer still
streaming, not into it."
  (when (buffer-live-p (marker-buffer marker))
    (with-current-buffer (marker-buffer marker)
      (let ((followers (and (not stay)
                            (seq-filter (lambda (w) (= (window-point w) marker))
                                        (get-buffer-window-list nil nil t)))))
        (arcology-oracle--answers-write
         (lambda ()
           (save-excursion
             (goto-char marker)
             (insert text)
             (set-marker marker (point)))))
        (dolist (w followers) (set-window-point w marker))))))

(defun arcology-oracle--same-origin-p (a b)
  "Return non-nil when origins A and B are one note's.
See `arcology-oracle--origin'."
  (let ((buffer (arcology-oracle--origin-live-p a)))
    (or (and buffer (eq buffer (arcology-oracle--origin-live-p b)))
        (and (plist-get a :file) (equal (plist-get a :file) (plist-get b :file))))))

(defun arcology-oracle--drop-not-asked (heading origin)
  "Delete the entries titled HEADING, asked from ORIGIN, that were never asked.
Such an entry (the daemon could not be reached) holds the question
and \"Not asked: ...\" only: the question asked again, by \
\\<arcology-oracle-answers-keys-mode-map>\\[arcology-oracle-answers-again]
there or anew, takes its place, so that tries while the daemon was
down leave one entry, not one each."
  (let ((pos (point-min)))
    (arcology-oracle--answers-write
     (lambda ()
       (while (setq pos (and origin (text-property-any pos (point-max) 'arcology-oracle-not-asked t)))
         (let* ((start (save-excursion (goto-char pos) (arcology-oracle--entry-start)))
                (old (and start (plist-get (get-text-property start 'arcology-oracle-entry) :origin))))
           (if (not (and old (arcology-oracle--same-origin-p old origin)
                         (equal (buffer-substring-no-properties start (save-excursion (goto-char start)
                                                                                      (line-end-position)))
                                (concat "* " heading))))
               (setq pos (or (next-single-property-change pos 'arcology-oracle-not-asked) (point-max)))
             (let ((end (save-excursion (goto-char pos)
                                        (if (re-search-forward "^\\* " nil t) (match-beginning 0) (point-max)))))
               ;; The last entry takes the blank line before it along.
               (when (and (= end (point-max)) (> start (point-min))) (setq start (1- start)))
               (delete-region start end)
               (setq pos start)))))))))

(defun arcology-oracle--answer-start (heading &optional buffer first entry)
  "Add HEADING at the end of BUFFER (default: the answers buffer) and show it.
FIRST non-nil adds it at the top instead, newest first.  ENTRY,
a plist (:again FUNCTION :origin ORIGIN), is what
`arcology-oracle-answers-again' calls and where
`arcology-oracle-answers-follow' goes back to; an entry of
HEADING from there that was never asked is replaced (see
`arcology-oracle--drop-not-asked').  The buffer is shown with
`arcology-oracle-result-display-action', never in the selected
window.  Return a marker where the answer goes, for
`arcology-oracle--insert-following'."
  (let ((buffer (or buffer (arcology-oracle--answer-buffer)))
        (line (propertize (concat "* " heading "\n") 'arcology-oracle-entry entry)))
    (with-current-buffer buffer
      (unless (derived-mode-p 'arcology-oracle-answers-mode) (arcology-oracle-answers-mode))
      (arcology-oracle--drop-not-asked heading (plist-get entry :origin))
      (let (marker start)
        (arcology-oracle--answers-write
         (lambda ()
           (if first
               (progn (goto-char (point-min))
                      (setq start (point))
                      (insert line)
                      (unless (eobp) (save-excursion (insert "\n")))
                      (setq marker (copy-marker (point))))
             (goto-char (point-max))
             (unless (bolp) (insert "\n"))
             ;; A blank line between answers; one still streaming goes on before it.
             (unless (bobp) (insert "\n"))
             (setq start (point))
             (insert line)
             (setq marker (copy-marker (point))))))
        (when-let ((window (arcology-oracle--display buffer arcology-oracle-result-display-action)))
          (set-window-start window start)
          (set-window-point window marker))
        marker))))

(provide 'arcology-oracle-answers)

;;; arcology-oracle-answers.el ends here
