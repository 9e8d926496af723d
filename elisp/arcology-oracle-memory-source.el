;;; arcology-oracle-memory-source.el --- Where the text arcology-oracle memorizes came from -*- lexical-binding: t -*-

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

;; What `arcology-oracle-memorize' tells the daemon of the text it
;; sends: whether a model wrote some of it (an oracle's answer, a
;; conversation's assistant turn, a gptel or org-ai reply), so that the
;; memory is marked as such, and a link back to the heading it was cut
;; from.

;;; Code:

(require 'seq)
(require 'org)
(require 'org-element)
(require 'arcology-oracle-notes)

(defvar arcology-oracle-answer-property)

(defun arcology-oracle--oracle-words-p (beg end)
  "Return non-nil when the oracle wrote some of the text from BEG to END.
In the answers or summaries buffer, under a conversation's answer
\(a heading with `arcology-oracle-answer-property' or an assistant's
:ROLE:) anywhere in it, or a reply of a gptel chat or an org-ai block
with one of the daemon's grounded models
\(`arcology-oracle--gptel-reply-between-p',
`arcology-oracle--org-ai-reply-between-p'): a
region from a question into its answer is kept as the oracle's, never
as the user's note."
  (or (derived-mode-p 'arcology-oracle-answers-mode)
      (arcology-oracle--gptel-reply-between-p beg end)
      (arcology-oracle--org-ai-reply-between-p beg end)
      (and (derived-mode-p 'org-mode)
           (save-excursion
             (goto-char beg)
             (let ((found (or (arcology-oracle--answer-heading-p)
                              (arcology-oracle--marked-turn-p))))
               (while (and (not found) (re-search-forward org-outline-regexp-bol end t))
                 (setq found (or (arcology-oracle--answer-heading-p)
                                 (arcology-oracle--marked-turn-p))))
               found)))))

(defun arcology-oracle--marked-turn-p ()
  "Return non-nil when point is in a conversation's turn marked as the oracle's.
As the daemon reads a conversation (notes/conversations.py): the heading
at point or one above it is tagged :oracle: or titled Oracle (alone or
before punctuation: Oracle:, Oracle (llama3.2); not Oracle of Delphi),
has no user's :ROLE:, was not kept by /memorize, and has a sibling (or
is one) with a user's or the assistant's :ROLE:."
  (save-excursion
    (unless (org-before-first-heading-p)
      (org-back-to-heading t)
      (let ((found (arcology-oracle--marked-turn-here-p)))
        (while (and (not found) (org-up-heading-safe))
          (setq found (arcology-oracle--marked-turn-here-p)))
        found))))

(defconst arcology-oracle--user-roles '("user" "me" "human" "you" "question")
  "The :ROLE: values naming the user, as the daemon reads them.")

(defun arcology-oracle--marked-turn-here-p ()
  "Return non-nil when the heading at point is an oracle's turn by its marker.
See `arcology-oracle--marked-turn-p'."
  (and (not (member (downcase (string-trim (or (org-entry-get nil "ROLE") "")))
                    arcology-oracle--user-roles))
       (not (org-entry-get nil "CAPTURED_BY"))
       (or (member "oracle" (mapcar #'downcase (org-get-tags nil t)))
           (let ((case-fold-search t))
             (string-match-p "\\`oracle[ \t]*\\(?:\\'\\|[^[:alnum:]_[:space:]'\u2019]\\)"
                             (string-trim (org-get-heading t t t t)))))
       (let ((level (org-current-level))
             (parent (save-excursion (and (org-up-heading-safe) (point))))
             found)
         (save-excursion
           (goto-char (or parent (point-min)))
           (let ((stop (if parent (save-excursion (org-end-of-subtree t t) (point)) (point-max))))
             (when parent (forward-line 1))
             (while (and (not found) (re-search-forward org-outline-regexp-bol stop t))
               (when (= (org-current-level) level)
                 (let ((role (downcase (string-trim (or (org-entry-get nil "ROLE") "")))))
                   (setq found (and (not (org-entry-get nil "CAPTURED_BY"))
                                    (or (member role arcology-oracle--user-roles)
                                        (arcology-oracle--oracle-role-p role)))))))))
         found)))

