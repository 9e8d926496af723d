;;; arcology-oracle-memory.el --- Remember notes through the daemon, make headings private -*- lexical-binding: t -*-

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

;; Memory, from Emacs:
;;
;; - `arcology-oracle-memorize' sends the region (or text read from
;;   the minibuffer) to the daemon's POST /memorize, which appends it
;;   as a heading to today's org-roam daily note (or to the capture
;;   inbox while that daily has unsaved edits in Emacs: the request
;;   names the notes with unsaved edits, as Emacs may make no lock
;;   file for the daemon to see) and indexes it at once.  The
;;   answer's [[id:...][...]] link is shown and kept in
;;   `arcology-oracle-last-memory'; a buffer visiting the file without
;;   unsaved edits is reverted so it shows the new heading.
;; - `arcology-oracle-make-private' tags the heading at point with the
;;   first of `arcology-oracle-private-tags' (before the first heading,
;;   the file, in its #+filetags), so that the daemon drops it (and its
;;   subtree, or the whole file) from the index when the file is saved.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'org)
(require 'arcology-oracle)
(require 'arcology-oracle-notes)

(defvar arcology-oracle-answer-property)

(defcustom arcology-oracle-memorize-tags nil
  "Tags given to every note `arcology-oracle-memorize' sends.
A list of Org tags, for example (\"inbox\" \"phone\")."
  :type '(repeat string)
  :group 'arcology-oracle)

(defcustom arcology-oracle-memorize-follow-dailies t
  "Non-nil sends captures to where org-roam keeps the daily notes.
That is `org-roam-dailies-directory' (when org-roam-dailies is
loaded and it lies under the daemon's roam directory); nil leaves
it to the daemon's `dailies_dir' setting (default \"daily\")."
  :type 'boolean
  :group 'arcology-oracle)

(defvar org-roam-dailies-directory)
(defvar org-roam-directory)

(defvar arcology-oracle-last-memory nil
  "The daemon's answer to the last `arcology-oracle-memorize', an alist.
Its keys are `id', `file', `line', `link', `inbox' and `note'.")

(defun arcology-oracle--memory-payload (text title tags &optional source dailies-dir role unsaved file line)
  "Return the JSON alist of POST /memorize for TEXT, TITLE and TAGS.
SOURCE is a link to where TEXT came from; DAILIES-DIR the daily
notes' folder relative to the roam directory; ROLE \"oracle\" for
the oracle's own words; UNSAVED the notes with unsaved edits in
Emacs, relative to the roam directory (see
`arcology-oracle--unsaved-notes').  FILE is the note TEXT was cut
from, relative to the roam directory, and LINE (only with FILE) its
first line there: the daemon refuses TEXT from a private part of it."
  (append `((text . ,text))
          (when (and title (not (string-empty-p title))) `((title . ,title)))
          `((tags . ,(vconcat (or tags arcology-oracle-memorize-tags))))
          (when source `((source . ,source)))
          (when dailies-dir `((dailies_dir . ,dailies-dir)))
          (when role `((role . ,role)))
          (when unsaved `((unsaved . ,(vconcat unsaved))))
          (when file `((file . ,file)))
          (when (and file line) `((line . ,line)))))

(defun arcology-oracle--unsaved-notes (roam-dir)
  "Return the files under ROAM-DIR with unsaved edits in Emacs.
Each relative to ROAM-DIR, by its true name (symlinks resolved), as
a list.  The daemon sees unsaved edits by Emacs's lock (.#NAME
beside the file), which Emacs does not make with `create-lockfiles'
nil and makes elsewhere by `lock-file-name-transforms': this list
tells it instead, so that a capture never goes into a note being
edited (today's daily among them sends it to the inbox)."
  (when roam-dir
    (delete-dups
     (delq nil (mapcar (lambda (buffer)
                         (let ((file (buffer-file-name buffer)))
                           (and file (buffer-modified-p buffer)
                                (arcology-oracle--relative-file file roam-dir))))
                       (buffer-list))))))

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

(defun arcology-oracle--dailies-directory ()
  "Return the absolute `org-roam-dailies-directory' to capture into, or nil.
Nil when `arcology-oracle-memorize-follow-dailies' is nil or
org-roam-dailies is not loaded."
  (when (and arcology-oracle-memorize-follow-dailies
             (boundp 'org-roam-dailies-directory)
             (stringp org-roam-dailies-directory))
    (file-name-as-directory
     (expand-file-name org-roam-dailies-directory
                       (or (bound-and-true-p org-roam-directory) default-directory)))))

(defun arcology-oracle--dailies-dir (dir roam-dir)
  "Return the directory DIR relative to ROAM-DIR, or nil when not under it.
ROAM-DIR itself (`org-roam-dailies-directory' \"./\") is \".\", which
the daemon takes as the roam directory, not its own `dailies_dir'."""
  (when-let ((rel (and dir roam-dir (arcology-oracle--relative-file dir roam-dir))))
    (let ((rel (directory-file-name rel)))
      (if (string-empty-p rel) "." rel))))

(defun arcology-oracle--memory-revert (roam-dir rel)
  "Revert the buffer visiting REL under ROAM-DIR, unless it has unsaved edits.
Return `reverted', or `killed' for a file that is gone (a forget
removed the note the daemon had made for one capture), else nil."
  (when-let* ((roam-dir roam-dir)
              (file (expand-file-name rel roam-dir))
              (buffer (find-buffer-visiting file)))
    (with-current-buffer buffer
      (cond ((buffer-modified-p) nil)
            ((file-exists-p file) (revert-buffer t t t) 'reverted)
            (t (kill-buffer buffer) 'killed)))))

(defun arcology-oracle--memorized (answer &optional callback)
  "Report the daemon's ANSWER to POST /memorize, then call CALLBACK with it.
The new heading's link goes on the kill ring, to be pasted anywhere.
The answer's note, when it has one, is shown too: say, that the
daily is in a folder the daemon's index leaves out (never recalled)."
  (setq arcology-oracle-last-memory answer)
  (let ((file (alist-get 'file answer))
        (link (alist-get 'link answer))
        (note (alist-get 'note answer)))
    (when (stringp link) (kill-new link))
    ;; The title, not the link: "[[id:c74cea3f-ee17-...][...]]" took two
    ;; lines of the echo area and read as syntax.
    (message "Remembered in %s:%s: \"%s\" (its link is copied: %s pastes it)%s"
             file (alist-get 'line answer)
             (or (alist-get 'title answer) link)
             (substitute-command-keys "\\[yank]")
             (cond ((eq (alist-get 'inbox answer) t)
                    " (today's daily has unsaved edits: written to the inbox)")
                   ((stringp note) (format " (%s)" note))
                   (t "")))
    (arcology-oracle--with-roam-dir
     (lambda (roam-dir) (arcology-oracle--memory-revert roam-dir file))
     #'ignore))
  (when callback (funcall callback answer)))

(defun arcology-oracle--memorize-failed (text message &optional req)
  "Put TEXT, which the daemon did not confirm, on the kill ring; show MESSAGE.
REQ is the request, when one was made.  One that reached the daemon
and got no answer, or none but a success cut short, may still be
remembered when the daemon catches up: the message says to look
before sending TEXT again, not that nothing was remembered."
  (kill-new text)
  (let ((status (and req (arcology-oracle--http-status req)))
        (yank (substitute-command-keys "\\[yank]")))
    (arcology-oracle--report
     (if (and req (arcology-oracle--http-connected req) (or (null status) (<= 200 status 299)))
         (format "%s: the daemon has the text and may still remember it, so look in today's daily note before sending it again (it is on the kill ring: %s pastes it)"
                 message yank)
       (format "%s; nothing was remembered, your text is on the kill ring (%s pastes it)" message yank)))))

;;;###autoload
(defun arcology-oracle-memorize (text &optional title tags callback source role file line)
  "Send TEXT to the daemon, to be remembered in today's daily note.
Interactively TEXT is the active region, else read from the
minibuffer.  TITLE names the heading (default: the text's first
words); TAGS are Org tags (default `arcology-oracle-memorize-tags').
CALLBACK, when given, is called with the daemon's answer, after it
is reported in the echo area.  SOURCE is a link to where TEXT came
from, kept as the new heading's :SOURCE: property: interactively,
the heading the region came from.  ROLE \"oracle\" keeps TEXT as
the oracle's words (:ROLE: oracle), never as the user's notes:
interactively, a region of an answer or a summary.  A region in a
private part of the note, or reaching into one (see
`arcology-oracle--private-between-p'), is refused: nothing is sent.
FILE is the file TEXT was cut from and LINE its first line there (nil
for a buffer with unsaved edits, whose lines are not the file's):
interactively, the region's.  For a FILE under the roam directory the
daemon judges that place by its own rule too (its `private_tags',
`exclude_globs', the tags of a #+SETUPFILE), and refuses TEXT from a
private part of the saved note: nothing is written, and the echo area
says so.

The daily note is in `org-roam-dailies-directory' (see
`arcology-oracle-memorize-follow-dailies'); while it has unsaved
edits in Emacs, the daemon writes to its capture inbox instead, and
with the inbox unsaved too, nothing (see
`arcology-oracle--unsaved-notes').  The new heading's link
goes on the kill ring.  When the daemon cannot be reached, TEXT
goes on the kill ring instead, so nothing typed is lost."
  (interactive
   (if (use-region-p)
       (if (arcology-oracle--private-between-p (region-beginning) (region-end))
           ;; Its daily note is not private: the text would be indexed and found.
           (arcology-oracle--user-error
            "This text is in a private part of your notes: nothing was sent")
         (list (buffer-substring-no-properties (region-beginning) (region-end))
               nil nil nil (arcology-oracle--memory-source (region-beginning))
               (and (arcology-oracle--oracle-words-p (region-beginning) (region-end)) "oracle")
               (arcology-oracle--visited-file)
               (and (not (buffer-modified-p)) (line-number-at-pos (region-beginning) t))))
     (list (read-string "Remember: ") nil nil nil
           (arcology-oracle--memory-source (point)))))
  (when (string-empty-p (string-trim (or text "")))
    (arcology-oracle--user-error "Nothing to remember"))
  ;; The options as they are now: the answer of /status may come later.
  (let ((tags (or tags arcology-oracle-memorize-tags))
        (dailies (arcology-oracle--dailies-directory)))
    (arcology-oracle--with-roam-dir
     (lambda (roam-dir)
       (let (req)  ; the errback always runs later, when `req' is set
         (setq req (arcology-oracle--json
                    "POST" "/memorize"
                    :json (arcology-oracle--memory-payload text title tags source
                                                           (arcology-oracle--dailies-dir dailies roam-dir) role
                                                           (arcology-oracle--unsaved-notes roam-dir)
                                                           (arcology-oracle--relative-file file roam-dir) line)
                    :callback (lambda (answer) (arcology-oracle--memorized answer callback))
                    :errback (lambda (message) (arcology-oracle--memorize-failed text message req))))))
     (lambda (message) (arcology-oracle--memorize-failed text message)))))

;;;###autoload
(defun arcology-oracle-forget ()
  "Forget a captured heading: the one at point, else the last remembered.
Asks first.  The daemon removes it from its note only while it is
exactly as it was captured: a capture you edited, or typed a heading
under, is refused, and nothing of yours is removed."
  (interactive)
  (pcase-let ((`(,id ,title) (arcology-oracle--capture-to-forget)))
    (unless (yes-or-no-p (format "Forget \"%s\" (removed from its note)? " title))
      (arcology-oracle--user-error "Nothing forgotten"))
    (arcology-oracle--json
     "POST" "/forget" :json `((id . ,id))
     :callback
     (lambda (answer)
       (when (equal id (alist-get 'id arcology-oracle-last-memory))
         (setq arcology-oracle-last-memory nil))
       (arcology-oracle--with-roam-dir
        (lambda (roam-dir)
          (let* ((file (alist-get 'file answer))
                 (gone (not (file-exists-p (expand-file-name file roam-dir))))
                 (done (arcology-oracle--memory-revert roam-dir file)))
            (message "Forgot \"%s\": %s" title
                     (cond (gone (format "%s is gone, it held only this capture" file))
                           ((eq done 'reverted)
                            (format "%d lines removed from %s (%s in its buffer brings them back)"
                                    (alist-get 'removed_lines answer) file
                                    (substitute-command-keys "\\[undo]")))
                           (t (format "%d lines removed from %s" (alist-get 'removed_lines answer) file))))))
        (lambda (_) (message "Forgot \"%s\"" title))))
     :errback (lambda (message) (arcology-oracle--report (concat "Nothing forgotten: " message))))))

(defun arcology-oracle--capture-to-forget ()
  "Return (ID TITLE) of the capture to forget: at point, else the last one.
At point means the heading at point or one above it with the
daemon's :CAPTURED_BY: mark, in a buffer whose edits are saved (the
daemon forgets what the file holds)."
  (let ((here (and (derived-mode-p 'org-mode)
                   (save-excursion
                     (save-restriction
                       (widen)
                       (unless (org-before-first-heading-p)
                         (org-back-to-heading t)
                         (while (and (not (org-entry-get nil "CAPTURED_BY")) (org-up-heading-safe)))
                         (when (org-entry-get nil "CAPTURED_BY")
                           (list (org-entry-get nil "ID") (org-get-heading t t t t)))))))))
    (cond
     ((and here (buffer-modified-p))
      (arcology-oracle--user-error "Save the note first: the daemon forgets what its file holds"))
     ((and here (car here)) here)
     (here (arcology-oracle--user-error "This capture has no :ID: to forget it by"))
     (arcology-oracle-last-memory
      (when-let* ((roam-dir (arcology-oracle--roam-dir))
                  (buffer (find-buffer-visiting
                           (expand-file-name (alist-get 'file arcology-oracle-last-memory) roam-dir))))
        (when (buffer-modified-p buffer)
          (arcology-oracle--user-error "Save %s first: the daemon forgets what its file holds"
                                       (buffer-name buffer))))
      (list (alist-get 'id arcology-oracle-last-memory) (alist-get 'title arcology-oracle-last-memory)))
     (t (arcology-oracle--user-error
         "No captured heading at point (one with :CAPTURED_BY:), and nothing remembered since Emacs started")))))

;;;###autoload
(defun arcology-oracle-make-private ()
  "Tag the heading at point, or the file, as private.
The tag is the first of `arcology-oracle-private-tags'.  Before the
first heading, the tag goes into the file's #+filetags
\(a line is added after the #+title when there is none), which
makes the whole file private; a file already private by its
#+filetags, or a heading already private (see
`arcology-oracle--private-here-p'), is left as it is.  Saving the
file then takes the heading and its subtree, or the whole file, out
of the daemon's index."
  (interactive)
  (unless (derived-mode-p 'org-mode)
    (arcology-oracle--user-error "Not in an Org buffer"))
  (when buffer-read-only
    ;; Org's own error named `org-toggle-tag' and printed the buffer as
    ;; #<buffer ...>; the answers and summaries buffers are not notes.
    (arcology-oracle--user-error
     (if (arcology-oracle--visited-file)
         "Buffer %s is read-only (%s makes it editable): nothing was tagged"
       "Buffer %s is not a note: nothing was tagged")
     (buffer-name) (substitute-command-keys "\\[read-only-mode]")))
  (let ((tag (car arcology-oracle-private-tags)))
    (unless tag
      (arcology-oracle--user-error "`arcology-oracle-private-tags' is empty"))
    (cond
     ((save-excursion (save-restriction (widen) (org-before-first-heading-p)))
      (arcology-oracle--make-file-private tag))
     ;; Tagged again, Org would realign the line, or add :private: beside :PRIVATE:.
     ((arcology-oracle--private-in-org-p (save-excursion (org-back-to-heading t) (point)))
      (message "This heading is already private (a tag or ROAM_EXCLUDE on it, above it or on the file): nothing changed"))
     (t
      (save-excursion
        (org-back-to-heading t)
        (org-toggle-tag tag 'on))
      (message "Tagged :%s:; %s" tag (arcology-oracle--private-then "the heading"))))))

(defun arcology-oracle--private-then (what)
  "Say what tagging WHAT private does, in the current buffer.
Emacs sends nothing of it from now on; the daemon's index changes
when the file is saved.  A buffer without a file is in no index:
there is nothing to save for."
  (if (arcology-oracle--visited-file)
      (format "save the file to take %s out of the index" what)
    (format "Emacs sends nothing of %s (this buffer has no file: the daemon never read it)" what)))

(defun arcology-oracle--keyword-search (key regexp limit)
  "Search forward for REGEXP before LIMIT on a line that is keyword KEY.
That is, a line Org reads as that keyword: one inside a block is
skipped, as `org-collect-keywords' skips it.  Return non-nil with
the match data of REGEXP, or nil."
  (let (found)
    (while (and (not found) (re-search-forward regexp limit t))
      (let ((element (save-match-data (org-element-at-point))))
        (setq found (and (eq (org-element-type element) 'keyword)
                         (equal (org-element-property :key element) key)))))
    found))

(defun arcology-oracle--make-file-private (tag)
  "Add TAG to the #+filetags of the current buffer; change nothing else.
The tag ends the first #+filetags line before the first heading
\(\":a:b:\" becomes \":a:b:TAG:\", \"a b\" becomes \"a b :TAG:\");
without one, a line \"#+filetags: :TAG:\" goes after the #+title
\(in its letter case), else after the file's property drawer (which
may follow comment lines), else first (after a -*- line).  Lines
inside blocks are not keywords: they are left alone.  One insertion,
one undo; point stays where it is.  A file whose #+filetags already
hold crypt or one of `arcology-oracle-private-tags' is left alone."
  (save-excursion
    (save-restriction
      (widen)
      (let ((limit (save-excursion (goto-char (point-min))
                                   (if (re-search-forward org-outline-regexp-bol nil t)
                                       (match-beginning 0)
                                     (point-max))))
            (case-fold-search t))
        (if (arcology-oracle--private-tags-p (arcology-oracle--file-tags))
            (message "This file is already private by its #+filetags: nothing changed")
          (goto-char (point-min))
          (if (arcology-oracle--keyword-search
               "FILETAGS" "^[ \t]*#\\+filetags:\\([ \t]*\\)\\(.*?\\)[ \t]*$" limit)
              (let ((blank (match-string 1))
                    (value (match-string 2)))
                (goto-char (match-end 2))
                (insert (cond ((string-suffix-p ":" value) (concat tag ":"))
                              ((and (string-empty-p value) (not (string-empty-p blank)))
                               (concat ":" tag ":"))
                              (t (concat " :" tag ":")))))
            (let* ((title (progn (goto-char (point-min))
                                 (and (arcology-oracle--keyword-search
                                       "TITLE" "^[ \t]*#\\+\\(title\\):" limit)
                                      (match-string 1))))
                   (line (concat (if (equal title "TITLE") "#+FILETAGS: :" "#+filetags: :") tag ":")))
              (cond
               (title (forward-line 1))
               ;; The file's drawer may follow comment (and blank) lines.
               ((progn (goto-char (point-min))
                       (while (and (not (eobp)) (or (looking-at-p org-comment-regexp)
                                                    (looking-at-p "[ \t]*$")))
                         (forward-line 1))
                       (looking-at org-property-drawer-re))
                (goto-char (match-end 0))
                (forward-line 1))
               (t (goto-char (point-min))
                  (when (looking-at-p ".*-\\*-.*-\\*-") (forward-line 1))))
              ;; After a last line without a newline, the new line is last, as it was.
              (insert (if (bolp) (concat line "\n") (concat "\n" line)))))
          (org-set-regexps-and-options t)
          (message "Tagged the file :%s: (#+filetags); %s" tag (arcology-oracle--private-then "the whole file")))))))

(provide 'arcology-oracle-memory)

;;; arcology-oracle-memory.el ends here
