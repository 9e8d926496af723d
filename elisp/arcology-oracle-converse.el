;;; arcology-oracle-converse.el --- Conversations in org notes with arcology-oracle -*- lexical-binding: t -*-

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

;; `arcology-oracle-converse' sends the conversation subtree at point
;; to the daemon and writes the answer into it as a new heading (marked
;; with `arcology-oracle-answer-property'); `arcology-oracle-discard'
;; removes that answer again.  Where the answer goes in the note is
;; arcology-oracle-converse-insert.el's.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'subr-x)
(require 'org)
(require 'arcology-oracle-notes)
(require 'arcology-oracle-answer-stream)
(require 'arcology-oracle-cut-short)
(require 'arcology-oracle-converse-insert)

(defun arcology-oracle--conversation-root ()
  "Move to the root heading of the conversation around point; return its level.
That is the nearest heading tagged `arcology-oracle-conversation-tag',
else the top-level heading around point."
  (org-back-to-heading t)
  (let ((found nil))
    (while (and (not found)
                (progn
                  (when (member arcology-oracle-conversation-tag (org-get-tags nil t))
                    (setq found t))
                  (and (not found) (org-up-heading-safe)))))
    (unless found
      (while (org-up-heading-safe)))
    (org-outline-level)))

(defun arcology-oracle--edit-would-ask-p (buffer)
  "Return non-nil when a first edit of BUFFER would ask the user first.
That is when BUFFER holds no edit and its file changed on disk since
it was read, or another Emacs holds the file's lock: Emacs then asks
whether to edit anyway (`ask-user-about-supersession-threat',
`ask-user-about-lock')."
  (with-current-buffer buffer
    (and buffer-file-name (not (buffer-modified-p))
         (or (not (verify-visited-file-modtime buffer))
             (let ((owner (file-locked-p buffer-file-name)))
               (and owner (not (eq owner t))))))))

(defun arcology-oracle--converse-answer (root org model tag &optional mode)
  "Put the daemon's answer ORG (by MODEL) under the conversation at marker ROOT.
MODE is the daemon's: \"keyword\" when it found the notes by keywords
only (the embedder was slow), which the message says.
The conversation is the heading tagged TAG (see
`arcology-oracle--conversation-found'): moved meanwhile, the answer
follows it.  Say where it went.  The answer goes to the kill ring
instead when the buffer became read-only while the model thought,
when its file changed on disk meanwhile (another program saved it)
or another Emacs locked it while the buffer held no edit (inserting
would ask, inside this callback, whether to edit anyway, and a no
lost the answer; a yes let the next save write over the other
program's text),
when the conversation's heading is gone (deleted, its line
retyped), and when it would hide the buffer's Local Variables."
  (let* ((buffer (marker-buffer root))
         (why (cond ((buffer-local-value 'buffer-read-only buffer) "became read-only")
                    ((arcology-oracle--edit-would-ask-p buffer)
                     "changed on disk or was locked by another Emacs since it was read (revert it first)")
                    ((not (arcology-oracle--conversation-found root tag))
                     "no longer holds the conversation's heading (deleted or retyped meanwhile)")
                    ((arcology-oracle--hides-local-variables-p root (arcology-oracle--answer-text root org model))
                     "has a Local Variables block near its end that the answer, after it, would hide from Emacs"))))
    (if why
        (progn
          (kill-new (arcology-oracle--answer-text root org model))
          (arcology-oracle--report
           (format "%s %s: the answer is on the kill ring (%s to yank it)"
                   (buffer-name buffer) why (substitute-command-keys "\\[yank]"))))
      (pcase-let ((`(,pos . ,moved) (arcology-oracle--insert-answer root org model))
                  (how (if (equal mode "keyword") " from notes found by keyword match only" "")))
        (with-current-buffer buffer
          (add-hook 'org-open-at-point-functions #'arcology-oracle--open-cited-source nil t)
          (if moved
              (arcology-oracle--message "arcology-oracle: answered%s (undo or %s to drop it)"
                                        how (substitute-command-keys "\\[arcology-oracle-discard]"))
            (arcology-oracle--message "arcology-oracle: answered%s in %s, line %d, under %s (mark set there: %s in that buffer)"
                                      how (buffer-name)
                                      (save-restriction (widen) (line-number-at-pos pos))
                                      (save-excursion (save-restriction (widen) (goto-char root)
                                                                        (org-get-heading t t t t)))
                                      (substitute-command-keys "\\[universal-argument] \\[set-mark-command]"))))))))

;;;###autoload
(defun arcology-oracle-converse ()
  "Answer the org conversation around point with a new heading.
The conversation is the subtree of the nearest heading tagged
`arcology-oracle-conversation-tag' (else the top-level heading
around point); its child headings are the turns.  The daemon's
answer is inserted as the conversation's last child, as one
undoable change, and point moves to it if it is still in the
conversation; else point stays and the mark is set at the answer.
Discard it with `arcology-oracle-discard'.  Returns at once.  Asked
again while its answer is awaited, it sends nothing and says so.  A
read-only buffer is refused, as is a note the daemon never reads (see
`arcology-oracle--unread-refusal'); one made read-only, or killed, while
the model thinks gets nothing: the answer goes to the kill ring."
  (interactive)
  (unless (derived-mode-p 'org-mode) (arcology-oracle--user-error "Conversations need an Org buffer"))
  (save-excursion
    (save-restriction
      (widen)
      (when (org-before-first-heading-p)
        (arcology-oracle--user-error "Put point in the conversation's subtree"))
      (when buffer-read-only
        (arcology-oracle--user-error "Buffer %s is read-only" (buffer-name)))
      (arcology-oracle--conversation-root)
      (when (arcology-oracle--conversation-awaited-p (point))
        (arcology-oracle--user-error
         "An answer to \"%s\" is on its way: it comes here (%s stops waiting for it)"
         (org-get-heading t t t t) (substitute-command-keys "\\[arcology-oracle-stop]")))
      (when (arcology-oracle--private-here-p)
        (arcology-oracle--user-error "This conversation is in a private part of your notes: nothing was sent"))
      (let* ((root (copy-marker (point)))
             (buffer (current-buffer))
             (name (buffer-name))
             (level (org-outline-level))
             (tag (arcology-oracle--mark-conversation (point)))
             (done (lambda ()
                     (arcology-oracle--unmark-conversation buffer tag)
                     (set-marker root nil)))
             ;; The saved file's line, which unsaved edits may have moved: sent
             ;; without one, the daemon judges the file, and the text by itself.
             (line (and (not (buffer-modified-p)) (line-number-at-pos nil t)))
             (file (arcology-oracle--visited-file))
             (text (buffer-substring-no-properties
                    (point) (save-excursion (org-end-of-subtree t t) (point)))))
        (arcology-oracle--message "arcology-oracle: thinking…")
        (arcology-oracle--answer-with-roam-dir
         (lambda (roam-dir)
           (if-let ((refused (arcology-oracle--unread-refusal file roam-dir)))
               (progn (funcall done) (arcology-oracle--report refused))
             ;; Where the root is saved: the daemon refuses a conversation in a private
             ;; part of the saved file (a tag above it, the file's tags).
             (let* ((rel (arcology-oracle--relative-file file roam-dir))
                    (req nil)
                    (forget (arcology-oracle--answering
                             (lambda ()
                               (arcology-oracle--http-cancel req)
                               (funcall done)))))
               (setq
                req
                (arcology-oracle--json
                "POST" "/converse"
                :json `((org . ,text)
                        ,@(when rel `((file . ,rel)))
                        ,@(when (and rel line) `((line . ,line)))
                        ,@(when arcology-oracle-model `((model . ,arcology-oracle-model))))
                :timeout arcology-oracle-llm-timeout
                :callback
                (lambda (answer)
                  (funcall forget)
                  (let ((org (alist-get 'org answer)))
                    (cond ((not (and (stringp org) (not (string-blank-p org))))
                           (arcology-oracle--report "the daemon gave an empty answer"))
                          ((not (buffer-live-p buffer))
                           ;; Killed while the model thought: said, and kept, not dropped unseen.
                           (kill-new (string-trim-right (arcology-oracle--relevel org (1+ level))))
                           (arcology-oracle--report
                            (format "%s was killed before the answer came: the answer is on the kill ring (%s to yank it)"
                                    name (substitute-command-keys "\\[yank]"))))
                          (t (arcology-oracle--converse-answer root org (alist-get 'model answer) tag
                                                              (alist-get 'mode answer))))
                    (funcall done)))
                :errback
                (lambda (message)
                  (funcall forget)
                  (funcall done)
                  (arcology-oracle--report (arcology-oracle--conversation-cut-short message))))))))
         (lambda () (funcall done))
         (lambda (message)
           (funcall done)
           (arcology-oracle--report message)))))))

(defun arcology-oracle--answer-ends-as-written-p (beg end)
  "Return non-nil when the answer from BEG to END ends as the daemon wrote it.
That is with its \"Sources:\" line and the items of that list
\(\"- [N] ...\" or \"- none: ...\", one line each), then blank lines
only: a line after them is the user's.  An answer with no such line
\(not the daemon's words) cannot be told apart from text added: it is."
  (save-excursion
    (goto-char beg)
    (or (not (re-search-forward "^Sources:[ \t]*$" end t))
        (progn
          (goto-char end)
          (skip-chars-backward " \t\n" beg)
          (beginning-of-line)
          (while (and (> (point) beg) (looking-at "- \\(?:\\[[0-9]+\\] \\|none: \\)"))
            (forward-line -1))
          (looking-at "Sources:[ \t]*$")))))

;;;###autoload
(defun arcology-oracle-discard ()
  "Delete the answer heading at point inserted by `arcology-oracle-converse'.
An answer holding a heading of yours (one typed under it), or text
after its Sources list (yours, typed under it), is not deleted: that
would go with it.  One undo brings the answer back.  In a list (the
org-roam buffer, the similar notes), which holds no answer, it is
refused (see `arcology-oracle--refuse-in-list')."
  (interactive)
  (arcology-oracle--refuse-in-list
   (substitute-command-keys "\\[arcology-oracle-discard] discards an answer in a conversation"))
  (unless (derived-mode-p 'org-mode) (arcology-oracle--user-error "Discarding an answer needs an Org buffer"))
  (let (title lines)
    (save-excursion
      (when (org-before-first-heading-p) (arcology-oracle--user-error "No answer at point"))
      (org-back-to-heading t)
      (while (and (not (org-entry-get nil arcology-oracle-answer-property))
                  (org-up-heading-safe)))
      (unless (org-entry-get nil arcology-oracle-answer-property)
        (arcology-oracle--user-error "No inserted answer at point"))
      (setq title (org-get-heading t t t t))
      (let ((beg (point))
            (end (progn (org-end-of-subtree t t) (point))))
        ;; The daemon writes an answer as one heading: a heading below it is the user's.
        (save-excursion
          (goto-char beg)
          (end-of-line)
          (when (re-search-forward org-outline-regexp-bol end t)
            (arcology-oracle--user-error
             "The answer \"%s\" holds your heading \"%s\": move it out first, or delete the answer by hand"
             title (org-get-heading t t t t))))
        (unless (arcology-oracle--answer-ends-as-written-p beg end)
          (arcology-oracle--user-error
           "The answer \"%s\" has text after its Sources list, yours: move it out first, or delete the answer by hand"
           title))
        ;; Last in a file without a final newline, the answer was put on
        ;; a line of its own: the newline before it goes with it.
        (when (and (= end (point-max)) (/= (char-before end) ?\n)
                   (> beg (point-min)) (= (char-before beg) ?\n))
          (setq beg (1- beg)))
        (setq lines (count-lines beg end))
        (delete-region beg end)))
    (arcology-oracle--message "Discarded the answer \"%s\" (%d lines): %s brings it back"
                              title lines (substitute-command-keys "\\[undo]"))))

(provide 'arcology-oracle-converse)

;;; arcology-oracle-converse.el ends here