(defun arcology-oracle--grounded-model-p (model)
  "Return non-nil when MODEL is one of the daemon's grounded models.
MODEL is a symbol or a string, read as the daemon reads a gptel
chat's model: llama3.2+notes, qwen2.5+notes:7b."
  (and model
       (let ((name (downcase (string-trim (format "%s" model)))))
         (or (string-suffix-p "+notes" name) (string-match-p "\\+notes:" name)))))

(defun arcology-oracle--org-ai-reply-between-p (beg end)
  "Return non-nil when some of BEG..END is a grounded model's reply in org-ai.
That is a line of an [AI]: or [AI_REASON]: turn in a #+begin_ai block
whose :model is one of the daemon's grounded ones, as the daemon
reads it (notes/chats.py): text before the block's first role is the
user's, and a #+begin_ai never closed or shown in a source block is
no block."
  (when (derived-mode-p 'org-mode)
    (save-excursion
      (save-restriction
        (widen)
        (goto-char (point-min))
        (let ((case-fold-search t) found)
          (while (and (not found) (< (point) end)
                      (re-search-forward "^[ \t]*#\\+begin_ai\\b\\(.*\\)$" end t))
            (let* ((header (match-string-no-properties 1))
                   (start (line-beginning-position 2))
                   ;; A block as Org reads it: closed, not shown inside a source block.
                   (block (save-excursion
                            (goto-char (match-beginning 0))
                            (let ((element (org-element-at-point)))
                              (and (eq (org-element-type element) 'special-block)
                                   (equal (downcase (org-element-property :type element)) "ai")))))
                   (stop (save-excursion
                           (if (re-search-forward "^[ \t]*#\\+end_ai[ \t]*$" nil t)
                               (line-beginning-position)
                             (point-max))))
                   (role "ME"))
              (when (and block (< start end) (> stop beg)
                         ;; Quoted or not, as Babel reads header arguments (org-ai does).
                         (string-match ":model[ \t]+\"?\\([^ \t:\"][^ \t\"]*\\)" header)
                         (arcology-oracle--grounded-model-p (match-string 1 header)))
                (goto-char start)
                (while (and (not found) (< (point) (min stop end)))
                  (when (looking-at "[ \t]*\\[\\(SYS\\|ME\\|AI\\|AI_REASON\\)\\]:")
                    (setq role (upcase (match-string 1))))
                  (when (and (member role '("AI" "AI_REASON")) (> (line-end-position) beg))
                    (setq found t))
                  (forward-line 1)))
              (goto-char stop)
              (forward-line 1)))
          found)))))

(defun arcology-oracle--gptel-reply-between-p (beg end)
  "Return non-nil when some of BEG..END is a grounded model's reply.
In a gptel chat whose model (the buffer's `gptel-model', the file's
:GPTEL_MODEL:, or in `gptel-mode' or a buffer holding a reply gptel
marked the global `gptel-model') is one of
the daemon's grounded ones, the reply is the
text gptel marks as the model's (its `gptel' property: a response,
reasoning or a tool call), else where the saved :GPTEL_BOUNDS: put
them, as the daemon reads it (notes/chats.py).  Saved without bounds,
the chat held no reply: gptel saves the bounds of every reply."
  (when (arcology-oracle--grounded-model-p
         (or (and (boundp 'gptel-model) (local-variable-p 'gptel-model) gptel-model)
             (and (derived-mode-p 'org-mode)
                  (save-restriction
                    (widen)
                    (org-entry-get (point-min) "GPTEL_MODEL")))
             ;; A new chat (M-x gptel) has the model set globally, as the
             ;; README sets it; only a gptel chat is read by it, or a
             ;; buffer where gptel answered (\[gptel-send] works
             ;; without gptel-mode, and marks its reply).
             (and (or (bound-and-true-p gptel-mode)
                      (save-restriction
                        (widen)
                        (text-property-not-all (point-min) (point-max) 'gptel nil)))
                  (boundp 'gptel-model) gptel-model)))
    (save-restriction
      (widen)
      (let ((bounds (and (derived-mode-p 'org-mode)
                         (org-entry-get (point-min) "GPTEL_BOUNDS"))))
        (cond
         ((text-property-not-all (point-min) (point-max) 'gptel nil)
          (text-property-not-all beg end 'gptel nil))
         (bounds
          (let ((spans (ignore-errors (car (read-from-string bounds)))) found)
            (dolist (entry (and (listp spans) spans))
              (dolist (span (cond ((and (consp entry) (integerp (car entry)))
                                   (list (list (car entry) (cdr entry))))  ; (B . E)
                                  ((and (consp entry) (memq (car entry) '(response ignore tool)))
                                   (cdr entry))))
                (when (and (consp span) (integerp (car span))
                           (integerp (car-safe (cdr span)))
                           (< (car span) end) (> (cadr span) beg))
                  (setq found t))))
            found)))))))

(defun arcology-oracle--memory-source (pos)
  "Return an org link to the heading around POS in the current buffer, or nil.
The heading's own ID when it has one, else its file and the search
string Org's own `org-store-link' makes for it (the heading without
TODO keyword, priority, COMMENT, tags and statistics cookies; see
`org-link-heading-search-string'), so that \[org-open-at-point]
finds it; before the first heading, the file.  Outside Org, the
file and line.  The description is the outline path, the note's
title first, as a reader sees it: links show their description,
cookies go.  An indirect buffer (\[clone-indirect-buffer]) is its base
buffer's file.  Nil for a buffer without a file."
  (when-let ((file (arcology-oracle--visited-file)))
    (save-excursion
      (save-restriction
        (widen)
        (goto-char pos)
        (if (not (derived-mode-p 'org-mode))
            (org-link-make-string (format "file:%s::%d" (abbreviate-file-name file)
                                          (line-number-at-pos pos t))
                                  (file-name-nondirectory file))
          (let* ((context (arcology-oracle--heading-context))
                 (start (plist-get context :start))
                 (before-first (save-excursion (goto-char start) (not (org-at-heading-p))))
                 (label (replace-regexp-in-string
                         "[][]" ""
                         (mapconcat #'identity
                                    (delete-dups
                                     (mapcar #'arcology-oracle--title-text
                                             (append (list (arcology-oracle--file-title))
                                                     (plist-get context :olp)
                                                     (unless before-first
                                                       (list (plist-get context :title))))))
                                    " › ")))
                 (id (org-entry-get start "ID")))
            (org-link-make-string
             (cond (id (concat "id:" id))
                   (before-first
                    (concat "file:" (abbreviate-file-name file)))
                   (t (format "file:%s::%s" (abbreviate-file-name file)
                              (save-excursion (goto-char start)
                                              (org-link-heading-search-string)))))
             label)))))))

(defun arcology-oracle--typed-source ()
  "Return the :SOURCE: link of text typed for capture at point, or nil.
As `arcology-oracle--memory-source', with the file it names as its
`arcology-oracle-source-file' property (see
`arcology-oracle--source-file').  Nil in a private part of the
buffer (see `arcology-oracle--private-here-p'): the typed text is
not private, but the link names the note and heading, and would put
them in a daily note that is not private.  For the same reason the
link is dropped, once the daemon has said where its notes are, when
the file is among those it never reads (a hidden folder)."
  (unless (arcology-oracle--private-here-p (point))
    (when-let ((link (arcology-oracle--memory-source (point))))
      (propertize link 'arcology-oracle-source-file (arcology-oracle--visited-file)))))

(defun arcology-oracle--typed-source-here ()
  "Return the :SOURCE: link of text typed for capture now, or nil.
As `arcology-oracle--typed-source' at point; in a list (the org-roam
buffer, the similar notes, the link suggestions), at the place its
note was read, or the node shown (see `arcology-oracle--in-listed-note'):
the list's own text is no heading.  Nil in a list whose note was
killed, or an org-roam buffer showing none: typed text needs no note,
and is captured without a source."
  (let (source)
    (cond ((arcology-oracle--listed-note)
           (arcology-oracle--in-listed-note (lambda () (setq source (arcology-oracle--typed-source)))))
          ((not (derived-mode-p 'arcology-oracle-similar-buffer-mode 'arcology-oracle-links-mode 'org-roam-mode))
           (setq source (arcology-oracle--typed-source))))
    source))

(defun arcology-oracle--source-file (source)
  "Return the file the :SOURCE: link SOURCE was made in, when known, else nil.
See `arcology-oracle--typed-source'."
  (and (stringp source) (not (string-empty-p source))
       (get-text-property 0 'arcology-oracle-source-file source)))

(provide 'arcology-oracle-memory-source)

;;; arcology-oracle-memory-source.el ends here
